"""MulticlassFusion, GaussianBackend and stack_systems: scikit-learn conformance, persistence,
the documented input layout, and agreement with the binary solver.
"""

import pickle
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from focal import GaussianBackend, LogisticFusion, MulticlassFusion, stack_systems
from focal.metrics import multiclass_cross_entropy
from tests._support.sklearn_contract import run_check


@parametrize_with_checks(
    [GaussianBackend(), GaussianBackend(covariance="per_class"), MulticlassFusion()]
)
def test_sklearn_checks(estimator, check):
    """Every check passes, or (MulticlassFusion) fails only by a documented refusal: X that
    is not a whole number of class blocks (most of sklearn's data), or labels that are neither
    column numbers 0..N-1 nor class names with a known column order (e.g. sklearn's labels 1
    and 2): never paired with the columns by sort order.
    """
    name = getattr(check, "func", check).__name__
    run_check(estimator, check, {name} if isinstance(estimator, MulticlassFusion) else ())


def _fusion_data(n=600, K=2, N=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N, n)
    y[:N] = np.arange(N)
    blocks = [3.0 * (np.eye(N)[y] * (k + 1) + rng.normal(size=(n, N))) + 5 * k for k in range(K)]
    return np.concatenate(blocks, axis=1), y


# ------------------------------------------------------ the generic checks, on a valid layout


@pytest.mark.parametrize("mode", ["scalar", "full"])
def test_layout_conformance_fit_transform_pickle_clone(mode, tmp_path):
    X, y = _fusion_data()
    est = MulticlassFusion(mode=mode)
    params = est.get_params()
    assert est.fit(X, y) is est
    assert est.get_params() == params  # no parameter overwritten
    out = est.transform(X)
    np.testing.assert_allclose(est.fit_transform(X, y), out)
    np.testing.assert_allclose(clone(est).fit(X, y).transform(X), out)  # idempotent, clone
    np.testing.assert_allclose(pickle.loads(pickle.dumps(est)).transform(X), out)
    joblib.dump(est, tmp_path / "fusion.joblib")
    np.testing.assert_array_equal(joblib.load(tmp_path / "fusion.joblib").transform(X), out)
    assert est.n_features_in_ == 6 and est.n_classes_ == 3 and est.n_systems_ == 2
    assert list(est.get_feature_names_out()) == [f"multiclassfusion{i}" for i in range(3)]
    np.testing.assert_allclose(
        make_pipeline(MulticlassFusion(mode=mode)).fit(X, y).transform(X), out
    )


def test_layout_conformance_dtypes_readonly_lists_and_errors():
    X, y = _fusion_data()
    ref = MulticlassFusion().fit(X, y).transform(X)
    for Xd in (X.astype(np.float32), np.round(X).astype(np.int64), X.tolist()):
        assert np.isfinite(MulticlassFusion().fit(Xd, y).transform(Xd)).all()
    ro = X.copy()
    ro.setflags(write=False)
    np.testing.assert_allclose(MulticlassFusion().fit(ro, y).transform(ro), ref)
    Xc = X.copy()
    MulticlassFusion().fit(Xc, y).transform(Xc)
    assert np.array_equal(Xc, X)  # input untouched
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        MulticlassFusion().fit(bad, y)
    fitted = MulticlassFusion().fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        fitted.transform(bad)
    with pytest.raises(ValueError, match="features"):
        fitted.transform(X[:, :3])
    with pytest.raises(ValueError, match="multiple of n_classes"):
        MulticlassFusion().fit(X[:, :5], y)
    with pytest.raises(ValueError, match="one system"):
        MulticlassFusion(mode="calibration").fit(X, y)
    with pytest.raises(ValueError, match="mode"):
        MulticlassFusion(mode="diagonal").fit(X, y)
    with pytest.raises(ValueError, match="0..2"):
        MulticlassFusion(prior=[0.3, 0.3, 0.4]).fit(X, np.where(y == 0, 3, y))
    with pytest.raises(ValueError, match="sum to 1"):
        MulticlassFusion(prior=[0.3, 0.3, 0.3]).fit(X, y)
    with pytest.raises(ValueError, match=r"class\(es\) \[1\]"):
        MulticlassFusion(prior=[0.3, 0.3, 0.4]).fit(X[y != 1], y[y != 1])


def test_dataframe_input_keeps_feature_names():
    X, y = _fusion_data()
    cols = [f"s{k}_c{j}" for k in range(2) for j in range(3)]
    df = pd.DataFrame(X, columns=cols)
    est = MulticlassFusion().fit(df, y)
    assert list(est.feature_names_in_) == cols
    np.testing.assert_allclose(est.transform(df), MulticlassFusion().fit(X, y).transform(X))
    out = MulticlassFusion().set_output(transform="pandas").fit(df, y).transform(df)
    assert isinstance(out, pd.DataFrame) and out.shape == (600, 3)


# ------------------------------------------------------------------------------- behaviour


def _binary_calibration_reference(s, is_target, p_target, reg):
    """Binary affine calibration of one score by focal's LogisticFusion with K = 1."""
    fuser = LogisticFusion(p_target=p_target, reg=reg).fit(s[:, None], is_target)
    return fuser.decision_function(s[:, None])


@pytest.mark.parametrize("p0, reg", [(0.5, 0.0), (0.5, 1e-6), (0.2, 1e-6), (0.7, 1e-2)])
def test_calibration_mode_with_two_classes_equals_binary_logistic_fusion(p0, reg):
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 1000)
    llh = rng.normal(size=(1000, 2)) * 2 + np.eye(2)[y] * [1.2, 0.4]
    est = MulticlassFusion(prior=[p0, 1 - p0], mode="calibration", reg=reg).fit(llh, y)
    llr = est.transform(llh) @ [1.0, -1.0]
    s = llh[:, 0] - llh[:, 1]
    np.testing.assert_allclose(
        llr, _binary_calibration_reference(s, y == 0, p0, reg), rtol=1e-8, atol=1e-8
    )


def test_predict_proba_and_predict_follow_bayes_rule():
    X, y = _fusion_data()
    est = MulticlassFusion().fit(X, y)
    llh = est.transform(X)
    P = est.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    prior = np.array([0.7, 0.2, 0.1])
    Pp = est.predict_proba(X, prior=prior)
    expected = prior * np.exp(llh - llh.max(axis=1, keepdims=True))
    np.testing.assert_allclose(Pp, expected / expected.sum(axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_array_equal(est.predict(X, prior=prior), np.argmax(Pp, axis=1))
    assert est.predict_proba(X, prior=[0.5, 0.0, 0.5])[:, 1].max() == 0.0


def test_fusion_improves_on_each_system_and_prior_weighting():
    X, y = _fusion_data(n=2000, seed=2)
    est = MulticlassFusion().fit(X, y)
    fused = multiclass_cross_entropy(est.transform(X), y)
    for k in range(2):
        single = MulticlassFusion(mode="calibration").fit(X[:, 3 * k : 3 * k + 3], y)
        assert fused < multiclass_cross_entropy(single.transform(X[:, 3 * k : 3 * k + 3]), y)
    assert est.loss_ == pytest.approx(fused, rel=1e-9)  # training cost = C_mce at flat prior
    full = MulticlassFusion(mode="full").fit(X, y)
    assert full.loss_ <= est.loss_ + 1e-12  # scalar mode is a special case


def test_sample_weight_is_repetition():
    X, y = _fusion_data(n=300, seed=3)
    w = np.random.default_rng(3).integers(0, 3, 300)
    a = MulticlassFusion().fit(X, y, sample_weight=w)
    b = MulticlassFusion().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(a.transform(X), b.transform(X), rtol=1e-9, atol=1e-9)


def test_separable_data_without_penalty_warns_and_stays_finite():
    from sklearn.exceptions import ConvergenceWarning

    y = np.repeat([0, 1, 2], 30)
    X = np.eye(3)[y] * 4.0
    with pytest.warns(ConvergenceWarning, match="separable"):
        est = MulticlassFusion(reg=0.0, max_iter=20).fit(X, y)
    assert np.isfinite(est.transform(X)).all()
    assert MulticlassFusion().fit(X, y).converged_  # the default penalty converges


def test_string_labels_need_the_column_order():
    """Class names say nothing about which column is which: without class_names (or named
    columns) they are refused, never paired with columns by sort order.
    """
    X, y = _fusion_data()
    names = np.array(["spa", "eng", "fra"])  # column order, not sorted
    with pytest.raises(ValueError, match="nothing says which columns of X hold which class"):
        MulticlassFusion().fit(X, names[y])
    with pytest.raises(ValueError, match=r"labels \[1, 2, 3\], not the class indices 0..2"):
        MulticlassFusion().fit(X, y + 1)  # 1-based labels: not shifted silently
    with pytest.raises(ValueError, match="'fra' is not one of the classes"):
        MulticlassFusion(class_names=["spa", "eng", "deu"]).fit(X, names[y])
    with pytest.raises(ValueError, match="names a class twice"):
        MulticlassFusion(class_names=["spa", "eng", "spa"]).fit(X, y)
    with pytest.raises(ValueError, match="prior has 2 entries for 3 classes"):
        MulticlassFusion(class_names=list(names), prior=[0.5, 0.5]).fit(X, names[y])


@pytest.mark.parametrize("mode", ["scalar", "calibration", "full"])
@pytest.mark.parametrize("prior", [None, [0.5, 0.2, 0.3]])
def test_names_give_exactly_what_indices_give(mode, prior):
    K = 1 if mode == "calibration" else 2
    X, y = _fusion_data(K=K)
    names = np.array(["spa", "eng", "fra"])
    by_index = MulticlassFusion(mode=mode, prior=prior).fit(X, y)
    by_name = MulticlassFusion(mode=mode, prior=prior, class_names=list(names)).fit(X, names[y])
    np.testing.assert_array_equal(by_name.transform(X), by_index.transform(X))
    np.testing.assert_array_equal(by_name.classes_, names)
    np.testing.assert_array_equal(by_name.predict(X), names[by_index.predict(X)])
    # indices with class names: the same again
    mixed = MulticlassFusion(mode=mode, prior=prior, class_names=list(names)).fit(X, y)
    np.testing.assert_array_equal(mixed.transform(X), by_index.transform(X))
    # a DataFrame whose columns name (system, class) gives the order too
    columns = [f"sys{k}:{c}" for k in range(K) for c in names]
    frame = pd.DataFrame(X, columns=columns)
    framed = MulticlassFusion(mode=mode, prior=prior).fit(frame, names[y])
    np.testing.assert_array_equal(framed.classes_, names)
    np.testing.assert_array_equal(
        framed.transform(frame),
        MulticlassFusion(mode=mode, prior=prior).fit(frame, y).transform(frame),
    )


@pytest.mark.parametrize("mode", ["scalar", "calibration", "full"])
def test_any_column_permutation_gives_the_same_per_class_llrs(mode):
    K = 1 if mode == "calibration" else 2
    N = 4
    X, y = _fusion_data(K=K, N=N, seed=3)
    names = np.array(["eng", "fra", "deu", "OOS"])
    ref = MulticlassFusion(mode=mode, class_names=list(names)).fit(X, names[y])
    out = ref.transform(X)
    rng = np.random.default_rng(0)
    for _ in range(3):
        perm = rng.permutation(N)
        Xp = X.reshape(-1, K, N)[:, :, perm].reshape(X.shape)
        est = MulticlassFusion(mode=mode, class_names=list(names[perm])).fit(Xp, names[y])
        np.testing.assert_array_equal(est.classes_, names[perm])
        np.testing.assert_allclose(est.transform(Xp), out[:, perm], rtol=0, atol=1e-12)


def test_named_columns_must_agree_with_class_names():
    X, y = _fusion_data(K=1)
    frame = pd.DataFrame(X, columns=["eng", "fra", "deu"])
    est = MulticlassFusion(mode="calibration").fit(frame, np.array(["eng", "fra", "deu"])[y])
    assert list(est.classes_) == ["eng", "fra", "deu"]
    with pytest.raises(ValueError, match="differ from the class order of X's columns"):
        MulticlassFusion(class_names=["fra", "eng", "deu"]).fit(frame, y)
    with pytest.raises(ValueError, match="same classes in the same order"):
        MulticlassFusion().fit(
            pd.DataFrame(
                np.c_[X, X], columns=["a:eng", "a:fra", "a:deu", "b:fra", "b:eng", "b:deu"]
            ),
            np.array(["eng"] * 3)[y],
        )


def test_gaussian_backend_class_names():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 3, 600)
    X = rng.normal(size=(600, 5)) + 2.0 * np.eye(3, 5)[y]
    names = np.array(["spa", "eng", "fra"])
    with pytest.raises(ValueError, match="pass class_names=\\[...\\], the order of the output"):
        GaussianBackend().fit(X, names[y])
    named = GaussianBackend(class_names=list(names)).fit(X, names[y])
    ref = GaussianBackend().fit(X, y)
    np.testing.assert_array_equal(named.transform(X), ref.transform(X))
    np.testing.assert_array_equal(named.classes_, names)


def test_zero_prior_class_without_trials():
    X, y = _fusion_data(N=4)
    X = X[y != 2]
    y = y[y != 2]
    est = MulticlassFusion(prior=[0.4, 0.3, 0.0, 0.3]).fit(X, y)
    assert est.intercept_[2] == 0.0
    assert np.isfinite(est.transform(X)).all()


# ---------------------------------------------------------------------------- GaussianBackend


def test_a_class_without_trials_is_named_with_the_way_to_declare_it():
    """Issue 29: fitted without trials of one class, MulticlassFusion said only "not a
    multiple of n_classes"; it names the class and says how to give the class count.
    """
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)  # classes 0 and 1: no trial of class 2
    llh = rng.normal(size=(200, 3)) + np.eye(3)[y]
    with pytest.raises(ValueError, match="not a multiple of n_classes = 2") as info:
        MulticlassFusion().fit(llh, y)
    message = str(info.value)
    assert "class(es) 2 have no trials in y" in message
    assert "prior=[...]" in message and "class_names=[...]" in message
    with pytest.raises(ValueError, match=r"class\(es\) 2 have no trials"):
        MulticlassFusion().fit(np.hstack([llh, llh, llh]), y)  # 3 systems x 3 classes
    # each way out works: a zero prior drops the class; named classes say which one is empty
    assert MulticlassFusion(prior=[0.5, 0.5, 0.0]).fit(llh, y).n_classes_ == 3
    names = np.array(["en", "fr"])[y]
    with pytest.raises(ValueError, match=r"\['de'\] have non-zero prior.*a prior of 0 leaves"):
        MulticlassFusion(class_names=["en", "fr", "de"]).fit(llh, names)


def test_gaussian_backend_pipeline_with_calibration():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 4, 2000)
    X = rng.normal(size=(2000, 10)) + rng.normal(size=(4, 10))[y] * 0.8
    pipe = make_pipeline(GaussianBackend(), MulticlassFusion(mode="calibration")).fit(X, y)
    out = pipe.transform(X)
    assert out.shape == (2000, 4)
    raw = GaussianBackend().fit(X, y).transform(X)
    assert multiclass_cross_entropy(out, y) <= multiclass_cross_entropy(raw, y) + 1e-12
    np.testing.assert_allclose(pipe.predict_proba(X).sum(axis=1), 1.0)


def test_gaussian_backend_attributes_and_roundtrip(tmp_path):
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1, 2], 40)
    X = rng.normal(size=(120, 3)) + 5.0 * y[:, None]
    for cov in ("shared", "per_class"):
        gb = GaussianBackend(covariance=cov, reg=0.0).fit(X, y)
        np.testing.assert_allclose(gb.means_, [X[y == i].mean(axis=0) for i in range(3)])
        if cov == "per_class":
            np.testing.assert_allclose(gb.covariance_[1], np.cov(X[y == 1].T, bias=True))
        joblib.dump(gb, tmp_path / "gb.joblib")
        np.testing.assert_array_equal(
            joblib.load(tmp_path / "gb.joblib").transform(X), gb.transform(X)
        )
        assert (gb.predict(X) == y).mean() > 0.95


def test_gaussian_backend_is_shift_and_scale_invariant_in_its_decisions():
    rng = np.random.default_rng(6)
    y = rng.integers(0, 3, 300)
    X = rng.normal(size=(300, 4)) + rng.normal(size=(3, 4))[y]
    a = GaussianBackend().fit(X, y).transform(X)
    Xm = X * 1e3 + 1e6
    b = GaussianBackend().fit(Xm, y).transform(Xm)
    np.testing.assert_allclose(a - a[:, :1], b - b[:, :1], rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------------------ stack_systems


def test_stack_systems_layouts():
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    expected = np.concatenate([a, b], axis=1)
    np.testing.assert_array_equal(stack_systems([a, b]), expected)
    np.testing.assert_array_equal(stack_systems({"x": a, "y": b}), expected)
    cls = ["eng", "spa", "cat"]
    da = pd.DataFrame(a, columns=cls)
    db = pd.DataFrame(b, columns=cls)[["cat", "eng", "spa"]]  # another column order
    np.testing.assert_array_equal(stack_systems([da, db]), expected)
    multi = pd.concat({"sys1": da, "sys2": db}, axis=1)
    np.testing.assert_array_equal(stack_systems(multi), expected)
    np.testing.assert_array_equal(
        stack_systems([da, db], classes=["cat", "eng", "spa"]),
        np.concatenate([a[:, [2, 0, 1]], b[:, [2, 0, 1]]], axis=1),
    )
    with pytest.raises(ValueError, match="same trials"):
        stack_systems([a, b[:4]])
    with pytest.raises(ValueError, match="expected the classes"):
        stack_systems([da, db.rename(columns={"cat": "fra"})])
    with pytest.raises(ValueError, match="MultiIndex"):
        stack_systems(da)
    with pytest.raises(ValueError, match="empty"):
        stack_systems([])


def test_docstring_examples():
    import doctest

    import focal.estimators.backend
    import focal.estimators.multiclass
    import focal.metrics.lre
    import focal.metrics.multiclass

    attempted = 0
    for module in (
        focal.metrics.multiclass,
        focal.metrics.lre,
        focal.estimators.multiclass,
        focal.estimators.backend,
    ):
        result = doctest.testmod(module)
        assert result.failed == 0, module.__name__
        attempted += result.attempted
    assert attempted >= 20


def test_public_names():
    import focal
    import focal.metrics as m

    assert focal.MulticlassFusion is MulticlassFusion and focal.GaussianBackend is GaussianBackend
    for name in (
        "multiclass_cross_entropy",
        "multiclass_cllr",
        "albayzin_measures",
        "cavg",
        "cavg_sweep",
        "detection_llrs",
        "pairwise_analysis",
        "subset_analysis",
    ):
        assert name in m.__all__ and callable(getattr(m, name))


def test_gaussian_backend_singular_covariance_says_what_can_help():
    """Issue 29: the singular shared covariance suggested covariance="shared"."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    X = rng.normal(size=(300, 3))
    X = np.hstack([X, X[:, :1]])  # a collinear column
    with pytest.raises(ValueError, match="shared within-class covariance is singular") as info:
        GaussianBackend(reg=0).fit(X, y)
    assert "covariance='shared'" not in str(info.value) and "reg > 0" in str(info.value)
    with pytest.raises(ValueError, match="a larger ridge than reg=1e-300") as info:
        GaussianBackend(reg=1e-300).fit(X, y)
    assert "covariance='shared'" not in str(info.value)
    names = np.array(["en", "fr", "de"])[y]
    with pytest.raises(ValueError, match="class 'en' covariance is singular.*covariance='shared'"):
        GaussianBackend("per_class", reg=0, class_names=["en", "fr", "de"]).fit(X, names)


def _ridge_move(X, y, covariance):
    """(largest change of a log-likelihood difference over the largest difference, reg=1e-6
    against reg=0; reg * v / lambda_min computed here with NumPy).
    """
    a = GaussianBackend(covariance, reg=0).fit(X, y).transform(X)
    b = GaussianBackend(covariance, reg=1e-6).fit(X, y).transform(X)
    da, db = a - a[:, :1], b - b[:, :1]
    v = np.trace(np.cov(X.T, bias=True)) / X.shape[1]
    residuals = [X[y == c] - X[y == c].mean(axis=0) for c in np.unique(y)]
    if covariance == "shared":
        covariances = [sum(r.T @ r for r in residuals) / X.shape[0]]
    else:
        covariances = [r.T @ r / r.shape[0] for r in residuals]
    lam = min(np.linalg.eigvalsh(c).min() for c in covariances)
    return np.abs(db - da).max() / np.abs(da).max(), 1e-6 * v / lam


@pytest.mark.parametrize("covariance", ["shared", "per_class"])
def test_gaussian_backend_default_ridge_moves_models_as_documented(covariance):
    """Issue 29: the docstring said reg=1e-6 moves models by about 1e-6 relative. It moves the
    log-likelihoods by about reg * v / lambda_min (each precision eigenvalue 1/lambda becomes
    1/(lambda + reg v)): checked on the docstring's example, and the language sample's nearly
    collinear systems side by side are moved by percents, as documented.
    """
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    X = rng.normal(size=(300, 5)) + 2.0 * np.eye(3, 5)[y]  # the docstring's example
    move, predicted = _ridge_move(X, y, covariance)
    assert 0.5 * predicted < move < 1.5 * predicted
    assert 1e-6 < move < 4e-6
    folder = Path(__file__).resolve().parents[2] / "data_samples" / "language_recognition"
    columns, key = [], dict(line.split() for line in (folder / "dev.key").read_text().splitlines())
    for k in (1, 2, 3):
        rows = [
            line.split() for line in (folder / f"dev_sys{k}_closed.txt").read_text().splitlines()
        ]
        columns.append(np.array([[float(v) for v in r[3:-1]] for r in rows]))  # OOS: 0
        ids = [r[2] for r in rows]
    X = np.hstack(columns)
    y = np.unique([key[i] for i in ids], return_inverse=True)[1]
    move, predicted = _ridge_move(X, y, covariance)
    assert predicted > 1e3 and 0.05 < move < 0.2  # v / lambda_min > 1e9
