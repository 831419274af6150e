"""The ROC convex hull, read off the PAV blocks (thesis sec. 7.3.6-7.3.8).

The vertices of the ROC convex hull are the boundaries of the PAV blocks and the LLR of each
hull segment is the PAV LLR of its block (thesis 7.7.3, [69]). :class:`RocHull` holds that
geometry: the vertices as exact counts, their score thresholds, the segment LLRs, the exact
point where the hull (or the steppy ROC) meets a line through the origin, and the thresholds
and vertices where a cost is least. Every threshold-optimized measure (minDCF, minCllr,
ROCCH-EER, PRBEP, the hull's AUC, the minimum Bayes error-rate curve) is a function of
:mod:`focal.metrics` computed on these few vertices; nothing here touches the trials again.

Vertex ``k`` (``k = 0..K``) is the operating point "accept iff score >= thresholds[k]": the
first ``k`` PAV blocks are rejected. Vertex 0 accepts everything (P_miss = 0, P_fa = 1), vertex K
rejects everything (P_miss = 1, P_fa = 0). Error rates are fractions in [0, 1].

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.special import expit

from .pav import PAVResult
from .priors import detection_cost
from .sorted_trials import SortedTrials
from .validation import check_positive, check_probability

__all__ = ["RocHull", "MinBayesErrors", "Threshold"]

_INT64_SAFE = 2**31  # counts below this keep every product of two counts inside int64
_TIE_RTOL = 1e-12  # vertex costs this close to the minimum are ties (exact ties round apart)


@dataclass(frozen=True)
class Threshold:
    """A score threshold: decide "target" iff ``score >= value``, on the scale of the scores.

    Attributes
    ----------
    value : float
        The threshold to use.
    low, high : float
        The range of equally optimal thresholds (equal to ``value`` when the optimum is unique);
        see :meth:`RocHull.min_dcf_threshold` and :attr:`RocHull.eer_threshold` for what lies
        between them. ``+inf`` means "reject everything".
    """

    value: float
    low: float
    high: float


class MinBayesErrors:
    """Minimum Bayes error-rates at several prior log-odds (thesis eq. 7.42), from hull vertices.

    Attributes
    ----------
    error : ndarray
        ``min_k  p P_miss(k) + (1 - p) P_fa(k)`` with ``p = sigmoid(prior_log_odds)``.
    p_miss, p_fa : ndarray
        Error rates of the optimal vertex.
    n_false_alarms, n_misses : ndarray of int
        Absolute error counts there (for Doddington's rule of 30, thesis appendix B).
    """

    def __init__(self, error, p_miss, p_fa, n_misses, n_false_alarms):
        self.error = error
        self.p_miss = p_miss
        self.p_fa = p_fa
        self.n_misses = n_misses
        self.n_false_alarms = n_false_alarms


class RocHull:
    """The ROC convex hull of one PAV run (thesis sec. 7.3.6).

    What :func:`focal.metrics.rocch` returns, and what every threshold measure of
    :mod:`focal.metrics` reads (``eer(hull)``, ``min_dcf(hull, p_target=0.01)``, ...); the
    estimator :class:`focal.ROCCH` fits one and keeps it as ``hull_``.

    Parameters
    ----------
    pav_result : PAVResult
        Output of :func:`focal.core.pav.pav`.
    trials : SortedTrials, optional
        The sorted trials ``pav_result`` was computed from: the measures of the scores
        themselves (Cllr, actual DCF) then accept the hull in their place, and
        :attr:`eer_threshold` searches every score for the point nearest the EER.

    Attributes
    ----------
    p_miss, p_fa : ndarray, shape (K + 1,)
        Hull vertices (miss and false-alarm rates), from (0, 1) to (1, 0).
    thresholds : ndarray, shape (K + 1,)
        Score threshold of each vertex (accept iff score >= threshold); the last is +inf.
    llr : ndarray, shape (K,)
        Natural-log LLR of each hull segment, equal to the PAV block LLR:
        ``llr[k] = log(delta P_miss / delta P_fa)`` along the segment from vertex k to k + 1, whose
        slope in the (P_fa, P_miss) plane is ``-exp(llr[k])`` (thesis 7.3.6, 7.7.3).
    n_misses, n_false_alarms : ndarray of int64, shape (K + 1,)
        Absolute error counts at each vertex.
    n_targets, n_nontargets : int
        Trial counts.
    pav : PAVResult
        The PAV blocks (and, when kept, the runs of the steppy ROC, ``pav.has_runs``).
    trials : SortedTrials or None
        The sorted trials, when the hull was built from them.
    """

    def __init__(self, pav_result: PAVResult, trials: SortedTrials | None = None):
        self.pav = pav_result
        self.trials = trials
        self.n_targets = pav_result.n_targets
        self.n_nontargets = pav_result.n_nontargets
        self.n_misses = np.concatenate(([0], np.cumsum(pav_result.n_tar)))
        self.n_false_alarms = self.n_nontargets - np.concatenate(([0], np.cumsum(pav_result.n_non)))
        self.p_miss = self.n_misses / self.n_targets
        self.p_fa = self.n_false_alarms / self.n_nontargets
        self.thresholds = np.append(pav_result.score_lo, np.inf)
        self.llr = pav_result.llr

    # -- points where the hull crosses a line through the origin ------------------------
    def _side_of_line(self, alpha: int, beta: int, m=None, f=None) -> np.ndarray:
        """``alpha * misses - beta * false_alarms`` at every vertex (or at the points of counts
        ``m, f``), exact (strictly increasing).
        """
        if m is None:
            m, f = self.n_misses, self.n_false_alarms
        if max(self.n_targets, self.n_nontargets, alpha, beta) < _INT64_SAFE:
            return alpha * m - beta * f
        return np.array([alpha * int(a) - beta * int(b) for a, b in zip(m, f)], dtype=object)

    def crossing_misses(self, alpha: int, beta: int, steppy: bool = False) -> Fraction:
        """Miss count, exact, where the hull meets the line ``alpha misses == beta false_alarms``.

        On the segment from vertex (M0, F0) to (M1, F1), with dM = M1 - M0, dF = F0 - F1, the
        crossing has ``misses = beta (M0 dF + F0 dM) / (alpha dM + beta dF)``. The ROCCH-EER is
        the crossing with ``alpha = N_non``, ``beta = N_tar`` (P_miss = P_fa), the PRBEP the one
        with ``alpha = beta = 1`` (thesis sec. 7.3.7-7.3.8).

        Parameters
        ----------
        alpha, beta : int
            Positive integer weights of the line.
        steppy : bool, default False
            Cross the empirical ROC (its points joined by straight lines, the runs of
            ``pav``) instead of the hull; needs the runs (``pav.has_runs``).

        Returns
        -------
        fractions.Fraction
            The miss count at the crossing (a rational number).
        """
        if steppy:
            self.pav.check_runs("the empirical (steppy) ROC")
            m = np.concatenate(([0], np.cumsum(self.pav.runs_n_tar)))
            f = self.n_nontargets - np.concatenate(([0], np.cumsum(self.pav.runs_n_non)))
        else:
            m, f = self.n_misses, self.n_false_alarms
        diff = self._side_of_line(alpha, beta, m, f)
        k = int(np.argmax(diff >= 0))  # diff[0] = -beta * N_non < 0 and diff[K] > 0
        if diff[k] == 0:
            return Fraction(int(m[k]))
        m0, f0, m1, f1 = int(m[k - 1]), int(f[k - 1]), int(m[k]), int(f[k])
        dm, df = m1 - m0, f0 - f1
        return Fraction(beta * (m0 * df + f0 * dm), alpha * dm + beta * df)

    def _counts_below(self, thresholds):
        """Exact misses and false alarms of "accept iff score >= t" at each threshold ``t``.

        Exact at every score when the hull was built from the trials, and at the run boundaries
        of the empirical ROC (``pav.runs_score_lo``) otherwise.
        """
        if self.trials is not None:
            misses = np.searchsorted(self.trials.tar, thresholds, side="left")
            below_non = np.searchsorted(self.trials.non, thresholds, side="left")
        else:
            idx = np.searchsorted(self.pav.runs_score_lo, thresholds, side="left")
            misses = np.concatenate(([0], np.cumsum(self.pav.runs_n_tar)))[idx]
            below_non = np.concatenate(([0], np.cumsum(self.pav.runs_n_non)))[idx]
        return misses.astype(np.int64), self.n_nontargets - below_non.astype(np.int64)

    # -- score thresholds (where on the raw score scale the optimal decisions fall) --------
    def _threshold_of_vertices(self, optimal: np.ndarray) -> Threshold:
        """:class:`Threshold` of the optimal vertices ``optimal`` (a boolean mask, not empty)."""
        k = np.flatnonzero(optimal)
        return Threshold(
            value=float(self.thresholds[k[0]]),
            low=float(self.thresholds[k[0]]),
            high=float(self.thresholds[k[-1]]),
        )

    def min_dcf_threshold(self, p_target, c_miss=1.0, c_fa=1.0) -> Threshold:
        """Score threshold of the minimum DCF (thesis eq. 7.21): "accept iff score >= value".

        The minimum over thresholds is attained at a hull vertex; hard decisions at
        ``value`` give exactly :func:`focal.metrics.min_dcf`. When several vertices attain it (a
        tie: the Bayes threshold of the operating point equals a segment LLR, or costs exactly
        equal), ``low`` and ``high`` are the lowest and highest optimal thresholds; every
        threshold between ``low`` and ``high`` that is a hull vertex is optimal too, and
        ``value`` is ``low``. Thresholds are on the scale of the scores given (raw scores or
        LLRs).

        Parameters
        ----------
        p_target : float
            Target prior P_target in (0, 1).
        c_miss, c_fa : float, default 1.0
            Costs of a miss and of a false alarm (> 0).

        Returns
        -------
        Threshold
            The optimal threshold and the range of equally optimal ones.
        """
        p = check_probability(p_target, "p_target")
        cm = check_positive(c_miss, "c_miss")
        cf = check_positive(c_fa, "c_fa")
        cost = detection_cost(self.p_miss, self.p_fa, p, cm, cf, False)
        best = cost.min()
        return self._threshold_of_vertices(cost <= best + _TIE_RTOL * max(best, 1e-300))

    @property
    def eer_threshold(self) -> Threshold:
        """Score threshold at the ROCCH-EER (thesis sec. 7.3.7): "accept iff score >= value".

        When the hull crosses P_miss = P_fa at a vertex, ``low == high == value`` and hard
        decisions at ``value`` give P_miss = P_fa = :func:`focal.metrics.eer` exactly. Otherwise
        the crossing lies on the hull segment between two vertices and is reached only by
        randomizing between their thresholds ``low`` and ``high``; ``value`` is then the
        threshold in ``[low, high]`` of the empirical (steppy) ROC point nearest the EER point
        (smallest ``|P_miss - EER| + |P_fa - EER|``), the hard decision closest to the EER
        (searched over every distinct score when the hull has its ``trials``, over the run
        boundaries of the empirical ROC otherwise). If that point lies exactly on the hull,
        hard decisions reproduce the EER and ``low == high == value``.
        """
        segment = self.eer_segment
        if segment is None:
            return self._threshold_of_vertices(
                self._side_of_line(self.n_nontargets, self.n_targets) == 0
            )
        low, high = segment
        if self.trials is None:
            _, _, runs = self.pav.roc_points()
            candidates = runs[(runs >= low) & (runs <= high)]
        else:
            tar, non = self.trials.tar, self.trials.non
            candidates = np.unique(
                np.concatenate(
                    (
                        tar[np.searchsorted(tar, low) : np.searchsorted(tar, high)],
                        non[np.searchsorted(non, low) : np.searchsorted(non, high)],
                        [high],
                    )
                )
            )
        return self.threshold_near_eer(candidates, *self._counts_below(candidates))

    @property
    def eer_segment(self) -> tuple[float, float] | None:
        """``(low, high)``: the thresholds of the two hull vertices between which the hull
        crosses P_miss = P_fa, or None when it crosses at a vertex (:attr:`eer_threshold`).
        """
        diff = self._side_of_line(self.n_nontargets, self.n_targets)
        if (diff == 0).any():
            return None
        k = int(np.argmax(diff > 0))  # diff[0] < 0 < diff[K]: the crossing is on segment k-1, k
        return float(self.thresholds[k - 1]), float(self.thresholds[k])

    def threshold_near_eer(self, candidates, misses, false_alarms) -> Threshold:
        """The rule of :attr:`eer_threshold` between the vertices of :attr:`eer_segment`: of the
        ``candidates`` thresholds (increasing, in that segment) with their exact ``misses`` and
        ``false_alarms`` counts, the first nearest the EER point (smallest
        ``|P_miss - EER| + |P_fa - EER|``); ``low == high == value`` when it reproduces the EER.

        Parameters
        ----------
        candidates : ndarray of float
            Thresholds "accept iff score >= t" inside :attr:`eer_segment`, increasing.
        misses, false_alarms : ndarray of int
            Exact error counts of hard decisions at each candidate.

        Returns
        -------
        Threshold
            The threshold, and the segment's ends when it does not reproduce the EER.
        """
        nt, nn = self.n_targets, self.n_nontargets
        segment = self.eer_segment
        if segment is None:
            raise ValueError("the hull crosses P_miss = P_fa at a vertex: see eer_threshold")
        low, high = segment
        misses = np.asarray(misses, dtype=np.int64)
        false_alarms = np.asarray(false_alarms, dtype=np.int64)
        crossing = self.crossing_misses(nn, nt)
        rate = float(crossing / nt)
        best = int(np.argmin(np.abs(misses / nt - rate) + np.abs(false_alarms / nn - rate)))
        value = float(candidates[best])
        if misses[best] == crossing and int(false_alarms[best]) * nt == crossing * nn:
            return Threshold(value=value, low=value, high=value)
        return Threshold(value=value, low=low, high=high)

    # -- the least Bayes error-rate at many priors -----------------------------------------
    def min_bayes_errors(self, prior_log_odds) -> MinBayesErrors:
        """Minimum Bayes error-rate E_err^min at each prior log-odds (thesis eq. 7.42, sec. 7.6.1).

        The optimal vertex for prior log-odds h lies where the segment LLRs cross the Bayes
        threshold -h, found by binary search in the (increasing) segment LLRs; the neighbouring
        vertices are checked too, so ties are resolved by exact minimization. Error rates are
        unnormalized fractions (divide by ``min(p, 1 - p)`` for the normalized plot, eq. 7.20).
        The curve of :func:`focal.metrics.bayes_error_rates`.

        Parameters
        ----------
        prior_log_odds : float or array_like
            Prior log-odds h in nats (NaN raises ``ValueError``).

        Returns
        -------
        MinBayesErrors
            The minimum error-rates and their parts at each ``h``.
        """
        h = np.asarray(prior_log_odds, dtype=float)
        if np.isnan(h).any():
            raise ValueError("prior_log_odds contains NaN")
        p, q = expit(h), expit(-h)
        k = np.searchsorted(self.llr, -h, side="left")
        last = self.p_miss.size - 1
        cand = np.stack([np.clip(k + d, 0, last) for d in (-1, 0, 1)])
        cost = p * self.p_miss[cand] + q * self.p_fa[cand]
        best = np.take_along_axis(cand, np.argmin(cost, axis=0)[None], axis=0)[0]
        return MinBayesErrors(
            error=np.min(cost, axis=0),
            p_miss=self.p_miss[best],
            p_fa=self.p_fa[best],
            n_misses=self.n_misses[best],
            n_false_alarms=self.n_false_alarms[best],
        )
