"""Binary scores sorted once: :class:`BinaryScores`, the one input of every binary measure.

Every measure of :mod:`focal.metrics.binary` takes ``(tar, non)`` or, in their place, a
:class:`BinaryScores` or a :func:`focal.metrics.rocch` result (:func:`as_binary_scores`), whose
sort and PAV / ROCCH are then reused; the curve records they return are defined here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.special import expit

from ..core.operating_point import OperatingPoint
from ..core.pav import pav_from_sorted
from ..core.rocch import ROCCH
from ..core.scoring import cross_entropy_nats, normalized_cross_entropy
from ..core.sorted_trials import SortedTrials, sort_trials
from ..core.validation import (
    as_score_array,
    check_binary_trials,
    check_probability,
)

__all__ = ["BayesErrorRates", "BinaryScores", "DETCurve", "as_binary_scores"]

_LOG2 = np.log(2.0)


class BinaryScores:
    """Target and non-target scores validated and sorted once, for several measures.

    The module's functions each validate and sort their input; when several measures (or a
    measure and its curve) are wanted from the same scores, build one ``BinaryScores`` and ask
    it: every threshold measure then comes from the same sort and the same PAV / ROCCH
    (computed on first use). Values equal those of the functions.

    Every measure function of :mod:`focal.metrics.binary` (and the plots) also takes a
    ``BinaryScores`` in place of ``(tar, non)``: ``eer(scores)``, ``min_dcf(scores,
    p_target=0.01)``, ``cllr(scores)`` reuse its sort and PAV.

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
        self._sorted = sort_trials(tar, non)

    @classmethod
    def of_hull(cls, hull: ROCCH) -> BinaryScores:
        """The scores behind a :func:`rocch` result, reusing its sort and PAV (no copy).

        A hull built without its trials (e.g. from block summaries, :mod:`focal.core.summary`)
        answers the threshold measures (minCllr, EER, minDCF, the hull DET); the measures of
        the scores themselves (Cllr, actual DCF) then raise ``ValueError``.

        Parameters
        ----------
        hull : focal.core.ROCCH
            A :func:`focal.metrics.rocch` result (or any ROCCH).

        Returns
        -------
        BinaryScores
            Sharing ``hull`` and its sorted trials.
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
                "this ROCCH was built without its trials (e.g. from block "
                "summaries): this measure needs the scores; pass (tar, non) or "
                "a BinaryScores"
            )
        return self._sorted

    @cached_property
    def hull(self) -> ROCCH:
        """The ROC convex hull of one PAV run (thesis 7.3.6); see :func:`rocch`."""
        return ROCCH(pav_from_sorted(self.trials), self.trials)

    @property
    def n_targets(self) -> int:
        """The number of target trials."""
        return self.hull.n_targets if self._sorted is None else self._sorted.n_targets

    @property
    def n_nontargets(self) -> int:
        """The number of non-target trials."""
        return self.hull.n_nontargets if self._sorted is None else self._sorted.n_nontargets

    def cross_entropy(self, p_target=0.5) -> float:
        """C_xe in bits (SWS plan eq. 38), as :func:`cross_entropy`.

        Parameters
        ----------
        p_target : float in (0, 1), default 0.5
            Target prior.

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
        p_target : float in (0, 1), default 0.5
            Target prior.

        Returns
        -------
        float
            Cllr (C_nxe) in bits per bit: 0 for perfect LLRs, 1 for an uninformative system.
        """
        p = check_probability(p_target)
        return normalized_cross_entropy(cross_entropy_nats(self.trials.tar, self.trials.non, p), p)

    def min_cllr(self, p_target=0.5) -> float:
        """Cllr after PAV, bits per bit (thesis 7.7.4), as :func:`min_cllr`.

        Parameters
        ----------
        p_target : float in (0, 1), default 0.5
            Target prior.

        Returns
        -------
        float
            Minimum Cllr in bits per bit, in [0, 1].
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
        p_target : float in (0, 1)
            Target prior.
        c_miss, c_fa : float > 0, default 1
            Costs of a miss and of a false alarm.
        normalize : bool, default True
            Divide by the cost of the best fixed decision (SWS plan eqs. 9-10).

        Returns
        -------
        float
            The actual DCF (thesis eq. 7.11): dimensionless when ``normalize``, else in units of
            the costs.
        """
        op = OperatingPoint(p_target, c_miss, c_fa)
        p_miss, p_fa = self.trials.error_rates(np.array([op.bayes_threshold]))
        return float(op.detection_cost(p_miss[0], p_fa[0], normalize))

    def min_dcf(self, p_target, c_miss=1.0, c_fa=1.0, normalize: bool = True) -> float:
        """Minimum DCF over all thresholds, from the hull (thesis 7.21), as :func:`min_dcf`.

        Parameters
        ----------
        p_target : float in (0, 1)
            Target prior.
        c_miss, c_fa : float > 0, default 1
            Costs of a miss and of a false alarm.
        normalize : bool, default True
            Divide by the cost of the best fixed decision (SWS plan eqs. 9-10).

        Returns
        -------
        float
            The minimum DCF: dimensionless and ``<= 1`` when ``normalize``, else in units of the
            costs.
        """
        return self.hull.min_dcf(p_target, c_miss, c_fa, normalize)

    def det_curve(self, convex_hull: bool = False) -> DETCurve:
        """DET points, steppy or of the hull, as :func:`det_curve`.

        Parameters
        ----------
        convex_hull : bool, default False
            False: every distinct operating point of the empirical ROC (thesis 7.3.4-7.3.5). True:
            the ROCCH vertices (thesis 7.3.6).

        Returns
        -------
        DETCurve
            The operating points, by decreasing false-alarm rate.
        """
        if not convex_hull:
            self.trials  # noqa: B018 - the steppy curve needs the trials' runs
        if convex_hull:
            return DETCurve(self.hull.p_fa, self.hull.p_miss, self.hull.thresholds)
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
            Actual (eq. 7.18) and minimum (eq. 7.42) Bayes error-rates, fractions, one per ``h``.
        """
        h = as_score_array(np.atleast_1d(prior_log_odds), "prior_log_odds", allow_inf=True)
        p_miss, p_fa = self.trials.error_rates(-h)
        return BayesErrorRates.of(
            h, p_miss, p_fa, self.hull, self.trials.n_targets, self.trials.n_nontargets
        )


def as_binary_scores(tar, non=None) -> BinaryScores:
    """The ``(tar, non)`` argument of every binary measure as one :class:`BinaryScores`.

    Parameters
    ----------
    tar : array_like, BinaryScores or ROCCH
        Target scores; or a :class:`BinaryScores` (returned as it is) or a :func:`rocch` result
        (its scores, :meth:`BinaryScores.of_hull`), with ``non`` omitted.
    non : array_like, optional
        Non-target scores, with array ``tar`` only.

    Returns
    -------
    BinaryScores
        Sorted (and, once asked, PAV-ed) once: pass it to any number of measures.
    """
    if _check_pair(tar, non):
        return tar if isinstance(tar, BinaryScores) else BinaryScores.of_hull(tar)
    return BinaryScores(tar, non)


def _check_pair(tar, non) -> bool:
    """Whether ``tar`` stands for both classes (a BinaryScores / ROCCH); refuses a missing or
    extra ``non`` (no work done).
    """
    if isinstance(tar, (BinaryScores, ROCCH)):
        if non is not None:
            raise ValueError(
                f"give either a {type(tar).__name__} or the (tar, non) arrays, not "
                "both (with a BinaryScores or ROCCH, pass the other arguments by "
                "keyword, e.g. min_dcf(scores, p_target=0.01))"
            )
        return True
    if non is None:
        raise ValueError(
            "non-target scores are missing: give the (tar, non) arrays, a "
            "BinaryScores or a rocch() result"
        )
    return False


def _score_arrays(tar, non=None):
    """Validated ``(tar, non)`` float arrays of any input :func:`as_binary_scores` takes.

    The sorted arrays of a :class:`BinaryScores` or :func:`rocch` result (shared, not copied:
    do not modify them), else new validated copies of the arrays in their input order
    (:func:`focal.core.validation.check_binary_trials`).
    """
    if non is None or isinstance(tar, (BinaryScores, ROCCH)):
        trials = as_binary_scores(tar, non).trials
        return trials.tar, trials.non
    return check_binary_trials(tar, non)


def _required(value, function: str, name: str = "p_target"):
    """``value``, or a TypeError naming the missing argument (now optional after ``non``)."""
    if value is None:
        raise TypeError(f"{function}() missing the argument {name!r}")
    return value


@dataclass(frozen=True)
class DETCurve:
    """Points of a DET / ROC curve: false-alarm and miss rates (fractions) and score thresholds.

    Point ``i`` is the operating point "accept iff score >= thresholds[i]"; ``p_fa`` decreases
    and ``p_miss`` increases along the arrays. Plot ``probit(p_fa)`` against ``probit(p_miss)``
    for a DET. ``pfa`` / ``pmiss`` are deprecated names.

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
        The error rates behind them (``actual_pmiss``, ...: deprecated names).
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

    @classmethod
    def of(cls, h, p_miss, p_fa, hull, n_targets, n_nontargets) -> BayesErrorRates:
        """The error-rates at prior log-odds ``h`` of Bayes decisions with rates
        ``(p_miss, p_fa)`` (eq. 7.18) and of the optimal thresholds on ``hull`` (eq. 7.42).

        Parameters
        ----------
        h : ndarray
            Prior log-odds, in nats.
        p_miss, p_fa : ndarray
            Miss and false-alarm rates (fractions) of the Bayes decisions at threshold ``-h``.
        hull : focal.core.rocch.ROCCH
            The convex hull of the same trials.
        n_targets, n_nontargets : int
            Trial counts.

        Returns
        -------
        BayesErrorRates
            Fractions, one per ``h``.
        """
        best = hull.min_bayes_errors(h)
        return cls(
            prior_log_odds=h,
            actual=expit(h) * p_miss + expit(-h) * p_fa,
            minimum=best.error,
            actual_p_miss=p_miss,
            actual_p_fa=p_fa,
            min_p_miss=best.p_miss,
            min_p_fa=best.p_fa,
            min_n_misses=best.n_misses,
            min_n_false_alarms=best.n_false_alarms,
            n_targets=n_targets,
            n_nontargets=n_nontargets,
        )

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
