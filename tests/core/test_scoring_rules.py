"""Beta-family proper scoring rules (focal.core.scoring_rules) against their definitions.

Sources of truth: the integrals of thesis eq. 7.35 evaluated by scipy quadrature with the Beta
density of scipy.stats; the closed forms of eqs. 7.36, 7.37, 7.39 and of the keynote's
Beta(10, 1) rule worked by hand; propriety (the expected cost is minimized by the true
posterior); finite differences for the derivatives.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.integrate import quad
from scipy.special import betaln, expit, logit

from focal.core import scoring_rules as sr
from focal.core.scoring import cross_entropy_nats
from focal.core.scoring_rules import (
    BOOSTING,
    BRIER,
    LOGARITHMIC,
    LOW_FALSE_ALARM,
    BetaRule,
    default_expected_cost,
    expected_cost,
    normalized_expected_cost,
    scoring_rule,
)


def _quad_costs(a, b, q):
    """Eq. 7.35 by quadrature: (int_q^1 rho/eta, int_0^q rho/(1-eta)) with rho = Beta(a, b).

    QUADPACK's algebraic-weight rule integrates the endpoint singularities (1-eta)^(b-1) and
    eta^(a-1) exactly; the remaining factors are smooth on each interval.
    """
    norm = stats.beta(a, b).pdf(0.5) / 0.5 ** (a + b - 2)  # 1 / B(a, b)
    opts = dict(limit=500, epsabs=0.0, epsrel=1e-12)
    tar = quad(lambda e: norm * e ** (a - 2), q, 1.0, weight="alg", wvar=(0.0, b - 1), **opts)[0]
    non = quad(
        lambda e: norm * (1 - e) ** (b - 2), 0.0, q, weight="alg", wvar=(a - 1, 0.0), **opts
    )[0]
    return tar, non


@pytest.mark.parametrize(
    "a, b",
    [
        (0.3, 0.7),
        (0.5, 2.5),
        (1.0, 4.0),
        (1.7, 1.0),
        (2.0, 2.0),
        (10.0, 1.0),
        (3.5, 0.6),
        (0.9, 0.9),
        (6.0, 12.0),
    ],
)
@pytest.mark.parametrize("q", [0.003, 0.2, 0.5, 0.77, 0.995])
def test_costs_equal_the_defining_integrals(a, b, q):
    rule = BetaRule(a, b)
    llr = np.array([logit(q)])
    tar_ref, non_ref = _quad_costs(a, b, q)
    assert rule.target_cost(llr)[0] == pytest.approx(tar_ref, rel=1e-12)
    assert rule.nontarget_cost(llr)[0] == pytest.approx(non_ref, rel=1e-12)


def test_named_rules_closed_forms():
    q = np.array([1e-9, 0.01, 0.3, 0.5, 0.9, 1 - 1e-9])
    llr = logit(q)
    # logarithmic: -log q, -log(1 - q) (eq. 7.39)
    np.testing.assert_allclose(LOGARITHMIC.target_cost(llr), -np.log(q), rtol=1e-9)
    np.testing.assert_allclose(LOGARITHMIC.nontarget_cost(llr), -np.log1p(-q), rtol=1e-6)
    # Brier: rho = 6 eta (1 - eta) gives 3 x (1 - q)^2 and 3 x q^2 (eq. 7.36)
    np.testing.assert_allclose(BRIER.target_cost(llr), 3 * (1 - q) ** 2, rtol=1e-9)
    np.testing.assert_allclose(BRIER.nontarget_cost(llr), 3 * q**2, rtol=1e-9)
    # boosting: rho = 1 / (pi sqrt(eta (1 - eta))) gives 2/pi sqrt((1-q)/q) (eq. 7.37)
    np.testing.assert_allclose(
        BOOSTING.target_cost(llr), 2 / np.pi * np.sqrt((1 - q) / q), rtol=1e-6
    )
    np.testing.assert_allclose(
        BOOSTING.nontarget_cost(llr), 2 / np.pi * np.sqrt(q / (1 - q)), rtol=1e-6
    )
    assert scoring_rule("brier") is BRIER and BRIER.name == "brier"
    assert scoring_rule("log") is LOGARITHMIC and scoring_rule((0.5, 0.5)).name == "boosting"


def _general(rule, llr, target):
    """The incomplete-beta path, bypassing the closed forms of the named rules."""
    a, b = (rule.a, rule.b) if target else (rule.b, rule.a)
    u = -llr if target else llr
    log_x = -np.logaddexp(0, u)
    log_y = -np.logaddexp(0, -u)
    return sr._upper_beta_integral(a - 1, b, log_x, log_y) * np.exp(-betaln(rule.a, rule.b))


@pytest.mark.parametrize("rule", [LOGARITHMIC, BRIER, BOOSTING])
def test_general_path_reproduces_named_rules(rule):
    llr = np.r_[-700.0, -40.0, np.linspace(-8, 8, 33), 40.0, 300.0]
    for target, closed in ((True, rule.target_cost), (False, rule.nontarget_cost)):
        np.testing.assert_allclose(_general(rule, llr, target), closed(llr), rtol=5e-13)


def test_keynote_low_false_alarm_rule():
    """Beta(10, 1): target cost 10/9 (1 - q^9), non-target 10 (-log(1-q) - sum_k q^k / k)."""
    q = np.array([1e-6, 0.05, 0.3, 0.6, 0.9, 0.999])
    llr = logit(q)
    np.testing.assert_allclose(LOW_FALSE_ALARM.target_cost(llr), 10 / 9 * (1 - q**9), rtol=1e-12)
    # -log(1-q) - sum_{k<10} q^k/k = sum_{k>=10} q^k/k: the tail series, accurate for small q
    k = np.arange(10, 2000)
    tail = 10 * (q[:4, None] ** k / k).sum(axis=1)
    np.testing.assert_allclose(LOW_FALSE_ALARM.nontarget_cost(llr[:4]), tail, rtol=1e-12)
    k = np.arange(1, 10)
    head = 10 * (-np.log1p(-q[4:]) - (q[4:, None] ** k / k).sum(axis=1))
    np.testing.assert_allclose(LOW_FALSE_ALARM.nontarget_cost(llr[4:]), head, rtol=1e-11)
    # bounded for targets (never more than 10/9), unbounded for confident false alarms
    assert LOW_FALSE_ALARM.target_cost(np.array([-1e6]))[0] == pytest.approx(10 / 9)
    assert LOW_FALSE_ALARM.nontarget_cost(np.array([1e6]))[0] > 1e6


def test_extreme_llrs():
    big = np.array([1e6])
    assert LOGARITHMIC.target_cost(-big)[0] == pytest.approx(1e6)
    assert LOGARITHMIC.target_cost(big)[0] == 0.0
    assert BRIER.target_cost(-big)[0] == 3.0
    assert BetaRule(0.7, 0.4).target_cost(big)[0] == 0.0
    assert np.isfinite(BetaRule(0.7, 0.4).target_cost(np.array([-300.0]))[0])
    # boosting grows like exp(|llr| / 2): beyond the float range it is infinite
    assert BOOSTING.target_cost(-big)[0] == np.inf
    # infinite LLRs: zero cost when right; when wrong, infinite for an unbounded side and
    # C(0 | target) = B(a - 1, b) / B(a, b) = (a + b - 1) / (a - 1) for a bounded one
    inf = np.array([np.inf])
    for rule in (
        LOGARITHMIC,
        BRIER,
        BOOSTING,
        LOW_FALSE_ALARM,
        BetaRule(0.7, 0.4),
        BetaRule(3.0, 2.0),
        BetaRule(1.5, 0.5),
    ):
        assert rule.target_cost(inf)[0] == 0.0 and rule.nontarget_cost(-inf)[0] == 0.0
        wrong = rule.target_cost(-inf)[0]
        assert wrong == (
            np.inf
            if rule.a <= 1
            else pytest.approx((rule.a + rule.b - 1) / (rule.a - 1), rel=1e-13)
        )
    # an unbounded general rule grows without limit, exactly: rho = 3 (1 - eta)^2 gives
    # 3 (-log q - 2 (1 - q) + (1 - q^2) / 2), here with -log q = 1e4 (q underflows)
    r = BetaRule(1.0, 3.0)
    assert r.target_cost(np.array([-1e4]))[0] == pytest.approx(3 * (1e4 - 2 + 0.5), rel=1e-14)


@settings(max_examples=40)
@given(a=st.floats(0.2, 12.0), b=st.floats(0.2, 12.0), p=st.floats(0.01, 0.99))
def test_strict_propriety(a, b, p):
    """The expected cost p C(q|tar) + (1-p) C(q|non) is smallest at the true posterior q = p."""
    rule = BetaRule(a, b)
    llr = logit(np.clip(p + np.array([-0.3, -0.05, -0.005, 0.0, 0.005, 0.05, 0.3]), 1e-4, 1 - 1e-4))
    risk = p * rule.target_cost(llr) + (1 - p) * rule.nontarget_cost(llr)
    # the minimum is at q = p; a rule whose weight lies far from p can be flat there to the
    # last bit (Beta(9, 1) at p = 0.013), so equal values count, larger ones at q = p do not
    assert risk[3] <= risk.min() * (1 + 4 * np.finfo(float).eps)
    assert risk[3] < max(risk[0], risk[-1])


@pytest.mark.parametrize(
    "rule", [LOGARITHMIC, BRIER, BOOSTING, LOW_FALSE_ALARM, BetaRule(0.6, 3.0), BetaRule(2.5, 0.8)]
)
def test_derivatives_match_finite_differences(rule):
    z = np.linspace(-9, 9, 37)
    h = 1e-4
    for target in (True, False):
        is_t = np.full(z.shape, target)
        cost, d1, d2 = rule.cost_and_derivatives(z, is_t)
        up = rule.cost_and_derivatives(z + h, is_t)
        down = rule.cost_and_derivatives(z - h, is_t)
        np.testing.assert_allclose(d1, (up[0] - down[0]) / (2 * h), rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(d2, (up[1] - down[1]) / (2 * h), rtol=1e-6, atol=1e-9)
        closed = rule.target_cost(z) if target else rule.nontarget_cost(z)
        np.testing.assert_allclose(cost, closed, rtol=1e-14)


@pytest.mark.parametrize("a, b", [(1, 1), (0.5, 0.5), (0.3, 1.0), (2, 2), (10, 1), (1, 1.5)])
def test_convexity_is_a_and_b_at_most_one(a, b):
    rule = BetaRule(a, b)
    z = np.linspace(-30, 30, 2001)
    smallest = min(rule.cost_and_derivatives(z, np.full(z.shape, t))[2].min() for t in (0, 1))
    assert (smallest >= -1e-15) == rule.convex == (a <= 1 and b <= 1)


@pytest.mark.parametrize("rule", [LOGARITHMIC, BRIER, BOOSTING, LOW_FALSE_ALARM])
def test_weighting_density(rule):
    assert quad(rule.weight, 0, 1, limit=200)[0] == pytest.approx(1.0, rel=1e-8)
    eta = np.array([0.0, 0.1, 0.5, 0.8, 1.0])
    np.testing.assert_allclose(rule.weight(eta), stats.beta(rule.a, rule.b).pdf(eta), rtol=1e-12)


def test_expected_cost():
    rng = np.random.default_rng(0)
    tar, non = rng.normal(2, 1, 300), rng.normal(-1, 1, 500)
    assert expected_cost(tar, non, 0.2) == cross_entropy_nats(tar, non, 0.2)
    plo = logit(0.2)
    direct = 0.2 * np.mean(3 * expit(-(tar + plo)) ** 2) + 0.8 * np.mean(3 * expit(non + plo) ** 2)
    assert expected_cost(tar, non, 0.2, "brier") == pytest.approx(direct, rel=1e-14)
    for rule in ("logarithmic", "brier", "boosting", (10, 1), (0.4, 2.0)):
        zeros = np.zeros(5)
        assert normalized_expected_cost(zeros, zeros, 0.3, rule) == pytest.approx(1.0, rel=1e-14)
        assert default_expected_cost(0.3, rule) > 0
    # logarithmic normalized cost is Cllr at the prior
    from focal.metrics import cllr

    assert normalized_expected_cost(tar, non, 0.2) == pytest.approx(cllr(tar, non, 0.2), rel=1e-13)


@pytest.mark.parametrize(
    "spec", ["hinge", (0, 1), (1, -2), (np.inf, 1), (1, 2, 3), 3.0, ("a", 1), (True, 1), (2000, 1)]
)
def test_bad_rule_specs(spec):
    with pytest.raises(ValueError, match="rule"):
        scoring_rule(spec)
