"""Damped Newton minimization of a smooth convex objective with exact derivatives.

The training objectives of focal (prior-weighted logarithmic cost, thesis eqs. 7.40 and 8.17)
have few parameters and many trials: one pass over the data gives the objective and its
gradient, and either the exact Hessian (small parameter counts) or exact Hessian-vector products
(larger ones). This module holds the outer loop shared by such problems: a Newton direction,
a backtracking Armijo line search, and a stop when the gradient norm reaches ``tol``. It is
deterministic and never calls a black-box optimizer.

The objective supplies ``evaluate(x) -> (value, grad, solve, info)`` where ``solve(g, rtol)``
returns an approximation of ``H^{-1} g`` with relative residual at most ``rtol`` (exact for a
factorized Hessian), and ``info`` is anything the caller wants back for the accepted point.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

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
        Whether ``grad_norm <= tol`` was reached.
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
    """``solve(g, rtol)`` for an explicit symmetric Hessian: Cholesky, or least squares when it
    is singular (e.g. a system whose scores are constant, without regularization)."""
    try:
        factor = cho_factor(hess)
    except LinAlgError:
        return lambda g, rtol=0.0: np.linalg.lstsq(hess, g, rcond=None)[0]
    return lambda g, rtol=0.0: cho_solve(factor, g)


def preconditioned_cg(hessp: Callable, g: np.ndarray, precondition: Callable, rtol: float,
                      max_iter: int) -> np.ndarray:
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


def minimize_newton(evaluate: Callable, x0: np.ndarray, *, tol: float = 1e-10,
                    max_iter: int = 100) -> NewtonResult:
    """Minimize a convex objective by damped (possibly inexact) Newton steps.

    Each step solves ``H d = -g`` with relative residual ``min(0.1, sqrt(||g||))`` (exact when the
    Hessian is factorized; the forcing term gives superlinear convergence otherwise), falls back
    to steepest descent if that is not a descent direction, and backtracks (halving, Armijo
    constant 1e-4, a few ulps of slack for round-off at the optimum). Stops at
    ``||g|| <= tol``, after ``max_iter`` steps, or when a step improves neither the objective
    nor the gradient (round-off level: ``converged`` then tells whether ``tol`` was met).
    """
    x = np.array(x0, dtype=float)
    value, grad, solve, info = evaluate(x)
    n_evals = 1
    gnorm = float(np.linalg.norm(grad))
    n_iter = 0
    while gnorm > tol and n_iter < max_iter:
        n_iter += 1
        d = -solve(grad, min(0.1, np.sqrt(gnorm)))
        slope = float(grad @ d)
        if not np.isfinite(slope) or slope >= 0:
            d = -grad
            slope = -gnorm**2
        step = 1.0
        slack = 8 * np.finfo(float).eps * abs(value)
        for _ in range(40):
            cand = x + step * d
            c_value, c_grad, c_solve, c_info = evaluate(cand)
            n_evals += 1
            if c_value <= value + 1e-4 * step * slope + slack:
                break
            step *= 0.5
        else:
            break
        c_gnorm = float(np.linalg.norm(c_grad))
        if c_value >= value and c_gnorm >= gnorm:
            break  # round-off level: neither the objective nor the gradient improves
        x, value, grad, solve, info = cand, c_value, c_grad, c_solve, c_info
        gnorm = c_gnorm
    return NewtonResult(x=x, value=float(value), grad_norm=gnorm, n_iter=n_iter,
                        n_evals=n_evals, converged=gnorm <= tol, info=info)
