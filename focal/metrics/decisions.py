"""Bayes decisions for any cost function (thesis ch. 2-3, eqs. 2.4-2.8): inputs and decisions.

An *application* is a prior ``pi`` over the N classes and a cost matrix ``C[d, i]``, the cost of
decision ``d`` when class ``i`` is true (:cite:t:`brummer2010thesis`, sec. 2.1 and eq. 6.1). The
Bayes decision minimizes the posterior expected cost::

    d*(l_t) = argmin_d  sum_i C[d, i] P(i | l_t, pi),    P(i | l, pi) ~ pi_i exp(l_i)

Binary inputs are 1-D natural-log LLRs with labels 1 = target, 0 = non-target (classes
(non-target, target)); multiclass inputs are ``(n_trials, N)`` log-likelihoods with labels
``0..N-1``. The empirical risk of these decisions, its normalization and its minima are in
:mod:`focal.metrics.bayes`.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logit, logsumexp

from ..core.multiclass import MulticlassTrials, as_llh_matrix, as_multiclass_trials, class_totals
from ..core.validation import as_binary_labels, as_score_array, check_prior, check_probability
from .costs import as_cost_matrix

__all__ = ["bayes_decisions"]

_CHUNK = 1 << 22  # elements of one (rows, decisions, classes) block
_TIE = 4.0 * np.finfo(float).eps  # per class: expected costs this close (relative) are equal


# ---------------------------------------------------------------------------------------------
# inputs


@dataclass(frozen=True)
class _Problem:
    """Validated inputs: binary (``llr`` 1-D, ``log_odds``) or multiclass (``llh``)."""

    cost: np.ndarray
    prior: np.ndarray
    llr: np.ndarray | None = None
    log_odds: float | None = None
    llh: np.ndarray | None = None
    trials: MulticlassTrials | None = None

    @property
    def n_trials(self) -> int:
        """Number of trials (rows of ``llr`` or ``llh``)."""
        scores = self.llr if self.llr is not None else self.llh
        return 0 if scores is None else scores.shape[0]


def binary_prior(prior):
    """``(prior vector (non-target, target), prior log-odds)`` of a binary prior given as
    ``p_target``, as a pair ``(1 - p, p)`` or None (1/2); both entries must be positive.
    Shared with :mod:`focal.metrics.combined` (not in ``__all__``).
    """
    arr = np.asarray(prior) if prior is not None else None
    if arr is None or arr.ndim == 0:
        p = 0.5 if prior is None else check_probability(prior, "prior")
        return np.array([1.0 - p, p]), float(logit(p))
    pv = check_prior(arr, 2)
    if (pv == 0).any():
        raise ValueError(f"a binary prior must be strictly between 0 and 1, got {pv.tolist()}")
    return pv, float(np.log(pv[1]) - np.log(pv[0]))


def _problem(llh, prior, cost, labels=None) -> _Problem:
    """Validated inputs; multiclass trials with ``labels`` are a
    :class:`focal.core.multiclass.MulticlassTrials`.
    """
    if isinstance(llh, MulticlassTrials):
        t = as_multiclass_trials(llh, labels, prior, who="the Bayes risk")
        return _Problem(cost=as_cost_matrix(cost, t.n_classes), prior=t.prior, llh=t.llh, trials=t)
    arr = np.asarray(llh)
    if arr.ndim == 1:
        llr = as_score_array(arr, "llh", allow_inf=True)
        pv, h = binary_prior(prior)
        return _Problem(cost=as_cost_matrix(cost, 2), prior=pv, llr=llr, log_odds=h)
    if labels is not None:
        t = MulticlassTrials(arr, labels, prior)
        return _Problem(cost=as_cost_matrix(cost, t.n_classes), prior=t.prior, llh=t.llh, trials=t)
    L = as_llh_matrix(arr, "llh")
    pv = check_prior(prior, L.shape[1])
    return _Problem(cost=as_cost_matrix(cost, L.shape[1]), prior=pv, llh=L)


def _labels(problem: _Problem, labels) -> np.ndarray:
    if problem.trials is not None:
        return problem.trials.labels
    if labels is None:
        raise ValueError("labels are missing: give the (llh, labels) arrays or a MulticlassTrials")
    try:
        y = as_binary_labels(labels).astype(np.int64)
    except ValueError as err:
        raise ValueError(
            f"llh is 1-D, so it is read as binary LLRs with labels 0/1, but {err}; multiclass "
            f"log-likelihoods must be a 2-D llh (n_trials, n_classes)"
        ) from None
    if y.shape[0] != problem.n_trials:
        raise ValueError(
            f"llh and labels have different numbers of trials ({problem.n_trials} and {y.shape[0]})"
        )
    class_totals(y, problem.prior)
    return y


# ---------------------------------------------------------------------------------------------
# decisions


def binary_envelope(cost: np.ndarray, log_odds: float):
    """Decisions on the lower envelope of the binary expected costs and their LLR thresholds.

    The expected cost of decision d at target posterior q is the line
    ``C[d, 0] (1 - q) + C[d, 1] q``; as q (equivalently the LLR) grows the Bayes decision walks
    along the lower envelope of these lines. Returns ``(decisions, thresholds)``: decision
    ``decisions[k]`` is taken for LLRs in ``[thresholds[k-1], thresholds[k])`` (ties go to the
    decision of the larger LLR, as "accept iff llr >= threshold" in :func:`focal.metrics.dcf`).
    The threshold between d and its successor e is ``-(h + log(b / a))`` with
    ``a = C[e, 0] - C[d, 0]``, ``b = C[d, 1] - C[e, 1]`` and prior log-odds ``h``: for DCF that is
    ``-(logit(P_target) + log(C_miss / C_fa))`` (thesis eq. 7.13).
    """
    c0, c1 = cost[:, 0], cost[:, 1]
    slope = c1 - c0
    # at q -> 0 the best decision: least non-target cost, then least slope (best just above 0)
    cands = np.flatnonzero(c0 == c0.min())
    d = int(cands[np.argmin(slope[cands])])
    decisions, thresholds = [d], []
    while True:
        later = np.flatnonzero((slope < slope[d]) & (c1 < c1[d]))
        if later.size == 0:  # (c1 >= c1[d]: the crossing is at q >= 1)
            break
        a = c0[later] - c0[d]  # >= 0: extra non-target cost
        b = c1[d] - c1[later]  # > 0: saved target cost
        with np.errstate(divide="ignore"):
            cross = np.log(a) - np.log(b)  # log-odds of the crossing posterior
        first = cross == cross.min()
        pick = later[first][np.argmin(slope[later[first]])]
        e = int(pick)
        ai, bi = float(c0[e] - c0[d]), float(c1[d] - c1[e])
        thresholds.append(-(log_odds + (np.log(bi) - np.log(ai))) if ai > 0 else -np.inf)
        decisions.append(e)
        d = e
    return np.array(decisions, dtype=np.int64), np.array(thresholds, dtype=float)


def _decide(problem: _Problem) -> np.ndarray:
    if problem.llr is not None and problem.log_odds is not None:
        dec, thr = binary_envelope(problem.cost, problem.log_odds)
        return dec[np.searchsorted(thr, problem.llr, side="right")]
    L, p, C = problem.llh, problem.prior, problem.cost
    assert L is not None  # a problem is binary (llr, log_odds) or multiclass (llh)
    act = p > 0
    W = C[:, act] * p[act]  # (D, N_active)
    with np.errstate(divide="ignore"):
        logw = np.log(W)  # -inf for zero cost
    D, Na = W.shape
    out = np.empty(L.shape[0], dtype=np.int64)
    step = max(1, _CHUNK // max(D, Na))
    for lo in range(0, L.shape[0], step):
        La = L[lo : lo + step, act]
        La = La - La.max(axis=1, keepdims=True)
        # expected costs up to the per-trial normalizer: exp(l - max) <= 1, one product
        R = np.exp(La) @ W.T
        out[lo : lo + step] = _first_least(R, R.min(axis=1, keepdims=True) * (_TIE * Na))
        # rows where the smallest expected cost is near underflow (or 0) are redone in the log
        # domain, exact for any magnitude; a decision costing 0 everywhere gets -inf and wins
        redo = np.flatnonzero(~(R.min(axis=1) > 1e-250) | ~np.isfinite(R).all(axis=1))
        sub = max(1, _CHUNK // (D * Na))
        for k in range(0, redo.size, sub):
            rows = redo[k : k + sub]
            r = logsumexp(La[rows][:, None, :] + logw[None, :, :], axis=2)
            out[lo + rows] = _first_least(r, _TIE * Na)  # log domain: a relative tolerance
    return out


def _first_least(R, tol):
    """Per row, the first column within ``tol`` of the row's least value: decisions whose
    expected costs are equal up to the rounding of their sums are ties, and the first wins.
    """
    least = R.min(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):  # -inf + tol (a decision that costs 0)
        return np.argmax(R <= least + tol, axis=1)


def bayes_decisions(llh, prior, cost) -> np.ndarray:
    """Bayes decisions of log-likelihoods for an application (prior, cost) (thesis eq. 2.8).

    Parameters
    ----------
    llh : array_like, shape (n_trials,) or (n_trials, N)
        Binary natural-log LLRs (1-D; ``±inf`` allowed) or multiclass natural-log likelihoods.
    prior : float, array_like of shape (N,), or None
        Binary: ``p_target`` or ``(1 - p_target, p_target)``. Multiclass: prior vector (zeros
        allowed). None: flat.
    cost : array_like, shape (n_decisions, N)
        ``cost[d, i]``: cost of decision d when class i is true (binary: classes (non-target,
        target)). Finite and non-negative.

    Returns
    -------
    ndarray of int, shape (n_trials,)
        Row index of the decision that minimizes the posterior expected cost. Binary: the
        decision is read off the lower envelope of the expected-cost lines (ties at a threshold
        go to the larger-LLR side, so reject/accept reproduces :func:`focal.metrics.dcf`
        exactly). Multiclass: expected costs compared directly, and in the log domain where
        they near underflow (exact for any magnitude); ties go to the first decision, costs
        equal up to the rounding of their sums (``4 N eps`` relative) being ties. (The rows of
        :func:`focal.metrics.lre_cost_matrix` list accepting decisions first, so a posterior
        exactly at CAVG's threshold is accepted, as thesis eq. 8.8 and
        :func:`focal.metrics.cavg` do.)

    Examples
    --------
    Detection with a refer option: refer costs 0.3, a miss 1, a false alarm 1, flat prior. A
    trial is referred when both errors are likely enough: between LLRs ``log(0.3/0.7)`` and
    ``log(0.7/0.3)``.

    >>> from focal.metrics import bayes_decisions, detection_cost_matrix
    >>> bayes_decisions([-2.0, 0.0, 2.0], 0.5, detection_cost_matrix(1, 1, c_refer=0.3))
    array([0, 2, 1])
    """
    return _decide(_problem(llh, prior, cost))
