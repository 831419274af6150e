"""Empirical cross-entropy of term detection scores, C_xe, C_nxe and C_nxe^min, on aligned
trials (MediaEval 2013 SWS plan [1]_, eqs. 37-45).

Empirical cross-entropy C_xe and its normalized form C_nxe over the *full* trial set of
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

LLRs are natural logs; C_xe is in bits, C_nxe in bits per bit of prior entropy.

References
----------
.. [1] :cite:t:`sws2013measures` ("SWS plan").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.affine import best_affine
from ..core.logistic import fit_logistic
from ..core.scoring import cross_entropy_nats, normalized_cross_entropy
from ._docs import shared_doc
from .alignment import AlignedTrials, resolve_operating_point
from .model import SWS2013

__all__ = ["AffineRecalibration", "QUERY_SETS", "cxe", "cnxe", "min_cnxe", "affine_recalibration"]

_LOG2 = math.log(2.0)


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


def _cross_entropy(trials: AlignedTrials, operating_point, queries: str) -> tuple[float, float]:
    """``(C_xe in nats, P_tar)`` of the weighted trials (plan eqs. 37, 43)."""
    tar, tar_w, non, non_w, _ = _weighted_trials(trials, queries)
    p = _p_tar(trials, operating_point)
    return cross_entropy_nats(tar, non, p, tar_w, non_w), p


@shared_doc
def cxe(trials: AlignedTrials, operating_point=SWS2013, queries: str = "evaluated") -> float:
    """Empirical cross-entropy C_xe of the LLR scores over all ``|Q| n_tps T_audio`` trials, bits.

    Plan eq. 43 with the logarithmic cost of eq. 37 at the effective prior P_tar of the
    operating point (eq. 23). Trials the system did not submit get ``llr_min`` (eq. 42) and are
    carried as weighted counts. ``queries``: ``"evaluated"`` (Q = queries with occurrences,
    default) or ``"all"`` (every query of the task, eq. 41; see the module docstring).

    {trial_set_parameters}

    Returns
    -------
    float
        C_xe in bits.

    {references}
    """
    return _cross_entropy(trials, operating_point, queries)[0] / _LOG2


@shared_doc
def cnxe(trials: AlignedTrials, operating_point=SWS2013, queries: str = "evaluated") -> float:
    """Normalized cross-entropy ``C_nxe = C_xe / C_xe^prior`` (plan eqs. 39-40), bits per bit.

    0 for a perfect system, exactly 1 for one whose every LLR is 0, above 1 for harmful LLRs.
    ``queries`` as in :func:`cxe`.

    {trial_set_parameters}

    Returns
    -------
    float
        C_nxe in bits per bit.

    {references}
    """
    return normalized_cross_entropy(*_cross_entropy(trials, operating_point, queries))


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


@shared_doc
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

    {trial_set_parameters}

    Returns
    -------
    AffineRecalibration
        C_nxe^min, the C_nxe it improves on, and gamma, delta, llr_min.

    {references}
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


@shared_doc
def min_cnxe(trials: AlignedTrials, operating_point=SWS2013, queries: str = "evaluated") -> float:
    """C_nxe^min (plan eq. 45), bits per bit; see :func:`affine_recalibration`.

    {trial_set_parameters}

    Returns
    -------
    float
        C_nxe^min in bits per bit.

    {references}
    """
    return affine_recalibration(trials, operating_point, queries).min_cnxe
