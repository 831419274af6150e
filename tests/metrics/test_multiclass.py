"""Multiclass measures: C_mce, multiclass Cllr, the Albayzin criteria, detection LLRs, CAVG and
its sweep, pairwise and subset analyses.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp, softmax

from focal.metrics import (
    affine_calibration,
    albayzin_measures,
    albayzin_prior,
    cavg,
    cavg_sweep,
    cllr,
    detection_analysis,
    detection_llrs,
    eer,
    min_cllr,
    multiclass_cllr,
    multiclass_cross_entropy,
    pairwise_analysis,
    subset_analysis,
)
from tests._support.multiclass import make_trials


def direct_cavg(llh, y, p_target=0.5):
    """CAVG by eq. 8.3 literally: applications k, priors pi_ik (eq. 8.1 / 8.28), zero-one costs
    (eq. 8.2), and each application's Bayes decision from its own posterior.
    """
    n, N = llh.shape
    total = 0.0
    for k in range(N):
        pi = np.where(np.arange(N) == k, p_target, (1 - p_target) / (N - 1))
        post = softmax(llh + np.log(pi), axis=1)[:, k]  # P(target k | l, pi_k)
        accept = post >= 0.5  # Bayes decision, 0-1 costs
        for i in range(N):
            trials = np.flatnonzero(y == i)
            errors = [(not accept[t]) if i == k else accept[t] for t in trials]
            total += pi[i] * np.mean(errors)
    return total / N


# ------------------------------------------------------------------- cross-entropy and Cllr


def test_uninformative_system_scores_prior_entropy():
    y = np.array([0, 1, 2, 3, 1, 2])
    assert multiclass_cross_entropy(np.zeros((6, 4)), y) == pytest.approx(np.log(4), rel=1e-15)
    assert multiclass_cllr(np.full((6, 4), 3.3), y) == pytest.approx(2.0, rel=1e-15)  # log2 4
    assert multiclass_cllr(np.zeros((6, 4)), y, [0.1, 0.2, 0.3, 0.4], normalize=True) == 1.0


def test_two_class_cllr_equals_binary_cllr_of_the_llr():
    rng = np.random.default_rng(0)
    llh, y = make_trials(500, 2, rng)
    llr = llh[:, 0] - llh[:, 1]
    tar, non = llr[y == 0], llr[y == 1]
    assert multiclass_cllr(llh, y) == pytest.approx(cllr(tar, non), rel=1e-13)
    assert multiclass_cllr(llh, y, [0.2, 0.8], normalize=True) == pytest.approx(
        cllr(tar, non, 0.2), rel=1e-13
    )


def test_zero_prior_class_and_its_trials_are_ignored():
    rng = np.random.default_rng(1)
    llh, y = make_trials(300, 4, rng)
    prior = np.array([0.3, 0.0, 0.3, 0.4])
    keep = y != 1
    sub = llh[keep][:, [0, 2, 3]]
    sub_y = np.searchsorted([0, 2, 3], y[keep])
    assert multiclass_cross_entropy(llh, y, prior) == pytest.approx(
        multiclass_cross_entropy(sub, sub_y, prior[[0, 2, 3]]), rel=1e-14
    )
    # the ignored column may hold anything
    changed = llh.copy()
    changed[:, 1] = 1e9
    assert multiclass_cross_entropy(changed, y, prior) == multiclass_cross_entropy(llh, y, prior)


def test_cross_entropy_by_direct_formula():
    rng = np.random.default_rng(2)
    llh, y = make_trials(200, 3, rng)
    prior = np.array([0.5, 0.3, 0.2])
    post = llh + np.log(prior)
    post -= logsumexp(post, axis=1, keepdims=True)
    ref = sum(prior[i] * -post[y == i, i].mean() for i in range(3))
    assert multiclass_cross_entropy(llh, y, prior) == pytest.approx(ref, rel=1e-13)


@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(labels=[0, 1, 3]), "0..2"),
        (dict(prior=[0.5, 0.5]), "3 probabilities"),
        (dict(prior=[0.5, 0.5, 0.5]), "sum to 1"),
        (dict(labels=[0, 1, 1]), "no trials"),
        (dict(llh=[[0, np.nan, 0], [0, 0, 0], [1, 1, 1]]), "non-finite"),
    ],
)
def test_bad_input_raises(bad, match):
    args = dict(llh=np.zeros((3, 3)), labels=[0, 1, 2], prior=None)
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        multiclass_cross_entropy(args["llh"], args["labels"], args["prior"])


# ------------------------------------------------------------------------------- Albayzin


def test_albayzin_prior_eq2():
    assert np.array_equal(albayzin_prior(7), np.r_[np.full(6, 1 / 6), 0.0])
    assert np.allclose(albayzin_prior(5, open_set=True), 0.2)
    with pytest.raises(ValueError, match="n \\+ 1 >= 3"):
        albayzin_prior(2)


def test_albayzin_uninformative_system():
    y = np.array([0, 1, 2, 3, 4, 5, 6, 6, 0])
    m = albayzin_measures(np.zeros((9, 7)), y)  # closed set: OOS trials ignored
    assert m.c_mce == m.c_def == pytest.approx(np.log(6), rel=1e-15)
    assert m.f_act == 1.0 and m.f_def == pytest.approx(5.0)
    assert m.c_min <= m.c_def and m.f_cal == 0.0
    m = albayzin_measures(np.zeros((9, 7)), y, open_set=True)
    assert m.c_mce == m.c_def == pytest.approx(np.log(7), rel=1e-15)


def test_albayzin_closed_set_ignores_oos_trials_and_column():
    rng = np.random.default_rng(3)
    llh, y = make_trials(400, 5, rng)
    m = albayzin_measures(llh, y)
    keep = y < 4
    assert m.c_mce == pytest.approx(multiclass_cross_entropy(llh[keep, :4], y[keep]), rel=1e-14)
    assert m.beta[4] == 0.0


# scales whose log-likelihood spread is subnormal are refused by the solver (see below)
_SCALES = st.one_of(st.just(0.0), st.floats(1e-3, 6.0), st.floats(-3.0, -1e-3))


@settings(max_examples=40)
@given(seed=st.integers(0, 10**6), scale=_SCALES, open_set=st.booleans())
def test_albayzin_identities(seed, scale, open_set):
    rng = np.random.default_rng(seed)
    llh, y = make_trials(60, 4, rng, sep=rng.uniform(0, 3), scale=scale)
    m = albayzin_measures(llh, y, open_set=open_set)
    c = albayzin_measures(llh, y, open_set=open_set, nonnegative_alpha=True)
    assert m.c_min <= m.c_def and m.c_min <= m.c_mce
    assert m.f_cal >= 0 and 0 <= m.f_dis <= 1
    assert c.alpha >= 0 and m.c_min <= c.c_min <= c.c_def
    if m.alpha >= 0:  # the constraint is inactive: the same numbers
        assert c.c_min == m.c_min and c.alpha == m.alpha
    assert m.f_act == pytest.approx((1 + m.f_cal) * m.f_dis, rel=1e-10, abs=1e-12)
    assert m.f_act == pytest.approx(np.expm1(m.c_mce) / np.expm1(m.c_def), rel=1e-12)


def test_subnormal_log_likelihood_spreads_are_refused():
    """C_min needs a scale of the order of 1/spread, which overflows: a clear error, not a
    number (the solver's spread check).
    """
    rng = np.random.default_rng(0)
    llh, y = make_trials(60, 4, rng, scale=2.2e-313)
    with pytest.raises(ValueError, match="rescale"):
        albayzin_measures(llh, y)


def test_affine_calibration_undoes_a_scaling():
    """Scores 2.6x overconfident (the paper's factor 0.38 undone): the best alpha is ~1/2.6."""
    rng = np.random.default_rng(4)
    y = rng.integers(0, 3, 20000)
    means = np.eye(3) * 2.0
    llh = means[y] + rng.normal(size=(20000, 3))  # Gaussian, unit variance, equal cov:
    llh = 2.0 * llh - 0.0  # exact log-likelihoods are 2 * mean . x
    alpha, beta, c_min = affine_calibration(2.6 * llh, y)
    assert alpha * 2.6 == pytest.approx(1.0, abs=0.03)
    assert c_min < multiclass_cross_entropy(2.6 * llh, y)


def test_anti_informative_system_is_clamped_to_alpha_zero_when_asked():
    """Thesis 8.4.2: alpha >= 0 makes a sign-inverted system the default one; the plan's
    unconstrained alpha (the default) flips it back: the same C_min as the system itself.
    """
    rng = np.random.default_rng(5)
    llh, y = make_trials(300, 3, rng, sep=3.0)
    a_free, b_free, c_free = affine_calibration(-llh, y)
    a_own, b_own, c_own = affine_calibration(llh, y)
    assert a_own > 0 and a_free == pytest.approx(-a_own, rel=1e-9)
    assert c_free == pytest.approx(c_own, rel=1e-12)
    alpha, beta, c_min = affine_calibration(-llh, y, nonnegative_alpha=True)
    assert alpha == 0.0 and np.all(beta == 0)
    assert c_min == pytest.approx(np.log(3), rel=1e-15)


# ------------------------------------------------------------------------- detection LLRs


def test_detection_llrs_eq9():
    rng = np.random.default_rng(6)
    llh, _ = make_trials(300, 4, rng, scale=5.0)
    for prior in (None, np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.5, 0.0, 0.5, 0.0])):
        p = np.full(4, 0.25) if prior is None else prior
        lam = detection_llrs(llh, prior)
        for t in range(4):
            rest = [i for i in range(4) if i != t and p[i] > 0]
            ref = -logsumexp(-(llh[:, [t]] - llh[:, rest]), b=p[rest] / (1 - p[t]), axis=1)
            np.testing.assert_allclose(lam[:, t], ref, rtol=1e-12, atol=1e-12)


def test_detection_llrs_exact_for_constant_rows_and_huge_values():
    assert np.array_equal(
        detection_llrs(np.full((3, 5), -2.7), [0.1, 0.1, 0.2, 0.2, 0.4]), np.zeros((3, 5))
    )
    lam = detection_llrs(np.array([[1e6, 0.0, -1e6]]))
    # vs the rest with flat non-target weights 1/2: log(e^1e6 / ((e^0 + e^-1e6)/2)) = 1e6 + log 2
    np.testing.assert_allclose(lam[0], [1e6 + np.log(2), -1e6 + np.log(2), -2e6 + np.log(2)])


def test_detection_analysis_uses_binary_measures():
    rng = np.random.default_rng(7)
    llh, y = make_trials(400, 3, rng)
    res = detection_analysis(llh, y)
    lam = detection_llrs(llh)
    for t in range(3):
        tar, non = lam[y == t, t], lam[y != t, t]
        assert res.cllr[t] == pytest.approx(cllr(tar, non))
        assert res.min_cllr[t] == pytest.approx(min_cllr(tar, non))
        assert res.eer[t] == pytest.approx(eer(tar, non))


# -------------------------------------------------------------------------------------- CAVG


@pytest.mark.parametrize("N", [2, 3, 6])
@pytest.mark.parametrize("p_target", [0.5, 0.2, 0.9])
def test_cavg_equals_direct_eq_8_3(N, p_target):
    rng = np.random.default_rng(8 + N)
    llh, y = make_trials(300, N, rng)
    assert cavg(llh, y, p_target=p_target) == pytest.approx(
        direct_cavg(llh, y, p_target), abs=1e-15
    )


def test_cavg_worked_cases():
    y = np.array([0, 1, 2, 2])
    assert cavg(np.zeros((4, 3)), y) == 0.5  # all accepted: every false alarm, no miss
    accept_none = np.zeros((4, 3), dtype=bool)
    assert cavg(None, y, decisions=accept_none) == 0.5
    perfect = np.eye(3, dtype=bool)[y]
    assert cavg(None, y, decisions=perfect) == 0.0
    worst = ~perfect
    assert cavg(None, y, decisions=worst) == 1.0


@settings(max_examples=40)
@given(seed=st.integers(0, 10**6), N=st.integers(2, 6), scale=st.floats(-20, 20))
def test_cavg_in_unit_interval(seed, N, scale):
    rng = np.random.default_rng(seed)
    llh, y = make_trials(40, N, rng, scale=scale)
    c = cavg(llh, y)
    assert 0.0 <= c <= 1.0
    d = rng.integers(0, 2, size=(40, N))
    assert 0.0 <= cavg(None, y, decisions=d) <= 1.0


def test_cavg_bad_input():
    with pytest.raises(ValueError, match="no trials"):
        cavg(np.zeros((3, 3)), [0, 0, 1])
    with pytest.raises(ValueError, match="0/1"):
        cavg(None, [0, 1], decisions=[[0, 2], [1, 0]])
    with pytest.raises(ValueError, match="shape"):
        cavg(np.zeros((2, 2)), [0, 1], decisions=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="llh"):
        cavg(None, [0, 1])


def test_cavg_sweep_matches_cavg_at_every_prior():
    rng = np.random.default_rng(9)
    llh, y = make_trials(300, 4, rng, scale=2.0)
    p = np.array([0.01, 0.2, 0.5, 0.77, 0.99])
    sw = cavg_sweep(llh, y, p_targets=p)
    for j, pj in enumerate(p):
        assert sw.actual[j] == pytest.approx(direct_cavg(llh, y, pj), abs=1e-14)
        rec = sw.alpha * llh + sw.beta
        assert sw.recalibrated[j] == pytest.approx(direct_cavg(rec, y, pj), abs=1e-14)
    assert np.all(sw.actual_normalized >= 0)
    default = cavg_sweep(llh, y, recalibrated=False)
    assert default.p_target.size == 201 and default.recalibrated is None


# ------------------------------------------------------------------------------ pairwise


def test_pairwise_analysis_matches_binary_measures():
    rng = np.random.default_rng(10)
    llh, y = make_trials(300, 4, rng)
    res = pairwise_analysis(llh, y)
    assert res.pairs.shape == (6, 2)
    for (i, j), c, mc in zip(res.pairs, res.cllr, res.min_cllr):
        tar = llh[y == i, i] - llh[y == i, j]
        non = llh[y == j, i] - llh[y == j, j]
        assert c == pytest.approx(cllr(tar, non))
        assert mc == pytest.approx(min_cllr(tar, non))
    M = res.matrix("min_cllr")
    assert np.allclose(M, M.T, equal_nan=True) and np.isnan(np.diag(M)).all()


def test_recalibration_keeps_pairwise_min_cllr_and_lowers_cmce():
    """Brümmer & van Leeuwen sec. 4.2: the affine calibration leaves every pairwise minCllr
    unchanged; on overconfident scores (x 2.6) it lowers C_mce.
    """
    from focal import MulticlassFusion

    rng = np.random.default_rng(11)
    y = rng.integers(0, 5, 3000)
    good = np.eye(5)[y] * 1.5 + rng.normal(size=(3000, 5))
    over = 2.6 * good
    cal = MulticlassFusion(mode="calibration").fit(over, y)
    after = cal.transform(over)
    before_pairs, after_pairs = pairwise_analysis(over, y), pairwise_analysis(after, y)
    np.testing.assert_allclose(after_pairs.min_cllr, before_pairs.min_cllr, rtol=1e-12)
    assert multiclass_cross_entropy(after, y) < multiclass_cross_entropy(over, y) - 0.05
    assert np.all(after_pairs.cllr < before_pairs.cllr)
    assert cal.coef_[0] * 2.6 == pytest.approx(1.5, rel=0.1)  # the exact llh are 1.5 * x


# ------------------------------------------------------------------------------- subsets


def _brute_force(llh, y, fn):
    N = llh.shape[1]
    out = {}
    for g in range(1, 1 << N):
        cols = [i for i in range(N) if g >> i & 1]
        if len(cols) < 2:
            continue
        rows = np.isin(y, cols)
        out[g] = fn(llh[rows][:, cols], np.searchsorted(cols, y[rows]))
    return out


@pytest.mark.parametrize("wide", [False, True])
def test_subset_analysis_against_brute_force(wide):
    rng = np.random.default_rng(12)
    llh, y = make_trials(250, 5, rng)
    if wide:
        llh[::3] *= 1e4  # rows of huge dynamic range take the exact path
    cases = {
        "cavg": lambda L, yy: direct_cavg(L, yy),
        "multiclass_cross_entropy": multiclass_cross_entropy,
        "multiclass_cllr": multiclass_cllr,
    }
    for measure, fn in cases.items():
        res = subset_analysis(llh, y, measure)
        ref = _brute_force(llh, y, fn)
        assert res.values.size == len(ref) == 2**5 - 5 - 1
        for mask, size, value in zip(res.masks, res.sizes, res.values):
            g = int(np.sum(1 << np.flatnonzero(mask)))
            assert size == mask.sum()
            assert value == pytest.approx(ref[g], rel=1e-12, abs=1e-14)


def test_subset_analysis_callable_and_count():
    rng = np.random.default_rng(13)
    llh, y = make_trials(40, 4, rng)
    res = subset_analysis(llh, y, measure=lambda L, yy: float(L.shape[1]))
    np.testing.assert_array_equal(res.values, res.sizes)
    llh14, y14 = make_trials(60, 14, rng)
    assert subset_analysis(llh14, y14).values.size == 16369  # thesis sec. 8.3.3
    with pytest.raises(ValueError, match="measure"):
        subset_analysis(llh, y, measure="eer")
