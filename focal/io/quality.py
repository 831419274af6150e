"""Quality-measure files: per-segment tables of durations, SNRs, ... for quality fusion.

A quality file has a header naming the measures, then one line per segment (an enrolled model
or a test segment)::

    segment duration snr
    spk0001 63.20 18.5
    seg0001_00000 7.85 11.0

(the generic multiclass layout, read by :func:`focal.io.read_multiclass_scores`: white space or
commas, exact numbers, ``path:line`` errors). Several files may be given; their measures are
joined by name. A segment absent from a file has missing (NaN) values for that file's measures,
and its trials then fall back to the affine fusion in :class:`focal.QualityFusion`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._text.fields import as_id_array
from ._ids import match_ids
from .binary import read_scores
from .multiclass import read_multiclass_scores

__all__ = [
    "QualityTable",
    "read_quality",
    "read_trial_quality",
    "trial_quality",
    "check_transformable",
]


def read_quality(*paths):
    """Read quality files into one table.

    Parameters
    ----------
    *paths : str or path-like
        Quality files (header ``segment name1 name2 ...``); a measure must not appear in two.

    Returns
    -------
    list of QualityTable
        One per file: segment ids (bytes), values of shape (n_segments, n_measures), measure
        names, the path and the line of each segment (for error messages).
    """
    tables, seen = [], {}
    for path in paths:
        t = read_multiclass_scores(path)
        for name in t.classes:
            if name in seen:
                raise ValueError(f"{t.path}:1: measure {name!r} is also in {seen[name]}")
            seen[name] = t.path
        tables.append(QualityTable(t.segments, t.llh, t.classes, t.path, t.lines))
    return tables


class QualityTable(NamedTuple):
    """Per-segment quality values of one file (:func:`read_quality`)."""

    segments: np.ndarray
    values: np.ndarray
    names: tuple
    path: str
    lines: object


def check_transformable(tables, trials, measures, transforms):
    """Refuse, with ``path:line``, a value that a measure's transform cannot take (a
    non-positive value under "log", one outside (0, 1) under "logit"), before any work.
    """
    allowed = {
        "log": (lambda v: v > 0, "positive"),
        "logit": (lambda v: (v > 0) & (v < 1), "in (0, 1)"),
    }
    for name, how in zip(measures, transforms):
        if how not in allowed:
            continue
        ok, what = allowed[how]
        sources = [
            (t.values[:, t.names.index(name)], t.path, t.lines) for t in tables if name in t.names
        ]
        sources += [
            (trials[c].scores, trials[c].path, trials[c].lines)
            for c in (f"model_{name}", f"test_{name}")
            if c in (trials or {})
        ]
        for values, path, lines in sources:
            bad = np.flatnonzero(~ok(values))
            if bad.size:
                row = int(bad[0])
                where = f"{path}:{lines.line(row)}" if lines is not None else path
                raise ValueError(
                    f"{where}: {name} {float(values[row])!r} is not {what}: the model "
                    f"takes its {how}"
                )


def read_trial_quality(columns):
    """Read per-trial quality files: one value per trial and side.

    Parameters
    ----------
    columns : mapping of str to path-like
        ``{"model_<m>": path, "test_<m>": path, ...}``: which side of which measure each file
        holds. Each file has lines ``model test value`` (the score-file format of
        :func:`focal.io.read_scores`).

    Returns
    -------
    dict of str to TrialScores
    """
    out = {}
    for column, path in columns.items():
        side, _, measure = str(column).partition("_")
        if side not in ("model", "test") or not measure:
            raise ValueError(
                f"per-trial quality column {column!r} must be named "
                "model_<measure> or test_<measure>"
            )
        out[str(column)] = read_scores(path)  # refuses a repeated trial
    return out


def _locate(tables, measures, trials=None):
    """{measure: (file index, column)} and the measures asked for (default: all), checked:
    each side of each measure must be in a segment table or a per-trial file.
    """
    where = {}
    for t, table in enumerate(tables):
        for j, name in enumerate(table.names):
            where[name] = (t, j)
    trials = trials or {}
    if measures is None:
        measures = list(where) + [
            c[len("model_") :]
            for c in trials
            if c.startswith("model_") and c[len("model_") :] not in where
        ]
    measures = [str(m) for m in measures]
    unknown = [
        f"{side}_{m}"
        for m in measures
        for side in ("model", "test")
        if m not in where and f"{side}_{m}" not in trials
    ]
    if unknown:
        raise ValueError(
            f"quality for {unknown!r} is not in the quality files (they have "
            f"{sorted(where) + sorted(trials)!r})"
        )
    return where, measures


def trial_quality(models, tests, tables, measures=None, trials=None):
    """Quality of each trial's model side and test side, looked up by segment id.

    Parameters
    ----------
    models, tests : array-like of bytes or str, shape (n_trials,)
        Trial ids (as :func:`focal.io.align_trials` returns them).
    tables : list
        :func:`read_quality`'s result.
    measures : sequence of str, optional
        Which measures, in which order (e.g. a fitted model's ``measures_``); default: every
        measure of the files, in file order. A name not in the files is an error.
    trials : dict, optional
        :func:`read_trial_quality`'s result: per-trial values, used for the sides they name
        in place of the segment tables.

    Returns
    -------
    quality : ndarray of float, shape (n_trials, 2 M)
        Model-side then test-side values of the M measures; NaN where a segment has no line.
    names : list of str
        The M measure names.
    """
    models = as_id_array(np.asarray(models), "models")
    tests = as_id_array(np.asarray(tests), "tests")
    where, measures = _locate(tables, measures, trials)
    M = len(measures)
    Q = np.full((models.shape[0], 2 * M), np.nan)
    for column, table in (trials or {}).items():
        side, _, name = column.partition("_")
        if name not in measures:
            continue
        index = match_ids((models, tests), (table.models, table.tests))
        found = index >= 0
        Q[found, (side == "test") * M + measures.index(name)] = table.scores[index[found]]
    rows = {}
    for i, name in enumerate(measures):
        if name not in where:
            continue
        t, j = where[name]
        segments, values = tables[t].segments, tables[t].values
        if t not in rows:
            rows[t] = [match_ids((side,), (segments,)) for side in (models, tests)]
        for s, index in enumerate(rows[t]):
            if trials and f"{('model', 'test')[s]}_{name}" in trials:
                continue  # the per-trial file rules this side
            found = index >= 0
            Q[found, s * M + i] = values[index[found], j]
    return Q, measures
