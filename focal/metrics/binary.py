"""Binary evaluation measures: Cllr, minCllr, DCF, minDCF, EER, DET and Bayes error-rate curves.

Every function takes ``(tar, non)``: the scores (or natural-log LLRs) of the target trials and of
the non-target trials, as in BOSARIS. sklearn users with ``(scores, labels)`` write
``cllr(*from_labels(scores, labels))``. Each also takes, in place of the pair, a
:class:`BinaryScores` or the result of :func:`rocch` (``non`` omitted, other arguments by
keyword): the scores are then validated and sorted once and the PAV / ROCCH run once, however
many measures are asked (:func:`as_binary_scores`).

Inputs are validated before any work: NaN, an empty class, a wrong shape or a prior outside
(0, 1) raise ``ValueError``; +/-inf LLRs are legal (infinite cost when wrong, zero when right).

Threshold-optimized measures share one computation: sort each class once, run PAV once, read
the ROCCH vertices. To get several of them from one run, use :func:`rocch`::

    hull = rocch(tar, non)
    hull.eer, hull.min_dcf(0.01), hull.min_cllr(), hull.prbep, hull.auc
    eer(hull), min_dcf(hull, p_target=0.01), cllr(hull)        # the same run, no new sort
"""

from __future__ import annotations

import numpy as np

from ..core.pav import pav_from_sorted
from ..core.priors import detection_cost, effective_log_odds
from ..core.rocch import ROCCH
from ..core.scoring import cross_entropy_nats, normalized_cross_entropy
from ..core.sorted_trials import SortedTrials
from ..core.validation import (
    as_score_array,
    check_positive,
    check_probability,
    split_by_labels,
)
from .binary_scores import (
    BayesErrorRates,
    DETCurve,
    _check_pair,
    _required,
    _score_arrays,
    as_binary_scores,
)

__all__ = [
    "from_labels",
    "cross_entropy",
    "cllr",
    "min_cllr",
    "dcf",
    "min_dcf",
    "eer",
    "rocch",
    "pav_llr",
    "det_curve",
    "bayes_error_rates",
]

_LOG2 = np.log(2.0)


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


def cross_entropy(tar, non=None, p_target=0.5) -> float:
    """Empirical cross-entropy C_xe of natural-log LLRs at target prior ``p_target``, in bits.

    ``C_xe = (p/|T_tar| sum C_log(tar) + (1-p)/|T_non| sum C_log(non)) / log 2`` with the
    logarithmic cost of SWS plan eq. 37 (thesis eqs. 7.39-7.40); SWS plan eq. 38. The all-zero
    (uninformative) system scores the prior entropy (eq. 39).

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / ROCCH as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, a :class:`BinaryScores` or the
        result of :func:`rocch` of them, whose sort (and PAV) is reused, not redone.
    p_target : float in (0, 1), default 0.5
        Target prior.

    Returns
    -------
    float
        C_xe in bits (non-negative; the prior entropy for an uninformative system).
    """
    p = check_probability(p_target)
    t, n = _score_arrays(tar, non)
    return cross_entropy_nats(t, n, p) / _LOG2


def cllr(tar, non=None, p_target=0.5) -> float:
    """Normalized cross-entropy: C_xe divided by the prior entropy, in bits per bit.

    An uninformative system (all LLRs 0) scores exactly 1 at every prior; perfect LLRs score
    0; values above 1 mean the LLRs do harm. At ``p_target=0.5`` this is the classical Cllr
    (thesis eq. 7.41); at any prior it is the SWS plan's C_nxe (eq. 40).

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / ROCCH as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, a :class:`BinaryScores` or the
        result of :func:`rocch` of them, whose sort (and PAV) is reused, not redone.
    p_target : float in (0, 1), default 0.5
        Target prior.

    Returns
    -------
    float
        Cllr (C_nxe) in bits per bit: 0 for perfect LLRs, 1 for an uninformative system.
    """
    p = check_probability(p_target)
    t, n = _score_arrays(tar, non)
    return normalized_cross_entropy(cross_entropy_nats(t, n, p), p)


def min_cllr(tar, non=None, p_target=0.5) -> float:
    """Cllr after the optimal monotone recalibration (PAV), in bits per bit like :func:`cllr`.

    The discrimination part of Cllr: the minimum of eq. 7.46 (thesis 7.7.3-7.7.4) normalized by
    the prior entropy, always ``<= 1``; ``cllr - min_cllr`` is the calibration loss.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / ROCCH as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, a :class:`BinaryScores` or the
        result of :func:`rocch` of them, whose sort (and PAV) is reused, not redone.
    p_target : float in (0, 1), default 0.5
        Target prior.

    Returns
    -------
    float
        Minimum Cllr in bits per bit, in [0, 1].
    """
    p = check_probability(p_target)
    return rocch(tar, non).min_cllr(p)


def dcf(tar, non=None, p_target=None, c_miss=1.0, c_fa=1.0, normalize: bool = True) -> float:
    """Actual detection cost of natural-log LLRs making Bayes decisions.

    Accepts every trial with ``llr >= -logit(P_tar)``, the Bayes threshold of the effective prior
    (thesis eq. 7.13, SWS plan eqs. 23 and 30), and returns
    ``P_target C_miss P_miss + (1 - P_target) C_fa P_fa`` (SWS plan eq. 8, thesis eq. 7.11), divided
    by ``min(P_target C_miss, (1 - P_target) C_fa)`` when ``normalize`` (eqs. 9-10). Normalized
    cost is dimensionless (1 = the best fixed decision); unnormalized, in units of the costs.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / ROCCH as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, a :class:`BinaryScores` or the
        result of :func:`rocch` of them, whose sort (and PAV) is reused, not redone.
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
    if _check_pair(tar, non):
        return as_binary_scores(tar).dcf(_required(p_target, "dcf"), c_miss, c_fa, normalize)
    t, n = _score_arrays(tar, non)
    p = check_probability(_required(p_target, "dcf"))
    cm = check_positive(c_miss, "c_miss")
    cf = check_positive(c_fa, "c_fa")
    thr = -effective_log_odds(p, cm, cf)
    p_miss = np.count_nonzero(t < thr) / t.size
    p_fa = np.count_nonzero(n >= thr) / n.size
    return float(detection_cost(p_miss, p_fa, p, cm, cf, normalize))


def min_dcf(tar, non=None, p_target=None, c_miss=1.0, c_fa=1.0, normalize: bool = True) -> float:
    """Minimum detection cost over all score thresholds, from the ROCCH vertices.

    Thesis eq. 7.21 (minimum over the discrete ROC, equal to the minimum over the hull, eq. 7.25);
    normalized as in :func:`dcf` (SWS plan eqs. 8-10). Always ``<= dcf`` and ``<= 1``.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / ROCCH as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, a :class:`BinaryScores` or the
        result of :func:`rocch` of them, whose sort (and PAV) is reused, not redone.
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
    p = check_probability(_required(p_target, "min_dcf"))
    cm = check_positive(c_miss, "c_miss")
    cf = check_positive(c_fa, "c_fa")
    return rocch(tar, non).min_dcf(p, cm, cf, normalize)


def eer(tar, non=None) -> float:
    """ROCCH equal-error-rate: where the ROC convex hull crosses P_miss = P_fa (thesis 7.3.7).

    A fraction in [0, 0.5]; equals the maximum over priors of the minimum Bayes error-rate
    (thesis eq. 7.32).

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / ROCCH as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, a :class:`BinaryScores` or the
        result of :func:`rocch` of them, whose sort (and PAV) is reused, not redone.

    Returns
    -------
    float
        The ROCCH-EER, a fraction in [0, 0.5].
    """
    return rocch(tar, non).eer


def rocch(tar, non=None) -> ROCCH:
    """ROC convex hull of the scores: one sort and one PAV shared by every threshold measure.

    Returns a :class:`focal.core.ROCCH` with the hull vertices (``p_miss``, ``p_fa``), their score
    ``thresholds``, the segment ``llr`` (thesis 7.3.6), ``eer`` (7.3.7), ``prbep`` (7.3.8, an error
    count), ``auc``, and the methods ``min_dcf``, ``min_cllr`` and ``min_bayes_errors``. Every
    measure of this module takes the result in place of ``(tar, non)`` and reuses it.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / ROCCH as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, a :class:`BinaryScores` or the
        result of :func:`rocch` of them, whose sort (and PAV) is reused, not redone.

    Returns
    -------
    focal.core.ROCCH
        The hull (thesis 7.3.6), reusable in place of ``(tar, non)`` by every measure here.
    """
    return as_binary_scores(tar, non).hull


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

    References
    ----------
    .. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
       extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
    """
    s = as_score_array(scores, "scores")
    t, n = split_by_labels(s, labels, pos_label=pos_label)  # fresh arrays: sorted in place
    t.sort()
    n.sort()
    result = pav_from_sorted(SortedTrials(t, n))
    return result.llr[result.block_index(s)]


def det_curve(tar, non=None, convex_hull: bool = False) -> DETCurve:
    """DET curve points: the steppy empirical ROC (thesis 7.3.4-7.3.5), or its convex hull.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / ROCCH as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, a :class:`BinaryScores` or the
        result of :func:`rocch` of them, whose sort (and PAV) is reused, not redone.
    convex_hull : bool, default False
        False: every distinct operating point of the empirical ROC (points inside a run of one
        label, which lie on a straight step, are omitted). True: the ROCCH vertices (thesis 7.3.6).

    Returns
    -------
    DETCurve
        The operating points, by decreasing false-alarm rate.

    References
    ----------
    .. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
       extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
    """
    return as_binary_scores(tar, non).det_curve(convex_hull)


def bayes_error_rates(tar, non=None, prior_log_odds=None) -> BayesErrorRates:
    """Actual and minimum Bayes error-rate at many prior log-odds at once (thesis sec. 7.6.1).

    The fast way: the two classes are sorted once; the actual error-rates at all Bayes thresholds
    ``-h`` come from binary search of the thresholds in the sorted scores (the joint sort), and the
    minimum ones from the ROCCH vertices of one PAV run. Data for APE (thesis 7.7.4) and
    normalized Bayes error-rate plots (7.6). Decisions accept ``llr >= -h``.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / ROCCH as ``tar`` alone
        Target and non-target scores; or, with ``non`` omitted, a :class:`BinaryScores` or the
        result of :func:`rocch` of them, whose sort (and PAV) is reused, not redone.
    prior_log_odds : array_like
        Values of h = logit(effective prior), in nats (required).

    Returns
    -------
    BayesErrorRates
        Actual (eq. 7.18) and minimum (eq. 7.42) Bayes error-rates, fractions, one per ``h``.
    """
    _check_pair(tar, non)
    h = _required(prior_log_odds, "bayes_error_rates", "prior_log_odds")
    return as_binary_scores(tar, non).bayes_error_rates(h)
