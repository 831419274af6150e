"""BOSARIS-style binary trial files: ``model test score`` score lists and ``model test label`` keys.

Fields are separated by white space or commas; blank lines and lines starting with ``#`` are
skipped. Key labels: ``target`` / ``nontarget``, ``tar`` / ``non``, ``1`` / ``0`` (any case). Every
error is a ``ValueError`` naming the file and the line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import numpy as np

__all__ = ["TrialScores", "TrialKey", "read_scores", "read_key", "align_trials"]

_SPLIT = re.compile(r"[\s,]+")
_TARGET = {"target", "tar", "1", "true"}
_NONTARGET = {"nontarget", "non", "0", "false", "non-target", "impostor"}


@dataclass(frozen=True)
class TrialScores:
    """Scores of one system: ``models[i]``, ``tests[i]``, ``scores[i]`` for trial i (file order)."""

    models: np.ndarray
    tests: np.ndarray
    scores: np.ndarray
    path: str = ""


@dataclass(frozen=True)
class TrialKey:
    """Supervision: ``labels[i]`` is True when trial (``models[i]``, ``tests[i]``) is a target trial."""

    models: np.ndarray
    tests: np.ndarray
    labels: np.ndarray
    path: str = ""


def _records(path):
    """Yield (line_number, fields) of the non-blank, non-comment lines of a text file."""
    path = os.fspath(path)
    try:
        handle = open(path, encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: cannot open: {exc.strerror}") from None
    with handle:
        try:
            for number, line in enumerate(handle, start=1):
                text = line.strip()
                if text and not text.startswith("#"):
                    yield number, _SPLIT.split(text)
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not a UTF-8 text file ({exc.reason})") from None


def _check_duplicates(path, models, tests, lines):
    pairs = np.char.add(np.char.add(models.astype(str), "\x00"), tests.astype(str))
    _, first, counts = np.unique(pairs, return_index=True, return_counts=True)
    if np.any(counts > 1):
        dup = np.flatnonzero(counts > 1)[0]
        idx = np.flatnonzero(pairs == pairs[first[dup]])
        raise ValueError(
            f"{path}:{lines[idx[1]]}: duplicate trial ({models[idx[0]]}, {tests[idx[0]]}), "
            f"first seen on line {lines[idx[0]]}"
        )


def read_scores(path) -> TrialScores:
    """Read a ``model test score`` file. Raises ``ValueError`` with file and line on bad input."""
    models, tests, values, lines = [], [], [], []
    for number, fields in _records(path):
        if len(fields) != 3:
            raise ValueError(f"{path}:{number}: expected 3 fields 'model test score', got {len(fields)}")
        try:
            value = float(fields[2])
        except ValueError:
            raise ValueError(f"{path}:{number}: score {fields[2]!r} is not a number") from None
        if value != value:
            raise ValueError(f"{path}:{number}: score is NaN")
        models.append(fields[0])
        tests.append(fields[1])
        values.append(value)
        lines.append(number)
    if not values:
        raise ValueError(f"{path}: no trials found")
    m, t = np.array(models), np.array(tests)
    _check_duplicates(path, m, t, lines)
    return TrialScores(m, t, np.array(values, dtype=float), os.fspath(path))


def read_key(path) -> TrialKey:
    """Read a ``model test target|nontarget`` key file (also tar/non, 1/0, true/false)."""
    models, tests, labels, lines = [], [], [], []
    for number, fields in _records(path):
        if len(fields) != 3:
            raise ValueError(f"{path}:{number}: expected 3 fields 'model test label', got {len(fields)}")
        word = fields[2].lower()
        if word in _TARGET:
            labels.append(True)
        elif word in _NONTARGET:
            labels.append(False)
        else:
            raise ValueError(
                f"{path}:{number}: unknown label {fields[2]!r} (use target/nontarget, tar/non or 1/0)"
            )
        models.append(fields[0])
        tests.append(fields[1])
        lines.append(number)
    if not labels:
        raise ValueError(f"{path}: no trials found")
    m, t = np.array(models), np.array(tests)
    _check_duplicates(path, m, t, lines)
    return TrialKey(m, t, np.array(labels, dtype=bool), os.fspath(path))


def _trial_ids(models, tests):
    return np.char.add(np.char.add(models.astype(str), "\x00"), tests.astype(str))


def align_trials(key: TrialKey, *systems: TrialScores, missing: str = "error"):
    """Align several systems' scores with the key on the (model, test) pair.

    Parameters
    ----------
    key : TrialKey
    *systems : TrialScores
        One per system.
    missing : {"error", "drop"}
        A key trial without a score in some system, or a scored trial absent from the key: with
        ``"error"`` raise ``ValueError`` giving the count and the first trial ids; with ``"drop"``
        evaluate only the trials present everywhere.

    Returns
    -------
    X : ndarray, shape (n_trials, n_systems)
        Scores, one column per system, trials in key order.
    y : ndarray of bool, shape (n_trials,)
    models, tests : ndarray of str
        The trial ids of the rows.
    """
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")
    if not systems:
        raise ValueError("align_trials needs at least one system's scores")
    key_ids = _trial_ids(key.models, key.tests)
    keep = np.ones(key_ids.size, dtype=bool)
    columns = []
    for system in systems:
        ids = _trial_ids(system.models, system.tests)
        order = np.argsort(ids, kind="stable")
        sorted_ids = ids[order]
        pos = np.searchsorted(sorted_ids, key_ids)
        pos_c = np.minimum(pos, sorted_ids.size - 1)
        found = sorted_ids[pos_c] == key_ids
        extra = ~np.isin(ids, key_ids)
        if missing == "error":
            if not found.all():
                absent = np.flatnonzero(~found)
                sample = ", ".join(f"({key.models[i]}, {key.tests[i]})" for i in absent[:3])
                raise ValueError(
                    f"{system.path or 'scores'}: {absent.size} trial(s) of the key "
                    f"{key.path or ''} have no score, e.g. {sample}; use missing='drop' to skip them"
                )
            if extra.any():
                where = np.flatnonzero(extra)
                sample = ", ".join(f"({system.models[i]}, {system.tests[i]})" for i in where[:3])
                raise ValueError(
                    f"{system.path or 'scores'}: {where.size} scored trial(s) are not in the key "
                    f"{key.path or ''}, e.g. {sample}; use missing='drop' to skip them"
                )
        keep &= found
        columns.append(np.where(found, system.scores[order][pos_c], np.nan))
    X = np.column_stack(columns)[keep]
    if X.shape[0] == 0:
        raise ValueError("no trial is present in the key and in every score file")
    return X, key.labels[keep], key.models[keep], key.tests[keep]
