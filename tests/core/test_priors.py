"""Priors and operating points (SWS plan eqs. 7, 22-24, 39; thesis eq. 7.13)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import focal
from focal.core.priors import detection_cost

probabilities = st.floats(1e-9, 1 - 1e-9)
costs = st.floats(1e-3, 1e3)


def test_sws_operating_point_published_values():
    # SWS plan sec. 4.2.1 and eq. 21: P_target = 0.00015, C_miss = 100, C_fa = 1 -> P_tar = 0.0148
    p_tar = focal.effective_prior(0.00015, c_miss=100, c_fa=1)
    assert f"{p_tar:.3g}" == "0.0148"
    # ... and beta = 66.66 (plan sec. 3: "beta = 66.66")
    assert round(focal.beta(0.00015, c_miss=100, c_fa=1), 2) == 66.66


def test_nist_old_operating_point():
    # thesis sec. 7.3.1: (C_miss, C_fa, pi) = (10, 1, 0.01) is an effective prior of about 0.091
    assert focal.effective_prior(0.01, 10, 1) == pytest.approx(0.0917, abs=5e-4)
    # SWS plan sec. 2.5: NIST STD 2006 (C_miss=10, C_fa=1, P_target=1e-4) gives beta = 999.9
    assert focal.beta(1e-4, 10, 1) == pytest.approx(999.9, rel=1e-12)


@given(probabilities, costs, costs)
def test_effective_prior_matches_eq_23(p, cm, cf):
    direct = cm * p / (cm * p + cf * (1 - p))
    assert focal.effective_prior(p, cm, cf) == pytest.approx(direct, rel=1e-12)


@given(probabilities, costs, costs)
def test_beta_is_odds_of_effective_prior(p, cm, cf):
    # eq. 22: C_fa (1 - P_target) / (C_miss P_target) = (1 - P_tar) / P_tar
    assert focal.beta(p, cm, cf) == pytest.approx(cf * (1 - p) / (cm * p), rel=1e-12)


@given(probabilities)
def test_logit_sigmoid_inverse(p):
    assert focal.sigmoid(focal.logit(p)) == pytest.approx(p, rel=1e-12)
    assert focal.logit(p) == pytest.approx(math.log(p / (1 - p)), abs=1e-9)


@given(probabilities)
def test_prior_entropy_is_eq_39(p):
    # log(1/(1-p)) written as -log1p(-p), so the reference itself is accurate for tiny p
    direct = (p * -math.log(p) + (1 - p) * -math.log1p(-p)) / math.log(2)
    assert focal.prior_entropy(p) == pytest.approx(direct, rel=1e-12, abs=1e-300)


def test_prior_entropy_hand_values():
    assert focal.prior_entropy(0.5) == 1.0
    assert focal.prior_entropy(0.25) == pytest.approx(0.8112781244591328, rel=1e-14)


def test_bayes_threshold_is_minus_log_odds():
    # SWS plan eq. 31: theta = -logit(P_tar)
    assert focal.bayes_threshold(0.5) == 0.0
    assert focal.bayes_threshold(0.01, 10, 1) == pytest.approx(
        -math.log(0.01 / 0.99) - math.log(10)
    )


def test_detection_cost_normalization_eqs_8_to_10():
    # eq. 8 with P_miss = 0.2, P_fa = 0.01 at P_target = 0.1, C_miss = 10, C_fa = 1
    raw = detection_cost(0.2, 0.01, 0.1, 10.0, 1.0, normalize=False)
    assert raw == pytest.approx(0.1 * 10 * 0.2 + 0.9 * 1 * 0.01)
    # default cost (eq. 9) is min(1.0, 0.9) = 0.9
    assert detection_cost(0.2, 0.01, 0.1, 10.0, 1.0) == pytest.approx(raw / 0.9)
    # rejecting everything costs exactly the default when C_miss P_target is the smaller one
    assert detection_cost(1.0, 0.0, 0.01, 1.0, 1.0) == 1.0


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, float("nan"), float("inf")])
def test_prior_outside_open_interval_is_an_error(bad):
    with pytest.raises(ValueError, match="p_target"):
        focal.effective_prior(bad)
    with pytest.raises(ValueError, match="p_target"):
        focal.prior_entropy(bad)


@pytest.mark.parametrize(
    "name,kwargs", [("c_miss", {"c_miss": 0}), ("c_fa", {"c_fa": -1}), ("c_fa", {"c_fa": np.inf})]
)
def test_costs_must_be_positive(name, kwargs):
    with pytest.raises(ValueError, match=name):
        focal.effective_prior(0.1, **kwargs)


def test_prior_must_be_a_number():
    with pytest.raises(TypeError, match="p_target"):
        focal.effective_prior("0.1")
    with pytest.raises(TypeError, match="p_target"):
        focal.effective_prior(True)
