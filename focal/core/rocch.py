"""ROCCH: the convex hull of the empirical ROC, read off the PAV blocks (thesis sec. 7.3.6-7.3.8).

The vertices of the ROC convex hull are the boundaries of the PAV blocks and the LLR of each
hull segment is the PAV LLR of its block (thesis 7.7.3, [69]). Every threshold-optimized measure
(minDCF, ROCCH-EER, PRBEP, the minimum Bayes error-rate curve) is therefore a cheap computation
on the few hull vertices; nothing here touches the trials again.

Vertex ``k`` (``k = 0..K``) is the operating point "accept iff score >= thresholds[k]": the
first ``k`` PAV blocks are rejected. Vertex 0 accepts everything (P_miss = 0, P_fa = 1), vertex K
rejects everything (P_miss = 1, P_fa = 0). Error rates are fractions in [0, 1].

References
----------
.. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
   extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.special import expit

from .pav import PAVResult
from .priors import detection_cost
from .scoring import normalized_cross_entropy
from .sorted_trials import SortedTrials
from .validation import check_positive, check_probability

__all__ = ["ROCCH", "MinBayesErrors", "Threshold"]

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
        see :meth:`ROCCH.min_dcf_threshold` and :attr:`ROCCH.eer_threshold` for what lies
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
        Error rates of the optimal vertex (``pmiss`` / ``pfa``: deprecated names).
    n_false_alarms, n_misses : ndarray of int
        Absolute error counts there (for Doddington's rule of 30, thesis appendix B).
    """

    def __init__(self, error, p_miss, p_fa, n_misses, n_false_alarms):
        self.error = error
        self.p_miss = p_miss
        self.p_fa = p_fa
        self.n_misses = n_misses
        self.n_false_alarms = n_false_alarms


class ROCCH:
    """ROC convex hull of one PAV run.

    The computation behind :func:`focal.metrics.rocch`; the scikit-learn estimator of the same
    name, :class:`focal.ROCCH`, fits one from ``(scores, labels)`` and keeps it as ``hull_``.

    Parameters
    ----------
    pav_result : PAVResult
        Output of :func:`focal.core.pav.pav`.
    trials : SortedTrials, optional
        The sorted trials ``pav_result`` was computed from; only :attr:`eer_threshold` uses
        them (to find the empirical operating point nearest the EER between hull vertices).

    Attributes
    ----------
    p_miss, p_fa : ndarray, shape (K + 1,)
        Hull vertices (miss and false-alarm rates), from (0, 1) to (1, 0); ``pmiss`` / ``pfa``
        are deprecated names.
    thresholds : ndarray, shape (K + 1,)
        Score threshold of each vertex (accept iff score >= threshold); the last is +inf.
    llr : ndarray, shape (K,)
        Natural-log LLR of each hull segment, equal to the PAV block LLR:
        ``llr[k] = log(delta P_miss / delta P_fa)`` along the segment from vertex k to k + 1, whose
        slope in the (P_fa, P_miss) plane is ``-exp(llr[k])`` (thesis 7.3.6, 7.7.3).
    n_misses, n_false_alarms : ndarray of int64, shape (K + 1,)
        Absolute error counts at each vertex.
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

    def _crossing_misses(self, alpha: int, beta: int, m=None, f=None) -> Fraction:
        """Miss count (exact rational) where the hull meets ``alpha misses == beta false_alarms``.

        On the segment from vertex (M0, F0) to (M1, F1), with dM = M1 - M0, dF = F0 - F1, the
        crossing has ``misses = beta (M0 dF + F0 dM) / (alpha dM + beta dF)``. With ``m, f``
        (the counts of another monotone chain of points, e.g. the steppy ROC), its crossing.
        """
        if m is None:
            m, f = self.n_misses, self.n_false_alarms
        diff = self._side_of_line(alpha, beta, m, f)
        k = int(np.argmax(diff >= 0))  # diff[0] = -beta * N_non < 0 and diff[K] > 0
        if diff[k] == 0:
            return Fraction(int(m[k]))
        m0, f0, m1, f1 = int(m[k - 1]), int(f[k - 1]), int(m[k]), int(f[k])
        dm, df = m1 - m0, f0 - f1
        return Fraction(beta * (m0 * df + f0 * dm), alpha * dm + beta * df)

    @property
    def eer(self) -> float:
        """ROCCH-EER: the rate where the hull crosses P_miss = P_fa (thesis sec. 7.3.7).

        Equals the maximum over priors of the minimum Bayes error-rate (eq. 7.32). A fraction
        in [0, 0.5], exact to the last bit (rational arithmetic on the vertex counts).
        """
        return float(self._crossing_misses(self.n_nontargets, self.n_targets) / self.n_targets)

    @property
    def conventional_eer(self) -> float:
        """Conventional (non-hull) EER: where the *empirical* ROC, its points joined by straight
        lines, crosses P_miss = P_fa; a fraction.

        The definition of many papers and toolkits (e.g. scikit-learn's ``roc_curve`` with
        linear interpolation of the crossing). It is never below the ROCCH-EER
        (:attr:`eer`, thesis sec. 7.3.7), which interpolates along the convex hull instead: the
        hull is the best a monotone recalibration of the scores can reach, the empirical ROC
        what these scores reach with one threshold. The two agree when the crossing point lies
        on the hull. Exact (rational arithmetic on the counts).
        """
        m = np.concatenate(([0], np.cumsum(self.pav.runs_n_tar)))
        f = self.n_nontargets - np.concatenate(([0], np.cumsum(self.pav.runs_n_non)))
        crossing = self._crossing_misses(self.n_nontargets, self.n_targets, m, f)
        return float(crossing / self.n_targets)

    @property
    def prbep(self) -> float:
        """Precision-recall break-even point: the number of misses (= number of false alarms)
        where the hull crosses misses = false alarms, an absolute error count, usually not an
        integer (thesis sec. 7.3.8).
        """
        return float(self._crossing_misses(1, 1))

    @property
    def auc(self) -> float:
        """Area under the ROC convex hull, P_detect = 1 - P_miss against P_fa (dimensionless).

        The hull AUC is >= the Mann-Whitney AUC of the steppy ROC (it interpolates the optimal
        way); both are 1 for separated scores and the hull AUC is >= 0.5 always.
        """
        m, f = self.n_misses, self.n_false_alarms
        nt, nn = self.n_targets, self.n_nontargets
        # sum over segments of  dF * (2 Nt - M_k - M_{k+1}) / (2 Nt Nn)   (trapezoids)
        if max(nt, nn) < _INT64_SAFE:
            twice = int(np.sum((f[:-1] - f[1:]) * (2 * nt - m[:-1] - m[1:])))
        else:
            twice = sum(
                (int(a) - int(b)) * (2 * nt - int(c) - int(d))
                for a, b, c, d in zip(f[:-1], f[1:], m[:-1], m[1:])
            )
        return float(Fraction(twice, 2 * nt * nn))

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
        ``value`` give exactly :meth:`min_dcf`. When several vertices attain it (a tie: the
        Bayes threshold of the operating point equals a segment LLR, or costs exactly equal),
        ``low`` and ``high`` are the lowest and highest optimal thresholds; every threshold
        between ``low`` and ``high`` that is a hull vertex is optimal too, and ``value`` is
        ``low``. Thresholds are on the scale of the scores given (raw scores or LLRs).

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
        decisions at ``value`` give P_miss = P_fa = :attr:`eer` exactly. Otherwise the crossing
        lies on the hull segment between two vertices and is reached only by randomizing between
        their thresholds ``low`` and ``high``; ``value`` is then the threshold in ``[low, high]``
        of the empirical (steppy) ROC point nearest the EER point (smallest
        ``|P_miss - EER| + |P_fa - EER|``), the hard decision closest to the EER (searched over
        every distinct score when the hull has its ``trials``, over the run boundaries of the
        empirical ROC otherwise). If that point lies exactly on the hull,
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
        rate = self.eer
        best = int(np.argmin(np.abs(misses / nt - rate) + np.abs(false_alarms / nn - rate)))
        value = float(candidates[best])
        crossing = self._crossing_misses(nn, nt)
        if misses[best] == crossing and int(false_alarms[best]) * nt == crossing * nn:
            return Threshold(value=value, low=value, high=value)
        return Threshold(value=value, low=low, high=high)

    # -- operating points ----------------------------------------------------------------
    def min_dcf(self, p_target, c_miss=1.0, c_fa=1.0, normalize: bool = True) -> float:
        """Minimum detection cost over all thresholds (thesis eq. 7.21, 7.25).

        ``min_k  P_target C_miss P_miss(k) + (1 - P_target) C_fa P_fa(k)`` over the hull
        vertices; with ``normalize=True`` divided by the default cost
        ``min(P_target C_miss, (1 - P_target) C_fa)`` (SWS plan eqs. 8-10), so 1 is the cost of the
        best fixed decision. In units of the costs when not normalized.

        Parameters
        ----------
        p_target : float
            Target prior P_target in (0, 1).
        c_miss, c_fa : float, default 1.0
            Costs of a miss and of a false alarm (> 0).
        normalize : bool, default True
            Divide by the cost of the best fixed decision.

        Returns
        -------
        float
            The minimum detection cost.
        """
        p = check_probability(p_target, "p_target")
        cm = check_positive(c_miss, "c_miss")
        cf = check_positive(c_fa, "c_fa")
        return float(np.min(detection_cost(self.p_miss, self.p_fa, p, cm, cf, normalize)))

    def min_bayes_errors(self, prior_log_odds) -> MinBayesErrors:
        """Minimum Bayes error-rate E_err^min at each prior log-odds (thesis eq. 7.42, sec. 7.6.1).

        The optimal vertex for prior log-odds h lies where the segment LLRs cross the Bayes
        threshold -h, found by binary search in the (increasing) segment LLRs; the neighbouring
        vertices are checked too, so ties are resolved by exact minimization. Error rates are
        unnormalized fractions (divide by ``min(p, 1 - p)`` for the normalized plot, eq. 7.20).

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

    def min_cllr(self, p_target=0.5) -> float:
        """Cllr after optimal monotone recalibration (PAV), in bits, normalized by the prior
        entropy like :func:`focal.metrics.cllr` (thesis sec. 7.7.4, eq. 7.46).

        Parameters
        ----------
        p_target : float, default 0.5
            Target prior in (0, 1).

        Returns
        -------
        float
            minCllr in bits per bit, in [0, 1].
        """
        p = check_probability(p_target, "p_target")
        return normalized_cross_entropy(self.pav.cross_entropy(p), p)

    def det_points(self):
        """Hull vertices as ``(pfa, pmiss)`` arrays, ready for a (probit-scaled) DET plot.

        Returns
        -------
        pfa, pmiss : ndarray
            Copies of the vertices' false-alarm and miss rates (fractions).
        """
        return self.p_fa.copy(), self.p_miss.copy()
