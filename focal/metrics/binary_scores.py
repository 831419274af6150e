"""The input of every binary measure: two classes of scores, in memory or summarized.

Every binary measure of :mod:`focal.metrics` takes ``(tar, non)``, the scores (or natural-log
LLRs) of the target and of the non-target trials, or in their place, with ``non`` omitted, one
object that stands for both classes:

* a :class:`BinaryScores`: the trials validated and each class sorted once, so that any number
  of measures (and the plots) share one sort and one PAV;
* a :class:`SummarizedScores`: the PAV blocks and trial sums of a score set held elsewhere
  (:mod:`focal.dask`, or any engine with :mod:`focal.core.summary`);
* a :class:`focal.core.RocHull`, what :func:`focal.metrics.rocch` returns: the threshold
  measures, and every measure when it was built from the trials.

The measures ask these objects for little, the *protocol* of this module: the ROC convex hull
``hull`` (every threshold measure: minCllr, minDCF, the EERs, PRBEP, the hull's AUC, the DET
and minimum Bayes error curves), the counts ``n_targets`` and ``n_nontargets``, and for the
measures of actual decisions two sums over the trials: ``mean_costs(p_target)``, the mean
logarithmic cost of each class (Cllr, cross-entropy), and ``error_counts(thresholds)``, the
misses and false alarms of "accept iff score >= threshold" (actual DCF, actual Bayes
error-rates). Each measure is then written once, in :mod:`focal.metrics.binary`, for all of
them.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..core.pav import pav_from_sorted
from ..core.rocch import RocHull
from ..core.scoring import mean_costs_nats
from ..core.sorted_trials import SortedTrials, sort_trials
from ..core.summary import ScoreSummary, TrialSums
from ..core.validation import check_binary_trials, check_not_labels

__all__ = ["BinaryScores", "SummarizedScores", "as_binary_scores"]


class BinaryScores:
    """Target and non-target scores validated and sorted once, for several measures.

    Each measure of :mod:`focal.metrics` validates and sorts ``(tar, non)`` on every call; when
    several measures (or a measure and its curve) are wanted from the same scores, build one
    ``BinaryScores`` and pass it in their place: ``eer(scores)``, ``min_dcf(scores,
    p_target=0.01)``, ``cllr(scores)`` then share one sort and one PAV / ROC convex hull
    (computed on first use). The values equal those of the arrays.

    Parameters
    ----------
    tar, non : array_like
        Scores or natural-log LLRs of the target and non-target trials (NaN -> ValueError).

    Attributes
    ----------
    trials : focal.core.SortedTrials
        The two classes' scores, sorted ascending.
    """

    def __init__(self, tar, non):
        check_not_labels(tar, non)
        self._sorted = sort_trials(tar, non)

    @classmethod
    def of_hull(cls, hull: RocHull) -> BinaryScores:
        """The scores behind a :func:`focal.metrics.rocch` result, reusing its sort and PAV.

        A hull built without its trials (e.g. from block summaries, :mod:`focal.core.summary`)
        answers the threshold measures; the measures of the scores themselves (Cllr, actual
        DCF) then raise ``ValueError``.

        Parameters
        ----------
        hull : focal.core.RocHull
            A :func:`focal.metrics.rocch` result.

        Returns
        -------
        BinaryScores
            Sharing ``hull`` and its sorted trials (no copy).
        """
        obj = cls.__new__(cls)
        obj._sorted = hull.trials
        obj.__dict__["hull"] = hull
        return obj

    @property
    def trials(self) -> SortedTrials:
        """The two classes' scores, sorted ascending."""
        if self._sorted is None:
            raise ValueError(
                "this ROC convex hull was built without its trials (e.g. from block "
                "summaries): this measure needs the scores; pass (tar, non), a BinaryScores "
                "or a SummarizedScores with the trial sums"
            )
        return self._sorted

    @cached_property
    def hull(self) -> RocHull:
        """The ROC convex hull of one PAV run (thesis 7.3.6); see :func:`focal.metrics.rocch`."""
        return RocHull(pav_from_sorted(self.trials), self.trials)

    @property
    def n_targets(self) -> int:
        """The number of target trials."""
        return self.hull.n_targets if self._sorted is None else self._sorted.n_targets

    @property
    def n_nontargets(self) -> int:
        """The number of non-target trials."""
        return self.hull.n_nontargets if self._sorted is None else self._sorted.n_nontargets

    def mean_costs(self, p_target: float):
        """Mean logarithmic cost of the targets and of the non-targets, in nats (eq. 7.39).

        Parameters
        ----------
        p_target : float
            Target prior in (0, 1), validated by the caller.

        Returns
        -------
        c_tar, c_non : float
            The two class means, in nats.
        """
        return mean_costs_nats(self.trials.tar, self.trials.non, p_target)

    def error_counts(self, thresholds):
        """Misses ``#(tar < t)`` and false alarms ``#(non >= t)`` at each threshold ``t``.

        Binary search in the sorted scores (the joint-sort computation of thesis sec. 7.6.1).

        Parameters
        ----------
        thresholds : ndarray of float
            Score thresholds (accept iff score >= threshold).

        Returns
        -------
        n_misses, n_false_alarms : ndarray of int
            The counts at each threshold.
        """
        t = self.trials
        misses = np.searchsorted(t.tar, thresholds, side="left")
        return misses, t.n_nontargets - np.searchsorted(t.non, thresholds, side="left")


class SummarizedScores:
    """A score set known by its PAV block summary and trial sums, for the same measures.

    The measures of :mod:`focal.metrics` take it in place of ``(tar, non)`` and give the values
    of the in-memory trials: exactly for the counts, EER, PRBEP, AUC, minDCF and the PAV blocks
    (the same integer computation on the same blocks), to rounding for the sums (Cllr). See
    :mod:`focal.core.summary` for how an engine (Spark, Ray, Dask) produces the two inputs,
    and :func:`focal.dask.summarize` for Dask.

    Parameters
    ----------
    summary : focal.core.summary.ScoreSummary
        Merged PAV blocks of all the trials (both classes present).
    sums : focal.core.summary.TrialSums, optional
        Sums at the priors and thresholds the measures of actual decisions will be asked for:
        ``cllr(scores, p_target=p)`` needs ``p`` among ``sums.p_targets``; ``dcf`` and
        ``bayes_error_rates`` need their Bayes thresholds among ``sums.thresholds``.

    Attributes
    ----------
    summary : focal.core.summary.ScoreSummary
    sums : focal.core.summary.TrialSums or None
    """

    def __init__(self, summary: ScoreSummary, sums: TrialSums | None = None):
        self.summary = summary
        self.sums = sums
        if sums is not None and (sums.n_targets, sums.n_nontargets) != (
            summary.n_targets,
            summary.n_nontargets,
        ):
            raise ValueError(
                f"sums count {sums.n_targets} / {sums.n_nontargets} target / "
                f"non-target trials but the summary {summary.n_targets} / "
                f"{summary.n_nontargets}: they describe different trials"
            )

    @cached_property
    def hull(self) -> RocHull:
        """ROC convex hull of the summarized trials (thesis 7.3.6)."""
        return self.summary.hull()

    @property
    def n_targets(self) -> int:
        """Number of target trials."""
        return self.summary.n_targets

    @property
    def n_nontargets(self) -> int:
        """Number of non-target trials."""
        return self.summary.n_nontargets

    def _sums(self) -> TrialSums:
        if self.sums is None:
            raise ValueError(
                "the measures of actual decisions (Cllr, actual DCF, Bayes error-rates) need "
                "the TrialSums of the trials: pass sums="
            )
        return self.sums

    def mean_costs(self, p_target: float):
        """Mean logarithmic cost of each class at ``p_target`` (nats), from the sums.

        Parameters
        ----------
        p_target : float
            One of the priors of the sums.

        Returns
        -------
        c_tar, c_non : float
            The two class means, in nats.
        """
        return self._sums().mean_costs(p_target)

    def error_counts(self, thresholds):
        """Misses and false alarms at thresholds that the sums were taken at.

        Parameters
        ----------
        thresholds : ndarray of float
            Thresholds among ``sums.thresholds``.

        Returns
        -------
        n_misses, n_false_alarms : ndarray of int
            The counts at each threshold.
        """
        return self._sums().error_counts(thresholds)


class _Arrays:
    """``(tar, non)`` validated, in input order: the measures of actual decisions (Cllr, actual
    DCF) need no sort, and sum the costs in the order given; the hull is built on first use.
    """

    def __init__(self, tar, non, from_labels: bool = False):
        self.tar, self.non = check_binary_trials(tar, non, from_labels=from_labels)
        self.n_targets, self.n_nontargets = self.tar.size, self.non.size

    @cached_property
    def hull(self) -> RocHull:
        trials = sort_trials(self.tar, self.non)
        return RocHull(pav_from_sorted(trials), trials)

    def mean_costs(self, p_target: float):
        return mean_costs_nats(self.tar, self.non, p_target)

    def error_counts(self, thresholds):
        t = np.atleast_1d(thresholds)
        misses = np.array([np.count_nonzero(self.tar < x) for x in t])  # a few thresholds
        return misses, np.array([np.count_nonzero(self.non >= x) for x in t])


def labelled_pair(tar, non):
    """The pair ``(tar, non)`` that the caller split by labels itself, as one input of the
    measures: validated (no check of the argument order, which cannot be wrong), not sorted.
    """
    return _Arrays(tar, non, from_labels=True)


_BOTH_CLASSES = (BinaryScores, SummarizedScores, RocHull, _Arrays)


def _check_pair(tar, non) -> bool:
    """Whether ``tar`` stands for both classes; refuses a missing or extra ``non`` (no work)."""
    if isinstance(tar, _BOTH_CLASSES):
        if non is not None:
            raise ValueError(
                f"give either a {type(tar).__name__} or the (tar, non) arrays, not "
                "both (with one of them, pass the other arguments by keyword, e.g. "
                "min_dcf(scores, p_target=0.01))"
            )
        return True
    if non is None:
        raise ValueError(
            "non-target scores are missing: give the (tar, non) arrays, a BinaryScores, a "
            "SummarizedScores or a rocch() result"
        )
    return False


def as_binary_scores(tar, non=None) -> BinaryScores | SummarizedScores:
    """The ``(tar, non)`` argument of every binary measure as one object of the protocol.

    Parameters
    ----------
    tar : array_like, BinaryScores, SummarizedScores or RocHull
        Target scores; or, with ``non`` omitted, a :class:`BinaryScores` or
        :class:`SummarizedScores` (returned as they are) or a :func:`focal.metrics.rocch`
        result (its scores, :meth:`BinaryScores.of_hull`).
    non : array_like, optional
        Non-target scores, with array ``tar`` only.

    Returns
    -------
    BinaryScores or SummarizedScores
        Sorted (and, once asked, PAV-ed) once: pass it to any number of measures.
    """
    if _check_pair(tar, non):
        if isinstance(tar, (RocHull, _Arrays)):
            return BinaryScores.of_hull(tar if isinstance(tar, RocHull) else tar.hull)
        return tar
    return BinaryScores(tar, non)


def hull_of(tar, non=None) -> RocHull:
    """The ROC convex hull behind any input of :func:`as_binary_scores` (threshold measures)."""
    if _check_pair(tar, non):
        return tar if isinstance(tar, RocHull) else tar.hull
    return BinaryScores(tar, non).hull


def sums_of(tar, non=None):
    """The object answering ``mean_costs`` / ``error_counts`` for any input of
    :func:`as_binary_scores` (the measures of actual decisions): arrays are validated, not
    sorted.
    """
    if _check_pair(tar, non):
        return BinaryScores.of_hull(tar) if isinstance(tar, RocHull) else tar
    return _Arrays(tar, non)


def sorted_scores(tar, non=None) -> BinaryScores:
    """:func:`as_binary_scores` for a measure that needs every trial's score: a
    :class:`SummarizedScores` (block summaries and sums only) is refused.
    """
    scores = as_binary_scores(tar, non)
    if isinstance(scores, SummarizedScores):
        raise ValueError(
            "this measure needs every trial's score; a SummarizedScores holds only block "
            "summaries and sums: pass (tar, non) or a BinaryScores"
        )
    return scores


def score_arrays(tar, non=None):
    """Validated ``(tar, non)`` float arrays of any input of :func:`as_binary_scores` but a
    summary: the sorted arrays of a :class:`BinaryScores` or hull (shared, not copied: do not
    modify them), else new validated copies of the arrays in their input order.
    """
    if _check_pair(tar, non):
        trials = sorted_scores(tar).trials
        return trials.tar, trials.non
    return check_binary_trials(tar, non)
