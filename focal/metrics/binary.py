"""Binary evaluation measures: Cllr, minCllr, DCF, minDCF, EER, DET and Bayes error-rate curves.

Every function takes ``(tar, non)``: the scores (or natural-log LLRs) of the target trials and of
the non-target trials, as in BOSARIS. sklearn users with ``(scores, labels)`` write
``cllr(*from_labels(scores, labels))``.

Inputs are validated before any work: NaN, an empty class, a wrong shape or a prior outside
(0, 1) raise ``ValueError``; +/-inf LLRs are legal (infinite cost when wrong, zero when right).

Threshold-optimized measures share one computation: sort each class once, run PAV once, read
the ROCCH vertices. To get several of them from one run, use :func:`rocch`::

    hull = rocch(tar, non)
    hull.eer, hull.min_dcf(0.01), hull.min_cllr(), hull.prbep, hull.auc

References
----------
.. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
   extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
.. [2] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
   Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.special import expit

from ..core.pav import SortedTrials, pav_from_sorted, sort_trials
from ..core.priors import detection_cost, effective_log_odds
from ..core.rocch import ROCCH
from ..core.scoring import cross_entropy_nats, normalized_cross_entropy
from ..core.validation import (
    as_score_array,
    check_binary_trials,
    check_positive,
    check_probability,
    split_by_labels,
)

__all__ = [
    "BinaryScores",
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
    "DETCurve",
    "bayes_error_rates",
    "BayesErrorRates",
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


def cross_entropy(tar, non, p_target=0.5) -> float:
    """Empirical cross-entropy C_xe of natural-log LLRs at target prior ``p_target``, in bits.

    ``C_xe = (p/|T_tar| sum C_log(tar) + (1-p)/|T_non| sum C_log(non)) / log 2`` with the
    logarithmic cost of SWS plan eq. 37 (thesis eqs. 7.39-7.40); SWS plan eq. 38. The all-zero
    (uninformative) system scores the prior entropy (eq. 39).

    Parameters
    ----------
    tar, non : array_like of shape (n_tar,) and (n_non,)
        Natural-log LLRs of the target and of the non-target trials; +/-inf allowed, NaN and
        empty classes raise ``ValueError``.
    p_target : float, default 0.5
        Target prior in (0, 1) at which the cross-entropy is weighted.

    Returns
    -------
    float
        C_xe in bits, >= 0 (infinite if a wrong decision has infinite confidence).

    References
    ----------
    .. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
       extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
    .. [2] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
       Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
    """
    t, n = check_binary_trials(tar, non)
    p = check_probability(p_target)
    return cross_entropy_nats(t, n, p) / _LOG2


def cllr(tar, non, p_target=0.5) -> float:
    """Normalized cross-entropy: C_xe divided by the prior entropy, in bits per bit.

    An uninformative system (all LLRs 0) scores exactly 1 at every prior; perfect LLRs score
    0; values above 1 mean the LLRs do harm. At ``p_target=0.5`` this is the classical Cllr
    (thesis eq. 7.41); at any prior it is the SWS plan's C_nxe (eq. 40).

    Parameters
    ----------
    tar, non : array_like of shape (n_tar,) and (n_non,)
        Natural-log LLRs of the target and of the non-target trials; +/-inf allowed, NaN and
        empty classes raise ``ValueError``.
    p_target : float, default 0.5
        Target prior in (0, 1) at which the cross-entropy is weighted.

    Returns
    -------
    float
        Cllr (C_nxe) in bits per bit, >= 0.

    References
    ----------
    .. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
       extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
    .. [2] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
       Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").

    Examples
    --------
    >>> from focal.metrics import cllr
    >>> cllr([0.0, 0.0], [0.0])
    1.0
    """
    t, n = check_binary_trials(tar, non)
    p = check_probability(p_target)
    return normalized_cross_entropy(cross_entropy_nats(t, n, p), p)


def min_cllr(tar, non, p_target=0.5) -> float:
    """Cllr after the optimal monotone recalibration (PAV), in bits per bit like :func:`cllr`.

    The discrimination part of Cllr: the minimum of eq. 7.46 (thesis 7.7.3-7.7.4) normalized by
    the prior entropy, always ``<= 1``; ``cllr - min_cllr`` is the calibration loss.

    Parameters
    ----------
    tar, non : array_like of shape (n_tar,) and (n_non,)
        Scores of the target and of the non-target trials (any monotone scale: only their
        order matters); NaN and empty classes raise ``ValueError``.
    p_target : float, default 0.5
        Target prior in (0, 1) at which the cross-entropy is weighted.

    Returns
    -------
    float
        minCllr in bits per bit, in [0, 1].

    References
    ----------
    .. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
       extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
    """
    p = check_probability(p_target)
    return rocch(tar, non).min_cllr(p)


def dcf(tar, non, p_target, c_miss=1.0, c_fa=1.0, normalize: bool = True) -> float:
    """Actual detection cost of natural-log LLRs making Bayes decisions.

    Accepts every trial with ``llr >= -logit(P_tar)``, the Bayes threshold of the effective prior
    (thesis eq. 7.13, SWS plan eqs. 23 and 30), and returns
    ``P_target C_miss P_miss + (1 - P_target) C_fa P_fa`` (SWS plan eq. 8, thesis eq. 7.11), divided
    by ``min(P_target C_miss, (1 - P_target) C_fa)`` when ``normalize`` (eqs. 9-10). Normalized
    cost is dimensionless (1 = the best fixed decision); unnormalized, in units of the costs.

    Parameters
    ----------
    tar, non : array_like of shape (n_tar,) and (n_non,)
        Natural-log LLRs of the target and of the non-target trials; +/-inf allowed, NaN and
        empty classes raise ``ValueError``.
    p_target : float
        Target prior P_target in (0, 1).
    c_miss, c_fa : float, default 1.0
        Costs of a miss and of a false alarm (> 0).
    normalize : bool, default True
        Divide by ``min(P_target C_miss, (1 - P_target) C_fa)``, the cost of the best fixed
        decision.

    Returns
    -------
    float
        The detection cost (normalized: dimensionless; else in units of the costs).

    References
    ----------
    .. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
       extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
    .. [2] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
       Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
    """
    t, n = check_binary_trials(tar, non)
    p = check_probability(p_target)
    cm = check_positive(c_miss, "c_miss")
    cf = check_positive(c_fa, "c_fa")
    thr = -effective_log_odds(p, cm, cf)
    p_miss = np.count_nonzero(t < thr) / t.size
    p_fa = np.count_nonzero(n >= thr) / n.size
    return float(detection_cost(p_miss, p_fa, p, cm, cf, normalize))


class BinaryScores:
    """Target and non-target scores validated and sorted once, for several measures.

    The module's functions each validate and sort their input; when several measures (or a
    measure and its curve) are wanted from the same scores, build one ``BinaryScores`` and ask
    it: every threshold measure then comes from the same sort and the same PAV / ROCCH
    (computed on first use), as DESIGN.md asks. Values equal those of the functions.

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
        self.trials = sort_trials(tar, non)

    @cached_property
    def hull(self) -> ROCCH:
        """The ROC convex hull of one PAV run (thesis 7.3.6); see :func:`rocch`."""
        return ROCCH(pav_from_sorted(self.trials), self.trials)

    @property
    def n_targets(self) -> int:
        """Number of target trials."""
        return self.trials.n_tar

    @property
    def n_nontargets(self) -> int:
        """Number of non-target trials."""
        return self.trials.n_non

    def cross_entropy(self, p_target=0.5) -> float:
        """C_xe in bits (SWS plan eq. 38), as :func:`cross_entropy`.

        Parameters
        ----------
        p_target : float, default 0.5
            Target prior in (0, 1).

        Returns
        -------
        float
            C_xe in bits.
        """
        p = check_probability(p_target)
        return cross_entropy_nats(self.trials.tar, self.trials.non, p) / _LOG2

    def cllr(self, p_target=0.5) -> float:
        """Cllr / C_nxe in bits per bit (thesis eq. 7.41, SWS eq. 40), as :func:`cllr`.

        Parameters
        ----------
        p_target : float, default 0.5
            Target prior in (0, 1).

        Returns
        -------
        float
            Cllr in bits per bit.
        """
        p = check_probability(p_target)
        return normalized_cross_entropy(cross_entropy_nats(self.trials.tar, self.trials.non, p),
                                        p)

    def min_cllr(self, p_target=0.5) -> float:
        """Cllr after PAV, bits per bit (thesis 7.7.4), as :func:`min_cllr`.

        Parameters
        ----------
        p_target : float, default 0.5
            Target prior in (0, 1).

        Returns
        -------
        float
            minCllr in bits per bit, in [0, 1].
        """
        return self.hull.min_cllr(p_target)

    @property
    def eer(self) -> float:
        """ROCCH-EER, a fraction (thesis 7.3.7), as :func:`eer`."""
        return self.hull.eer

    def dcf(self, p_target, c_miss=1.0, c_fa=1.0, normalize: bool = True) -> float:
        """Actual DCF of Bayes decisions on the scores read as LLRs, as :func:`dcf`.

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
            The detection cost.
        """
        p = check_probability(p_target)
        cm = check_positive(c_miss, "c_miss")
        cf = check_positive(c_fa, "c_fa")
        p_miss, p_fa = self.trials.error_rates(np.array([-effective_log_odds(p, cm, cf)]))
        return float(detection_cost(p_miss[0], p_fa[0], p, cm, cf, normalize))

    def min_dcf(self, p_target, c_miss=1.0, c_fa=1.0, normalize: bool = True) -> float:
        """Minimum DCF over all thresholds, from the hull (thesis 7.21), as :func:`min_dcf`.

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
        return self.hull.min_dcf(p_target, c_miss, c_fa, normalize)

    def det_curve(self, convex_hull: bool = False) -> DETCurve:
        """DET points, steppy or of the hull, as :func:`det_curve`.

        Parameters
        ----------
        convex_hull : bool, default False
            False: the empirical ROC's operating points; True: the ROCCH vertices.

        Returns
        -------
        DETCurve
            The operating points.
        """
        if convex_hull:
            return DETCurve(self.hull.pfa, self.hull.pmiss, self.hull.thresholds)
        return DETCurve(*self.hull.pav.roc_points())

    def bayes_error_rates(self, prior_log_odds) -> BayesErrorRates:
        """Actual and minimum Bayes error-rates at many prior log-odds (thesis 7.6.1), as
        :func:`bayes_error_rates`.

        Parameters
        ----------
        prior_log_odds : array_like
            Values of h = logit(effective prior), in nats.

        Returns
        -------
        BayesErrorRates
            The error-rates at each ``h``.
        """
        h = as_score_array(np.atleast_1d(prior_log_odds), "prior_log_odds", allow_inf=True)
        p, q = expit(h), expit(-h)
        p_miss, p_fa = self.trials.error_rates(-h)
        best = self.hull.min_bayes_errors(h)
        return BayesErrorRates(
            prior_log_odds=h,
            actual=p * p_miss + q * p_fa,
            minimum=best.error,
            actual_pmiss=p_miss,
            actual_pfa=p_fa,
            min_pmiss=best.pmiss,
            min_pfa=best.pfa,
            min_n_misses=best.n_misses,
            min_n_false_alarms=best.n_false_alarms,
            n_targets=self.trials.n_tar,
            n_nontargets=self.trials.n_non,
        )


def min_dcf(tar, non, p_target, c_miss=1.0, c_fa=1.0, normalize: bool = True) -> float:
    """Minimum detection cost over all score thresholds, from the ROCCH vertices.

    Thesis eq. 7.21 (minimum over the discrete ROC, equal to the minimum over the hull, eq. 7.25);
    normalized as in :func:`dcf` (SWS plan eqs. 8-10). Always ``<= dcf`` and ``<= 1``.

    Parameters
    ----------
    tar, non : array_like of shape (n_tar,) and (n_non,)
        Scores of the target and of the non-target trials (any monotone scale: only their
        order matters); NaN and empty classes raise ``ValueError``.
    p_target : float
        Target prior P_target in (0, 1).
    c_miss, c_fa : float, default 1.0
        Costs of a miss and of a false alarm (> 0).
    normalize : bool, default True
        Divide by ``min(P_target C_miss, (1 - P_target) C_fa)``, the cost of the best fixed
        decision.

    Returns
    -------
    float
        The minimum detection cost (normalized: dimensionless, <= 1).

    References
    ----------
    .. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
       extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
    .. [2] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
       Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
    """
    return rocch(tar, non).min_dcf(p_target, c_miss, c_fa, normalize)


def eer(tar, non) -> float:
    """ROCCH equal-error-rate: where the ROC convex hull crosses P_miss = P_fa (thesis 7.3.7).

    A fraction in [0, 0.5]; equals the maximum over priors of the minimum Bayes error-rate
    (thesis eq. 7.32).

    Parameters
    ----------
    tar, non : array_like of shape (n_tar,) and (n_non,)
        Scores of the target and of the non-target trials (any monotone scale: only their
        order matters); NaN and empty classes raise ``ValueError``.

    Returns
    -------
    float
        The ROCCH-EER, a fraction in [0, 0.5].

    References
    ----------
    .. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
       extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").

    Examples
    --------
    >>> from focal.metrics import eer
    >>> eer([1.0, 2.0, 3.0], [-1.0, 0.0])
    0.0
    """
    return rocch(tar, non).eer


def rocch(tar, non) -> ROCCH:
    """ROC convex hull of the scores: one sort and one PAV shared by every threshold measure.

    Returns a :class:`focal.core.ROCCH` with the hull vertices (``pmiss``, ``pfa``), their score
    ``thresholds``, the segment ``llr`` (thesis 7.3.6), ``eer`` (7.3.7), ``prbep`` (7.3.8, an error
    count), ``auc``, and the methods ``min_dcf``, ``min_cllr`` and ``min_bayes_errors``.

    Parameters
    ----------
    tar, non : array_like of shape (n_tar,) and (n_non,)
        Scores of the target and of the non-target trials (any monotone scale: only their
        order matters); NaN and empty classes raise ``ValueError``.

    Returns
    -------
    focal.core.ROCCH
        The hull of these trials.

    References
    ----------
    .. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
       extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
    """
    return BinaryScores(tar, non).hull


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
    t, n = split_by_labels(s, labels, pos_label=pos_label)   # fresh arrays: sorted in place
    t.sort()
    n.sort()
    result = pav_from_sorted(SortedTrials(t, n))
    return result.llr[result.block_index(s)]


@dataclass(frozen=True)
class DETCurve:
    """Points of a DET / ROC curve: false-alarm and miss rates (fractions) and score thresholds.

    Point ``i`` is the operating point "accept iff score >= thresholds[i]"; ``pfa`` decreases and
    ``pmiss`` increases along the arrays. Plot ``probit(pfa)`` against ``probit(pmiss)`` for a DET.

    Attributes
    ----------
    pfa : ndarray
        False-alarm rate of each operating point (fraction of non-targets accepted).
    pmiss : ndarray
        Miss rate of each operating point (fraction of targets rejected).
    thresholds : ndarray
        Score threshold of each operating point.
    """

    pfa: np.ndarray
    pmiss: np.ndarray
    thresholds: np.ndarray


def det_curve(tar, non, convex_hull: bool = False) -> DETCurve:
    """DET curve points: the steppy empirical ROC (thesis 7.3.4-7.3.5), or its convex hull.

    Parameters
    ----------
    tar, non : array_like
        Target and non-target scores.
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
    return BinaryScores(tar, non).det_curve(convex_hull)


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
    actual_pmiss, actual_pfa, min_pmiss, min_pfa : ndarray
        The error rates behind them.
    min_n_misses, min_n_false_alarms : ndarray of int
        Absolute error counts at the optimal threshold (Doddington's rule of 30, appendix B).
    n_targets, n_nontargets : int
        Trial counts.
    """

    prior_log_odds: np.ndarray
    actual: np.ndarray
    minimum: np.ndarray
    actual_pmiss: np.ndarray
    actual_pfa: np.ndarray
    min_pmiss: np.ndarray
    min_pfa: np.ndarray
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


def bayes_error_rates(tar, non, prior_log_odds) -> BayesErrorRates:
    """Actual and minimum Bayes error-rate at many prior log-odds at once (thesis sec. 7.6.1).

    The fast way: the two classes are sorted once; the actual error-rates at all Bayes thresholds
    ``-h`` come from binary search of the thresholds in the sorted scores (the joint sort), and the
    minimum ones from the ROCCH vertices of one PAV run. Data for APE (thesis 7.7.4) and
    normalized Bayes error-rate plots (7.6). Decisions accept ``llr >= -h``.

    Parameters
    ----------
    tar, non : array_like
        Natural-log LLRs of target and non-target trials.
    prior_log_odds : array_like
        Values of h = logit(effective prior), in nats.

    Returns
    -------
    BayesErrorRates
        The actual and minimum error-rates (and their parts) at each ``h``.

    References
    ----------
    .. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
       extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
    """
    return BinaryScores(tar, non).bayes_error_rates(prior_log_odds)
