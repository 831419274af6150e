"""BOSARIS-style binary trial files: ``model test score`` score lists and ``model test label`` keys.

Fields are separated by white space or commas; blank lines and lines whose first field starts
with ``#`` are skipped; the key labels are those of :func:`read_key`. Every error is a
``ValueError`` naming the file and the line.

Trial ids (model, test) are kept as UTF-8 bytes in fixed-width NumPy arrays (dtype ``S``): 10M
trials take their bytes once, not 10M Python strings. ``np.char.decode(ids, "utf-8")`` gives
``str`` when needed. Scores are read exactly: each number is the float64 that Python's
``float`` reads from the same text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._text.blocks import BLOCK_BYTES
from .._text.fields import LineMap, check_id_column, format_lines
from .._text.numbers import format_numbers
from .._text.outputs import write_output
from .engine import read_columns
from .formats import key_layout, score_layout

__all__ = [
    "TrialKey",
    "TrialScores",
    "read_key",
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
    trials = read_columns(path, score_layout(format), block_bytes=block_bytes)
    models, tests = trials.arrays()
    return TrialScores(models, tests, trials.values["score"], trials.path, trials.lines)


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
    trials = read_columns(
        path, layout, ("score", "label"), pos_label=pos_label, block_bytes=block_bytes
    )
    models, tests = trials.arrays()
    key = TrialKey(models, tests, trials.values["label"], trials.path, trials.lines)
    return TrialScores(models, tests, trials.values["score"], trials.path, trials.lines), key


def read_key(path, *, pos_label=None, block_bytes: int = BLOCK_BYTES, format=None) -> TrialKey:
    """Read a ``model test label`` key file.

    Labels ``target`` / ``nontarget`` (also ``non-target``), ``tar`` / ``non``, ``1`` / ``0``,
    ``true`` / ``false``, ``impostor`` (any case); with ``pos_label`` (e.g. ``"genuine"``), that
    label (exactly) marks the target trials and every other trial must carry one other label
    (focal's label rule for binary labels). ``format`` gives the columns as in
    :func:`read_scores` (``voxceleb``: trial lists ``label enrol test``; ``nist-sre``:
    ``modelid segmentid side targettype``); ``-`` reads standard input, gzip files are read as
    they are.

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
    trials = read_columns(
        path, key_layout(format), ("label",), pos_label=pos_label, block_bytes=block_bytes
    )
    models, tests = trials.arrays()
    return TrialKey(models, tests, trials.values["label"], trials.path, trials.lines)


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
