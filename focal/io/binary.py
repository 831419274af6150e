"""BOSARIS-style binary trial files: ``model test score`` score lists and ``model test label`` keys.

Fields are separated by white space or commas; blank lines and lines whose first field starts
with ``#`` are skipped. Key labels: ``target`` / ``nontarget`` (also ``non-target``), ``tar`` /
``non``, ``1`` / ``0``, ``true`` / ``false``, ``impostor`` (any case). Every error is a
``ValueError`` naming the file and the line.

Trial ids (model, test) are kept as UTF-8 bytes in fixed-width NumPy arrays (dtype ``S``): 10M
trials take their bytes once, not 10M Python strings. ``np.char.decode(ids, "utf-8")`` gives
``str`` when needed. Scores are read exactly: each number is the float64 that Python's
``float`` reads from the same text.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .._files import write_output
from ._ids import as_id_array, check_matched, find_duplicate, match_ids
from ._numbers import format_numbers
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
    "TrialScores",
    "TrialKey",
    "read_scores",
    "read_key",
    "align_trials",
    "align_scores",
    "write_scores",
]

_SCORE_LAYOUT = "'model test score'"
_KEY_LAYOUT = "'model test label'"
_TARGET = (b"target", b"tar", b"1", b"true")
_NONTARGET = (b"nontarget", b"non-target", b"non", b"0", b"false", b"impostor")


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


def _pieces(path, layout, convert, block_bytes):
    """Yield ((models, tests), values, lines) per block of a ``model test X`` file."""
    for block in iter_blocks(path, block_bytes):
        fields = split_fields(block, 3, layout)
        if len(fields):
            yield (fields.ids(0), fields.ids(1)), convert(fields, path), fields.lines


def score_pieces(path, block_bytes=BLOCK_BYTES):
    """Yield ((models, tests), scores (n, 1), lines) per block of a score file (for streaming)."""
    for ids, scores, lines in _pieces(os.fspath(path), _SCORE_LAYOUT, _score_column, block_bytes):
        yield ids, scores[:, None], lines


def _read_table(path, layout, convert, block_bytes):
    """Read ``model test X`` lines; ``convert(fields, path)`` gives the third column's values."""
    path = os.fspath(path)
    models, tests, values = [], [], []
    lines = LineMap()
    n = 0
    for (m, t), v, where in _pieces(path, layout, convert, block_bytes):
        values.append(v)
        models.append(m)
        tests.append(t)
        lines.add(n, where)
        n += len(v)
    if n == 0:
        raise ValueError(f"{path}: no trials found")
    models = concat_ids(models, lines, path)
    tests = concat_ids(tests, lines, path)
    values = concat_pieces(values)
    dup = find_duplicate((models, tests))
    if dup is not None:
        first, second = dup
        raise ValueError(f"{path}:{lines.line(second)}: duplicate trial "
                         f"({ids_text(models[second])}, {ids_text(tests[second])}), "
                         f"first seen on line {lines.line(first)}")
    return models, tests, values, lines


def _score_column(fields, path):
    return fields.numbers([2], path)[:, 0]


def _label_column(fields, path):
    words = np.char.lower(fields.ids(2))
    target = np.isin(words, _TARGET)
    known = target | np.isin(words, _NONTARGET)
    if not known.all():
        i = int(np.argmin(known))
        raise ValueError(f"{path}:{int(fields.lines[i])}: unknown label "
                         f"{ids_text(fields.ids(2)[i])!r} (use target/nontarget, tar/non or 1/0)")
    return target


def read_scores(path, *, block_bytes: int = BLOCK_BYTES) -> TrialScores:
    """Read a ``model test score`` file (white space or comma separated).

    Parameters
    ----------
    path : str or path-like
        The score file.
    block_bytes : int
        Bytes read and parsed at a time (memory of the parsing work, not of the result).

    Returns
    -------
    TrialScores
        The trials in file order, with their line numbers.

    Raises
    ------
    ValueError
        With file and line: a line without exactly three fields, a score that is not a number,
        is NaN or is beyond the float64 range (``1e400``; ``inf`` must be spelled out), a
        repeated (model, test) trial, a file that is not UTF-8 text (NUL bytes included), a
        line longer than 1 MiB or an id longer than 4096 characters (see
        :func:`focal.io.read_limits`), a ``#``-line that has a record's fields, or no trials.
    """
    models, tests, scores, lines = _read_table(path, _SCORE_LAYOUT, _score_column, block_bytes)
    return TrialScores(models, tests, scores, os.fspath(path), lines)


def _named_label_column(pos_label):
    """The label column of a key whose target label is ``pos_label`` (exact), all other trials
    carrying one other label (focal's label rule, ``as_binary_labels``).
    """
    target_word = str(pos_label).encode()
    other = []

    def column(fields, path):
        words = fields.ids(2)
        target = words == target_word
        rest = words[~target]
        if rest.size:
            if not other:
                other.append(rest[0])
            wrong = words != other[0]
            wrong &= ~target
            if wrong.any():
                i = int(np.argmax(wrong))
                raise ValueError(f"{path}:{int(fields.lines[i])}: label {ids_text(words[i])!r} is "
                                 f"neither the target label {pos_label!r} (pos_label) nor the "
                                 f"non-target label {ids_text(other[0])!r} seen before")
        return target

    return column


def read_key(path, *, pos_label=None, block_bytes: int = BLOCK_BYTES) -> TrialKey:
    """Read a ``model test label`` key file.

    Labels ``target`` / ``nontarget`` (also tar/non, 1/0, true/false, any case); with
    ``pos_label`` (e.g. ``"genuine"``), that label (exactly) marks the target trials and every
    other trial must carry one other label (focal's label rule for binary labels).

    Parameters
    ----------
    path : str or path-like
        The key file.
    pos_label : str, optional
        The label marking target trials, for keys with other labels than the standard ones.
    block_bytes : int
        Bytes read and parsed at a time.

    Returns
    -------
    TrialKey
        The trials in file order, with their line numbers.
    """
    column = _label_column if pos_label is None else _named_label_column(pos_label)
    models, tests, labels, lines = _read_table(path, _KEY_LAYOUT, column, block_bytes)
    if pos_label is not None and not labels.any():
        raise ValueError(f"{path}: no trial has the target label {pos_label!r} (pos_label)")
    return TrialKey(models, tests, labels, os.fspath(path), lines)


def _ids_of(obj):
    return as_id_array(obj.models, "models"), as_id_array(obj.tests, "tests")


def _sample(obj, index, k=3):
    return ", ".join(f"({ids_text(obj.models[i])}, {ids_text(obj.tests[i])})" for i in index[:k])


def _check_missing(missing):
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")


def _columns(reference, systems, missing, reference_name):
    """Scores of each system at the reference's trials; a mask of the trials found everywhere."""
    ref_ids = _ids_of(reference)
    keep = np.ones(len(reference), dtype=bool)
    columns = []
    for system in systems:
        if not isinstance(system, TrialScores):
            raise ValueError(f"expected TrialScores, got {type(system).__name__}")
        ids = _ids_of(system)
        where = match_ids(ref_ids, ids)
        found = where >= 0
        if missing == "error":
            check_matched(where, len(system), system.path or "scores", reference_name,
                          "trial", "score", lambda i: _sample(reference, i),
                          lambda i, s=system: _sample(s, i))
        keep &= found
        columns.append(np.where(found, system.scores[np.maximum(where, 0)], np.nan))
    return np.column_stack(columns), keep


def align_trials(key: TrialKey, *systems: TrialScores, missing: str = "error"):
    """Align several systems' scores with the key on the (model, test) pair, exactly.

    Parameters
    ----------
    key : TrialKey
        The key: which trials, and which of them are targets.
    *systems : TrialScores
        One per system, trials in any order.
    missing : {"error", "drop"}
        A key trial without a score in some system, or a scored trial absent from the key: with
        ``"error"`` raise ``ValueError`` giving the count and the first trial ids; with ``"drop"``
        keep only the key trials present in every system.

    Returns
    -------
    X : ndarray, shape (n_trials, n_systems)
        Scores, one column per system, trials in key order.
    y : ndarray of bool, shape (n_trials,)
        True for target trials.
    models, tests : ndarray of bytes
        The trial ids of the rows.
    """
    _check_missing(missing)
    if not systems:
        raise ValueError("align_trials needs at least one system's scores")
    if not isinstance(key, TrialKey):
        raise ValueError(f"key must be a TrialKey, got {type(key).__name__}")
    X, keep = _columns(key, systems, missing, f"key {key.path}".rstrip())
    if not keep.any():
        raise ValueError("no trial is present in the key and in every score file")
    if keep.all():
        return X, np.asarray(key.labels, dtype=bool), key.models, key.tests
    return X[keep], np.asarray(key.labels, dtype=bool)[keep], key.models[keep], key.tests[keep]


def align_scores(*systems: TrialScores, missing: str = "error"):
    """Align several systems' scores on the (model, test) pair, in the first system's order.

    The key-less counterpart of :func:`align_trials`, for applying a fitted fusion to eval
    files.

    Parameters
    ----------
    *systems : TrialScores
        One per system, trials in any order.
    missing : {"error", "drop"}
        A trial missing from some system: raise ``ValueError`` (``"error"``), or keep only the
        trials present in every system (``"drop"``).

    Returns
    -------
    X : ndarray, shape (n_trials, n_systems)
        Scores, one column per system, trials in the first system's order.
    models, tests : ndarray of bytes
        The trial ids of the rows.
    """
    _check_missing(missing)
    if not systems:
        raise ValueError("align_scores needs at least one system's scores")
    first = systems[0]
    X, keep = _columns(first, systems, missing, f"first score file {first.path}".rstrip())
    if not keep.any():
        raise ValueError("no trial is present in every score file")
    if keep.all():
        return X, first.models, first.tests
    return X[keep], first.models[keep], first.tests[keep]


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
        raise ValueError(f"models, tests and scores must be 1-D of one length, got shapes "
                         f"{models.shape}, {tests.shape}, {scores.shape}")
    if np.isnan(scores).any():
        raise ValueError(f"scores[{int(np.argmax(np.isnan(scores)))}] is NaN")
    m = check_id_column(models, "models")
    t = check_id_column(tests, "tests")
    with write_output(path) as out:
        for i in range(0, scores.size, chunk_size):
            j = i + chunk_size
            out.write(format_lines([m[i:j], t[i:j], format_numbers(scores[i:j])]))
