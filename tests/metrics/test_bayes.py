"""Bayes decisions and empirical Bayes risk for general cost matrices: DCF, CAVG and refer
options as special cases, checked against closed forms and slow independent implementations.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import softmax

from focal.metrics import (
    affine_calibration,
    bayes_decisions,
    bayes_risk,
    bayes_risk_analysis,
    cavg,
    dcf,
    default_bayes_risk,
    detection_cost_matrix,
    lre_cost_matrix,
    min_dcf,
    misclassification_cost_matrix,
)
from tests._support.multiclass import make_trials


def _binary(rng, n_tar=200, n_non=1500):
    tar = rng.normal(1.5, 2.0, n_tar)
    non = rng.normal(-1.0, 2.0, n_non)
    return tar, non, np.r_[tar, non], np.r_[np.ones(n_tar), np.zeros(n_non)].astype(int)


def _multiclass(rng, n, N, sep=1.5, scale=1.0):
    return make_trials(n, N, rng, sep=sep, scale=scale)


# ------------------------------------------------------------------------- binary = DCF


@pytest.mark.parametrize(
    "p, cm, cf", [(0.5, 1, 1), (0.01, 1, 1), (0.001, 1, 1), (0.2, 10, 1), (0.9, 1, 3)]
)
def test_binary_cost_matrix_is_dcf_and_min_dcf(p, cm, cf):
    rng = np.random.default_rng(1)
    tar, non, llr, y = _binary(rng)
    thr = -(np.log(p / (1 - p)) + (np.log(cm) - np.log(cf)))
    # trials exactly at the Bayes threshold (accepted by dcf) and infinite LLRs
    tar = np.r_[tar, thr, np.inf, -np.inf]
    non = np.r_[non, thr, np.inf, -np.inf]
    llr = np.r_[tar, non]
    y = np.r_[np.ones(tar.size), np.zeros(non.size)].astype(int)
    C = detection_cost_matrix(cm, cf)
    assert bayes_risk(llr, y, p, C) == dcf(tar, non, p, cm, cf)
    assert bayes_risk(llr, y, p, C, normalize=False) == dcf(tar, non, p, cm, cf, normalize=False)
    a = bayes_risk_analysis(llr, y, p, C)
    assert a.actual == dcf(tar, non, p, cm, cf)
    assert a.minimum == pytest.approx(min_dcf(tar, non, p, cm, cf), rel=1e-13, abs=1e-15)
    # the same application written with a prior vector (non-target, target): its log-odds
    # log p - log(1 - p) may differ from logit(p) in the last bit, so away from the threshold
    keep = np.abs(llr - thr) > 1e-9
    t2, n2 = llr[keep & (y == 1)], llr[keep & (y == 0)]
    assert bayes_risk(llr[keep], y[keep], [1 - p, p], C) == pytest.approx(
        dcf(t2, n2, p, cm, cf), rel=1e-13
    )


def test_binary_decisions_follow_the_bayes_threshold():
    llr = np.array([-np.inf, -1.0, 0.0, 1.0, np.inf])
    d = bayes_decisions(llr, 0.5, detection_cost_matrix())
    assert d.tolist() == [0, 0, 1, 1, 1]  # accept iff llr >= 0


def test_refer_option_hand_computed():
    """Refer costs 0.3 (flat prior, unit errors): reject below log(3/7), refer up to log(7/3),
    accept above. Targets at (2, 0, -3): accept, refer, miss; non-targets at (-2, 1, 0.5):
    reject, false alarm, refer.
    """
    C = detection_cost_matrix(1.0, 1.0, c_refer=0.3)
    llr = [2.0, 0.0, -3.0, -2.0, 1.0, 0.5]
    y = [1, 1, 1, 0, 0, 0]
    assert bayes_decisions(llr, 0.5, C).tolist() == [1, 2, 0, 0, 1, 2]
    expected = 0.5 * (0 + 0.3 + 1) / 3 + 0.5 * (0 + 1 + 0.3) / 3
    assert bayes_risk(llr, y, 0.5, C, normalize=False) == pytest.approx(expected, rel=1e-15)
    assert default_bayes_risk(0.5, C) == pytest.approx(0.3, rel=1e-15)  # refer everything
    assert bayes_risk(llr, y, 0.5, C) == pytest.approx(expected / 0.3, rel=1e-15)
    # at p_target = 0.1 and C_miss 5: expected costs reject 5q, accept 1-q, refer 0.3
    C2 = detection_cost_matrix(5.0, 1.0, c_refer=0.3)
    # q = sigmoid(llr + logit 0.1); reject iff 5q < 0.3 (q < 0.06), accept iff 1 - q < 0.3
    q = 1 / (1 + np.exp(-(np.array(llr) + np.log(1 / 9))))
    hand = np.where(5 * q < 0.3, 0, np.where(1 - q <= 0.3, 1, 2))
    assert bayes_decisions(llr, 0.1, C2).tolist() == hand.tolist()
    cost = C2[hand, np.array(y)]
    exp2 = 0.1 * cost[:3].mean() + 0.9 * cost[3:].mean()
    assert bayes_risk(llr, y, 0.1, C2, normalize=False) == pytest.approx(exp2, rel=1e-15)


def _slow_monotone_minimum(llr, y, p, C, order):
    """Every pair of thresholds between distinct scores, O(n^2) rules (for 3 decisions)."""
    cuts = np.r_[-np.inf, np.unique(llr) + 1e-9, np.inf]
    w = np.where(y == 1, p / (y == 1).sum(), (1 - p) / (y == 0).sum())
    best = np.inf
    for i, t1 in enumerate(cuts):
        for t2 in cuts[i:]:
            d = np.where(llr < t1, order[0], np.where(llr < t2, order[1], order[2]))
            best = min(best, float(w @ C[d, y]))
    return best


def test_refer_minimum_is_exact_over_threshold_pairs():
    rng = np.random.default_rng(2)
    tar, non, llr, y = _binary(rng, 25, 40)
    llr = np.round(llr, 1)  # ties must share a decision
    C = detection_cost_matrix(2.0, 1.0, c_refer=0.25)
    a = bayes_risk_analysis(llr, y, 0.3, C, normalize=False)
    slow = _slow_monotone_minimum(llr, y, 0.3, C, order=(0, 2, 1))
    assert a.minimum == pytest.approx(slow, rel=1e-12)
    assert a.minimum <= a.actual and a.minimum <= a.default


def test_recalibrated_risk_uses_the_logarithmic_optimal_calibration():
    rng = np.random.default_rng(3)
    tar, non, llr, y = _binary(rng)
    C = detection_cost_matrix(1.0, 1.0)
    a = bayes_risk_analysis(3.0 * llr - 2.0, y, 0.2, C)
    rec = a.alpha * (3.0 * llr - 2.0) + (a.beta[1] - a.beta[0])
    assert a.recalibrated == pytest.approx(bayes_risk(rec, y, 0.2, C), rel=1e-14)
    L2 = np.column_stack([np.zeros(llr.size), 3.0 * llr - 2.0])
    alpha, beta, _ = affine_calibration(L2, y, [0.8, 0.2])
    assert a.alpha == pytest.approx(alpha, rel=1e-9)
    assert a.beta[1] - a.beta[0] == pytest.approx(beta[1] - beta[0], rel=1e-9)


# ------------------------------------------------------------------------- multiclass


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    N=st.integers(2, 5),
    D=st.integers(1, 6),
    scale=st.sampled_from([1.0, 30.0, 1e4]),
)
def test_multiclass_decisions_minimize_the_posterior_expected_cost(seed, N, D, scale):
    rng = np.random.default_rng(seed)
    llh, y = _multiclass(rng, 50, N, scale=scale)
    prior = rng.dirichlet(np.ones(N))
    C = rng.uniform(0, 5, (D, N))
    d = bayes_decisions(llh, prior, C)
    R = softmax(llh + np.log(prior), axis=1) @ C.T  # direct: posterior expected costs
    chosen = R[np.arange(50), d]
    assert np.all(chosen <= R.min(axis=1) * (1 + 1e-9) + 1e-300)
    w = prior[y] / np.bincount(y, minlength=N)[y]
    assert bayes_risk(llh, y, prior, C, normalize=False) == pytest.approx(
        float(w @ C[d, y]), rel=1e-13
    )


@pytest.mark.parametrize("N, p_target", [(3, 0.5), (4, 0.5), (4, 0.2), (5, 0.7)])
def test_lre_compound_cost_is_cavg(N, p_target):
    rng = np.random.default_rng(N)
    llh, y = _multiclass(rng, 500, N)
    subsets, C = lre_cost_matrix(N, p_target)
    assert subsets.shape == (2**N, N)
    assert bayes_risk(llh, y, None, C, normalize=False) == pytest.approx(
        cavg(llh, y, p_target=p_target), rel=1e-13
    )
    # the compound decision accepts exactly CAVG's targets
    acc = subsets[bayes_decisions(llh, None, C)]
    q = softmax(llh, axis=1)
    thr = (1 - p_target) / ((N - 1) * p_target + 1 - p_target)
    assert np.array_equal(acc, q >= thr)


@pytest.mark.parametrize("N", [3, 4, 6])
def test_lre_ties_accept_as_cavg_and_thesis_eq_8_8(N):
    """A posterior exactly 1/N (all-zero log-likelihoods) sits on CAVG's threshold: thesis eq.
    8.8's unit step accepts it, and so must the compound Bayes decision (ties go to the first
    decision; the accepting ones come first). Regression: rounding broke the tie, and the
    risk of the issue's rows differed from CAVG (0.29696 vs 0.30444).
    """
    rng = np.random.default_rng(N)
    llh, y = _multiclass(rng, 60, N)
    llh[::3] = 0.0  # every third trial uninformative
    subsets, C = lre_cost_matrix(N)
    assert subsets[bayes_decisions(llh, None, C)][::3].all()  # every target accepted
    assert bayes_risk(llh, y, None, C, normalize=False) == pytest.approx(cavg(llh, y), rel=1e-13)
    # by hand: all-zero rows accept everything, no miss and every false alarm, CAVG = 1/2
    zeros, labels = np.zeros((2 * N, N)), np.arange(2 * N) % N
    assert bayes_risk(zeros, labels, None, C, normalize=False) == pytest.approx(0.5, rel=1e-14)
    assert cavg(zeros, labels) == 0.5
    # normalized by the default risk (every fixed decision costs 1/2 at the flat prior): 2 CAVG
    assert default_bayes_risk(None, C) == pytest.approx(0.5, rel=1e-14)
    assert bayes_risk(llh, y, None, C) == pytest.approx(2 * cavg(llh, y), rel=1e-13)


def test_misclassification_cost_matrix_eq_8_12():
    C = misclassification_cost_matrix([0.5, 0.3, 0.2])
    expected = np.array([[0, 1 / 0.3, 1 / 0.2], [1 / 0.5, 0, 1 / 0.2], [1 / 0.5, 1 / 0.3, 0]]) / 2
    np.testing.assert_allclose(C, expected, rtol=1e-15)


def test_zero_prior_class_and_its_trials_are_ignored():
    rng = np.random.default_rng(7)
    llh, y = _multiclass(rng, 300, 4)
    C = rng.uniform(0, 1, (3, 4))
    prior = np.array([0.5, 0.3, 0.2, 0.0])
    keep = y < 3
    assert bayes_risk(llh, y, prior, C, normalize=False) == pytest.approx(
        bayes_risk(llh[keep, :3], y[keep], prior[:3], C[:, :3], normalize=False), rel=1e-14
    )


def test_bad_inputs_are_refused():
    llr, y = np.array([0.0, 1.0]), np.array([0, 1])
    with pytest.raises(ValueError, match="cost"):
        bayes_risk(llr, y, 0.5, [[0, 1, 2]])
    with pytest.raises(ValueError, match="non-negative"):
        bayes_risk(llr, y, 0.5, [[0, -1], [1, 0]])
    with pytest.raises(ValueError, match="different numbers"):
        bayes_risk(llr, [0, 1, 1], 0.5, detection_cost_matrix())
    with pytest.raises(ValueError, match="no trials"):
        bayes_risk(llr, [0, 0], 0.5, detection_cost_matrix())
    with pytest.raises(ValueError, match="normalize=False"):
        bayes_risk(llr, y, 0.5, [[0, 0], [1, 1]])
    with pytest.raises(ValueError, match="eta"):
        misclassification_cost_matrix([0.5, 0.5, 0.0])


def test_exhaustive_small_compound_is_cavg_by_enumeration():
    """Slow independent check of lre_cost_matrix: enumerate the 2^N decisions by hand."""
    N, a = 3, 0.5
    subsets, C = lre_cost_matrix(N, a)
    for d, s in enumerate(subsets):
        for i in range(N):
            hand = a * (not s[i]) + (1 - a) / (N - 1) * sum(s[k] for k in range(N) if k != i)
            assert C[d, i] == pytest.approx(hand, rel=1e-15)
    assert {tuple(r) for r in subsets} == set(itertools.product((False, True), repeat=N))
    assert subsets[0].all() and not subsets[-1].any()  # accepting decisions first


# ------------------------------------------------------------------------- estimators


def test_estimators_predict_with_a_cost_matrix():
    from focal import LogisticFusion, MulticlassFusion

    rng = np.random.default_rng(8)
    tar, non, llr, y = _binary(rng, 300, 900)
    X = np.column_stack([llr, llr + rng.normal(size=llr.size)])
    fuser = LogisticFusion(p_target=0.3).fit(X, y)
    C = detection_cost_matrix(1.0, 1.0, c_refer=0.2)
    d = fuser.predict(X, cost=C)
    assert np.array_equal(d, bayes_decisions(fuser.decision_function(X), 0.3, C))
    assert set(np.unique(d)) <= {0, 1, 2} and (d == 2).any()
    # reject/accept through cost= is the classical predict
    plain = fuser.predict(X, p_target=0.1, c_miss=5.0)
    via_cost = fuser.predict(X, p_target=0.1, cost=detection_cost_matrix(5.0, 1.0))
    assert np.array_equal(plain, fuser.classes_[via_cost])
    with pytest.raises(ValueError, match="not both"):
        fuser.predict(X, c_miss=2.0, cost=C)

    llh, yy = _multiclass(rng, 400, 3)
    mc = MulticlassFusion().fit(llh, yy)
    Cm = np.vstack([misclassification_cost_matrix([0.2, 0.3, 0.5]), [0.4, 0.4, 0.4]])
    prior = [0.5, 0.25, 0.25]
    dm = mc.predict(llh, prior=prior, cost=Cm)
    assert np.array_equal(dm, bayes_decisions(mc.transform(llh), prior, Cm))
    # 0-1 cost (any positive scale) reproduces the MAP predict
    zero_one = 1.0 - np.eye(3)
    assert np.array_equal(mc.classes_[mc.predict(llh, cost=zero_one)], mc.predict(llh))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), N=st.integers(2, 4), D=st.integers(1, 5), binary=st.booleans())
def test_uninformative_scores_score_the_default(seed, N, D, binary):
    """All-zero (log-)likelihoods make the Bayes decision of the prior alone: the risk is the
    default and the normalized risk 1 (thesis eq. 7.20); every minimum is at most that.
    """
    rng = np.random.default_rng(seed)
    N = 2 if binary else N
    y = np.r_[np.arange(N), rng.integers(0, N, 30)]
    prior = rng.dirichlet(np.ones(N)) * 0.98 + 0.01 / N
    prior /= prior.sum()
    C = np.round(rng.uniform(0, 4, (D, N)), 1) + 0.05 * rng.uniform(size=(D, N))
    llh = np.zeros(y.size) if binary else np.zeros((y.size, N))
    p = prior[1] if binary else prior
    assert bayes_risk(llh, y, p, C) == pytest.approx(1.0, rel=1e-14)
    assert default_bayes_risk(p, C) == pytest.approx(float(np.min(C @ prior)), rel=1e-14)
    a = bayes_risk_analysis(rng.normal(size=llh.shape), y, p, C)
    if a.minimum is not None:
        assert a.minimum <= a.actual + 1e-15 and a.minimum <= 1.0 + 1e-15


def test_recalibrated_risk_of_a_sign_inverted_system_is_the_default():
    """E^opt keeps alpha >= 0 (thesis 8.4.2): an inverted system is recalibrated to the
    default one, whose normalized risk is 1; its monotone minimum cannot flip it either.
    """
    rng = np.random.default_rng(12)
    tar, non, llr, y = _binary(rng)
    C = detection_cost_matrix(1.0, 1.0)
    a = bayes_risk_analysis(-llr, y, 0.3, C)
    assert a.alpha == 0.0 and a.recalibrated == 1.0
    assert a.actual > 1.0 and a.minimum == pytest.approx(1.0)
    llh, yy = _multiclass(rng, 300, 3, sep=3.0)
    m = bayes_risk_analysis(-llh, yy, None, lre_cost_matrix(3)[1])
    assert m.alpha == 0.0 and m.recalibrated == pytest.approx(1.0, rel=1e-15)
