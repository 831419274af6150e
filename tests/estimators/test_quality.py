"""QualityFusion: fusion and calibration whose weights depend on quality measures.

Sources of truth: the affine fusion (LogisticFusion) for the back-off and the zero-quality case;
the prior-weighted logarithmic cost of thesis eq. 8.17 written out here in numpy; an independent
generic optimizer (scipy) on that objective; data simulated from a known duration-dependent
scale and offset, whose parameters the fit must recover within the sampling error computed here
from the Fisher information; sklearn's estimator checks.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import expit, logit
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import focal
from focal import LogisticFusion, PAVCalibrator, QualityFusion
from focal.core.quality import fit_quality
from focal.metrics import cllr
from tests._support.sklearn_contract import run_check

FORMS = ("bilinear", "linear", "scale")


def _trials(n=3000, K=3, M=2, seed=0, p_tar=0.3):
    """Scores whose separation and offset drift with the (log) quality of both sides."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < p_tar
    Q = np.exp(rng.uniform(np.log(2), np.log(60), size=(n, 2 * M)))
    ld = np.log(np.minimum(Q[:, 0], Q[:, M]))
    sep = 0.6 * ld
    X = (
        np.where(y, 1.0, 0.0)[:, None] * sep[:, None] * np.linspace(1, 0.5, K)
        + rng.normal(size=(n, K))
        + 0.3 * ld[:, None]
    )
    return X, y.astype(int), Q


def _eq_8_17(llr, y, p):
    """Prior-weighted logarithmic cost (nats), thesis eq. 8.17, written out directly."""
    tar, non = llr[y == 1], llr[y == 0]
    lo = np.log(p / (1 - p))
    return p * np.mean(np.log1p(np.exp(-(tar + lo)))) + (1 - p) * np.mean(
        np.log1p(np.exp(non + lo))
    )


# ------------------------------------------------------------------------- acceptance


@pytest.mark.parametrize("form", FORMS)
def test_zero_quality_weights_give_the_affine_fusion_exactly(form):
    X, y, Q = _trials()
    lin = LogisticFusion(p_target=0.2).fit(X, y)
    qf = QualityFusion(form=form, quality_transform="log", p_target=0.2).fit(X, y, quality=Q)
    # the back-off is the affine fusion, fitted exactly as LogisticFusion fits it
    np.testing.assert_array_equal(qf.linear_coef_, lin.coef_)
    assert qf.linear_intercept_ == lin.intercept_
    qf.coef_, qf.intercept_ = lin.coef_.copy(), lin.intercept_
    qf.quality_coef_ = np.zeros_like(qf.quality_coef_)
    qf.scale_coef_ = np.zeros_like(qf.scale_coef_)
    np.testing.assert_array_equal(qf.decision_function(X, quality=Q), lin.decision_function(X))


@pytest.mark.parametrize("form", FORMS)
def test_uninformative_quality_leaves_the_affine_fusion(form):
    """Quality 1 everywhere (log: 0) gives all-zero quality features: their weights stay exactly
    zero and the fit is the affine fusion's optimum.
    """
    X, y, Q = _trials()
    lin = LogisticFusion().fit(X, y)
    qf = QualityFusion(form=form, quality_transform="log").fit(X, y, quality=np.ones_like(Q))
    assert not qf.quality_coef_.any() and not qf.scale_coef_.any()
    np.testing.assert_allclose(qf.coef_, lin.coef_, rtol=1e-9)
    np.testing.assert_allclose(
        qf.decision_function(X, quality=np.ones_like(Q)),
        lin.decision_function(X),
        rtol=1e-9,
        atol=1e-9,
    )


@pytest.mark.parametrize("form", FORMS)
def test_missing_quality_backs_off_to_the_affine_fusion_exactly(form):
    X, y, Q = _trials(seed=3)
    Q[::7, 1] = np.nan  # one model-side measure missing
    Q[3::11, 2] = np.nan  # one test-side measure missing
    missing = np.isnan(Q).any(axis=1)
    lin = LogisticFusion(p_target=0.1).fit(X, y)
    qf = QualityFusion(form=form, quality_transform="log", p_target=0.1).fit(X, y, quality=Q)
    assert qf.n_quality_trials_ == int((~missing).sum())
    llr = qf.decision_function(X, quality=Q)
    np.testing.assert_array_equal(llr[missing], lin.decision_function(X)[missing])
    assert not np.array_equal(llr[~missing], lin.decision_function(X)[~missing])
    # the quality terms were trained on the complete trials only
    full = QualityFusion(form=form, quality_transform="log", p_target=0.1).fit(
        X[~missing], y[~missing], quality=Q[~missing]
    )
    np.testing.assert_allclose(
        llr[~missing],
        full.decision_function(X[~missing], quality=Q[~missing]),
        rtol=1e-8,
        atol=1e-8,
    )
    # every trial missing: the affine fusion everywhere
    allnan = np.full_like(Q, np.nan)
    np.testing.assert_array_equal(qf.decision_function(X, quality=allnan), lin.decision_function(X))


@pytest.mark.parametrize("form", FORMS)
def test_objective_is_thesis_eq_8_17_and_the_optimum_matches_scipy(form):
    X, y, Q = _trials(n=1500, K=2, M=2, seed=5)
    p = 0.3
    lq = np.log(Q)
    lin = LogisticFusion(p_target=p, reg=0.0).fit(X, y)
    model = fit_quality(
        X,
        lq[:, :2],
        lq[:, 2:],
        y.astype(bool),
        form,
        (lin.coef_, lin.intercept_),
        p_target=p,
        reg=0.0,
        tol=1e-12,
    )
    assert model.converged
    # the features written out here: minmax or the bilinear products
    qm, qt = lq[:, :2], lq[:, 2:]
    if form == "bilinear":
        g = np.column_stack(
            [
                qm + qt,
                qm[:, 0] * qt[:, 0],
                qm[:, 0] * qt[:, 1] + qm[:, 1] * qt[:, 0],
                qm[:, 1] * qt[:, 1],
            ]
        )
    else:
        g = np.column_stack([np.minimum(qm, qt), np.maximum(qm, qt)])
    phi = np.column_stack([X, g] + ([X[:, [k]] * g for k in range(2)] if form == "scale" else []))
    w = np.concatenate(
        [model.coef, model.quality_coef, model.scale_coef.ravel() if form == "scale" else []]
    )
    llr = phi @ w + model.intercept
    assert abs(_eq_8_17(llr, y, p) - model.loss) <= 1e-12

    # a generic optimizer on eq. 8.17 (BFGS, with its gradient written out here)
    mu, sd = phi.mean(axis=0), phi.std(axis=0)
    Z = np.column_stack([(phi - mu) / sd, np.ones(len(y))])
    wt = np.where(y == 1, p / (y == 1).sum(), (1 - p) / (y == 0).sum())
    sgn = np.where(y == 1, -1.0, 1.0)
    lo = logit(p)

    def f(v):
        u = sgn * (Z @ v + lo)
        return wt @ np.logaddexp(0, u), Z.T @ (wt * sgn * expit(u))

    res = minimize(
        f, np.zeros(Z.shape[1]), jac=True, method="BFGS", options={"gtol": 1e-13, "maxiter": 10000}
    )
    w_scipy = res.x[:-1] / sd
    b_scipy = res.x[-1] - w_scipy @ mu
    np.testing.assert_allclose(w, w_scipy, rtol=1e-8, atol=1e-8)
    assert abs(model.intercept - b_scipy) <= 1e-8
    assert model.loss <= res.fun + 1e-15


def _known_drift(n, seed):
    """One system whose LLR is (a0 + a1 L) s + (b0 + b1 L), L = min of the two log durations."""
    rng = np.random.default_rng(seed)
    dur = np.exp(rng.uniform(np.log(3), np.log(120), size=(n, 2)))
    L = np.log(dur.min(axis=1))
    s = rng.normal(scale=2.0, size=n)
    truth = {"a": (-0.1, 0.45), "b": (1.5, -0.8)}
    llr = (truth["a"][0] + truth["a"][1] * L) * s + truth["b"][0] + truth["b"][1] * L
    y = rng.random(n) < expit(llr)  # P(target | s, L) at prior 1/2: llr is the posterior log odds
    return s[:, None], y, dur, L, truth


@pytest.mark.slow
def test_known_duration_dependent_scale_and_offset_are_recovered():
    n = 200_000
    s, y, dur, L, truth = _known_drift(n, seed=11)
    qf = QualityFusion(
        form="scale", measures=["duration"], quality_transform="log", p_target=0.5
    ).fit(s, y, quality=dur)
    # features min(L_m, L_t) = L and max(...): the truth has zero weight on the max
    got = np.array(
        [
            qf.coef_[0],
            qf.scale_coef_[0, 0],
            qf.scale_coef_[0, 1],
            qf.intercept_,
            qf.quality_coef_[0],
            qf.quality_coef_[1],
        ]
    )
    # the prior-weighted objective's optimum moves the offset by logit(1/2) - logit(n_tar/n)
    shift = -logit(y.mean())
    want = np.array([truth["a"][0], truth["a"][1], 0.0, truth["b"][0] + shift, truth["b"][1], 0.0])
    # sampling error from the Fisher information of the logistic model, computed here
    Lmax = np.log(dur.max(axis=1))
    phi = np.column_stack([s[:, 0], s[:, 0] * L, s[:, 0] * Lmax, np.ones(n), L, Lmax])
    pr = expit(phi @ want - shift)
    cov = np.linalg.inv(phi.T @ (phi * (pr * (1 - pr))[:, None]))
    assert np.all(np.abs(got - want) <= 4.5 * np.sqrt(np.diag(cov))), (got, want)

    # on new data from the same source it beats the affine fusion by a clear margin
    s2, y2, dur2, _, _ = _known_drift(n, seed=12)
    lin = LogisticFusion(p_target=0.5).fit(s, y)
    c_q = cllr(*_split(qf.decision_function(s2, quality=dur2), y2))
    c_l = cllr(*_split(lin.decision_function(s2), y2))
    assert c_q < c_l - 0.03, (c_q, c_l)


def _split(llr, y):
    return llr[y == 1], llr[y == 0]


# ------------------------------------------------------------------------- the forms


def test_bilinear_form_is_the_symmetric_quadratic_form_of_the_augmented_quality():
    X, y, Q = _trials(M=2, seed=2)
    qf = QualityFusion(form="bilinear", quality_transform="log").fit(X, y, quality=Q)
    W = qf.quality_matrix_
    np.testing.assert_array_equal(W, W.T)
    assert W[0, 0] == 0
    lq = np.log(Q)
    qm = np.column_stack([np.ones(len(y)), lq[:, :2]])
    qt = np.column_stack([np.ones(len(y)), lq[:, 2:]])
    bilinear = np.einsum("ni,ij,nj->n", qm, W, qt)
    np.testing.assert_allclose(
        qf.decision_function(X, quality=Q),
        qf.intercept_ + X @ qf.coef_ + bilinear,
        rtol=1e-12,
        atol=1e-12,
    )
    # symmetric in the two sides
    swapped = np.column_stack([Q[:, 2:], Q[:, :2]])
    np.testing.assert_allclose(
        qf.decision_function(X, quality=swapped),
        qf.decision_function(X, quality=Q),
        rtol=1e-13,
        atol=1e-13,
    )


@pytest.mark.parametrize("features", ["minmax", "sides"])
def test_linear_and_scale_forms_by_hand(features):
    X, y, Q = _trials(M=1, K=2, seed=4)
    lq = np.log(Q)
    f = np.column_stack([lq.min(axis=1), lq.max(axis=1)]) if features == "minmax" else lq
    lin = QualityFusion(form="linear", features=features, quality_transform="log").fit(
        X, y, quality=Q
    )
    np.testing.assert_allclose(
        lin.decision_function(X, quality=Q),
        lin.intercept_ + X @ lin.coef_ + f @ lin.quality_coef_,
        rtol=1e-12,
        atol=1e-12,
    )
    sc = QualityFusion(form="scale", features=features, quality_transform="log").fit(
        X, y, quality=Q
    )
    slopes = sc.coef_ + f @ sc.scale_coef_.T
    np.testing.assert_allclose(
        sc.decision_function(X, quality=Q),
        sc.intercept_ + f @ sc.quality_coef_ + (X * slopes).sum(axis=1),
        rtol=1e-12,
        atol=1e-12,
    )
    assert sc.objective_ <= lin.objective_ + 1e-12  # a larger model fits at least as well


def test_outputs_are_bayes_quantities_of_the_llrs():
    X, y, Q = _trials(seed=8)
    qf = QualityFusion(quality_transform="log", p_target=0.2).fit(X, y, quality=Q)
    llr = qf.decision_function(X, quality=Q)
    np.testing.assert_array_equal(qf.transform(X, quality=Q), llr[:, None])
    proba = qf.predict_proba(X, quality=Q, p_target=0.01)
    np.testing.assert_allclose(proba[:, 1], expit(llr + logit(0.01)), rtol=1e-13)
    np.testing.assert_array_equal(qf.predict(X, quality=Q), (llr >= -logit(0.2)).astype(int))
    assert qf.score(X, y, quality=Q) == pytest.approx(-cllr(*_split(llr, y), 0.2), rel=1e-12)
    assert qf.objective_ == pytest.approx(cllr(*_split(llr, y), 0.2), rel=1e-12)


# ------------------------------------------------------------------------- input by name


def _frame(X, Q, M=2):
    df = pd.DataFrame(X, columns=[f"sys{k}" for k in range(X.shape[1])])
    names = ["duration", "snr"][:M]
    for i, m in enumerate(names):
        df[f"model_{m}"] = Q[:, i]
        df[f"test_{m}"] = Q[:, M + i]
    return df, names


def test_quality_columns_named_in_a_dataframe():
    X, y, Q = _trials(seed=9)
    df, names = _frame(X, Q)
    a = QualityFusion(quality_transform="log").fit(df, y)
    assert list(a.measures_) == names
    assert list(a.feature_names_in_) == ["sys0", "sys1", "sys2"]
    b = QualityFusion(measures=names, quality_transform="log").fit(X, y, quality=Q)
    np.testing.assert_allclose(
        a.decision_function(df), b.decision_function(X, quality=Q), rtol=1e-12, atol=1e-12
    )
    # quality columns are found by name, wherever they are (the systems keep their order, as
    # scikit-learn requires of named features)
    shuffled = df[
        [c for c in df.columns[::-1] if not c.startswith("sys")] + ["sys0", "sys1", "sys2"]
    ]
    np.testing.assert_allclose(
        a.decision_function(shuffled), a.decision_function(df), rtol=1e-13, atol=1e-13
    )
    # a quality DataFrame is read by name too
    qdf = df[[c for c in df.columns if not c.startswith("sys")]]
    np.testing.assert_allclose(
        b.decision_function(X, quality=qdf[qdf.columns[::-1]]),
        b.decision_function(X, quality=Q),
        rtol=1e-13,
        atol=1e-13,
    )
    with pytest.raises(ValueError, match="test_snr"):
        a.decision_function(df.drop(columns=["test_snr"]))


def test_pipeline_clone_and_params():
    X, y, Q = _trials(seed=10)
    df, _ = _frame(X, Q)
    qf = QualityFusion(form="scale", quality_transform=["log", None], p_target=0.1)
    assert clone(qf).get_params() == qf.get_params()
    pipe = make_pipeline(qf, PAVCalibrator()).fit(df, y)
    llr = pipe.transform(df)
    assert llr.shape == (len(y), 1) and np.all(np.isfinite(llr))
    assert list(pipe.get_feature_names_out()) == ["llr"]
    qf.set_params(form="linear")
    assert qf.get_params()["form"] == "linear"


def test_save_and_load_keep_the_measures(tmp_path):
    X, y, Q = _trials(seed=12)
    Q[::5, 0] = np.nan
    df, names = _frame(X, Q)
    for form in FORMS:
        qf = QualityFusion(form=form, quality_transform="log").fit(df, y)
        focal.save(qf, tmp_path / "m.json")
        loaded = focal.load(tmp_path / "m.json")
        assert list(loaded.measures_) == names
        np.testing.assert_array_equal(loaded.decision_function(df), qf.decision_function(df))
        text = (tmp_path / "m.json").read_text()
        assert '"measures_": ["duration", "snr"]' in text
        focal.save(loaded, tmp_path / "again.json")
        assert (tmp_path / "again.json").read_bytes() == (tmp_path / "m.json").read_bytes()
    doctored = text.replace('"measures_": ["duration", "snr"]', '"measures_": ["duration"]')
    with pytest.raises(ValueError, match="quality_feature_names_|measures"):
        _load_text(doctored)
    # the load-time check of usable numbers probes the quality terms too (the last model saved
    # is the scale form: a slope weight near the float64 limit overflows on ordinary input)
    import json

    doc = json.loads(text)
    doc["model"]["fitted"]["scale_coef_"][0][0] = 1e308
    with pytest.raises(ValueError, match="numerically unusable"):
        _load_text(json.dumps(doc))
    doc["model"]["fitted"]["scale_coef_"][0][0] = 0.0  # and the back-off too
    doc["model"]["fitted"]["linear_coef_"][0] = 1e308
    with pytest.raises(ValueError, match="numerically unusable"):
        _load_text(json.dumps(doc))


@pytest.mark.parametrize("missing", [False, True])
def test_bounds_clip_as_logistic_fusion_does(missing):
    """``bounds``: the unbounded twin's LLRs clipped (np.clip here), to given limits or to the
    ELUB limits of its training LLRs (focal.metrics.elub_bounds, by class); the back-off
    trials' LLRs (``missing``) count, and the objective stays the unclipped fit's.
    """
    from focal.metrics import elub_bounds

    X, y, Q = _trials(seed=21)
    if missing:
        Q[::7, 1] = np.nan
    free = QualityFusion(form="scale", quality_transform="log").fit(X, y, quality=Q)
    llr = free.decision_function(X, quality=Q)
    np.testing.assert_array_equal(free.bounds_, [-np.inf, np.inf])
    fixed = QualityFusion(form="scale", quality_transform="log", bounds=(-1.0, 2.0))
    fixed.fit(X, y, quality=Q)
    got = fixed.decision_function(X, quality=Q)
    assert (got == -1.0).any() and (got == 2.0).any()  # the clip is at work
    np.testing.assert_array_equal(got, np.clip(llr, -1.0, 2.0))
    np.testing.assert_array_equal(fixed.transform(X, quality=Q)[:, 0], got)
    assert fixed.objective_ == free.objective_
    elub = QualityFusion(form="scale", quality_transform="log", bounds="elub")
    elub.fit(X, y, quality=Q)
    limits = elub_bounds(llr[y == 1], llr[y == 0])
    np.testing.assert_array_equal(elub.bounds_, [limits.lower, limits.upper])
    np.testing.assert_array_equal(
        elub.decision_function(X, quality=Q), np.clip(llr, limits.lower, limits.upper)
    )


def test_bounds_are_checked_and_saved(tmp_path):
    X, y, Q = _trials(seed=22)
    with pytest.raises(ValueError, match="cannot take sample_weight"):
        QualityFusion(bounds="elub").fit(X, y, quality=Q, sample_weight=np.ones(len(y)))
    with pytest.raises(ValueError, match="bounds must be"):
        QualityFusion(bounds=(2.0, 1.0)).fit(X, y, quality=Q)
    qf = QualityFusion(quality_transform="log", bounds="elub").fit(X, y, quality=Q)
    focal.save(qf, tmp_path / "m.json")
    for read in (focal.load, focal.runtime.load):
        loaded = read(tmp_path / "m.json")
        np.testing.assert_array_equal(loaded.bounds_, qf.bounds_)
        np.testing.assert_array_equal(
            loaded.decision_function(X, quality=Q), qf.decision_function(X, quality=Q)
        )


def _load_text(text):
    """Load a doctored document with a correct checksum (the documented one, computed here), so
    that only the schema checks can refuse it.
    """
    import hashlib
    import io
    import json

    doc = {k: v for k, v in json.loads(text).items() if k not in ("sha256", "integrity")}
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    doc["sha256"] = hashlib.sha256(canonical.encode("ascii")).hexdigest()
    return focal.load(io.StringIO(json.dumps(doc)))


# ------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, quality, match",
    [
        ({"form": "cubic"}, None, "form must be one of"),
        ({"features": "mean"}, None, "features must be one of"),
        ({"quality_transform": "sqrt"}, None, "quality_transform"),
        ({"quality_transform": ["log"]}, None, "1 entries for 2 measures"),
        ({"measures": "duration"}, None, "measures must be a list"),
        ({"measures": ["a", "a"]}, None, "distinct"),
        ({}, "odd", "shape"),
        ({}, "rows", "quality has"),
        ({"quality_transform": "log"}, "zero", "log transform needs positive values"),
        ({}, "inf", "infinity"),
        ({}, "absent", "needs quality measures"),
        ({}, "all-nan", "missing"),
    ],
)
def test_bad_input_is_refused(kwargs, quality, match):
    X, y, Q = _trials(n=400, seed=13)
    q = {
        None: Q,
        "odd": Q[:, :3],
        "rows": Q[:-1],
        "absent": None,
        "all-nan": np.full_like(Q, np.nan),
    }.get(quality)
    if quality == "zero":
        q = Q.copy()
        q[5, 2] = 0.0
    if quality == "inf":
        q = Q.copy()
        q[5, 2] = np.inf
    with pytest.raises(ValueError, match=match):
        QualityFusion(**kwargs).fit(X, y, quality=q)


# sklearn checks that fit plain arrays: QualityFusion refuses them (no quality); the properties
# they cover are tested with quality in test_fit_contract_with_quality and the tests above
_REFUSED_BY_DESIGN = {
    "check_all_zero_sample_weights_error",
    "check_classifier_data_not_an_array",
    "check_classifier_not_supporting_multiclass",
    "check_classifiers_classes",
    "check_classifiers_one_label",
    "check_classifiers_one_label_sample_weights",
    "check_classifiers_regression_target",
    "check_classifiers_train",
    "check_complex_data",
    "check_decision_proba_consistency",
    "check_dict_unchanged",
    "check_dont_overwrite_parameters",
    "check_dtype_object",
    "check_estimator_sparse_array",
    "check_estimator_sparse_matrix",
    "check_estimator_sparse_tag",
    "check_estimators_dtypes",
    "check_estimators_empty_data_messages",
    "check_estimators_fit_returns_self",
    "check_estimators_nan_inf",
    "check_estimators_overwrite_params",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1feature",
    "check_fit2d_1sample",
    "check_fit2d_predict1d",
    "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_fit_score_takes_y",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_n_features_in",
    "check_n_features_in_after_fitting",
    "check_non_transformer_estimators_n_iter",
    "check_pipeline_consistency",
    "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input",
    "check_requires_y_none",
    "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weights_list",
    "check_sample_weights_not_an_array",
    "check_sample_weights_not_overwritten",
    "check_sample_weights_pandas_series",
    "check_sample_weights_shape",
    "check_supervised_y_2d",
    "check_transformer_data_not_an_array",
    "check_transformer_general",
    "check_transformer_n_iter",
    "check_transformer_preserve_dtypes",
}


@parametrize_with_checks([QualityFusion(), QualityFusion(form="scale", measures=["d"])])
def test_sklearn_estimator_checks(estimator, check):
    """Without quality the model is not defined: checks that fit plain arrays may fail only on
    that documented refusal (tests/_support/sklearn_contract.py); every other check must pass.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_check(estimator, check, _REFUSED_BY_DESIGN)


def test_fit_contract_with_quality():
    """What the refused checks cover, with quality: fit returns self and is idempotent, leaves
    its inputs and parameters alone, counts a weight-2 trial as two trials, pickles, refuses a
    different number of systems, NaN scores and sparse input, and is invariant to the order and
    subsets of the trials at prediction.
    """
    import pickle

    from scipy import sparse
    from sklearn.exceptions import NotFittedError

    X, y, Q = _trials(n=800, seed=21)
    X0, Q0 = X.copy(), Q.copy()
    est = QualityFusion(form="scale", quality_transform="log", p_target=0.3)
    params = est.get_params()
    with pytest.raises(NotFittedError):
        est.decision_function(X, quality=Q)
    assert est.fit(X, y, quality=Q) is est
    assert est.get_params() == params
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(Q, Q0)
    first = est.decision_function(X, quality=Q)
    np.testing.assert_array_equal(
        clone(est).fit(X, y, quality=Q).decision_function(X, quality=Q), first
    )
    np.testing.assert_array_equal(
        pickle.loads(pickle.dumps(est)).decision_function(X, quality=Q), first
    )
    order = np.random.default_rng(0).permutation(len(y))
    np.testing.assert_allclose(
        est.decision_function(X[order], quality=Q[order]), first[order], rtol=1e-13, atol=1e-13
    )
    np.testing.assert_allclose(
        est.decision_function(X[:7], quality=Q[:7]), first[:7], rtol=1e-13, atol=1e-13
    )
    w = np.ones(len(y))
    w[:100] = 2.0
    doubled = clone(est).fit(np.r_[X, X[:100]], np.r_[y, y[:100]], quality=np.r_[Q, Q[:100]])
    weighted = clone(est).fit(X, y, sample_weight=w, quality=Q)
    np.testing.assert_allclose(
        weighted.decision_function(X, quality=Q),
        doubled.decision_function(X, quality=Q),
        rtol=1e-8,
        atol=1e-8,
    )
    with pytest.raises(ValueError, match="features"):
        est.decision_function(X[:, :2], quality=Q)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clone(est).fit(bad, y, quality=Q)
    with pytest.raises(ValueError, match="NaN"):
        est.decision_function(bad, quality=Q)
    with pytest.raises((TypeError, ValueError)):
        clone(est).fit(sparse.csr_matrix(X), y, quality=Q)
    with pytest.raises(ValueError, match="one class"):
        clone(est).fit(X, np.ones_like(y), quality=Q)


# ------------------------------------------------------------------------- quality files


def test_quality_files_are_looked_up_per_side_by_segment(tmp_path):
    from focal.io.quality import read_quality, trial_quality

    (tmp_path / "dur.txt").write_text("segment duration\nspk1 60\nsegA 3.5\nsegB 12\n")
    (tmp_path / "snr.txt").write_text("segment snr\nsegA 20\nspk1 5\n")
    tables = read_quality(tmp_path / "dur.txt", tmp_path / "snr.txt")
    models = np.array([b"spk1", b"spk1", b"spk2"])
    tests = np.array([b"segA", b"segB", b"segA"])
    Q, names = trial_quality(models, tests, tables, ["snr", "duration"])
    assert names == ["snr", "duration"]
    expected = np.array([[5, 60, 20, 3.5], [5, 60, np.nan, 12], [np.nan, np.nan, 20, 3.5]])
    np.testing.assert_array_equal(Q, expected)
    with pytest.raises(ValueError, match="not in the quality files"):
        trial_quality(models, tests, tables, ["bandwidth"])
    (tmp_path / "dup.txt").write_text("segment duration\nx 1\n")
    with pytest.raises(ValueError, match="also in"):
        read_quality(tmp_path / "dur.txt", tmp_path / "dup.txt")


def test_sample_durations_cover_every_trial():
    """The variable-length sample set: every trial has both durations, within the documented
    ranges.
    """
    import pathlib

    from focal.io import align_trials, read_key, read_scores
    from focal.io.quality import read_quality, trial_quality

    folder = pathlib.Path(__file__).resolve().parents[2] / "data_samples" / "speaker_detection"
    for name in ("dev", "eval"):
        _, _, models, tests = align_trials(
            read_key(folder / f"{name}.key"), read_scores(folder / f"{name}_varlen_sys1.scores")
        )
        Q, _ = trial_quality(models, tests, read_quality(folder / f"{name}.durations"))
        assert not np.isnan(Q).any()
        assert 6 <= Q[:, 0].min() and Q[:, 0].max() <= 120
        assert 2 <= Q[:, 1].min() and Q[:, 1].max() <= 90


def test_focal_apply_with_quality_files(tmp_path, capsys):
    """``focal apply --quality`` writes what decision_function gives on the aligned trials,
    streamed, and refuses a quality model without quality files.
    """
    import pathlib

    from focal.cli import main
    from focal.io import align_trials, read_key, read_scores
    from focal.io.quality import read_quality, trial_quality

    folder = pathlib.Path(__file__).resolve().parents[2] / "data_samples" / "speaker_detection"
    systems = [folder / f"eval_varlen_sys{k}.scores" for k in (1, 2, 3)]
    X, y, models, tests = align_trials(
        read_key(folder / "eval.key"), *(read_scores(p) for p in systems)
    )
    # a quality file that lacks a few test segments: their trials back off
    lines = (folder / "eval.durations").read_text().splitlines()
    kept = [line for i, line in enumerate(lines) if i == 0 or i % 50]
    durations = tmp_path / "dur.txt"
    durations.write_text("\n".join(kept) + "\n")
    Q, _ = trial_quality(models, tests, read_quality(durations))
    qf = QualityFusion(
        form="scale", measures=["duration"], quality_transform="log", p_target=0.01
    ).fit(X, y, quality=Q)
    model = tmp_path / "qf.json"
    focal.save(qf, model)
    out = tmp_path / "out.scores"
    assert (
        main(
            [
                "apply",
                str(model),
                *map(str, systems),
                "--align",
                "--quality",
                str(durations),
                "-o",
                str(out),
                "--chunk-size",
                "1000",
            ]
        )
        == 0
    )
    n_missing = int(np.isnan(Q).any(axis=1).sum())
    assert f"({n_missing:,} without quality" in capsys.readouterr().out and n_missing > 0
    written = read_scores(out)
    expected = dict(zip(zip(models.tolist(), tests.tolist()), qf.decision_function(X, quality=Q)))
    got = np.array(
        [expected[(m, t)] for m, t in zip(written.models.tolist(), written.tests.tolist())]
    )
    np.testing.assert_array_equal(written.scores, got)
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(kept[:5] + [kept[5].split()[0] + " 0.0"] + kept[6:]) + "\n")
    status = main(
        [
            "apply",
            str(model),
            *map(str, systems),
            "--align",
            "--quality",
            str(bad),
            "-o",
            str(tmp_path / "z.scores"),
        ]
    )
    assert status != 0 and f"{bad}:6: duration 0.0 is not positive" in capsys.readouterr().err
    status = main(
        ["apply", str(model), *map(str, systems), "--align", "-o", str(tmp_path / "x.scores")]
    )
    assert status != 0 and "give --quality" in capsys.readouterr().err
    plain = tmp_path / "lin.json"
    focal.save(LogisticFusion().fit(X, y), plain)
    status = main(
        [
            "apply",
            str(plain),
            *map(str, systems),
            "--align",
            "--quality",
            str(durations),
            "-o",
            str(tmp_path / "y.scores"),
        ]
    )
    assert status != 0 and "does not use quality" in capsys.readouterr().err


def test_per_trial_quality_files(tmp_path, capsys):
    """Per-trial files (``model test value``, one per side and measure) give the same quality
    as the per-segment table; they take precedence over it for the sides they name.
    """
    from focal.cli import main
    from focal.io.quality import read_quality, read_trial_quality, trial_quality

    (tmp_path / "dur.txt").write_text("segment duration\nspk1 60\nsegA 3.5\nsegB 12\n")
    models = np.array([b"spk1", b"spk1", b"spk2"])
    tests = np.array([b"segA", b"segB", b"segA"])
    (tmp_path / "md.txt").write_text("spk1 segB 61\nspk1 segA 60\n")  # any order; spk2 absent
    (tmp_path / "td.txt").write_text("spk1 segA 3.5\nspk2 segA 3.4\nspk1 segB 12\n")
    trials = read_trial_quality(
        {"model_duration": tmp_path / "md.txt", "test_duration": tmp_path / "td.txt"}
    )
    Q, names = trial_quality(models, tests, [], None, trials)
    assert names == ["duration"]
    np.testing.assert_array_equal(Q, [[60, 3.5], [61, 12], [np.nan, 3.4]])
    # the per-trial file rules the side it names; the table fills the other
    Q, _ = trial_quality(
        models,
        tests,
        read_quality(tmp_path / "dur.txt"),
        ["duration"],
        {"test_duration": trials["test_duration"]},
    )
    np.testing.assert_array_equal(Q, [[60, 3.5], [60, 12], [np.nan, 3.4]])
    with pytest.raises(ValueError, match="model_duration"):
        trial_quality(models, tests, [], ["duration"], {"test_duration": trials["test_duration"]})
    with pytest.raises(ValueError, match="model_<measure>"):
        read_trial_quality({"duration": tmp_path / "md.txt"})
    (tmp_path / "twice.txt").write_text("spk1 segA 1\nspk1 segA 2\n")
    with pytest.raises(ValueError, match="twice.txt:2: duplicate trial"):
        read_trial_quality({"model_duration": tmp_path / "twice.txt"})

    # the command line: the same LLRs as with the segment table
    X = np.array([[1.0, 0.5], [-0.2, 0.1], [0.3, -1.0]])
    rng = np.random.default_rng(0)
    Xt = rng.normal(size=(400, 2))
    yt = rng.random(400) < 0.4
    Xt[yt] += 1.5
    Qt = np.exp(rng.uniform(1, 4, size=(400, 2)))
    qf = QualityFusion(measures=["duration"], quality_transform="log").fit(Xt, yt, quality=Qt)
    focal.save(qf, tmp_path / "qf.json")
    for k in range(2):
        lines = [
            f"{m.decode()} {t.decode()} {float(x)!r}\n" for m, t, x in zip(models, tests, X[:, k])
        ]
        (tmp_path / f"s{k}.txt").write_text("".join(lines))
    systems = [str(tmp_path / f"s{k}.txt") for k in range(2)]
    assert (
        main(
            [
                "apply",
                str(tmp_path / "qf.json"),
                *systems,
                "-o",
                str(tmp_path / "o1.txt"),
                "--trial-quality",
                f"model_duration={tmp_path / 'md.txt'}",
                f"test_duration={tmp_path / 'td.txt'}",
            ]
        )
        == 0
    )
    assert "(1 without quality" in capsys.readouterr().out
    from focal.io import read_scores

    got = read_scores(tmp_path / "o1.txt").scores
    Q, _ = trial_quality(models, tests, [], None, trials)
    np.testing.assert_array_equal(got, qf.decision_function(X, quality=Q))


def test_monotone_transforms_of_the_measures():
    """The "log" and "logit" transforms equal fitting on the transformed values by hand."""
    X, y, Q = _trials(n=1500, M=2, seed=30)
    P = np.column_stack([Q[:, 0], Q[:, 1] / 61, Q[:, 2], Q[:, 3] / 61])  # a probability
    manual = np.column_stack([np.log(P[:, 0]), logit(P[:, 1]), np.log(P[:, 2]), logit(P[:, 3])])
    a = QualityFusion(form="scale", quality_transform=["log", "logit"]).fit(X, y, quality=P)
    b = QualityFusion(form="scale").fit(X, y, quality=manual)
    np.testing.assert_allclose(
        a.decision_function(X, quality=P),
        b.decision_function(X, quality=manual),
        rtol=1e-10,
        atol=1e-10,
    )
    bad = P.copy()
    bad[4, 1] = 1.0
    with pytest.raises(ValueError, match="logit transform needs values in"):
        a.decision_function(X, quality=bad)


def test_docstring_examples():
    import doctest

    import focal.core.quality
    import focal.estimators.quality as module

    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted >= 5
    assert doctest.testmod(focal.core.quality).failed == 0


def test_pos_label_names_the_target_class():
    X, y, Q = _trials(n=600, seed=40)
    words = np.where(y == 1, "genuine", "impostor")
    a = QualityFusion(quality_transform="log", pos_label="genuine").fit(X, words, quality=Q)
    b = QualityFusion(quality_transform="log").fit(X, y, quality=Q)
    assert list(a.classes_) == ["impostor", "genuine"]
    np.testing.assert_array_equal(
        a.decision_function(X, quality=Q), b.decision_function(X, quality=Q)
    )
