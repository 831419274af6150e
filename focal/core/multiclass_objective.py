"""The multiclass training objective of :mod:`focal.core.multiclass_logistic`, in standardized
coordinates: system scales, chunked trials, and the scalar- and full-mode objectives with exact
derivatives (prior-weighted multiclass logarithmic cost, thesis eq. 8.17).

Every objective exposes ``evaluate(theta) -> (value, grad, solve, info)`` for
:func:`focal.core.newton.minimize_newton`.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg.blas import dsyrk

from .moments import check_spreads
from .newton import dense_solver, preconditioned_cg

__all__ = [
    "CHUNK",
    "Block",
    "softmax_columns",
    "system_scales",
    "objective_scale",
    "ScalarObjective",
    "FullObjective",
    "scalar_blocks",
    "full_blocks",
]

CHUNK = 1 << 15  # rows per chunk: bounds temporaries and keeps them in cache


def system_scales(L: np.ndarray, c: np.ndarray):
    """Weighted mean row-centred vector ``u_bar_k`` and scale ``s_k`` of every system.

    ``u_tk`` is ``l_tk`` minus its mean over classes; ``u_bar_k = sum_t c_t u_tk`` and
    ``s_k^2 = 2 / (N - 1) * sum_t c_t ||u_tk - u_bar_k||^2``, the mean over class pairs of the
    weighted variance of ``l_i - l_j`` (weights ``c`` sum to 1). A constant system gets s = 1.
    """
    n, K, N = L.shape
    u_bar = np.zeros((K, N))
    with np.errstate(over="ignore", invalid="ignore"):
        for lo in range(0, n, CHUNK):
            U = L[lo : lo + CHUNK] - L[lo : lo + CHUNK].mean(axis=2, keepdims=True)
            u_bar += np.einsum("t,tkj->kj", c[lo : lo + CHUNK], U)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        s = _spreads(L, c, u_bar, np.ones(K))
    if not np.all((s > 1e-140) & (s < 1e140)):
        # log-likelihoods of extreme magnitude: squares of deviations scaled by a power of two
        # (exact), so 1e154 does not overflow nor 1e-170 underflow
        top = np.zeros(K)
        with np.errstate(over="ignore", invalid="ignore"):
            for lo in range(0, n, CHUNK):
                U = L[lo : lo + CHUNK] - L[lo : lo + CHUNK].mean(axis=2, keepdims=True)
                top = np.maximum(top, np.abs(U).max(axis=(0, 2)))
        check_spreads(np.where(np.isfinite(u_bar).all(axis=1), top, np.inf), "log-likelihoods")
        s = _spreads(L, c, u_bar, np.ldexp(1.0, -np.frexp(np.where(top > 0, top, 1.0))[1]))
    return u_bar, np.where(s > 0, s, 1.0)


def _spreads(L, c, u_bar, pow2):
    """The scales ``s_k`` of :func:`system_scales`, from deviations multiplied by ``pow2``."""
    n, K, N = L.shape
    s2 = np.zeros(K)
    for lo in range(0, n, CHUNK):
        U = L[lo : lo + CHUNK] - L[lo : lo + CHUNK].mean(axis=2, keepdims=True) - u_bar
        if not np.all(pow2 == 1.0):
            U *= pow2[:, None]
        s2 += np.einsum("t,tkj->k", c[lo : lo + CHUNK], U * U)
    return np.sqrt(2.0 / (N - 1) * s2) / pow2


@dataclass
class Block:
    """One chunk of trials, class-major: ``x`` is ``(K, N, m)`` standardized log-likelihoods
    (scalar mode) or ``(D, m)`` contrast features plus a row of ones (full mode).
    """

    x: np.ndarray
    y: np.ndarray
    c: np.ndarray

    @property
    def cols(self):
        """Row indices ``0..m-1`` of the block's trials."""
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


def softmax_columns(G: np.ndarray, y: np.ndarray, c: np.ndarray, flat=None, accurate=True):
    """In place: logits ``G`` (N, m), log prior included -> posteriors. Returns (cost, P, R):
    the weighted logarithmic cost ``sum_t c_t (-log P[y_t, t])`` (nats), ``P`` and the
    gradient of the cost in the logits, ``R = c (P - onehot(y))``. ``flat``: the positions
    ``y * m + arange(m)`` of the true classes in ``G.ravel()``, if known. With
    ``accurate=False`` (ordinary priors, see :data:`focal.core.logistic.ROUND_OFF_FLOOR`)
    ``1 - P`` and ``-log P`` are plain differences, accurate to an ulp of 1 per trial.

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
    if not accurate:
        z = G.sum(axis=0)
        loss = float(c @ (np.log(z) - own))
        G /= z
        R = G * c
        r = R.reshape(-1)
        r.put(flat, r.take(flat) - c)
        return loss, G, R
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


class ScalarObjective:
    """Scalar-mode objective in standardized coordinates ``theta = (alpha~ (K), b (N-1))``:
    logits ``sum_k alpha~_k l~_tk + V b + log pi``, with exact gradient and Hessian (one pass).
    """

    accurate = True  # see softmax_columns

    def __init__(self, blocks, log_prior, V, reg):
        self.blocks, self.log_prior, self.V, self.reg = blocks, log_prior, V, reg
        self.K = blocks[0].x.shape[0]

    def evaluate(self, theta):
        """Objective value, gradient and per-block posteriors at ``theta``."""
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
            part, P, R = softmax_columns(G, y, c, blk.flat, self.accurate)
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
        return scalar_newton_terms(theta, V, self.reg, loss, ga, gb, Haa, Hab, Hbb)


def scalar_newton_terms(theta, V, reg, loss, ga, gb, Haa, Hab, Hbb):
    """The scalar-mode objective at ``theta = (alpha~ (K), b (N-1))`` as
    :func:`focal.core.newton.minimize_newton` takes it, from the sums of its data term.

    ``ga`` (K,) and ``gb`` (N,) are the gradient sums in the weights and in the full offsets,
    ``Haa`` (K, K), ``Hab`` (K, N) and ``Hbb`` (N, N) the Hessian sums; the offsets are
    mapped to the contrast basis ``V`` (N, N-1) and the penalty ``reg / 2 |alpha~|^2`` is
    added. Returns ``(objective, gradient, solver of the Hessian, (loss, penalty))``.
    """
    K = Haa.shape[0]
    a = theta[:K]
    grad = np.concatenate([ga + reg * a, V.T @ gb])
    H = np.empty((K + V.shape[0] - 1,) * 2)
    H[:K, :K] = Haa + reg * np.eye(K)
    H[:K, K:] = Hab @ V
    H[K:, :K] = H[:K, K:].T
    H[K:, K:] = V.T @ Hbb @ V
    pen = 0.5 * reg * float(a @ a)
    return loss + pen, grad, dense_solver(H), (loss, pen)


class FullObjective:
    """Full-mode objective: logits ``V B z_t + log pi``, ``z_t`` the standardized contrast
    coordinates of every system and a constant 1 (D = K (N-1) + 1), ``B`` of shape (N-1, D)
    flattened row-major. One pass gives objective and gradient; Newton systems are solved
    exactly with the Hessian (``precondition is None``) or by conjugate gradients with exact
    Hessian-vector products, preconditioned by a given factorized Hessian.
    """

    accurate = True  # see softmax_columns

    def __init__(self, blocks, log_prior, V, reg, precondition=None):
        self.blocks, self.log_prior, self.V = blocks, log_prior, V
        self.precondition = precondition
        self.C = V.shape[1]
        self.D = blocks[0].x.shape[0]
        pw = np.full((self.C, self.D), reg / self.C)  # reg / (N-1) on system weights
        pw[:, -1] = 0.0  # offsets are not penalized
        self.pw = pw.ravel()

    def penalty(self, theta):
        """The L2 penalty of ``theta`` (nats)."""
        return 0.5 * float(self.pw @ (theta * theta))

    def evaluate(self, theta):
        """Objective value, gradient and per-block posteriors at ``theta``."""
        VB = self.V @ theta.reshape(self.C, self.D)  # (N, D)
        grad = np.zeros((self.V.shape[0], self.D))
        loss = 0.0
        posteriors = []
        for blk in self.blocks:
            G = VB @ blk.x
            G += self.log_prior[:, None]
            part, P, R = softmax_columns(G, blk.y, blk.c, blk.flat, self.accurate)
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
                return preconditioned_cg(
                    lambda v: self.hessp(p32, v),
                    rhs,
                    self.precondition,
                    rtol,
                    max_iter=rhs.shape[0],
                )

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
        H += (
            (VV.T @ G.reshape(N, D * D))
            .reshape(C, C, D, D)
            .transpose(0, 2, 1, 3)
            .reshape(C * D, C * D)
        )
        H[np.diag_indices_from(H)] += self.pw
        return H

    def hessian_diagonal(self, posteriors):
        """Diagonal of the penalized Hessian: ``sum_t c_t M_t[i, i] z_ta^2`` (one pass)."""
        V2 = self.V * self.V
        out = np.zeros((self.C, self.D))
        for blk, P in zip(self.blocks, posteriors):
            M = V2.T @ P - (self.V.T @ P) ** 2  # diagonal of V^T (diag p - p p^T) V
            out += (M * blk.c) @ (blk.x * blk.x).T
        return out.ravel() + self.pw

    def hessp(self, posteriors, vec):
        """Exact product of the penalized Hessian (at ``posteriors``) with ``vec``: one pass.

        With single-precision posteriors the pass runs in single precision (about half the
        time; relative error ~1e-7), which is all the conjugate-gradient solves need: the
        gradient, which decides convergence, is always double precision.
        """
        single = posteriors[0].dtype == np.float32
        VD = self.V @ vec.reshape(self.C, self.D)  # (N, D) direction of the logits
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


def scalar_blocks(La, rows, y, w, u_bar, s):
    """Standardized, row-centred, class-major chunks ``(K, N, m)`` of the trials ``rows``."""
    blocks = []
    for lo in range(0, rows.shape[0], CHUNK):
        r = rows[lo : lo + CHUNK]
        X = La[r]
        X = X - X.mean(axis=2, keepdims=True)
        X -= u_bar
        X /= s[:, None]
        blocks.append(Block(np.ascontiguousarray(X.transpose(1, 2, 0)), y[r], w[lo : lo + CHUNK]))
    return blocks


def full_blocks(scalar, V):
    """Full-mode chunks ``(D, m)``: contrast coordinates of every system and a row of ones,
    from the scalar-mode chunks ``scalar``.
    """
    blocks = []
    for blk in scalar:
        K, _, m = blk.x.shape
        C = V.shape[1]
        Z = np.empty((K * C + 1, m))
        for k in range(K):
            Z[k * C : (k + 1) * C] = V.T @ blk.x[k]
        Z[-1] = 1.0
        blocks.append(Block(Z, blk.y, blk.c))
    return blocks
