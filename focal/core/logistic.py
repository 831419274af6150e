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
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .logistic_objective import CHUNK, ROUND_OFF_FLOOR, LogisticDesign, objective_scale
from .newton import dense_solver, minimize_newton
from .scoring_rules import BetaRule
from .threads import single_threaded_blas

__all__ = [
    "LogisticSolution",
    "fit_logistic",
    "fit_scoring_rule",
    "DEFAULT_REG",
]

DEFAULT_REG = 1e-9
_SUBSAMPLE = 1 << 16  # trials in the warm-start subsample of large problems
_MIN_CLASS_IN_SUBSAMPLE = 200
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


def _newton(design, theta, rule, tol, max_iter):
    """Damped Newton iterations from ``theta`` (:func:`focal.core.newton.minimize_newton`).

    The stopping rule is scale-free: the gradient norm (standardized parameters) is compared
    with ``tol`` times the cost of the uninformative system at ``p_target`` relative to its cost
    at ``p_target = 0.5`` (:func:`objective_scale`). Returns (theta, loss, penalty, grad_norm,
    n_iter, converged).
    """

    def evaluate(t):
        loss, pen, grad, hess = design.objective(t, rule)
        return loss + pen, grad, dense_solver(hess), (loss, pen)

    convex = rule is None or rule.convex
    f_scale = objective_scale(design.p_target, rule)
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
    sub = LogisticDesign(
        design.X[idx], ys, design.p_target, vs, design.reg, design.center, design.scale
    )
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
    with single_threaded_blas(X.shape[0] > CHUNK):
        return _fit_logistic(X, y, p_target, sample_weight, reg, tol, max_iter, init)


def _fit_logistic(X, y, p_target, sample_weight, reg, tol, max_iter, init):
    design = LogisticDesign(X, y, p_target, sample_weight, reg)
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
    with single_threaded_blas(X.shape[0] > CHUNK):
        return _fit_scoring_rule(X, y, rule, p_target, sample_weight, reg, tol, max_iter, init)


def _fit_scoring_rule(X, y, rule, p_target, sample_weight, reg, tol, max_iter, init):
    design = LogisticDesign(X, y, p_target, sample_weight, reg)
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
