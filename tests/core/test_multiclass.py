"""Core multiclass math: validation, Bayes' rule, logarithmic cost, the fusion / calibration
objective and its Newton solver, Gaussian class models.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.special import log_softmax
from scipy.stats import multivariate_normal

from focal.core.gaussian import fit_gaussian_classes
from focal.core.logistic import fit_logistic
from focal.core.maps import apply_multiclass, gaussian_loglikelihoods
from focal.core.multiclass import (
    as_class_labels,
    as_llh_matrix,
    check_multiclass_trials,
    class_trial_weights,
    contrast_basis,
    cross_entropy_nats,
    log_costs,
    log_posteriors,
    prior_entropy_nats,
)
from focal.core.multiclass_logistic import _nested_levels, fit_multiclass
from focal.core.newton import preconditioned_cg
from focal.core.validation import check_prior


def _data(n, K, N, rng, sep=1.0, scale=1.0):
    y = rng.integers(0, N, n)
    L = np.empty((n, K, N))
    for k in range(K):
        means = rng.normal(size=(N, N)) * sep
        L[:, k] = (means[y] + rng.normal(size=(n, N))) * scale
    return L, y


def _objective(L, y, prior, mode, params):
    """Prior-weighted multiclass log cost (thesis eq. 8.17), written out directly."""
    if mode == "full":  # a matrix per system acting on the log-likelihood line (centred input)
        A, b = params
        W = np.einsum("tkj,kij->ti", L - L.mean(axis=2, keepdims=True), A) + b
    else:
        a, b = params
        W = np.einsum("tkj,k->tj", L, a) + b
    lp = log_softmax(W + np.log(prior), axis=1)
    total = 0.0
    for i in range(prior.size):
        total += prior[i] * -lp[y == i, i].mean()
    return total


# ---------------------------------------------------------------------------------- validation


def test_check_prior_defaults_and_errors():
    assert np.array_equal(check_prior(None, 4), np.full(4, 0.25))
    np.testing.assert_allclose(check_prior([0.2, 0, 0.8], 3), [0.2, 0, 0.8])
    with pytest.raises(ValueError, match="3 probabilities"):
        check_prior([0.5, 0.5], 3)
    with pytest.raises(ValueError, match="sum to 1"):
        check_prior([0.5, 0.6], 2)
    with pytest.raises(ValueError, match="negative"):
        check_prior([1.5, -0.5], 2)
    with pytest.raises(ValueError, match="at least two"):
        check_prior([1.0, 0.0, 0.0], 3)
    with pytest.raises(ValueError, match="NaN"):
        check_prior([np.nan, 1.0], 2)


def test_labels_and_llh_errors():
    assert as_class_labels([0, 2.0, 1], 3).dtype == np.int64
    with pytest.raises(ValueError, match="0..2"):
        as_class_labels([0, 3], 3)
    with pytest.raises(ValueError, match="0..2"):
        as_class_labels([-1, 0], 3)
    with pytest.raises(ValueError, match="whole numbers"):
        as_class_labels([0.5], 3)
    with pytest.raises(ValueError, match="dtype"):
        as_class_labels(["a"], 3)
    with pytest.raises(ValueError, match="non-finite"):
        as_llh_matrix([[0.0, np.nan]])
    with pytest.raises(ValueError, match="non-finite"):
        as_llh_matrix([[0.0, np.inf]])
    with pytest.raises(ValueError, match="2-D"):
        as_llh_matrix([0.0, 1.0])
    with pytest.raises(ValueError, match="at least 2"):
        as_llh_matrix([[0.0], [1.0]])


def test_check_trials_drops_zero_prior_class_and_rejects_empty_class():
    llh = np.arange(12.0).reshape(4, 3)
    L, y, p, w, active = check_multiclass_trials(llh, [0, 1, 2, 2], [0.5, 0.0, 0.5])
    assert np.array_equal(active, [0, 2])
    assert np.array_equal(L, llh[[0, 2, 3]][:, [0, 2]])
    assert np.array_equal(y, [0, 1, 1])
    with pytest.raises(ValueError, match=r"class\(es\) \[1\]"):
        check_multiclass_trials(llh, [0, 0, 2, 2])
    with pytest.raises(ValueError, match="different numbers"):
        check_multiclass_trials(llh, [0, 1, 2])
    with pytest.raises(ValueError, match="positive weight"):
        check_multiclass_trials(llh, [0, 1, 2, 2], sample_weight=[1, 0, 1, 1])


def test_inputs_are_not_modified():
    llh = np.array([[1.0, 2.0], [3.0, 0.0]])
    before = llh.copy()
    check_multiclass_trials(llh, [0, 1])
    log_costs(llh, np.array([0, 1]), np.array([0.5, 0.5]))
    assert np.array_equal(llh, before)


# --------------------------------------------------------------------------- Bayes and log cost


def test_log_posteriors_is_bayes_rule_with_zero_prior():
    llh = np.array([[0.0, 1.0, 2.0]])
    prior = np.array([0.5, 0.0, 0.5])
    lp = log_posteriors(llh, prior)
    # by hand: P0 = 0.5 e^0 / (0.5 e^0 + 0.5 e^2) = 1 / (1 + e^2)
    np.testing.assert_allclose(np.exp(lp[0]), [1 / (1 + np.e**2), 0.0, np.e**2 / (1 + np.e**2)])
    assert lp[0, 1] == -np.inf


def test_log_costs_match_log_softmax_and_are_exact_for_constant_rows():
    rng = np.random.default_rng(0)
    llh = rng.normal(size=(200, 5)) * rng.choice([0.01, 1, 30, 1e6], size=(200, 1))
    y = rng.integers(0, 5, 200)
    prior = rng.dirichlet(np.ones(5))
    ref = -log_softmax(llh + np.log(prior), axis=1)[np.arange(200), y]
    np.testing.assert_allclose(log_costs(llh, y, prior), ref, rtol=1e-12, atol=1e-12)
    const = np.full((5, 5), 7.3)
    assert np.array_equal(log_costs(const, np.arange(5), prior), -np.log(prior))


def test_cross_entropy_uninformative_equals_prior_entropy_exactly():
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    y = np.array([0, 1, 1, 2, 3, 3, 3])
    assert cross_entropy_nats(np.zeros((7, 4)) - 4.2, y, prior) == prior_entropy_nats(prior)
    assert prior_entropy_nats([0.5, 0.0, 0.5]) == pytest.approx(np.log(2))


def test_cross_entropy_worked_example():
    # two classes, flat prior: trial of class 0 with llh (log 3, 0): P0 = 3/4 -> cost log(4/3);
    # trial of class 1 with (0, 0): cost log 2. C = 0.5 log(4/3) + 0.5 log 2.
    llh = np.array([[np.log(3.0), 0.0], [0.0, 0.0]])
    c = cross_entropy_nats(llh, np.array([0, 1]), np.array([0.5, 0.5]))
    assert c == pytest.approx(0.5 * np.log(4 / 3) + 0.5 * np.log(2), rel=1e-14)


def test_class_weights_sum_to_one_and_follow_prior_over_count():
    y = np.array([0, 0, 0, 1])
    c = class_trial_weights(y, np.array([0.5, 0.5]))
    np.testing.assert_allclose(c, [1 / 6, 1 / 6, 1 / 6, 0.5])
    c = class_trial_weights(y, np.array([0.5, 0.5]), np.array([1.0, 0.0, 3.0, 2.0]))
    np.testing.assert_allclose(c, [0.125, 0.0, 0.375, 0.5])


@given(st.integers(2, 9))
def test_contrast_basis_is_orthonormal_and_sum_zero(N):
    V = contrast_basis(N)
    np.testing.assert_allclose(V.T @ V, np.eye(N - 1), atol=1e-14)
    np.testing.assert_allclose(V.sum(axis=0), 0.0, atol=1e-14)


def test_preconditioned_cg_solves_spd_system():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(30, 30))
    H = A @ A.T + 30 * np.eye(30)
    g = rng.normal(size=30)
    d = preconditioned_cg(lambda v: H @ v, g, lambda r: r / np.diag(H), 1e-12, 200)
    np.testing.assert_allclose(H @ d, g, atol=1e-9)


def test_minimize_newton_converges_and_stops_at_round_off():
    from focal.core.newton import dense_solver, minimize_newton

    # f(x) = sum exp(x_i) - 2 x_i + (x_0 - x_1)^2: minimum at exp(x) = 2 (x_0 = x_1)
    def evaluate(x):
        e = np.exp(x)
        d = x[0] - x[1]
        g = e - 2 + 2 * d * np.array([1.0, -1.0])
        H = np.diag(e) + 2 * np.array([[1.0, -1.0], [-1.0, 1.0]])
        return float(e.sum() - 2 * x.sum() + d * d), g, dense_solver(H), None

    res = minimize_newton(evaluate, np.array([3.0, -4.0]), tol=1e-12)
    assert res.converged
    np.testing.assert_allclose(res.x, np.log(2.0), rtol=1e-12)
    # an unreachable tolerance: it stops once round-off prevents progress, not at max_iter
    stuck = minimize_newton(evaluate, np.array([3.0, -4.0]), tol=-1.0, max_iter=1000)
    assert stuck.n_iter < 30 and not stuck.converged
    np.testing.assert_allclose(stuck.x, np.log(2.0), rtol=1e-12)


# ------------------------------------------------------------------------------ fit_multiclass


@pytest.mark.parametrize("reg", [0.0, 1e-6, 1e-2])
@pytest.mark.parametrize("p0", [0.5, 0.1])
def test_calibration_with_two_classes_is_binary_logistic_regression(reg, p0):
    rng = np.random.default_rng(2)
    n = 800
    y = rng.integers(0, 2, n)
    L = rng.normal(size=(n, 1, 2)) * 2.0
    L[:, 0, 0] += 1.5 * (y == 0)
    L = 4.0 * L + 11.0
    w = rng.integers(0, 4, n).astype(float)
    prior = np.array([p0, 1 - p0])
    sol = fit_multiclass(L, y, prior, "calibration", sample_weight=w, reg=reg)
    s = L[:, 0, 0] - L[:, 0, 1]
    ref = fit_logistic(s[:, None], y == 0, p_target=p0, sample_weight=w, reg=reg)
    llr = apply_multiclass(L, "calibration", sol.coef, sol.offset) @ [1.0, -1.0]
    np.testing.assert_allclose(llr, ref.coef[0] * s + ref.intercept, rtol=1e-9, atol=1e-9)
    assert sol.loss == pytest.approx(ref.loss, rel=1e-12)


@pytest.mark.parametrize("mode", ["scalar", "full"])
def test_fit_reaches_the_minimum_of_an_independent_objective(mode):
    """Reg = 0 on overlapping classes: the optimum of eq. 8.17 found by scipy BFGS on a direct
    implementation of the objective must not be lower than ours.
    """
    rng = np.random.default_rng(3)
    L, y = _data(400, 2, 3, rng, sep=0.7)
    prior = np.array([0.2, 0.3, 0.5])
    sol = fit_multiclass(L, y, prior, mode, reg=0.0)
    ours = _objective(L, y, prior, mode, (sol.coef, sol.offset))
    assert ours == pytest.approx(sol.loss, rel=1e-12)
    if mode == "full":

        def f(x):
            return _objective(L, y, prior, mode, (x[:18].reshape(2, 3, 3), x[18:]))

        x0 = np.zeros(21)
    else:

        def f(x):
            return _objective(L, y, prior, mode, (x[:2], x[2:]))

        x0 = np.zeros(5)
    ref = minimize(f, x0, method="BFGS", options={"gtol": 1e-10})
    assert ours <= ref.fun + 1e-10
    assert ours == pytest.approx(ref.fun, abs=1e-8)


def test_full_objective_derivatives_match_finite_differences():
    """Gradient, dense Hessian and Hessian-vector products (double and single precision) of
    the full-mode objective against central differences.
    """
    import focal.core.multiclass_objective as ml

    rng = np.random.default_rng(13)
    L, y = _data(400, 2, 3, rng)
    c = class_trial_weights(y, np.array([0.2, 0.3, 0.5]))
    V = contrast_basis(3)
    u_bar, s = ml.system_scales(L, c)
    blocks = ml.full_blocks(ml.scalar_blocks(L, np.arange(400), y, c, u_bar, s), V)
    obj = ml.FullObjective(blocks, np.log([0.2, 0.3, 0.5]), V, reg=0.3)
    theta = rng.normal(size=2 * 5) * 0.5
    value, grad, _, info = obj.evaluate(theta)
    H = obj.hessian(info[2])
    h = 1e-5
    for i in range(theta.size):
        e = np.zeros_like(theta)
        e[i] = h
        gp, gm = obj.evaluate(theta + e)[1], obj.evaluate(theta - e)[1]
        fp, fm = obj.evaluate(theta + e)[0], obj.evaluate(theta - e)[0]
        assert grad[i] == pytest.approx((fp - fm) / (2 * h), abs=1e-8)
        np.testing.assert_allclose(H[:, i], (gp - gm) / (2 * h), atol=1e-7)
    v = rng.normal(size=theta.size)
    np.testing.assert_allclose(obj.hessp(info[2], v), H @ v, rtol=1e-12)
    single = [P.astype(np.float32) for P in info[2]]
    np.testing.assert_allclose(obj.hessp(single, v), H @ v, rtol=1e-5)
    np.testing.assert_allclose(obj.hessian_diagonal(info[2]), np.diag(H), rtol=1e-12)


def test_scalar_objective_derivatives_match_finite_differences():
    import focal.core.multiclass_objective as ml

    rng = np.random.default_rng(14)
    L, y = _data(300, 3, 4, rng)
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    c = class_trial_weights(y, prior)
    V = contrast_basis(4)
    u_bar, s = ml.system_scales(L, c)
    blocks = ml.scalar_blocks(L, np.arange(300), y, c, u_bar, s)
    obj = ml.ScalarObjective(blocks, np.log(prior), V, reg=0.2)
    theta = rng.normal(size=3 + 3)
    _, grad, solve, _ = obj.evaluate(theta)
    H = np.column_stack([solve(e) for e in np.eye(6)])
    H = np.linalg.inv(H)  # the factorized Hessian, recovered
    h = 1e-5
    for i in range(6):
        e = np.zeros(6)
        e[i] = h
        fp, gp = obj.evaluate(theta + e)[:2]
        fm, gm = obj.evaluate(theta - e)[:2]
        assert grad[i] == pytest.approx((fp - fm) / (2 * h), abs=1e-8)
        np.testing.assert_allclose(H[:, i], (gp - gm) / (2 * h), atol=1e-7)


def test_full_mode_ignores_per_trial_constants_and_centres_output():
    rng = np.random.default_rng(4)
    L, y = _data(300, 2, 4, rng)
    prior = np.full(4, 0.25)
    sol = fit_multiclass(L, y, prior, "full")
    for k in range(2):
        np.testing.assert_allclose(sol.coef[k] @ np.ones(4), 0.0, atol=1e-10)  # 1 in null space
        np.testing.assert_allclose(np.ones(4) @ sol.coef[k], 0.0, atol=1e-10)  # zero-mean output
    shifted = L + rng.normal(size=(300, 2, 1)) * 100
    a = apply_multiclass(L, "full", sol.coef, sol.offset)
    b = apply_multiclass(shifted, "full", sol.coef, sol.offset)
    np.testing.assert_allclose(a, b, atol=1e-8)


@pytest.mark.parametrize("mode", ["scalar", "full"])
def test_penalty_does_not_depend_on_score_scale_or_offset(mode):
    """Scaling a system's scores by any factor and adding any offset vector gives the same
    fitted log-likelihoods, with a penalty large enough to matter.
    """
    rng = np.random.default_rng(5)
    L, y = _data(300, 2, 3, rng, sep=2.0)
    prior = np.array([0.3, 0.3, 0.4])
    moved = L.copy()
    moved[:, 0] = moved[:, 0] * 37.0 + np.array([5.0, -2.0, 1e3])
    moved[:, 1] = moved[:, 1] * 0.003 - 40.0
    a = fit_multiclass(L, y, prior, mode, reg=0.1)
    b = fit_multiclass(moved, y, prior, mode, reg=0.1)
    out_a = apply_multiclass(L, mode, a.coef, a.offset)
    out_b = apply_multiclass(moved, mode, b.coef, b.offset)
    np.testing.assert_allclose(
        out_a - out_a.mean(1, keepdims=True),
        out_b - out_b.mean(1, keepdims=True),
        rtol=1e-7,
        atol=1e-7,
    )
    assert a.penalty == pytest.approx(b.penalty, rel=1e-7)
    weak = fit_multiclass(L, y, prior, mode, reg=1e-6)
    assert a.loss > weak.loss  # the penalty really acts


def test_zero_prior_class_is_ignored():
    rng = np.random.default_rng(6)
    L, y = _data(300, 2, 4, rng)
    prior = np.array([0.5, 0.0, 0.25, 0.25])
    sol = fit_multiclass(L, y, prior, "scalar")
    keep = y != 1
    sub_y = np.searchsorted([0, 2, 3], y[keep])
    sub = fit_multiclass(L[keep][:, :, [0, 2, 3]], sub_y, prior[[0, 2, 3]], "scalar")
    np.testing.assert_allclose(sol.coef, sub.coef, rtol=1e-10)
    np.testing.assert_allclose(sol.offset[[0, 2, 3]], sub.offset, atol=1e-10)
    assert sol.offset[1] == 0.0
    full = fit_multiclass(L, y, prior, "full")
    assert np.all(full.coef[:, 1, :] == 0) and np.all(full.coef[:, :, 1] == 0)


def test_separable_data_stay_finite_and_converge():
    y = np.repeat([0, 1, 2], 20)
    L = np.eye(3)[y][:, None, :] * 5.0
    for mode in ("scalar", "full"):
        sol = fit_multiclass(L, y, np.full(3, 1 / 3), mode)
        assert sol.converged
        assert np.all(np.isfinite(sol.coef)) and np.all(np.isfinite(sol.offset))
        assert sol.loss < 1e-3


def test_scores_of_magnitude_1e6():
    rng = np.random.default_rng(7)
    L, y = _data(300, 1, 3, rng)
    big = L * 1e6 + 3e6
    a = fit_multiclass(L, y, np.full(3, 1 / 3), "calibration")
    b = fit_multiclass(big, y, np.full(3, 1 / 3), "calibration")
    assert b.converged
    assert b.coef[0] * 1e6 == pytest.approx(a.coef[0], rel=1e-8)
    assert b.loss == pytest.approx(a.loss, rel=1e-10)


def test_full_mode_without_dense_hessian_reaches_the_same_optimum(monkeypatch):
    """Many parameters: Jacobi-preconditioned CG instead of a dense Hessian, same optimum."""
    import focal.core.multiclass_logistic as ml

    rng = np.random.default_rng(12)
    L, y = _data(3000, 2, 4, rng, sep=0.7)
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    dense = fit_multiclass(L, y, prior, "full")
    monkeypatch.setattr(ml, "_DENSE_PARAMS", 1)
    sparse = fit_multiclass(L, y, prior, "full")
    assert sparse.converged
    assert sparse.loss == pytest.approx(dense.loss, rel=1e-12)
    np.testing.assert_allclose(sparse.coef, dense.coef, atol=1e-7)


def test_nested_levels_are_nested_stratified_and_keep_class_weights():
    rng = np.random.default_rng(8)
    y = rng.integers(0, 3, 5000)
    y[:3] = 2
    c = class_trial_weights(y, np.array([0.2, 0.3, 0.5]))
    levels = _nested_levels(y, c, 3, base=300)
    assert len(levels) == 3 and levels[-1][0].size == 5000
    for (small, _), (large, _) in zip(levels, levels[1:]):
        assert np.isin(small, large).all()
    for rows, w in levels:
        np.testing.assert_allclose(np.bincount(y[rows], weights=w), [0.2, 0.3, 0.5])


def test_multilevel_full_fit_equals_an_independent_multinomial_fit():
    """Enough trials for the multilevel path; compare with scikit-learn's multinomial logistic
    regression on the centred features with the prior weights pi_i / |T_i| (same objective).
    """
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(9)
    n, K, N = 20000, 2, 3
    L, y = _data(n, K, N, rng, sep=0.6)
    prior = np.full(N, 1 / 3)
    sol = fit_multiclass(L, y, prior, "full", reg=0.0)
    feats = (L - L.mean(axis=2, keepdims=True)).reshape(n, K * N)
    w = (prior / np.bincount(y))[y]
    clf = LogisticRegression(C=1e12, tol=1e-12, max_iter=10000).fit(feats, y, sample_weight=w * n)
    lp = log_softmax(clf.decision_function(feats), axis=1)
    ref = -(w * lp[np.arange(n), y]).sum()
    assert sol.loss <= ref + 1e-10
    assert sol.loss == pytest.approx(ref, abs=1e-8)


# ----------------------------------------------------------------------------------- Gaussian


def test_gaussian_per_class_is_the_log_density():
    rng = np.random.default_rng(10)
    y = np.repeat([0, 1, 2], 50)
    X = rng.normal(size=(150, 3)) * [1.0, 2.0, 0.5] + 100.0 + y[:, None]
    model = fit_gaussian_classes(X, y, 3, "per_class")
    llh = gaussian_loglikelihoods(X, model)
    for i in range(3):
        Xi = X[y == i]
        mu = Xi.mean(axis=0)
        S = np.cov(Xi.T, bias=True)
        np.testing.assert_allclose(llh[:, i], multivariate_normal(mu, S).logpdf(X), rtol=1e-9)


def test_gaussian_shared_differences_match_the_log_densities():
    rng = np.random.default_rng(11)
    y = np.repeat([0, 1, 2], [30, 50, 70])
    X = rng.normal(size=(150, 4)) + 2.0 * y[:, None]
    w = rng.integers(1, 4, 150).astype(float)
    model = fit_gaussian_classes(X, y, 3, "shared", sample_weight=w)
    llh = gaussian_loglikelihoods(X, model)
    mus = np.array([np.average(X[y == i], axis=0, weights=w[y == i]) for i in range(3)])
    R = X - mus[y]
    S = (R * w[:, None]).T @ R / w.sum()
    dens = np.column_stack([multivariate_normal(mus[i], S).logpdf(X) for i in range(3)])
    np.testing.assert_allclose(llh - llh[:, :1], dens - dens[:, :1], rtol=1e-9, atol=1e-9)


def test_gaussian_singular_covariance_errors_without_ridge():
    X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 1.0], [3.0, 1.0]])
    y = np.array([0, 0, 1, 1])
    with pytest.raises(ValueError, match="singular"):
        fit_gaussian_classes(X, y, 2, "shared")
    model = fit_gaussian_classes(X, y, 2, "shared", reg=1e-6)
    assert np.isfinite(gaussian_loglikelihoods(X, model)).all()
