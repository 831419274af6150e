"""Sorted target and non-target scores: the one sort every binary measure shares.

:func:`sort_trials` validates ``(tar, non)`` and sorts each class once; PAV
(:func:`focal.core.pav.pav_from_sorted`), the ROC convex hull and the error rates at any
threshold (thesis sec. 7.6.1) all read the same :class:`SortedTrials`.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .validation import as_score_array

__all__ = ["SortedTrials", "sort_trials"]


@dataclass(frozen=True, eq=False)
class SortedTrials:
    """Target and non-target scores, each sorted ascending (validated, float64 copies).

    Attributes
    ----------
    tar, non : ndarray of float64
        The target and the non-target scores, ascending.
    """

    tar: np.ndarray
    non: np.ndarray

    @property
    def n_targets(self) -> int:
        """Number of target trials."""
        return int(self.tar.size)

    @property
    def n_nontargets(self) -> int:
        """Number of non-target trials."""
        return int(self.non.size)

    # totals are n_targets / n_nontargets everywhere; n_tar / n_non are per-block counts

    def error_rates(self, thresholds):
        """Miss and false-alarm rates when accepting every score ``>= threshold``.

        ``P_miss = #(tar < thr) / N_tar``, ``P_fa = #(non >= thr) / N_non`` (thesis eqs.
        7.16-7.19), for any number of thresholds at once by binary search in the sorted scores
        (the joint-sort computation of thesis sec. 7.6.1). Returns two float arrays.

        Parameters
        ----------
        thresholds : float or array_like
            Score thresholds.

        Returns
        -------
        p_miss, p_fa : ndarray
            Miss and false-alarm rate (fractions) at each threshold.

        References
        ----------
        .. [1] :cite:t:`brummer2010thesis` ("thesis").
        """
        thr = np.asarray(thresholds, dtype=float)
        misses = np.searchsorted(self.tar, thr, side="left")
        false_alarms = self.n_nontargets - np.searchsorted(self.non, thr, side="left")
        return misses / self.n_targets, false_alarms / self.n_nontargets


def sort_trials(tar, non) -> SortedTrials:
    """Validate ``(tar, non)`` and sort each once. NaN, empty sets or wrong shapes -> ValueError.

    The same checks and messages as :func:`focal.core.validation.check_binary_trials`, with the
    NaN check read off the sorted copy (NaN sorts last) instead of a pass of its own: shapes
    and types are refused before any work, NaN right after the sort.

    Parameters
    ----------
    tar, non : array_like, 1-D
        Target and non-target scores (real numbers, not NaN; neither set empty).

    Returns
    -------
    SortedTrials
        Float64 copies of both, sorted ascending.
    """
    given = {"tar": np.asarray(tar), "non": np.asarray(non)}
    for name, x in given.items():
        if x.dtype.kind not in "biuf" or x.ndim != 1 or x.size == 0:
            as_score_array(x, name)  # raises the shared message
    out = []
    for name, x in given.items():
        s = np.array(x, dtype=np.float64, copy=True)
        s.sort()
        if np.isnan(s[-1]):
            as_score_array(x, name)  # raises, naming the first NaN's index
        out.append(s)
    return SortedTrials(*out)
