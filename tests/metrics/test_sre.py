"""Operating points as users write them, NIST SRE's C_primary, and the conventional EER."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_curve

from focal.metrics import c_primary, calibration_report, conventional_eer, eer, rocch
from focal.metrics.report import parse_operating_point


def test_c_primary_sre16_by_hand():
    # Bayes thresholds log(99) = 4.595 and log(199) = 5.293.
    # P = 0.01: misses {-1, 2} of 4, false alarm {4.8} of 4: (0.01 * 0.5 + 0.99 * 0.25) / 0.01
    #           = 25.25;  P = 0.005: misses {-1, 2, 5}: 0.005 * 0.75 / 0.005 = 0.75.
    # Minimum: accept only {5, 6} (above 4.8): P_miss = 0.5, P_fa = 0 at both priors.
    tar, non = [-1.0, 2.0, 5.0, 6.0], [-6.0, -3.0, 0.0, 4.8]
    cp = c_primary(tar, non, "sre16")
    assert cp.act_dcf == pytest.approx((25.25, 0.75), rel=1e-12)
    assert cp.actual == pytest.approx(13.0, rel=1e-12)
    assert cp.minimum == pytest.approx(0.5, rel=1e-12)
    assert cp.operating_points == ((0.01, 1.0, 1.0), (0.005, 1.0, 1.0))
    given_points = c_primary(tar, non, [(0.01, 1, 1), 0.005])
    assert (given_points.actual, given_points.minimum) == (cp.actual, cp.minimum)
    assert c_primary(tar, non, "SRE21").operating_points[1] == (0.05, 1.0, 1.0)


def test_c_primary_bad_points():
    with pytest.raises(ValueError, match="one of"):
        c_primary([1.0], [0.0], "sre99")
    with pytest.raises(ValueError, match="two or more"):
        c_primary([1.0], [0.0], [(0.01, 1, 1)])


def test_report_c_primary_and_conventional_eer():
    rng = np.random.default_rng(0)
    tar, non = rng.normal(2, 1, 200), rng.normal(0, 1, 2000)
    rep = calibration_report(tar, non, c_primary="sre16", conventional_eer=True)
    d = rep.to_dict()
    assert d["c_primary"]["c_primary"] == c_primary(tar, non).actual
    assert d["eer_conventional"] == conventional_eer(tar, non) >= d["eer"]
    text = str(rep)
    assert "C_primary (SRE16)" in text and "EER (conventional)" in text
    plain = calibration_report(tar, non).to_dict()
    assert "c_primary" not in plain and "eer_conventional" not in plain


def sklearn_interpolated_eer(tar, non):
    """Where the straight lines between sklearn's ROC points cross P_miss = P_fa."""
    scores = np.concatenate([tar, non])
    labels = np.r_[np.ones(len(tar)), np.zeros(len(non))]
    fpr, tpr, _ = roc_curve(labels, scores, drop_intermediate=False)
    fnr = 1 - tpr
    d = fnr - fpr  # decreasing along sklearn's order
    i = int(np.flatnonzero(d <= 0)[0])
    if d[i] == 0:
        return fpr[i]
    lam = d[i - 1] / (d[i - 1] - d[i])
    return fpr[i - 1] + lam * (fpr[i] - fpr[i - 1])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(-6, 6), min_size=1, max_size=30),
    st.lists(st.integers(-6, 6), min_size=1, max_size=30),
)
def test_conventional_eer_is_the_interpolated_empirical_crossing(tar, non):
    hull = rocch(tar, non)
    assert conventional_eer(hull) == pytest.approx(sklearn_interpolated_eer(tar, non), abs=1e-12)
    assert conventional_eer(hull) >= eer(tar, non) - 1e-15


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0.01", (0.01, 1.0, 1.0)),
        ("0.01:1:10", (0.01, 1.0, 10.0)),
        (" 0.5:2:1 ", (0.5, 2.0, 1.0)),
    ],
)
def test_parse_operating_point(text, expected):
    assert parse_operating_point(text) == expected


@pytest.mark.parametrize(
    "text, match",
    [
        ("0.01:1", "P_TARGET or P_TARGET:C_MISS:C_FA"),
        ("a:1:1", "must be numbers"),
        ("1.5:1:1", "P_target"),
        ("0.1:1:-1", "C_fa"),
    ],
)
def test_parse_operating_point_errors(text, match):
    with pytest.raises(ValueError, match=match):
        parse_operating_point(text, "--cost")
