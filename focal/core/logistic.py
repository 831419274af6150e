"""Prior-weighted logistic regression: the training criterion of binary fusion and calibration.

Fuses K recognizers' scores into one natural-log LLR ``w = b + sum_k a_k s_k`` (thesis eq. 8.16)
by minimizing the prior-weighted logarithmic cost (thesis sec. 8.3.1, eq. 8.17; eq. 7.40 is the
evaluation counterpart), in nats::

    O(a, b) = p / W_tar  sum_{t in tar} v_t log(1 + exp(-(w_t + logit p)))
            + (1-p) / W_non sum_{t in non} v_t log(1 + exp(  w_t + logit p ))
            + reg / 2 * sum_k (a_k sd_k)^2

with trial weights ``v`` (1 by default; W_tar, W_non their class totals) and ``sd_k`` the
prior-weighted standard deviation of system k's scores, so the penalty is in standardized units:
it does not depend on the scale or offset of the scores. It keeps perfectly separable data at
finite LLRs (their size is then set by ``reg``, not by the data) and is small enough (default
1e-9) to leave real fits unchanged: as the objective is an average over trials, the penalty
moves the weights by about ``reg`` divided by the smallest curvature of the average cost, a
relative change of order 1e-8 on real data.

The parameters are few and the trials many, so the optimizer is Newton's method with the exact
gradient and (K+1)x(K+1) Hessian, each computed in one pass over the data, in standardized
coordinates (well conditioned even for scores of magnitude 1e6), with a backtracking (Armijo)
line search. A pass reads the scores in blocks of rows that stay in cache (no copy of the data
is made) and needs one ``exp`` and one ``log1p`` per trial. Large problems start from the
solution on a fixed pseudo-random subsample of the trials, so only the last, quadratically
convergent Newton steps run on all the data. Everything is deterministic.

:func:`fit_scoring_rule` minimizes the same prior-weighted objective with another proper scoring
rule of the beta family (thesis eq. 8.15 with the rules of :mod:`focal.core.scoring_rules`); those
objectives are non-convex in general, so it refines a given starting point (normally the
logistic solution) with Newton steps on a modified Hessian.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, eigh
from scipy.special import logit

from .scoring_rules import BetaRule
from .threads import single_threaded_blas

__all__ = ["LogisticSolution", "fit_logistic", "fit_scoring_rule", "DEFAULT_REG"]

DEFAULT_REG = 1e-9
_CHUNK = 1 << 13  # rows per block: the block's temporaries stay in the CPU cache
_SUBSAMPLE = 1 << 16  # trials in the warm-start subsample of large problems
_MIN_CLASS_IN_SUBSAMPLE = 200


@dataclass(frozen=True)
class LogisticSolution:
    """Result of :func:`fit_logistic` and :func:`fit_scoring_rule`.

    Attributes
    ----------
    coef : ndarray, shape (K,)
        Weight of each system (LLR per unit of score).
    intercept : float
        LLR offset b (natural log), with ``logit(p_target)`` already removed.
    loss : float
        Prior-weighted expected cost at the solution, without the penalty: the logarithmic cost
        in nats (eq. 7.40) for :func:`fit_logistic`, the rule's cost (eq. 8.15) otherwise.
    penalty : float
        ``reg / 2 * sum (a_k sd_k)^2`` at the solution, in the units of ``loss``.
    n_iter : int
        Newton steps taken (including those of the warm start on a subsample).
    n_passes : int
        Passes over the data: one for the score statistics, one per objective evaluation, and
        the warm start's work rounded up to whole passes.
    grad_norm : float
        Euclidean norm of the gradient of the penalized objective in standardized coordinates.
    converged : bool
        Whether ``grad_norm <= tol`` was reached within ``max_iter`` iterations.

    When the training scores separate the classes perfectly (or nearly), the solution is held
    by the penalty: ``penalty`` is then of the order of ``loss`` (typically 0.5 to 10 times it),
    while on overlapping classes it is many orders of magnitude smaller.
    """

    coef: np.ndarray
    intercept: float
    loss: float
    penalty: float
    n_iter: int
    n_passes: int
    grad_norm: float
    converged: bool


class _Design:
    """The trials, ready for repeated passes in standardized coordinates theta = (a', b').

    ``a'_k = a_k sd_k`` and ``b' = b + sum_k a_k mean_k``: the LLR of trial t is
    ``sum_k a'_k (x_tk - mean_k) / sd_k + b'``. Means and standard deviations are weighted like
    the objective (prior / class total), so both classes count as they do in eq. 8.17.
    """

    def __init__(self, X, y, p_target, sample_weight, reg, center=None, scale=None):
        self.X = X
        self.y = y = np.asarray(y, dtype=bool)  # no copy for boolean labels
        self.n, self.K = X.shape
        self.p_target = float(p_target)
        self.plo = float(logit(p_target))
        self.reg = float(reg)
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=float)
        self.v = sample_weight
        if sample_weight is None:
            n_tar = int(np.count_nonzero(y))
            w_tar, w_non = n_tar, self.n - n_tar
        else:
            w_tar = float(sample_weight[y].sum())
            w_non = float(sample_weight.sum()) - w_tar
        # per-trial factor of eq. 8.17: prior / class total
        self.f_tar = self.p_target / w_tar
        self.f_non = (1.0 - self.p_target) / w_non
        self.n_passes = 0
        # centered scores of one block, transposed, with a row of ones for the intercept
        self._buf = np.empty((self.K + 1, min(_CHUNK, self.n)))
        self._buf[self.K] = 1.0
        if center is None:
            center, scale = self._moments()
        self.center = center
        self.scale = scale
        self._unscale = np.append(1.0 / scale, 1.0)
        # 0.5 sum_t c_t s_t (x_t, 1), s = -1 for targets: the constant part of the gradient
        self._g0 = None

    def _blocks(self):
        """Yield (centered scores with a row of ones (K+1, m), signed weights c*s) per block.

        s = -1 for targets and +1 for non-targets; c is the trial's weight in eq. 8.17.
        """
        buf = self._buf
        K = self.K
        for lo in range(0, self.n, _CHUNK):
            hi = min(lo + _CHUNK, self.n)
            S = buf[:, : hi - lo]
            np.subtract(self.X[lo:hi].T, self.center[:, None], out=S[:K])
            cs = np.where(self.y[lo:hi], -self.f_tar, self.f_non)
            if self.v is not None:
                cs *= self.v[lo:hi]
            yield S, cs

    def _moments(self):
        """Weighted mean and standard deviation of each system, in one pass.

        Each block's mean and sum of squared deviations are computed in cache, then merged
        (Chan, Golub & LeVeque), which is exact for a constant system (its standardized scores
        are then exactly 0) and free of cancellation for scores of large magnitude or with
        outliers.
        """
        self.center = np.array(self.X[0], dtype=float)
        K = self.K
        total = 0.0
        mean = np.zeros(K)
        m2 = np.zeros(K)
        self.n_passes += 1
        for S, cs in self._blocks():
            c = np.abs(cs)
            w = c.sum()
            if w == 0:
                continue
            m_b = (S[:K] @ c) / w
            dev = S[:K] - m_b[:, None]
            np.square(dev, out=dev)
            delta = m_b - mean
            merged = total + w
            mean += delta * (w / merged)
            m2 += dev @ c + delta * delta * (total * w / merged)
            total = merged
        sd = np.sqrt(m2 / total)
        return self.center + mean, np.where(sd > 0, sd, 1.0)

    def penalty(self, theta):
        a = theta[: self.K]
        return 0.5 * self.reg * float(a @ a)

    def _weights_on_block(self, theta):
        """Coefficients of (centered scores, 1) giving z = LLR + logit(p)."""
        w = theta * self._unscale
        w[self.K] += self.plo
        return w

    def _to_standard(self, grad_raw, hess_raw):
        """Gradient and Hessian with respect to the standardized parameters theta."""
        u = self._unscale
        return grad_raw * u, hess_raw * np.outer(u, u)

    def log_pass(self, theta):
        """Logarithmic cost (nats, data term), gradient and Hessian of the data term.

        Per trial with z = LLR + logit p, s = -1 (target) or +1 (non-target) and u = s z, the
        cost is ``softplus(u) = max(u, 0) + log1p(exp(-|z|))`` (eq. 7.39), its derivative in z
        is ``s sigmoid(u)`` and its second derivative ``sigmoid(z) sigmoid(-z)``, all from one
        ``exp(-|z|)``. Costs are summed without cancellation between trials, so the loss stays
        accurate when it is tiny (separable data).
        """
        self.n_passes += 1
        w = self._weights_on_block(theta)
        loss = 0.0
        grad = np.zeros(self.K + 1)
        hess = np.zeros((self.K + 1, self.K + 1))
        need_g0 = self._g0 is None
        if need_g0:
            g0 = np.zeros(self.K + 1)
        B = np.empty_like(self._buf)
        for S, cs in self._blocks():
            if need_g0:
                g0 += S @ cs
            z = w @ S
            c = np.abs(cs)
            cu = cs * z  # c u: the sign of u, and c max(u, 0) = max(c u, 0)
            e = np.abs(z, out=z)
            np.negative(e, out=e)
            np.exp(e, out=e)
            loss += np.maximum(cu, 0.0).sum() + c @ np.log1p(e)
            # d = sigmoid(|z|) - 1/2, so sigmoid(u) - 1/2 = copysign(d, u)
            d = np.add(e, 1.0, out=e)
            np.divide(1.0, d, out=d)
            d -= 0.5
            r = np.copysign(d, cu, out=cu)
            r *= cs
            grad += S @ r
            # sigmoid(z) sigmoid(-z) = 1/4 - d^2
            h = np.square(d, out=d)
            np.subtract(0.25, h, out=h)
            h *= c
            Bm = np.multiply(S, h, out=B[:, : h.shape[0]])
            hess += Bm @ S.T
        if need_g0:
            self._g0 = 0.5 * g0
        return float(loss), *self._to_standard(grad + self._g0, hess)

    def rule_pass(self, theta, rule):
        """Cost of ``rule`` (data term), its gradient and Hessian: the general, slower pass."""
        self.n_passes += 1
        w = self._weights_on_block(theta)
        loss = 0.0
        grad = np.zeros(self.K + 1)
        hess = np.zeros((self.K + 1, self.K + 1))
        for S, cs in self._blocks():
            c = np.abs(cs)
            keep = c > 0  # zero-weight trials may have infinite cost
            if not keep.all():
                S, cs, c = S[:, keep], cs[keep], c[keep]
            z = w @ S
            cost, d1, d2 = rule.cost_and_derivatives(z, cs < 0)
            loss += c @ cost
            grad += S @ (d1 * c)
            hess += (S * (d2 * c)) @ S.T
        return float(loss), *self._to_standard(grad, hess)

    def objective(self, theta, rule):
        """Penalized objective, its gradient and Hessian in standardized coordinates."""
        if rule is None:
            loss, grad, hess = self.log_pass(theta)
        else:
            loss, grad, hess = self.rule_pass(theta, rule)
        K = self.K
        grad[:K] += self.reg * theta[:K]
        hess[np.arange(K), np.arange(K)] += self.reg
        return loss, self.penalty(theta), grad, hess

    def to_standard(self, coef, intercept):
        theta = np.empty(self.K + 1)
        theta[: self.K] = coef * self.scale
        theta[self.K] = intercept + coef @ self.center
        return theta

    def to_original(self, theta):
        a = theta[: self.K] / self.scale
        return a, float(theta[self.K] - a @ self.center)


def _descent_direction(grad, hess):
    """Newton direction; on an indefinite or singular Hessian, that of a modified Hessian.

    The modification replaces each eigenvalue by its absolute value, floored at a small fraction
    of the largest (Nocedal & Wright, sec. 3.4), so the direction is always a descent direction.
    """
    try:
        return -cho_solve(cho_factor(hess), grad)
    except LinAlgError:
        lam, vec = eigh(hess)
        top = max(float(np.max(np.abs(lam))), np.finfo(float).tiny)
        lam = np.maximum(np.abs(lam), 1e-10 * top)
        return -(vec @ ((vec.T @ grad) / lam))


def _newton(design, theta, rule, tol, max_iter):
    """Damped Newton iterations from ``theta`` until the gradient norm is at most ``tol``."""
    loss, pen, grad, hess = design.objective(theta, rule)
    n_iter = 0
    gnorm = float(np.linalg.norm(grad))
    eps = np.finfo(float).eps
    while gnorm > tol and n_iter < max_iter:
        d = _descent_direction(grad, hess)
        slope = float(grad @ d)
        if not slope < 0:  # round-off has swamped the direction: steepest descent
            d = -grad
            slope = -(gnorm**2)
        f0 = loss + pen
        step = 1.0
        for _ in range(60):
            cand = theta + step * d
            c_loss, c_pen, c_grad, c_hess = design.objective(cand, rule)
            f1 = c_loss + c_pen
            # Armijo condition, with a few ulps of slack for round-off at the optimum
            if f1 <= f0 + 1e-4 * step * slope + 16 * eps * abs(f0):
                break
            step *= 0.5
        else:
            break
        if not np.all(np.isfinite(c_grad)):
            break
        n_iter += 1
        theta, loss, pen, grad, hess = cand, c_loss, c_pen, c_grad, c_hess
        gnorm = float(np.linalg.norm(grad))
    return theta, loss, pen, gnorm, n_iter


def _warm_start(design, tol, max_iter):
    """Solve on a fixed pseudo-random subsample; return (theta, n_iter, passes) or None.

    Only the start point comes from the subsample: the full-data Newton steps that follow
    decide the solution. Returns None when the problem is small or the subsample misses a class.
    """
    n = design.n
    if n < 8 * _SUBSAMPLE:
        return None
    idx = np.sort(np.random.default_rng(20100101).integers(0, n, _SUBSAMPLE))
    ys = design.y[idx]
    vs = None if design.v is None else design.v[idx]
    n_tar = int(np.count_nonzero(ys if vs is None else ys & (vs > 0)))
    n_non = int(np.count_nonzero(~ys if vs is None else ~ys & (vs > 0)))
    if min(n_tar, n_non) < _MIN_CLASS_IN_SUBSAMPLE:
        return None
    sub = _Design(design.X[idx], ys, design.p_target, vs, design.reg, design.center,
                  design.scale)
    theta, _, _, _, n_iter = _newton(sub, np.zeros(design.K + 1), None, max(tol, 1e-7), max_iter)
    passes = -(-sub.n_passes * _SUBSAMPLE // n)  # ceil: the subsample work in whole passes
    return theta, n_iter, passes


def fit_logistic(X, y, p_target=0.5, sample_weight=None, reg=DEFAULT_REG, tol=1e-10,
                 max_iter=100, init=None) -> LogisticSolution:
    """Minimize the prior-weighted logarithmic cost over an affine fusion (thesis eq. 8.17).

    Parameters
    ----------
    X : ndarray of float64, shape (n_trials, K)
        Scores of K systems; already validated (finite). Not modified and not copied.
    y : ndarray of bool (or 0/1), shape (n_trials,)
        True for target trials; both classes must have positive total weight.
    p_target : float
        Effective target prior in (0, 1) at which the cost is weighted.
    sample_weight : ndarray of float, shape (n_trials,), optional
        Non-negative trial weights (counts): a trial of weight k counts as k trials.
    reg : float
        L2 penalty on the standardized weights (see the module docstring); ``reg=0`` gives the
        unpenalized fit, which does not exist for perfectly separable data.
    tol : float
        Stop when the gradient norm (standardized coordinates, nats) is at most ``tol``.
    max_iter : int
        Maximum number of Newton iterations on the full data.
    init : tuple (coef, intercept), optional
        Starting point in original units; default: the solution on a subsample of the trials
        (large problems) or all zeros.

    Returns
    -------
    LogisticSolution
    """
    with single_threaded_blas(X.shape[0] > _CHUNK):
        return _fit_logistic(X, y, p_target, sample_weight, reg, tol, max_iter, init)


def _fit_logistic(X, y, p_target, sample_weight, reg, tol, max_iter, init):
    design = _Design(X, y, p_target, sample_weight, reg)
    theta, n_iter = _start(design, tol, max_iter, init)
    theta, loss, pen, gnorm, steps = _newton(design, theta, None, tol, max_iter)
    return _solution(design, theta, loss, pen, gnorm, n_iter + steps, tol)


def _start(design, tol, max_iter, init):
    """Starting point (standardized) and the Newton steps spent finding it."""
    if init is not None:
        return design.to_standard(np.asarray(init[0], dtype=float), float(init[1])), 0
    warm = _warm_start(design, tol, max_iter)
    if warm is None:
        return np.zeros(design.K + 1), 0
    theta, n_iter, passes = warm
    design.n_passes += passes
    return theta, n_iter


def fit_scoring_rule(X, y, rule: BetaRule, p_target=0.5, sample_weight=None, reg=DEFAULT_REG,
                     tol=1e-10, max_iter=100, init=None) -> LogisticSolution:
    """Minimize the prior-weighted cost of a beta-family proper scoring rule (thesis eq. 8.15).

    The same affine model, penalty, weighting and standardization as :func:`fit_logistic`, with
    the logarithmic cost replaced by ``rule`` (:class:`focal.core.scoring_rules.BetaRule`).
    Unless ``rule.convex`` (a, b <= 1, e.g. the boosting rule) the objective is not convex in
    the parameters and may have several local minima: this refines ``init`` to the nearest one,
    by Newton's method on the exact gradient and a modified (positive definite) Hessian with a
    line search. Start it from the logistic solution (the default), which is what focal's
    estimators do. The logarithmic rule is handed to :func:`fit_logistic`.

    Parameters are those of :func:`fit_logistic`; ``init`` defaults to the logistic solution.
    """
    if rule.is_logarithmic:
        return fit_logistic(X, y, p_target, sample_weight, reg, tol, max_iter, init)
    with single_threaded_blas(X.shape[0] > _CHUNK):
        return _fit_scoring_rule(X, y, rule, p_target, sample_weight, reg, tol, max_iter, init)


def _fit_scoring_rule(X, y, rule, p_target, sample_weight, reg, tol, max_iter, init):
    design = _Design(X, y, p_target, sample_weight, reg)
    theta, n_iter = _start(design, tol, max_iter, init)
    if init is None:  # start from the logistic solution: the nearest convex problem
        theta, _, _, _, steps = _newton(design, theta, None, tol, max_iter)
        n_iter += steps
    theta, loss, pen, gnorm, steps = _newton(design, theta, rule, tol, max_iter)
    return _solution(design, theta, loss, pen, gnorm, n_iter + steps, tol)


def _solution(design, theta, loss, pen, gnorm, n_iter, tol):
    coef, intercept = design.to_original(theta)
    return LogisticSolution(
        coef=coef,
        intercept=intercept,
        loss=loss,
        penalty=pen,
        n_iter=n_iter,
        n_passes=design.n_passes,
        grad_norm=gnorm,
        converged=gnorm <= tol,
    )
