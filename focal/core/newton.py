"""Damped Newton minimization of a smooth objective with exact derivatives: focal's one solver.

The training objectives of focal (prior-weighted logarithmic cost, thesis eqs. 7.40 and 8.17, and
the other proper scoring rules of eq. 8.15) have few parameters and many trials: one pass over the
data gives the objective and its gradient, and either the exact Hessian (small parameter counts)
or exact Hessian-vector products (larger ones). This module holds the outer loop that binary and
multiclass fitting share: a Newton direction, one backtracking (Armijo) line search and one
stopping rule. It is deterministic and never calls a black-box optimizer.

The objective supplies ``evaluate(x) -> (value, grad, solve, info)`` where ``solve(g, rtol)``
returns an approximation of ``H^{-1} g`` with relative residual at most ``rtol`` (exact for a
factorized Hessian, see :func:`dense_solver`), and ``info`` is anything the caller wants back for
the accepted point.

Stopping rule (scale-free). The solver stops when ``||grad|| <= tol * f_scale``. The caller
works in standardized parameters (each system divided by its spread, so the data's units do not
matter) and passes ``f_scale``, the natural size of its objective: focal uses the cost of the
uninformative recognizer at the training prior divided by that cost at the flat prior (1 at
``p_target = 0.5``; about 4e-11 at ``p_target = 1e-12``). A fixed absolute threshold would
declare an objective of size 1e-11 converged at its starting point.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, eigh
from scipy.linalg import norm as linalg_norm

__all__ = ["NewtonResult", "minimize_newton", "dense_solver", "preconditioned_cg"]


@dataclass(frozen=True)
class NewtonResult:
    """Outcome of :func:`minimize_newton`.

    Attributes
    ----------
    x : ndarray
        Parameters at the last accepted point.
    value : float
        Objective there.
    grad_norm : float
        Euclidean norm of the gradient there.
    n_iter : int
        Newton steps taken.
    n_evals : int
        Objective evaluations (passes over the data, not counting Hessian-vector products).
    converged : bool
        Whether ``grad_norm <= tol * f_scale`` was reached.
    info : Any
        The ``info`` returned by ``evaluate`` at ``x``.
    """

    x: np.ndarray
    value: float
    grad_norm: float
    n_iter: int
    n_evals: int
    converged: bool
    info: Any


def dense_solver(hess: np.ndarray) -> Callable:
    """``solve(g, rtol)`` for an explicit symmetric Hessian.

    Cholesky when the Hessian is positive definite. Otherwise (a non-convex scoring rule, or a
    singular Hessian, e.g. a system whose scores are constant and no regularization) the solve
    uses the modified Hessian whose eigenvalues are replaced by their absolute values, floored at
    1e-10 of the largest (Nocedal & Wright, *Numerical Optimization*, 2nd ed., 2006, sec. 3.4),
    so ``-solve(g)`` is always a descent direction.
    """
    if not np.all(np.isfinite(hess)):
        return lambda g, rtol=0.0: np.full_like(g, np.nan)  # rejected by minimize_newton
    try:
        factor = cho_factor(hess, check_finite=False)
    except LinAlgError:
        lam, vec = eigh(hess, check_finite=False)
        top = max(float(np.max(np.abs(lam))), np.finfo(float).tiny)
        lam = np.maximum(np.abs(lam), 1e-10 * top)
        return lambda g, rtol=0.0: vec @ ((vec.T @ g) / lam)
    return lambda g, rtol=0.0: cho_solve(factor, g, check_finite=False)


def preconditioned_cg(
    hessp: Callable, g: np.ndarray, precondition: Callable, rtol: float, max_iter: int
) -> np.ndarray:
    """Solve ``H d = g`` by preconditioned conjugate gradients with exact products ``hessp``.

    Stops when ``||g - H d|| <= rtol ||g||`` or after ``max_iter`` products; returns the
    current ``d`` (a descent direction for the minimization whenever H is positive definite).
    """
    d = np.zeros_like(g)
    r = g.copy()
    z = precondition(r)
    s = z.copy()
    rz = float(r @ z)
    target = rtol * float(np.linalg.norm(g))
    for _ in range(max_iter):
        Hs = hessp(s)
        curv = float(s @ Hs)
        if curv <= 0:  # numerically flat direction: stop with what we have
            break
        step = rz / curv
        d += step * s
        r -= step * Hs
        if np.linalg.norm(r) <= target:
            break
        z = precondition(r)
        rz_new = float(r @ z)
        s = z + (rz_new / rz) * s
        rz = rz_new
    return d if d.any() else precondition(g)


def _norm(g):
    """Euclidean norm without underflow or overflow of the squares (BLAS nrm2): gradients of
    objectives at extreme priors are of order 1e-200.
    """
    return float(linalg_norm(g, check_finite=False))


#: Armijo sufficient-decrease constant, halvings before the line search gives up (a step of
#: 2^-60 changes no parameter of ordinary size), and the round-off slack of the test in ulps of
#: the objective (sums over millions of trials are not exact).
ARMIJO = 1e-4
MAX_HALVINGS = 60
SLACK_ULPS = 16


def minimize_newton(
    evaluate: Callable,
    x0: np.ndarray,
    *,
    tol: float = 1e-10,
    max_iter: int = 100,
    f_scale: float = 1.0,
    max_step: float = np.inf,
) -> NewtonResult:
    """Minimize a smooth objective by damped (possibly inexact) Newton steps.

    Each step solves ``H d = -g`` with relative residual ``min(0.1, sqrt(||g|| / f_scale))``
    (exact when the Hessian is factorized; the forcing term gives superlinear convergence
    otherwise), falls back to steepest descent if that is not a descent direction, and
    backtracks (halving, Armijo constant :data:`ARMIJO`, :data:`SLACK_ULPS` ulps of slack for
    round-off at the optimum; a candidate with a non-finite value or gradient is rejected like
    one that does not decrease enough). Stops at ``||g|| <= tol * f_scale`` (the module's
    stopping rule), after ``max_iter`` steps, when the line search fails, or when a step improves
    neither the objective nor the gradient (round-off level: ``converged`` then tells whether the
    tolerance was met).

    Parameters
    ----------
    evaluate : callable
        ``evaluate(x) -> (value, grad, solve, info)``, see the module docstring.
    x0 : ndarray
        Starting point.
    tol : float
        Gradient-norm tolerance, in units of ``f_scale``.
    max_iter : int
        Maximum Newton steps.
    f_scale : float
        Natural size of the objective (positive), see the module docstring.
    max_step : float
        Longest step tried (Euclidean norm), for non-convex objectives whose quadratic model
        is trusted only near the current point; default: no limit.

    Returns
    -------
    NewtonResult
    """
    if not (np.isfinite(f_scale) and f_scale > 0):
        raise ValueError(f"f_scale must be positive and finite, got {f_scale!r}")
    threshold = tol * f_scale
    x = np.array(x0, dtype=float)
    value, grad, solve, info = evaluate(x)
    n_evals = 1
    gnorm = _norm(grad)
    n_iter = 0
    eps = np.finfo(float).eps
    while gnorm > threshold and n_iter < max_iter:
        d = -solve(grad, min(0.1, np.sqrt(gnorm / f_scale)))
        slope = float(grad @ d)
        if not slope < 0:  # round-off has swamped the direction (or NaN): steepest descent
            d = -grad
            slope = -(gnorm**2)
        length = _norm(d)
        if length > max_step:  # a non-convex model's Newton step is trusted only so far
            d *= max_step / length
            slope *= max_step / length
        step = 1.0
        slack = SLACK_ULPS * eps * abs(value)
        for _ in range(MAX_HALVINGS):
            cand = x + step * d
            c_value, c_grad, c_solve, c_info = evaluate(cand)
            n_evals += 1
            if c_value <= value + ARMIJO * step * slope + slack and np.all(np.isfinite(c_grad)):
                break
            step *= 0.5
        else:
            break
        c_gnorm = _norm(c_grad)
        if c_value >= value and c_gnorm >= gnorm:
            break  # round-off level: neither the objective nor the gradient improves
        n_iter += 1
        x, value, grad, solve, info = cand, c_value, c_grad, c_solve, c_info
        gnorm = c_gnorm
    return NewtonResult(
        x=x,
        value=float(value),
        grad_norm=gnorm,
        n_iter=n_iter,
        n_evals=n_evals,
        converged=gnorm <= threshold,
        info=info,
    )
