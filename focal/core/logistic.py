"""Prior-weighted logistic regression: the training criterion of binary fusion and calibration.

Fuses K recognizers' scores into one natural-log LLR ``w = b + sum_k a_k s_k`` (thesis eq. 8.16)
by minimizing the prior-weighted logarithmic cost (thesis sec. 8.3.1, eq. 8.17; eq. 7.40 is the
evaluation counterpart), in nats::

    O(a, b) = p / W_tar  sum_{t in tar} v_t log(1 + exp(-(w_t + logit p)))
            + (1-p) / W_non sum_{t in non} v_t log(1 + exp(  w_t + logit p ))
            + reg / 2 * H_2(p) * sum_k (a_k sd_k)^2

with trial weights ``v`` (1 by default; W_tar, W_non their class totals), ``sd_k`` the
prior-weighted standard deviation of system k's scores and ``H_2(p)`` the prior entropy in bits
(:func:`focal.core.priors.prior_entropy`: the cost of the uninformative system relative to its
cost at p = 0.5). The penalty is thus in standardized units (it does not depend on the scale or
offset of the scores) and relative to the size of the objective (it does not depend on the
prior either: without ``H_2(p)`` the default would dominate the objective, of size 3e-11 nats,
at p = 1e-12). It keeps perfectly separable data at finite LLRs (their size is then set by
``reg``, not by the data). The default 1e-9 moves the weights by about ``reg`` divided by the
curvature of the normalized average cost along them, which is small when the classes are well
separated (most trials then contribute little curvature). Measured against ``reg=0``: on
VoxCeleb1-O cosine scores (37,720 trials, EER 1.6 %) a relative change of 1e-6 in the weights
and 2e-5 nats in the LLRs at p = 0.5 (2e-7 at p = 0.01); on overlapping scores (the speaker
sample data) 1e-7 and 3e-6 nats. Both are far below the sampling error of the fits.

The parameters are few and the trials many, so the optimizer is Newton's method
(:func:`focal.core.newton.minimize_newton`, focal's one solver) with the exact gradient and
(K+1)x(K+1) Hessian, each computed in one pass over the data, in standardized coordinates
(blocks of scores are scaled by exact powers of two, so scores of magnitude 1e-300 to 1e300 fit
as well as ordinary ones), with a backtracking (Armijo) line search and a scale-free stopping
rule (the gradient relative to the cost of the uninformative system, so priors from 1e-300 to
1 - 1e-16 converge to the optimum). A pass reads the scores in blocks of rows that stay in cache
(no copy of the data is made) and needs one ``exp`` and one ``log1p`` per trial. Large problems
start from the solution on a fixed pseudo-random subsample of the trials, so only the last,
quadratically convergent Newton steps run on all the data. Everything is deterministic.

:func:`fit_scoring_rule` minimizes the same prior-weighted objective with another proper scoring
rule of the beta family (thesis eq. 8.15 with the rules of :mod:`focal.core.scoring_rules`); those
objectives are non-convex in general, so it refines a given starting point (normally the
logistic solution) with Newton steps on a modified Hessian.

References
----------
.. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
   extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logit

from .moments import check_spreads, merged_moments
from .newton import dense_solver, minimize_newton
from .scoring_rules import LOGARITHMIC, BetaRule, default_expected_cost
from .threads import single_threaded_blas

__all__ = ["LogisticSolution", "fit_logistic", "fit_scoring_rule", "DEFAULT_REG", "ROUND_OFF_FLOOR"]

DEFAULT_REG = 1e-9
_CHUNK = 1 << 13  # rows per block: the block's temporaries stay in the CPU cache
_SUBSAMPLE = 1 << 16  # trials in the warm-start subsample of large problems
_MIN_CLASS_IN_SUBSAMPLE = 200
# gradient thresholds (tol times the objective's scale, nats) below which the passes compute
# derivatives to full relative precision instead of to an ulp of 1/2 per trial
ROUND_OFF_FLOOR = 1e-13
# longest Newton step of a non-convex rule's fit, in standardized units (a change of the LLRs of
# about this many nats per standard deviation of the scores): keeps the refinement of the
# logistic start from jumping onto the plateau where every trial's cost is saturated
_MAX_RULE_STEP = 1.0


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
        ``reg / 2 * H_2(p) * sum (a_k sd_k)^2`` at the solution (module docstring; for another
        rule ``H_2(p)`` is replaced by the rule's default cost at p over its value at 0.5), in
        the units of ``loss``.
    n_iter : int
        Newton steps taken (including those of the warm start on a subsample).
    n_passes : int
        Passes over the data: one for the score statistics, one per objective evaluation, and
        the warm start's work rounded up to whole passes.
    grad_norm : float
        Euclidean norm of the gradient of the penalized objective in standardized coordinates.
    converged : bool
        Whether the stopping rule (``grad_norm <= tol * H_2(p)``, module docstring) was met
        within ``max_iter`` iterations.

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
        if min(self.p_target, 1.0 - self.p_target) < np.finfo(float).tiny:
            raise ValueError(
                f"p_target={self.p_target!r} is too close to 0 or 1: a prior "
                "below the normal floating-point range (2.2e-308) cannot weight "
                "the training cost accurately"
            )
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
        self._pow2 = None
        self._g0 = None  # 1/2 sum_t c_t s_t (x_t, 1): the constant part of the fast gradient
        self.accurate = True  # derivatives to full relative precision (see log_pass)
        if center is None:
            center, scale = self._moments()
        self.center = center
        self.scale = scale
        # scores of extreme spread: blocks hold (x - center) * 2^-e with 2^e the power of two
        # nearest the spread (exact scaling), so the sums of squares of a pass neither overflow
        # (scores ~1e154) nor underflow (~1e-170); ordinary scores are used as they are
        if np.all((scale > 1e-100) & (scale < 1e100)):
            self._unscale = np.append(1.0 / scale, 1.0)
        else:
            self._pow2 = np.ldexp(1.0, -np.frexp(scale)[1])
            self._unscale = np.append(1.0 / (scale * self._pow2), 1.0)

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
            if self._pow2 is not None:
                S[:K] *= self._pow2[:, None]
            cs = np.where(self.y[lo:hi], -self.f_tar, self.f_non)
            if self.v is not None:
                cs *= self.v[lo:hi]
            yield S, cs

    def _moments(self):
        """Weighted mean and standard deviation of each system (:func:`merged_moments`).

        One plain pass; when a spread comes out outside [1e-140, 1e140] (or not finite) the
        pass is repeated with power-of-two scaling, so scores of any magnitude standardize.
        A constant system gets its standardized scores exactly 0. ValueError
        (:func:`check_spreads`) for scores whose differences overflow or whose spread is
        subnormal (its weight would overflow).
        """
        self.center = np.array(self.X[0], dtype=float)
        self.n_passes += 1
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            mean, sd = merged_moments(self._blocks(), self.K, scaled=False)
            if not np.all((sd > 1e-140) & (sd < 1e140)):
                self.n_passes += 1
                mean, sd = merged_moments(self._blocks(), self.K, scaled=True)
        check_spreads(sd, "scores")
        return self.center + mean, np.where(sd > 0, sd, 1.0)

    def penalty_weight(self, rule):
        """``reg`` times the objective's natural size (:func:`_objective_scale`)."""
        return self.reg * _objective_scale(self.p_target, rule)

    def penalty(self, theta, rule=None):
        a = theta[: self.K]
        return 0.5 * self.penalty_weight(rule) * float(a @ a)

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
        ``e = exp(-|z|)``: ``sigmoid(u)`` is ``1 / (1 + e)`` for u > 0 and ``e / (1 + e)``
        otherwise, ``sigmoid(z) sigmoid(-z) = e / (1 + e)^2``, each to full relative precision
        (no difference of numbers near 1/2: at extreme priors every trial's derivative is
        tiny, and a sum of absolutely accurate but relatively inaccurate terms would stall the
        fit). Costs are summed without cancellation between trials, so the loss stays accurate
        when it is tiny (separable data, extreme priors).

        When the stopping threshold is far above round-off (``self.accurate`` false: ordinary
        priors), the derivatives take a cheaper form, ``sigmoid(u) = 1/2 + copysign(d, u)`` with
        ``d = sigmoid(|z|) - 1/2`` (the 1/2 summed once over the data) and ``sigmoid(z)
        sigmoid(-z) = 1/4 - d^2``: its error, an ulp of 1/2 per trial, sums to about 1e-16 of
        the objective's weight, far below ``tol`` times its scale (:data:`ROUND_OFF_FLOOR`).
        """
        self.n_passes += 1
        w = self._weights_on_block(theta)
        loss = 0.0
        grad = np.zeros(self.K + 1)
        hess = np.zeros((self.K + 1, self.K + 1))
        B = np.empty_like(self._buf)
        Q = np.empty((2, B.shape[1]))
        P = np.empty(B.shape[1], dtype=bool)
        fast = not self.accurate
        need_g0 = fast and self._g0 is None
        g0 = np.zeros(self.K + 1)
        for S, cs in self._blocks():
            if need_g0:
                g0 += S @ cs
            z = w @ S
            m = z.shape[0]
            q, r, pos = Q[0, :m], Q[1, :m], P[:m]
            c = np.abs(cs)
            cu = cs * z  # c u: the sign of u, and c max(u, 0) = max(c u, 0)
            e = np.abs(z, out=z)
            np.negative(e, out=e)
            np.exp(e, out=e)
            loss += np.maximum(cu, 0.0).sum() + c @ np.log1p(e)
            if fast:
                d = np.add(e, 1.0, out=e)
                np.divide(1.0, d, out=d)
                d -= 0.5
                r = np.copysign(d, cu, out=cu)
                r *= cs
                grad += S @ r
                h = np.square(d, out=d)
                np.subtract(0.25, h, out=h)
                h *= c
                hess += np.multiply(S, h, out=B[:, :m]) @ S.T
                continue
            np.add(e, 1.0, out=q)
            np.divide(1.0, q, out=q)  # sigmoid(|u|)
            np.multiply(e, q, out=r)  # sigmoid(-|u|)
            np.greater(cu, 0.0, out=pos)
            np.copyto(r, q, where=pos)  # sigmoid(u)
            r *= cs
            grad += S @ r
            h = np.multiply(e, q, out=e)
            h *= q
            h *= c
            Bm = np.multiply(S, h, out=B[:, :m])
            hess += Bm @ S.T
        if need_g0:
            self._g0 = 0.5 * g0
        if fast:
            grad += self._g0
        return float(loss), *self._to_standard(grad, hess)

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
        reg = self.penalty_weight(rule)
        grad[:K] += reg * theta[:K]
        hess[np.arange(K), np.arange(K)] += reg
        return loss, self.penalty(theta, rule), grad, hess

    def to_standard(self, coef, intercept):
        theta = np.empty(self.K + 1)
        theta[: self.K] = coef * self.scale
        theta[self.K] = intercept + coef @ self.center
        return theta

    def to_original(self, theta):
        a = theta[: self.K] / self.scale
        return a, float(theta[self.K] - a @ self.center)


def _newton(design, theta, rule, tol, max_iter):
    """Damped Newton iterations from ``theta`` (:func:`focal.core.newton.minimize_newton`).

    The stopping rule is scale-free: the gradient norm (standardized parameters) is compared
    with ``tol`` times the cost of the uninformative system at ``p_target`` relative to its cost
    at ``p_target = 0.5`` (:func:`_objective_scale`). Returns (theta, loss, penalty, grad_norm,
    n_iter, converged).
    """

    def evaluate(t):
        loss, pen, grad, hess = design.objective(t, rule)
        return loss + pen, grad, dense_solver(hess), (loss, pen)

    convex = rule is None or rule.convex
    f_scale = _objective_scale(design.p_target, rule)
    design.accurate = tol * f_scale < ROUND_OFF_FLOOR
    res = minimize_newton(
        evaluate,
        theta,
        tol=tol,
        max_iter=max_iter,
        f_scale=f_scale,
        max_step=np.inf if convex else _MAX_RULE_STEP,
    )
    loss, pen = res.info
    return res.x, loss, pen, res.grad_norm, res.n_iter, res.converged


def _objective_scale(p_target, rule):
    """Cost of the uninformative system (all LLRs 0) at ``p_target`` over its cost at 0.5."""
    rule = LOGARITHMIC if rule is None else rule
    return default_expected_cost(p_target, rule) / default_expected_cost(0.5, rule)


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
    sub = _Design(design.X[idx], ys, design.p_target, vs, design.reg, design.center, design.scale)
    theta, _, _, _, n_iter, _ = _newton(sub, np.zeros(design.K + 1), None, max(tol, 1e-7), max_iter)
    passes = -(-sub.n_passes * _SUBSAMPLE // n)  # ceil: the subsample work in whole passes
    return theta, n_iter, passes


def fit_logistic(
    X, y, p_target=0.5, sample_weight=None, reg=DEFAULT_REG, tol=1e-10, max_iter=100, init=None
) -> LogisticSolution:
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
        L2 penalty on the standardized weights, relative to the objective's size (see the module
        docstring); ``reg=0`` gives the unpenalized fit, which does not exist for perfectly
        separable data.
    tol : float
        Stop when the gradient norm (standardized coordinates, nats) is at most ``tol`` times
        the prior entropy in bits ``H_2(p_target)`` (1 at p = 0.5).
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
    theta, loss, pen, gnorm, steps, converged = _newton(design, theta, None, tol, max_iter)
    return _solution(design, theta, loss, pen, gnorm, n_iter + steps, converged)


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


def fit_scoring_rule(
    X,
    y,
    rule: BetaRule,
    p_target=0.5,
    sample_weight=None,
    reg=DEFAULT_REG,
    tol=1e-10,
    max_iter=100,
    init=None,
) -> LogisticSolution:
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
        theta, _, _, _, steps, _ = _newton(design, theta, None, tol, max_iter)
        n_iter += steps
    theta, loss, pen, gnorm, steps, converged = _newton(design, theta, rule, tol, max_iter)
    return _solution(design, theta, loss, pen, gnorm, n_iter + steps, converged)


def _solution(design, theta, loss, pen, gnorm, n_iter, converged):
    coef, intercept = design.to_original(theta)
    if not (np.all(np.isfinite(coef)) and np.isfinite(intercept)):
        raise ValueError(
            "the fitted fusion is not finite (coefficients "
            f"{coef.tolist()}, intercept {intercept!r}): the scores are too large or "
            "too small for their units; rescale them"
        )
    return LogisticSolution(
        coef=coef,
        intercept=intercept,
        loss=loss,
        penalty=pen,
        n_iter=n_iter,
        n_passes=design.n_passes,
        grad_norm=gnorm,
        converged=converged,
    )
