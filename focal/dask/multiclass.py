"""Multiclass fusion (scalar and calibration modes) on dask collections.

The objective of :func:`focal.core.multiclass_logistic.fit_multiclass` in its ``"scalar"`` /
``"calibration"`` families: fused log-likelihoods ``sum_k alpha_k l_k + beta`` minimizing the
prior-weighted multiclass logarithmic cost (thesis eq. 8.17, nats) plus the scale-free penalty
``reg / 2 sum_k (alpha_k s_k)^2`` times
:func:`~focal.core.multiclass_objective.objective_scale`, with the system scales ``s_k`` of
:func:`~focal.core.multiclass_objective.system_scales`, in the same standardized coordinates
``(alpha~, b)`` with offsets ``V b`` in the contrast basis. Two passes give the class totals,
the weighted mean centred vector ``u_bar`` and the scales; then
:func:`focal.core.newton.minimize_newton` runs (with the core's scale-free stopping rule) on an
objective callback that does one map-reduce per evaluation: every partition returns its cost,
gradient and (K + N)-square Hessian sums.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

import warnings

import numpy as np
from dask import delayed
from sklearn.exceptions import ConvergenceWarning

from ..core.multiclass import active_classes, contrast_basis
from ..core.multiclass_objective import objective_scale, scalar_newton_terms, softmax_columns
from ..core.newton import minimize_newton
from ..core.validation import as_sample_weight
from ._partitions import compute
from ._probe import adopt_state, probe_fit

__all__ = ["fit_multiclass"]


def _distinct(y):
    return np.unique(np.asarray(y))


def _encode(index, X, y, w, classes, n_classes, K, N):
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != K * N:
        raise ValueError(f"partition {index}: X must have {K * N} columns, got {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError(f"partition {index}: X contains NaN or infinity")
    y = np.asarray(y)
    if y.shape != (X.shape[0],):
        raise ValueError(f"partition {index}: y must have one label per trial ({X.shape[0]})")
    sorted_classes, order = classes
    pos = np.minimum(np.searchsorted(sorted_classes, y), sorted_classes.shape[0] - 1)
    if not (sorted_classes[pos] == y).all():
        raise ValueError(
            f"partition {index}: y contains labels not among the classes {sorted_classes.tolist()}"
        )
    labels = order[pos]
    v = None if w is None else as_sample_weight(np.asarray(w), X.shape[0])
    return X.reshape(-1, K, N), labels, v


def _class_sums(index, X, y, w, classes, n_classes, K, N, active):
    """Per class: total weight and weighted sum of the row-centred vectors ``u`` (K, N)."""
    L, labels, v = _encode(index, X, y, w, classes, n_classes, K, N)
    U = L[:, :, active]
    U = U - U.mean(axis=2, keepdims=True)  # centred over the classes that take part
    vv = np.ones(labels.size) if v is None else v
    totals = np.bincount(labels, weights=vv, minlength=n_classes)
    sums = np.zeros((n_classes, K, active.size))
    for i in active:  # a loop over the few classes
        mask = labels == i
        sums[i] = np.einsum("t,tkj->kj", vv[mask], U[mask])
    return totals, sums


def _weights(labels, v, per_class):
    c = per_class[labels]
    return c if v is None else c * v


def _spread(index, X, y, w, classes, n_classes, K, N, active, per_class, u_bar):
    L, labels, v = _encode(index, X, y, w, classes, n_classes, K, N)
    U = L[:, :, active]
    U = U - U.mean(axis=2, keepdims=True) - u_bar
    return np.einsum("t,tkj->k", _weights(labels, v, per_class), U * U)


def _block(index, X, y, w, classes, n_classes, K, N, active, per_class, u_bar, s):
    """Standardized, row-centred trials of the active classes, their class indices among the
    active classes (:func:`focal.core.multiclass.active_classes`; ``per_class``, the prior over
    the class totals, is positive exactly where the prior is) and weights.
    """
    L, labels, v = _encode(index, X, y, w, classes, n_classes, K, N)
    c = _weights(labels, v, per_class)
    _, keep, labels_active = active_classes(per_class, labels)
    La = L[keep][:, :, active]
    Xs = (La - La.mean(axis=2, keepdims=True) - u_bar) / s[:, None]
    return Xs, labels_active, c[keep]


def _objective(blk, a, off):
    """Cost, gradient and Hessian sums of one partition (unpenalized; b in full coordinates).

    Posteriors and the cost's gradient in the logits come from
    :func:`focal.core.multiclass_objective.softmax_columns` (full relative precision when the
    true class is near-certain), as in the in-memory objective.
    """
    Xs, ya, c = blk
    G = np.ascontiguousarray((np.einsum("tkn,k->tn", Xs, a) + off).T)  # (N, m)
    loss, P, R = softmax_columns(G, ya, c)
    ga = np.einsum("nt,tkn->k", R, Xs)
    gb = R.sum(axis=1)
    W = P * c
    Px = np.einsum("nt,tkn->tk", P, Xs)
    WX = W.T[:, None, :] * Xs
    cPx = Px * c[:, None]
    Haa = np.einsum("tkn,tln->kl", WX, Xs) - cPx.T @ Px
    Hab = WX.sum(axis=0) - cPx.T @ P.T
    Hbb = np.diag(W.sum(axis=1)) - W @ P.T
    return float(loss), ga, gb, Haa, Hab, Hbb


def fit_multiclass(estimator, X, y, sample_weight=None, *, persist: bool = True):
    """Fit a :class:`focal.MulticlassFusion` (``mode="scalar"`` or ``"calibration"``) on dask
    arrays ``X`` (n_trials, n_systems * n_classes) and ``y``; see :func:`focal.dask.fit`.
    """
    import dask
    import dask.array as da

    from ._partitions import _is_dask, column_blocks

    estimator._check_params()
    if estimator.mode == "full":
        raise ValueError(
            "focal.dask.fit trains MulticlassFusion in mode 'scalar' or "
            "'calibration'; fit mode='full' in memory"
        )
    if not _is_dask(X):
        X = da.from_array(np.asarray(X))
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_trials, n_systems * n_classes), got {X.shape}")
    X = X if len(X.chunks[1]) == 1 else X.rechunk({1: -1})
    y_blocks, _ = column_blocks(y, "y", X.chunks[0])
    w_blocks, _ = column_blocks(sample_weight, "sample_weight", X.chunks[0])
    x_blocks = list(X.to_delayed().ravel())
    if len(y_blocks) != len(x_blocks):
        raise ValueError(f"X has {len(x_blocks)} partitions but y has {len(y_blocks)}")
    w_blocks = [None] * len(x_blocks) if w_blocks is None else w_blocks
    if persist:
        x_blocks, y_blocks, w_blocks = dask.persist(x_blocks, y_blocks, w_blocks)
    parts = list(zip(x_blocks, y_blocks, w_blocks))

    found = compute(*[delayed(_distinct, pure=True)(b[1]) for b in parts])
    try:
        labels = np.unique(np.concatenate(found))
    except TypeError as err:
        raise ValueError(f"Unknown label type: y mixes incomparable values ({err})") from None
    # the estimator's own rules: class order and names, prior, widths, refusals
    probe = probe_fit(estimator, labels, X.shape[1])
    classes, prior = probe.classes_, probe.prior_
    N = n_classes = classes.shape[0]
    K = probe.n_systems_
    order = np.argsort(classes, kind="stable")
    enc = (classes[order], order)
    active = np.flatnonzero(prior > 0)
    common = (enc, n_classes, K, N, active)

    # pass 1: class totals and sums of centred vectors -> weights and u_bar
    sums = compute(*[delayed(_class_sums)(i, *b, *common) for i, b in enumerate(parts)])
    totals = np.sum([t for t, _ in sums], axis=0)
    empty = np.flatnonzero((prior > 0) & (totals <= 0))
    if empty.size:
        raise ValueError(
            f"class(es) {classes[empty].tolist()} have non-zero prior but no trials "
            "(of positive weight) in y"
        )
    per_class = np.divide(prior, totals, out=np.zeros(N), where=totals > 0)
    class_u = np.sum([u for _, u in sums], axis=0)  # (N, K, Na)
    u_bar = np.einsum("i,ikj->kj", per_class, class_u)  # sum_t c_t u_t
    # pass 2: the scales
    s2 = np.sum(
        compute(*[delayed(_spread)(i, *b, *common, per_class, u_bar) for i, b in enumerate(parts)]),
        axis=0,
    )
    Na = active.size
    s = np.sqrt(2.0 / (Na - 1) * s2)
    s = np.where(s > 0, s, 1.0)
    blocks = [delayed(_block)(i, *b, *common, per_class, u_bar, s) for i, b in enumerate(parts)]
    if persist:
        blocks = list(dask.persist(*blocks))
    V = contrast_basis(Na)
    log_prior = np.log(prior[active])
    f_scale = objective_scale(prior[active])
    reg = float(estimator.reg) * f_scale

    def evaluate(theta):
        a, b = theta[:K], theta[K:]
        off = V @ b + log_prior
        out = compute(*[delayed(_objective)(blk, a, off) for blk in blocks])
        loss = sum(o[0] for o in out)
        sums = (np.sum([o[j] for o in out], axis=0) for j in range(1, 6))
        return scalar_newton_terms(theta, V, reg, loss, *sums)

    res = minimize_newton(
        evaluate,
        np.zeros(K + Na - 1),
        tol=float(estimator.tol),
        max_iter=int(estimator.max_iter),
        f_scale=f_scale,
    )
    coef = res.x[:K] / s
    offset_a = V @ res.x[K:] - coef @ u_bar
    offset = np.zeros(N)
    offset[active] = offset_a - offset_a.mean()
    if not res.converged:
        warnings.warn(
            f"MulticlassFusion did not converge in {estimator.max_iter} iterations "
            f"(gradient norm {res.grad_norm:.3g})",
            ConvergenceWarning,
            stacklevel=3,
        )
    adopt_state(estimator, probe)
    estimator.coef_ = coef
    estimator.intercept_ = offset
    estimator.loss_ = float(res.info[0])
    estimator.n_iter_ = int(res.n_iter)
    estimator.converged_ = bool(res.converged)
    return estimator
