"""focal estimators composed: fusion followed by non-parametric calibration."""

import io

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from focal import LogisticFusion, PAVCalibrator, cllr_scorer, min_dcf_scorer
from focal.metrics import cllr, from_labels, min_cllr, pav_llr


def fusion_data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.2
    shared = rng.normal(size=n)
    X = np.column_stack(
        [
            2.5 * y + 0.5 * shared + rng.normal(size=n),
            0.3 + 0.05 * (2.0 * y + 0.5 * shared + rng.normal(size=n)),
            np.tanh(1.5 * y + rng.normal(size=n)),
        ]
    )
    return X, y.astype(int)


def test_fusion_then_pav_is_the_pav_of_the_fused_llrs():
    X, y = fusion_data()
    pipe = make_pipeline(LogisticFusion(p_target=0.1), PAVCalibrator(pseudo_count=0)).fit(X, y)
    fused = LogisticFusion(p_target=0.1).fit(X, y).decision_function(X)
    out = pipe.transform(X)
    assert out.shape == (X.shape[0], 1)
    # PAV after an increasing affine map of the scores: exactly the PAV-LLR of the fused scores
    np.testing.assert_array_equal(out[:, 0], pav_llr(fused, y))
    assert cllr(*from_labels(out[:, 0], y)) == pytest.approx(
        min_cllr(*from_labels(fused, y)), rel=1e-12
    )


def test_pipeline_round_trips_through_joblib_and_clone():
    X, y = fusion_data(seed=1)
    pipe = make_pipeline(LogisticFusion(p_target=0.05), PAVCalibrator()).fit(X, y)
    buffer = io.BytesIO()
    joblib.dump(pipe, buffer)
    buffer.seek(0)
    loaded = joblib.load(buffer)
    Xn, _ = fusion_data(n=500, seed=2)
    np.testing.assert_array_equal(loaded.transform(Xn), pipe.transform(Xn))
    assert np.isfinite(pipe.transform(Xn)).all()  # bounded PAV: finite on unseen scores
    refit = clone(pipe).fit(X, y)
    np.testing.assert_array_equal(refit.transform(Xn), pipe.transform(Xn))


def test_grid_search_over_the_pipeline_with_focal_scorers():
    X, y = fusion_data(seed=3)
    pipe = make_pipeline(LogisticFusion(), PAVCalibrator())
    grid = {"logisticfusion__p_target": [0.05, 0.5], "pavcalibrator__pseudo_count": [0.5, 2.0]}
    scoring = {"cllr": cllr_scorer(p_target=0.1), "mindcf": min_dcf_scorer(p_target=0.01)}
    search = GridSearchCV(pipe, grid, scoring=scoring, refit="cllr", cv=3).fit(X, y)
    assert set(search.best_params_) == set(grid)
    assert np.isfinite(search.cv_results_["mean_test_cllr"]).all()
    assert np.isfinite(search.cv_results_["mean_test_mindcf"]).all()
    # the scorer returns minus Cllr of the held-out fold's LLRs: recompute one by hand
    best = search.best_estimator_
    llr = best.transform(X)[:, 0]
    assert scoring["cllr"](best, X, y) == pytest.approx(
        -cllr(*from_labels(llr, y), p_target=0.1), rel=1e-12
    )


# -- the user's labels in every binary estimator (issue 29) ------------------------------------


def _named(y):
    return np.where(y == 1, "genuine", "impostor")


def _binary_estimators():
    from sklearn.model_selection import KFold

    from focal import ROCCH, CalibratedClassifier, LinearCalibrator, QualityFusion

    rng = np.random.default_rng(1)
    X, y = fusion_data(600, seed=1)
    q = {"quality": np.exp(rng.normal(size=(600, 2)))}
    return [
        (LogisticFusion(pos_label="genuine"), X, {}),
        (LinearCalibrator(pos_label="genuine"), X[:, 0], {}),
        (QualityFusion(pos_label="genuine"), X, q),
        (PAVCalibrator(pos_label="genuine"), X[:, 0], {}),
        (ROCCH(pos_label="genuine"), X[:, 0], {}),
        (CalibratedClassifier(cv=KFold(3), pos_label="genuine"), X, {}),
    ], y


def test_every_binary_estimator_reports_predicts_and_scores_the_users_labels():
    """PAVCalibrator(pos_label="genuine") and ROCCH kept classes_ = [0, 1]: predict gave 0/1
    and score(x, labels) raised. Every binary estimator with pos_label now answers in the
    labels it was given, and its score on them is the score on the 0/1 labels.
    """
    cases, y = _binary_estimators()
    for est, X, extra in cases:
        named = clone(est).fit(X, _named(y), **extra)
        plain = clone(est).set_params(pos_label=None).fit(X, y, **extra)
        name = type(est).__name__
        assert named.classes_.tolist() == ["impostor", "genuine"], name
        decisions = named.predict(X, **extra)
        assert set(decisions.tolist()) <= {"impostor", "genuine"}, name
        np.testing.assert_array_equal(decisions == "genuine", plain.predict(X, **extra) == 1)
        score = named.score(X, _named(y), **extra)
        assert np.isfinite(score) and score == pytest.approx(plain.score(X, y, **extra), rel=1e-9)
        proba = named.predict_proba(X, **extra)
        np.testing.assert_allclose(proba, plain.predict_proba(X, **extra), rtol=1e-9)


def test_grid_search_and_cross_validation_with_pos_label_on_every_step():
    """The exact pipeline of issue 29: GridSearchCV returned best_score_ = nan and silently
    picked the first candidate; cross_val_score gave nan. The grid's first candidate bounds
    the PAV map so hard that its LLRs are nearly 0 (Cllr near 1 bit), the second is the
    default: the search must score both finitely and pick the second.
    """
    from sklearn.model_selection import cross_val_score

    X, y = fusion_data()
    labels = _named(y)
    pipe = make_pipeline(LogisticFusion(pos_label="genuine"), PAVCalibrator(pos_label="genuine"))
    scores = cross_val_score(pipe, X, labels, cv=3)
    assert np.isfinite(scores).all() and (scores > -0.6).all()  # minus Cllr, bits per bit
    grid = GridSearchCV(pipe, {"pavcalibrator__pseudo_count": [1e6, 1.0]}, cv=3).fit(X, labels)
    means = grid.cv_results_["mean_test_score"]
    assert np.isfinite(means).all() and means[0] < -0.9 < -0.6 < means[1]
    assert grid.best_params_ == {"pavcalibrator__pseudo_count": 1.0}
    assert grid.best_score_ == means[1]
    assert set(grid.predict(X).tolist()) == {"impostor", "genuine"}
