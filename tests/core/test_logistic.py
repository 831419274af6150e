"""Prior-weighted logistic regression (focal.core.logistic) against independent references.

Sources of truth: the objective of thesis eq. 8.17 written out here and minimized by scipy's
BFGS; sklearn's LogisticRegression for the unweighted-prior case; the closed-form LLR of
equal-variance Gaussian scores (thesis sec. 7.2.1, example 1); identities (repeated trials =
integer weights, invariance to the units of the scores).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.special import expit, logit

from focal.core.logistic import DEFAULT_REG, fit_logistic
from focal.metrics import cllr, dcf


def _class_weights(y, p, v=None):
    v = np.ones(y.shape[0]) if v is None else v
    return np.where(y, p / v[y].sum(), (1 - p) / v[~y].sum()) * v


def _objective_parts(X, y, p, v=None, reg=DEFAULT_REG):
    """Objective of eq. 8.17 plus the standardized penalty, written independently of focal.

    The penalty weight is ``reg`` times the prior entropy in bits (the cost of the uninformative
    system relative to its cost at p = 0.5), so it is relative to the objective's size.
    """
    reg = reg * (-p * np.log2(p) - (1 - p) * np.log2(1 - p))
    c = _class_weights(y, p, v)
    mean = c @ X / c.sum()
    sd = np.sqrt(c @ (X - mean) ** 2 / c.sum())
    sd = np.where(sd > 0, sd, 1.0)
    Z = (X - mean) / sd  # optimize in standardized coordinates for a well-conditioned BFGS
    h = logit(p)

    def f(theta):
        z = Z @ theta[:-1] + theta[-1] + h
        cost = np.where(y, np.logaddexp(0, -z), np.logaddexp(0, z))
        return c @ cost + 0.5 * reg * theta[:-1] @ theta[:-1]

    def grad(theta):
        z = Z @ theta[:-1] + theta[-1] + h
        r = c * (expit(z) - y)
        return np.r_[Z.T @ r + reg * theta[:-1], r.sum()]

    def to_original(theta):
        a = theta[:-1] / sd
        return a, theta[-1] - a @ mean

    return f, grad, to_original


def _reference_minimum(X, y, p, v=None, reg=DEFAULT_REG):
    f, grad, to_original = _objective_parts(X, y, p, v, reg)
    res = minimize(
        f,
        np.zeros(X.shape[1] + 1),
        jac=grad,
        method="BFGS",
        options={"gtol": 1e-12, "maxiter": 10_000},
    )
    return res.fun, to_original(res.x)


def _focal_objective(sol):
    return sol.loss + sol.penalty


def _gaussian_fusion_data(n, K, seed, p_tar=0.3):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < p_tar
    shift = np.linspace(0.5, 2.0, K)
    X = rng.normal(size=(n, K)) + y[:, None] * shift
    X[:, 0] += 0.5 * X[:, -1]  # correlated systems
    return X, y


@pytest.mark.parametrize(
    "K, p_target, weighted, reg",
    [
        (1, 0.5, False, DEFAULT_REG),
        (3, 0.5, False, DEFAULT_REG),
        (4, 0.01, False, DEFAULT_REG),
        (2, 0.9, True, DEFAULT_REG),
        (3, 0.2, True, 0.0),
        (2, 0.5, False, 0.3),
    ],
)
def test_objective_equals_independent_minimum(K, p_target, weighted, reg):
    X, y = _gaussian_fusion_data(3000, K, seed=K)
    v = np.random.default_rng(7).uniform(0.1, 3.0, size=y.shape[0]) if weighted else None
    sol = fit_logistic(X, y, p_target, v, reg)
    ref, (a_ref, b_ref) = _reference_minimum(X, y, p_target, v, reg)
    assert sol.converged and sol.grad_norm <= 1e-10
    assert _focal_objective(sol) == pytest.approx(ref, rel=1e-8)
    assert _focal_objective(sol) <= ref * (1 + 1e-12)
    np.testing.assert_allclose(sol.coef, a_ref, rtol=1e-5, atol=1e-7)
    assert sol.intercept == pytest.approx(b_ref, rel=1e-5, abs=1e-7)
    # the reported loss is the data term of the objective, evaluated independently
    f, _, _ = _objective_parts(X, y, p_target, v, 0.0)
    a, b = sol.coef, sol.intercept
    llr = X @ a + b
    z = llr + logit(p_target)
    c = _class_weights(y, p_target, v)
    direct = c @ np.where(y, np.logaddexp(0, -z), np.logaddexp(0, z))
    assert sol.loss == pytest.approx(direct, rel=1e-12)


def test_scores_of_magnitude_1e6():
    X, y = _gaussian_fusion_data(4000, 2, seed=11)
    big = X * np.array([1e-3, 7.0]) + np.array([1e6, -3e6])
    sol = fit_logistic(big, y, 0.3)
    ref, _ = _reference_minimum(big, y, 0.3)
    assert _focal_objective(sol) == pytest.approx(ref, rel=1e-8)
    # same LLRs as on the original scale: the penalty is in standardized units
    plain = fit_logistic(X, y, 0.3)
    # up to the rounding of terms of about 1e9 that cancel to a few nats: 4 ulps of the terms
    terms = np.abs(big) @ np.abs(sol.coef) + abs(sol.intercept)
    np.testing.assert_allclose(
        big @ sol.coef + sol.intercept,
        X @ plain.coef + plain.intercept,
        rtol=1e-7,
        atol=4 * np.finfo(float).eps * terms.max(),
    )


@settings(max_examples=25)
@given(
    seed=st.integers(0, 10_000),
    K=st.integers(1, 3),
    p_target=st.floats(0.02, 0.98),
    n=st.integers(20, 300),
)
def test_gradient_vanishes_at_solution(seed, K, p_target, n):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.5
    y[:2] = [True, False]
    X = rng.normal(size=(n, K)) * rng.uniform(0.1, 10, K) + y[:, None] * rng.normal(size=K)
    sol = fit_logistic(X, y, p_target)
    f, grad, to_original = _objective_parts(X, y, p_target)
    c = _class_weights(y, p_target)
    mean = c @ X / c.sum()
    sd = np.sqrt(c @ (X - mean) ** 2 / c.sum())
    theta = np.r_[sol.coef * sd, sol.intercept + sol.coef @ mean]
    assert sol.converged
    assert np.linalg.norm(grad(theta)) < 1e-9


def test_k1_matches_sklearn_logistic_regression():
    """At the empirical target proportion, eq. 8.17 is ordinary logistic regression."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(3)
    y = np.r_[np.ones(700, bool), np.zeros(2300, bool)]
    s = np.r_[rng.normal(1.5, 1.2, 700), rng.normal(-0.5, 1.0, 2300)]
    X = s[:, None]
    p_emp = y.mean()
    sk = LogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-12, max_iter=1000)
    sk.fit(X, y)
    sk_llr = sk.decision_function(X) - logit(p_emp)
    for reg, rtol in ((0.0, 1e-8), (DEFAULT_REG, 1e-6)):
        sol = fit_logistic(X, y, p_emp, reg=reg)
        np.testing.assert_allclose(X @ sol.coef + sol.intercept, sk_llr, rtol=rtol, atol=rtol)


def test_recovers_closed_form_gaussian_calibration():
    """Equal-variance Gaussians: the true LLR is affine in the score (thesis 7.2.1, ex. 1)."""
    mu1, mu2, sigma = 2.0, -1.0, 1.5
    slope = (mu1 - mu2) / sigma**2
    offset = (mu2**2 - mu1**2) / (2 * sigma**2)
    rng = np.random.default_rng(2024)

    def draw(n_tar, n_non):
        s = np.r_[rng.normal(mu1, sigma, n_tar), rng.normal(mu2, sigma, n_non)]
        return s[:, None], np.r_[np.ones(n_tar, bool), np.zeros(n_non, bool)]

    X, y = draw(100_000, 300_000)
    sol = fit_logistic(X, y, 0.5)
    # standard errors of the estimates here are about 0.004 (slope) and 0.003 (offset), from
    # repeated draws: 5 sigma bounds
    assert sol.coef[0] == pytest.approx(slope, abs=0.02)
    assert sol.intercept == pytest.approx(offset, abs=0.015)
    Xe, ye = draw(100_000, 300_000)
    fitted = Xe[:, 0] * sol.coef[0] + sol.intercept
    true = Xe[:, 0] * slope + offset
    c_fit = cllr(fitted[ye], fitted[~ye])
    c_true = cllr(true[ye], true[~ye])
    assert abs(c_fit - c_true) < 0.005


def test_training_prior_targets_the_application():
    """Trained at p = 0.01, the calibration is better at that operating point (thesis 8.3.2).

    Unequal variances make the true LLR quadratic, so the best affine map depends on the prior.
    """
    rng = np.random.default_rng(5)

    def draw(n):
        s = np.r_[rng.normal(2.5, 2.0, n // 5), rng.normal(0.0, 1.0, n - n // 5)]
        return s[:, None], np.r_[np.ones(n // 5, bool), np.zeros(n - n // 5, bool)]

    X, y = draw(200_000)
    Xe, ye = draw(400_000)
    at_low = fit_logistic(X, y, 0.01)
    at_half = fit_logistic(X, y, 0.5)
    dcfs = []
    for sol in (at_low, at_half):
        llr = Xe[:, 0] * sol.coef[0] + sol.intercept
        dcfs.append(dcf(llr[ye], llr[~ye], 0.01))
    assert dcfs[0] < dcfs[1] - 0.02


def test_perfectly_separable_data_converges_to_finite_llrs():
    X = np.r_[np.linspace(1, 3, 50), np.linspace(-3, -1, 70)][:, None]
    y = np.r_[np.ones(50, bool), np.zeros(70, bool)]
    sols = [fit_logistic(X, y, 0.5, reg=reg) for reg in (1e-2, 1e-4, 1e-6)]
    for sol in sols:
        assert sol.converged
        assert np.all(np.isfinite(sol.coef)) and np.isfinite(sol.intercept)
        llr = X[:, 0] * sol.coef[0] + sol.intercept
        assert llr[y].min() > 0 > llr[~y].max()
    # the size of the LLRs is set by the penalty: smaller reg, larger weight, smaller loss
    slopes = [s.coef[0] for s in sols]
    assert slopes[0] < slopes[1] < slopes[2] < 1e3
    assert sols[0].loss > sols[1].loss > sols[2].loss
    assert fit_logistic(X, y, 0.5).loss < 1e-7
    # the penalty holds the solution: it is comparable to the data term (documented criterion)
    assert all(s.penalty > 0.1 * s.loss for s in sols)
    # one overlapping trial: the data hold the solution; the same trial with zero weight: not
    Xo, yo = np.r_[X, [[2.0]]], np.r_[y, False]
    held = fit_logistic(Xo, yo, 0.5)
    assert held.penalty < 1e-4 * held.loss
    free = fit_logistic(Xo, yo, 0.5, np.r_[np.ones(120), 0.0])
    assert free.penalty > 0.1 * free.loss
    # tiny losses are computed without cancellation: compare with a direct evaluation
    sol = sols[-1]
    z = X[:, 0] * sol.coef[0] + sol.intercept
    direct = 0.5 * np.mean(np.logaddexp(0, -z[y])) + 0.5 * np.mean(np.logaddexp(0, z[~y]))
    assert sol.loss == pytest.approx(direct, rel=1e-12)


def test_integer_weights_equal_repeated_trials():
    X, y = _gaussian_fusion_data(500, 2, seed=9)
    counts = np.random.default_rng(1).integers(0, 4, size=500)
    counts[:2] = 1
    y[:2] = [True, False]
    weighted = fit_logistic(X, y, 0.2, counts.astype(float))
    repeated = fit_logistic(np.repeat(X, counts, axis=0), np.repeat(y, counts), 0.2)
    assert _focal_objective(weighted) == pytest.approx(_focal_objective(repeated), rel=1e-12)
    np.testing.assert_allclose(weighted.coef, repeated.coef, rtol=1e-8)


def test_zero_weight_trials_are_ignored_even_when_extreme():
    X, y = _gaussian_fusion_data(400, 2, seed=4)
    v = np.ones(400)
    # wildly wrong scores on zero-weight trials, first among them (the solver centers on it)
    X2 = np.vstack([[[-1e12, 1e12], [1e12, -1e12]], X])
    y2 = np.r_[True, False, y]
    v2 = np.r_[0.0, 0.0, v]
    a = fit_logistic(X, y, 0.5, v)
    b = fit_logistic(X2, y2, 0.5, v2)
    assert _focal_objective(a) == pytest.approx(_focal_objective(b), rel=1e-12)
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-9)
    assert np.isfinite(b.loss)


def test_constant_system_gets_zero_weight():
    X, y = _gaussian_fusion_data(600, 2, seed=8)
    X = np.column_stack([X, np.full(600, 3.7)])
    sol = fit_logistic(X, y, 0.5)
    assert sol.converged
    assert sol.coef[2] == 0.0
    ref = fit_logistic(X[:, :2], y, 0.5)
    np.testing.assert_allclose(sol.coef[:2], ref.coef, rtol=1e-12)
    assert sol.intercept == pytest.approx(ref.intercept + 0.0, rel=1e-12)


@pytest.mark.slow
def test_warm_start_on_large_data_gives_the_same_solution():
    """Above 8 x 65536 trials the solver starts from a subsample's solution: same answer."""
    X, y = _gaussian_fusion_data(700_000, 3, seed=21, p_tar=0.05)
    warm = fit_logistic(X, y, 0.01)
    cold = fit_logistic(X, y, 0.01, init=(np.zeros(3), 0.0))
    assert warm.converged and cold.converged
    assert _focal_objective(warm) == pytest.approx(_focal_objective(cold), rel=1e-13)
    np.testing.assert_allclose(warm.coef, cold.coef, rtol=1e-8)
    assert warm.n_passes <= 30
    # a subsample that cannot represent the rare class: no warm start, same answer
    y_rare = np.zeros(700_000, bool)
    y_rare[::5000] = True
    sparse = fit_logistic(X, y_rare, 0.5)
    dense = fit_logistic(X, y_rare, 0.5, init=(np.zeros(3), 0.0))
    assert _focal_objective(sparse) == pytest.approx(_focal_objective(dense), rel=1e-13)


def test_deterministic_and_inputs_untouched():
    X, y = _gaussian_fusion_data(2000, 3, seed=2)
    Xc, yc = X.copy(), y.copy()
    a = fit_logistic(X, y, 0.3)
    b = fit_logistic(X, y, 0.3)
    assert np.array_equal(a.coef, b.coef) and a.intercept == b.intercept
    assert np.array_equal(X, Xc) and np.array_equal(y, yc)
    # 0/1 labels and list weights are read as what they mean
    w = np.ones(2000)
    c = fit_logistic(X, y.astype(int), 0.3, list(w))
    assert np.array_equal(c.coef, fit_logistic(X, y, 0.3, w).coef)


def test_init_is_a_starting_point_only():
    X, y = _gaussian_fusion_data(2000, 2, seed=12)
    ref = fit_logistic(X, y, 0.5)
    far = fit_logistic(X, y, 0.5, init=(np.array([-40.0, 25.0]), 100.0))
    assert _focal_objective(far) == pytest.approx(_focal_objective(ref), rel=1e-12)
    again = fit_logistic(X, y, 0.5, init=(ref.coef, ref.intercept))
    assert again.n_iter == 0 and again.converged


def test_concurrent_fits_restore_the_blas_thread_setting():
    """Large fits keep BLAS on one thread; concurrent fits must not leave it that way."""
    import threading

    from threadpoolctl import threadpool_info

    def blas_threads():
        return sorted(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")

    before = blas_threads()
    X, y = _gaussian_fusion_data(30_000, 2, seed=30)
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(fit_logistic(X, y, 0.5))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert blas_threads() == before
    assert len(results) == 4 and all(np.array_equal(r.coef, results[0].coef) for r in results)
