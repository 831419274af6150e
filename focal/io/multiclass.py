"""Multiclass (language recognition) score files: the Albayzin 2012 format and a generic one.

Albayzin 2012 LRE system output (evaluation plan sec. 6.1.3): one line per test segment with
``n + 4`` blank-separated fields::

    Plenty Closed xxyyffaa -0.5678 -0.0034 0.6723 1.4332 -7.0032 5.0065 0.0000

the task (``Plenty``: n = 6 target languages, ``Empty``: n = 4), the condition (``Closed`` or
``Open``), the segment name, then m = n + 1 log-likelihoods (natural log, plan eq. 1) in the
order fixed by the task, the last one for the out-of-set (OOS) class:

- Plenty: Basque, Catalan, English, Galician, Portuguese, Spanish, OOS
- Empty: French, German, Greek, Italian, OOS

A closed-set file carries a dummy OOS score; it is read like any other column (the evaluation,
not the reader, disregards it: plan sec. 4.1.1). Keys hold ``segment language`` lines.

The generic format has a header line naming the classes, then ``segment score...`` lines::

    segment english french german
    seg001 -1.2 0.3 -4.0

Both read into a (n_segments, n_classes) float64 matrix of log-likelihoods; an aligned key gives
labels 0..N-1 in the class order. Errors are ``ValueError`` naming the file and the line.

References
----------
.. [1] L. J. Rodríguez-Fuentes, N. Brümmer, M. Penagarikano, A. Varona, M. Diez and
   G. Bordel, "The Albayzin 2012 Language Recognition Evaluation Plan", evaluation plan,
   GTTS, UPV/EHU, 2012 ("Albayzin plan").
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .._files import write_output
from .._numbers import format_numbers
from . import _text
from ._ids import as_id_array, check_matched, find_duplicate, match_ids
from ._text import (
    BLOCK_BYTES,
    LineMap,
    check_id_column,
    concat_ids,
    concat_pieces,
    format_lines,
    ids_text,
    iter_blocks,
    split_fields,
)

__all__ = [
    "ALBAYZIN_CLASSES",
    "multiclass_format",
    "MulticlassScores",
    "MulticlassKey",
    "read_albayzin_scores",
    "read_multiclass_scores",
    "read_multiclass_key",
    "align_multiclass",
    "align_multiclass_scores",
    "write_albayzin_scores",
    "write_multiclass_scores",
]

#: Class order of each Albayzin 2012 task (plan sec. 6.1.3); the last class is out-of-set.
ALBAYZIN_CLASSES = {
    "Plenty": ("Basque", "Catalan", "English", "Galician", "Portuguese", "Spanish", "OOS"),
    "Empty": ("French", "German", "Greek", "Italian", "OOS"),
}
_CONDITIONS = ("Closed", "Open")
# the field separators of the block reader (control characters, space, comma) as spaces
_TO_SPACE = bytes(32 if b <= 32 or b == 44 else b for b in range(256))
_OOS_NAMES = ("oos", "out-of-set")


@dataclass(frozen=True, eq=False)
class MulticlassScores:
    """Log-likelihoods of one system: ``llh[i, j]`` of segment ``segments[i]`` and class ``j``.

    Attributes
    ----------
    segments : ndarray of bytes
        The segment names (UTF-8), file order.
    llh : ndarray of float64, shape (n_segments, n_classes)
        Natural-log likelihoods.
    classes : tuple of str
        The class of each column.
    path : str
        The file read ("" when not read from a file).
    task, condition : str or None
        The Albayzin task and condition (None for the generic format).
    lines : LineMap or None
        Maps a row to its line in ``path`` (for error messages).
    """

    segments: np.ndarray
    llh: np.ndarray
    classes: tuple
    path: str = ""
    task: str | None = None
    condition: str | None = None
    lines: LineMap | None = None

    def __len__(self):
        return self.llh.shape[0]


@dataclass(frozen=True, eq=False)
class MulticlassKey:
    """True class names: segment ``segments[i]`` is in class ``languages[i]`` (bytes).

    Attributes
    ----------
    segments, languages : ndarray of bytes
        The segment names and their true classes, file order.
    path : str
        The file read ("" when not read from a file).
    lines : LineMap or None
        Maps a row to its line in ``path`` (for error messages).
    """

    segments: np.ndarray
    languages: np.ndarray
    path: str = ""
    lines: LineMap | None = None

    def __len__(self):
        return self.segments.shape[0]


def _first_record(block):
    """Line number and fields of the first non-blank, non-comment line of a block."""
    raw = block.body.tobytes()
    start = 0
    offset = 0
    while start < len(raw):
        end = raw.find(b"\n", start)
        end = len(raw) if end < 0 else end
        fields = [f.decode("utf-8") for f in raw[start:end].translate(_TO_SPACE).split(b" ") if f]
        if fields and not fields[0].startswith("#"):
            return block.first_line + offset, fields
        start = end + 1
        offset += 1
    return None, None


def multiclass_format(path, block_bytes=BLOCK_BYTES) -> str:
    """Which multiclass score format ``path`` holds: ``"albayzin"`` when its first record starts
    with an Albayzin task (``Plenty`` / ``Empty``, any case), else ``"multiclass"`` (the generic
    format, whose first record is its header). Records are split exactly as the readers split
    them; an empty file counts as generic (its reader then reports it).

    Parameters
    ----------
    path : str or path-like
        The file to read.
    block_bytes : int
        Bytes read and parsed at a time.

    Returns
    -------
    str
        ``"albayzin"`` or ``"multiclass"``.
    """
    for block in iter_blocks(path, block_bytes):
        _, fields = _first_record(block)
        if fields is not None:
            return "albayzin" if _canonical(fields[0], ALBAYZIN_CLASSES) else "multiclass"
    return "multiclass"


def _canonical(word, choices):
    """The choice equal to ``word`` ignoring case, or None."""
    return next((c for c in choices if c.lower() == word.lower()), None)


def _check_unique(path, segments, lines):
    dup = find_duplicate((segments,))
    if dup is not None:
        first, second = dup
        raise ValueError(
            f"{path}:{lines.line(second)}: duplicate segment "
            f"{ids_text(segments[second])!r}, first seen on line {lines.line(first)}"
        )


class _MulticlassReader:
    """Shared block loop of the multiclass formats: ``prefix`` id fields, then m numbers."""

    def __init__(self, path, block_bytes):
        self.path = os.fspath(path)
        self.block_bytes = block_bytes

    def pieces(self, kind):
        """Yield ((segments,), llh, lines) per block of the file."""
        configured = False
        for block in iter_blocks(self.path, self.block_bytes):
            if not configured:
                line, fields = _first_record(block)
                if line is None:
                    continue
                self.setup(kind, line, fields)
                configured = True
            parsed = split_fields(block, self.n_fields, self.layout)
            if self.skip_line is not None and len(parsed) and parsed.lines[0] == self.skip_line:
                parsed.starts = parsed.starts[1:]
                parsed.lengths = parsed.lengths[1:]
                parsed.lines = parsed.lines[1:]
            if not len(parsed):
                continue
            self.check_prefix(parsed)
            llh = parsed.numbers(range(self.prefix, self.n_fields), self.path, "log-likelihood")
            yield (parsed.ids(self.prefix - 1),), llh, parsed.lines

    def read(self, kind):
        segments, values, lines = [], [], LineMap()
        n = 0
        for (seg,), llh, where in self.pieces(kind):
            segments.append(seg)
            values.append(llh)
            lines.add(n, where)
            n += seg.shape[0]
        if n == 0:
            raise ValueError(f"{self.path}: no segments found")
        segments = concat_ids(segments, lines, self.path)
        _check_unique(self.path, segments, lines)
        return segments, concat_pieces(values), lines

    def setup(self, kind, line, fields):
        self.skip_line = None
        if kind == "auto":  # the format of the first record, as multiclass_format tells it
            kind = "albayzin" if _canonical(fields[0], ALBAYZIN_CLASSES) else "generic"
        self.kind = "albayzin" if kind == "albayzin" else "multiclass"
        if kind == "albayzin":
            task = _canonical(fields[0], ALBAYZIN_CLASSES)
            if task is None:
                raise ValueError(
                    f"{self.path}:{line}: unknown task {fields[0]!r} (expected "
                    f"'Plenty' or 'Empty', Albayzin 2012 plan sec. 6.1.3)"
                )
            condition = _canonical(fields[1], _CONDITIONS) if len(fields) > 1 else None
            if condition is None:
                got = fields[1] if len(fields) > 1 else ""
                raise ValueError(
                    f"{self.path}:{line}: unknown condition {got!r} (expected 'Closed' or 'Open')"
                )
            self.as_written = (fields[0], fields[1])
            self.task, self.condition = task, condition
            self.classes = ALBAYZIN_CLASSES[task]
            self.prefix = 3
            self.layout = (
                f"'{task} {self.condition} segment' and {len(self.classes)} scores "
                f"({', '.join(self.classes)})"
            )
        else:
            names = fields[1:]
            long = next((c for c in fields if len(c) > _text.MAX_ID_LENGTH), None)
            if long is not None:
                raise ValueError(
                    f"{self.path}:{line}: id longer than {_text.MAX_ID_LENGTH} characters"
                )
            if not names:
                raise ValueError(
                    f"{self.path}:{line}: the header must name the classes: "
                    f"'segment class1 class2 ...'"
                )
            _check_header(f"{self.path}:{line}", names)
            self.task = self.condition = None
            self.classes = tuple(names)
            self.prefix = 1
            self.skip_line = line
            self.layout = f"'segment' and {len(names)} scores ({', '.join(names)})"
        self.n_fields = self.prefix + len(self.classes)

    def check_prefix(self, parsed):
        if self.prefix == 1:
            return
        for j, expected in enumerate(self.as_written):
            got = parsed.ids(j)
            wrong = got != expected.encode()
            if wrong.any():
                i = int(np.argmax(wrong))
                what = "task" if j == 0 else "condition"
                raise ValueError(
                    f"{self.path}:{int(parsed.lines[i])}: {what} "
                    f"{ids_text(got[i])!r} differs from the file's first line "
                    f"({expected!r}); a file holds one task and condition"
                )


def _is_number(word):
    try:
        float(word)
    except ValueError:
        return False
    return True


def _check_header(where, names):
    """The class names of a generic file's header: not numbers (a file without a header would
    lose its first segment to it), distinct even ignoring case (keys are matched to the classes
    ignoring case). ``where`` starts the messages (``path:line``).
    """
    numbers = [c for c in names if _is_number(c)]
    if numbers:
        raise ValueError(
            f"{where}: the class name(s) {', '.join(numbers[:3])} are numbers: the "
            f"first line must be the header 'segment class1 class2 ...' (a file "
            f"without a header?)"
        )
    lowered = [c.lower() for c in names]
    for i, name in enumerate(lowered):
        j = lowered.index(name)
        if j != i:
            same = (
                "named twice"
                if names[i] == names[j]
                else f"and {names[j]!r} differ only in case (keys are matched ignoring case)"
            )
            raise ValueError(f"{where}: class {names[i]!r} {same} in the header")


def read_albayzin_scores(path, *, block_bytes: int = BLOCK_BYTES) -> MulticlassScores:
    """Read an Albayzin 2012 system-output file (plan sec. 6.1.3).

    Parameters
    ----------
    path : str or path-like
        The file to read.
    block_bytes : int
        Bytes read and parsed at a time.

    Returns
    -------
    MulticlassScores
        ``llh`` has shape (n_segments, n + 1): the n target languages of the task in the plan's
        order, then OOS; ``task`` is ``"Plenty"`` or ``"Empty"``, ``condition`` ``"Closed"`` or
        ``"Open"``.

    Raises
    ------
    ValueError
        With file and line: an unknown task or condition, a line whose task or condition differs
        from the first line's, a wrong number of fields, a score that is not a number or is NaN,
        a repeated segment, or no segments.
    """
    reader = _MulticlassReader(path, block_bytes)
    segments, llh, lines = reader.read("albayzin")
    return MulticlassScores(
        segments, llh, reader.classes, reader.path, reader.task, reader.condition, lines
    )


def read_multiclass_scores(path, *, block_bytes: int = BLOCK_BYTES) -> MulticlassScores:
    """Read a generic multiclass file: a header ``segment class1 ... classN``, then
    ``segment score1 ... scoreN`` lines (white space or comma separated).

    Class names must not be numbers (a file without a header would otherwise lose its first
    segment to it) and must differ other than in case (keys are matched ignoring case): both
    are ``ValueError`` naming the file and line.

    Parameters
    ----------
    path : str or path-like
        The file to read.
    block_bytes : int
        Bytes read and parsed at a time.

    Returns
    -------
    MulticlassScores
        The segments in file order and their log-likelihoods.
    """
    reader = _MulticlassReader(path, block_bytes)
    segments, llh, lines = reader.read("generic")
    return MulticlassScores(segments, llh, reader.classes, reader.path, None, None, lines)


def read_multiclass_key(path, *, block_bytes: int = BLOCK_BYTES) -> MulticlassKey:
    """Read a ``segment language`` key (Albayzin or generic). Language names are checked
    against the classes when the key is aligned (:func:`align_multiclass`).

    Parameters
    ----------
    path : str or path-like
        The file to read.
    block_bytes : int
        Bytes read and parsed at a time.

    Returns
    -------
    MulticlassKey
        The segments in file order and their languages.
    """
    path = os.fspath(path)
    segments, languages, lines = [], [], LineMap()
    n = 0
    for block in iter_blocks(path, block_bytes):
        parsed = split_fields(block, 2, "'segment language'")
        if not len(parsed):
            continue
        segments.append(parsed.ids(0))
        languages.append(parsed.ids(1))
        lines.add(n, parsed.lines)
        n += len(parsed)
    if n == 0:
        raise ValueError(f"{path}: no segments found")
    segments = concat_ids(segments, lines, path)
    _check_unique(path, segments, lines)
    return MulticlassKey(segments, concat_ids(languages, lines, path), path, lines)


def _class_index(key, classes, other):
    """Labels 0..N-1 of the key's languages (case-insensitive class names)."""
    lowered = np.char.lower(as_id_array(key.languages, "languages"))
    names = [c.lower().encode() for c in classes]
    labels = np.full(len(key), -1, dtype=np.int64)
    for j, name in enumerate(names):
        labels[lowered == name] = j
    oos = names[-1].decode() in _OOS_NAMES
    if oos:
        for alias in _OOS_NAMES:
            labels[lowered == alias.encode()] = len(names) - 1
    unknown = labels < 0
    if unknown.any():
        if other == "oos":
            if not oos:
                raise ValueError(
                    "other='oos' needs an out-of-set class (named 'OOS') as the last "
                    f"class; the classes are {', '.join(classes)}"
                )
            labels[unknown] = len(names) - 1
        else:
            i = int(np.argmax(unknown))
            where = f"{key.path}:{key.lines.line(i)}" if key.lines is not None else f"key[{i}]"
            raise ValueError(
                f"{where}: unknown language {ids_text(key.languages[i])!r} (classes: "
                f"{', '.join(classes)}); use other='oos' (focal: --other oos) to "
                f"count languages outside "
                f"the classes as out-of-set"
            )
    return labels


def align_multiclass(
    key: MulticlassKey, *systems: MulticlassScores, missing: str = "error", other: str = "error"
):
    """Align several systems' log-likelihoods with the key on the segment name, exactly.

    Parameters
    ----------
    key : MulticlassKey
        The key: the true language of each segment.
    *systems : MulticlassScores
        One per system; they must have the same classes (the generic format may list them in
        another order: columns are reordered to the first system's order).
    missing : {"error", "drop"}
        A key segment without scores in some system, or a scored segment absent from the key:
        ``"error"`` raises ``ValueError`` with the count and the first segment names; ``"drop"``
        keeps only the key segments present in every system.
    other : {"error", "oos"}
        A key language that is not one of the classes: an error, or (``"oos"``) the out-of-set
        class, for keys that name the actual OOS language.

    Returns
    -------
    X : ndarray, shape (n_segments, n_systems * n_classes)
        The systems' log-likelihood blocks side by side (system k in columns
        ``k * n_classes : (k + 1) * n_classes``), segments in key order.
    labels : ndarray of int, shape (n_segments,)
        True class index 0..N-1 of each row.
    segments : ndarray of bytes
        The segment names of the rows.
    classes : tuple of str
        The class of each column of a block.
    """
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")
    if other not in ("error", "oos"):
        raise ValueError(f"other must be 'error' or 'oos', got {other!r}")
    if not systems:
        raise ValueError("align_multiclass needs at least one system's scores")
    classes = tuple(systems[0].classes)
    labels = _class_index(key, classes, other)
    X, keep = _blocks(key.segments, f"key {key.path}".rstrip(), systems, classes, missing)
    if not keep.any():
        raise ValueError("no segment is present in the key and in every score file")
    return X[keep], labels[keep], key.segments[keep], classes


def align_multiclass_scores(*systems: MulticlassScores, missing: str = "error"):
    """Align several systems on the segment name, in the first system's order (no key).

    Parameters
    ----------
    *systems : MulticlassScores
        One per system, with the same classes.
    missing : {"error", "drop"}
        A segment missing from some system: raise ``ValueError`` (``"error"``) or keep only
        the segments present in every system (``"drop"``).

    Returns
    -------
    X : ndarray, shape (n_segments, n_systems * n_classes)
        The systems' log-likelihood blocks side by side, as in :func:`align_multiclass`.
    segments : ndarray of bytes
        The segment names of the rows, in the first system's order.
    classes : tuple of str
        The class of each column of a block.
    """
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")
    if not systems:
        raise ValueError("align_multiclass_scores needs at least one system's scores")
    first = systems[0]
    classes = tuple(first.classes)
    X, keep = _blocks(
        first.segments, f"first score file {first.path}".rstrip(), systems, classes, missing
    )
    if not keep.any():
        raise ValueError("no segment is present in every score file")
    return X[keep], first.segments[keep], classes


def _blocks(reference, reference_name, systems, classes, missing):
    """Each system's llh at the reference segments, side by side; mask of rows found everywhere."""
    ref_ids = (as_id_array(reference, "segments"),)
    keep = np.ones(reference.shape[0], dtype=bool)
    blocks = []
    for system in systems:
        if not isinstance(system, MulticlassScores):
            raise ValueError(f"expected MulticlassScores, got {type(system).__name__}")
        order = _column_order(system, classes)
        where = match_ids(ref_ids, (as_id_array(system.segments, "segments"),))
        found = where >= 0
        if missing == "error":
            check_matched(
                where,
                len(system),
                system.path or "scores",
                reference_name,
                "segment",
                "scores",
                lambda i: ", ".join(ids_text(reference[k]) for k in i[:3]),
                lambda i, s=system: ", ".join(ids_text(s.segments[k]) for k in i[:3]),
            )
        keep &= found
        blocks.append(np.asarray(system.llh, dtype=np.float64)[np.maximum(where, 0)][:, order])
    return np.concatenate(blocks, axis=1), keep


def _column_order(system, classes):
    names = list(system.classes)
    if names == list(classes):
        return np.arange(len(classes))
    if sorted(names) != sorted(classes):
        raise ValueError(
            f"{system.path or 'scores'}: classes {', '.join(names)} differ from the "
            f"first system's {', '.join(classes)}"
        )
    return np.array([names.index(c) for c in classes])


def _check_llh(segments, llh):
    llh = np.asarray(llh, dtype=np.float64)
    if llh.ndim != 2 or llh.shape[0] != np.asarray(segments).shape[0]:
        raise ValueError(
            f"llh must have shape (n_segments, n_classes) with n_segments = "
            f"{np.asarray(segments).shape[0]}, got {llh.shape}"
        )
    if np.isnan(llh).any():
        i, j = np.argwhere(np.isnan(llh))[0]
        raise ValueError(f"llh[{i}, {j}] is NaN")
    return llh


def _write_rows(path, prefix_columns, llh, header, chunk_size):
    with write_output(path) as out:
        if header is not None:
            out.write(header)
        for i in range(0, llh.shape[0], chunk_size):
            j = i + chunk_size
            cols = [c[i:j] for c in prefix_columns]
            cols += [format_numbers(llh[i:j, k]) for k in range(llh.shape[1])]
            out.write(format_lines(cols))


def _constant_column(word, n):
    return np.broadcast_to(np.frombuffer(word.encode(), dtype=np.uint8), (n, len(word)))


def write_albayzin_scores(
    path, segments, llh, task, condition, *, chunk_size: int = 1 << 15
) -> None:
    """Write an Albayzin 2012 system-output file (plan sec. 6.1.3).

    ``llh`` is (n_segments, n + 1) in the task's class order (:data:`ALBAYZIN_CLASSES`), natural
    log; numbers are written so that they read back bit-identically.

    Parameters
    ----------
    path : str or path-like
        The file to write.
    segments : array_like of str, shape (n_segments,)
        The segment names.
    llh : array_like, shape (n_segments, n + 1)
        Natural-log likelihoods in the task's class order.
    task : {"Plenty", "Empty"}
        The Albayzin task.
    condition : {"Closed", "Open"}
        The Albayzin condition.
    chunk_size : int, default 32768
        Lines formatted at a time.
    """
    if task not in ALBAYZIN_CLASSES:
        raise ValueError(f"task must be 'Plenty' or 'Empty', got {task!r}")
    if condition not in _CONDITIONS:
        raise ValueError(f"condition must be 'Closed' or 'Open', got {condition!r}")
    llh = _check_llh(segments, llh)
    m = len(ALBAYZIN_CLASSES[task])
    if llh.shape[1] != m:
        raise ValueError(
            f"the {task} task has {m} classes ({', '.join(ALBAYZIN_CLASSES[task])}), "
            f"llh has {llh.shape[1]} columns"
        )
    seg = check_id_column(segments, "segments")
    n = llh.shape[0]
    _write_rows(
        path,
        [_constant_column(task, n), _constant_column(condition, n), seg],
        llh,
        None,
        chunk_size,
    )


def write_multiclass_scores(path, segments, llh, classes, *, chunk_size: int = 1 << 15) -> None:
    """Write the generic format: a header ``segment class1 ... classN`` then one line per segment.

    Parameters
    ----------
    path : str or path-like
        The file to write.
    segments : array_like of str, shape (n_segments,)
        The segment names.
    llh : array_like, shape (n_segments, n_classes)
        Natural-log likelihoods.
    classes : sequence of str
        The class name of each column.
    chunk_size : int, default 32768
        Lines formatted at a time.
    """
    llh = _check_llh(segments, llh)
    classes = [str(c) for c in classes]
    if len(classes) != llh.shape[1]:
        raise ValueError(f"{len(classes)} class names for {llh.shape[1]} llh columns")
    check_id_column(np.array(classes), "classes")
    _check_header("classes", classes)  # what the reader would refuse
    seg = check_id_column(segments, "segments")
    header = ("segment " + " ".join(classes) + "\n").encode()
    _write_rows(path, [seg], llh, header, chunk_size)
