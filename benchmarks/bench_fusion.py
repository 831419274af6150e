"""Binary logistic-regression fusion: 1M and 10M trials x 4 systems.

Targets: ``LogisticFusion.fit`` reaches the minimum (objective within 1e-8 relative)
at least 5x faster than sklearn ``LogisticRegression(solver="lbfgs")`` with prior sample
weights reaching the same objective value, in at most 30 passes over the data; ``transform``
within 2x of the numpy expression ``X @ coef_ + intercept_`` on the same array.

The objective compared is the prior-weighted logarithmic cost of eq. 8.17 (nats) of each
solution's LLRs, evaluated the same way for both. sklearn is run with decreasing ``tol`` until
its objective is within 1e-8 (relative) of focal's, and that run is the one timed.
"""

from __future__ import annotations

import time

import numpy as np
from _common import best_time, optional_import, peak_memory, print_table, skipped

from focal import LogisticFusion

P_TARGET = 0.5
SAME = 1e-8  # relative objective gap counted as "the same objective value"


def _data(n, seed=0):
    """Four correlated systems; 10% targets; different scales and offsets per system."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.1
    mix = np.array(
        [[1.0, 0.0, 0.0, 0.0], [0.6, 0.8, 0.0, 0.0], [0.3, 0.3, 0.9, 0.0], [0.5, 0.1, 0.2, 0.8]]
    )
    X = rng.standard_normal((n, 4)) @ mix.T
    X += y[:, None] * np.array([2.0, 1.5, 1.0, 2.5])
    X *= np.array([1.0, 3.0, 0.05, 10.0])
    X += np.array([0.0, -5.0, 0.4, 100.0])
    return X, y


def _objective(X, y, coef, intercept, p=P_TARGET):
    """Prior-weighted logarithmic cost (nats) of the affine fusion, eq. 8.17."""
    z = X @ coef + intercept + np.log(p / (1 - p))
    return p * np.mean(np.logaddexp(0, -z[y])) + (1 - p) * np.mean(np.logaddexp(0, z[~y]))


def _sklearn_fit(X, y, sw, tol, standardize=False):
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=np.inf, solver="lbfgs", tol=tol, max_iter=10_000)
    if not standardize:
        model.fit(X, y, sample_weight=sw)
        return model.coef_[0], model.intercept_[0], int(model.n_iter_[0])
    # what a careful user does: scale the features first, then map the weights back
    mean, sd = X.mean(axis=0), X.std(axis=0)
    model.fit((X - mean) / sd, y, sample_weight=sw)
    coef = model.coef_[0] / sd
    return coef, model.intercept_[0] - coef @ mean, int(model.n_iter_[0])


def _sklearn_same_objective(X, y, sw, obj, standardize):
    """Time sklearn at decreasing tol until it reaches focal's objective; (seconds, tol)."""
    prior_lo = np.log(P_TARGET / (1 - P_TARGET))
    label = "sklearn lbfgs" + (" on standardized scores" if standardize else "")
    for tol in (1e-4, 1e-6, 1e-8, 1e-10, 1e-12):
        t0 = time.perf_counter()
        coef, intercept, n_iter = _sklearn_fit(X, y, sw, tol, standardize)
        elapsed = time.perf_counter() - t0
        sk_obj = _objective(X, y, coef, intercept - prior_lo)
        gap = (sk_obj - obj) / obj
        print(
            f"  {label} tol={tol:g}: {elapsed:.3f} s, {n_iter} iterations, "
            f"objective {sk_obj:.15f} (relative gap to focal {gap:+.1e})"
        )
        if gap <= SAME:
            return elapsed, tol
    print(f"  {label} never reached focal's objective within {SAME:g}")
    return None, None


def _transform_expression(X, coef, intercept):
    return X @ coef + intercept


def _one_size(n, repeat):
    X, y = _data(n)
    print(f"\n{n:,} trials x 4 systems ({y.sum():,} targets), p_target={P_TARGET}")
    t_fit, fuser = best_time(LogisticFusion(p_target=P_TARGET).fit, X, y, repeat=repeat)
    obj = _objective(X, y, fuser.coef_, fuser.intercept_)
    print(
        f"  focal LogisticFusion.fit: {t_fit:.3f} s, {fuser.n_iter_} Newton steps, "
        f"{fuser.n_passes_} passes over the data (target <= 30); objective {obj:.15f} nats"
    )
    rows = [("focal LogisticFusion.fit", t_fit)]
    if optional_import("sklearn") is None:
        skipped("scikit-learn", "not installed")
        return
    # prior sample weights: eq. 8.17 as a weighted logistic regression (mean weight 1)
    sw = np.where(y, P_TARGET / y.sum(), (1 - P_TARGET) / (~y).sum()) * n
    t_sk, tol = _sklearn_same_objective(X, y, sw, obj, standardize=False)
    if t_sk is not None:
        rows.append((f"sklearn lbfgs, tol={tol:g} (same objective)", t_sk))
    t_std, tol_std = _sklearn_same_objective(X, y, sw, obj, standardize=True)
    if t_std is not None:
        rows.append((f"sklearn lbfgs on standardized scores, tol={tol_std:g}", t_std))
    print_table("fit time, as a multiple of focal", rows)
    if t_sk is not None:
        print(
            f"  focal vs sklearn lbfgs at the same objective: {t_sk / t_fit:5.1f}x faster "
            f"(target >= 5x)"
        )
    if t_std is not None:
        print(f"  focal vs sklearn lbfgs on standardized scores: {t_std / t_fit:5.1f}x faster")

    t_expr, _ = best_time(_transform_expression, X, fuser.coef_, fuser.intercept_, repeat=5)
    t_tr, _ = best_time(fuser.transform, X, repeat=5)
    print_table(
        "transform, as a multiple of X @ coef_ + intercept_",
        [("numpy X @ coef_ + intercept_", t_expr), ("focal transform", t_tr)],
    )
    print(f"  transform / expression: {t_tr / t_expr:4.2f}x (target <= 2x)")
    peak, _ = peak_memory(LogisticFusion(p_target=P_TARGET).fit, X, y)
    print(
        f"  fit peak memory {peak / 2**20:.0f} MiB = {peak / X.nbytes:.2f}x the scores "
        f"({X.nbytes / 2**20:.0f} MiB)"
    )


def run(quick: bool = False):
    sizes = (100_000, 1_000_000) if quick else (1_000_000, 10_000_000)
    for n in sizes:
        _one_size(n, repeat=2 if n >= 10_000_000 else 3)
