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
