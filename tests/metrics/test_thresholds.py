"""Score thresholds of the ROCCH-EER and of the minimum DCF, against a brute-force sweep.

The reference tries every threshold "accept iff score >= t" with t at each distinct score and at
+inf, counting misses and false alarms directly: the obviously correct, O(N^2) definition.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from focal.metrics import calibration_report, eer, min_dcf, rocch

small_sets = st.lists(st.integers(-5, 5), min_size=1, max_size=20)
operating_points = st.tuples(st.floats(0.01, 0.99), st.floats(0.1, 10), st.floats(0.1, 10))


def sweep(tar, non):
    """Exact (misses, false alarms, threshold) at every candidate threshold."""
    tar, non = np.asarray(tar, float), np.asarray(non, float)
    candidates = np.concatenate([np.unique(np.concatenate([tar, non])), [np.inf]])
    return [(int(np.sum(tar < t)), int(np.sum(non >= t)), t) for t in candidates]


def hard_rates(tar, non, t):
    tar, non = np.asarray(tar, float), np.asarray(non, float)
    return np.mean(tar < t), np.mean(non >= t)


@settings(max_examples=300, deadline=None)
@given(small_sets, small_sets, operating_points)
def test_min_dcf_threshold_reproduces_min_dcf_and_spans_every_optimal_threshold(tar, non, op):
    p, cm, cf = op
    nt, nn = len(tar), len(non)
    costs = [(p * cm * m / nt + (1 - p) * cf * f / nn, t) for m, f, t in sweep(tar, non)]
    best = min(c for c, _ in costs)
    optimal = [t for c, t in costs if c <= best * (1 + 1e-9) + 1e-15]
    thr = rocch(tar, non).min_dcf_threshold(p, cm, cf)
    pmiss, pfa = hard_rates(tar, non, thr.value)
    assert p * cm * pmiss + (1 - p) * cf * pfa == pytest.approx(best, rel=1e-9, abs=1e-15)
    assert thr.low == min(optimal) and thr.high == max(optimal)
    assert thr.low <= thr.value <= thr.high
    norm = min(p * cm, (1 - p) * cf)
    assert min_dcf(tar, non, p, cm, cf) == pytest.approx(best / norm, rel=1e-9, abs=1e-15)


@settings(max_examples=300, deadline=None)
@given(small_sets, small_sets)
@pytest.mark.filterwarnings("ignore:.*looks like:UserWarning")  # small integer scores, not labels
def test_eer_threshold_at_a_unique_crossing_reproduces_the_eer(tar, non):
    nt, nn = len(tar), len(non)
    points = sweep(tar, non)
    crossings = [(m, f, t) for m, f, t in points if Fraction(m, nt) == Fraction(f, nn)]
    thr = rocch(tar, non).eer_threshold
    rate = eer(tar, non)
    if crossings and Fraction(crossings[0][0], nt) == Fraction(rate).limit_denominator(10**6):
        # an empirical operating point lies where the hull crosses P_miss = P_fa: a hard
        # threshold reproduces the EER (the steppy curve crosses once: its points are distinct)
        assert len(crossings) == 1
        assert thr.value == thr.low == thr.high == crossings[0][2]
        pmiss, pfa = hard_rates(tar, non, thr.value)
        assert pmiss == pfa == pytest.approx(rate, abs=1e-15)
    else:
        # randomized between two vertices: value is the empirical point nearest the crossing
        assert thr.low < thr.high
        inside = [
            abs(m / nt - rate) + abs(f / nn - rate)
            for m, f, t in points
            if thr.low <= t <= thr.high
        ]
        pmiss, pfa = hard_rates(tar, non, thr.value)
        assert min(inside) == pytest.approx(abs(pmiss - rate) + abs(pfa - rate))
        lo_miss, lo_fa = hard_rates(tar, non, thr.low)
        hi_miss, hi_fa = hard_rates(tar, non, thr.high)
        assert lo_miss < rate < hi_miss and lo_fa > rate > hi_fa


def test_eer_threshold_known_case():
    # targets 2, 3, 4, 5 and non-targets 0, 1, 2.5, 6: accept >= 2 gives 0/4 misses and 2/4 fa,
    # accept >= 3 gives 1/4 and 1/4: the unique crossing, at the hull vertex of threshold 3
    thr = rocch([2, 3, 4, 5], [0, 1, 2.5, 6]).eer_threshold
    assert (thr.value, thr.low, thr.high) == (3.0, 3.0, 3.0)
    assert eer([2, 3, 4, 5], [0, 1, 2.5, 6]) == 0.25


def test_min_dcf_threshold_rejects_all_when_a_decision_is_never_worth_accepting():
    # one target among non-targets that all score higher: rejecting everything is optimal
    thr = rocch([0.0], [1.0, 2.0]).min_dcf_threshold(0.01)
    assert thr.value == np.inf


def test_min_dcf_threshold_validates_the_operating_point():
    hull = rocch([1.0, 2.0], [0.0])
    with pytest.raises(ValueError, match="p_target"):
        hull.min_dcf_threshold(1.5)
    with pytest.raises(ValueError, match="c_fa"):
        hull.min_dcf_threshold(0.1, 1.0, -1.0)


def test_report_carries_thresholds():
    rng = np.random.default_rng(0)
    tar, non = rng.normal(2, 1, 300), rng.normal(0, 1, 3000)
    report = calibration_report(tar, non, operating_points=[0.01, (0.05, 1, 10)])
    hull = rocch(tar, non)
    d = report.to_dict()
    assert d["eer_threshold"] == hull.eer_threshold.value
    assert [op["min_dcf_threshold"] for op in d["operating_points"]] == [
        hull.min_dcf_threshold(0.01).value,
        hull.min_dcf_threshold(0.05, 1, 10).value,
    ]
    assert "threshold" in str(report)
