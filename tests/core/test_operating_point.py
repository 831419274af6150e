"""OperatingPoint: one application (P_target, C_miss, C_fa) and what follows from it."""

import math
import pickle

import numpy as np
import pytest

from focal.core import priors
from focal.core.operating_point import NIST_SRE_POINTS, OperatingPoint
from focal.exceptions import InvalidParameterError


def test_sws2013_numbers_of_the_evaluation_plan():
    # MediaEval 2013 SWS plan: P_target = 0.00015, C_miss = 100, C_fa = 1 give beta = 66.66 (eq. 7)
    # and the effective prior P_tar = 0.0148 (eq. 23).
    op = OperatingPoint.sws2013()
    assert (op.p_target, op.c_miss, op.c_fa) == (0.00015, 100.0, 1.0)
    assert op.beta == pytest.approx(66.66, abs=0.005)
    assert op.effective_prior == pytest.approx(0.0148, abs=5e-5)
    assert OperatingPoint.std2006().beta == pytest.approx(999.9, rel=1e-12)


@pytest.mark.parametrize(
    "p, cm, cf", [(0.01, 1.0, 1.0), (0.00015, 100.0, 1.0), (0.3, 2.0, 7.5), (1e-9, 1.0, 1e3)]
)
def test_formulas_against_hand_written_ones(p, cm, cf):
    op = OperatingPoint(p, cm, cf)
    assert op.effective_prior == pytest.approx(cm * p / (cm * p + cf * (1 - p)), rel=1e-12)
    assert op.log_odds == pytest.approx(math.log(p / (1 - p)) + math.log(cm / cf), rel=1e-12)
    assert op.beta == pytest.approx(cf * (1 - p) / (cm * p), rel=1e-12)
    assert op.bayes_threshold == -op.log_odds
    # the same numbers, to the last bit, as the functions of focal.core.priors
    assert op.effective_prior == priors.effective_prior(p, cm, cf)
    assert op.beta == priors.beta(p, cm, cf)
    assert op.log_odds == priors.effective_log_odds(p, cm, cf)


def test_detection_cost_normalized_by_the_default():
    op = OperatingPoint(0.1, 10.0, 1.0)  # P C_miss = 1, (1 - P) C_fa = 0.9: default 0.9
    assert op.detection_cost(0.5, 0.2) == pytest.approx((1.0 * 0.5 + 0.9 * 0.2) / 0.9)
    assert op.detection_cost(0.5, 0.2, normalize=False) == pytest.approx(0.68)
    np.testing.assert_allclose(
        op.detection_cost(np.array([0.0, 1.0]), np.array([1.0, 0.0])), [1.0, 1.0 / 0.9]
    )


def test_unpacks_like_a_tuple_and_is_a_value():
    op = OperatingPoint(0.01, 1, 10, name="x")
    p, cm, cf = op
    assert (p, cm, cf) == (0.01, 1.0, 10.0) == op.as_tuple()
    assert OperatingPoint(0.01, 1, 10, name="x") == op
    assert pickle.loads(pickle.dumps(op)) == op
    with pytest.raises(AttributeError):
        op.p_target = 0.5
    assert op.describe() == "P_tar=0.01, C_miss=1, C_fa=10"
    assert OperatingPoint(0.05).describe() == "P_tar=0.05"


def test_coerce_accepts_what_users_write():
    assert OperatingPoint.coerce(0.01) == OperatingPoint(0.01)
    assert OperatingPoint.coerce((0.01, 2, 3)) == OperatingPoint(0.01, 2.0, 3.0)
    assert OperatingPoint.coerce(np.array([0.01, 2, 3])) == OperatingPoint(0.01, 2.0, 3.0)
    op = OperatingPoint.sws2013()
    assert OperatingPoint.coerce(op) is op


@pytest.mark.parametrize(
    "bad, match",
    [
        ((0.01, 1.0), r"points\[1\] must be a target prior or a tuple"),
        (1.5, r"points\[1\] P_target must be strictly between 0 and 1"),
        ((0.1, -1, 1), r"points\[1\] C_miss must be a finite number > 0"),
        ((0.1, 1, "x"), r"points\[1\] C_fa must be a real number"),
    ],
)
def test_coerce_errors_name_the_argument_and_are_value_and_type_errors(bad, match):
    with pytest.raises(InvalidParameterError, match=match) as err:
        OperatingPoint.coerce(bad, "points[1]")
    assert isinstance(err.value, ValueError) and isinstance(err.value, TypeError)


def test_constructor_validates():
    for args in [(0.0,), (1.0,), (float("nan"),), (0.5, 0.0), (0.5, 1.0, math.inf), ("0.5",)]:
        with pytest.raises(ValueError):
            OperatingPoint(*args)


def test_sws2012_depends_on_the_data():
    op = OperatingPoint.sws2012(30, 3000.0)  # plan eqs. 17-18
    assert op.p_target == 0.01 and op.beta == pytest.approx(2970 / 30, rel=1e-12)
    with pytest.raises(ValueError, match="N_true"):
        OperatingPoint.sws2012(0, 100.0)


def test_nist_sre_points():
    sre16 = OperatingPoint.nist_sre("SRE16")
    assert [op.as_tuple() for op in sre16] == [(0.01, 1.0, 1.0), (0.005, 1.0, 1.0)]
    assert [op.p_target for op in OperatingPoint.nist_sre("sre21")] == [0.01, 0.05]
    assert set(NIST_SRE_POINTS) == {"sre16", "sre18", "sre19", "sre21"}
    with pytest.raises(InvalidParameterError, match="one of"):
        OperatingPoint.nist_sre("sre99")


def test_one_class_everywhere():
    import focal
    from focal import std
    from focal.metrics.sre import SRE_OPERATING_POINTS

    assert focal.OperatingPoint is OperatingPoint is std.OperatingPoint
    assert std.SWS2013 == OperatingPoint.sws2013() and std.STD2006 == OperatingPoint.std2006()
    assert SRE_OPERATING_POINTS is NIST_SRE_POINTS


def test_accepted_wherever_a_tuple_is():
    from focal.estimators import dcf_scorer
    from focal.metrics import calibration_report, dcf

    rng = np.random.default_rng(1)
    tar, non = rng.normal(2, 1, 300), rng.normal(-1, 1, 900)
    op = OperatingPoint(0.05, 2.0, 1.0)
    assert dcf(tar, non, *op) == dcf(tar, non, 0.05, 2.0, 1.0)
    by_tuple = calibration_report(tar, non, operating_points=[(0.05, 2.0, 1.0)])
    by_object = calibration_report(tar, non, operating_points=[op])
    assert by_tuple.to_dict() == by_object.to_dict()
    assert by_object.operating_points[0].effective_prior == op.effective_prior
    assert (
        dcf_scorer(*op).kwargs
        == dcf_scorer(0.05, 2.0, 1.0).kwargs
        == {"p_target": 0.05, "c_miss": 2.0, "c_fa": 1.0}
    )
