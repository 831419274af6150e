"""Fusion and calibration fits at the numeric edges: extreme priors and extreme score scales.

Source of truth: the prior-weighted logarithmic cost of thesis eq. 8.17 (binary) and its
multiclass form, written here with log-domain stable terms (``logaddexp``, ``expit`` of the right
sign, ``logsumexp``), divided by the cost of the uninformative system so that its size is 1
whatever the prior, and minimized by scipy's trust-region method with the exact Hessian, an
algorithm unrelated to focal's line-search Newton. The objectives are compared at relative 1e-9.
"""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, logit

from focal import LinearCalibrator, LogisticFusion, MulticlassFusion, QualityFusion
from focal.core.logistic import DEFAULT_REG
from focal.core.logistic_objective import LogisticDesign
from focal.core.scoring_rules import expected_cost_at_infinity

EXTREME_PRIORS = [1e-10, 1e-12, 1 - 1e-12]
SCALES = [1e-170, 1e154]


def _data(n=4400, n_tar=400, seed=3):
    """Three correlated systems of overlapping Gaussian scores (like the speaker sample)."""
    rng = np.random.default_rng(seed)
    y = np.zeros(n, dtype=bool)
    y[rng.choice(n, n_tar, replace=False)] = True
    X = rng.normal(size=(n, 3)) * [1.0, 2.0, 4.0] + y[:, None] * [1.0, 5.0, 3.0]
    X[:, 2] += 0.6 * X[:, 1]
    return X, y


def _entropy_nats(p):
    return -p * np.log(p) - (1 - p) * np.log1p(-p)


class _Binary:
    """Normalized objective ``O / H(p)`` of eq. 8.17 with the standardized penalty.

    The penalty weight is ``reg`` times the prior entropy in bits (documented in
    ``focal.core.logistic``); standardization uses the prior-weighted mean and standard
    deviation of each system.
    """

    def __init__(self, X, y, p, reg):
        self.y, self.p, self.h = y, p, logit(p)
        n_tar, n_non = y.sum(), (~y).sum()
        self.c = np.where(y, p / n_tar, (1 - p) / n_non)
        mean = self.c @ X
        sd = np.sqrt(self.c @ (X - mean) ** 2)
        self.mean, self.sd = mean, sd
        self.Z = (X - mean) / sd
        self.H = _entropy_nats(p)
        self.reg = reg * self.H / np.log(2)  # penalty relative to the objective's size

    def value(self, theta):
        z = self.Z @ theta[:-1] + theta[-1] + self.h
        cost = np.where(self.y, np.logaddexp(0, -z), np.logaddexp(0, z))
        return (self.c @ cost + 0.5 * self.reg * theta[:-1] @ theta[:-1]) / self.H

    def grad(self, theta):
        z = self.Z @ theta[:-1] + theta[-1] + self.h
        r = self.c * np.where(self.y, -expit(-z), expit(z))  # no 1 - sigmoid cancellation
        return np.r_[self.Z.T @ r + self.reg * theta[:-1], r.sum()] / self.H

    def hess(self, theta):
        z = self.Z @ theta[:-1] + theta[-1] + self.h
        w = self.c * expit(z) * expit(-z)
        A = np.c_[self.Z, np.ones(len(z))]
        H = (A * w[:, None]).T @ A
        H[np.arange(len(theta) - 1), np.arange(len(theta) - 1)] += self.reg
        return H / self.H

    def minimum(self):
        res = minimize(
            self.value,
            np.zeros(self.Z.shape[1] + 1),
            jac=self.grad,
            hess=self.hess,
            method="trust-exact",
            options={"gtol": 1e-13},
        )
        return res.fun

    def at(self, coef, intercept):
        theta = np.r_[coef * self.sd, intercept + coef @ self.mean]
        return self.value(theta)


def _fit_quietly(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning, ConvergenceWarning, ...
        return est.fit(X, y)


@pytest.mark.parametrize("p", EXTREME_PRIORS)
@pytest.mark.parametrize("reg", [DEFAULT_REG, 0.0])
def test_logistic_fusion_reaches_the_optimum_at_extreme_priors(p, reg):
    X, y = _data()
    fuser = _fit_quietly(LogisticFusion(p_target=p, reg=reg), X, y)
    ref = _Binary(X, y, p, reg)
    best = ref.minimum()
    got = ref.at(fuser.coef_, fuser.intercept_)
    assert got == pytest.approx(best, rel=1e-9)
    assert np.all(fuser.coef_ > 0)  # each system is informative: never all-zero weights
    # objective_ is normalized Cllr: the same normalized cost without the penalty
    assert fuser.objective_ == pytest.approx(
        _Binary(X, y, p, 0.0).at(fuser.coef_, fuser.intercept_), rel=1e-9
    )


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("p", [0.5, 1e-10])
def test_logistic_fusion_is_invariant_to_extreme_score_scales(scale, p):
    X, y = _data()
    fuser = _fit_quietly(LogisticFusion(p_target=p), X * scale, y)
    ref = _Binary(X, y, p, DEFAULT_REG)  # the objective does not depend on the units
    assert ref.at(fuser.coef_ * scale, fuser.intercept_) == pytest.approx(ref.minimum(), rel=1e-9)
    assert np.all(np.isfinite(fuser.coef_)) and np.all(fuser.coef_ != 0)  # no system dropped
    llr = fuser.decision_function(X * scale)
    plain = LogisticFusion(p_target=p).fit(X, y).decision_function(X)
    np.testing.assert_allclose(llr, plain, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("scale", [1e-170, 1e154])
def test_linear_calibrator_at_extreme_scales_and_priors(scale):
    X, y = _data()
    s = X[:, 1]
    for p in (0.5, 1e-12, 1 - 1e-12):
        cal = _fit_quietly(LinearCalibrator(p_target=p), s * scale, y)
        ref = _Binary(s[:, None], y, p, DEFAULT_REG)
        assert ref.at(cal.coef_ * scale, cal.intercept_) == pytest.approx(ref.minimum(), rel=1e-9)


@pytest.mark.parametrize("case", ["overflow", "underflow"])
def test_unusable_score_scales_raise_a_clear_error(case):
    X, y = _data()
    X = X.copy()
    if case == "overflow":  # finite scores whose differences are not
        X[:, 1] = np.where(y, 1.5e308, -1.5e308) + X[:, 1]
    else:  # a spread in the subnormal range, where scores have lost their digits
        X[:, 1] *= 1e-320
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scikit-learn's finiteness check
        with pytest.raises(ValueError, match="scores of system 1 .*rescale them"):
            LogisticFusion().fit(X, y)


def test_largest_finite_scores_still_fit():
    X, y = _data()
    big = X * [1.0, 1e307, 1.0]  # up to ~1e308
    fuser = _fit_quietly(LogisticFusion(), big, y)
    plain = LogisticFusion().fit(X, y)
    np.testing.assert_allclose(fuser.coef_ * [1.0, 1e307, 1.0], plain.coef_, rtol=1e-9)


def test_extreme_prior_with_the_default_penalty_is_not_held_by_it():
    """The penalty is relative to the objective's size: at p = 1e-12 the default ``reg`` still
    leaves the fit where the data put it (within 1e-6), as at p = 0.5.
    """
    X, y = _data()
    for p in (0.5, 1e-12):
        a = LogisticFusion(p_target=p).fit(X, y)
        b = LogisticFusion(p_target=p, reg=0.0).fit(X, y)
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-6)


# ------------------------------------------------------------------------------- multiclass


def _multiclass_data(n=3000, seed=5):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    L = np.concatenate(
        [
            2.0 * np.eye(3)[y] + rng.normal(size=(n, 3)),
            1.0 * np.eye(3)[y] + rng.normal(size=(n, 3)),
        ],
        axis=1,
    )
    return L, y


class _Multiclass:
    """Normalized scalar-mode objective ``O / H(prior)`` with reg = 0, every cost taken
    relative to the true class (no ``1 - P`` or ``log(1 + tiny)`` cancellation).
    """

    def __init__(self, L, y, prior):
        n_per = np.bincount(y, minlength=len(prior))
        self.c = prior[y] / n_per[y]
        self.L = L.reshape(L.shape[0], -1, len(prior))
        self.y, self.logp = y, np.log(prior)
        self.H = -(prior @ np.log(prior))
        self.N, self.K = len(prior), self.L.shape[1]

    def _logits(self, alpha, beta):
        return np.einsum("k,tkj->tj", alpha, self.L) + beta + self.logp

    def _others(self, x):
        """``exp(G_j - G_y)`` for every class j, 0 at j = y: costs relative to the true class."""
        G = self._logits(x[: self.K], np.r_[0.0, x[self.K :]])
        rows = np.arange(len(self.y))
        E = np.exp(G - G[rows, self.y][:, None])
        E[rows, self.y] = 0.0
        return E, E.sum(axis=1)

    def value(self, x):
        # -log P_y = log1p(sum_{j != y} exp(G_j - G_y)): accurate when P_y is near 1
        _, S = self._others(x)
        return (self.c @ np.log1p(S)) / self.H

    def grad(self, x):
        E, S = self._others(x)
        R = E / (1.0 + S)[:, None]  # P_j for j != y
        R[np.arange(len(self.y)), self.y] = -S / (1.0 + S)  # P_y - 1 without cancellation
        R *= self.c[:, None]
        ga = np.einsum("tj,tkj->k", R, self.L)
        return np.r_[ga, R.sum(axis=0)[1:]] / self.H

    def minimum(self):
        res = minimize(
            self.value,
            np.r_[np.ones(self.K), np.zeros(self.N - 1)],
            jac=self.grad,
            method="BFGS",
            options={"gtol": 1e-12, "maxiter": 10_000},
        )
        return res.fun

    def at(self, coef, offset):
        return self.value(np.r_[coef, offset[1:] - offset[0]])


@pytest.mark.parametrize("prior", [[1 - 2e-12, 1e-12, 1e-12], [1e-10, 0.5, 0.5 - 1e-10]])
def test_multiclass_fusion_reaches_the_optimum_at_extreme_priors(prior):
    L, y = _multiclass_data()
    prior = np.array(prior)
    fuser = _fit_quietly(MulticlassFusion(prior=prior, reg=0.0), L, y)
    ref = _Multiclass(L, y, prior)
    assert ref.at(fuser.coef_, fuser.intercept_) == pytest.approx(ref.minimum(), rel=1e-9)
    assert np.all(fuser.coef_ > 0)


@pytest.mark.parametrize("scale", SCALES)
def test_multiclass_fusion_is_invariant_to_extreme_score_scales(scale):
    L, y = _multiclass_data()
    plain = MulticlassFusion().fit(L, y)
    scaled = _fit_quietly(MulticlassFusion(), L * scale, y)
    np.testing.assert_allclose(scaled.coef_ * scale, plain.coef_, rtol=1e-8)
    np.testing.assert_allclose(
        scaled.transform(L * scale), plain.transform(L), rtol=1e-8, atol=1e-8
    )


@pytest.mark.parametrize("p", [1e-200, 1e-300])
def test_logistic_fusion_at_priors_down_to_the_normal_range(p):
    X, y = _data()
    fuser = _fit_quietly(LogisticFusion(p_target=p, reg=0.0), X, y)
    ref = _Binary(X, y, p, 0.0)
    assert ref.at(fuser.coef_, fuser.intercept_) == pytest.approx(ref.minimum(), rel=1e-9)


def test_subnormal_priors_raise_a_clear_error():
    X, y = _data()
    with pytest.raises(ValueError, match="p_target=1e-310 is too close to 0"):
        LogisticFusion(p_target=1e-310).fit(X, y)
    L, yc = _multiclass_data()
    with pytest.raises(ValueError, match=r"prior\[1\] = 1e-310 is below the normal"):
        MulticlassFusion(prior=[0.5, 1e-310, 0.5]).fit(L, yc)


# ------------------------------------------------------------ rules without a finite minimum


def _low_false_alarm_cost(llr, y, p):
    """Prior-weighted cost of the Beta(10, 1) rule in closed form: rho(eta) = 10 eta^9, so
    C(q | target) = 10/9 (1 - q^9) and C(q | non-target) = 10 (-log(1 - q) - sum_k<10 q^k / k).
    """
    z = llr + logit(p)
    q = expit(z)
    tar = 10.0 / 9.0 * (1.0 - q[y] ** 9)
    qn = q[~y]
    non = 10.0 * (np.logaddexp(0.0, z[~y]) - sum(qn**k / k for k in range(1, 10)))
    return p * tar.mean() + (1 - p) * non.mean()


def _runaway_data(seed=0):
    """One system: 90 % of the targets overlap the non-targets, 10 % score far above them, and
    three non-targets score high (misleading): under Beta(10, 1) a missed target costs at most
    10/9, so sending the overlapping targets to -inf with the non-targets pays.
    """
    rng = np.random.default_rng(seed)
    tar = np.r_[rng.normal(1.0, 1.0, 180), rng.normal(30.0, 10.0, 20)]
    non = np.r_[rng.normal(-1.0, 1.0, 497), [8.0, 10.0, 12.0]]
    return np.r_[tar, non][:, None], np.r_[np.ones(200, bool), np.zeros(500, bool)]


def test_low_false_alarm_runaway_warns_naming_rule_and_cause():
    from focal.estimators import UnboundedObjectiveWarning

    X, y = _runaway_data()
    p = 0.1
    # the objective has no finite minimum: along a ray of sharper LLRs it keeps falling to
    # p * 10/9 * (share of targets below the highest non-target) = 0.1 * 10/9 * 0.9
    pivot = 12.0 + 1e-9
    limit = p * 10 / 9 * np.mean(X[y, 0] < pivot)
    costs = [_low_false_alarm_cost(t * (X[:, 0] - pivot), y, p) for t in (0.25, 0.5, 1, 2, 100)]
    assert np.all(np.diff(costs) <= 0) and costs[0] > costs[-1]
    assert costs[-1] == pytest.approx(limit, rel=1e-9)
    assert expected_cost_at_infinity(X[:, 0], y, p, "low_false_alarm") == pytest.approx(
        limit, rel=1e-12
    )
    with pytest.warns(
        UnboundedObjectiveWarning,
        match=r"'low_false_alarm' scoring rule "
        r"\(Beta\(10, 1\)\) has no finite minimum.*p_target=0.1.*missed target "
        r"costs at most 1.111",
    ) as record:
        fuser = LogisticFusion(p_target=p, scoring_rule="low_false_alarm").fit(X, y)
    llr = fuser.decision_function(X)
    assert llr.max() - llr.min() > 100  # the run-away LLRs the warning is about
    assert any("fitted LLRs (from" in str(w.message) for w in record)
    # the fit did decrease the rule's cost, to its limit at infinity (nothing lower exists)
    assert _low_false_alarm_cost(llr, y, p) == pytest.approx(limit, rel=1e-5)


def test_low_false_alarm_on_overlapping_scores_is_finite_and_quiet():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fuser = LogisticFusion(p_target=0.1, scoring_rule="low_false_alarm").fit(X, y)
    llr = fuser.decision_function(X)
    # a genuine minimum: below the rule's limit along its own ray, and stationary in scale
    assert np.abs(llr).max() < 60
    best = _low_false_alarm_cost(llr, y, 0.1)
    for t in (0.99, 1.01):
        assert _low_false_alarm_cost(t * llr, y, 0.1) > best


# ------------------------------------------------------------------- documented defaults


@pytest.mark.parametrize("cls", [LogisticFusion, LinearCalibrator, MulticlassFusion])
def test_documented_solver_defaults_match_the_code(cls):
    import re

    defaults = cls().get_params()
    # LinearCalibrator documents its parameters by reference to LogisticFusion
    doc = cls.__doc__ if "reg : " in cls.__doc__ else LogisticFusion.__doc__
    for name in ("reg", "tol", "max_iter"):
        match = re.search(rf"^\s*{name} : \w+, default ([^\s]+)$", doc, re.MULTILINE)
        assert match, f"{cls.__name__}.{name} has no documented default"
        assert float(match.group(1)) == defaults[name], (cls.__name__, name)


def test_default_penalty_moves_an_overlapping_fit_by_far_less_than_its_sampling_error():
    """What the ``reg`` docstrings state: on overlapping scores, relative changes of about 1e-7
    against the unpenalized fit (here at p = 0.5 and 0.01, with 4400 trials).
    """
    X, y = _data()
    for p in (0.5, 0.01):
        a = LogisticFusion(p_target=p).fit(X, y)
        b = LogisticFusion(p_target=p, reg=0.0).fit(X, y)
        change = np.max(np.abs(a.coef_ - b.coef_) / np.abs(b.coef_))
        assert 1e-9 < change < 1e-6


@pytest.mark.parametrize("covariance", ["shared", "per_class"])
def test_gaussian_backend_at_extreme_score_scales(covariance):
    from focal import GaussianBackend

    L, y = _multiclass_data()
    L = L[:, :3]
    plain = GaussianBackend(covariance=covariance).fit(L, y).predict_proba(L)
    for scale in (1e-170, 1e150):  # the fitted covariance_ must be representable
        fitted = _fit_quietly(GaussianBackend(covariance=covariance), L * scale, y)
        np.testing.assert_allclose(fitted.predict_proba(L * scale), plain, atol=1e-12)
        assert np.all(np.isfinite(fitted.covariance_))
    with pytest.raises(ValueError, match="covariance overflows"):
        GaussianBackend(covariance=covariance).fit(L * 1e300, y)


def test_cheap_and_full_precision_derivatives_agree_on_ordinary_data():
    """Ordinary priors use derivatives accurate to an ulp of 1/2 per trial; a tolerance near
    round-off (or an extreme prior) switches to full relative precision. On ordinary data the
    two forms agree to round-off, and the full form is chosen where the cheap one is not
    accurate enough.
    """
    from focal.core import logistic
    from focal.core.multiclass_objective import softmax_columns

    X, y = _data()
    design = LogisticDesign(X, y, 0.3, None, 0.0)
    theta = np.array([0.9, 1.8, 0.3, -1.2])
    exact = design.log_pass(theta)
    design.accurate = False
    cheap = design.log_pass(theta)
    assert cheap[0] == exact[0]
    np.testing.assert_allclose(cheap[1], exact[1], rtol=0, atol=1e-14)  # ~ulps of the weights
    np.testing.assert_allclose(cheap[2], exact[2], rtol=1e-12)
    rng = np.random.default_rng(0)
    G = rng.normal(size=(4, 500)) * 3
    yc = rng.integers(0, 4, 500)
    c = rng.uniform(size=500) / 250
    full = softmax_columns(G.copy(), yc, c, accurate=True)
    plain = softmax_columns(G.copy(), yc, c, accurate=False)
    assert plain[0] == pytest.approx(full[0], rel=1e-14)
    np.testing.assert_allclose(plain[1], full[1], rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(plain[2], full[2], rtol=0, atol=1e-17)
    # which form a fit uses: cheap at p = 0.5 and tol = 1e-10, exact at p = 1e-12
    for p, tol, accurate in ((0.5, 1e-10, False), (0.5, 1e-15, True), (1e-12, 1e-10, True)):
        d = LogisticDesign(X, y, p, None, 0.0)
        logistic._newton(d, np.zeros(4), None, tol, 1)
        assert d.accurate is accurate


@pytest.mark.parametrize("cls", [LogisticFusion, QualityFusion])
def test_huge_sample_weights_give_the_fit_of_their_ratios(cls):
    """Issue 30: one weight of 1e300 raised ZeroDivisionError (a class total computed as the
    total minus the other class's cancelled to 0) and four of 1e308 gave weights of 2e17
    silently (the totals overflowed). Only the ratios of the weights within a class matter
    (eq. 8.17 weights a trial by prior / class total), so each call below must give the fit of
    weights with the same ratios in ordinary numbers.
    """
    X, y = _data(n=600, n_tar=200)
    rng = np.random.default_rng(0)
    kw = {"quality": np.exp(rng.normal(size=(600, 2)))} if cls is QualityFusion else {}
    j = np.flatnonzero(~y)[0]
    w = np.ones(600)
    w[j] = 1e300  # the exact call of the issue: one weight of 1e300 (a non-target)
    same = np.where(y, 1.0, 0.0)
    same[j] = 1.0  # the non-targets' weights relative to it: 1e-300, i.e. 0
    cases = [(w, same), (np.where(y, 1e300, 1.0), None), (np.where(y, 1.0, 1e308), None)]
    for huge, ordinary in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # one non-target: held by the penalty
            got = cls().fit(X, y, sample_weight=huge, **kw)
            want = cls().fit(X, y, sample_weight=ordinary, **kw)
        np.testing.assert_allclose(got.coef_, want.coef_, rtol=1e-9)
        assert got.intercept_ == pytest.approx(want.intercept_, rel=1e-9, abs=1e-12)
        assert got.objective_ == pytest.approx(want.objective_, rel=1e-9)


def test_class_totals_that_overflow_are_a_clear_error_in_the_core():
    X, y = _data(n=600, n_tar=200)
    with pytest.raises(ValueError, match=r"sample_weight gives the classes totals inf"):
        LogisticDesign(X, y, 0.5, np.full(600, 1e308), 1e-9)
