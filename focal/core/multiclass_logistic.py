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
complement to full relative precision, so extreme priors converge to the optimum. ``"scalar"``/``"calibration"`` use the exact
(K + N - 1)-square Hessian from one chunked pass per iteration. ``"full"`` has
``(N-1)(K(N-1)+1)`` parameters (520 for 3 systems of 14 classes): it is solved on nested,
class-stratified subsets of the trials growing x4 per level, each level started from the
previous solution and solved to its sampling accuracy, the last (all trials) to ``tol``. The
smallest level (started from its scalar-mode solution) takes exact Newton steps; the larger
ones solve each Newton system by conjugate gradients with exact Hessian-vector products (one
pass each), preconditioned by the smallest level's exact Hessian. Small problems are a single
level of exact Newton steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg.blas import dsyrk

from .logistic import DEFAULT_REG
from .multiclass import class_trial_weights, contrast_basis
from .newton import dense_solver, minimize_newton, preconditioned_cg
from .threads import single_threaded_blas

__all__ = ["MODES", "MulticlassSolution", "fit_multiclass", "apply_multiclass",
           "system_scales", "objective_scale"]

MODES = ("scalar", "calibration", "full")
_CHUNK = 1 << 15          # rows per chunk: bounds temporaries and keeps them in cache
_DENSE_PARAMS = 3000      # "full" mode with more parameters never forms a dense Hessian



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


def apply_multiclass(L: np.ndarray, mode: str, coef: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """Fused log-likelihoods ``(n, N)`` of the stacked inputs ``L`` of shape ``(n, K, N)``:
    ``sum_k coef[k] L[:, k] + offset`` (scalar weights) or ``sum_k L[:, k] @ coef[k].T + offset``
    (full mode matrices)."""
    out = np.empty((L.shape[0], L.shape[2]))
    out[:] = offset
    for k in range(L.shape[1]):
        if mode == "full":
            out += L[:, k] @ coef[k].T
        else:
            out += coef[k] * L[:, k]
    return out


def system_scales(L: np.ndarray, c: np.ndarray):
    """Weighted mean row-centred vector ``u_bar_k`` and scale ``s_k`` of every system.

    ``u_tk`` is ``l_tk`` minus its mean over classes; ``u_bar_k = sum_t c_t u_tk`` and
    ``s_k^2 = 2 / (N - 1) * sum_t c_t ||u_tk - u_bar_k||^2``, the mean over class pairs of the
    weighted variance of ``l_i - l_j`` (weights ``c`` sum to 1). A constant system gets s = 1.
    """
    n, K, N = L.shape
    u_bar = np.zeros((K, N))
    s2 = np.zeros(K)
    top = np.zeros(K)
    with np.errstate(over="ignore", invalid="ignore"):
        for lo in range(0, n, _CHUNK):
            U = L[lo:lo + _CHUNK] - L[lo:lo + _CHUNK].mean(axis=2, keepdims=True)
            u_bar += np.einsum("t,tkj->kj", c[lo:lo + _CHUNK], U)
            top = np.maximum(top, np.abs(U).max(axis=(0, 2)))
    if not (np.all(np.isfinite(top)) and np.all(np.isfinite(u_bar))):
        bad = int(np.flatnonzero(~(np.isfinite(top) & np.isfinite(u_bar).all(axis=1)))[0])
        raise ValueError(f"the log-likelihoods of system {bad} are too large to fit (their "
                         "differences overflow): rescale them")
    # squares of deviations scaled by a power of two (exact): no overflow for log-likelihoods
    # of magnitude 1e154, no underflow for 1e-170
    small = (top > 0) & (top < np.finfo(float).tiny)
    if small.any():
        bad = int(np.flatnonzero(small)[0])
        raise ValueError(f"the log-likelihoods of system {bad} spread over only {top[bad]:.3g} "
                         "(below the normal floating-point range): their weight would overflow; "
                         "rescale them")
    pow2 = np.ldexp(1.0, -np.frexp(np.where(top > 0, top, 1.0))[1])
    for lo in range(0, n, _CHUNK):
        U = L[lo:lo + _CHUNK] - L[lo:lo + _CHUNK].mean(axis=2, keepdims=True) - u_bar
        U *= pow2[:, None]
        s2 += np.einsum("t,tkj->k", c[lo:lo + _CHUNK], U * U)
    s = np.sqrt(2.0 / (N - 1) * s2) / pow2
    return u_bar, np.where(s > 0, s, 1.0)


@dataclass
class _Block:
    """One chunk of trials, class-major: ``x`` is ``(K, N, m)`` standardized log-likelihoods
    (scalar mode) or ``(D, m)`` contrast features plus a row of ones (full mode)."""

    x: np.ndarray
    y: np.ndarray
    c: np.ndarray

    @property
    def cols(self):
        return np.arange(self.y.shape[0])

    @property
    def flat(self):
        """Positions of the true classes in a C-ordered (N, m) array, flattened (made once)."""
        if not hasattr(self, "_flat"):
            m = self.y.shape[0]
            self._flat = self.y * m + np.arange(m)
        return self._flat

    def single(self):
        """Single-precision copies of ``x`` and ``c`` (made once)."""
        if not hasattr(self, "_single"):
            self._single = (self.x.astype(np.float32), self.c.astype(np.float32))
        return self._single


def _softmax_columns(G: np.ndarray, y: np.ndarray, c: np.ndarray, flat=None):
    """In place: logits ``G`` (N, m), log prior included -> posteriors. Returns (cost, P, R):
    the weighted logarithmic cost ``sum_t c_t (-log P[y_t, t])`` (nats), ``P`` and the
    gradient of the cost in the logits, ``R = c (P - onehot(y))``. ``flat``: the positions
    ``y * m + arange(m)`` of the true classes in ``G.ravel()``, if known.

    ``1 - P[y_t, t]`` is the sum of the other classes' posteriors, not a difference with 1, and
    ``-log P[y_t, t]`` is ``log1p`` of that sum over ``P[y_t, t]``'s share when ``y_t`` has the
    largest logit: both keep full relative precision when the true class is near-certain
    (extreme priors, well-separated data), where the subtraction would leave only round-off.
    """
    m = y.shape[0]
    if flat is None:
        flat = y * m + np.arange(m)  # positions of the true classes in G.ravel()
    G -= G.max(axis=0)
    g = G.reshape(-1)  # a view: G is C-contiguous
    own = g.take(flat)
    np.exp(G, out=G)
    e_own = g.take(flat)
    g.put(flat, 0.0)  # the sum gives the other classes' terms only
    rest = G.sum(axis=0)
    z = rest + e_own
    nll = np.log(z)
    nll -= own
    np.copyto(nll, np.log1p(rest), where=own == 0.0)  # the true class has the largest logit
    loss = float(c @ nll)
    G /= z
    R = G * c
    r = R.reshape(-1)
    rest /= z
    rest *= c
    np.negative(rest, out=rest)
    r.put(flat, rest)
    e_own /= z
    g.put(flat, e_own)
    return loss, G, R


class _ScalarObjective:
    """Scalar-mode objective in standardized coordinates ``theta = (alpha~ (K), b (N-1))``:
    logits ``sum_k alpha~_k l~_tk + V b + log pi``, with exact gradient and Hessian (one pass)."""

    def __init__(self, blocks, log_prior, V, reg):
        self.blocks, self.log_prior, self.V, self.reg = blocks, log_prior, V, reg
        self.K = blocks[0].x.shape[0]

    def penalty(self, theta):
        a = theta[:self.K]
        return 0.5 * self.reg * float(a @ a)

    def evaluate(self, theta):
        K, V = self.K, self.V
        N = V.shape[0]
        a, b = theta[:K], theta[K:]
        off = (V @ b + self.log_prior)[:, None]
        loss = 0.0
        ga, gb = np.zeros(K), np.zeros(N)
        Haa, Hab, Hbb = np.zeros((K, K)), np.zeros((K, N)), np.zeros((N, N))
        for blk in self.blocks:
            X, y, c = blk.x, blk.y, blk.c
            G = np.tensordot(a, X, axes=1)
            G += off
            part, P, R = _softmax_columns(G, y, c, blk.flat)
            loss += part
            W = P * c
            gb += R.sum(axis=1)
            Hbb += np.diag(W.sum(axis=1)) - W @ P.T
            M = np.empty((K, y.shape[0]))
            for k in range(K):
                ga[k] += np.vdot(R, X[k])
                M[k] = np.einsum("jt,jt->t", P, X[k])
                WL = W * X[k]
                Hab[k] += WL.sum(axis=1)
                for m in range(k + 1):
                    Haa[k, m] += np.vdot(WL, X[m])
            cM = M * c
            Haa -= cM @ M.T
            Hab -= cM @ P.T
        Haa = np.tril(Haa) + np.tril(Haa, -1).T
        grad = np.concatenate([ga + self.reg * a, V.T @ gb])
        H = np.empty((K + N - 1,) * 2)
        H[:K, :K] = Haa + self.reg * np.eye(K)
        H[:K, K:] = Hab @ V
        H[K:, :K] = H[:K, K:].T
        H[K:, K:] = V.T @ Hbb @ V
        pen = self.penalty(theta)
        return loss + pen, grad, dense_solver(H), (loss, pen)


class _FullObjective:
    """Full-mode objective: logits ``V B z_t + log pi``, ``z_t`` the standardized contrast
    coordinates of every system and a constant 1 (D = K (N-1) + 1), ``B`` of shape (N-1, D)
    flattened row-major. One pass gives objective and gradient; Newton systems are solved
    exactly with the Hessian (``precondition is None``) or by conjugate gradients with exact
    Hessian-vector products, preconditioned by a given factorized Hessian."""

    def __init__(self, blocks, log_prior, V, reg, precondition=None):
        self.blocks, self.log_prior, self.V = blocks, log_prior, V
        self.precondition = precondition
        self.C = V.shape[1]
        self.D = blocks[0].x.shape[0]
        pw = np.full((self.C, self.D), reg / self.C)  # reg / (N-1) on system weights
        pw[:, -1] = 0.0                               # offsets are not penalized
        self.pw = pw.ravel()

    def penalty(self, theta):
        return 0.5 * float(self.pw @ (theta * theta))

    def evaluate(self, theta):
        VB = self.V @ theta.reshape(self.C, self.D)          # (N, D)
        grad = np.zeros((self.V.shape[0], self.D))
        loss = 0.0
        posteriors = []
        for blk in self.blocks:
            G = VB @ blk.x
            G += self.log_prior[:, None]
            part, P, R = _softmax_columns(G, blk.y, blk.c, blk.flat)
            loss += part
            posteriors.append(P)
            grad += R @ blk.x.T
        pen = self.penalty(theta)
        g = (self.V.T @ grad).ravel() + self.pw * theta
        if self.precondition is None:
            solve = dense_solver(self.hessian(posteriors))
        else:
            p32 = [P.astype(np.float32) for P in posteriors]

            def solve(rhs, rtol):
                return preconditioned_cg(lambda v: self.hessp(p32, v), rhs,
                                         self.precondition, rtol, max_iter=rhs.shape[0])
        return loss + pen, g, solve, (loss, pen, posteriors, solve)

    def hessian(self, posteriors):
        """Exact penalized Hessian ``sum_t c_t (V^T (diag p - p p^T) V) kron (z z^T)``."""
        C, D, V = self.C, self.D, self.V
        N = V.shape[0]
        H = np.zeros((C * D, C * D), order="F")
        G = np.zeros((N * D, D))
        for blk, P in zip(self.blocks, posteriors):
            Z, c = blk.x, blk.c
            m = c.shape[0]
            G += ((P * c)[:, None, :] * Z[None]).reshape(N * D, m) @ Z.T
            Q = (V.T @ P) * np.sqrt(c)
            Yt = (Q[:, None, :] * Z[None]).reshape(C * D, m)
            # Yt.T is Fortran-ordered: BLAS reads it without a copy; upper triangle updated
            H = dsyrk(-1.0, Yt.T, beta=1.0, c=H, trans=1, overwrite_c=1)
        H = np.triu(H) + np.triu(H, 1).T
        # sum_j (v_j v_j^T) kron G_j, with G_j = sum_t c_t p_tj z z^T, as one matrix product
        VV = (V[:, :, None] * V[:, None, :]).reshape(N, C * C)
        H += (VV.T @ G.reshape(N, D * D)).reshape(C, C, D, D).transpose(0, 2, 1, 3).reshape(
            C * D, C * D)
        H[np.diag_indices_from(H)] += self.pw
        return H

    def hessian_diagonal(self, posteriors):
        """Diagonal of the penalized Hessian: ``sum_t c_t M_t[i, i] z_ta^2`` (one pass)."""
        V2 = self.V * self.V
        out = np.zeros((self.C, self.D))
        for blk, P in zip(self.blocks, posteriors):
            M = V2.T @ P - (self.V.T @ P) ** 2          # diagonal of V^T (diag p - p p^T) V
            out += (M * blk.c) @ (blk.x * blk.x).T
        return out.ravel() + self.pw

    def hessp(self, posteriors, vec):
        """Exact product of the penalized Hessian (at ``posteriors``) with ``vec``: one pass.

        With single-precision posteriors the pass runs in single precision (about half the
        time; relative error ~1e-7), which is all the conjugate-gradient solves need: the
        gradient, which decides convergence, is always double precision.
        """
        single = posteriors[0].dtype == np.float32
        VD = self.V @ vec.reshape(self.C, self.D)           # (N, D) direction of the logits
        if single:
            VD = VD.astype(np.float32)
        out = np.zeros((self.V.shape[0], self.D))
        for blk, P in zip(self.blocks, posteriors):
            x, c = blk.single() if single else (blk.x, blk.c)
            Gd = VD @ x
            Gd -= np.einsum("jt,jt->t", P, Gd)
            Gd *= P
            Gd *= c
            out += Gd @ x.T
        return (self.V.T @ out).ravel() + self.pw * vec


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
        stride = 4 ** level
        parts = [idx[::stride] for idx in by_class]
        rows = np.sort(np.concatenate(parts))
        sub = np.bincount(y[rows], weights=c[rows], minlength=n_classes)
        scale = np.divide(totals, sub, out=np.ones(n_classes), where=sub > 0)
        levels.append((rows, c[rows] * scale[y[rows]]))
    levels.append((np.arange(n), c))
    return levels


def _scalar_blocks(La, rows, y, w, u_bar, s):
    """Standardized, row-centred, class-major chunks ``(K, N, m)`` of the trials ``rows``."""
    blocks = []
    for lo in range(0, rows.shape[0], _CHUNK):
        r = rows[lo:lo + _CHUNK]
        X = La[r]
        X = X - X.mean(axis=2, keepdims=True)
        X -= u_bar
        X /= s[:, None]
        blocks.append(_Block(np.ascontiguousarray(X.transpose(1, 2, 0)), y[r], w[lo:lo + _CHUNK]))
    return blocks


def _full_blocks(scalar_blocks, V):
    """Full-mode chunks ``(D, m)``: contrast coordinates of every system and a row of ones."""
    blocks = []
    for blk in scalar_blocks:
        K, _, m = blk.x.shape
        C = V.shape[1]
        Z = np.empty((K * C + 1, m))
        for k in range(K):
            Z[k * C:(k + 1) * C] = V.T @ blk.x[k]
        Z[-1] = 1.0
        blocks.append(_Block(Z, blk.y, blk.c))
    return blocks


def fit_multiclass(L, y, prior, mode="scalar", sample_weight=None, reg=DEFAULT_REG, tol=1e-10,
                   max_iter=100) -> MulticlassSolution:
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
    n_evals); ``result.x`` is B of shape (N-1, K(N-1)+1) flattened, standardized units."""
    K = La.shape[1]
    C = V.shape[1]
    D = K * C + 1
    dense = C * D <= _DENSE_PARAMS
    levels = _nested_levels(y, c, C + 1, base=max(2048, 2 * C * D))
    # start: the scalar solution on the smallest level (alpha_k I blocks, offsets b)
    rows, w = levels[0]
    blocks = _scalar_blocks(La, rows, y, w, u_bar, s)
    res = minimize_newton(_ScalarObjective(blocks, log_prior, V, reg).evaluate,
                          np.zeros(K + C), tol=tol, max_iter=max_iter, f_scale=f_scale)
    n_iter, n_evals = res.n_iter, res.n_evals
    theta = np.zeros((C, D))
    for k in range(K):
        theta[:, k * C:(k + 1) * C] = res.x[k] * np.eye(C)
    theta[:, -1] = res.x[K:]
    theta = theta.ravel()
    precondition = None
    for level, (rows, w) in enumerate(levels):
        if level > 0:
            blocks = _full_blocks(_scalar_blocks(La, rows, y, w, u_bar, s), V)
        else:
            blocks = _full_blocks(blocks, V)
        if not dense:  # too many parameters for a dense Hessian: Jacobi-preconditioned CG
            diag_obj = _FullObjective(blocks, log_prior, V, reg, precondition=lambda r: r)
            diagonal = diag_obj.hessian_diagonal(diag_obj.evaluate(theta)[3][2])
            precondition = _jacobi(diagonal)
        obj = _FullObjective(blocks, log_prior, V, reg, precondition)
        last = level == len(levels) - 1
        level_tol = tol if last else max(tol, 0.1 / np.sqrt(rows.shape[0]))
        res = minimize_newton(obj.evaluate, theta, tol=level_tol, max_iter=max_iter,
                              f_scale=f_scale)
        theta = res.x
        n_iter += res.n_iter
        n_evals += res.n_evals
        if precondition is None:
            # the exact Hessian of the smallest level at its solution preconditions the
            # larger levels (it stays close: all levels share one optimum up to sampling)
            precondition = res.info[3]
    return res, n_iter, n_evals


def objective_scale(prior):
    """Natural size of the objective: the cost of the uninformative system (every log-likelihood
    equal), ``-sum_i pi_i log pi_i``, over its value ``log N`` at the flat prior.

    It scales the penalty (so ``reg`` is relative to the objective at every prior) and the
    stopping rule of :func:`focal.core.newton.minimize_newton`. For N = 2 it equals the binary
    scale of :func:`focal.core.logistic.fit_logistic` (the prior entropy in bits).
    """
    prior = np.asarray(prior, dtype=float)
    n = prior.shape[0]
    if n < 2:
        return 1.0
    return float(-(prior @ np.log(prior)) / np.log(n))


def _jacobi(diagonal):
    inverse = 1.0 / np.where(diagonal > 0, diagonal, 1.0)
    return lambda r, rtol=0.0: r * inverse


def _fit(L, y, prior, mode, sample_weight, reg, tol, max_iter):
    n, K, N_all = L.shape
    if mode == "calibration" and K != 1:
        raise ValueError(f"mode='calibration' takes one system (K = 1), got K = {K}")
    active = np.flatnonzero(prior > 0)
    keep = prior[y] > 0
    remap = np.full(N_all, -1, dtype=np.int64)
    remap[active] = np.arange(active.size)
    La = L[keep][:, :, active] if (active.size < N_all or not keep.all()) else L
    ya = remap[y[keep]]
    pa = prior[active]
    if pa.min() < np.finfo(float).tiny:
        raise ValueError(f"prior[{int(active[np.argmin(pa)])}] = {float(pa.min())!r} is below the normal "
                         "floating-point range (2.2e-308): it cannot weight the training cost "
                         "accurately; use 0 to drop the class")
    va = None if sample_weight is None else np.asarray(sample_weight, dtype=float)[keep]
    c = class_trial_weights(ya, pa, va)
    N = active.size
    V = contrast_basis(N)
    log_prior = np.log(pa)
    f_scale = objective_scale(pa)
    reg = float(reg) * f_scale
    u_bar, s = system_scales(La, c)
    if mode != "full":
        blocks = _scalar_blocks(La, np.arange(ya.shape[0]), ya, c, u_bar, s)
        obj = _ScalarObjective(blocks, log_prior, V, reg)
        res = minimize_newton(obj.evaluate, np.zeros(K + N - 1), tol=tol, max_iter=max_iter,
                              f_scale=f_scale)
        n_evals, n_iter = res.n_evals, res.n_iter
        coef = res.x[:K] / s
        offset_a = V @ res.x[K:] - coef @ u_bar
    else:
        res, n_iter, n_evals = _fit_full(La, ya, c, log_prior, V, u_bar, s, reg, tol,
                                         max_iter, f_scale)
        C = N - 1
        B = res.x.reshape(C, K * C + 1)
        coef = np.zeros((K, N_all, N_all))
        offset_a = V @ B[:, -1]
        for k in range(K):
            A = V @ B[:, k * C:(k + 1) * C] @ V.T / s[k]
            coef[k][np.ix_(active, active)] = A
            offset_a -= A @ u_bar[k]
    offset = np.zeros(N_all)
    offset[active] = offset_a - offset_a.mean()
    if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(offset))):
        raise ValueError("the fitted fusion is not finite: the log-likelihoods are too large or "
                         "too small for their units (their weights overflow); rescale them")
    loss, pen = res.info[:2]
    return MulticlassSolution(mode=mode, coef=coef, offset=offset, active=active, loss=loss,
                              penalty=pen, n_iter=n_iter, n_evals=n_evals,
                              grad_norm=res.grad_norm, converged=res.converged)
