"""Binary measures: Cllr, minCllr, DCF, minDCF, ROCCH-EER, PRBEP, AUC, DET and Bayes error-rates.

References are closed-form cases worked by hand, identities of the thesis, and slow brute-force
implementations written here (every threshold between distinct scores).
"""

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.integrate import trapezoid

from focal.metrics import (
    bayes_error_rates,
    cllr,
    cross_entropy,
    dcf,
    det_curve,
    eer,
    from_labels,
    min_cllr,
    min_dcf,
    prbep,
    rocch,
    rocch_auc,
)
from tests._support.calibration_reference import brute_min_dcf, roc_counts, rocch_eer

LN2 = math.log(2.0)
probabilities = st.floats(0.001, 0.999)
small_sets = st.lists(st.integers(-6, 6), min_size=1, max_size=25)
continuous_sets = st.lists(st.floats(-50, 50), min_size=1, max_size=40)


# -- slow, obviously correct references -------------------------------------------------------
def brute_roc(tar, non):
    """(pmiss, pfa, thresholds) of every threshold: at each distinct score and at +inf."""
    thresholds = np.concatenate([np.unique(np.concatenate([tar, non])), [np.inf]])
    counts = np.array(roc_counts(tar, non), dtype=float).reshape(-1, 2)
    return counts[:, 0] / len(tar), counts[:, 1] / len(non), thresholds


def max_over_priors_of_min_error(tar, non):
    """max_pi min_i pi*Pmiss_i + (1-pi)*Pfa_i (thesis eq. 7.32), exactly."""
    return rocch_eer(list(tar), list(non))


def direct_cross_entropy_bits(tar, non, p):
    """SWS plan eqs. 37-38 written out term by term in plain Python."""
    lp = math.log(p / (1 - p))

    def softplus(x):
        return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))

    c_tar = sum(softplus(-(w + lp)) for w in tar) / len(tar)  # -log sigmoid(llr + logit P)
    c_non = sum(softplus(w + lp) for w in non) / len(non)  # -log sigmoid(-(llr + logit P))
    return (p * c_tar + (1 - p) * c_non) / LN2


# -- hand-worked cases ------------------------------------------------------------------------
def test_cllr_hand_value():
    # LLR +-log 3 on the right side: each trial costs log(1 + 1/3) nats -> log2(4/3) bits
    assert cllr([math.log(3)], [-math.log(3)]) == pytest.approx(math.log2(4 / 3), rel=1e-15)


def test_cross_entropy_hand_value_at_other_prior():
    # p = 1/4, logit p = -log 3: target cost log(1 + exp(0)) = log 2, non-target log(1 + 1/9)
    xe = (0.25 * math.log(2) + 0.75 * math.log(10 / 9)) / LN2
    assert cross_entropy([math.log(3)], [-math.log(3)], 0.25) == pytest.approx(xe, rel=1e-14)
    h = (0.25 * math.log(4) + 0.75 * math.log(4 / 3)) / LN2
    assert cllr([math.log(3)], [-math.log(3)], 0.25) == pytest.approx(xe / h, rel=1e-14)


def test_two_interleaved_targets_and_non_targets():
    # sorted: 0n 1t 2n 3t. PAV blocks [0n] [1t 2n] [3t]; hull vertices (P_miss, P_fa):
    # (0, 1), (0, 1/2), (1/2, 0), (1, 0)
    hull = rocch([1.0, 3.0], [0.0, 2.0])
    np.testing.assert_array_equal(hull.p_miss, [0, 0, 0.5, 1])
    np.testing.assert_array_equal(hull.p_fa, [1, 0.5, 0, 0])
    np.testing.assert_array_equal(hull.thresholds, [0, 1, 3, np.inf])
    np.testing.assert_array_equal(hull.llr, [-np.inf, 0.0, np.inf])
    assert eer(hull) == 0.25  # the segment (0, 1/2)-(1/2, 0) crosses P_miss = P_fa at 1/4
    # misses: 0 -> 1, false alarms: 1 -> 0 along that segment: half a miss of 2 targets,
    # precision = recall = 1.5 / 2
    assert hull.crossing_misses(1, 1) == 0.5
    assert prbep(hull) == 0.75
    assert rocch_auc(hull) == 0.875  # area under (1,1)-(1/2,1)-(0,1/2)-(0,0)
    assert min_dcf(hull, p_target=0.5) == 0.5  # cost 1/4 at the middle vertices, default 1/2
    # minCllr: blocks with LLR -inf (one non-target), 0 (one of each), +inf (one target):
    # half the trials cost log 2 nats at prior 1/2 -> 1/2 bit
    assert min_cllr([1.0, 3.0], [0.0, 2.0]) == pytest.approx(0.5, rel=1e-15)


def test_alternating_scores_have_a_straight_hull():
    hull = rocch([0.0, 2.0], [1.0, 3.0])  # 0t 1n 2t 3n: PAV pools everything, LLR 0
    np.testing.assert_array_equal(hull.p_miss, [0, 1])
    assert eer(hull) == 0.5
    assert prbep(hull) == 0.5  # one miss and one false alarm: precision = recall = 1/2
    assert rocch_auc(hull) == 0.5
    assert min_cllr([0.0, 2.0], [1.0, 3.0]) == 1.0


def test_actual_dcf_hand_value():
    # threshold -logit(0.5) = 0: target -1 missed, non-target 0.5 accepted -> 0.5*0.5 + 0.5*0.5
    assert dcf([-1.0, 2.0], [0.5, -3.0], 0.5) == 1.0
    assert dcf([-1.0, 2.0], [0.5, -3.0], 0.5, normalize=False) == 0.5
    # at P_target = 0.01, C_miss = 10: threshold -logit(0.01) - log(10) = 2.2: both targets of
    # [3, 2] accepted? 2 < 2.2 -> missed; non-targets all rejected
    thr = -math.log(0.01 / 0.99) - math.log(10)
    assert 2.0 < thr < 3.0
    with pytest.warns(UserWarning, match="looks like"):  # non-targets 0.0 and 1.0: labels?
        value = dcf([3.0, 2.0], [0.0, 1.0], 0.01, c_miss=10)
    assert value == pytest.approx((0.01 * 10 * 0.5) / min(0.01 * 10, 0.99))


def test_threshold_ties_accept():
    # an LLR exactly at the Bayes threshold is accepted (thesis 7.3.1: w >= -h)
    assert dcf([0.0], [0.0], 0.5) == 1.0  # target accepted, non-target accepted
    assert dcf([0.0], [-1.0], 0.5) == 0.0


# -- acceptance: closed-form extremes --------------------------------------------------------
@given(st.integers(1, 50), st.integers(1, 50), probabilities)
def test_all_zero_llrs_give_cllr_exactly_one(n_t, n_n, p):
    assert cllr(np.zeros(n_t), np.zeros(n_n), p) == 1.0
    assert min_cllr(np.zeros(n_t), np.zeros(n_n), p) <= 1.0


@given(continuous_sets, continuous_sets, st.floats(0.1, 100), probabilities)
def test_separated_scores_have_zero_minimum_costs(tar, non, gap, p):
    tar = np.array(tar) - min(tar) + max(non) + gap  # every target above every non-target
    non = np.array(non)
    assert min_cllr(tar, non, p) == 0.0
    assert eer(tar, non) == 0.0
    assert min_dcf(tar, non, p) == 0.0
    assert prbep(tar, non) == 1.0
    assert rocch_auc(tar, non) == 1.0


def test_single_target_single_nontarget():
    assert eer([1.0], [0.0]) == 0.0
    assert eer([0.0], [1.0]) == 0.5  # reversed: the hull is the diagonal
    assert eer([0.5], [0.5]) == 0.5  # tied
    assert min_cllr([0.0], [1.0]) == 1.0
    assert min_cllr([1.0], [0.0]) == 0.0
    assert min_dcf([0.0], [1.0], 0.3) == 1.0
    assert cllr([0.0], [0.0], 0.3) == 1.0


def test_exact_at_magnitude_1e6():
    big = 1e6
    assert cllr([big], [-big]) == 0.0
    # a wrong LLR of 1e6 costs 1e6 nats = 1e6 / ln 2 bits
    assert cllr([-big], [big]) == pytest.approx(big / LN2, rel=1e-15)
    # scores that differ only in the last bits of 1e6 are still ordered exactly
    tar = np.array([big + 2.0**-33, big + 2.0**-32])
    non = np.array([big, big + 2.0**-33])
    assert eer(tar, non) == pytest.approx(max_over_priors_of_min_error(tar, non), abs=1e-15)
    assert min_dcf(tar, non, 0.5) == brute_min_dcf(tar, non, 0.5)
    assert dcf([big], [big - 1], 0.5) == 0.5 / 0.5  # both accepted at threshold 0


def test_infinite_llrs():
    inf = math.inf
    assert cllr([inf], [-inf]) == 0.0
    assert cllr([-inf], [-1.0]) == inf
    assert cllr([inf, 1.0], [inf]) == inf
    assert dcf([inf], [-inf], 0.01) == 0.0
    assert min_dcf([inf, 0.0], [-inf, 0.0], 0.5) == pytest.approx(
        brute_min_dcf(np.array([inf, 0.0]), np.array([-inf, 0.0]), 0.5)
    )
    assert min_cllr([inf], [-inf]) == 0.0


# -- acceptance: identities --------------------------------------------------------------------
@given(small_sets, small_sets)
def test_rocch_eer_is_max_over_priors_of_min_bayes_error(tar, non):
    tar, non = np.array(tar, dtype=float), np.array(non, dtype=float)
    expected = float(max_over_priors_of_min_error(tar, non))
    assert eer(tar, non) == pytest.approx(expected, abs=1e-9)


@given(small_sets, small_sets, probabilities, st.floats(0.1, 10), st.floats(0.1, 10))
def test_min_dcf_is_the_minimum_over_all_thresholds(tar, non, p, cm, cf):
    tar, non = np.array(tar, dtype=float), np.array(non, dtype=float)
    assert min_dcf(tar, non, p, cm, cf) == pytest.approx(
        brute_min_dcf(tar, non, p, cm, cf), rel=1e-12, abs=1e-15
    )


@given(continuous_sets, continuous_sets, probabilities, st.floats(0.1, 10), st.floats(0.1, 10))
def test_min_dcf_never_exceeds_actual_dcf(tar, non, p, cm, cf):
    md = min_dcf(tar, non, p, cm, cf)
    assert md <= dcf(tar, non, p, cm, cf) * (1 + 1e-12) + 1e-15
    assert 0.0 <= md <= 1.0 + 1e-15


@given(continuous_sets, continuous_sets, probabilities)
def test_cross_entropy_matches_sws_eqs_37_38(tar, non, p):
    assert cross_entropy(tar, non, p) == pytest.approx(
        direct_cross_entropy_bits(tar, non, p), rel=1e-12, abs=1e-12
    )


@given(continuous_sets, continuous_sets, probabilities, st.floats(0.1, 100), st.floats(0.1, 100))
def test_cross_entropy_at_a_systems_own_effective_prior(tar, non, p, cm, cf):
    # the application (P, C_miss, C_fa) is evaluated at its effective prior (eq. 23)
    from focal import effective_prior

    p_eff = effective_prior(p, cm, cf)
    assume(0.0 < p_eff < 1.0)
    assert cross_entropy(tar, non, p_eff) == pytest.approx(
        direct_cross_entropy_bits(tar, non, p_eff), rel=1e-11, abs=1e-12
    )


@given(continuous_sets, continuous_sets, probabilities)
def test_min_cllr_bounds(tar, non, p):
    m = min_cllr(tar, non, p)
    assert 0.0 <= m <= 1.0 + 1e-12
    # PAV is optimal among monotone maps, and the identity is one of them
    assert m <= cllr(tar, non, p) * (1 + 1e-12) + 1e-12


@given(continuous_sets, continuous_sets, st.floats(0.01, 10), st.floats(-5, 5))
def test_threshold_measures_depend_only_on_the_order(tar, non, scale, shift):
    tar, non = np.array(tar), np.array(non)
    a, b = rocch(tar, non), rocch(scale * tar + shift, scale * non + shift)
    # an increasing affine map can merge scores that were distinct (rounding): require none did
    assume(
        np.unique(scale * np.concatenate([tar, non]) + shift).size
        == np.unique(np.concatenate([tar, non])).size
    )
    assert eer(a) == eer(b)
    assert prbep(a) == prbep(b)
    assert min_cllr(a) == min_cllr(b)
    np.testing.assert_array_equal(a.p_miss, b.p_miss)


@given(continuous_sets, continuous_sets)
def test_swapping_classes_and_negating_mirrors_the_roc(tar, non):
    tar, non = np.array(tar), np.array(non)
    assert eer(tar, non) == eer(-non, -tar)
    assert rocch_auc(tar, non) == rocch_auc(-non, -tar)


@given(small_sets, small_sets)
def test_auc_bounds(tar, non):
    tar, non = np.array(tar, dtype=float), np.array(non, dtype=float)
    # Mann-Whitney AUC (ties count 1/2) is the area under the steppy ROC; the hull is above it
    mw = np.mean((tar[:, None] > non[None, :]) + 0.5 * (tar[:, None] == non[None, :]))
    auc = rocch_auc(tar, non)
    assert mw - 1e-12 <= auc <= 1.0
    assert auc >= 0.5


@given(small_sets, small_sets)
def test_segment_llrs_are_hull_slopes(tar, non):
    hull = rocch(np.array(tar, dtype=float), np.array(non, dtype=float))
    with np.errstate(divide="ignore"):
        slope_llr = np.log(np.diff(hull.p_miss) / (hull.p_fa[:-1] - hull.p_fa[1:]))
    np.testing.assert_allclose(hull.llr, slope_llr, rtol=1e-12, atol=1e-12)
    assert np.all(hull.llr[1:] > hull.llr[:-1])  # convex hull: strictly increasing LLRs


@given(small_sets, small_sets)
def test_det_curve_is_the_empirical_roc(tar, non):
    tar, non = np.array(tar, dtype=float), np.array(non, dtype=float)
    curve = det_curve(tar, non)
    pmiss, pfa, thresholds = brute_roc(tar, non)
    # every returned point is an empirical ROC point at the same threshold ...
    brute = {t: (m, f) for m, f, t in zip(pmiss, pfa, thresholds)}
    for m, f, t in zip(curve.p_miss, curve.p_fa, curve.thresholds):
        assert brute[t] == pytest.approx((m, f), abs=1e-15)
    # ... and every empirical ROC point lies on a segment of the returned polyline
    m0, f0 = curve.p_miss[:-1], curve.p_fa[:-1]
    m1, f1 = curve.p_miss[1:], curve.p_fa[1:]
    for m, f in zip(pmiss, pfa):
        cross = (m1 - m0) * (f - f0) - (f1 - f0) * (m - m0)
        inside = (m0 - 1e-12 <= m) & (m <= m1 + 1e-12) & (f1 - 1e-12 <= f) & (f <= f0 + 1e-12)
        assert np.any(inside & (np.abs(cross) < 1e-12))
    hull = det_curve(tar, non, convex_hull=True)
    np.testing.assert_array_equal(hull.p_miss, rocch(tar, non).p_miss)


# -- Bayes error-rate curves (thesis 7.6.1, APE identities 7.7.4) ----------------------------
@given(continuous_sets, continuous_sets, st.lists(st.floats(-8, 8), min_size=1, max_size=20))
def test_bayes_error_rates_match_direct_computation(tar, non, plo):
    tar, non, plo = np.array(tar), np.array(non), np.array(plo)
    res = bayes_error_rates(tar, non, plo)
    for i, h in enumerate(plo):
        p = 1 / (1 + math.exp(-h))
        pm = np.mean(tar < -h)
        pf = np.mean(non >= -h)
        assert res.actual[i] == pytest.approx(p * pm + (1 - p) * pf, rel=1e-12, abs=1e-15)
        brute = brute_min_dcf(tar, non, p) * min(p, 1 - p)
        assert res.minimum[i] == pytest.approx(brute, rel=1e-12, abs=1e-15)
        assert res.minimum[i] <= res.actual[i] + 1e-15
        assert res.minimum_normalized[i] <= 1 + 1e-12
    assert np.all(res.min_n_false_alarms == np.round(res.min_p_fa * non.size))


def test_ape_areas_are_cllr_and_min_cllr():
    # thesis 7.7.4: the area under the actual Bayes error-rate curve over the prior log-odds is
    # proportional to Cllr and that under the minimum curve to minCllr. With E_err = p P_miss +
    # (1 - p) P_fa, a target LLR w contributes integral_{h < -w} sigmoid(h) dh = log(1 + e^-w),
    # twice its log cost at prior 1/2, so each area is 2 ln 2 times the Cllr in bits (the default
    # system checks it: integral of min(p, 1 - p) dh = 2 ln 2).
    rng = np.random.default_rng(0)
    tar, non = rng.normal(1.5, 1.2, 400), rng.normal(-1.0, 1.0, 600)
    h = np.linspace(-40, 40, 400_001)
    res = bayes_error_rates(tar, non, h)
    area_act = trapezoid(res.actual, h)
    area_min = trapezoid(res.minimum, h)
    assert area_act == pytest.approx(2 * LN2 * cllr(tar, non), rel=1e-3)
    assert area_min == pytest.approx(2 * LN2 * min_cllr(tar, non), rel=1e-3)
    assert trapezoid(res.default, h) == pytest.approx(2 * LN2, rel=1e-6)
    # and the maximum of the minimum curve is the ROCCH-EER (eq. 7.32)
    assert res.minimum.max() == pytest.approx(eer(tar, non), rel=1e-4)


# -- input validation -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "func",
    [
        cllr,
        min_cllr,
        eer,
        cross_entropy,
        lambda t, n: dcf(t, n, 0.1),
        lambda t, n: min_dcf(t, n, 0.1),
    ],
)
def test_nan_scores_are_named(func):
    with pytest.raises(ValueError, match="tar.*NaN"):
        func([1.0, np.nan], [0.0])
    with pytest.raises(ValueError, match="non.*NaN"):
        func([1.0], [np.nan])


@pytest.mark.parametrize("func", [cllr, min_cllr, eer, lambda t, n: dcf(t, n, 0.1)])
def test_empty_class_is_an_error(func):
    with pytest.raises(ValueError, match="tar is empty"):
        func([], [0.0])
    with pytest.raises(ValueError, match="non is empty"):
        func([1.0], [])


@pytest.mark.parametrize("p", [0.0, 1.0, -1.0, 2.0, np.nan])
def test_prior_outside_open_interval(p):
    with pytest.raises(ValueError, match="p_target"):
        cllr([1.0], [0.0], p)
    with pytest.raises(ValueError, match="p_target"):
        min_dcf([1.0], [0.0], p)


def test_from_labels_checks_labels_and_lengths():
    tar, non = from_labels([0.5, 1.0, -2.0], [True, False, False])
    np.testing.assert_array_equal(tar, [0.5])
    np.testing.assert_array_equal(non, [1.0, -2.0])
    with pytest.raises(ValueError, match="labels must contain only 0/1.*2"):
        from_labels([0.5, 1.0], [1, 2])
    with pytest.raises(ValueError, match="different lengths"):
        from_labels([0.5, 1.0], [1, 0, 1])
    with pytest.raises(ValueError, match="no non-target"):
        from_labels([0.5, 1.0], [1, 1])
    with pytest.raises(ValueError, match="no target"):
        from_labels([0.5, 1.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="labels must contain only 0/1.*'nontarget', 'target'"):
        from_labels([0.5, 1.0], ["target", "nontarget"])
    tar, non = from_labels([0.5, 1.0, 2.0], ["genuine", "impostor", "genuine"], pos_label="genuine")
    np.testing.assert_array_equal(tar, [0.5, 2.0])
    np.testing.assert_array_equal(non, [1.0])
    with pytest.raises(ValueError, match="pos_label='target' is not among"):
        from_labels([0.5, 1.0], ["genuine", "impostor"], pos_label="target")
    with pytest.raises(ValueError, match="two labels"):
        from_labels([0.5, 1.0, 2.0], ["a", "b", "c"], pos_label="a")


def test_wrong_shapes_and_types():
    with pytest.raises(ValueError, match="tar must be 1-D"):
        cllr([[1.0, 2.0]], [0.0])
    with pytest.raises(ValueError, match="non must be an array of real numbers"):
        cllr([1.0], ["a"])


def test_inputs_are_not_modified():
    tar = np.array([3.0, 1.0, 2.0])
    non = np.array([0.5, -1.0])
    before = tar.copy(), non.copy()
    rocch(tar, non), cllr(tar, non), dcf(tar, non, 0.1), bayes_error_rates(tar, non, [0.0])
    np.testing.assert_array_equal(tar, before[0])
    np.testing.assert_array_equal(non, before[1])


# -- one sort shared by several measures ------------------------------------------------------
@given(continuous_sets, continuous_sets, probabilities)
def test_binary_scores_and_hull_give_the_values_of_the_arrays(tar, non, p):
    from focal.metrics import BinaryScores, calibration_report

    scores = BinaryScores(tar, non)
    hull = rocch(tar, non)
    for obj in (scores, hull):
        # sorted trials: the sums may differ from the input order's in the last bits
        assert cllr(obj, p_target=p) == pytest.approx(cllr(tar, non, p), rel=1e-12, abs=1e-15)
        assert cross_entropy(obj, p_target=p) == pytest.approx(
            cross_entropy(tar, non, p), rel=1e-12, abs=1e-15
        )
        assert min_cllr(obj, p_target=p) == min_cllr(tar, non, p)
        assert eer(obj) == eer(tar, non)
        assert dcf(obj, p_target=p, c_miss=2.0, c_fa=0.5) == dcf(tar, non, p, 2.0, 0.5)
        assert min_dcf(obj, p_target=p, c_miss=2.0, c_fa=0.5) == min_dcf(tar, non, p, 2.0, 0.5)
        np.testing.assert_array_equal(det_curve(obj).p_miss, det_curve(tar, non).p_miss)
        h = np.linspace(-5, 5, 7)
        np.testing.assert_array_equal(
            bayes_error_rates(obj, prior_log_odds=h).actual,
            bayes_error_rates(tar, non, h).actual,
        )
    assert (
        calibration_report(scores, operating_points=[p]).to_dict()
        == calibration_report(tar, non, [p]).to_dict()
    )
