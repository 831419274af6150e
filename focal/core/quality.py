"""Quality-measure fusion: logistic-regression fusion whose weights depend on trial quality.

A detection trial compares a model (enrolment) side with a test side; each side carries M
*quality measures* (duration, SNR, channel or language posteriors, ...). Calibration often
drifts with them: short segments give scores that need a smaller slope and a different offset.
Quality fusion extends the affine fusion of thesis eq. 8.16 (:cite:t:`brummer2010thesis`) with terms
in the quality vectors ``q_m`` (model side) and ``q_t`` (test side), each optionally passed through
a monotone transform first (e.g. log duration). Three forms:

``"bilinear"`` (the quality fusion of the BOSARIS toolkit, Brümmer & de Villiers 2011)::

    llr = b + sum_k a_k s_k + [1, q_m]^T W [1, q_t],   W symmetric (M+1)x(M+1)

The corner ``W_00`` is a constant and is absorbed into ``b`` (it cannot be told apart from it).
With W symmetric the form is symmetric in the two sides, and it equals ``c^T g`` with the
features ``g``: ``q_mi + q_ti`` (weight ``W_0i``), ``q_mi q_ti`` (``W_ii``) and
``q_mi q_tj + q_mj q_ti`` for i < j (``W_ij``).

``"linear"`` (the "quality measure function" of recent speaker-recognition back-ends)::

    llr = b + a^T s + c^T f(q_m, q_t)

with ``f`` the per-measure ``min`` and ``max`` of the two sides (``features="minmax"``,
symmetric in the sides) or the two sides themselves (``features="sides"``).

``"scale"`` (duration-dependent calibration: quality moves both the offset and every slope)::

    llr = b(q) + sum_k a_k(q) s_k,   b(q) = b + c^T f,   a_k(q) = a_k + d_k^T f

All three are linear in their parameters: the LLR is ``theta^T phi(s, q)`` for a feature vector
``phi`` built here (:func:`design_matrix`), so they are trained by the same prior-weighted
logistic regression as the affine fusion (thesis eq. 8.17, :func:`focal.core.logistic.
fit_logistic`): same objective, same penalty in standardized units, same Newton solver,
started from the affine fusion (the quality weights at zero).

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .logistic import DEFAULT_REG, fit_logistic
from .maps import quality_features

__all__ = [
    "bilinear_matrix",
    "QualityModel",
    "n_quality_features",
    "design_matrix",
    "fit_quality",
]


_SUBSAMPLE = 1 << 16  # trials in the warm-start subsample of large problems


def bilinear_matrix(quality_coef, M):
    """The symmetric (M + 1) x (M + 1) matrix W of the "bilinear" form (``W[0, 0] = 0``: it is
    absorbed into the offset) from its P quality weights (:func:`quality_features` order).
    """
    c = quality_coef
    W = np.zeros((M + 1, M + 1))
    W[0, 1:] = W[1:, 0] = c[:M]  # the weight of q_mi + q_ti is W_0i (= W_i0)
    iu, ju = np.triu_indices(M)
    W[iu + 1, ju + 1] = W[ju + 1, iu + 1] = c[M:]  # of q_mi q_tj + q_mj q_ti: W_ij
    return W


def n_quality_features(M, form):
    """Number P of quality features of M measures."""
    return M + M * (M + 1) // 2 if form == "bilinear" else 2 * M


def design_matrix(X, qm, qt, form, features="minmax"):
    """Feature vectors ``phi`` of the trials (without the constant): ``[s, g]`` or, for the
    "scale" form, ``[s, g, s_1 g, ..., s_K g]``, with ``g`` the :func:`quality_features`.
    Shape (n_trials, K + P) or (n, K + P + K P); built in place, one column at a time.
    """
    n, K = X.shape
    P = n_quality_features(qm.shape[1], form)
    width = K + P + (K * P if form == "scale" else 0)
    phi = np.empty((n, width), order="F")  # columns are written (and later read) contiguously
    phi[:, :K] = X
    g = quality_features(qm, qt, form, features, out=phi[:, K : K + P])[0]
    if form == "scale":
        for k in range(K):
            s_k = phi[:, k]
            for j in range(P):
                np.multiply(g[:, j], s_k, out=phi[:, K + P + k * P + j])
    return phi


@dataclass(frozen=True)
class QualityModel:
    """Fitted parameters of a quality fusion (see the module docstring).

    Attributes
    ----------
    coef : ndarray, shape (K,)
        System weights ``a_k`` (LLR per unit of score where the quality features are 0).
    intercept : float
        Offset ``b`` (nats), with ``logit(p_target)`` removed.
    quality_coef : ndarray, shape (P,)
        Weights ``c`` of the quality features in the offset.
    scale_coef : ndarray, shape (K, P)
        Weights ``d_k`` of the quality features in each system's slope (zero unless "scale").
    loss, penalty : float
        Prior-weighted logarithmic cost (nats, thesis eq. 8.17) and the penalty at the solution.
    n_iter, n_passes : int
        Newton steps and passes over the data (of both stages: subsample and all trials).
    grad_norm : float
    converged : bool
    """

    coef: np.ndarray
    intercept: float
    quality_coef: np.ndarray
    scale_coef: np.ndarray
    loss: float
    penalty: float
    n_iter: int
    n_passes: int
    grad_norm: float
    converged: bool


def fit_quality(
    X,
    qm,
    qt,
    y,
    form,
    init,
    features="minmax",
    p_target=0.5,
    sample_weight=None,
    reg=DEFAULT_REG,
    tol=1e-10,
    max_iter=100,
):
    """Minimize the prior-weighted logarithmic cost (thesis eq. 8.17) of a quality fusion.

    Parameters
    ----------
    X : ndarray of float64, shape (n_trials, K)
        Scores of the trials that have quality (finite).
    qm, qt : ndarray of float64, shape (n_trials, M)
        Their (transformed) quality, model and test side, no NaN.
    y : ndarray of bool, shape (n_trials,)
        True for target trials; both classes present.
    form : {"bilinear", "linear", "scale"}
    init : tuple (coef, intercept)
        The affine fusion to start from (quality weights start at zero).
    features : {"minmax", "sides"}
        Quality features of the "linear" and "scale" forms.
    p_target, sample_weight, reg, tol, max_iter
        As in :func:`focal.core.logistic.fit_logistic`; the penalty ``reg/2 sum (w_j sd_j)^2``
        covers every weight, the quality ones included, in standardized units.

    Returns
    -------
    QualityModel
    """
    n, K = X.shape
    P = n_quality_features(qm.shape[1], form)
    phi = design_matrix(X, qm, qt, form, features)
    start = (np.concatenate([init[0], np.zeros(phi.shape[1] - K)]), float(init[1]))
    n_iter = passes = 0
    if n >= 8 * _SUBSAMPLE:
        # only the start point comes from the subsample: the steps on all trials decide
        idx = np.sort(np.random.default_rng(20100101).integers(0, n, _SUBSAMPLE))
        ys = y[idx]
        if min(np.count_nonzero(ys), np.count_nonzero(~ys)) >= 200:
            sw = None if sample_weight is None else sample_weight[idx]
            sub = fit_logistic(phi[idx], ys, p_target, sw, reg, max(tol, 1e-7), max_iter, start)
            start = (sub.coef, sub.intercept)
            n_iter = sub.n_iter
            passes = -(-sub.n_passes * _SUBSAMPLE // n)
    sol = fit_logistic(phi, y, p_target, sample_weight, reg, tol, max_iter, start)
    w = sol.coef
    scale_coef = w[K + P :].reshape(K, P) if form == "scale" else np.zeros((K, P))
    return QualityModel(
        coef=w[:K].copy(),
        intercept=float(sol.intercept),
        quality_coef=w[K : K + P].copy(),
        scale_coef=np.array(scale_coef),
        loss=sol.loss,
        penalty=sol.penalty,
        n_iter=n_iter + sol.n_iter,
        n_passes=passes + sol.n_passes,
        grad_norm=sol.grad_norm,
        converged=sol.converged,
    )
