"""Alignment of several systems' scores with a key (or with each other) on the (model, test)
pair, exactly: :func:`align_trials` for training and evaluation, :func:`align_scores` for
applying a fitted fusion to eval files. Both are the file engine's one join
(:func:`focal.io.engine.join`) of trials held in memory.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._text.fields import as_id_array
from ._ids import check_unique, hash_ids
from .binary import TrialKey, TrialScores
from .engine import check_missing, in_memory, join, kept_rows

__all__ = [
    "align_scores",
    "align_trials",
    "check_both_classes",
    "trial_set",
    "warn_different_trial_sets",
]


def align_trials(key, *systems, missing: str = "error"):
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

    Raises
    ------
    ValueError
        As the join of files (:func:`focal.io.engine.join`): trials missing on either side
        (``missing="error"``), a trial repeated in the key or in a system, a NaN score, or no
        trial left.
    """
    check_missing(missing)
    if not systems:
        raise ValueError("align_trials needs at least one system's scores")
    if not isinstance(key, TrialKey):
        raise ValueError(f"key must be a TrialKey, got {type(key).__name__}")
    X, keep = _join(in_memory(key), systems, missing)
    y = np.asarray(key.labels, dtype=bool)
    if keep is None:
        return X, y, key.models, key.tests
    return X[keep], y[keep], key.models[keep], key.tests[keep]


def _join(reference, systems, missing):
    for system in systems:
        if not isinstance(system, TrialScores):
            raise ValueError(f"expected TrialScores, got {type(system).__name__}")
        if system.lines is None:  # made in memory
            ids = as_id_array(system.models, "models"), as_id_array(system.tests, "tests")
            check_unique(ids, system.path or "scores")  # (a reader's were checked as read)
    X = join(reference, systems, missing=missing, threads=0)
    return X, kept_rows(X, reference, systems)


def align_scores(*systems, missing: str = "error"):
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
    check_missing(missing)
    if not systems:
        raise ValueError("align_scores needs at least one system's scores")
    first = systems[0]
    X, keep = _join(in_memory(first, kind="first score file"), systems, missing)
    if keep is None:
        return X, first.models, first.tests
    return X[keep], first.models[keep], first.tests[keep]


def check_both_classes(
    n_targets, n_trials, key_name, path=None, missing="error", what="the measures need"
):
    """Refuse trials of one class (``n_targets`` of ``n_trials``), naming the key (and, after
    ``missing="drop"``, the score file: ``path``, or every file when None).
    """
    if 0 < n_targets < n_trials:
        return
    kind, other = ("target", "non-target") if n_targets else ("non-target", "target")
    if missing == "error":
        where = f"{key_name}: every trial of the key is a {kind} trial ({n_trials:,} trials)"
    elif path is None:
        where = (
            f"{key_name}: the {n_trials:,} trials of the key scored in every file are all "
            f"{kind} trials"
        )
    else:
        where = (
            f"{path}: the {n_trials:,} trials it shares with the key {key_name} are all "
            f"{kind} trials"
        )
    raise ValueError(f"{where}: {what} {other} trials too")


def trial_set(models, tests):
    """``(n_trials, fingerprint)`` of a set of trials: the fingerprint is the sum (modulo 2^64)
    of the trials' 64-bit id hashes, so it does not depend on their order or on how they are
    split (sums of parts add up); two sets that differ have different fingerprints but for a
    chance of about 2^-64.
    """
    h = hash_ids(as_id_array(models, "models"), as_id_array(tests, "tests"))
    return len(h), int(h.sum(dtype=np.uint64))


def warn_different_trial_sets(sets, stacklevel=2) -> None:
    """Warn that ``missing="drop"`` left the systems on different trials: ``sets`` maps each
    system's name to its :func:`trial_set`.
    """
    if len(sets) < 2 or len(set(sets.values())) == 1:
        return
    shown = ", ".join(f"{p} {n:,}" for p, (n, _) in sets.items())
    warnings.warn(
        f"missing='drop' kept different trials of each system ({shown} trials): the systems "
        f"are compared on different trial sets (drop the trials absent from any file, or "
        f"evaluate on the trials they share)",
        UserWarning,
        stacklevel=stacklevel + 1,
    )
