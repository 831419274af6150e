"""Spoken term detection measures of the MediaEval 2013 SWS plan [1]_, on aligned trials.

* Term-weighted value at a threshold (eqs. 1-7), its actual value ATWV from the system's YES
  decisions and its maximum MTWV over all thresholds with the threshold that attains it
  (sec. 2.3), the DET points of that sweep (sec. 2.5, :func:`term_det_curve`); beta from
  (P_target, C_miss, C_fa) (eq. 7), from an effective prior (eqs. 22-24) or from the data
  (SWS 2012, eqs. 17-18).
* Empirical cross-entropy C_xe, C_nxe and C_nxe^min over the full trial set (eqs. 37-45) are
  in :mod:`focal.std.cross_entropy`.
* Indexing / searching speed factors and the processing load (sec. 4.3, eqs. 46-48).

LLRs are natural logs; C_xe is in bits, C_nxe in bits per bit of prior entropy.

References
----------
.. [1] :cite:t:`sws2013measures` ("SWS plan").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.operating_point import OperatingPoint
from ..core.validation import as_score_array, check_non_negative, check_positive
from ..metrics.binary import DETCurve
from ._docs import shared_doc
from .alignment import AlignedTrials, resolve_operating_point
from .model import SWS2013

__all__ = [
    "TWVResult",
    "twv",
    "atwv",
    "mtwv",
    "term_det_curve",
    "indexing_speed_factor",
    "searching_speed_factor",
    "processing_load",
]


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


@shared_doc
def twv(trials: AlignedTrials, threshold: float, operating_point=SWS2013) -> TWVResult:
    """TWV(theta) when every detection with ``score >= threshold`` says YES (plan eqs. 1-6).

    Parameters
    ----------
    {trials}
    threshold : float
        Decide YES iff ``score >= threshold``.
    {operating_point}

    Returns
    -------
    TWVResult
        TWV and its miss / false-alarm parts.

    {references}
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


@shared_doc
def atwv(trials: AlignedTrials, operating_point=SWS2013, threshold=None) -> TWVResult:
    """Actual term-weighted value: TWV of the system's own YES/NO decisions (plan sec. 2.3).

    Parameters
    ----------
    {trials}
    {operating_point}
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


@shared_doc
def mtwv(trials: AlignedTrials, operating_point=SWS2013) -> TWVResult:
    """Maximum term-weighted value over all thresholds and the threshold that attains it.

    Exact sweep (plan sec. 2.3): the candidate thresholds are every distinct detection score and
    +inf (reject everything: TWV = 0, so MTWV >= 0); one descending sort of the scores gives
    TWV at all of them (:attr:`AlignedTrials.sweep`). Among equal maxima the highest threshold
    (fewest YES decisions) is returned. The value is then recomputed from exact per-query counts
    at that threshold.

    Parameters
    ----------
    {trials}
    {operating_point}

    Returns
    -------
    TWVResult
        MTWV, its threshold and its miss / false-alarm parts.

    {references}
    """
    op = resolve_operating_point(operating_point, trials)
    sw = trials.sweep
    values = 1.0 - (sw.p_miss + op.beta * sw.p_fa)
    if values.size == 0 or values.max() <= 0.0:
        return _twv_of(trials, np.zeros(trials.score.shape, dtype=bool), math.inf, op)
    k = int(np.argmax(values))
    thr = float(sw.thresholds[k])
    return _twv_of(trials, trials.score >= thr, thr, op)


@shared_doc
def term_det_curve(trials: AlignedTrials) -> DETCurve:
    """DET points of the term-detection threshold sweep: P_fa and P_miss averaged over the
    queries (plan eqs. 4-5, sec. 2.5).

    Point ``i`` accepts ``score >= thresholds[i]``; thresholds increase along the arrays (so
    ``p_fa`` decreases and ``p_miss`` increases), ending with the reject-all point at ``+inf``.
    Unlike a binary DET curve, ``p_miss`` does not reach 0: occurrences the system never
    detected are missed at every threshold.

    Parameters
    ----------
    {trials}

    Returns
    -------
    focal.metrics.DETCurve
        The operating points, by increasing threshold.

    {references}
    """
    sw = trials.sweep
    return DETCurve(
        p_fa=np.append(sw.p_fa[::-1], 0.0),
        p_miss=np.append(sw.p_miss[::-1], 1.0),
        thresholds=np.append(sw.thresholds[::-1], np.inf),
    )


# ---------------------------------------------------------------------------------------------
# processing resources (plan sec. 4.3)


@shared_doc
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

    {references}
    """
    return check_non_negative(t_indexing, "t_indexing") / check_positive(t_audio, "t_audio")


@shared_doc
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

    {references}
    """
    durations = as_score_array(np.atleast_1d(t_queries), "t_queries", allow_inf=False)
    if (durations < 0).any():
        raise ValueError("t_queries must be durations >= 0")
    t_q = float(durations.sum())
    if t_q <= 0:
        raise ValueError("t_queries must sum to a duration > 0")
    t_audio = check_positive(t_audio, "t_audio")
    return check_non_negative(t_searching, "t_searching") / (t_q * t_audio)


@shared_doc
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

    {references}
    """
    lam_v = float(lam)
    if not 0.0 <= lam_v <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam!r}")
    return lam_v * check_non_negative(isf, "isf") * check_non_negative(pmu_i, "pmu_i") + (
        1.0 - lam_v
    ) * check_non_negative(ssf, "ssf") * check_non_negative(pmu_s, "pmu_s")
