"""Spoken term detection measures of the MediaEval 2013 SWS plan [1]_, on aligned trials.

* Term-weighted value at a threshold (eqs. 1-7), its actual value ATWV from the system's YES
  decisions and its maximum MTWV over all thresholds with the threshold that attains it
  (sec. 2.3), the DET points of that sweep (sec. 2.5); beta from (P_target, C_miss, C_fa)
  (eq. 7), from an effective prior (eqs. 22-24) or from the data (SWS 2012, eqs. 17-18).
* Empirical cross-entropy C_xe and its normalized form C_nxe over the *full* trial set of
  ``|Q| n_tps T_audio`` trials (eqs. 38-43): aligned detections are target trials, unaligned
  ones non-target trials, and every trial the system did not submit gets the censored LLR
  ``llr_min`` (eq. 42). The censored trials are carried as two weighted trials, never
  materialized. C_nxe^min minimizes C_nxe over the affine recalibration ``gamma llr + delta``
  (eqs. 44-45). Queries without reference occurrences: by default they are left out of every
  measure, their trials included (``queries="evaluated"``), as TWV must (its P_miss is
  undefined for them, plan footnote 1), so one trial set serves all measures. Eq. 41 counts
  every query of the task, ``|T| = |Q| n_tps T_audio``; ``queries="all"`` keeps those queries'
  trials for the cross-entropies: all non-target, their detections as scored and the rest
  censored at ``llr_min`` (now the minimum over every submitted detection, eq. 42). That
  variant penalizes confident false alarms on absent queries, which the default ignores.
* Indexing / searching speed factors and the processing load (sec. 4.3, eqs. 46-48).

LLRs are natural logs; C_xe is in bits, C_nxe in bits per bit of prior entropy.

References
----------
.. [1] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
   Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.affine import best_affine
from ..core.logistic import fit_logistic
from ..core.operating_point import OperatingPoint
from ..core.scoring import cross_entropy_nats, normalized_cross_entropy
from ..core.validation import as_score_array, check_non_negative, check_positive
from ..exceptions import InvalidParameterError
from ..metrics.binary import DETCurve
from .alignment import AlignedTrials
from .model import SWS2013

__all__ = [
    "TWVResult",
    "AffineRecalibration",
    "resolve_operating_point",
    "twv",
    "atwv",
    "mtwv",
    "det_curve",
    "cxe",
    "cnxe",
    "min_cnxe",
    "affine_recalibration",
    "indexing_speed_factor",
    "searching_speed_factor",
    "processing_load",
]

_LOG2 = math.log(2.0)


def resolve_operating_point(operating_point, trials: AlignedTrials) -> OperatingPoint:
    """An :class:`~focal.core.operating_point.OperatingPoint` from what the caller gave.

    Accepts an ``OperatingPoint``, a tuple ``(P_target, C_miss, C_fa)``, a bare prior (unit
    costs), or the string ``"sws2012"`` for the data-dependent SWS 2012 point
    ``OperatingPoint.sws2012(trials.n_true, trials.n_trials)``: ``P_target = N_true / (n_tps
    T_audio)``, ``C_miss = C_fa = 1`` (plan eqs. 17-18).
    """
    if isinstance(operating_point, str):
        if operating_point.lower() != "sws2012":
            raise InvalidParameterError(
                f"operating_point must be an OperatingPoint, a tuple (P_target, C_miss, C_fa) "
                f"or 'sws2012'; got {operating_point!r}"
            )
        return OperatingPoint.sws2012(trials.n_true, trials.n_trials)
    return OperatingPoint.coerce(operating_point)


# ---------------------------------------------------------------------------------------------
# term-weighted value


@dataclass(frozen=True)
class TWVResult:
    """Term-weighted value of one set of decisions (plan eq. 6) and the counts behind it.

    Attributes
    ----------
    twv : float
        ``1 - (P_miss + beta P_fa)``; 1 for a perfect system, 0 for one that rejects everything.
    threshold : float
        The detections accepted are those with ``score >= threshold``; ``+inf`` when none is;
        NaN for decisions that no single score threshold reproduces.
    p_miss, p_fa : float
        Miss and false-alarm rates averaged over the queries (eqs. 4-5).
    n_hits, n_misses, n_false_alarms : int
        Totals over the evaluated queries.
    beta : float
        The false-alarm weight used (eq. 7).
    """

    twv: float
    threshold: float
    p_miss: float
    p_fa: float
    n_hits: int
    n_misses: int
    n_false_alarms: int
    beta: float

    @property
    def c_norm(self) -> float:
        """Normalized detection cost ``P_miss + beta P_fa = 1 - TWV`` (plan eq. 11)."""
        return self.p_miss + self.beta * self.p_fa


def _twv_of(trials: AlignedTrials, accept, threshold: float, op: OperatingPoint) -> TWVResult:
    c = trials.counts(accept)
    p_miss = float(np.mean(c.p_miss))
    p_fa = float(np.mean(c.p_fa))
    b = op.beta
    return TWVResult(
        twv=1.0 - (p_miss + b * p_fa),
        threshold=float(threshold),
        p_miss=p_miss,
        p_fa=p_fa,
        n_hits=int(c.n_hits.sum()),
        n_misses=int(c.n_misses.sum()),
        n_false_alarms=int(c.n_false_alarms.sum()),
        beta=b,
    )


def twv(trials: AlignedTrials, threshold: float, operating_point=SWS2013) -> TWVResult:
    """TWV(theta) when every detection with ``score >= threshold`` says YES (plan eqs. 1-6).

    Parameters
    ----------
    trials : AlignedTrials
        The aligned detections and reference occurrences (:func:`focal.std.align`).
    threshold : float
        Decide YES iff ``score >= threshold``.
    operating_point : OperatingPoint, tuple or "sws2012", default SWS 2013
        The application (P_target, C_miss, C_fa) (plan eqs. 6-7, 22-23).

    Returns
    -------
    TWVResult
        TWV and its miss / false-alarm parts.

    References
    ----------
    .. [1] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
       Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
    """
    thr = float(threshold)
    if math.isnan(thr):
        raise ValueError("threshold must be a number, got NaN")
    op = resolve_operating_point(operating_point, trials)
    return _twv_of(trials, trials.score >= thr, thr, op)


def _decision_threshold(trials: AlignedTrials) -> float:
    """The threshold the YES decisions correspond to, or NaN when no single threshold does."""
    yes = trials.decision
    if yes is None:
        raise ValueError("the detections carry no YES/NO decisions")
    if not yes.any():
        return math.inf
    lowest_yes = float(trials.score[yes].min())
    if (~yes).any() and float(trials.score[~yes].max()) >= lowest_yes:
        return math.nan
    return lowest_yes


def atwv(trials: AlignedTrials, operating_point=SWS2013, threshold=None) -> TWVResult:
    """Actual term-weighted value: TWV of the system's own YES/NO decisions (plan sec. 2.3).

    Parameters
    ----------
    trials : AlignedTrials
        The aligned detections and reference occurrences (:func:`focal.std.align`).
    operating_point : OperatingPoint, tuple or "sws2012", default SWS 2013
        The application (P_target, C_miss, C_fa) (plan eqs. 6-7, 22-23).
    threshold : float, optional
        Decide YES iff ``score >= threshold`` instead of using the decisions (required when the
        detections carry no decisions; for LLRs, the Bayes threshold ``-logit(P_tar)`` of plan
        eq. 31 is :func:`focal.bayes_threshold` of the operating point).

    Returns
    -------
    TWVResult
        ATWV and its miss / false-alarm parts.

    Notes
    -----
    ATWV <= MTWV whenever the decisions come from one score threshold (``result.threshold`` is
    then that threshold). Query-dependent thresholds can beat the best single threshold; then
    ``result.threshold`` is NaN and ATWV may exceed MTWV.
    """
    if threshold is not None:
        return twv(trials, threshold, operating_point)
    if trials.decision is None:
        raise ValueError("the detections carry no YES/NO decisions: pass threshold= to atwv")
    op = resolve_operating_point(operating_point, trials)
    return _twv_of(trials, trials.decision, _decision_threshold(trials), op)


def mtwv(trials: AlignedTrials, operating_point=SWS2013) -> TWVResult:
    """Maximum term-weighted value over all thresholds and the threshold that attains it.

    Exact sweep (plan sec. 2.3): the candidate thresholds are every distinct detection score and
    +inf (reject everything: TWV = 0, so MTWV >= 0); one descending sort of the scores gives
    TWV at all of them (:attr:`AlignedTrials.sweep`). Among equal maxima the highest threshold
    (fewest YES decisions) is returned. The value is then recomputed from exact per-query counts
    at that threshold.

    Parameters
    ----------
    trials : AlignedTrials
        The aligned detections and reference occurrences (:func:`focal.std.align`).
    operating_point : OperatingPoint, tuple or "sws2012", default SWS 2013
        The application (P_target, C_miss, C_fa) (plan eqs. 6-7, 22-23).

    Returns
    -------
    TWVResult
        MTWV, its threshold and its miss / false-alarm parts.

    References
    ----------
    .. [1] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
       Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
    """
    op = resolve_operating_point(operating_point, trials)
    sw = trials.sweep
    values = 1.0 - (sw.p_miss + op.beta * sw.p_fa)
    if values.size == 0 or values.max() <= 0.0:
        return _twv_of(trials, np.zeros(trials.score.shape, dtype=bool), math.inf, op)
    k = int(np.argmax(values))
    thr = float(sw.thresholds[k])
    return _twv_of(trials, trials.score >= thr, thr, op)


def det_curve(trials: AlignedTrials) -> DETCurve:
    """DET points of the threshold sweep: average P_fa and P_miss (plan eqs. 4-5, sec. 2.5).

    Point ``i`` accepts ``score >= thresholds[i]``; thresholds increase along the arrays (so
    ``p_fa`` decreases and ``p_miss`` increases), ending with the reject-all point at ``+inf``.
    Unlike a binary DET curve, ``p_miss`` does not reach 0: occurrences the system never
    detected are missed at every threshold.

    Parameters
    ----------
    trials : AlignedTrials
        The aligned detections and reference occurrences (:func:`focal.std.align`).

    Returns
    -------
    focal.metrics.DETCurve
        The operating points, by increasing threshold.

    References
    ----------
    .. [1] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
       Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
    """
    sw = trials.sweep
    return DETCurve(
        p_fa=np.append(sw.p_fa[::-1], 0.0),
        p_miss=np.append(sw.p_miss[::-1], 1.0),
        thresholds=np.append(sw.thresholds[::-1], np.inf),
    )


# ---------------------------------------------------------------------------------------------
# cross-entropy over the censored trial set


QUERY_SETS = ("evaluated", "all")


def _weighted_trials(trials: AlignedTrials, queries: str = "evaluated"):
    """Target / non-target LLRs with weights, censored trials folded into one trial per class.

    Returns ``tar, tar_w, non, non_w, llr_min``. The last entry of each class is ``llr_min``
    (plan eq. 42) with the number of censored trials of that class as its weight:
    ``N_true - #aligned`` targets and ``|Q| N - N_true - #unaligned`` non-targets (eqs. 41-43).
    ``queries="all"`` adds the queries without occurrences to Q and their detections to the
    non-targets (see the module docstring).
    """
    if queries not in QUERY_SETS:
        raise ValueError(f"queries must be one of {QUERY_SETS}, got {queries!r}")
    extra = trials.excluded_score if queries == "all" else np.zeros(0)
    if queries == "all" and (trials.excluded_detections > trials.n_trials).any():
        i = int(np.argmax(trials.excluded_detections > trials.n_trials))
        raise ValueError(
            f"query {trials.excluded_queries[i]!r} has {int(trials.excluded_detections[i])} "
            f"detections but only n_tps*T_audio={trials.n_trials:g} trials (plan eq. 41); "
            f"increase n_tps"
        )
    n_queries = trials.n_queries + (len(trials.excluded_queries) if queries == "all" else 0)
    if trials.n_detections + extra.size == 0:
        raise ValueError(
            "the system submitted no detection of an evaluated query: llr_min "
            "(plan eq. 42), and so C_xe, is undefined"
        )
    llr_min = float(np.concatenate([trials.score, extra]).min())
    tar = trials.score[trials.hit]
    non = np.concatenate([trials.score[~trials.hit], extra])
    n_cens_tar = trials.n_true - tar.size
    n_cens_non = n_queries * trials.n_trials - trials.n_true - non.size
    tar = np.append(tar, llr_min)
    non = np.append(non, llr_min)
    tar_w = np.ones(tar.size)
    tar_w[-1] = n_cens_tar
    non_w = np.ones(non.size)
    non_w[-1] = n_cens_non
    return tar, tar_w, non, non_w, llr_min


def _p_tar(trials: AlignedTrials, operating_point) -> float:
    return resolve_operating_point(operating_point, trials).effective_prior


def cxe(trials: AlignedTrials, operating_point=SWS2013, queries: str = "evaluated") -> float:
    """Empirical cross-entropy C_xe of the LLR scores over all ``|Q| n_tps T_audio`` trials, bits.

    Plan eq. 43 with the logarithmic cost of eq. 37 at the effective prior P_tar of the
    operating point (eq. 23). Trials the system did not submit get ``llr_min`` (eq. 42) and are
    carried as weighted counts. ``queries``: ``"evaluated"`` (Q = queries with occurrences,
    default) or ``"all"`` (every query of the task, eq. 41; see the module docstring).

    Parameters
    ----------
    trials : AlignedTrials
        The aligned detections and reference occurrences (:func:`focal.std.align`).
    operating_point : OperatingPoint, tuple or "sws2012", default SWS 2013
        The application (P_target, C_miss, C_fa) (plan eqs. 6-7, 22-23).
    queries : {"evaluated", "all"}, default "evaluated"
        The queries Q of the trials: those with occurrences, or every query of the task.

    Returns
    -------
    float
        C_xe in bits.

    References
    ----------
    .. [1] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
       Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
    """
    tar, tar_w, non, non_w, _ = _weighted_trials(trials, queries)
    return cross_entropy_nats(tar, non, _p_tar(trials, operating_point), tar_w, non_w) / _LOG2


def cnxe(trials: AlignedTrials, operating_point=SWS2013, queries: str = "evaluated") -> float:
    """Normalized cross-entropy ``C_nxe = C_xe / C_xe^prior`` (plan eqs. 39-40), bits per bit.

    0 for a perfect system, exactly 1 for one whose every LLR is 0, above 1 for harmful LLRs.
    ``queries`` as in :func:`cxe`.

    Parameters
    ----------
    trials : AlignedTrials
        The aligned detections and reference occurrences (:func:`focal.std.align`).
    operating_point : OperatingPoint, tuple or "sws2012", default SWS 2013
        The application (P_target, C_miss, C_fa) (plan eqs. 6-7, 22-23).
    queries : {"evaluated", "all"}, default "evaluated"
        The queries Q of the trials: those with occurrences, or every query of the task.

    Returns
    -------
    float
        C_nxe in bits per bit.

    References
    ----------
    .. [1] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
       Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
    """
    tar, tar_w, non, non_w, _ = _weighted_trials(trials, queries)
    p = _p_tar(trials, operating_point)
    return normalized_cross_entropy(cross_entropy_nats(tar, non, p, tar_w, non_w), p)


@dataclass(frozen=True)
class AffineRecalibration:
    """The minimum of C_nxe over ``llr -> gamma llr + delta`` (plan eqs. 44-45).

    Attributes
    ----------
    min_cnxe : float
        C_nxe^min, bits per bit; ``<= cnxe`` and ``<= 1``.
    cnxe : float
        C_nxe of the scores as submitted.
    gamma, delta : float
        A minimizer. When the recalibrated trials are perfectly separable the minimum 0 is an
        infimum approached as ``|gamma| -> inf``: then ``gamma`` is ``+/-inf`` and ``delta``
        NaN.
    llr_min : float
        The censored LLR (plan eq. 42).
    """

    min_cnxe: float
    cnxe: float
    gamma: float
    delta: float
    llr_min: float

    @property
    def calibration_loss(self) -> float:
        """``C_nxe - C_nxe^min`` (plan sec. 4.2.5), bits per bit."""
        return self.cnxe - self.min_cnxe


def affine_recalibration(
    trials: AlignedTrials, operating_point=SWS2013, queries: str = "evaluated"
) -> AffineRecalibration:
    """C_nxe^min: the best affine recalibration ``gamma llr + delta`` of every trial (eqs. 44-45).

    The censored trials are recalibrated too (their LLR is ``llr_min``). The minimizer is the
    prior-weighted logistic regression of :func:`focal.core.logistic.fit_logistic` (K = 1,
    Newton's method with the exact Hessian) on the weighted trials, run with **no
    regularization** (``reg=0``): C_nxe^min is an evaluation minimum, not a trained model, and
    any penalty would bias it upwards. The value is well defined in every case:

    * if the trials with positive weight are perfectly separable by score, the infimum is 0
      (approached as ``|gamma| -> inf``) and is returned exactly;
    * otherwise the minimum is attained at finite (gamma, delta), found by Newton's method; if
      targets and non-targets only touch at tied scores the minimum is again approached as
      gamma grows and Newton stops when the gradient vanishes to 1e-10;
    * the result is the smallest of the optimizer's value, C_nxe itself (gamma = 1, delta = 0)
      and 1 (gamma = delta = 0) (:func:`focal.core.affine.best_affine`), so
      ``C_nxe^min <= min(C_nxe, 1)`` holds by construction.

    Scores must be finite (an affine map of +/-inf is not a recalibration). ``queries`` as in
    :func:`cxe`.

    Parameters
    ----------
    trials : AlignedTrials
        The aligned detections and reference occurrences (:func:`focal.std.align`).
    operating_point : OperatingPoint, tuple or "sws2012", default SWS 2013
        The application (P_target, C_miss, C_fa) (plan eqs. 6-7, 22-23).
    queries : {"evaluated", "all"}, default "evaluated"
        The queries Q of the trials: those with occurrences, or every query of the task.

    Returns
    -------
    AffineRecalibration
        C_nxe^min, the C_nxe it improves on, and gamma, delta, llr_min.

    References
    ----------
    .. [1] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
       Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
    """
    tar, tar_w, non, non_w, llr_min = _weighted_trials(trials, queries)
    if not (np.isfinite(tar).all() and np.isfinite(non).all()):
        raise ValueError("C_nxe^min needs finite scores; the detections contain +/-inf")
    p = _p_tar(trials, operating_point)

    def value(gamma, delta):
        xe = cross_entropy_nats(gamma * tar + delta, gamma * non + delta, p, tar_w, non_w)
        return normalized_cross_entropy(xe, p)

    actual = value(1.0, 0.0)
    t_eff, n_eff = tar[tar_w > 0], non[non_w > 0]
    if t_eff.min() > n_eff.max():
        return AffineRecalibration(0.0, actual, math.inf, math.nan, llr_min)
    if t_eff.max() < n_eff.min():
        return AffineRecalibration(0.0, actual, -math.inf, math.nan, llr_min)

    X = np.concatenate([tar, non])[:, None]
    y = np.concatenate([np.ones(tar.size, dtype=bool), np.zeros(non.size, dtype=bool)])
    w = np.concatenate([tar_w, non_w])
    fit = fit_logistic(X, y, p_target=p, sample_weight=w, reg=0.0)
    best = best_affine(
        value,
        [(float(fit.coef[0]), float(fit.intercept))],
        identity_value=actual,
        default_value=1.0,
    )
    return AffineRecalibration(best.value, actual, best.scale, best.offset, llr_min)


def min_cnxe(trials: AlignedTrials, operating_point=SWS2013, queries: str = "evaluated") -> float:
    """C_nxe^min (plan eq. 45), bits per bit; see :func:`affine_recalibration`.

    Parameters
    ----------
    trials : AlignedTrials
        The aligned detections and reference occurrences (:func:`focal.std.align`).
    operating_point : OperatingPoint, tuple or "sws2012", default SWS 2013
        The application (P_target, C_miss, C_fa) (plan eqs. 6-7, 22-23).
    queries : {"evaluated", "all"}, default "evaluated"
        The queries Q of the trials: those with occurrences, or every query of the task.

    Returns
    -------
    float
        C_nxe^min in bits per bit.

    References
    ----------
    .. [1] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
       Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
    """
    return affine_recalibration(trials, operating_point, queries).min_cnxe


# ---------------------------------------------------------------------------------------------
# processing resources (plan sec. 4.3)


def indexing_speed_factor(t_indexing: float, t_audio: float) -> float:
    """ISF = indexing CPU time / audio duration (plan sec. 4.3), a real-time factor.

    Both in the same unit; CPU time summed over all cores (14 h on 16 cores = 224 h: with 300 h
    of audio, ISF = 0.7467).

    Parameters
    ----------
    t_indexing : float
        CPU time of indexing, summed over cores (>= 0).
    t_audio : float
        Duration of the searched audio, same unit (> 0).

    Returns
    -------
    float
        ISF (dimensionless).

    References
    ----------
    .. [1] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
       Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
    """
    return check_non_negative(t_indexing, "t_indexing") / check_positive(t_audio, "t_audio")


def searching_speed_factor(t_searching: float, t_queries, t_audio: float) -> float:
    """SSF = searching CPU time / (T_Q T_Omega) (plan eq. 46).

    ``t_queries`` is T_Q, the summed duration of every example of every query (eq. 47): a number
    or an array of example durations. All three times in one unit ``u``; SSF is then per ``u``
    (it is not dimensionless). The plan's example, 48 CPU hours for 0.25 h of queries in 300 h
    of audio, gives 48 / (0.25 * 300) = 0.64 per hour (the plan prints 0.8).

    Parameters
    ----------
    t_searching : float
        CPU time of searching, summed over cores (>= 0).
    t_queries : float or array_like
        T_Q, or the durations of every example of every query.
    t_audio : float
        Duration of the searched audio (> 0).

    Returns
    -------
    float
        SSF, per unit of time.

    References
    ----------
    .. [1] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
       Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
    """
    durations = as_score_array(np.atleast_1d(t_queries), "t_queries", allow_inf=False)
    if (durations < 0).any():
        raise ValueError("t_queries must be durations >= 0")
    t_q = float(durations.sum())
    if t_q <= 0:
        raise ValueError("t_queries must sum to a duration > 0")
    t_audio = check_positive(t_audio, "t_audio")
    return check_non_negative(t_searching, "t_searching") / (t_q * t_audio)


def processing_load(isf: float, pmu_i: float, ssf: float, pmu_s: float, lam: float = 0.1) -> float:
    """PL = lam ISF PMU_i + (1 - lam) SSF PMU_s (plan eq. 48); PMU (peak memory) in GB.

    Parameters
    ----------
    isf : float
        Indexing speed factor (:func:`indexing_speed_factor`).
    pmu_i : float
        Peak memory of indexing, GB.
    ssf : float
        Searching speed factor (:func:`searching_speed_factor`).
    pmu_s : float
        Peak memory of searching, GB.
    lam : float, default 0.1
        Weight in [0, 1] of indexing against searching (the plan suggests 0.1).

    Returns
    -------
    float
        PL.

    References
    ----------
    .. [1] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
       Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
    """
    lam_v = float(lam)
    if not 0.0 <= lam_v <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam!r}")
    return lam_v * check_non_negative(isf, "isf") * check_non_negative(pmu_i, "pmu_i") + (
        1.0 - lam_v
    ) * check_non_negative(ssf, "ssf") * check_non_negative(pmu_s, "pmu_s")
