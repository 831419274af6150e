"""Combined evaluation criteria: several applications as one, and the truncated Cllr.

* :func:`combine_applications`: K applications ``(pi_k, C_k)`` weighted by ``rho_k >= 0``
  evaluated at once. The thesis :cite:p:`brummer2010thesis`, sec. 6.2, shows that the weighted sum
  of their Bayes risks is the Bayes risk of a *single* application ``(C_rho, pi~)`` whose decisions
  are compound, one decision per application (sec. 3.5.1, eqs. 3.14-3.15), with
  ``pi_ik C_k(a | i) = pi~_i C~_k(a | i)`` (eq. 6.3) and ``C_rho(a_1..a_K | i) = sum_k rho_k
  C~_k(a_k | i)`` (eq. 6.6); eq. 6.7 is the identity. Proper scoring rules are closed under such
  conical combinations (eq. 3.21). The NIST SRE'12 primary criterion, the average of the
  normalized DCFs at P_target = 0.01 and 0.001 (Brümmer's Odyssey 2012 keynote: "a mixture of
  two operating points"), is the worked example.
* :func:`truncated_cllr`: the logarithmic rule with its flat weighting over Bayes thresholds
  restricted to a range of prior log-odds (the keynote's "truncated Cllr", a fixed-threshold
  version of Doddington's proposal aimed at the low false-alarm region), beside the
  prior-shifted Cllr of :func:`focal.metrics.cllr` (``p_target`` != 1/2).

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`brummer2012keynote` ("the keynote").
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np
from scipy.special import expit

from ..core.validation import check_prior
from .binary_scores import score_arrays, sorted_scores
from .costs import as_cost_matrix
from .decisions import binary_prior

__all__ = ["CombinedApplication", "combine_applications", "truncated_cllr", "min_truncated_cllr"]


@dataclass(frozen=True)
class CombinedApplication:
    """The single application equivalent to a weighted set of applications (thesis eq. 6.7).

    Attributes
    ----------
    prior : ndarray, shape (N,)
        ``pi~``: the ``rho``-weighted mean of the applications' priors (normalized).
    cost : ndarray, shape (prod_k D_k, N)
        ``C_rho``: cost of every compound decision (eq. 6.6).
    decisions : ndarray of int, shape (prod_k D_k, K)
        Row d holds the decision index of each application in compound decision d.

    ``bayes_risk(llh, labels, prior, cost, normalize=False)`` with these equals
    ``sum_k rho_k bayes_risk(llh, labels, pi_k, C_k, normalize=False)``.
    """

    prior: np.ndarray
    cost: np.ndarray
    decisions: np.ndarray


def combine_applications(applications, weights=None) -> CombinedApplication:
    """One compound application equivalent to ``sum_k rho_k E_k`` (thesis sec. 6.2, eqs. 6.2-6.7).

    Parameters
    ----------
    applications : sequence of (prior, cost)
        K applications over the same N classes. ``prior`` is a probability vector (or, for
        binary detection, ``p_target``; classes (non-target, target)); ``cost[d, i]`` as in
        :func:`focal.metrics.bayes_decisions`.
    weights : sequence of float, optional
        ``rho_k >= 0`` (default 1 each). To average *normalized* risks, as NIST does, use
        ``rho_k = w_k / default_bayes_risk(pi_k, C_k)``.

    Returns
    -------
    CombinedApplication
        The equivalent prior and cost matrix (and the decisions they allow).

    Examples
    --------
    The SRE'12 primary cost: the mean of the normalized DCFs at P_target 0.01 and 0.001 (unit
    costs), whose defaults are 0.01 and 0.001.

    >>> import numpy as np
    >>> from focal.metrics import bayes_risk, combine_applications, dcf, detection_cost_matrix
    >>> C = detection_cost_matrix(1.0, 1.0)
    >>> sre12 = combine_applications([(0.01, C), (0.001, C)], [0.5 / 0.01, 0.5 / 0.001])
    >>> sre12.decisions.tolist()          # (reject, reject), (reject, accept), ...
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    >>> tar, non = np.array([2.0, 5.0, 8.0]), np.array([-3.0, 0.0, 5.0])
    >>> llr, y = np.r_[tar, non], [1, 1, 1, 0, 0, 0]
    >>> combined = bayes_risk(llr, y, sre12.prior, sre12.cost, normalize=False)
    >>> bool(np.isclose(combined, (dcf(tar, non, 0.01) + dcf(tar, non, 0.001)) / 2))
    True
    """
    apps = list(applications)
    if not apps:
        raise ValueError("applications must hold at least one (prior, cost) pair")
    rho = np.ones(len(apps)) if weights is None else np.asarray(weights, dtype=float)
    if (
        rho.shape != (len(apps),)
        or not np.isfinite(rho).all()
        or (rho < 0).any()
        or not (rho > 0).any()
    ):
        raise ValueError(
            f"weights must be {len(apps)} finite non-negative numbers, not all zero; "
            f"got {weights!r}"
        )
    priors, costs = [], []
    for k, app in enumerate(apps):
        if not isinstance(app, (tuple, list)) or len(app) != 2:
            raise ValueError(f"applications[{k}] must be a (prior, cost) pair")
        prior, cost = app
        C = np.asarray(cost)
        n = C.shape[1] if C.ndim == 2 else -1
        C = as_cost_matrix(C, n, f"applications[{k}] cost")
        if np.ndim(prior) == 0 and n == 2:
            pv = binary_prior(prior)[0]
        else:
            pv = check_prior(prior, n, f"applications[{k}] prior")
        priors.append(pv)
        costs.append(C)
    N = costs[0].shape[1]
    if any(C.shape[1] != N for C in costs):
        raise ValueError("all applications must have cost matrices over the same classes")
    P = np.array(priors)  # (K, N)
    pt = rho @ P / rho.sum()  # pi~, > 0 where any pi_k > 0
    scaled = [
        np.divide(pk * Ck, pt, out=np.zeros_like(Ck), where=pt > 0)  # C~_k (eq. 6.3)
        for pk, Ck in zip(P, costs)
    ]
    combos = np.array(list(product(*[range(C.shape[0]) for C in costs])), dtype=np.int64)
    total = sum(rho[k] * scaled[k][combos[:, k]] for k in range(len(apps)))  # eq. 6.6
    return CombinedApplication(prior=pt, cost=np.asarray(total), decisions=combos)


def _softplus(x):
    return np.logaddexp(0.0, x)


def truncated_cllr(tar, non=None, prior_log_odds_range=(-np.inf, np.inf)) -> float:
    """Truncated Cllr: the logarithmic rule restricted to a range of operating points, bits/bit.

    Cllr weights every Bayes threshold ``eta`` on the posterior ``q = sigmoid(llr)`` (prior
    1/2) uniformly (thesis eq. 7.34 with ``rho = 1``, eq. 7.39). The truncated Cllr of Brümmer's
    Odyssey 2012 keynote keeps that flat weighting only on the thresholds of the applications
    of interest and renormalizes it to integrate to 1. The applications are given as a range
    ``[h_lo, h_hi]`` of (effective) prior log-odds: application h has Bayes threshold ``-h`` on
    the LLR, i.e. ``eta = sigmoid(-h)``, so ``rho(eta) = 1 / (eta_hi - eta_lo)`` on
    ``[sigmoid(-h_hi), sigmoid(-h_lo)]``. The costs of eq. 7.35 are then, in nats,

    ``C(q | tar) = log(eta_hi / max(q, eta_lo)) / (eta_hi - eta_lo)`` if ``q < eta_hi``, else 0;
    ``C(q | non) = log((1 - eta_lo) / (1 - min(q, eta_hi))) / (eta_hi - eta_lo)`` if
    ``q > eta_lo``, else 0,

    averaged with weights 1/2 over targets and non-targets, and divided by the value of the
    all-zero (uninformative) system, so that system scores 1, as in :func:`focal.metrics.cllr`.
    The full range ``(-inf, inf)`` is Cllr itself. A range ``(-inf, h)`` keeps the LLR
    thresholds above ``-h``: with ``h`` well below 0 (e.g. ``logit(0.01)``) that is the low
    false-alarm region the keynote aims at; ``(h, inf)`` keeps the low-miss region. Unlike the
    prior-shifted Cllr (:func:`focal.metrics.cllr` at ``p_target`` != 1/2), which still weighs
    every threshold,
    it ignores errors at thresholds outside the range entirely.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / RocHull as ``tar`` alone
        Natural-log LLRs of target and non-target trials (``±inf`` allowed); or, with ``non``
        omitted, a :class:`focal.metrics.BinaryScores` or :func:`focal.metrics.rocch` result of
        them, whose sort is reused (pass ``prior_log_odds_range`` by keyword then).
    prior_log_odds_range : (float, float)
        ``h_lo < h_hi``, natural-log prior log-odds; either may be infinite.

    Returns
    -------
    float
        Normalized: 0 perfect, 1 uninformative (bits per bit).

    Examples
    --------
    >>> import numpy as np
    >>> from focal.metrics import cllr, truncated_cllr
    >>> tar, non = np.array([1.0, 3.0, -0.5]), np.array([-2.0, 0.5, -4.0])
    >>> bool(np.isclose(truncated_cllr(tar, non), cllr(tar, non)))
    True
    >>> truncated_cllr(np.zeros(2), np.zeros(3), (-5.0, -2.0))
    1.0
    """
    h_lo, h_hi = _check_range(prior_log_odds_range)
    t, n = score_arrays(tar, non)
    return _truncated(t, n, h_lo, h_hi)


def min_truncated_cllr(tar, non=None, prior_log_odds_range=(-np.inf, np.inf)) -> float:
    """Truncated Cllr after the optimal monotone recalibration (PAV), bits per bit.

    The PAV LLRs minimize every proper scoring rule among monotone score transformations
    (thesis sec. 7.7; they do not depend on the rule or the prior), so this is the
    discrimination part of :func:`truncated_cllr` over the same range, and
    ``truncated_cllr - min_truncated_cllr`` its calibration loss. The full range gives
    :func:`focal.metrics.min_cllr`.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / RocHull as ``tar`` alone
        Scores of target and non-target trials (any monotone scale); or, with ``non`` omitted,
        a :class:`focal.metrics.BinaryScores` or :func:`focal.metrics.rocch` result of them,
        whose sort and PAV are reused (pass ``prior_log_odds_range`` by keyword then).
    prior_log_odds_range : (float, float)
        As in :func:`truncated_cllr`.

    Returns
    -------
    float
        The minimum truncated Cllr in bits per bit, in [0, 1].
    """
    h_lo, h_hi = _check_range(prior_log_odds_range)
    scores = sorted_scores(tar, non)
    result = scores.hull.pav
    t, n = scores.trials.tar, scores.trials.non
    return _truncated(
        result.llr[result.block_index(t)], result.llr[result.block_index(n)], h_lo, h_hi
    )


def _check_range(prior_log_odds_range):
    try:
        h_lo, h_hi = (float(v) for v in prior_log_odds_range)
    except (TypeError, ValueError):
        raise ValueError(
            f"prior_log_odds_range must be two numbers (h_lo, h_hi), got {prior_log_odds_range!r}"
        ) from None
    if np.isnan(h_lo) or np.isnan(h_hi) or not h_lo < h_hi:
        raise ValueError(
            f"prior_log_odds_range must have h_lo < h_hi, got {prior_log_odds_range!r}"
        )
    if not float(expit(-h_lo) - expit(-h_hi)) > 0:
        raise ValueError(
            f"prior_log_odds_range {prior_log_odds_range!r} is too narrow "
            "(its thresholds coincide in double precision)"
        )
    return h_lo, h_hi


def _truncated(t, n, h_lo, h_hi) -> float:
    """The normalized truncated Cllr of validated LLRs (see :func:`truncated_cllr`)."""
    width = float(expit(-h_lo) - expit(-h_hi))  # eta_hi - eta_lo
    log_eta_hi, log_eta_lo = -_softplus(h_lo), -_softplus(h_hi)
    log_1m_eta_lo, log_1m_eta_hi = -_softplus(-h_hi), -_softplus(-h_lo)

    def target_cost(llr):
        log_q = -_softplus(-llr)
        return np.maximum(log_eta_hi - np.maximum(log_q, log_eta_lo), 0.0) / width

    def nontarget_cost(llr):
        log_1mq = -_softplus(llr)
        return np.maximum(log_1m_eta_lo - np.maximum(log_1mq, log_1m_eta_hi), 0.0) / width

    value = 0.5 * target_cost(t).mean() + 0.5 * nontarget_cost(n).mean()
    zero = np.zeros(1)
    default = 0.5 * target_cost(zero)[0] + 0.5 * nontarget_cost(zero)[0]
    return float(value / default)
