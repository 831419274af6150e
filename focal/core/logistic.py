"""Prior-weighted logistic regression: the training criterion of binary fusion and calibration.

Fuses K recognizers' scores into one natural-log LLR ``w = b + sum_k a_k s_k`` by minimizing the
prior-weighted logarithmic cost (thesis sec. 8.3.1, eqs. 8.16-8.17; eq. 7.40 is the evaluation
counterpart), in nats::

    O(a, b) = p / W_tar  sum_{t in tar} v_t log(1 + exp(-(w_t + logit p)))
            + (1-p) / W_non sum_{t in non} v_t log(1 + exp(  w_t + logit p ))
            + reg / 2 * sum_k (a_k sd_k)^2

with trial weights ``v`` (1 by default; W_tar, W_non their class totals) and ``sd_k`` the standard
deviation of system k's scores, so the penalty is in standardized units: it does not depend on
the scale or offset of the scores. It keeps perfectly separable data at finite LLRs and is small
enough (default 1e-6) to leave real fits unchanged.

The parameters are few and the trials many, so the optimizer is Newton's method with the exact
gradient and (K+1)x(K+1) Hessian, computed in one chunked pass over the data per iteration, in
standardized coordinates (well conditioned even for scores of magnitude 1e6), with a backtracking
line search. It is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.special import expit, logit

__all__ = ["LogisticSolution", "fit_logistic", "DEFAULT_REG"]

DEFAULT_REG = 1e-6
_CHUNK = 1 << 18  # rows per chunk: bounds the temporary memory of one pass


@dataclass(frozen=True)
class LogisticSolution:
    """Result of :func:`fit_logistic`.

    Attributes
    ----------
    coef : ndarray, shape (K,)
        Weight of each system (LLR per unit of score).
    intercept : float
        LLR offset b (natural log), with ``logit(p_target)`` already removed.
    loss : float
        Prior-weighted logarithmic cost at the solution, nats, without the penalty (eq. 7.40).
    penalty : float
        ``reg / 2 * sum (a_k sd_k)^2`` at the solution, nats.
    n_iter : int
        Newton iterations taken.
    n_passes : int
        Passes over the data (one per objective evaluation).
    grad_norm : float
        Euclidean norm of the gradient of the penalized objective in standardized coordinates.
    converged : bool
        Whether ``grad_norm <= tol`` was reached within ``max_iter`` iterations.
    """

    coef: np.ndarray
    intercept: float
    loss: float
    penalty: float
    n_iter: int
    n_passes: int
    grad_norm: float
    converged: bool


class _Problem:
    """Objective, gradient and Hessian in standardized coordinates theta = (a', b')."""

    def __init__(self, X, y, p_target, sample_weight, reg):
        self.X = X
        self.y = y
        self.plo = float(logit(p_target))
        v = np.ones(X.shape[0]) if sample_weight is None else sample_weight
        w_tar = v[y].sum()
        w_non = v[~y].sum()
        # per-trial weight of eq. 8.17: prior / class total
        self.c = np.where(y, p_target / w_tar, (1.0 - p_target) / w_non) * v
        mean = (self.c @ X) if X.shape[0] else np.zeros(X.shape[1])
        var = self.c @ (X - mean) ** 2 if X.shape[0] <= _CHUNK else self._chunked_var(mean)
        sd = np.sqrt(var)
        self.mean = mean
        self.sd = np.where(sd > 0, sd, 1.0)
        self.reg = float(reg)
        self.K = X.shape[1]
        self.n_passes = 0

    def _chunked_var(self, mean):
        acc = np.zeros(self.X.shape[1])
        for lo in range(0, self.X.shape[0], _CHUNK):
            d = self.X[lo:lo + _CHUNK] - mean
            acc += self.c[lo:lo + _CHUNK] @ (d * d)
        return acc

    def evaluate(self, theta, need_derivatives=True):
        """One pass: loss (nats, data term), gradient and Hessian of the penalized objective."""
        self.n_passes += 1
        K = self.K
        loss = 0.0
        grad = np.zeros(K + 1)
        hess = np.zeros((K + 1, K + 1))
        Z = np.empty((min(_CHUNK, self.X.shape[0]), K + 1))
        for lo in range(0, self.X.shape[0], _CHUNK):
            Xc = self.X[lo:lo + _CHUNK]
            m = Xc.shape[0]
            Zc = Z[:m]
            np.subtract(Xc, self.mean, out=Zc[:, :K])
            Zc[:, :K] /= self.sd
            Zc[:, K] = 1.0
            z = Zc @ theta + self.plo
            yc = self.y[lo:lo + _CHUNK]
            cc = self.c[lo:lo + _CHUNK]
            # log cost: targets softplus(-z), non-targets softplus(z)  (eq. 7.39)
            loss += cc @ np.logaddexp(0.0, np.where(yc, -z, z))
            if need_derivatives:
                sig = expit(z)
                grad += Zc.T @ (cc * (sig - yc))
                h = cc * sig * expit(-z)
                hess += Zc.T @ (Zc * h[:, None])
        a = theta[:K]
        penalty = 0.5 * self.reg * float(a @ a)
        if not need_derivatives:
            return float(loss), penalty, None, None
        grad[:K] += self.reg * a
        hess[np.arange(K), np.arange(K)] += self.reg
        return float(loss), penalty, grad, hess

    def to_original(self, theta):
        a = theta[: self.K] / self.sd
        b = float(theta[self.K] - a @ self.mean)
        return a, b


def _newton_direction(grad, hess):
    try:
        return -cho_solve(cho_factor(hess), grad)
    except LinAlgError:  # singular (e.g. reg=0 with a constant system): minimum-norm step
        return -np.linalg.lstsq(hess, grad, rcond=None)[0]


def fit_logistic(X, y, p_target=0.5, sample_weight=None, reg=DEFAULT_REG, tol=1e-10,
                 max_iter=100, init=None) -> LogisticSolution:
    """Minimize the prior-weighted logarithmic cost over an affine fusion (thesis eq. 8.17).

    Parameters
    ----------
    X : ndarray of float64, shape (n_trials, K)
        Scores of K systems; already validated (finite).
    y : ndarray of bool, shape (n_trials,)
        True for target trials; both classes must have positive total weight.
    p_target : float
        Effective target prior in (0, 1) at which the cost is weighted.
    sample_weight : ndarray of float, shape (n_trials,), optional
        Non-negative trial weights (counts): a trial of weight k counts as k trials.
    reg : float
        L2 penalty on the standardized weights (see the module docstring).
    tol : float
        Stop when the gradient norm (standardized coordinates, nats) is at most ``tol``.
    max_iter : int
        Maximum number of Newton iterations.
    init : tuple (coef, intercept), optional
        Starting point in original units; default all zeros.

    Returns
    -------
    LogisticSolution
    """
    prob = _Problem(X, y, p_target, sample_weight, reg)
    K = prob.K
    theta = np.zeros(K + 1)
    if init is not None:
        a0, b0 = init
        a0 = np.asarray(a0, dtype=float)
        theta[:K] = a0 * prob.sd
        theta[K] = b0 + a0 @ prob.mean
    loss, pen, grad, hess = prob.evaluate(theta)
    n_iter = 0
    gnorm = float(np.linalg.norm(grad))
    while gnorm > tol and n_iter < max_iter:
        n_iter += 1
        d = _newton_direction(grad, hess)
        slope = float(grad @ d)
        if slope >= 0:  # not a descent direction (numerical trouble): steepest descent
            d = -grad
            slope = -gnorm**2
        f0 = loss + pen
        step = 1.0
        accepted = False
        for _ in range(40):
            cand = theta + step * d
            c_loss, c_pen, c_grad, c_hess = prob.evaluate(cand)
            f1 = c_loss + c_pen
            # Armijo condition, with a few ulps of slack for round-off near the optimum
            if f1 <= f0 + 1e-4 * step * slope + 8 * np.finfo(float).eps * abs(f0):
                accepted = True
                break
            step *= 0.5
        if not accepted:
            break
        theta, loss, pen, grad, hess = cand, c_loss, c_pen, c_grad, c_hess
        gnorm = float(np.linalg.norm(grad))
    coef, intercept = prob.to_original(theta)
    return LogisticSolution(
        coef=coef,
        intercept=intercept,
        loss=loss,
        penalty=pen,
        n_iter=n_iter,
        n_passes=prob.n_passes,
        grad_norm=gnorm,
        converged=gnorm <= tol,
    )
