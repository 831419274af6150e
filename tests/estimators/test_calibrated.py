"""CalibratedClassifier (cross-fitted calibration of any classifier) and the LLR outputs of
calibrators at the end of pipelines.
"""

import numpy as np
import pytest
from scipy.special import expit
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_predict
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from focal import CalibratedClassifier, LogisticFusion, MulticlassFusion, PAVCalibrator
from focal.metrics import cllr, from_labels, min_cllr, multiclass_cllr


@parametrize_with_checks(
    [
        CalibratedClassifier(),
        CalibratedClassifier(GaussianNB(), cv=3),
        CalibratedClassifier(method="pav", cv=3),
    ]
)
def test_sklearn_contract(estimator, check):
    check(estimator)  # every check passes: no refusal, no expected failure


def well_specified(n=20000, seed=0):
    """Two Gaussian classes with a shared covariance: the true LLR is linear in x."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3)) + np.where(y[:, None] == 1, [1.0, 0.5, 0.0], [-0.5, 0.0, 0.2])
    return X, y


@pytest.mark.parametrize("method", ["logistic", "pav"])
def test_out_of_fold_llrs_are_nearly_as_good_as_their_pav_recalibration(method):
    X, y = well_specified()
    clf = CalibratedClassifier(LinearSVC(), method=method, cv=5).fit(X, y)
    # PAV's own optimism (it is fitted on the scores it judges) is about 0.002 bits here
    tar, non = from_labels(clf.oof_llr_, y)
    assert cllr(tar, non) - min_cllr(tar, non) < 0.01
    # and the refitted classifier's calibrated LLRs on fresh data stay calibrated
    X2, y2 = well_specified(seed=1)
    tar2, non2 = from_labels(clf.decision_function(X2), y2)
    assert cllr(tar2, non2) - min_cllr(tar2, non2) < 0.02


def test_llr_is_the_calibrator_applied_to_out_of_fold_scores():
    X, y = well_specified(600)
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    clf = CalibratedClassifier(LogisticRegression(), p_target=0.2, cv=cv).fit(X, y)
    oof = cross_val_predict(LogisticRegression(), X, y, cv=cv, method="decision_function")
    direct = LogisticFusion(p_target=0.2).fit(oof[:, None], y)
    np.testing.assert_allclose(clf.calibrator_.coef_, direct.coef_)
    full = LogisticRegression().fit(X, y).decision_function(X)
    np.testing.assert_allclose(clf.decision_function(X), direct.decision_function(full[:, None]))
    # posteriors at any prior by Bayes' rule
    llr = clf.decision_function(X)
    np.testing.assert_allclose(
        clf.predict_proba(X, p_target=0.01)[:, 1], expit(llr + np.log(0.01 / 0.99))
    )
    assert (clf.predict(X, p_target=0.01) == (llr >= np.log(99))).all()
    assert clf.score(X, y) == pytest.approx(-cllr(*from_labels(llr, y), p_target=0.2))


def test_string_labels_and_probability_only_classifiers():
    X, y = well_specified(800)
    names = np.array(["impostor", "target"])[y]
    forest = RandomForestClassifier(n_estimators=20, random_state=0)
    # without pos_label, classes_[1] is the positive class, as in scikit-learn; a prior or
    # costs that favour one class then need the target named
    with pytest.raises(ValueError, match="do not say which is the target: pass pos_label"):
        CalibratedClassifier(forest, cv=3, p_target=0.1).fit(X, names)
    plain = CalibratedClassifier(forest, cv=3).fit(X, names)
    assert list(plain.classes_) == ["impostor", "target"]
    for call in (
        lambda: plain.predict_proba(X, p_target=0.01),
        lambda: plain.score(X, names, p_target=0.2),
        lambda: plain.predict(X, c_miss=10),
    ):
        with pytest.raises(ValueError, match="pass pos_label"):
            call()
    assert plain.predict_proba(X).shape == (800, 2)
    clf = CalibratedClassifier(forest, cv=3, pos_label="target").fit(X, names)
    np.testing.assert_array_equal(clf.decision_function(X), plain.decision_function(X))
    assert clf.predict_proba(X, p_target=0.01).shape == (800, 2)
    assert list(clf.classes_) == ["impostor", "target"]
    # the target may be the smaller label: the LLR turns round with it
    flipped = CalibratedClassifier(forest, cv=3, pos_label="impostor").fit(X, names)
    assert list(flipped.classes_) == ["target", "impostor"]
    np.testing.assert_allclose(
        flipped.decision_function(X), -clf.decision_function(X), rtol=1e-6, atol=1e-9
    )
    assert set(clf.predict(X)) <= {"impostor", "target"}
    assert np.isfinite(clf.decision_function(X)).all()  # probabilities 0 / 1 stay finite


def test_multiclass():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 900)
    X = rng.normal(size=(900, 2)) + np.array([[0, 0], [2, 0], [0, 2]])[y]
    clf = CalibratedClassifier(GaussianNB(), cv=4).fit(X, y)
    llh = clf.decision_function(X)
    assert llh.shape == (900, 3)
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    assert clf.score(X, y) == pytest.approx(-multiclass_cllr(llh, y, normalize=True))
    skewed = clf.predict_proba(X, prior=[0.8, 0.1, 0.1])
    assert skewed[:, 0].mean() > clf.predict_proba(X)[:, 0].mean()
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        CalibratedClassifier(method="pav").fit(X, y)


def test_grid_search_with_and_without_scoring():
    X, y = well_specified(600)
    grid = {"estimator__C": [0.01, 1.0]}
    for scoring in (None, "neg_log_loss"):
        search = GridSearchCV(
            CalibratedClassifier(LogisticRegression(), cv=3), grid, cv=3, scoring=scoring
        ).fit(X, y)
        assert np.isfinite(search.best_score_)


def test_bad_parameters():
    X, y = well_specified(100)
    with pytest.raises(ValueError, match="method must be one of"):
        CalibratedClassifier(method="isotonic").fit(X, y)
    with pytest.raises(ValueError, match="p_target"):
        CalibratedClassifier(p_target=2.0).fit(X, y)
    with pytest.raises(ValueError, match="only one class"):
        CalibratedClassifier().fit(X, np.zeros(100))


def test_fusion_then_pav_pipeline_predicts_and_scores():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 600)
    X = rng.normal(size=(600, 2)) + 1.5 * y[:, None]
    pipe = make_pipeline(LogisticFusion(), PAVCalibrator())
    search = GridSearchCV(pipe, {"pavcalibrator__pseudo_count": [0.5, 2.0]}, cv=3).fit(X, y)
    assert np.isfinite(search.best_score_)
    pred = cross_val_predict(pipe, X, y, cv=3)
    assert set(np.unique(pred)) <= {0, 1}
    proba = cross_val_predict(pipe, X, y, cv=3, method="predict_proba")
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    pipe.fit(X, y)
    llr = pipe.decision_function(X)
    assert pipe.score(X, y) == pytest.approx(-cllr(*from_labels(llr, y)))
    assert (pipe.predict(X, p_target=0.01) == (llr >= np.log(99))).all()
    np.testing.assert_allclose(pipe.predict_proba(X)[:, 1], expit(llr))


def test_multiclass_fusion_score():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 300)
    X = rng.normal(size=(300, 3)) + 2.0 * np.eye(3)[y]
    fusion = MulticlassFusion(mode="calibration").fit(X, y)
    llh = fusion.transform(X)
    assert fusion.score(X, y) == pytest.approx(-multiclass_cllr(llh, y, normalize=True))
    assert MulticlassFusion(mode="calibration").fit(np.zeros((6, 3)), [0, 1, 2] * 2).score(
        np.zeros((6, 3)), [0, 1, 2] * 2
    ) == pytest.approx(-1.0)


def test_multiclass_scorers_in_grid_search():
    from focal import cavg_scorer, cmce_scorer, multiclass_cllr_scorer
    from focal.metrics import cavg, multiclass_cross_entropy

    rng = np.random.default_rng(2)
    y = np.array(["en", "es", "fr"])[rng.integers(0, 3, 600)]
    idx = np.searchsorted(["en", "es", "fr"], y)
    X = rng.normal(size=(600, 3)) + 2.0 * np.eye(3)[idx]
    fusion = MulticlassFusion(mode="calibration", class_names=["en", "es", "fr"]).fit(X, y)
    llh = fusion.transform(X)
    assert cmce_scorer()(fusion, X, y) == pytest.approx(-multiclass_cross_entropy(llh, idx))
    assert cavg_scorer(0.3)(fusion, X, y) == pytest.approx(-cavg(llh, idx, p_target=0.3))
    assert multiclass_cllr_scorer(normalize=True)(fusion, X, y) == pytest.approx(fusion.score(X, y))
    # a CalibratedClassifier's log-likelihoods come from decision_function
    clf = CalibratedClassifier(GaussianNB(), cv=3).fit(X, y)
    assert cmce_scorer()(clf, X, y) == pytest.approx(
        -multiclass_cross_entropy(clf.decision_function(X), idx)
    )
    search = GridSearchCV(
        MulticlassFusion(mode="calibration", class_names=["en", "es", "fr"]),
        {"reg": [1e-6, 1e-2]},
        cv=3,
        scoring=cmce_scorer(),
    ).fit(X, y)
    assert np.isfinite(search.best_score_)
    with pytest.raises(ValueError, match="labels not seen in fit"):
        cmce_scorer()(fusion, X, np.array(["de"] * 600))
