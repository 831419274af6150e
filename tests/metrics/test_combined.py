"""Application combination (thesis eqs. 6.2-6.7, 3.14-3.21) with the SRE'12 two-point criterion,
and the truncated Cllr of the keynote, against closed forms and numeric integration.
"""

import numpy as np
import pytest
from scipy.integrate import trapezoid
from scipy.special import expit

from focal.metrics import (
    bayes_decisions,
    bayes_risk,
    bayes_risk_analysis,
    cllr,
    combine_applications,
    dcf,
    detection_cost_matrix,
    min_dcf,
    misclassification_cost_matrix,
    truncated_cllr,
)


def _binary(seed, n_tar=300, n_non=3000):
    rng = np.random.default_rng(seed)
    tar = rng.normal(2.0, 2.0, n_tar)
    non = rng.normal(-2.0, 2.0, n_non)
    return tar, non, np.r_[tar, non], np.r_[np.ones(n_tar), np.zeros(n_non)].astype(int)


def test_sre12_primary_cost_is_a_combined_application():
    """Mean of the normalized DCFs at P_target 0.01 and 0.001 = one compound application."""
    tar, non, llr, y = _binary(1)
    C = detection_cost_matrix(1.0, 1.0)
    sre12 = combine_applications([(0.01, C), (0.001, C)], [0.5 / 0.01, 0.5 / 0.001])
    expected = 0.5 * (dcf(tar, non, 0.01) + dcf(tar, non, 0.001))
    assert bayes_risk(llr, y, sre12.prior, sre12.cost, normalize=False) == pytest.approx(
        expected, rel=1e-13
    )
    # the compound Bayes decision is the pair of the two applications' decisions (eq. 3.15)
    d = sre12.decisions[bayes_decisions(llr, sre12.prior, sre12.cost)]
    assert np.array_equal(d[:, 0], bayes_decisions(llr, 0.01, C))
    assert np.array_equal(d[:, 1], bayes_decisions(llr, 0.001, C))
    # a monotone rule must order the two thresholds: never below the mean of the minima
    a = bayes_risk_analysis(llr, y, sre12.prior, sre12.cost, normalize=False)
    mean_min = 0.5 * (min_dcf(tar, non, 0.01) + min_dcf(tar, non, 0.001))
    assert a.minimum >= mean_min - 1e-12
    assert a.minimum <= expected


def test_combination_identity_eq_6_7_multiclass():
    rng = np.random.default_rng(2)
    n, N = 400, 3
    y = rng.integers(0, N, n)
    y[:N] = np.arange(N)
    llh = rng.normal(size=(n, N)) * 2 + 2 * np.eye(N)[y]
    apps = [
        ([0.5, 0.3, 0.2], misclassification_cost_matrix([0.2, 0.3, 0.5])),
        ([0.1, 0.1, 0.8], rng.uniform(0, 3, (4, N))),
        ([0.0, 0.5, 0.5], rng.uniform(0, 1, (2, N))),  # a zero-prior class
    ]
    rho = [0.5, 2.0, 1.0]
    comb = combine_applications(apps, rho)
    assert comb.cost.shape == (3 * 4 * 2, N)
    expected = sum(r * bayes_risk(llh, y, p, C, normalize=False) for r, (p, C) in zip(rho, apps))
    assert bayes_risk(llh, y, comb.prior, comb.cost, normalize=False) == pytest.approx(
        expected, rel=1e-12
    )
    # pi~ C~_k = pi_k C_k (eq. 6.3), checked entry by entry on the compound cost
    for d, combo in enumerate(comb.decisions):
        for i in range(N):
            hand = sum(r * p[i] * C[combo[k], i] for k, (r, (p, C)) in enumerate(zip(rho, apps)))
            assert comb.prior[i] * comb.cost[d, i] == pytest.approx(hand, rel=1e-12, abs=1e-15)


def test_combination_rejects_bad_input():
    C = detection_cost_matrix()
    with pytest.raises(ValueError, match="weights"):
        combine_applications([(0.1, C)], [-1.0])
    with pytest.raises(ValueError, match="same classes"):
        combine_applications([(0.1, C), (None, np.ones((2, 3)))])
    with pytest.raises(ValueError, match="pair"):
        combine_applications([C])


# ------------------------------------------------------------------------- truncated Cllr


def _integrated(tar, non, h_lo, h_hi, n=400001):
    """Thesis eq. 7.34 numerically: the flat weighting over posterior thresholds eta in the
    range, normalized Bayes costs (miss 1/eta, false alarm 1/(1 - eta)) at prior 1/2.
    """
    eta = np.linspace(expit(-h_hi), expit(-h_lo), n)
    qt, qn = np.sort(expit(tar)), np.sort(expit(non))
    p_miss = np.searchsorted(qt, eta, side="left") / qt.size
    p_fa = 1 - np.searchsorted(qn, eta, side="left") / qn.size
    f = 0.5 * p_miss / eta + 0.5 * p_fa / (1 - eta)
    return trapezoid(f, eta) / (eta[-1] - eta[0])


@pytest.mark.parametrize("h_lo, h_hi", [(-4.6, 0.0), (-7.0, -2.0), (1.0, 3.0), (-2.0, 2.0)])
def test_truncated_cllr_is_the_restricted_integral(h_lo, h_hi):
    tar, non, _, _ = _binary(3, 200, 500)
    value = _integrated(tar, non, h_lo, h_hi)
    default = _integrated(np.zeros(1), np.zeros(1), h_lo, h_hi)
    assert truncated_cllr(tar, non, (h_lo, h_hi)) == pytest.approx(value / default, rel=1e-4)


def test_truncated_cllr_known_answers():
    tar, non, _, _ = _binary(4, 100, 300)
    assert truncated_cllr(tar, non) == pytest.approx(cllr(tar, non), rel=1e-13)
    assert truncated_cllr(tar, non, (-50.0, 50.0)) == pytest.approx(cllr(tar, non), rel=1e-12)
    # uninformative: 1 for every range; perfect (beyond every threshold): 0
    assert truncated_cllr(np.zeros(3), np.zeros(4), (-6.0, -1.0)) == pytest.approx(1.0)
    assert truncated_cllr([np.inf, 40.0], [-np.inf, -40.0], (-6.0, 1.0)) == 0.0
    # hand-worked: range (-inf, 0): eta in [1/2, 1). One target at LLR 0 (q = 1/2) costs
    # 2 log 2; one non-target at LLR log 3 (q = 3/4) costs 2 log((1/2)/(1/4)) = 2 log 2.
    # The default (q = 1/2) costs 2 log 2 for a target and 0 for a non-target.
    hand = (0.5 * 2 * np.log(2) + 0.5 * 2 * np.log(2)) / (0.5 * 2 * np.log(2))
    assert truncated_cllr([0.0], [np.log(3.0)], (-np.inf, 0.0)) == pytest.approx(hand, rel=1e-14)


def test_truncated_cllr_ignores_thresholds_outside_the_range():
    # range (-6, -2): thresholds 2..6 on the LLR; a target at -30 or at 1 is missed at all of
    # them: same cost (unlike Cllr, whose cost grows without bound)
    base = truncated_cllr([1.0, 8.0], [-8.0], (-6.0, -2.0))
    assert truncated_cllr([-30.0, 8.0], [-8.0], (-6.0, -2.0)) == pytest.approx(base, rel=1e-14)
    assert cllr([-30.0, 8.0], [-8.0]) > 10 * cllr([1.0, 8.0], [-8.0])


def test_truncated_cllr_rejects_bad_ranges():
    with pytest.raises(ValueError, match="h_lo < h_hi"):
        truncated_cllr([1.0], [0.0], (2.0, 1.0))
    with pytest.raises(ValueError, match="two numbers"):
        truncated_cllr([1.0], [0.0], 3.0)


def test_docstring_examples():
    import doctest

    import focal.metrics.bayes
    import focal.metrics.combined
    import focal.metrics.costs
    import focal.metrics.multiclass_rules

    attempted = 0
    for module in (
        focal.metrics.bayes,
        focal.metrics.combined,
        focal.metrics.costs,
        focal.metrics.multiclass_rules,
    ):
        result = doctest.testmod(module)
        assert result.failed == 0, module.__name__
        attempted += result.attempted
    assert attempted >= 15


def test_min_truncated_cllr_is_the_pav_minimum():
    from focal.metrics import min_cllr, min_truncated_cllr, pav_llr

    tar, non, scores, y = _binary(5, 150, 600)
    assert min_truncated_cllr(tar, non) == pytest.approx(min_cllr(tar, non), rel=1e-12)
    rng_ = (np.log(0.001 / 0.999), np.log(0.05 / 0.95))
    m = min_truncated_cllr(tar, non, rng_)
    assert m <= truncated_cllr(tar, non, rng_)
    # invariant under monotone maps of the scores; equal to the rule on the PAV LLRs
    assert min_truncated_cllr(np.exp(tar / 3), np.exp(non / 3), rng_) == pytest.approx(m, rel=1e-12)
    llr = pav_llr(scores, y)
    assert truncated_cllr(llr[y == 1], llr[y == 0], rng_) == pytest.approx(m, rel=1e-14)
    # no affine recalibration does better (PAV is optimal among all monotone maps)
    for a, b in [(1.0, 0.0), (0.5, -1.0), (2.0, 3.0), (0.2, -4.0)]:
        assert truncated_cllr(a * tar + b, a * non + b, rng_) >= m - 1e-12
