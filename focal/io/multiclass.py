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
labels 0..N-1 in the class order. Errors are ``ValueError`` naming the file and the line. The
writers, here as in :mod:`focal.io.binary`, keep the readers' rules (tasks, conditions, the
header's class names) and write numbers that read back bit-identically.

References
----------
- "Albayzin plan": :cite:p:`albayzin2012plan`
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .._text import blocks as _blocks
from .._text.blocks import BLOCK_BYTES, iter_blocks
from .._text.fields import (
    Ids,
    LineMap,
    blank_line,
    check_id_column,
    concat_pieces,
    first_record,
    fixed_width,
    format_lines,
    ids_text,
    split_fields,
)
from .._text.numbers import format_numbers
from .._text.outputs import write_output
from .._text.pool import in_order, worker_pool
from ._ids import check_unique
from .formats import is_number

__all__ = [
    "ALBAYZIN_CLASSES",
    "multiclass_format",
    "MulticlassScores",
    "MulticlassKey",
    "read_albayzin_scores",
    "read_multiclass_scores",
    "read_multiclass_key",
    "read_multiclass_systems",
    "check_one_task",
    "write_albayzin_scores",
    "write_multiclass_scores",
]

#: Class order of each Albayzin 2012 task (plan sec. 6.1.3); the last class is out-of-set.
ALBAYZIN_CLASSES = {
    "Plenty": ("Basque", "Catalan", "English", "Galician", "Portuguese", "Spanish", "OOS"),
    "Empty": ("French", "German", "Greek", "Italian", "OOS"),
}
_CONDITIONS = ("Closed", "Open")
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
    path, lines
        As in :class:`MulticlassScores`.
    """

    segments: np.ndarray
    languages: np.ndarray
    path: str = ""
    lines: LineMap | None = None

    def __len__(self):
        return self.segments.shape[0]


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
    for block in iter_blocks(path, block_bytes):  # blocks are UTF-8: so is each field
        found = first_record(block)
        if found is not None:
            task = _canonical(found[1][0].decode("utf-8"), ALBAYZIN_CLASSES)
            return "albayzin" if task else "multiclass"
    return "multiclass"


def _canonical(word, choices):
    """The choice equal to ``word`` ignoring case, or None."""
    return next((c for c in choices if c.lower() == word.lower()), None)


def _gather(path, pieces):
    """The pieces ``(ids, values, lines)`` of a file joined: each id column at a fixed width
    (:func:`~focal._text.fields.fixed_width`), the segments (the first) checked unique; the
    ``values`` as a list, and the :class:`~focal._text.fields.LineMap` of the rows.
    """
    columns, values, lines = None, [], LineMap()
    n = 0
    for piece_ids, piece_values, where in pieces:
        columns = columns or [[] for _ in piece_ids]  # lists of pieces: freed as concatenated
        for column, piece in zip(columns, piece_ids):
            column.append(piece)
        values.append(piece_values)
        lines.add(n, where)
        n += len(where)
    if n == 0:
        raise ValueError(f"{path}: no segments found")
    segments = fixed_width(Ids.concat(columns[0]), None, lines, path)
    check_unique((segments,), path, lines)
    others = [fixed_width(Ids.concat(c), None, lines, path) for c in columns[1:]]
    return (segments, *others), values, lines


class _MulticlassReader:
    """Shared block loop of the multiclass formats: ``prefix`` id fields, then m numbers."""

    def __init__(self, path, block_bytes):
        self.path = os.fspath(path)
        self.block_bytes = block_bytes

    def pieces(self, kind, executor=None):
        """Yield ((segments,), llh, lines) per block of the file, the blocks parsed in
        ``executor`` (:func:`focal._text.pool.in_order`).
        """
        for piece in in_order(self._parse, self._blocks(kind), executor):
            if piece is not None:
                yield piece

    def _blocks(self, kind):
        configured = False
        for block in iter_blocks(self.path, self.block_bytes):
            if not configured:
                found = first_record(block)
                if found is None:
                    continue
                self.setup(kind, found[0], [f.decode("utf-8") for f in found[1]])
                if self.prefix == 1:  # the generic format's header: not a record
                    blank_line(block, found[2], found[3])
                configured = True
            yield block

    def _parse(self, block):
        parsed = split_fields(block, self.n_fields, self.layout)
        if not len(parsed):
            return None
        self.check_prefix(parsed)
        llh = parsed.numbers(range(self.prefix, self.n_fields), self.path, "log-likelihood")
        return (parsed.column(self.prefix - 1).compact(),), llh, parsed.lines

    def read(self, kind, threads=None, pool=None):
        """The file read whole, as :class:`MulticlassScores` (``threads``: of the pool; ``pool``:
        one already open).
        """
        with worker_pool(threads, pool) as executor:
            (segments,), values, lines = _gather(self.path, self.pieces(kind, executor))
        llh = concat_pieces(values)
        return MulticlassScores(
            segments, llh, self.classes, self.path, self.task, self.condition, lines
        )

    def setup(self, kind, line, fields):
        task = _canonical(fields[0], ALBAYZIN_CLASSES)
        if kind == "auto":  # the format of the first record, as multiclass_format tells it
            kind = "albayzin" if task else "generic"
        self.kind = "albayzin" if kind == "albayzin" else "multiclass"
        if kind == "albayzin":
            if task is None:
                raise ValueError(
                    f"{self.path}:{line}: unknown task {fields[0]!r} (expected "
                    f"'Plenty' or 'Empty', Albayzin 2012 plan sec. 6.1.3)"
                )
            got = fields[1] if len(fields) > 1 else ""
            condition = _canonical(got, _CONDITIONS)
            if condition is None:
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
            if any(len(c) > _blocks.MAX_ID_LENGTH for c in fields):
                raise ValueError(
                    f"{self.path}:{line}: id longer than {_blocks.MAX_ID_LENGTH} characters"
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


def _check_header(where, names):
    """The class names of a generic file's header: not numbers (a file without a header would
    lose its first segment to it), distinct even ignoring case (keys are matched to the classes
    ignoring case). ``where`` starts the messages (``path:line``).
    """
    numbers = [c for c in names if is_number(c.encode())]
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
    return _MulticlassReader(path, block_bytes).read("albayzin")


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
    return _MulticlassReader(path, block_bytes).read("generic")


def read_multiclass_key(path, *, block_bytes: int = BLOCK_BYTES) -> MulticlassKey:
    """Read a ``segment language`` key (Albayzin or generic). Language names are checked
    against the classes when the key is aligned (:func:`focal.io.align_multiclass`).

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
    parsed = (
        split_fields(block, 2, "'segment language'") for block in iter_blocks(path, block_bytes)
    )
    pieces = (
        ((p.column(0).compact(), p.column(1).compact()), None, p.lines) for p in parsed if len(p)
    )
    (segments, languages), _, lines = _gather(path, pieces)
    return MulticlassKey(segments, languages, path, lines)


def read_multiclass_systems(paths, *, block_bytes: int = BLOCK_BYTES) -> list:
    """Each file's log-likelihoods, in the format its first record shows (Albayzin 2012 or the
    generic format with a header), each file parsed once; the files must share one task and
    condition (:func:`check_one_task`).

    Parameters
    ----------
    paths : sequence of path-like
        One file per system.
    block_bytes : int
        Bytes read and parsed at a time.

    Returns
    -------
    list of MulticlassScores
        One per file, in the order of ``paths``.
    """
    systems = [_MulticlassReader(path, block_bytes).read("auto") for path in paths]
    check_one_task(systems)
    return systems


def check_one_task(systems) -> None:
    """Refuse multiclass files of different Albayzin tasks or conditions (or a mix of Albayzin
    and generic files): their columns and priors do not mean the same thing.

    ``systems`` are objects with ``path``, ``task`` and ``condition`` (``MulticlassScores``,
    :class:`focal.io.stream.FileLayout`).
    """

    def what(s):
        return f"{s.task} {s.condition}" if s.task else "generic format"

    first = systems[0]
    for other in systems[1:]:
        if (other.task, other.condition) != (first.task, first.condition):
            raise ValueError(
                f"{other.path}: {what(other)} differs from {first.path}'s "
                f"{what(first)}; use files of one task and condition"
            )


# ---------------------------------------------------------------------------------------------
# writing


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


def _write_rows(path, words, segments, llh, header, chunk_size):
    """Write ``header`` (or nothing: None), then lines ``words... segment llh...``: the same
    ``words`` (the Albayzin task and condition) on every line.
    """
    seg = check_id_column(segments, "segments")
    n = llh.shape[0]
    prefix = [
        np.broadcast_to(np.frombuffer(w.encode(), dtype=np.uint8), (n, len(w))) for w in words
    ]
    with write_output(path) as out:
        if header is not None:
            out.write(header)
        for i in range(0, n, chunk_size):
            j = i + chunk_size
            cols = [c[i:j] for c in prefix + [seg]]
            cols += [format_numbers(llh[i:j, k]) for k in range(llh.shape[1])]
            out.write(format_lines(cols))


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
    _write_rows(path, (task, condition), segments, llh, None, chunk_size)


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
    header = ("segment " + " ".join(classes) + "\n").encode()
    _write_rows(path, (), segments, llh, header, chunk_size)
