"""Logarithmic proper scoring rule for binary LLRs and its prior-weighted empirical expectation.

A trial's logarithmic cost (thesis eq. 7.39, SWS plan eq. 37), for a natural-log LLR ``w`` at
prior log-odds ``h = logit(p_target)``, in nats::

    target:      log(1 + exp(-(w + h)))
    non-target:  log(1 + exp(  w + h ))

and the empirical cross-entropy weights each class by prior / count (thesis eq. 7.40). Both are
computed with ``logaddexp``, so LLRs of any magnitude (and +/-inf) are exact: a wrong infinite
LLR costs inf, a right one costs 0.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`sws2013measures` ("SWS plan").
"""

from __future__ import annotations

import numpy as np
from scipy.special import logit

from .priors import prior_entropy

__all__ = [
    "target_cost",
    "nontarget_cost",
    "cross_entropy_nats",
    "mean_costs_nats",
    "normalized_cross_entropy",
]

_LOG2 = float(np.log(2.0))


def target_cost(llr, plo):
    """Logarithmic cost (nats) of target trials at prior log-odds ``plo`` (thesis eq. 7.39).

    Parameters
    ----------
    llr : array_like
        Natural-log LLRs of target trials.
    plo : float
        Prior log-odds ``logit(p_target)``.

    Returns
    -------
    ndarray
        ``log(1 + exp(-(llr + plo)))`` per trial, in nats.

    References
    ----------
    .. [1] :cite:t:`brummer2010thesis` ("thesis").
    """
    return np.logaddexp(0.0, -(np.asarray(llr, dtype=float) + plo))


def nontarget_cost(llr, plo):
    """Logarithmic cost (nats) of non-target trials at prior log-odds ``plo`` (thesis eq. 7.39).

    Parameters
    ----------
    llr : array_like
        Natural-log LLRs of non-target trials.
    plo : float
        Prior log-odds ``logit(p_target)``.

    Returns
    -------
    ndarray
        ``log(1 + exp(llr + plo))`` per trial, in nats.

    References
    ----------
    .. [1] :cite:t:`brummer2010thesis` ("thesis").
    """
    return np.logaddexp(0.0, np.asarray(llr, dtype=float) + plo)


def _class_mean(costs: np.ndarray, weights) -> float:
    """Weighted mean of ``costs``; exactly the common value when all costs are equal.

    The exact case makes an uninformative system (every cost that of the zero LLR) score
    exactly its prior entropy and a perfect one exactly 0. Trials of zero weight are ignored
    even when their cost is infinite.
    """
    if weights is not None:
        w = np.asarray(weights, dtype=float)
        keep = w > 0
        if not keep.all():
            costs, w = costs[keep], w[keep]
    if costs.size and np.all(costs == costs[0]):
        return float(costs[0])
    if weights is None:
        return float(costs.mean())
    return float(np.dot(w, costs) / w.sum())


def cross_entropy_nats(
    tar_llr, non_llr, p_target: float, tar_weight=None, non_weight=None
) -> float:
    """Prior-weighted empirical cross-entropy E_log(W | p_target), in nats (thesis eq. 7.40).

    ``p/|T1| sum_t C_log(target) + (1-p)/|T2| sum_t C_log(non-target)``, where optional
    non-negative weights replace the trial counts (a trial of weight k counts as k trials; used
    for PAV blocks and for censored trials). ``p_target`` must already be validated.

    Parameters
    ----------
    tar_llr, non_llr : array_like
        Natural-log LLRs of the target and of the non-target trials.
    p_target : float
        Target prior in (0, 1).
    tar_weight, non_weight : array_like, optional
        Non-negative trial weights (None: every trial counts once).

    Returns
    -------
    float
        E_log in nats.

    References
    ----------
    .. [1] :cite:t:`brummer2010thesis` ("thesis").
    """
    c_t, c_n = mean_costs_nats(tar_llr, non_llr, p_target, tar_weight, non_weight)
    return p_target * c_t + (1.0 - p_target) * c_n


def mean_costs_nats(tar_llr, non_llr, p_target: float, tar_weight=None, non_weight=None):
    """Mean logarithmic cost of the target and of the non-target trials, in nats (eq. 7.39).

    The two class means that :func:`cross_entropy_nats` weighs by ``p_target`` and
    ``1 - p_target`` (thesis eq. 7.40). ``p_target`` must already be validated.

    Parameters
    ----------
    tar_llr, non_llr : array_like
        Natural-log LLRs of the target and of the non-target trials.
    p_target : float
        Target prior in (0, 1).
    tar_weight, non_weight : array_like, optional
        Non-negative trial weights (None: every trial counts once).

    Returns
    -------
    c_tar, c_non : float
        The two means, in nats.
    """
    plo = float(logit(p_target))
    c_t = _class_mean(target_cost(tar_llr, plo), tar_weight)
    c_n = _class_mean(nontarget_cost(non_llr, plo), non_weight)
    return c_t, c_n


def normalized_cross_entropy(xe_nats: float, p_target: float) -> float:
    """Cross-entropy in nats -> bits, divided by the prior entropy in bits (SWS plan eq. 40).

    The Cllr / C_nxe normalization: 1 for the uninformative system at every prior (exactly, as
    :func:`focal.core.priors.prior_entropy` uses the same expression), 0 for a perfect one.

    Parameters
    ----------
    xe_nats : float
        A cross-entropy in nats.
    p_target : float
        Target prior in (0, 1) it was computed at.

    Returns
    -------
    float
        The normalized cross-entropy in bits per bit.

    References
    ----------
    .. [1] :cite:t:`sws2013measures` ("SWS plan").
    """
    return xe_nats / _LOG2 / prior_entropy(p_target)
