"""Cohort score normalization of verification scores: z-norm, t-norm, s-norm and adaptive s-norm.

A raw score ``s(e, t)`` of enrolment model ``e`` against test segment ``t`` is standardized by the
statistics of the scores of the same model, or the same segment, against an impostor *cohort*:

- z-norm: ``(s - mu_e) / sigma_e`` with ``mu_e``, ``sigma_e`` the mean and standard deviation of
  e's scores against the cohort (Auckenthaler, Carey & Lloyd-Thomas, "Score normalization for
  text-independent speaker verification systems", DSP 10, 2000, sec. 3.1);
- t-norm: ``(s - mu_t) / sigma_t`` with the statistics of t's scores against the cohort (same
  paper, sec. 3.2);
- s-norm: the mean of the two, ``((s - mu_e) / sigma_e + (s - mu_t) / sigma_t) / 2`` (Kenny,
  "Bayesian speaker verification with heavy-tailed priors", Odyssey 2010, sec. 6.1);
- adaptive s-norm: as s-norm, but each side's statistics use only its ``top_n`` highest cohort
  scores, the cohort members closest to that model or segment (Matějka et al., "Analysis of
  score normalization in multilingual speaker recognition", Interspeech 2017, eq. 3).

Standard deviations are population ones (divide by the number of scores, ``ddof=0``). Cohort
matrices are reduced a block of rows at a time (``np.partition`` for the top-N), so memory stays
bounded by the block whatever the number of rows.
"""

from __future__ import annotations

import numpy as np

from .validation import as_score_array

__all__ = ["cohort_statistics", "normalize_scores", "METHODS"]

METHODS = ("z-norm", "t-norm", "s-norm", "as-norm")
_BLOCK_VALUES = 1 << 22  # cohort scores reduced per block of rows


def cohort_statistics(cohort_scores, top_n=None, name="cohort_scores"):
    """Mean and standard deviation of each row's cohort scores (all, or its ``top_n`` largest).

    Parameters
    ----------
    cohort_scores : array_like, shape (n_rows, n_cohort)
        Scores of each enrolment model (or test segment) against each cohort member; finite.
    top_n : int, optional
        Use only the ``top_n`` largest scores of each row (adaptive normalization); None or
        ``n_cohort`` uses them all.
    name : str
        Argument name for error messages.

    Returns
    -------
    mean, std : ndarray, shape (n_rows,)
        Population statistics (``ddof=0``). A row whose selected scores are all equal has
        ``std == 0``, which :func:`normalize_scores` refuses.
    """
    M = np.asarray(cohort_scores, dtype=float)
    if M.ndim != 2 or M.shape[0] == 0 or M.shape[1] < 2:
        raise ValueError(
            f"{name} must be a 2-D array with a row per model / segment and at "
            f"least 2 cohort columns, got shape {M.shape}"
        )
    n_cohort = M.shape[1]
    if top_n is not None:
        if not (isinstance(top_n, (int, np.integer)) and 2 <= top_n):
            raise ValueError(f"top_n must be an integer >= 2, got {top_n!r}")
        top_n = int(min(top_n, n_cohort))
    rows = max(1, _BLOCK_VALUES // n_cohort)
    mean = np.empty(M.shape[0])
    std = np.empty(M.shape[0])
    for start in range(0, M.shape[0], rows):
        block = M[start : start + rows]
        if not np.isfinite(block).all():
            bad = start + int(np.flatnonzero(~np.isfinite(block).all(axis=1))[0])
            raise ValueError(f"{name} row {bad} holds a NaN or infinite score")
        if top_n is not None and top_n < n_cohort:
            block = np.partition(block, n_cohort - top_n, axis=1)[:, n_cohort - top_n :]
        mean[start : start + rows] = block.mean(axis=1)
        std[start : start + rows] = block.std(axis=1)
    return mean, std


def normalize_scores(scores, enrol_mean=None, enrol_std=None, test_mean=None, test_std=None):
    """Apply z-, t- or s-norm given each trial's enrolment-side and / or test-side statistics.

    With only the enrolment statistics: z-norm; only the test ones: t-norm; both: s-norm (the
    mean of the two). Statistics are per trial (same shape as ``scores``).
    """
    s = as_score_array(scores, "scores")
    parts = []
    for mu, sd, side in ((enrol_mean, enrol_std, "enrolment"), (test_mean, test_std, "test")):
        if mu is None:
            continue
        mu = np.asarray(mu, dtype=float)
        sd = np.asarray(sd, dtype=float)
        if mu.shape != s.shape or sd.shape != s.shape:
            raise ValueError(f"{side} statistics must have the shape of scores {s.shape}")
        if (sd <= 0).any():
            raise ValueError(
                f"a {side}-side cohort has zero spread (all its cohort scores "
                "equal): cannot normalize by its standard deviation"
            )
        parts.append((s - mu) / sd)
    if not parts:
        raise ValueError("give the enrolment-side statistics, the test-side ones, or both")
    return parts[0] if len(parts) == 1 else 0.5 * (parts[0] + parts[1])
