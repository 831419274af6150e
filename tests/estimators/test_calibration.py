"""PAVCalibrator and ROCCH estimators: acceptance points, sklearn contract, pipelines.

Sources of truth: the O(T^2) closed-form PAV (thesis eqs. 7.47-7.51), brute-force thresholds and
an independent convex hull (thesis 7.3.6-7.3.8) in ``_calibration_reference``; hand-worked
examples; the identities Cllr(PAV) = minCllr and ROCCH-EER = max over priors of minDCF.
"""

import hashlib
import io
import json
import math
import pickle
import warnings

import joblib
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import focal
import focal.runtime
from focal import ROCCH, PAVCalibrator
from focal.metrics import (
    cllr,
    det_curve,
    eer,
    from_labels,
    min_cllr,
    min_dcf,
    pav_llr,
)
from tests._support.calibration_reference import (
    brute_min_dcf,
    closed_form_pav_llr,
    log_cost_cllr,
    rocch_eer,
    rocch_prbep,
    rocch_vertices,
)
from tests._support.sklearn_contract import run_check

ESTIMATORS = [
    PAVCalibrator(),
    PAVCalibrator(pseudo_count=0.0),
    PAVCalibrator(interpolation="linear"),
    PAVCalibrator(pseudo_count=0.5, interpolation="linear"),
    ROCCH(),
]


def scores_and_labels(seed=0, n_tar=40, n_non=60, decimals=1):
    """Gaussian scores rounded to ``decimals`` (many ties, within and across classes)."""
    rng = np.random.default_rng(seed)
    s = np.round(np.concatenate([rng.normal(1.5, 1, n_tar), rng.normal(0, 1, n_non)]), decimals)
    y = np.r_[np.ones(n_tar, dtype=int), np.zeros(n_non, dtype=int)]
    perm = rng.permutation(s.size)
    return s[perm], y[perm]


def same_llr(a, b):
    """Equal arrays, infinities included."""
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


trials = st.lists(st.tuples(st.integers(-4, 4), st.booleans()), min_size=2, max_size=40).filter(
    lambda t: any(y for _, y in t) and not all(y for _, y in t)
)


# -- acceptance: training output is the PAV-LLR, its Cllr is minCllr ------------------------


@given(trials)
def test_unbounded_training_output_is_pav_llr_and_closed_form(t):
    s = np.array([v for v, _ in t], dtype=float)
    y = np.array([int(lab) for _, lab in t])
    out = PAVCalibrator(pseudo_count=0).fit(s, y).transform(s)
    assert out.shape == (s.size, 1)
    same_llr(out[:, 0], pav_llr(s, y))
    want = np.asarray(closed_form_pav_llr(s, y))
    fin = np.isfinite(want)
    same_llr(out[~fin, 0], want[~fin])
    np.testing.assert_allclose(out[fin, 0], want[fin], rtol=1e-12, atol=1e-12)
    same_llr(ROCCH().fit(s, y).transform(s), out)


@pytest.mark.parametrize("seed", range(3))
def test_unbounded_training_cllr_equals_min_cllr(seed):
    s, y = scores_and_labels(seed, 300, 700)
    llr = PAVCalibrator(pseudo_count=0).fit(s, y).decision_function(s)
    tar, non = from_labels(llr, y)
    raw_tar, raw_non = from_labels(s, y)
    for p in (0.5, 0.01, 0.9):
        assert cllr(tar, non, p) == pytest.approx(min_cllr(raw_tar, raw_non, p), rel=1e-12)
        assert cllr(tar, non, p) == pytest.approx(log_cost_cllr(tar, non, p), rel=1e-10)


def test_min_cllr_of_perfect_separation_is_zero():
    s, y = np.array([-3.0, -1.0, 2.0, 5.0]), np.array([0, 0, 1, 1])
    llr = PAVCalibrator(pseudo_count=0).fit(s, y).decision_function(s)
    same_llr(llr, [-np.inf, -np.inf, np.inf, np.inf])
    assert cllr(*from_labels(llr, y)) == 0.0


# -- acceptance: monotone for unseen scores, ties included -----------------------------------


@given(
    trials, st.lists(st.floats(-10, 10, allow_nan=False), max_size=25), st.sampled_from(ESTIMATORS)
)
def test_output_is_non_decreasing_for_unseen_scores(t, extra, estimator):
    s = np.array([v for v, _ in t], dtype=float)
    y = np.array([int(lab) for _, lab in t])
    est = clone(estimator).fit(s, y)
    query = np.sort(np.concatenate([s, extra, s + 0.5, [-1e6, 1e6]]))
    out = est.decision_function(query)
    assert not np.isnan(out).any()
    assert np.all(out[1:] >= out[:-1])
    # constant beyond the ends of the training range
    assert est.decision_function([s.min() - 3.0])[0] == out[0] == est.llr_[0]
    assert est.decision_function([s.max() + 3.0])[0] == out[-1] == est.llr_[-1]


def test_step_map_of_unseen_scores_by_hand():
    # sorted: -2 n, -1 n, 0 t, 0.5 n, 1 t, 3 t -> blocks {-2,-1} -inf, {0, 0.5} 0, {1, 3} +inf
    s = np.array([-2.0, -1.0, 0.5, 0.0, 1.0, 3.0])
    y = np.array([0, 0, 0, 1, 1, 1])
    cal = PAVCalibrator(pseudo_count=0).fit(s, y)
    same_llr(cal.score_lo_, [-2.0, 0.0, 1.0])
    same_llr(cal.score_hi_, [-1.0, 0.5, 3.0])
    same_llr(cal.block_n_tar_, [0, 1, 2])
    same_llr(cal.block_n_non_, [2, 1, 0])
    same_llr(
        cal.decision_function([-9.0, -1.5, -0.5, 0.25, 0.75, 2.0, 9.0]),
        [-np.inf, -np.inf, -np.inf, 0.0, 0.0, np.inf, np.inf],
    )


def test_linear_map_by_hand():
    # bounded (a = 1): {vT, -2 n, -1 n} log((1/4)/(2/4)), {0 t, 0.5 n} 0, {1 t, 3 t, vN} log 2
    s = np.array([-2.0, -1.0, 0.5, 0.0, 1.0, 3.0])
    y = np.array([0, 0, 0, 1, 1, 1])
    cal = PAVCalibrator(interpolation="linear").fit(s, y)
    np.testing.assert_allclose(cal.llr_, [-math.log(2), 0.0, math.log(2)], rtol=1e-15)
    # centres -1.5, 0.25, 2
    q = np.array([-5.0, -1.5, -0.625, 0.25, 1.125, 2.0, 7.0])
    want = [
        -math.log(2),
        -math.log(2),
        -math.log(2) / 2,
        0.0,
        math.log(2) / 2,
        math.log(2),
        math.log(2),
    ]
    np.testing.assert_allclose(cal.decision_function(q), want, rtol=1e-14, atol=1e-15)


# -- acceptance: bounded output is finite, and better on held-out data -------------------------


@given(
    trials,
    st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=25),
    st.sampled_from(["step", "linear"]),
    st.sampled_from([1e-6, 0.3, 1.0, 4.0]),
)
def test_bounded_output_is_finite_for_every_input(t, query, interpolation, a):
    s = np.array([v for v, _ in t], dtype=float)
    y = np.array([int(lab) for _, lab in t])
    cal = PAVCalibrator(pseudo_count=a, interpolation=interpolation).fit(s, y)
    big = np.finfo(float).max
    out = cal.decision_function(np.concatenate([query, s, [-big, big, 0.0]]))
    assert np.all(np.isfinite(out))
    n_tar, n_non = y.sum(), (1 - y).sum()
    assert np.all(out > -math.log1p(n_tar / a)) and np.all(out < math.log1p(n_non / a))


def test_bounded_output_is_finite_for_separable_scores_of_magnitude_1e6():
    s = np.array([-3e6, -2e6, -1e6, 1e6, 2e6, 3e6])
    y = np.array([0, 0, 0, 1, 1, 1])
    for interpolation in ("step", "linear"):
        cal = PAVCalibrator(interpolation=interpolation).fit(s, y)
        out = cal.decision_function(np.linspace(-1e7, 1e7, 101))
        assert np.all(np.isfinite(out)) and np.all(np.diff(out) >= 0)
    # two blocks {vT, 3 n} and {3 t, vN}: log((1/4)/(3/4)) and its negative
    np.testing.assert_allclose(cal.llr_, [-math.log(3), math.log(3)], rtol=1e-15)


@pytest.mark.parametrize("n_train", [5, 10, 30])
def test_bounded_pav_beats_unbounded_on_held_out_data_when_unbounded_is_infinite(n_train):
    infinite = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        s = np.concatenate([rng.normal(1.5, 1, n_train), rng.normal(-1.5, 1, n_train)])
        y = np.r_[np.ones(n_train), np.zeros(n_train)]
        held = np.concatenate([rng.normal(1.5, 1, 2000), rng.normal(-1.5, 1, 2000)])
        held_y = np.r_[np.ones(2000), np.zeros(2000)]
        unbounded = PAVCalibrator(pseudo_count=0).fit(s, y).decision_function(held)
        bounded = PAVCalibrator().fit(s, y).decision_function(held)
        c_unb = cllr(*from_labels(unbounded, held_y))
        c_b = cllr(*from_labels(bounded, held_y))
        assert math.isfinite(c_b) and c_b < 1.0  # finite, and better than no information
        if math.isinf(c_unb):
            infinite += 1
            assert c_b < c_unb
    assert infinite >= 15  # the situation the bounding is for really occurs here


# -- acceptance: ROCCH equals the metrics and an independent hull ------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_rocch_matches_metrics_and_independent_hull(seed):
    s, y = scores_and_labels(seed, 30, 45)
    tar, non = from_labels(s, y)
    hull = ROCCH().fit(s, y)
    assert hull.eer_ == eer(tar, non)
    assert hull.eer_ == pytest.approx(float(rocch_eer(tar, non)), rel=1e-14, abs=1e-15)
    # precision = recall where misses = false alarms m: 1 - m / N_tar
    assert hull.prbep_ == pytest.approx(
        1 - float(rocch_prbep(tar, non)) / tar.size, rel=1e-14, abs=1e-15
    )
    vertices = rocch_vertices(tar, non)  # (pfa, pmiss), pfa increasing
    pfa = np.array([float(v[0]) for v in vertices])[::-1]
    pmiss = np.array([float(v[1]) for v in vertices])[::-1]
    np.testing.assert_allclose(hull.p_fa_, pfa, rtol=1e-15)
    np.testing.assert_allclose(hull.p_miss_, pmiss, rtol=1e-15)
    same_llr(det_curve(hull.hull_, convex_hull=True).p_fa, hull.p_fa_)
    same_llr(det_curve(hull.hull_, convex_hull=True).p_miss, hull.p_miss_)
    # AUC of the hull by trapezoids over the independent vertices, P_detect = 1 - P_miss
    auc = sum((b[0] - a[0]) * (2 - a[1] - b[1]) / 2 for a, b in zip(vertices, vertices[1:]))
    assert hull.auc_ == pytest.approx(float(auc), rel=1e-14)
    # segment LLR = log(delta P_miss / delta P_fa) of the independent hull = PAV block LLR
    slopes = [
        math.log(dm / df) if dm and df else (math.inf if dm else -math.inf)
        for dm, df in ((b[1] - a[1], a[0] - b[0]) for a, b in zip(vertices[1:], vertices[:-1]))
    ][::-1]
    np.testing.assert_allclose(hull.llr_, slopes, rtol=1e-12, atol=1e-15)
    same_llr(hull.llr_, PAVCalibrator(pseudo_count=0).fit(s, y).llr_)
    assert min_cllr(hull.hull_) == min_cllr(tar, non)
    assert min_cllr(hull.hull_, p_target=0.1) == min_cllr(tar, non, 0.1)
    assert hull.n_targets_ == tar.size and hull.n_nontargets_ == non.size


def test_rocch_min_dcf_at_50_random_operating_points():
    s, y = scores_and_labels(7, 50, 80)
    tar, non = from_labels(s, y)
    hull = ROCCH().fit(s, y).hull_
    rng = np.random.default_rng(1)
    for p, cm, cf in zip(
        rng.uniform(0.001, 0.999, 50), rng.uniform(0.1, 10, 50), rng.uniform(0.1, 10, 50)
    ):
        assert min_dcf(hull, p_target=p) == min_dcf(tar, non, p)
        assert min_dcf(hull, p_target=p, c_miss=cm, c_fa=cf) == min_dcf(tar, non, p, cm, cf)
        assert min_dcf(hull, p_target=p, c_miss=cm, c_fa=cf) == pytest.approx(
            brute_min_dcf(tar, non, p, cm, cf), rel=1e-12
        )
    assert min_dcf(hull, p_target=0.3, normalize=False) == pytest.approx(
        0.3 * brute_min_dcf(tar, non, 0.3), rel=1e-12
    )


def test_rocch_eer_is_max_over_priors_of_min_bayes_error():
    s, y = scores_and_labels(11, 60, 90)
    hull = ROCCH().fit(s, y)
    h = np.linspace(-8, 8, 20001)
    best = hull.hull_.min_bayes_errors(h).error.max()
    assert best <= hull.eer_ + 1e-15
    assert best == pytest.approx(hull.eer_, abs=1e-3)


def test_rocch_transform_is_the_slope_of_the_segment_by_hand():
    # sorted 0 n, 1 t, 2 n, 3 t: vertices (Pfa, Pmiss) (1,0) (.5,0) (0,.5) (0,1)
    hull = ROCCH().fit([0.0, 1.0, 2.0, 3.0], [0, 1, 0, 1])
    same_llr(hull.p_fa_, [1.0, 0.5, 0.0, 0.0])
    same_llr(hull.p_miss_, [0.0, 0.0, 0.5, 1.0])
    same_llr(hull.thresholds_, [0.0, 1.0, 3.0, np.inf])
    same_llr(hull.n_misses_, [0, 0, 1, 2])
    same_llr(hull.n_false_alarms_, [2, 1, 0, 0])
    same_llr(
        hull.decision_function([-1.0, 0.5, 1.0, 2.5, 3.0, 4.0]),
        [-np.inf, -np.inf, 0.0, 0.0, np.inf, np.inf],
    )
    # PRBEP: half a miss and half a false alarm, precision = recall = 1 - 0.5 / 2
    assert hull.eer_ == 0.25 and hull.prbep_ == 0.75 and hull.auc_ == 0.875


# -- acceptance: bad input ---------------------------------------------------------------------

GOOD_X, GOOD_Y = np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1])


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
@pytest.mark.parametrize(
    "X, y, match",
    [
        ([0.1, np.nan, 0.3, 0.8], GOOD_Y, "NaN"),
        ([0.1, np.inf, 0.3, 0.8], GOOD_Y, "infinity"),
        (GOOD_X, [1, 1, 1, 1], "no non-target"),
        (GOOD_X, [0, 0, 0, 0], "no target"),
        (np.c_[GOOD_X, GOOD_X], GOOD_Y, "one column of scores"),
        (np.zeros((4, 0)), GOOD_Y, "one column of scores"),
        (GOOD_X.reshape(2, 2, 1), GOOD_Y, "dim"),
        (GOOD_X, [0, 1, 2, 1], "only 0/1"),
        (GOOD_X, ["a", "b", "a", "b"], "0/1"),
        (GOOD_X, [0, 1, 1], "inconsistent numbers of samples"),
        (np.array([], dtype=float), [], "0 sample"),
        ([[0.5]], [1], "no non-target"),
        (["a", "b", "c", "d"], GOOD_Y, "could not convert"),
        (GOOD_X + 1j, GOOD_Y, "Complex data not supported"),
        (GOOD_X, None, "requires y to be passed"),
    ],
)
def test_bad_training_input_raises_value_error(estimator, X, y, match):
    est = clone(estimator)
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)
    assert not [k for k in vars(est) if k.endswith("_")]  # nothing half-fitted


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
@pytest.mark.parametrize(
    "X, match",
    [
        ([0.1, np.nan], "NaN"),
        ([0.1, -np.inf], "infinity"),
        (np.ones((3, 2)), "one column of scores"),
        (np.ones((3, 1, 1)), "dim"),
        (np.array([], dtype=float), "0 sample"),
    ],
)
def test_bad_transform_input_raises_value_error(estimator, X, match):
    est = clone(estimator).fit(GOOD_X, GOOD_Y)
    for method in (est.transform, est.decision_function):
        with pytest.raises(ValueError, match=match):
            method(X)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"pseudo_count": -1.0}, "pseudo_count"),
        ({"pseudo_count": np.nan}, "pseudo_count"),
        ({"pseudo_count": np.inf}, "pseudo_count"),
        ({"pseudo_count": True}, "pseudo_count"),
        ({"pseudo_count": "1"}, "pseudo_count"),
        ({"interpolation": "cubic"}, "interpolation"),
    ],
)
def test_bad_parameters_raise_value_error_at_fit(params, match):
    with pytest.raises(ValueError, match=match):
        PAVCalibrator(**params).fit(GOOD_X, GOOD_Y)


def test_sparse_input_is_refused_clearly():
    from scipy import sparse

    with pytest.raises(TypeError, match="dense data is required"):
        PAVCalibrator().fit(sparse.csr_matrix(GOOD_X.reshape(-1, 1)), GOOD_Y)


# -- scikit-learn contract ---------------------------------------------------------------------

# sklearn's generic checks that generate X with several columns (or labels 2, 3, ...). These
# estimators take exactly one score column and 0/1 labels and must refuse anything else with a
# ValueError, so these checks cannot pass. The test below asserts that each of them
# fails for exactly that reason (and would notice if one started to pass); the property each
# one tests is checked on one-column binary data by the test named here.
_REFUSED_BY_DESIGN = {
    "check_fit_score_takes_y": "test_fit_contract",
    "check_estimators_overwrite_params": "test_fit_contract",
    "check_dont_overwrite_parameters": "test_fit_contract",
    "check_estimators_fit_returns_self": "test_fit_contract",
    "check_fit_idempotent": "test_fit_contract",
    "check_fit_check_is_fitted": "test_fit_contract",
    "check_n_features_in": "test_fit_contract",
    "check_n_features_in_after_fitting": "test_fit_contract",
    "check_dict_unchanged": "test_fit_contract",
    "check_positive_only_tag_during_fit": "test_fit_contract",
    "check_readonly_memmap_input": "test_input_containers",
    "check_estimators_dtypes": "test_input_containers",
    "check_dtype_object": "test_input_containers",
    "check_f_contiguous_array_estimator": "test_input_containers",
    "check_transformer_data_not_an_array": "test_input_containers",
    "check_transformer_preserve_dtypes": "test_input_containers",
    "check_fit2d_1feature": "test_input_containers",
    "check_fit2d_predict1d": "test_input_containers (1-D scores are accepted by design)",
    "check_estimators_empty_data_messages": "test_bad_training_input_raises_value_error",
    "check_estimators_nan_inf": "test_bad_training_input_raises_value_error",
    "check_fit2d_1sample": "test_bad_training_input_raises_value_error",
    "check_transformer_general": "test_transform_consistency",
    "check_methods_sample_order_invariance": "test_transform_consistency",
    "check_methods_subset_invariance": "test_transform_consistency",
    "check_pipeline_consistency": "test_pipelines_after_a_one_column_transformer",
    "check_estimators_pickle": "test_joblib_and_pickle_round_trip",
    "check_sample_weights_pandas_series": "test_weighted_pav_contract",
    "check_sample_weights_not_an_array": "test_weighted_pav_contract",
    "check_sample_weights_list": "test_weighted_pav_contract",
    "check_sample_weights_shape": "test_weighted_pav_contract",
    "check_sample_weights_not_overwritten": "test_weighted_pav_contract",
    "check_all_zero_sample_weights_error": "test_weighted_pav_contract",
    "check_sample_weight_equivalence_on_dense_data": "test_weighted_pav_contract",
}
# (check_fit1d passes, though 1-D scores are accepted by design: its labels 0, 1, 2 are refused.)


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_estimator_checks(estimator, check):
    run_check(estimator, check, _REFUSED_BY_DESIGN)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_fit_contract(estimator):
    s, y = scores_and_labels(2)
    est = clone(estimator)
    params = est.get_params()
    with pytest.raises(NotFittedError):
        est.transform(s)
    with pytest.raises(NotFittedError):
        est.get_feature_names_out()
    before = set(vars(est))
    assert est.fit(s, y) is est
    assert est.get_params() == params
    assert all(k.endswith("_") for k in set(vars(est)) - before)
    assert est.n_features_in_ == 1
    out = est.transform(s)
    state = pickle.dumps(vars(est))
    est.decision_function(s)
    assert pickle.dumps(vars(est)) == state  # transforming changes nothing
    same_llr(clone(estimator).fit(s, y).transform(s), out)  # idempotent, deterministic
    same_llr(est.fit(s, y).transform(s), out)
    same_llr(clone(estimator).fit_transform(s, y), out)
    same_llr(est.decision_function(s), out[:, 0])
    assert list(est.get_feature_names_out()) == ["llr"]
    # only the order of the training scores matters, and the step or linear map moves with an
    # increasing affine change of the score scale: scores of magnitude 1e6 are just scores
    big = 1e6 * s - 5e6
    np.testing.assert_allclose(clone(estimator).fit(big, y).transform(big), out, rtol=1e-9)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_input_containers(estimator, tmp_path):
    s, y = scores_and_labels(3)
    ref = clone(estimator).fit(s, y)
    want = ref.transform(s)
    s_copy, y_copy = s.copy(), y.copy()
    variants = [
        (s.reshape(-1, 1), y),
        (s.tolist(), y.tolist()),
        (np.asfortranarray(s.reshape(-1, 1)), y),
        (s.reshape(-1, 1).astype(object), y),
        (s, y.astype(bool)),
        (s, y.astype(float)),
        (s, y.reshape(-1, 1)),  # a column of labels, as sklearn accepts with a warning
    ]
    path = tmp_path / "s.npy"
    np.save(path, s)
    variants.append((np.load(path, mmap_mode="r"), y))  # read-only memory map
    for X, labels in variants:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = clone(estimator).fit(X, labels)
        same_llr(got.transform(X), want)
        same_llr(ref.transform(X), want)
    assert np.array_equal(s, s_copy) and np.array_equal(y, y_copy)  # inputs untouched
    # integer and float32 scores: the same map as their float64 values
    si = np.round(10 * s).astype(np.int64)
    same_llr(
        clone(estimator).fit(si, y).transform(si.astype(np.int32)),
        clone(estimator).fit(si.astype(float), y).transform(si.astype(float)),
    )
    s32 = s.astype(np.float32)
    out32 = clone(estimator).fit(s32, y).transform(s32)
    assert out32.dtype == np.float64
    same_llr(out32, clone(estimator).fit(s32.astype(float), y).transform(s32.astype(float)))


def test_dataframe_column_names_and_pandas_output():
    pd = pytest.importorskip("pandas")
    s, y = scores_and_labels(4)
    df = pd.DataFrame({"score": s})
    cal = PAVCalibrator().fit(df, y)
    assert list(cal.feature_names_in_) == ["score"]
    same_llr(cal.transform(df), PAVCalibrator().fit(s, y).transform(s))
    out = PAVCalibrator().set_output(transform="pandas").fit(df, y).transform(df)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["llr"]
    with pytest.raises(ValueError, match="feature names"):
        cal.transform(pd.DataFrame({"other": s}))
    # after a transformer whose output is a one-column DataFrame
    pipe = make_pipeline(StandardScaler(), PAVCalibrator()).set_output(transform="pandas")
    out = pipe.fit(df, y).transform(df)
    assert list(out.columns) == ["llr"]
    same_llr(out.to_numpy(), PAVCalibrator().fit(s, y).transform(s))


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_transform_consistency(estimator):
    s, y = scores_and_labels(5)
    est = clone(estimator).fit(s, y)
    q = np.linspace(-4, 6, 301)
    full = est.decision_function(q)
    same_llr(np.concatenate([est.decision_function(b) for b in np.array_split(q, 7)]), full)
    perm = np.random.default_rng(0).permutation(q.size)
    same_llr(est.decision_function(q[perm]), full[perm])
    # the fit depends on the trials, not on their order
    order = np.random.default_rng(1).permutation(s.size)
    same_llr(clone(estimator).fit(s[order], y[order]).decision_function(q), full)
    with pytest.raises(ValueError, match="one column"):
        est.transform(np.c_[q, q])


def test_pipelines_after_a_one_column_transformer():
    s, y = scores_and_labels(6, 200, 300)
    # PAV depends only on the order of the scores: after StandardScaler the training output is
    # the same as on the raw scores
    pipe = make_pipeline(StandardScaler(), PAVCalibrator()).fit(s.reshape(-1, 1), y)
    same_llr(pipe.transform(s.reshape(-1, 1)), PAVCalibrator().fit(s, y).transform(s))
    # a fusion-like first step that turns three columns into one
    rng = np.random.default_rng(0)
    X3 = np.c_[s, s + rng.normal(0, 0.3, s.size), rng.normal(0, 1, s.size)]
    fuse = FunctionTransformer(lambda X: X[:, :2].sum(axis=1, keepdims=True))
    pipe = make_pipeline(fuse, PAVCalibrator(interpolation="linear")).fit(X3, y)
    direct = PAVCalibrator(interpolation="linear").fit(X3[:, :2].sum(axis=1), y)
    same_llr(pipe.transform(X3), direct.transform(X3[:, :2].sum(axis=1)))
    same_llr(pipe.decision_function(X3), direct.decision_function(X3[:, :2].sum(axis=1)))
    hull = make_pipeline(StandardScaler(), ROCCH()).fit(s.reshape(-1, 1), y)
    assert hull[-1].eer_ == eer(*from_labels(s, y))


def _neg_cllr(estimator, X, y):
    return -cllr(*from_labels(estimator.decision_function(X), y))


@pytest.mark.filterwarnings("ignore:One or more of the test scores are non-finite")
@pytest.mark.filterwarnings("ignore:invalid value encountered in subtract")
def test_grid_search_and_clone():
    s, y = scores_and_labels(8, 150, 250)
    grid = GridSearchCV(
        PAVCalibrator(),
        {"pseudo_count": [0.0, 0.5, 2.0], "interpolation": ["step", "linear"]},
        scoring=_neg_cllr,
        cv=3,
    ).fit(s.reshape(-1, 1), y)
    assert grid.best_params_["pseudo_count"] > 0  # unbounded PAV scores -inf on held-out folds
    assert np.isfinite(grid.best_score_)
    same_llr(grid.best_estimator_.transform(s), clone(grid.best_estimator_).fit(s, y).transform(s))
    c = clone(PAVCalibrator(pseudo_count=3.0, interpolation="linear"))
    assert c.get_params() == {
        "pseudo_count": 3.0,
        "interpolation": "linear",
        "bounds": None,
        "pos_label": None,
    }


@pytest.mark.parametrize(
    "estimator", ESTIMATORS + [make_pipeline(StandardScaler(), PAVCalibrator())], ids=repr
)
def test_joblib_and_pickle_round_trip(estimator):
    s, y = scores_and_labels(9)
    est = clone(estimator).fit(s.reshape(-1, 1), y)
    q = np.linspace(-5, 7, 97).reshape(-1, 1)
    buf = io.BytesIO()
    joblib.dump(est, buf)
    buf.seek(0)
    loaded = joblib.load(buf)
    same_llr(loaded.transform(q), est.transform(q))
    same_llr(pickle.loads(pickle.dumps(est)).transform(q), est.transform(q))


def test_rocch_transform_needs_a_fit():
    with pytest.raises(NotFittedError):
        ROCCH().transform([[0.0]])


def test_docstring_examples():
    import doctest

    import focal.estimators.calibration as module

    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted >= 10


def test_public_names():
    assert focal.PAVCalibrator is PAVCalibrator
    assert focal.ROCCH is ROCCH and not hasattr(focal.core, "ROCCH")  # one class named ROCCH


# -- weighted PAV (issue 29: PAVCalibrator.fit took no sample_weight) ----------------------------


@pytest.mark.parametrize("pseudo_count", [0.0, 1.0, 0.37])
def test_weighted_pav_is_the_closed_form_of_weighted_trials(pseudo_count):
    """Real weights: the O(T^2) closed form (thesis eqs. 7.47-7.51, C.20) with exact
    rationals, bounding as virtual trials of weight ``pseudo_count`` at both ends.
    """
    from fractions import Fraction

    s, y = scores_and_labels(5)
    w = np.random.default_rng(5).uniform(0.1, 3.0, s.size)
    cal = PAVCalibrator(pseudo_count=pseudo_count).fit(s, y, sample_weight=w)
    weights = [Fraction(v) for v in w]
    if pseudo_count > 0:
        a = Fraction(pseudo_count)
        want = closed_form_pav_llr([*s, s.min() - 1, s.max() + 1], [*y, 1, 0], [*weights, a, a])[
            : s.size
        ]
    else:
        want = closed_form_pav_llr(s, y, weights)
    np.testing.assert_allclose(cal.decision_function(s), want, rtol=1e-12, atol=1e-12)
    assert cal.n_targets_ == 40 and cal.block_w_tar_.sum() == pytest.approx(w[y == 1].sum())


@pytest.mark.parametrize("estimator", ESTIMATORS[:4], ids=repr)
def test_weighted_pav_contract(estimator):
    """What scikit-learn's sample-weight checks test, on one column of scores: integer weights
    are repetitions, zero weights removals, every container of weights is read alike and left
    unchanged, and bad weights are refused.
    """
    import pandas as pd

    s, y = scores_and_labels(6)
    w = np.random.default_rng(6).integers(0, 4, s.size)
    w[:2] = [0, 2]
    got = clone(estimator).fit(s, y, sample_weight=w.astype(float))
    repeated = clone(estimator).fit(np.repeat(s, w), np.repeat(y, w))
    np.testing.assert_allclose(got.transform(s), repeated.transform(s), rtol=1e-12, atol=1e-12)
    ones = clone(estimator).fit(s, y, sample_weight=np.ones(s.size))
    same_llr(ones.transform(s), clone(estimator).fit(s, y).transform(s))
    w_copy = w.copy()
    for weights in (w.tolist(), pd.Series(w), w.astype(np.float32), tuple(w)):
        again = clone(estimator).fit(s, y, sample_weight=weights)
        np.testing.assert_allclose(again.transform(s), got.transform(s), rtol=1e-12)
    assert np.array_equal(w, w_copy)
    with pytest.raises(ValueError, match="entries for 100 trials"):
        clone(estimator).fit(s, y, sample_weight=w[:-1])
    with pytest.raises(ValueError, match="zero total weight"):
        clone(estimator).fit(s, y, sample_weight=np.zeros(s.size))
    with pytest.raises(ValueError, match="target trials zero total weight"):
        clone(estimator).fit(s, y, sample_weight=np.where(y == 1, 0.0, 1.0))
    with pytest.raises(ValueError, match="negative"):
        clone(estimator).fit(s, y, sample_weight=-np.ones(s.size))


def test_weighted_models_round_trip_and_their_weights_are_checked(tmp_path):
    s, y = scores_and_labels(7)
    w = np.random.default_rng(7).uniform(0.0, 2.0, s.size)
    for est in (PAVCalibrator(pseudo_count=0.0), PAVCalibrator()):
        est.fit(s, y, sample_weight=w)
        path = tmp_path / "w.json"
        focal.save(est, path)
        for loaded in (focal.load(path), focal.runtime.load(path)):
            same_llr(loaded.decision_function(s), est.decision_function(s))
    doc = json.loads(path.read_text())
    doc.pop("integrity")
    fitted = doc["model"]["fitted"]  # a billion times lighter targets: far tighter bounds
    fitted["block_w_tar_"] = [v * 1e-9 for v in fitted["block_w_tar_"]]
    payload = {k: v for k, v in doc.items() if k != "sha256"}
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    doc["sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    path.write_text(json.dumps(doc))
    for read in (focal.load, focal.runtime.load):
        with pytest.raises(ValueError, match="llr_ exceeds the bounds"):
            read(path)


# -- bounds: the ELUB clip (Vergeer et al. 2016) --------------------------------------------


def test_pav_elub_bounds_by_hand():
    # targets 0, 1, 3 and non-targets -2, -1, 0.5: unbounded PAV blocks {-2, -1} (-inf),
    # {0, 0.5} (LLR 0), {1, 3} (+inf); targets' LLRs 0, inf, inf, non-targets' -inf, -inf, 0.
    # NBE_up(t) = e^t (#{non >= t} + 1) / 4 + #{tar < t} / 3 = e^t / 4 + 1 / 3 on (0, inf):
    # 1 at t = ln(8/3); NBE_low mirrors it: the bounds are -ln(8/3) and ln(8/3).
    scores = np.array([-2.0, -1.0, 0.5, 0.0, 1.0, 3.0])
    labels = np.array([0, 0, 0, 1, 1, 1])
    cal = PAVCalibrator(pseudo_count=0, bounds="elub").fit(scores, labels)
    np.testing.assert_allclose(cal.bounds_, [-np.log(8 / 3), np.log(8 / 3)], rtol=1e-14)
    np.testing.assert_allclose(
        cal.decision_function([-5.0, 0.2, 9.0]), [-np.log(8 / 3), 0.0, np.log(8 / 3)], rtol=1e-14
    )


def test_pav_bounds_clip_the_unclipped_map():
    from focal.metrics import elub_bounds

    rng = np.random.default_rng(3)
    scores = np.concatenate([rng.normal(1.5, 1, 60), rng.normal(-1.5, 1, 400)])
    labels = np.repeat([1, 0], [60, 400])
    grid = np.linspace(-8, 8, 101)
    for pseudo_count in (0.0, 0.1):
        free = PAVCalibrator(pseudo_count=pseudo_count).fit(scores, labels)
        train = free.decision_function(scores)  # the training trials' calibrated LLRs
        expected = elub_bounds(train[labels == 1], train[labels == 0])
        cal = PAVCalibrator(pseudo_count=pseudo_count, bounds="elub").fit(scores, labels)
        np.testing.assert_array_equal(cal.bounds_, expected)
        np.testing.assert_array_equal(
            cal.decision_function(grid), np.clip(free.decision_function(grid), *expected)
        )
        given = PAVCalibrator(pseudo_count=pseudo_count, bounds=(-1.0, 2.0)).fit(scores, labels)
        np.testing.assert_array_equal(
            given.decision_function(grid), np.clip(free.decision_function(grid), -1.0, 2.0)
        )
    assert np.isinf(free.bounds_).all()


def test_pav_bounds_are_saved_and_applied_by_the_runtime(tmp_path):
    import focal.runtime

    rng = np.random.default_rng(4)
    scores = np.concatenate([rng.normal(1, 1, 50), rng.normal(-1, 1, 200)])
    labels = np.repeat([1, 0], [50, 200])
    cal = PAVCalibrator(pseudo_count=0, bounds="elub").fit(scores, labels)
    path = tmp_path / "pav.json"
    focal.save(cal, path)
    grid = np.linspace(-6, 6, 61)
    assert np.isfinite(cal.decision_function(grid)).all()
    np.testing.assert_array_equal(
        focal.load(path).decision_function(grid), cal.decision_function(grid)
    )
    np.testing.assert_array_equal(
        focal.runtime.load(path).decision_function(grid), cal.decision_function(grid)
    )


def test_pav_elub_refuses_weights_and_bad_bounds():
    scores, labels = np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="sample_weight"):
        PAVCalibrator(bounds="elub").fit(scores, labels, sample_weight=np.ones(4))
    with pytest.raises(ValueError, match="bounds"):
        PAVCalibrator(bounds=(2.0, 1.0)).fit(scores, labels)
