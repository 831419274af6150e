"""Training binary fusion / calibration on dask collections, and applying fitted models to them.

:func:`fit` minimizes the same objective as :meth:`focal.LogisticFusion.fit` (prior-weighted
logarithmic cost, thesis eq. 8.17, with the L2 penalty in standardized units of
:mod:`focal.core.logistic`) by the shared damped-Newton loop
:func:`focal.core.newton.minimize_newton`: the objective callback does one map-reduce over the
partitions per evaluation, each partition returning its cost, gradient and (K+1)-square Hessian
sums. The trials never leave the workers; the result is the usual in-memory estimator (save it
with :func:`focal.save`, apply it with ``transform`` or, on dask collections, :func:`apply`).

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

import numpy as np
from dask import delayed
from scipy.special import logit

from ..core.logistic import LogisticSolution, fit_logistic
from ..core.logistic_objective import add_penalty
from ..core.multiclass_objective import objective_scale
from ..core.newton import dense_solver, minimize_newton
from ..core.validation import as_sample_weight
from ..estimators._fit_report import report_fit, warn_not_converged
from ..estimators.fusion import LogisticFusion
from ._partitions import _is_dask, _is_frame, column_blocks, compute
from ._probe import adopt_state, probe_fit

__all__ = ["fit", "apply"]

_WARM_ROWS = 1 << 16  # trials in the warm-start sample of large problems
_ROWS = 1 << 13  # rows per slice of a partition: temporaries stay in cache
_WARM_MIN_CLASS = 200


def _as_2d_dask(X, one_system: bool):
    """``(dask array (n, K) with one column chunk, feature names or None)``."""
    import dask.array as da

    names = None
    if _is_frame(X):
        if getattr(X, "ndim", 2) == 1:
            X = X.to_frame()
        cols = list(X.columns)
        if all(isinstance(c, str) for c in cols):
            names = np.asarray(cols, dtype=object)
        X = X.to_dask_array(lengths=True)
    elif not _is_dask(X):
        X = da.from_array(np.asarray(X))
    if X.ndim == 1 and one_system:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_trials, n_systems), got shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must hold real numbers, got dtype {X.dtype}")
    return (X if len(X.chunks[1]) == 1 else X.rechunk({1: -1})), names


def _block_moments(index, X, y, w):
    """Per label value: (total weight, weighted mean, weighted sum of squared deviations)."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if y.shape != (X.shape[0],):
        raise ValueError(
            f"partition {index}: y must have one label per trial ({X.shape[0]}), "
            f"got shape {y.shape}"
        )
    if not np.isfinite(X).all():
        row = int(np.flatnonzero(~np.isfinite(X).all(axis=1))[0])
        raise ValueError(
            f"partition {index}: X contains NaN or infinity (row {row} of the partition)"
        )
    if w is not None:
        w = as_sample_weight(np.asarray(w), X.shape[0])
    values = np.unique(y)
    out = {"rows": X.shape[0]}
    if values.size > 2:
        raise ValueError(
            f"partition {index}: y contains {values.size} classes "
            f"({values[:5].tolist()}...); binary fusion takes two"
        )
    for v in values.tolist():
        mask = y == v
        Xc = X[mask]
        c = np.ones(Xc.shape[0]) if w is None else w[mask]
        total = float(c.sum())
        if total == 0:
            out[v] = (0.0, np.zeros(X.shape[1]), np.zeros(X.shape[1]))
            continue
        ref = Xc[0]
        dev = Xc - ref  # exact zeros for a constant system
        mean = (c @ dev) / total
        m2 = c @ np.square(dev - mean)
        out[v] = (total, ref + mean, m2)
    return out


def _rows(X, y, w, step):
    """Every ``step``-th trial of a partition (the warm-start sample)."""
    return (
        np.asarray(X, dtype=float)[::step],
        np.asarray(y)[::step],
        None if w is None else np.asarray(w, dtype=float)[::step],
    )


def _warm_start(blocks, n, classes, p, reg, tol, max_iter, center, scale):
    """Standardized start point from an in-memory fit on a strided sample, or None.

    Only the start comes from the sample (as in :func:`focal.core.logistic.fit_logistic` on
    large data): the Newton steps on all the trials decide the solution. Returns
    ``(theta, n_iter)``.
    """
    if n < 8 * _WARM_ROWS:
        return None
    step = n // _WARM_ROWS
    parts = compute(*[delayed(_rows, pure=True)(*b, step) for b in blocks])
    Xs = np.concatenate([q[0] for q in parts])
    ts = np.concatenate([q[1] for q in parts]) == classes[1]
    ws = None if parts[0][2] is None else np.concatenate([q[2] for q in parts])
    pos = np.ones(ts.size, dtype=bool) if ws is None else ws > 0
    if min(np.count_nonzero(ts & pos), np.count_nonzero(~ts & pos)) < _WARM_MIN_CLASS:
        return None
    sol = fit_logistic(Xs, ts, p, sample_weight=ws, reg=reg, tol=max(tol, 1e-7), max_iter=max_iter)
    return np.append(sol.coef * scale, sol.intercept + sol.coef @ center), sol.n_iter


def _key(label):
    """A label as the plain Python value used to key per-label statistics."""
    return label.item() if hasattr(label, "item") else label


def _chan(a, b):
    """Merge two (weight, mean, M2) triples (Chan, Golub & LeVeque)."""
    wa, ma, sa = a
    wb, mb, sb = b
    if wa == 0:
        return b
    if wb == 0:
        return a
    w = wa + wb
    delta = mb - ma
    return w, ma + delta * (wb / w), sa + sb + delta * delta * (wa * wb / w)


def _block_objective(X, y, w, target, center, scale, theta, plo, f_tar, f_non):
    """Data term of the objective on one partition: cost (nats), gradient and Hessian sums in
    the standardized coordinates of :mod:`focal.core.logistic`, with the global class weights
    ``f_tar = p / W_tar`` and ``f_non = (1 - p) / W_non``.

    Per trial, ``z = LLR + logit p`` and ``s = -1`` (target) or ``+1``: cost
    ``softplus(s z)``, derivative ``s sigmoid(s z)``, second derivative
    ``sigmoid(z) sigmoid(-z)`` (thesis eq. 7.39), from one ``e = exp(-|z|)`` and each to full
    relative precision (``sigmoid(-|u|) = e / (1 + e)``, ``e / (1 + e)^2``), as the core's
    accurate pass, so extreme priors reach the same optimum; rows are taken in cache-sized
    slices.
    """
    X = np.asarray(X, dtype=float)
    is_tar = np.asarray(y) == target
    v = None if w is None else np.asarray(w, dtype=float)
    n, K = X.shape
    offset = theta[K] + plo
    loss = 0.0
    grad = np.zeros(K + 1)
    hess = np.zeros((K + 1, K + 1))
    S = np.empty((K + 1, min(_ROWS, max(n, 1))))
    S[K] = 1.0
    for lo in range(0, n, _ROWS):  # a loop over slices of rows, not over trials
        m = min(n - lo, _ROWS)
        Sm = S[:, :m]
        np.subtract(X[lo : lo + m].T, center[:, None], out=Sm[:K])
        Sm[:K] /= scale[:, None]
        z = theta[:K] @ Sm[:K] + offset  # from standardized scores: no cancellation
        cs = np.where(is_tar[lo : lo + m], -f_tar, f_non)
        if v is not None:
            cs *= v[lo : lo + m]
        c = np.abs(cs)
        cu = cs * z  # c u with u = s z: c max(u, 0) = max(c u, 0)
        e = np.exp(-np.abs(z))
        loss += float(np.maximum(cu, 0.0).sum() + c @ np.log1p(e))
        q = 1.0 / (1.0 + e)  # sigmoid(|u|); sigmoid(-|u|) = e q
        grad += Sm @ (np.where(cu > 0.0, q, e * q) * cs)
        hess += (Sm * (e * q * q * c)) @ Sm.T
    return loss, grad, hess


def _reduce(parts):
    loss = sum(p[0] for p in parts)
    grad = np.sum([p[1] for p in parts], axis=0)
    hess = np.sum([p[2] for p in parts], axis=0)
    return loss, grad, hess


def fit(estimator, X, y, sample_weight=None, *, persist: bool = True):
    """Fit a LogisticFusion, LinearCalibrator or MulticlassFusion on dask collections.

    Parameters
    ----------
    estimator : LogisticFusion, LinearCalibrator or MulticlassFusion
        Unfitted or fitted; its parameters (``p_target``, ``reg``, ``tol``, ``max_iter``) are
        used as in ``fit``. Only the logarithmic scoring rule is trained this way; a
        MulticlassFusion in mode ``"scalar"`` or ``"calibration"`` (:mod:`focal.dask.multiclass`).
    X : dask array (n_trials, n_systems) or dask DataFrame
        Scores (1-D for a LinearCalibrator); DataFrame columns become ``feature_names_in_``.
    y : dask array or dask Series, shape (n_trials,)
        Two labels; ``classes_[1]`` (the larger) is the target.
    sample_weight : dask array or dask Series, optional
        Non-negative trial weights.
    persist : bool, default True
        Keep X, y and the weights in the workers' memory during the Newton iterations (each
        reads them once per objective evaluation); False recomputes them each time.

    Returns
    -------
    estimator
        The same object, fitted: ``coef_``, ``intercept_``, ``classes_``, ``n_iter_``,
        ``n_passes_``, ``objective_``, ``rule_objective_`` as :meth:`LogisticFusion.fit` sets
        them, equal to an in-memory fit to the solver's tolerance.
    """
    from ..estimators.multiclass import MulticlassFusion

    if isinstance(estimator, MulticlassFusion):
        from .multiclass import fit_multiclass

        return fit_multiclass(estimator, X, y, sample_weight, persist=persist)
    if not isinstance(estimator, LogisticFusion):
        raise TypeError(
            f"focal.dask.fit trains LogisticFusion, LinearCalibrator and "
            f"MulticlassFusion, got {type(estimator).__name__}"
        )
    p, reg, tol, max_iter, rule = estimator._check_params()
    if not rule.is_logarithmic:
        raise ValueError(
            f"focal.dask.fit trains the logarithmic scoring rule only, got "
            f"scoring_rule={estimator.scoring_rule!r}"
        )
    if isinstance(estimator.bounds, str):  # "elub" (checked above)
        raise ValueError(
            "focal.dask.fit cannot take bounds='elub': the ELUB limits need the LLRs of every "
            "training trial in memory; fit in memory, or give bounds as (lower, upper) LLRs "
            "(e.g. focal.metrics.elub_bounds of held-out LLRs)"
        )
    one = type(estimator)._as_2d is not LogisticFusion._as_2d
    X, names = _as_2d_dask(X, one)
    estimator._check_width(X)
    y_blocks, _ = column_blocks(y, "y", X.chunks[0])
    w_blocks, _ = column_blocks(sample_weight, "sample_weight", X.chunks[0])
    x_blocks = list(X.to_delayed().ravel())
    if len(y_blocks) != len(x_blocks):
        raise ValueError(
            f"X has {len(x_blocks)} partitions but y has {len(y_blocks)}: they "
            "must come from the same collection"
        )
    w_blocks = [None] * len(x_blocks) if w_blocks is None else w_blocks
    if persist:
        import dask

        x_blocks, y_blocks, w_blocks = dask.persist(x_blocks, y_blocks, w_blocks)
    blocks = list(zip(x_blocks, y_blocks, w_blocks))
    K = X.shape[1]

    # pass 1: labels, class totals, moments (per class, merged exactly)
    moments = compute(*[delayed(_block_moments, pure=True)(i, *b) for i, b in enumerate(blocks)])
    per_label: dict = {}
    n_rows = sum(m.pop("rows") for m in moments)
    for m in moments:
        for v, stats in m.items():
            per_label[v] = _chan(per_label[v], stats) if v in per_label else stats
    probe = probe_fit(estimator, np.array(list(per_label)), K, names)
    classes = probe.classes_  # the estimator's own label rule decides the target
    (w_non, m_non, s_non), (w_tar, m_tar, s_tar) = (per_label[_key(c)] for c in classes)
    for total, label in ((w_tar, classes[1]), (w_non, classes[0])):
        if not total > 0:
            raise ValueError(
                f"sample_weight gives class {label!r} zero total weight: training "
                "needs both classes"
            )
    # prior-weighted moments (weights p / W_tar and (1 - p) / W_non sum to 1)
    center = p * m_tar + (1 - p) * m_non
    var = p * (s_tar / w_tar + (m_tar - center) ** 2) + (1 - p) * (
        s_non / w_non + (m_non - center) ** 2
    )
    sd = np.sqrt(var)
    scale = np.where(sd > 0, sd, 1.0)
    plo = float(logit(p))
    f_tar, f_non = p / w_tar, (1 - p) / w_non
    target = _key(classes[1])
    objective = delayed(_block_objective, pure=True)

    # the core's scale-free objective: penalty and stopping rule relative to the cost of the
    # uninformative system at p (the prior entropy in bits, the N = 2 case of objective_scale)
    f_scale = objective_scale(np.array([p, 1.0 - p]))
    reg_eff = reg * f_scale

    def evaluate(theta):
        parts = compute(
            *[
                objective(Xb, yb, wb, target, center, scale, theta, plo, f_tar, f_non)
                for Xb, yb, wb in blocks
            ]
        )
        loss, grad, hess = _reduce(parts)
        pen = add_penalty(theta, grad, hess, reg_eff)
        return loss + pen, grad, dense_solver(hess), (loss, pen)

    warm = _warm_start(blocks, n_rows, classes, p, reg, tol, max_iter, center, scale)
    theta0, warm_iter = (np.zeros(K + 1), 0) if warm is None else warm
    res = minimize_newton(evaluate, theta0, tol=tol, max_iter=max_iter, f_scale=f_scale)
    coef = res.x[:K] / scale
    intercept = float(res.x[K] - coef @ center)
    loss, pen = res.info
    sol = LogisticSolution(
        coef=coef,
        intercept=intercept,
        loss=float(loss),
        penalty=float(pen),
        n_iter=warm_iter + res.n_iter,
        n_passes=1 + (warm is not None) + res.n_evals,
        grad_norm=res.grad_norm,
        converged=res.converged,
    )
    adopt_state(estimator, probe)
    estimator.coef_ = sol.coef
    estimator.intercept_ = sol.intercept
    estimator.n_iter_ = int(sol.n_iter)
    estimator.n_passes_ = int(sol.n_passes)
    report_fit(estimator, None, None, None, p, rule, sol)
    if not sol.converged:
        warn_not_converged(estimator, max_iter, sol.grad_norm, tol)
    return estimator


def apply(estimator, X):
    """Apply a fitted model to a dask collection, partition by partition (lazy).

    Binary models (``decision_function``) give a 1-D dask array of natural-log LLRs; other
    transformers (e.g. :class:`focal.MulticlassFusion`) a 2-D dask array of their ``transform``.
    A dask DataFrame is passed to the model partition by partition as pandas DataFrames, so
    models fitted with feature names check them (the result's chunk sizes are then unknown
    until computed).

    Parameters
    ----------
    estimator : fitted focal estimator
        E.g. loaded with :func:`focal.load`.
    X : dask array or dask DataFrame
        Scores as the estimator takes them (1-D for a LinearCalibrator).

    Returns
    -------
    dask array
        Lazy; ``.compute()`` it, or store it with ``to_zarr`` / ``to_hdf5`` partition by
        partition.
    """
    one = isinstance(estimator, LogisticFusion) and (
        type(estimator)._as_2d is not LogisticFusion._as_2d
    )
    binary = hasattr(estimator, "decision_function") and isinstance(estimator, LogisticFusion)
    if _is_frame(X):
        import dask.array as da

        method = estimator.decision_function if binary else estimator.transform
        blocks = [
            delayed(lambda part: np.asarray(method(part), dtype=float), pure=True)(b)
            for b in X.to_delayed()
        ]
        shape = (np.nan,) if binary else (np.nan, len(estimator.get_feature_names_out()))
        return da.concatenate([da.from_delayed(b, shape=shape, dtype=float) for b in blocks])
    if not _is_dask(X):
        raise TypeError(f"X must be a dask array or DataFrame, got {type(X).__name__}")
    if X.ndim == 1 and one:
        return X.map_blocks(lambda b: estimator.decision_function(b), dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_trials, n_systems), got shape {X.shape}")
    X = X.rechunk({1: -1})
    if binary:
        return X.map_blocks(lambda b: estimator.decision_function(b), drop_axis=1, dtype=float)
    n_out = len(estimator.get_feature_names_out())
    return X.map_blocks(
        lambda b: np.asarray(estimator.transform(b), dtype=float),
        chunks=(X.chunks[0], (n_out,)),
        dtype=float,
    )
