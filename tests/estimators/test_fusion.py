"""LogisticFusion / LinearCalibrator estimators and the LLR scorers.

Sources of truth: sklearn's estimator checks; focal.metrics applied to the estimator's LLRs;
Bayes' rule and the Bayes threshold worked by hand; an independent optimizer (scipy) on each
proper scoring rule's objective written out here.
"""

import pickle
import unittest
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, logit
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, cross_val_predict, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import focal
from focal import (
    LinearCalibrator,
    LogisticFusion,
    PerfectSeparationWarning,
    cllr_scorer,
    dcf_scorer,
    eer_scorer,
    min_cllr_scorer,
    min_dcf_scorer,
)
from focal.core.scoring_rules import BetaRule, scoring_rule
from focal.metrics import cllr, dcf, eer, min_cllr, min_dcf
from tests._support.sklearn_contract import refused_by_design, run_check


def _data(n=2000, K=3, seed=0, p_tar=0.25):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < p_tar
    X = rng.normal(size=(n, K)) * np.linspace(1, 3, K) + y[:, None] * np.linspace(0.8, 2.5, K)
    return X, y.astype(int)


def _misspecified(n=3000, seed=1):
    """Unequal-variance target scores: no affine map is the true LLR, so rules disagree."""
    rng = np.random.default_rng(seed)
    n_tar = n // 3
    X = np.r_[rng.normal(2.0, 2.0, (n_tar, 2)), rng.normal(0.0, 1.0, (n - n_tar, 2))]
    X[:, 1] = 0.5 * X[:, 1] + 0.5 * X[:, 0]
    y = np.r_[np.ones(n_tar, int), np.zeros(n - n_tar, int)]
    return X, y


@parametrize_with_checks(
    [LogisticFusion(), LogisticFusion(scoring_rule="boosting"), LogisticFusion(bounds=(-3.0, 3.0))]
)
def test_sklearn_estimator_checks(estimator, check):
    """Every check passes, or fails only because it trains on labels other than 0/1 without
    pos_label, which focal refuses by design (the target is never guessed from sort order).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PerfectSeparationWarning)
        run_check(estimator, check, {getattr(check, "func", check).__name__})


@parametrize_with_checks([LinearCalibrator(), LinearCalibrator(p_target=0.1)])
def test_linear_calibrator_sklearn_checks(estimator, check):
    """Every check passes or fails only on the documented one-column refusal (see
    tests/_support/sklearn_contract.py); check_fit1d expects 1-D X to be refused, which
    LinearCalibrator accepts by design (one system's scores as a 1-D array).
    """
    name = getattr(check, "func", check).__name__
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PerfectSeparationWarning)
            check(estimator)
    except unittest.SkipTest:
        raise
    except Exception as exc:  # noqa: BLE001 - the refusal may be wrapped in another type
        if name == "check_fit1d" and "Did not raise" in str(exc):
            return
        assert refused_by_design(exc), (name, exc)


def test_outputs_are_llrs_and_bayes_quantities():
    X, y = _data()
    fuser = LogisticFusion(p_target=0.2).fit(X, y)
    llr = fuser.decision_function(X)
    # X @ coef_ + intercept_ up to rounding (BLAS sums in another order): an ulp of the terms
    terms = np.abs(X) @ np.abs(fuser.coef_) + abs(fuser.intercept_)
    np.testing.assert_allclose(
        llr, X @ fuser.coef_ + fuser.intercept_, rtol=0, atol=2 * np.finfo(float).eps * terms.max()
    )
    np.testing.assert_array_equal(fuser.transform(X), llr[:, None])
    # posteriors by Bayes' rule at the training prior and at another one
    for p, kw in ((0.2, {}), (0.01, {"p_target": 0.01})):
        proba = fuser.predict_proba(X, **kw)
        np.testing.assert_allclose(proba[:, 1], expit(llr + logit(p)), rtol=1e-14)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-15)
        # np.log of a probability near 1 is only accurate to an absolute ulp of 1
        np.testing.assert_allclose(
            fuser.predict_log_proba(X, **kw),
            np.log(proba),
            rtol=1e-12,
            atol=4 * np.finfo(float).eps,
        )
    # Bayes decisions: accept iff llr >= log(C_fa (1 - P) / (C_miss P))
    for p, cm, cf in ((0.2, 1, 1), (0.01, 1, 1), (0.01, 10, 1), (0.5, 1, 99)):
        threshold = np.log(cf * (1 - p) / (cm * p))
        expected = (llr >= threshold).astype(int)
        np.testing.assert_array_equal(fuser.predict(X, p_target=p, c_miss=cm, c_fa=cf), expected)
    np.testing.assert_array_equal(fuser.predict(X), (llr >= -logit(0.2)).astype(int))


def test_objective_and_score_are_cllr_at_the_training_prior():
    X, y = _data(seed=3)
    fuser = LogisticFusion(p_target=0.1).fit(X, y)
    llr = fuser.decision_function(X)
    expected = cllr(llr[y == 1], llr[y == 0], 0.1)
    assert fuser.objective_ == pytest.approx(expected, rel=1e-12)
    assert fuser.rule_objective_ == pytest.approx(expected, rel=1e-12)
    assert fuser.score(X, y) == pytest.approx(-expected, rel=1e-12)
    Xe, ye = _data(seed=4)
    le = fuser.decision_function(Xe)
    assert fuser.score(Xe, ye) == pytest.approx(-cllr(le[ye == 1], le[ye == 0], 0.1), rel=1e-12)
    # sample weights in score count trials
    w = np.random.default_rng(0).integers(1, 4, size=ye.shape[0])
    rep = np.repeat(np.arange(ye.shape[0]), w)
    assert fuser.score(Xe, ye, sample_weight=w) == pytest.approx(
        fuser.score(Xe[rep], ye[rep]), rel=1e-12
    )


def test_string_labels_and_dataframes():
    pd = pytest.importorskip("pandas")
    X, y = _data(seed=5)
    labels = np.where(y == 1, "target", "nontarget")
    frame = pd.DataFrame(X, columns=["plda", "cosine", "ivec"])
    with pytest.raises(ValueError, match="'nontarget', 'target': pass pos_label"):
        LogisticFusion().fit(frame, labels)
    fuser = LogisticFusion(pos_label="target").fit(frame, labels)
    assert list(fuser.classes_) == ["nontarget", "target"]
    assert list(fuser.feature_names_in_) == ["plda", "cosine", "ivec"]
    assert list(fuser.get_feature_names_out()) == ["llr"]
    assert list(fuser.get_feature_names_out(["plda", "cosine", "ivec"])) == ["llr"]
    with pytest.raises(ValueError, match="input_features"):
        fuser.get_feature_names_out(["a", "b", "c"])
    ref = LogisticFusion().fit(X, y)
    np.testing.assert_array_equal(fuser.coef_, ref.coef_)
    assert set(fuser.predict(frame)) <= {"nontarget", "target"}
    out = clone(fuser).set_output(transform="pandas").fit(frame, labels).transform(frame)
    assert list(out.columns) == ["llr"]


def test_clear_errors():
    X, y = _data(200, 2)
    with pytest.raises(ValueError, match="one class"):
        LogisticFusion().fit(X, np.ones(200))
    with pytest.raises(ValueError, match="NaN"):
        LogisticFusion().fit(np.where(np.arange(400).reshape(200, 2) == 7, np.nan, X), y)
    with pytest.raises(ValueError, match="infinity"):
        LogisticFusion().fit(np.where(np.arange(400).reshape(200, 2) == 7, np.inf, X), y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        LogisticFusion().fit(X, y[:-1])
    for bad in (0.0, 1.0, -0.1, 1.5, np.nan):
        with pytest.raises(ValueError, match="p_target"):
            LogisticFusion(p_target=bad).fit(X, y)
    with pytest.raises(ValueError, match="sample_weight.*negative"):
        LogisticFusion().fit(X, y, sample_weight=np.r_[-1.0, np.ones(199)])
    with pytest.raises(ValueError, match="sample_weight.*class"):
        LogisticFusion().fit(X, y, sample_weight=(y == 1).astype(float))
    with pytest.raises(ValueError, match="sample_weight has 3 entries"):
        LogisticFusion().fit(X, y, sample_weight=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="Only binary"):
        LogisticFusion().fit(X, np.arange(200) % 3)
    for param, value in (
        ("reg", -1.0),
        ("tol", 0.0),
        ("max_iter", 0),
        ("max_iter", 2.5),
        ("scoring_rule", "hinge"),
        ("scoring_rule", (0, 1)),
    ):
        with pytest.raises(ValueError, match=param if param != "scoring_rule" else "rule"):
            LogisticFusion(**{param: value}).fit(X, y)
    fuser = LogisticFusion().fit(X, y)
    with pytest.raises(ValueError, match="3 features"):
        fuser.transform(np.zeros((5, 3)))
    with pytest.raises(ValueError, match="NaN.*trial 3"):
        fuser.transform(np.where(np.arange(400).reshape(200, 2) == 7, np.nan, X))
    with pytest.raises(ValueError, match="infinity.*trial 3"):
        fuser.decision_function(np.where(np.arange(400).reshape(200, 2) == 6, -np.inf, X))
    with pytest.raises(ValueError, match="0 sample"):
        fuser.decision_function(np.zeros((0, 2)))
    # every input form gives the same LLRs (float arrays skip sklearn's per-call checks)
    ref = fuser.decision_function(X)
    for form in (np.asfortranarray(X), X.tolist(), np.hstack([X, X])[:, :2]):
        np.testing.assert_allclose(fuser.decision_function(form), ref, rtol=1e-13, atol=1e-14)
    ints = np.round(X * 100).astype(int)
    np.testing.assert_array_equal(
        fuser.decision_function(ints), fuser.decision_function(ints.astype(float))
    )
    steep = LogisticFusion().fit(X / 1e3, y)  # weights of order 1e3
    with pytest.raises(ValueError, match="overflows"):
        steep.predict(np.sign(steep.coef_) * np.full((3, 2), 1e308))
    huge = np.full((3, 2), 1e307 / np.abs(fuser.coef_).sum())  # finite LLRs, their sum is not
    assert np.isfinite(fuser.decision_function(huge)).all()
    with pytest.raises(ValueError, match="p_target"):
        fuser.predict_proba(X, p_target=2.0)
    with pytest.raises(ValueError, match="c_fa"):
        fuser.predict(X, c_fa=0.0)
    with pytest.raises(ValueError, match="labels not seen"):
        fuser.score(X, np.where(y == 1, 2, 0))
    with pytest.raises(ValueError, match="both"):
        fuser.score(X, np.zeros(200))


def test_separable_data_warns_and_stays_finite():
    X = np.r_[np.linspace(1, 3, 40), np.linspace(-3, -1, 60)][:, None]
    y = np.r_[np.ones(40), np.zeros(60)]
    with pytest.warns(PerfectSeparationWarning, match="separate the classes"):
        fuser = LogisticFusion().fit(X, y)
    assert np.isfinite(fuser.coef_).all() and np.isfinite(fuser.intercept_)
    assert fuser.objective_ < 1e-6
    # overlap removes the warning
    X2 = np.r_[X, [[-2.0], [2.0]]]
    y2 = np.r_[y, 1, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerfectSeparationWarning)
        LogisticFusion().fit(X2, y2)
        LogisticFusion(p_target=0.01).fit(*_data(20_000, 2, seed=3))
    # many trials, separable but with ever smaller margins: the penalized LLRs do not quite
    # separate them, yet the fit is still held by reg and the warning says so
    rng = np.random.default_rng(0)
    Xb = rng.normal(size=(100_000, 2))
    with pytest.warns(PerfectSeparationWarning, match="held by the penalty"):
        LogisticFusion().fit(Xb, (Xb @ [1.0, 1.0] > 0).astype(int))


def test_convergence_warning():
    X, y = _data()
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        fuser = LogisticFusion(max_iter=1).fit(X, y)
    assert fuser.n_iter_ == 1


def test_pipelines_model_selection_and_pickling():
    X, y = _data(1500, 3, seed=7)
    pipe = make_pipeline(StandardScaler(), LogisticFusion(p_target=0.1))
    pipe.fit(X, y)
    ref = LogisticFusion(p_target=0.1).fit(X, y)
    np.testing.assert_allclose(pipe.decision_function(X), ref.decision_function(X), rtol=1e-9)
    # fusion followed by calibration: the calibrator sees the fused LLR column
    chain = make_pipeline(LogisticFusion(), LinearCalibrator(p_target=0.1)).fit(X, y)
    assert chain.transform(X).shape == (1500, 1)
    search = GridSearchCV(
        LogisticFusion(),
        {"p_target": [0.05, 0.3], "reg": [1e-9, 1.0]},
        scoring=cllr_scorer(p_target=0.05),
        cv=3,
    ).fit(X, y)
    assert search.best_params_["reg"] == 1e-9
    assert search.best_score_ < 0
    scores = cross_val_score(LogisticFusion(), X, y, cv=3, scoring=min_dcf_scorer(0.01))
    assert scores.shape == (3,)
    llr = cross_val_predict(LogisticFusion(), X, y, cv=4, method="decision_function")
    proba = cross_val_predict(LogisticFusion(), X, y, cv=4, method="predict_proba")
    np.testing.assert_allclose(proba[:, 1], expit(llr), rtol=1e-12)
    copy = clone(ref)
    assert copy.get_params() == ref.get_params() and not hasattr(copy, "coef_")
    loaded = pickle.loads(pickle.dumps(ref))
    np.testing.assert_array_equal(loaded.decision_function(X), ref.decision_function(X))


def test_linear_calibrator():
    rng = np.random.default_rng(2)
    s = np.r_[rng.normal(3, 2, 300), rng.normal(0, 2, 900)]
    y = np.r_[np.ones(300), np.zeros(900)]
    cal = LinearCalibrator(p_target=0.3).fit(s, y)
    col = LinearCalibrator(p_target=0.3).fit(s[:, None], y)
    ref = LogisticFusion(p_target=0.3).fit(s[:, None], y)
    assert cal.scale_ == ref.coef_[0] == col.scale_
    assert cal.offset_ == ref.intercept_
    np.testing.assert_array_equal(cal.decision_function(s), ref.decision_function(s[:, None]))
    np.testing.assert_array_equal(cal.transform(s[:5]), ref.transform(s[:5, None]))
    # equal-variance Gaussians: slope (mu1 - mu0) / sigma^2 = 0.75
    assert cal.scale_ == pytest.approx(0.75, abs=0.1)
    with pytest.raises(ValueError, match="one system"):
        LinearCalibrator().fit(np.c_[s, s], y)
    with pytest.raises(ValueError, match="1 features|one system"):
        cal.transform(np.c_[s, s])
    search = GridSearchCV(
        LinearCalibrator(), {"p_target": [0.1, 0.5]}, cv=3, scoring=cllr_scorer()
    ).fit(s[:, None], y)
    assert search.best_params_["p_target"] in (0.1, 0.5)
    assert pickle.loads(pickle.dumps(cal)).scale_ == cal.scale_


def _rule_objective(rule, X, y, p, reg):
    """Eq. 8.15 with the standardized penalty, from the rule's costs (tested separately)."""
    c = np.where(y == 1, p / (y == 1).sum(), (1 - p) / (y == 0).sum())
    mean = c @ X
    sd = np.sqrt(c @ (X - mean) ** 2)
    plo = logit(p)

    def f(params):
        a, b = params[:-1], params[-1]
        llr = X @ a + b
        cost = np.where(y == 1, rule.target_cost(llr, plo), rule.nontarget_cost(llr, plo))
        return c @ cost + 0.5 * reg * np.sum((a * sd) ** 2)

    return f


@pytest.mark.parametrize("spec", ["brier", "boosting", "low_false_alarm", (3.0, 0.7)])
def test_each_rule_beats_the_logistic_fit_on_its_own_objective(spec):
    X, y = _misspecified()
    p, reg = 0.3, 1e-9
    log_fit = LogisticFusion(p_target=p).fit(X, y)
    rule_fit = LogisticFusion(p_target=p, scoring_rule=spec).fit(X, y)
    f = _rule_objective(scoring_rule(spec), X, y, p, reg)
    at_log = f(np.r_[log_fit.coef_, log_fit.intercept_])
    at_rule = f(np.r_[rule_fit.coef_, rule_fit.intercept_])
    assert at_rule < at_log * (1 - 1e-4)
    # and it is a minimum: an independent optimizer started there finds nothing lower
    ref = minimize(
        f,
        np.r_[rule_fit.coef_, rule_fit.intercept_],
        method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20_000},
    )
    assert at_rule <= ref.fun * (1 + 1e-8)
    # the log fit is Cllr-optimal at p, so the other rule's fit has higher Cllr
    assert rule_fit.objective_ > log_fit.objective_
    default = focal.core.scoring_rules.default_expected_cost(p, spec)
    assert rule_fit.rule_objective_ == pytest.approx((at_rule - 0.0) / default, rel=1e-6)


def test_convex_rule_fit_matches_independent_minimizer_from_zero():
    """The convex boosting rule has one minimum: BFGS from zero finds the same one."""
    X, y = _misspecified(seed=4)
    fit = LogisticFusion(p_target=0.5, scoring_rule="boosting").fit(X, y)
    f = _rule_objective(BetaRule(0.5, 0.5), X, y, 0.5, 1e-9)
    ref = minimize(f, np.zeros(3), method="BFGS", options={"gtol": 1e-12})
    assert f(np.r_[fit.coef_, fit.intercept_]) == pytest.approx(ref.fun, rel=1e-8)


def test_scorers_compute_negated_measures():
    X, y = _data(seed=9)
    fuser = LogisticFusion(p_target=0.2).fit(X, y)
    llr = fuser.decision_function(X)
    tar, non = llr[y == 1], llr[y == 0]
    cases = [
        (cllr_scorer(0.2), cllr(tar, non, 0.2)),
        (min_cllr_scorer(), min_cllr(tar, non)),
        (dcf_scorer(0.01, 10, 1), dcf(tar, non, 0.01, 10, 1)),
        (min_dcf_scorer(0.05), min_dcf(tar, non, 0.05)),
        (eer_scorer(), eer(tar, non)),
    ]
    for scorer, value in cases:
        assert scorer(fuser, X, y) == -value
    assert repr(dcf_scorer(0.01, 10, 1)) == "dcf_scorer(p_target=0.01, c_miss=10.0, c_fa=1.0)"
    # a pipeline ending in a calibrator without decision_function is scored through transform
    pipe = make_pipeline(LogisticFusion(), focal.PAVCalibrator()).fit(X, y)
    cal = pipe.transform(X)[:, 0]
    assert cllr_scorer()(pipe, X, y) == -cllr(cal[y == 1], cal[y == 0])
    # a transformer producing an LLR column is scored through transform
    tr = FunctionTransformer(lambda A: A[:, :1] * 2.0).fit(X)
    assert cllr_scorer()(tr, X, y) == -cllr(2 * X[y == 1, 0], 2 * X[y == 0, 0])
    with pytest.raises(ValueError, match="0/1"):
        cllr_scorer()(tr, X, np.where(y == 1, "t", "n"))
    with pytest.raises(ValueError, match="p_target"):
        cllr_scorer(p_target=1.5)
    with pytest.raises(ValueError, match="LLR"):
        cllr_scorer()(StandardScaler().fit(X), X, y)


def test_label_rule_is_one_for_every_binary_estimator_and_metric():
    """Labels 0/1 and False/True need nothing; any other pair needs pos_label, and then every
    estimator and metric gives exactly what the 0/1 labels give (never the sort order).
    """
    from focal import ROCCH, PAVCalibrator
    from focal.metrics import from_labels

    X, y = _data(seed=3)
    words = np.where(y == 1, "genuine", "impostor")  # the target sorts first
    for make in (LogisticFusion, lambda **kw: LinearCalibrator(**kw)):
        Xk = X if make is LogisticFusion else X[:, :1]
        with pytest.raises(ValueError, match="found 'genuine', 'impostor': pass pos_label"):
            make().fit(Xk, words)
        named = make(pos_label="genuine").fit(Xk, words)
        ref = make().fit(Xk, y)
        np.testing.assert_array_equal(named.coef_, ref.coef_)
        assert named.intercept_ == ref.intercept_
        assert list(named.classes_) == ["impostor", "genuine"]
        assert (
            named.predict(Xk[:5]).tolist()
            == np.where(ref.predict(Xk[:5]) == 1, "genuine", "impostor").tolist()
        )
        assert named.score(Xk, words) == ref.score(Xk, y)
        assert cllr_scorer()(named, Xk, words) == cllr_scorer()(ref, Xk, y)
    for est in (PAVCalibrator, ROCCH):
        with pytest.raises(ValueError, match="pass pos_label"):
            est().fit(X[:, 0], words)
        np.testing.assert_array_equal(
            est(pos_label="genuine").fit(X[:, 0], words).llr_, est().fit(X[:, 0], y).llr_
        )
    # labels 1 / 2 or -1 / 1: no guess either
    with pytest.raises(ValueError, match="pass pos_label"):
        LogisticFusion().fit(X, y + 1)
    np.testing.assert_array_equal(
        LogisticFusion(pos_label=2).fit(X, y + 1).coef_, LogisticFusion().fit(X, y).coef_
    )
    # the target may be the label that sorts first, also for 0/1 labels
    flipped = LogisticFusion(pos_label=0).fit(X, y)
    np.testing.assert_array_equal(flipped.coef_, LogisticFusion().fit(X, 1 - y).coef_)
    assert list(flipped.classes_) == [1, 0]
    tar, non = from_labels(X[:, 0], words, pos_label="genuine")
    np.testing.assert_array_equal(tar, X[y == 1, 0])
    with pytest.raises(ValueError, match="pass pos_label"):
        from_labels(X[:, 0], words)
    with pytest.raises(ValueError, match="differs from the estimator's target"):
        cllr_scorer(pos_label="impostor")(
            LogisticFusion(pos_label="genuine").fit(X, words), X, words
        )


# -- bounds: the ELUB clip (Vergeer et al. 2016) of the affine map ------------------------------


@pytest.mark.parametrize("est", [LogisticFusion, LinearCalibrator])
def test_elub_bounds_are_the_limits_of_the_training_llrs_and_clip_every_output(est):
    from focal.metrics import elub_bounds

    X, y = _data(600, K=2 if est is LogisticFusion else 1, p_tar=0.2)
    X = X if est is LogisticFusion else X[:, 0]
    free = est().fit(X, y)
    cal = est(bounds="elub").fit(X, y)
    np.testing.assert_array_equal(cal.coef_, free.coef_)  # the clip leaves the fit alone
    assert cal.intercept_ == free.intercept_ and cal.objective_ == free.objective_
    X2 = X.reshape(len(X), -1)
    train = X2 @ free.coef_ + free.intercept_  # the training trials' LLRs, written out here
    expected = elub_bounds(train[y == 1], train[y == 0])
    np.testing.assert_allclose(cal.bounds_, expected, rtol=1e-12, atol=1e-12)
    assert cal.bounds_[0] < 0 < cal.bounds_[1] and cal.bounds_.shape == (2,)
    t = np.linspace(-20, 20, 81)
    grid = np.column_stack([t, t]) if est is LogisticFusion else t
    llr = grid.reshape(81, -1) @ free.coef_ + free.intercept_
    clipped = np.clip(llr, *cal.bounds_)
    assert (clipped == cal.bounds_[0]).any() and (clipped == cal.bounds_[1]).any()
    np.testing.assert_allclose(cal.decision_function(grid), clipped, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(cal.transform(grid)[:, 0], cal.decision_function(grid))
    posterior = expit(clipped + logit(0.1))
    np.testing.assert_allclose(cal.predict_proba(grid, p_target=0.1)[:, 1], posterior, rtol=1e-12)
    given = est(bounds=(-1.0, 2.0)).fit(X, y)
    np.testing.assert_array_equal(given.bounds_, [-1.0, 2.0])
    np.testing.assert_allclose(given.decision_function(grid), np.clip(llr, -1.0, 2.0), rtol=1e-13)
    assert (
        given.decision_function(grid).min() == -1.0 and given.decision_function(grid).max() == 2.0
    )


@pytest.mark.parametrize("est", [LogisticFusion, LinearCalibrator])
def test_no_bounds_leaves_the_affine_map_as_it_is(est):
    from focal.core.maps import affine_llr

    X, y = _data(400, K=2 if est is LogisticFusion else 1)
    X = X if est is LogisticFusion else X[:, 0]
    cal = est().fit(X, y)
    assert cal.bounds is None and np.array_equal(cal.bounds_, [-np.inf, np.inf])
    far = np.asarray(X, dtype=float) * 1e6  # LLRs of millions of nats: nothing clips them
    expected = affine_llr(far.reshape(len(far), -1), cal.coef_, cal.intercept_)
    assert np.abs(expected).max() > 1e5
    np.testing.assert_array_equal(cal.decision_function(far), expected)


def test_elub_refuses_sample_weight_and_bad_bounds_before_any_work():
    X, y = _data(200, K=2)
    for est, data in ((LogisticFusion, X), (LinearCalibrator, X[:, 0])):
        with pytest.raises(ValueError, match="bounds='elub' counts trials.*sample_weight"):
            est(bounds="elub").fit(data, y, sample_weight=np.ones(200))
        weighted = est(bounds=(-2.0, 3.0)).fit(data, y, sample_weight=np.ones(200))
        np.testing.assert_array_equal(weighted.bounds_, [-2.0, 3.0])
        for bad in ((2.0, 1.0), "elu", (0.0, np.inf), 1.0):
            with pytest.raises(ValueError, match="bounds must be 'elub', None or finite"):
                est(bounds=bad).fit(data[:0], y[:0])  # refused before the (empty) data
            assert not hasattr(est(bounds=bad), "bounds_")


def test_pipelines_and_clones_keep_the_bounds():
    X, y = _data(500, K=2)
    search = GridSearchCV(LogisticFusion(), {"bounds": [None, "elub"]}, cv=3).fit(X, y)
    assert search.best_params_["bounds"] in (None, "elub")
    cal = clone(LinearCalibrator(bounds=(-1.0, 1.0))).fit(X[:, 0], y)
    assert pickle.loads(pickle.dumps(cal)).decision_function([50.0]).tolist() == [1.0]
