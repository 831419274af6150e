"""The data term of prior-weighted logistic regression: passes over the trials.

:class:`LogisticDesign` holds the trials of a binary fit (:mod:`focal.core.logistic`) in
standardized coordinates and computes, in one pass over the data by cache-sized blocks of rows,
the prior-weighted cost of thesis eq. 8.17 (or of another proper scoring rule, eq. 8.15), its
gradient and its Hessian; :func:`objective_scale` is the natural size of that objective, which
makes the penalty and the stopping rule scale-free.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

import numpy as np
from scipy.special import logit

from .moments import check_spreads, merged_moments
from .scoring_rules import LOGARITHMIC, default_expected_cost

__all__ = [
    "LogisticDesign",
    "add_penalty",
    "objective_scale",
    "class_relative_weights",
    "CHUNK",
    "ROUND_OFF_FLOOR",
]

CHUNK = 1 << 13  # rows per block: the block's temporaries stay in the CPU cache
# gradient thresholds (tol times the objective's scale, nats) below which the passes compute
# derivatives to full relative precision instead of to an ulp of 1/2 per trial
ROUND_OFF_FLOOR = 1e-13


def class_relative_weights(sample_weight, y):
    """Trial weights as eq. 8.17 uses them: each class's weights scaled by one power of two
    (exactly) so that the largest is in [0.5, 1); None stays None.

    The objective weights a trial by prior / class total, so only the ratios of the weights
    within a class matter, and this scaling changes no fit and no training cost (bit for bit,
    short of subnormal weights). It keeps the class totals finite (weights of 1e308 would
    overflow them) and the per-trial factors prior / total normal (1e300 would underflow them).

    Parameters
    ----------
    sample_weight : ndarray of float64 or None
        Validated non-negative finite weights (:func:`focal.core.validation.as_sample_weight`).
    y : ndarray of bool
        True for target trials.

    Returns
    -------
    ndarray of float64 or None
        A new array (or None).
    """
    if sample_weight is None:
        return None
    w = np.array(sample_weight, dtype=float)
    for mask in (y, ~y):
        top = w[mask].max(initial=0.0)
        if top > 0:
            w[mask] = np.ldexp(w[mask], -int(np.frexp(top)[1]))
    return w


def add_penalty(theta, grad, hess, weight) -> float:
    """Add the L2 penalty ``weight / 2 * sum_k theta_k^2`` of the K weights (``theta``'s last
    entry, the offset, is not penalized) to the gradient and the Hessian, in place; returns the
    penalty.
    """
    K = theta.shape[0] - 1
    grad[:K] += weight * theta[:K]
    hess[np.arange(K), np.arange(K)] += weight
    return 0.5 * weight * float(theta[:K] @ theta[:K])


def objective_scale(p_target, rule):
    """Cost of the uninformative system (all LLRs 0) at ``p_target`` over its cost at 0.5."""
    rule = LOGARITHMIC if rule is None else rule
    return default_expected_cost(p_target, rule) / default_expected_cost(0.5, rule)


class LogisticDesign:
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
        else:  # each class summed on its own: a total minus the other cancels (1e300 + 1)
            with np.errstate(over="ignore"):  # an overflowing total is refused just below
                w_tar = float(sample_weight[y].sum())
                w_non = float(sample_weight[~y].sum())
            if not (np.isfinite(w_tar + w_non) and min(w_tar, w_non) > 0):
                raise ValueError(
                    f"sample_weight gives the classes totals {w_tar:.4g} (targets) and "
                    f"{w_non:.4g} (non-targets): each must be finite and > 0 (scale the weights "
                    "of each class: class_relative_weights)"
                )
        # per-trial factor of eq. 8.17: prior / class total
        self.f_tar = self.p_target / w_tar
        self.f_non = (1.0 - self.p_target) / w_non
        self.n_passes = 0
        # centered scores of one block, transposed, with a row of ones for the intercept
        self._buf = np.empty((self.K + 1, min(CHUNK, self.n)))
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
        for lo in range(0, self.n, CHUNK):
            hi = min(lo + CHUNK, self.n)
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
        """``reg`` times the objective's natural size (:func:`objective_scale`)."""
        return self.reg * objective_scale(self.p_target, rule)

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
        return loss, add_penalty(theta, grad, hess, self.penalty_weight(rule)), grad, hess

    def to_standard(self, coef, intercept):
        """Standardized parameters theta of weights and an offset in original units."""
        theta = np.empty(self.K + 1)
        theta[: self.K] = coef * self.scale
        theta[self.K] = intercept + coef @ self.center
        return theta

    def to_original(self, theta):
        """Weights and offset in original units, ``(coef, intercept)``, of theta."""
        a = theta[: self.K] / self.scale
        return a, float(theta[self.K] - a @ self.center)
