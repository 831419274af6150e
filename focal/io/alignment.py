"""Alignment of several systems' scores with a key (or with each other) on the (model, test)
pair, exactly: :func:`align_trials` for training and evaluation, :func:`align_scores` for
applying a fitted fusion to eval files. Both are the file engine's one join
(:func:`focal.io.engine.join`) of trials held in memory.
"""

from __future__ import annotations

import numpy as np

__all__ = ["align_scores", "align_trials"]


def _check_missing(missing):
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")


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
    from .binary import TrialKey
    from .engine import in_memory

    _check_missing(missing)
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
    from .binary import TrialScores
    from .engine import join, kept_rows

    for system in systems:
        if not isinstance(system, TrialScores):
            raise ValueError(f"expected TrialScores, got {type(system).__name__}")
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
    from .engine import in_memory

    _check_missing(missing)
    if not systems:
        raise ValueError("align_scores needs at least one system's scores")
    first = systems[0]
    X, keep = _join(in_memory(first, kind="first score file"), systems, missing)
    if keep is None:
        return X, first.models, first.tests
    return X[keep], first.models[keep], first.tests[keep]
