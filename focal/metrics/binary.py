"""Binary evaluation measures: Cllr, minCllr, DCF, minDCF, the EERs, PRBEP, AUC, DET and Bayes
error-rate curves, each one function.

Every function takes ``(tar, non)``: the scores (or natural-log LLRs) of the target and of the
non-target trials, as in BOSARIS. sklearn users with ``(scores, labels)`` write
``cllr(*from_labels(scores, labels))``; the reverse slip, ``eer(labels, scores)``, is refused
(:func:`focal.core.validation.check_binary_trials`). Each also takes, in place of the pair
(``non`` omitted, other arguments by keyword), a :class:`BinaryScores` (sorted once), a
:class:`SummarizedScores` (PAV blocks and trial sums of a score set held elsewhere, e.g.
:func:`focal.dask.summarize`) or the result of :func:`rocch` (:mod:`focal.metrics.binary_scores`
says what each must offer): the sort, the PAV and the ROC convex hull then run once, however
many measures are asked.

Inputs are validated before any work: NaN, an empty class, a wrong shape or a prior outside
(0, 1) raise ``ValueError``; +/-inf LLRs are legal (infinite cost when wrong, zero when right).

Threshold-optimized measures share one computation: sort each class once, run PAV once, read
the ROC convex hull's vertices. To get several of them from one run, use :func:`rocch`::

    hull = rocch(tar, non)
    eer(hull), min_dcf(hull, p_target=0.01), min_cllr(hull), prbep(hull), rocch_auc(hull)
    cllr(hull), dcf(hull, p_target=0.01)         # the same sorted trials, no new sort

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`sws2013measures` ("SWS plan").
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.special import expit

from ..core.operating_point import OperatingPoint
from ..core.pav import pav_from_sorted
from ..core.priors import detection_cost
from ..core.rocch import RocHull
from ..core.scoring import normalized_cross_entropy
from ..core.sorted_trials import SortedTrials
from ..core.validation import (
    as_score_array,
    check_positive,
    check_probability,
    split_by_labels,
)
from .binary_scores import _check_pair, as_binary_scores, hull_of, sums_of

__all__ = [
    "from_labels",
    "cross_entropy",
    "cllr",
    "min_cllr",
    "dcf",
    "min_dcf",
    "eer",
    "conventional_eer",
    "prbep",
    "rocch_auc",
    "rocch",
    "pav_llr",
    "det_curve",
    "bayes_error_rates",
    "DETCurve",
    "BayesErrorRates",
]

_LOG2 = np.log(2.0)
_INT64_SAFE = 2**31  # counts below this keep every product of two counts inside int64


def from_labels(scores, labels, pos_label=None):
    """Split ``(scores, labels)`` into the ``(tar, non)`` pair every binary measure takes.

    Parameters
    ----------
    scores : array_like, shape (n_trials,)
        Scores or natural-log LLRs.
    labels : array_like, shape (n_trials,)
        1 / True for target trials, 0 / False for non-target trials; any other two labels with
        ``pos_label`` (focal's label rule, :func:`focal.core.validation.as_binary_labels`).
    pos_label : scalar, optional
        The target label, e.g. ``"genuine"``; required for labels other than 0/1, False/True.

    Returns
    -------
    tar, non : ndarray
        New float64 arrays, each in input order.

    Examples
    --------
    >>> from focal.metrics import cllr, from_labels
    >>> cllr(*from_labels([2.0, -1.0, 0.5], [1, 0, 0]))  # doctest: +ELLIPSIS
    0.5...
    """
    return split_by_labels(scores, labels, pos_label=pos_label)


def _cross_entropy_nats(tar, non, p_target) -> tuple[float, float]:
    """``(p, C_xe in nats)`` of any input (thesis eq. 7.40), ``p`` validated first."""
    p = check_probability(p_target)
    c_t, c_n = sums_of(tar, non).mean_costs(p)
    return p, p * c_t + (1.0 - p) * c_n


def cross_entropy(tar, non=None, p_target=0.5) -> float:
    """Empirical cross-entropy C_xe of natural-log LLRs at target prior ``p_target``, in bits.

    ``C_xe = (p/|T_tar| sum C_log(tar) + (1-p)/|T_non| sum C_log(non)) / log 2`` with the
    logarithmic cost of SWS plan eq. 37 (thesis eqs. 7.39-7.40); SWS plan eq. 38. The all-zero
    (uninformative) system scores the prior entropy (eq. 39).

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / SummarizedScores / RocHull as ``tar`` alone
        Target and non-target LLRs; or, with ``non`` omitted, one object standing for both
        (:mod:`focal.metrics.binary_scores`); a summary needs its sums at ``p_target``.
    p_target : float in (0, 1), default 0.5
        Target prior.

    Returns
    -------
    float
        C_xe in bits (non-negative; the prior entropy for an uninformative system).
    """
    return _cross_entropy_nats(tar, non, p_target)[1] / _LOG2


def cllr(tar, non=None, p_target=0.5) -> float:
    """Normalized cross-entropy: C_xe divided by the prior entropy, in bits per bit.

    An uninformative system (all LLRs 0) scores exactly 1 at every prior; perfect LLRs score
    0; values above 1 mean the LLRs do harm. At ``p_target=0.5`` this is the classical Cllr
    (thesis eq. 7.41); at any prior it is the SWS plan's C_nxe (eq. 40).

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / SummarizedScores / RocHull as ``tar`` alone
        Target and non-target LLRs; or, with ``non`` omitted, one object standing for both
        (:mod:`focal.metrics.binary_scores`); a summary needs its sums at ``p_target``.
    p_target : float in (0, 1), default 0.5
        Target prior.

    Returns
    -------
    float
        Cllr (C_nxe) in bits per bit: 0 for perfect LLRs, 1 for an uninformative system.
    """
    p, xe = _cross_entropy_nats(tar, non, p_target)
    return normalized_cross_entropy(xe, p)


def min_cllr(tar, non=None, p_target=0.5) -> float:
    """Cllr after the optimal monotone recalibration (PAV), in bits per bit like :func:`cllr`.

    The discrimination part of Cllr: the minimum of eq. 7.46 (thesis 7.7.3-7.7.4) normalized by
    the prior entropy, always ``<= 1``; ``cllr - min_cllr`` is the calibration loss. Each PAV
    block contributes its LLR weighted by its class counts.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / SummarizedScores / RocHull as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, one object standing for both
        (:mod:`focal.metrics.binary_scores`), whose PAV is reused.
    p_target : float in (0, 1), default 0.5
        Target prior.

    Returns
    -------
    float
        Minimum Cllr in bits per bit, in [0, 1].
    """
    p = check_probability(p_target)
    return normalized_cross_entropy(hull_of(tar, non).pav.cross_entropy(p), p)


def _operating_point(p_target, c_miss, c_fa, function: str) -> OperatingPoint:
    if p_target is None:
        raise TypeError(f"{function}() missing the argument 'p_target'")
    return OperatingPoint(p_target, c_miss, c_fa)


def dcf(tar, non=None, p_target=None, c_miss=1.0, c_fa=1.0, normalize: bool = True) -> float:
    """Actual detection cost of natural-log LLRs making Bayes decisions.

    Accepts every trial with ``llr >= -logit(P_tar)``, the Bayes threshold of the effective prior
    (thesis eq. 7.13, SWS plan eqs. 23 and 30), and returns
    ``P_target C_miss P_miss + (1 - P_target) C_fa P_fa`` (SWS plan eq. 8, thesis eq. 7.11), divided
    by ``min(P_target C_miss, (1 - P_target) C_fa)`` when ``normalize`` (eqs. 9-10). Normalized
    cost is dimensionless (1 = the best fixed decision); unnormalized, in units of the costs.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / SummarizedScores / RocHull as ``tar`` alone
        Target and non-target LLRs; or, with ``non`` omitted, one object standing for both
        (:mod:`focal.metrics.binary_scores`); a summary needs its sums at the Bayes threshold
        (:func:`focal.bayes_threshold` of the operating point).
    p_target : float in (0, 1)
        Target prior (required).
    c_miss, c_fa : float > 0, default 1
        Costs of a miss and of a false alarm.
    normalize : bool, default True
        Divide by the cost of the best fixed decision.

    Returns
    -------
    float
        The actual DCF: dimensionless when ``normalize``, else in units of the costs.
    """
    _check_pair(tar, non)  # a misplaced argument before the parameters' checks
    op = _operating_point(p_target, c_miss, c_fa, "dcf")
    scores = sums_of(tar, non)
    n_mis, n_fa = scores.error_counts(np.array([op.bayes_threshold]))
    p_miss, p_fa = n_mis[0] / scores.n_targets, n_fa[0] / scores.n_nontargets
    return float(op.detection_cost(p_miss, p_fa, normalize))


def min_dcf(tar, non=None, p_target=None, c_miss=1.0, c_fa=1.0, normalize: bool = True) -> float:
    """Minimum detection cost over all score thresholds, from the ROC convex hull's vertices.

    ``min_k P_target C_miss P_miss(k) + (1 - P_target) C_fa P_fa(k)`` over the hull vertices:
    thesis eq. 7.21 (minimum over the discrete ROC, equal to the minimum over the hull,
    eq. 7.25); normalized as in :func:`dcf` (SWS plan eqs. 8-10). Always ``<= dcf`` and
    ``<= 1``. Where it is attained: :meth:`focal.core.RocHull.min_dcf_threshold`.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / SummarizedScores / RocHull as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, one object standing for both
        (:mod:`focal.metrics.binary_scores`), whose hull is reused.
    p_target : float in (0, 1)
        Target prior (required).
    c_miss, c_fa : float > 0, default 1
        Costs of a miss and of a false alarm.
    normalize : bool, default True
        Divide by the cost of the best fixed decision.

    Returns
    -------
    float
        The minimum DCF (thesis eq. 7.21): dimensionless and ``<= 1`` when ``normalize``, else
        in units of the costs.
    """
    _check_pair(tar, non)
    if p_target is None:
        raise TypeError("min_dcf() missing the argument 'p_target'")
    p = check_probability(p_target, "p_target")
    cm = check_positive(c_miss, "c_miss")
    cf = check_positive(c_fa, "c_fa")
    hull = hull_of(tar, non)
    return float(np.min(detection_cost(hull.p_miss, hull.p_fa, p, cm, cf, normalize)))


def eer(tar, non=None) -> float:
    """ROCCH equal-error-rate: where the ROC convex hull crosses P_miss = P_fa (thesis 7.3.7).

    A fraction in [0, 0.5], exact to the last bit (rational arithmetic on the vertex counts);
    equals the maximum over priors of the minimum Bayes error-rate (thesis eq. 7.32). The score
    threshold there: :attr:`focal.core.RocHull.eer_threshold`.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / SummarizedScores / RocHull as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, one object standing for both
        (:mod:`focal.metrics.binary_scores`), whose hull is reused.

    Returns
    -------
    float
        The ROCCH-EER, a fraction in [0, 0.5].
    """
    hull = hull_of(tar, non)
    return float(hull.crossing_misses(hull.n_nontargets, hull.n_targets) / hull.n_targets)


def conventional_eer(tar, non=None) -> float:
    """Conventional EER: where the *empirical* ROC, its points joined by straight lines, crosses
    P_miss = P_fa; a fraction.

    The definition of many papers and toolkits (e.g. scikit-learn's ``roc_curve`` with linear
    interpolation of the crossing). It is never below the ROCCH-EER (:func:`eer`, thesis sec.
    7.3.7), which interpolates along the convex hull instead: the hull is the best a monotone
    recalibration of the scores can reach, the empirical ROC what these scores reach with one
    threshold. The two agree when the crossing lies on the hull. Exact (rational arithmetic on
    the counts).

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / SummarizedScores / RocHull as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, one object standing for both
        (:mod:`focal.metrics.binary_scores`) that knows the runs of the empirical ROC (the
        trials, or a summary made with ``keep_runs=True``).

    Returns
    -------
    float
        The conventional EER, a fraction in [0, 0.5].
    """
    hull = hull_of(tar, non)
    crossing = hull.crossing_misses(hull.n_nontargets, hull.n_targets, steppy=True)
    return float(crossing / hull.n_targets)


def prbep(tar, non=None) -> float:
    """Precision-recall break-even point on the ROC convex hull (thesis sec. 7.3.8).

    The hull point where the *numbers* of misses and false alarms are equal (the EER equates
    their rates), and there precision = recall: PRBEP is that common value,
    ``1 - M / N_tar`` for the (usually fractional) error count ``M`` read off the hull. The
    thesis recommends quoting ``M`` itself beside it, to compare detectors on the same database
    and to see when errors run out: ``n_targets * (1 - prbep)``.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / SummarizedScores / RocHull as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, one object standing for both
        (:mod:`focal.metrics.binary_scores`), whose hull is reused.

    Returns
    -------
    float
        Precision = recall at the break-even point, a fraction in [0, 1].
    """
    hull = hull_of(tar, non)
    return float(1 - hull.crossing_misses(1, 1) / hull.n_targets)


def rocch_auc(tar, non=None) -> float:
    """Area under the ROC convex hull, P_detect = 1 - P_miss against P_fa (dimensionless).

    The hull's AUC is at least the Mann-Whitney AUC of the steppy ROC (it interpolates the
    optimal way); both are 1 for separated scores and the hull's is at least 0.5. Exact
    (rational arithmetic on the vertex counts).

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / SummarizedScores / RocHull as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, one object standing for both
        (:mod:`focal.metrics.binary_scores`), whose hull is reused.

    Returns
    -------
    float
        The area, in [0.5, 1].
    """
    hull = hull_of(tar, non)
    m, f = hull.n_misses, hull.n_false_alarms
    nt, nn = hull.n_targets, hull.n_nontargets
    # sum over segments of  dF * (2 Nt - M_k - M_{k+1}) / (2 Nt Nn)   (trapezoids)
    if max(nt, nn) < _INT64_SAFE:
        twice = int(np.sum((f[:-1] - f[1:]) * (2 * nt - m[:-1] - m[1:])))
    else:
        twice = sum(
            (int(a) - int(b)) * (2 * nt - int(c) - int(d))
            for a, b, c, d in zip(f[:-1], f[1:], m[:-1], m[1:])
        )
    return float(Fraction(twice, 2 * nt * nn))


def rocch(tar, non=None) -> RocHull:
    """ROC convex hull of the scores: one sort and one PAV shared by every threshold measure.

    Returns a :class:`focal.core.RocHull` with the hull vertices (``p_miss``, ``p_fa``), their
    score ``thresholds``, the segment ``llr`` (thesis 7.3.6), and the thresholds where the EER
    and the minimum DCF fall. Every measure of this module takes the result in place of
    ``(tar, non)`` and reuses it.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / SummarizedScores / RocHull as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, one object standing for both
        (:mod:`focal.metrics.binary_scores`).

    Returns
    -------
    focal.core.RocHull
        The hull (thesis 7.3.6), reusable in place of ``(tar, non)`` by every measure here.
    """
    return hull_of(tar, non)


def pav_llr(scores, labels, pos_label=None) -> np.ndarray:
    """PAV log-likelihood-ratio (natural log) of every trial, in the input order.

    ``labels``: 0/1 or False/True (1 = target), or any two labels with ``pos_label`` (focal's
    label rule, :func:`focal.core.validation.as_binary_labels`).

    The optimal monotone score -> LLR map on these trials (thesis eqs. 7.47-7.51 and C.20):
    independent of any prior and of the proper scoring rule; tied scores always get the same
    value; ``-inf`` / ``+inf`` for the lowest / highest blocks when those hold only one class.
    ``cllr`` of the result equals :func:`min_cllr`.

    Parameters
    ----------
    scores : array_like of shape (n_trials,)
        Scores of all trials (NaN raises ``ValueError``).
    labels : array_like of shape (n_trials,)
        Class of each trial: 1 / True for targets, 0 / False for non-targets, or any two
        labels with ``pos_label``.
    pos_label : scalar, optional
        The target label, required for labels other than 0/1 and False/True.

    Returns
    -------
    ndarray of shape (n_trials,)
        The PAV LLR of each trial in nats, in input order (may be +/-inf).
    """
    s = as_score_array(scores, "scores")
    t, n = split_by_labels(s, labels, pos_label=pos_label)  # fresh arrays: sorted in place
    t.sort()
    n.sort()
    result = pav_from_sorted(SortedTrials(t, n))
    return result.llr[result.block_index(s)]


@dataclass(frozen=True)
class DETCurve:
    """Points of a DET / ROC curve: false-alarm and miss rates (fractions) and score thresholds.

    Point ``i`` is the operating point "accept iff score >= thresholds[i]"; ``p_fa`` decreases
    and ``p_miss`` increases along the arrays. Plot ``probit(p_fa)`` against ``probit(p_miss)``
    for a DET.

    Attributes
    ----------
    p_fa, p_miss : ndarray
        False-alarm and miss rates of each point, fractions in [0, 1].
    thresholds : ndarray
        The score threshold of each point (the last may be +inf).
    """

    p_fa: np.ndarray
    p_miss: np.ndarray
    thresholds: np.ndarray


def det_curve(tar, non=None, convex_hull: bool = False) -> DETCurve:
    """DET curve points: the steppy empirical ROC (thesis 7.3.4-7.3.5), or its convex hull.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / SummarizedScores / RocHull as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, one object standing for both
        (:mod:`focal.metrics.binary_scores`); the steppy curve needs the runs of the empirical
        ROC (the trials, or a summary made with ``keep_runs=True``).
    convex_hull : bool, default False
        False: every distinct operating point of the empirical ROC (points inside a run of one
        label, which lie on a straight step, are omitted). True: the hull vertices (thesis
        7.3.6).

    Returns
    -------
    DETCurve
        The operating points, by decreasing false-alarm rate.
    """
    hull = hull_of(tar, non)
    if convex_hull:
        return DETCurve(hull.p_fa, hull.p_miss, hull.thresholds)
    hull.pav.check_runs("the steppy DET curve (convex_hull=False)")
    return DETCurve(*hull.pav.roc_points())


@dataclass(frozen=True)
class BayesErrorRates:
    """Actual and minimum Bayes error-rates at many prior log-odds (thesis 7.3.1, 7.6).

    Attributes
    ----------
    prior_log_odds : ndarray
        h = logit of the effective prior; the Bayes threshold on the LLRs is -h.
    actual, minimum : ndarray
        E_err(h) = p P_miss + (1 - p) P_fa with p = sigmoid(h), for Bayes decisions on the LLRs
        (eq. 7.18) and at the optimal threshold (eq. 7.42). Unnormalized fractions.
    actual_p_miss, actual_p_fa, min_p_miss, min_p_fa : ndarray
        The error rates behind them.
    min_n_misses, min_n_false_alarms : ndarray of int
        Absolute error counts at the optimal threshold (Doddington's rule of 30, appendix B).
    n_targets, n_nontargets : int
        Trial counts.
    """

    prior_log_odds: np.ndarray
    actual: np.ndarray
    minimum: np.ndarray
    actual_p_miss: np.ndarray
    actual_p_fa: np.ndarray
    min_p_miss: np.ndarray
    min_p_fa: np.ndarray
    min_n_misses: np.ndarray
    min_n_false_alarms: np.ndarray
    n_targets: int
    n_nontargets: int

    @property
    def default(self) -> np.ndarray:
        """Bayes error-rate of the default system (all LLRs 0): ``min(p, 1 - p)`` (eq. 7.20)."""
        h = self.prior_log_odds
        return np.minimum(expit(h), expit(-h))

    @property
    def actual_normalized(self) -> np.ndarray:
        """Actual error-rate over the default's: the normalized Bayes error-rate (eq. 7.20)."""
        return self.actual / self.default

    @property
    def minimum_normalized(self) -> np.ndarray:
        """Minimum error-rate divided by the default's (eqs. 7.20, 7.43); never above 1."""
        return self.minimum / self.default


def bayes_error_rates(tar, non=None, prior_log_odds=None) -> BayesErrorRates:
    """Actual and minimum Bayes error-rate at many prior log-odds at once (thesis sec. 7.6.1).

    The fast way: the two classes are sorted once; the actual error-rates at all Bayes thresholds
    ``-h`` come from binary search of the thresholds in the sorted scores (the joint sort), and the
    minimum ones from the hull vertices of one PAV run. Data for APE (thesis 7.7.4) and
    normalized Bayes error-rate plots (7.6). Decisions accept ``llr >= -h``.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / SummarizedScores / RocHull as ``tar`` alone
        Target and non-target LLRs; or, with ``non`` omitted, one object standing for both
        (:mod:`focal.metrics.binary_scores`); a summary needs its sums at every ``-h``.
    prior_log_odds : array_like
        Values of h = logit(effective prior), in nats (required).

    Returns
    -------
    BayesErrorRates
        Actual (eq. 7.18) and minimum (eq. 7.42) Bayes error-rates, fractions, one per ``h``.
    """
    _check_pair(tar, non)
    if prior_log_odds is None:
        raise TypeError("bayes_error_rates() missing the argument 'prior_log_odds'")
    h = as_score_array(np.atleast_1d(prior_log_odds), "prior_log_odds", allow_inf=True)
    scores = as_binary_scores(tar, non)
    n_mis, n_fa = scores.error_counts(-h)
    nt, nn = scores.n_targets, scores.n_nontargets
    best = scores.hull.min_bayes_errors(h)
    return BayesErrorRates(
        prior_log_odds=h,
        actual=expit(h) * (n_mis / nt) + expit(-h) * (n_fa / nn),
        minimum=best.error,
        actual_p_miss=n_mis / nt,
        actual_p_fa=n_fa / nn,
        min_p_miss=best.p_miss,
        min_p_fa=best.p_fa,
        min_n_misses=best.n_misses,
        min_n_false_alarms=best.n_false_alarms,
        n_targets=nt,
        n_nontargets=nn,
    )
