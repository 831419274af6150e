"""Prior-weighted multiclass logistic regression: fusion and calibration of log-likelihood vectors.

K recognizers each output a log-likelihood vector ``l_tk`` (N classes) per trial ``t``. The fused,
calibrated log-likelihoods are an affine function of them (thesis eq. 8.16), in one of three
families:

``"scalar"``
    ``w_t = sum_k alpha_k l_tk + beta``: one weight per system and an offset vector (FoCal
    Multiclass; thesis eq. 8.16).
``"calibration"``
    the same with K = 1: ``w_t = alpha l_t + beta``, the affine calibration of Albayzin eq. 11,
    Brümmer & van Leeuwen eq. 18 and thesis eq. 8.21.
``"full"``
    ``w_t = sum_k A_k l_tk + b`` with a matrix per system: fusion with rotation (thesis 8.4.1).
    ``A_k`` acts on the log-likelihood *line* (its input is centred, so 1 is in its null space,
    eq. 8.19) and its output has zero mean.

The parameters minimize the prior-weighted multiclass logarithmic cost (thesis eq. 8.17), nats::

    O = sum_i pi_i / W_i sum_{t in T_i} v_t (-log softmax(w_t + log pi)_i) + penalty

with trial weights ``v`` (class totals ``W_i``). Classes with zero prior are dropped with their
trials (Albayzin footnote 8); their offsets are 0 and, in ``"full"`` mode, their rows and
columns of ``A_k`` are 0.

Scale-free regularization. Each system is standardized by its prior-weighted spread ``s_k``,
the root mean square over trials and class pairs of the pairwise log-likelihood differences
``l_i - l_j`` about their weighted means (for N = 2 this is the weighted standard deviation of
the LLR ``l_1 - l_2``, exactly the binary :func:`focal.core.logistic.fit_logistic` scale). The
penalty is ``reg / 2 * sum_k (alpha_k s_k)^2`` in ``"scalar"`` mode and
``reg / 2 * sum_k s_k^2 ||B_k||_F^2 / (N - 1)`` in ``"full"`` mode, where ``A_k = V B_k V^T``
with an orthonormal contrast basis V (so ``A_k = alpha_k * centring`` costs the same in both
modes). Multiplying a system's scores by any factor, or adding any offset vector, leaves the
penalty and the fitted log-likelihoods unchanged. Offsets are not penalized. The penalty is
multiplied by :func:`objective_scale` (the prior's entropy over ``log N``), so ``reg`` is relative
to the size of the objective at every prior. With N = 2 the ``"calibration"`` objective is
exactly the binary one of ``fit_logistic`` at the same ``reg``.

Optimization: Newton's method with exact derivatives in standardized coordinates
(:mod:`focal.core.newton`, the solver binary fits use too, with its scale-free stopping rule:
the gradient relative to :func:`objective_scale`), deterministic. Posteriors near 1 keep their
complement to full relative precision, so extreme priors converge to the optimum.
``"scalar"``/``"calibration"`` use the exact (K + N - 1)-square Hessian from one chunked pass
per iteration. ``"full"`` has
``(N-1)(K(N-1)+1)`` parameters (520 for 3 systems of 14 classes): it is solved on nested,
class-stratified subsets of the trials growing x4 per level, each level started from the
previous solution and solved to its sampling accuracy, the last (all trials) to ``tol``. The
smallest level (started from its scalar-mode solution) takes exact Newton steps; the larger
ones solve each Newton system by conjugate gradients with exact Hessian-vector products (one
pass each), preconditioned by the smallest level's exact Hessian. Small problems are a single
level of exact Newton steps.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`albayzin2012plan` ("Albayzin plan").
.. [3] :cite:t:`brummer2006calibration`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .logistic import DEFAULT_REG
from .logistic_objective import ROUND_OFF_FLOOR
from .maps import MULTICLASS_MODES as MODES
from .multiclass import active_classes, class_trial_weights, contrast_basis
from .multiclass_objective import (
    FullObjective,
    ScalarObjective,
    full_blocks,
    objective_scale,
    scalar_blocks,
    system_scales,
)
from .newton import minimize_newton
from .threads import single_threaded_blas

__all__ = [
    "MulticlassSolution",
    "fit_multiclass",
]

_DENSE_PARAMS = 3000  # "full" mode with more parameters never forms a dense Hessian


@dataclass(frozen=True)
class MulticlassSolution:
    """Result of :func:`fit_multiclass`, in the original (unstandardized) units.

    Attributes
    ----------
    mode : str
    coef : ndarray
        ``(K,)`` system weights (scalar / calibration), or ``(K, N, N)`` matrices (full): the
        fused log-likelihoods are ``sum_k coef[k] * l_k + offset`` resp.
        ``sum_k l_k @ coef[k].T + offset``.
    offset : ndarray, shape (N,)
        Offset vector (natural log), zero mean over the active classes, 0 for inactive ones.
    active : ndarray of int
        Classes with non-zero prior (the others were ignored).
    loss : float
        Prior-weighted logarithmic cost at the solution, nats, without the penalty (eq. 8.17).
    penalty : float
        The penalty there, nats.
    n_iter, n_evals : int
        Newton iterations and passes over the data (objective evaluations).
    grad_norm : float
        Gradient norm of the penalized objective in standardized coordinates.
    converged : bool
    """

    mode: str
    coef: np.ndarray
    offset: np.ndarray
    active: np.ndarray
    loss: float
    penalty: float
    n_iter: int
    n_evals: int
    grad_norm: float
    converged: bool


def _nested_levels(y, c, n_classes, base):
    """Nested, class-stratified trial subsets for multilevel fitting, smallest first.

    Level ``l`` keeps every ``4^(L-l)``-th trial of each class (in input order) with its weight
    scaled so that every class keeps its total weight; the last level is all trials. The
    smallest level has about ``base`` trials. Returns a list of (rows, weights).
    """
    n = y.shape[0]
    n_levels = 0
    while n / 4 ** (n_levels + 1) >= base:
        n_levels += 1
    by_class = [np.flatnonzero(y == i) for i in range(n_classes)]
    totals = np.array([c[idx].sum() for idx in by_class])
    levels = []
    for level in range(n_levels, 0, -1):
        stride = 4**level
        parts = [idx[::stride] for idx in by_class]
        rows = np.sort(np.concatenate(parts))
        sub = np.bincount(y[rows], weights=c[rows], minlength=n_classes)
        scale = np.divide(totals, sub, out=np.ones(n_classes), where=sub > 0)
        levels.append((rows, c[rows] * scale[y[rows]]))
    levels.append((np.arange(n), c))
    return levels


def fit_multiclass(
    L, y, prior, mode="scalar", sample_weight=None, reg=DEFAULT_REG, tol=1e-10, max_iter=100
) -> MulticlassSolution:
    """Fit a multiclass fusion / calibration by minimizing the objective of thesis eq. 8.17.

    Parameters
    ----------
    L : ndarray of float64, shape (n_trials, K, N)
        Log-likelihood vectors of K systems (validated, finite).
    y : ndarray of int, shape (n_trials,)
        True class indices ``0..N-1``.
    prior : ndarray, shape (N,)
        Validated prior (may contain zeros; every class with non-zero prior must have trials of
        positive weight).
    mode : {"scalar", "calibration", "full"}
        See the module docstring. ``"calibration"`` requires K = 1.
    sample_weight : ndarray, shape (n_trials,), optional
        Non-negative trial weights.
    reg : float
        Scale-free L2 penalty (module docstring). 0 is allowed for non-separable data.
    tol : float
        Stop when the gradient norm (standardized coordinates, nats) is at most ``tol`` times
        :func:`objective_scale` of the active prior (1 for a flat prior).
    max_iter : int
        Maximum Newton iterations (per level in "full" mode).

    Returns
    -------
    MulticlassSolution

    Notes
    -----
    ``"full"`` mode is fitted level by level on nested subsets (:func:`_nested_levels`), see the
    module docstring; only the last level's few passes touch all trials. BLAS runs with one
    thread during the fit (:func:`focal.core.threads.single_threaded_blas`).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    with single_threaded_blas():
        return _fit(L, y, prior, mode, sample_weight, reg, tol, max_iter)


def _fit_full(La, y, c, log_prior, V, u_bar, s, reg, tol, max_iter, f_scale):
    """Full mode, level by level (module docstring). Returns (last NewtonResult, n_iter,
    n_evals); ``result.x`` is B of shape (N-1, K(N-1)+1) flattened, standardized units.
    """
    K = La.shape[1]
    C = V.shape[1]
    D = K * C + 1
    dense = C * D <= _DENSE_PARAMS
    accurate = tol * f_scale < ROUND_OFF_FLOOR
    levels = _nested_levels(y, c, C + 1, base=max(2048, 2 * C * D))
    # start: the scalar solution on the smallest level (alpha_k I blocks, offsets b)
    rows, w = levels[0]
    blocks = scalar_blocks(La, rows, y, w, u_bar, s)
    start = ScalarObjective(blocks, log_prior, V, reg)
    start.accurate = accurate
    res = minimize_newton(
        start.evaluate, np.zeros(K + C), tol=tol, max_iter=max_iter, f_scale=f_scale
    )
    n_iter, n_evals = res.n_iter, res.n_evals
    theta = np.zeros((C, D))
    for k in range(K):
        theta[:, k * C : (k + 1) * C] = res.x[k] * np.eye(C)
    theta[:, -1] = res.x[K:]
    theta = theta.ravel()
    precondition = None
    for level, (rows, w) in enumerate(levels):
        if level > 0:
            blocks = full_blocks(scalar_blocks(La, rows, y, w, u_bar, s), V)
        else:
            blocks = full_blocks(blocks, V)
        if not dense:  # too many parameters for a dense Hessian: Jacobi-preconditioned CG
            diag_obj = FullObjective(blocks, log_prior, V, reg, precondition=lambda r: r)
            diag_obj.accurate = accurate
            diagonal = diag_obj.hessian_diagonal(diag_obj.evaluate(theta)[3][2])
            precondition = _jacobi(diagonal)
        obj = FullObjective(blocks, log_prior, V, reg, precondition)
        obj.accurate = accurate
        last = level == len(levels) - 1
        level_tol = tol if last else max(tol, 0.1 / np.sqrt(rows.shape[0]))
        res = minimize_newton(
            obj.evaluate, theta, tol=level_tol, max_iter=max_iter, f_scale=f_scale
        )
        theta = res.x
        n_iter += res.n_iter
        n_evals += res.n_evals
        if precondition is None:
            # the exact Hessian of the smallest level at its solution preconditions the
            # larger levels (it stays close: all levels share one optimum up to sampling)
            precondition = res.info[3]
    return res, n_iter, n_evals


def _jacobi(diagonal):
    inverse = 1.0 / np.where(diagonal > 0, diagonal, 1.0)
    return lambda r, rtol=0.0: r * inverse


def _fit(L, y, prior, mode, sample_weight, reg, tol, max_iter):
    n, K, N_all = L.shape
    if mode == "calibration" and K != 1:
        raise ValueError(f"mode='calibration' takes one system (K = 1), got K = {K}")
    active, keep, ya = active_classes(prior, y)
    La = L[keep][:, :, active] if (active.size < N_all or not keep.all()) else L
    pa = prior[active]
    if pa.min() < np.finfo(float).tiny:
        raise ValueError(
            f"prior[{int(active[np.argmin(pa)])}] = {float(pa.min())!r} is below the normal "
            "floating-point range (2.2e-308): it cannot weight the training cost "
            "accurately; use 0 to drop the class"
        )
    va = None if sample_weight is None else np.asarray(sample_weight, dtype=float)[keep]
    c = class_trial_weights(ya, pa, va)
    N = active.size
    V = contrast_basis(N)
    log_prior = np.log(pa)
    f_scale = objective_scale(pa)
    reg = float(reg) * f_scale
    u_bar, s = system_scales(La, c)
    if mode != "full":
        blocks = scalar_blocks(La, np.arange(ya.shape[0]), ya, c, u_bar, s)
        obj = ScalarObjective(blocks, log_prior, V, reg)
        obj.accurate = tol * f_scale < ROUND_OFF_FLOOR
        res = minimize_newton(
            obj.evaluate, np.zeros(K + N - 1), tol=tol, max_iter=max_iter, f_scale=f_scale
        )
        n_evals, n_iter = res.n_evals, res.n_iter
        coef = res.x[:K] / s
        offset_a = V @ res.x[K:] - coef @ u_bar
    else:
        res, n_iter, n_evals = _fit_full(
            La, ya, c, log_prior, V, u_bar, s, reg, tol, max_iter, f_scale
        )
        C = N - 1
        B = res.x.reshape(C, K * C + 1)
        coef = np.zeros((K, N_all, N_all))
        offset_a = V @ B[:, -1]
        for k in range(K):
            A = V @ B[:, k * C : (k + 1) * C] @ V.T / s[k]
            coef[k][np.ix_(active, active)] = A
            offset_a -= A @ u_bar[k]
    offset = np.zeros(N_all)
    offset[active] = offset_a - offset_a.mean()
    if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(offset))):
        raise ValueError(
            "the fitted fusion is not finite: the log-likelihoods are too large or "
            "too small for their units (their weights overflow); rescale them"
        )
    loss, pen = res.info[:2]
    return MulticlassSolution(
        mode=mode,
        coef=coef,
        offset=offset,
        active=active,
        loss=loss,
        penalty=pen,
        n_iter=n_iter,
        n_evals=n_evals,
        grad_norm=res.grad_norm,
        converged=res.converged,
    )
