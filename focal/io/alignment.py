"""Alignment of several systems' scores with a key (or with each other) on the (model, test)
pair, exactly: :func:`align_trials` for training and evaluation, :func:`align_scores` for
applying a fitted fusion to eval files. Ids are matched through hashes checked byte for byte
(:mod:`focal.io._ids`).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._text.fields import ids_text
from ._ids import as_id_array, check_matched, check_unique, hash_ids, match_ids

__all__ = [
    "align_scores",
    "align_trials",
    "aligned_rows",
    "check_both_classes",
    "trial_set",
    "warn_different_trial_sets",
]


def _ids_of(obj):
    return as_id_array(obj.models, "models"), as_id_array(obj.tests, "tests")


def _sample(obj, index, k=3):
    return ", ".join(f"({ids_text(obj.models[i])}, {ids_text(obj.tests[i])})" for i in index[:k])


def _check_missing(missing):
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")


def _check_unique(obj, ids, kind):
    """Refuse a trial given twice in a key or scores (``kind``) made in memory (a reader's
    objects, with their ``lines``, were checked as read): matching would take one of the two
    silently.
    """
    if obj.lines is None:
        check_unique(ids, obj.path or kind)


def _columns(reference, systems, missing, reference_name):
    """Scores of each system at the reference's trials; a mask of the trials found everywhere."""
    from .binary import TrialScores

    ref_ids = _ids_of(reference)
    _check_unique(reference, ref_ids, "key" if reference is not systems[0] else "scores")
    keep = np.ones(len(reference), dtype=bool)
    columns = []
    for system in systems:
        if not isinstance(system, TrialScores):
            raise ValueError(f"expected TrialScores, got {type(system).__name__}")
        ids = _ids_of(system)
        if system is not reference:
            _check_unique(system, ids, "scores")
        where = match_ids(ref_ids, ids)
        found = where >= 0
        if missing == "error":
            check_matched(
                where,
                len(system),
                system.path or "scores",
                reference_name,
                "trial",
                "score",
                lambda i: _sample(reference, i),
                lambda i, s=system: _sample(s, i),
            )
        keep &= found
        columns.append(np.where(found, system.scores[np.maximum(where, 0)], np.nan))
    return np.column_stack(columns), keep


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
    """
    from .binary import TrialKey

    _check_missing(missing)
    if not systems:
        raise ValueError("align_trials needs at least one system's scores")
    if not isinstance(key, TrialKey):
        raise ValueError(f"key must be a TrialKey, got {type(key).__name__}")
    X, keep = _columns(key, systems, missing, f"key {key.path}".rstrip())
    if not keep.any():
        raise ValueError(
            f"no trial of the key {key.path} is in every system's scores: is it their key?"
        )
    if keep.all():
        return X, np.asarray(key.labels, dtype=bool), key.models, key.tests
    return X[keep], np.asarray(key.labels, dtype=bool)[keep], key.models[keep], key.tests[keep]


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
    if not systems:
        raise ValueError("align_scores needs at least one system's scores")
    first = systems[0]
    X, keep = aligned_rows(systems, missing)
    if keep is None:
        return X, first.models, first.tests
    return X, first.models[keep], first.tests[keep]


def aligned_rows(systems, missing="error"):
    """:func:`align_scores`'s scores, and which of the first system's trials they are (a
    boolean mask, or None for all of them).
    """
    _check_missing(missing)
    first = systems[0]
    X, keep = _columns(first, systems, missing, f"first score file {first.path}".rstrip())
    if not keep.any():
        raise ValueError("no trial is present in every score file")
    if keep.all():
        return X, None
    return X[keep], keep


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
