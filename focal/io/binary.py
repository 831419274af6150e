"""BOSARIS-style binary trial files: ``model test score`` score lists and ``model test label`` keys.

Fields are separated by white space or commas; blank lines and lines whose first field starts
with ``#`` are skipped. Key labels: ``target`` / ``nontarget`` (also ``non-target``), ``tar`` /
``non``, ``1`` / ``0``, ``true`` / ``false``, ``impostor`` (any case). Every error is a
``ValueError`` naming the file and the line.

Trial ids (model, test) are kept as UTF-8 bytes in fixed-width NumPy arrays (dtype ``S``): 10M
trials take their bytes once, not 10M Python strings. ``np.char.decode(ids, "utf-8")`` gives
``str`` when needed. Scores are read exactly: each number is the float64 that Python's
``float`` reads from the same text.

Key labels are read by :mod:`focal.io._labels`; :func:`align_trials` and :func:`align_scores`
live in :mod:`focal.io.alignment` (importable from here too).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

import numpy as np

from .._text.blocks import BLOCK_BYTES, concat_ids, concat_pieces, iter_blocks
from .._text.fields import (
    LineMap,
    blank_line,
    check_id_column,
    first_record,
    format_lines,
    split_fields,
)
from .._text.numbers import format_numbers
from .._text.outputs import write_output
from .._text.source import display_name
from ._ids import check_unique
from ._labels import NONTARGET, TARGET, label_column, namedlabel_column, words_to_labels
from ._records import Records
from ._spans import trial_spans
from ._tables import read_table, table_kind
from .formats import (
    HEADER_NAMES,
    PRESETS,
    is_number,
    key_layout,
    resolve_layout,
    score_layout,
)

__all__ = [
    "TrialKey",
    "TrialScores",
    "read_key",
    "read_key_and_scores",
    "read_scores",
    "read_trials",
    "write_scores",
]


@dataclass(frozen=True, eq=False)
class TrialScores:
    """Scores of one system: ``models[i]``, ``tests[i]``, ``scores[i]`` for trial i (file order).

    Attributes
    ----------
    models, tests : ndarray of bytes
        The trial ids (UTF-8).
    scores : ndarray of float64
        The score of each trial.
    path : str
        The file read ("" when not read from a file).
    lines : LineMap or None
        Maps a trial index to its line in ``path`` (for error messages).
    """

    models: np.ndarray
    tests: np.ndarray
    scores: np.ndarray
    path: str = ""
    lines: LineMap | None = None

    def __len__(self):
        return self.scores.shape[0]


@dataclass(frozen=True, eq=False)
class TrialKey:
    """Supervision: ``labels[i]`` is True when trial (``models[i]``, ``tests[i]``) is a target.

    Attributes
    ----------
    models, tests : ndarray of bytes
        The trial ids (UTF-8).
    labels : ndarray of bool
        True for target trials.
    path : str
        The file read ("" when not read from a file).
    lines : LineMap or None
        Maps a trial index to its line in ``path`` (for error messages).
    """

    models: np.ndarray
    tests: np.ndarray
    labels: np.ndarray
    path: str = ""
    lines: LineMap | None = None

    def __len__(self):
        return self.labels.shape[0]


def _value_ok(pos_label):
    """Whether a word of a score or label column is a value (else the line may be a header)."""

    def ok(role, word):
        if role == "score":
            return is_number(word)
        if pos_label is not None:
            return word.decode("utf-8", "replace").lower() not in HEADER_NAMES["label"]
        return word.lower() in TARGET + NONTARGET

    return ok


def _pieces(path, layout, want, block_bytes, pos_label=None, spans=False, records=False):
    """Yield ((models, tests), {role: values}, lines) per block of a trial file; ``want`` are
    the value roles read (``"score"``, ``"label"``); the first line may be a header
    (:func:`focal.io.formats.resolve_layout`). With ``spans``, a block's ids come as
    :class:`~focal.io._spans.TrialSpans` where its records allow (in place of the tuple). With
    ``records``, each item has a fourth element: the block's :class:`~focal.io._records.Records`.
    """
    shown = display_name(path)
    columns = None
    converters = {
        "score": _score_column,
        "label": label_column if pos_label is None else namedlabel_column(pos_label),
    }
    for block in iter_blocks(path, block_bytes):
        if columns is None:
            first = first_record(block)
            if first is None:
                continue
            line, words, start, end = first
            columns, n_fields, header = resolve_layout(
                layout,
                words,
                shown,
                line,
                _value_ok(pos_label),
                functools.partial(_next_lines, block, end),
            )
            absent = [r for r in want if r not in columns]
            if absent:
                raise ValueError(
                    f"{shown}:{line}: records of {n_fields} fields have no {absent[0]} column "
                    f"(the {layout.name} format's columns are {layout.describe()})"
                    + ("; give the key file (--key)" if absent[0] == "label" else "")
                )
            kept = _kept_columns(layout, columns, words, header)
            header_text = bytes(block.body[start:end]).strip() if header else None
            if header:
                blank_line(block, start, end)
            described = _describe(layout, columns, n_fields)
        fields = split_fields(block, n_fields, described)
        if len(fields):
            values = {r: converters[r](fields, shown, columns[r]) for r in want}
            ids = trial_spans(fields, columns["model"], columns["test"]) if spans else None
            if ids is None:
                ids = fields.ids(columns["model"]), fields.ids(columns["test"])
            if records:
                text = Records([(fields.data, fields.starts, fields.lengths)], kept, header_text)
                yield ids, values, fields.lines, text
            else:
                yield ids, values, fields.lines


def _kept_columns(layout, columns, words, header):
    """``{role: column}`` of what an output in the file's layout reuses: its score column, and
    its label and NIST ``side`` columns where it has them (by header name, or by position in a
    NIST file without header).
    """
    kept = {r: columns[r] for r in ("score", "label") if r in columns}
    names = [w.lower() for w in words] if header else []
    if "side" in names:
        kept["side"] = names.index("side")
    elif not header and layout.name == "nist-sre" and layout.roles and layout.roles[2] is None:
        kept["side"] = 2
    return kept


def _next_lines(block, end, count=64):
    """The fields of up to ``count`` lines of the block after byte ``end`` (for messages)."""
    body = block.body[end : end + (count << 8)].tobytes()
    return [re.split(rb"[\x00-\x20,]+", line.strip()) for line in body.splitlines()[1:count]]


def _describe(layout, columns, n_fields):
    if layout.roles is not None and len(layout.roles) - layout.optional <= n_fields <= len(
        layout.roles
    ):
        return layout.describe()
    roles = ["-"] * n_fields
    for r, i in columns.items():
        roles[i] = r
    return "'" + " ".join(roles) + "'"


def score_pieces(path, block_bytes=BLOCK_BYTES, layout=None, spans=False, records=False):
    """Yield ((models, tests), scores (n, 1), lines) per block of a score file (for streaming);
    with ``spans``, the ids of a block may come as :class:`~focal.io._spans.TrialSpans`; with
    ``records``, each item has a fourth element, the block's
    :class:`~focal.io._records.Records` (None for an HDF5 or parquet file, which has no text).
    """
    layout = score_layout(layout)
    kind = table_kind(os.fspath(path))
    if kind is not None:  # HDF5 / parquet: one piece, its rows numbered from 1
        models, tests, values = read_table(os.fspath(path), kind, layout, ("score",), None)
        piece = (models, tests), values["score"][:, None], np.arange(1, len(models) + 1)
        yield piece + (None,) if records else piece
        return
    for ids, values, lines, *kept in _pieces(
        os.fspath(path), layout, ("score",), block_bytes, None, spans, records
    ):
        yield (ids, values["score"][:, None], lines, *kept)


def _read_table(path, layout, want, block_bytes, pos_label=None, kept=None):
    """Read a trial file whole: ids, {role: values} and the line map; refuse repeated trials.

    ``kept``, a list, receives the file's :class:`~focal.io._records.Records` (None for an HDF5
    or parquet file).
    """
    path = os.fspath(path)
    shown = display_name(path)
    models, tests = [], []
    values = {r: [] for r in want}
    lines = LineMap()
    n = 0
    kind = table_kind(path)
    if kind is not None:  # HDF5 / parquet: read whole, rows numbered from 1
        label = label_column if pos_label is None else namedlabel_column(pos_label)
        pieces = [read_table(path, kind, layout, want, words_to_labels(label))]
        pieces = [((m, t), v, np.arange(1, len(m) + 1), None) for m, t, v in pieces]
    else:
        pieces = _pieces(path, layout, want, block_bytes, pos_label, records=kept is not None)
    texts = []
    for (m, t), v, where, *text in pieces:
        texts.extend(text)
        for r in want:
            values[r].append(v[r])
        models.append(m)
        tests.append(t)
        lines.add(n, where)
        n += len(where)
    if n == 0:
        raise ValueError(f"{shown}: no trials found")
    models = concat_ids(models, lines, shown)
    tests = concat_ids(tests, lines, shown)
    values = {r: concat_pieces(v) for r, v in values.items()}
    check_unique((models, tests), shown, lines)
    if kept is not None:
        kept.append(None if texts[0] is None else Records.concat(texts))  # whole: --align
    return models, tests, values, lines


def _score_column(fields, path, column=2):
    return fields.numbers([column], path)[:, 0]


def read_scores(path, *, block_bytes: int = BLOCK_BYTES, format=None) -> TrialScores:
    """Read a ``model test score`` file (white space or comma separated).

    Parameters
    ----------
    path : str or path-like
        ``-`` reads standard input; gzip-compressed files are read as they are.
    block_bytes : int
        Bytes read and parsed at a time (memory of the parsing work, not of the result).
    format : str or Layout, optional
        The columns: a preset (``bosaris`` (default), ``kaldi``, ``nist-sre``, ``wespeaker``,
        ``speechbrain``, ``voxceleb``), a ``--columns`` text (``"model test - score"``,
        ``"model=modelid test=segmentid score=LLR"``) or a :class:`focal.io.formats.Layout`.
        A header line is skipped when it names the columns (:mod:`focal.io.formats`).

    Returns
    -------
    TrialScores
        The trials in file order, with their line numbers.

    Raises
    ------
    ValueError
        With file and line: a line without the layout's number of fields, a score that is not a
        number, is NaN or is beyond the float64 range (``1e400``; ``inf`` must be spelled out),
        a repeated (model, test) trial, a file that is not UTF-8 text (NUL bytes included), a
        line longer than 1 MiB or an id longer than 4096 characters (see
        :func:`focal.io.read_limits`), a ``#``-line that has a record's fields, a first line
        that is neither a record nor a header naming the columns, or no trials.
    """
    return read_scores_and_records(path, block_bytes=block_bytes, format=format)[0]


def read_scores_and_records(path, *, block_bytes: int = BLOCK_BYTES, format=None):
    """:func:`read_scores` and the file's :class:`~focal.io._records.Records` (None for an
    HDF5 or parquet file): what an output in the file's layout needs.
    """
    layout = score_layout(format)
    kept: list = []
    models, tests, values, lines = _read_table(path, layout, ("score",), block_bytes, kept=kept)
    return TrialScores(models, tests, values["score"], display_name(path), lines), kept[0]


def read_trials(path, *, format, pos_label=None, block_bytes: int = BLOCK_BYTES):
    """Read a file holding both the scores and the labels (``wespeaker``, ``speechbrain``
    presets, or ``--columns`` with score and label), in one pass.

    Returns
    -------
    scores : TrialScores
    key : TrialKey
    """
    layout = score_layout(format)
    key_layout(layout)
    models, tests, values, lines = _read_table(
        path, layout, ("score", "label"), block_bytes, pos_label
    )
    shown = display_name(path)
    key = TrialKey(models, tests, values["label"], shown, lines)
    _check_pos_label(key, pos_label)
    return TrialScores(models, tests, values["score"], shown, lines), key


def _check_pos_label(key, pos_label):
    if pos_label is not None and not key.labels.any():
        raise ValueError(f"{key.path}: no trial has the target label {pos_label!r} (pos_label)")


def read_key(path, *, pos_label=None, block_bytes: int = BLOCK_BYTES, format=None) -> TrialKey:
    """Read a ``model test label`` key file.

    Labels ``target`` / ``nontarget`` (also tar/non, 1/0, true/false, any case); with
    ``pos_label`` (e.g. ``"genuine"``), that label (exactly) marks the target trials and every
    other trial must carry one other label (focal's label rule for binary labels). ``format``
    gives the columns as in :func:`read_scores` (``voxceleb``: trial lists ``label enrol
    test``; ``nist-sre``: ``modelid segmentid side targettype``); ``-`` reads standard input,
    gzip files are read as they are.

    Parameters
    ----------
    path : str or path-like
        The key file (``-``: standard input).
    pos_label : str, optional
        The label that marks target trials (default: the labels above).
    block_bytes : int
        Bytes read and parsed at a time (memory of the parsing work, not of the result).
    format : str or Layout, optional
        The columns, as in :func:`read_scores` (default ``bosaris``: ``model test label``).

    Returns
    -------
    TrialKey
        The trials in file order, with their labels and line numbers.
    """
    layout = key_layout(format)
    models, tests, values, lines = _read_table(path, layout, ("label",), block_bytes, pos_label)
    key = TrialKey(models, tests, values["label"], display_name(path), lines)
    _check_pos_label(key, pos_label)
    return key


def default_key_format(format=None):
    """The key layout that goes with a score ``format``: the preset's own key layout, the same
    columns when they include a label, else ``bosaris``.
    """
    if format is None or (isinstance(format, str) and format in PRESETS):
        return key_layout(format)
    layout = score_layout(format)
    return layout if layout.has("label") else key_layout(None)


def read_key_and_scores(
    score_paths, key_path=None, *, format=None, key_format=None, pos_label=None
):
    """The key and each system's scores, as ``focal train`` / ``evaluate`` read them.

    Parameters
    ----------
    score_paths : sequence of path-like
        One file per system (``-``: standard input, at most once).
    key_path : path-like, optional
        The key; None when the score files carry the labels (``wespeaker``, ``speechbrain``,
        ``--columns`` with a label): the first file's labels are then the key.
    format, key_format : str or Layout, optional
        Columns of the score files and of the key (default: :func:`default_key_format`).
    pos_label : str, optional
        The key's target label (:func:`read_key`).

    Returns
    -------
    key : TrialKey
    systems : list of TrialScores
    """
    paths = [os.fspath(p) for p in score_paths]
    inputs = paths + ([os.fspath(key_path)] if key_path is not None else [])
    if inputs.count("-") > 1:
        raise ValueError("standard input ('-') can be read once: give it for one file only")
    if key_path is None:
        layout = score_layout(format)
        if not layout.has("label"):
            raise ValueError(
                f"no key given, and the {layout.name} score files have no label "
                f"column: give the key file (--key)"
            )
        first, key = read_trials(paths[0], format=layout, pos_label=pos_label)
        return key, [first] + [read_scores(p, format=layout) for p in paths[1:]]
    key_format = default_key_format(format) if key_format is None else key_format
    key = read_key(key_path, pos_label=pos_label, format=key_format)
    return key, [read_scores(p, format=format) for p in paths]


def write_scores(path, models, tests, scores, *, chunk_size: int = 1 << 16) -> None:
    """Write ``model test score`` lines (one space between fields, LF line ends).

    Scores are written with the shortest decimal that reads back to the identical float64
    (``-0.0``, subnormals, ``inf`` included). NaN scores are refused. The file is written
    atomically (complete or not at all); ``-`` and devices or FIFOs are streamed to.

    Parameters
    ----------
    path : str or path-like
        The file to write (``-``: standard output).
    models, tests : array_like of str or bytes, shape (n_trials,)
        The trial ids.
    scores : array_like of float, shape (n_trials,)
        The scores.
    chunk_size : int, default 65536
        Lines formatted at a time.
    """
    models = np.asarray(models)
    tests = np.asarray(tests)
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1 or models.shape != scores.shape or tests.shape != scores.shape:
        raise ValueError(
            f"models, tests and scores must be 1-D of one length, got shapes "
            f"{models.shape}, {tests.shape}, {scores.shape}"
        )
    if np.isnan(scores).any():
        raise ValueError(f"scores[{int(np.argmax(np.isnan(scores)))}] is NaN")
    m = check_id_column(models, "models")
    t = check_id_column(tests, "tests")
    with write_output(path) as out:
        for i in range(0, scores.size, chunk_size):
            j = i + chunk_size
            out.write(format_lines([m[i:j], t[i:j], format_numbers(scores[i:j])]))
