"""Partitioned scoring: per-partition numbers are those of the partition alone; equalized
numbers match a hand computation, an independent brute force over thresholds, and with one
partition the pooled numbers exactly.
"""

import numpy as np
import pytest

from focal.metrics import (
    c_primary,
    calibration_report,
    cllr,
    min_dcf,
    partition_report,
)

# partition A: targets 2, -1; non-targets -2, 0.5, -3.  partition B: targets 1, 3, 0;
# non-targets -1, 2.
TAR = np.array([2.0, -1.0, 1.0, 3.0, 0.0])
NON = np.array([-2.0, 0.5, -3.0, -1.0, 2.0])
TAR_PART = ["A", "A", "B", "B", "B"]
NON_PART = ["A", "A", "A", "B", "B"]
POINTS = [(0.5, 1.0, 1.0), (0.2, 1.0, 1.0)]


def test_equalized_c_primary_by_hand():
    """At P_target 0.5 (threshold 0): A misses 1/2 and false-alarms 1/3, B 0 and 1/2, so the
    equalized rates are 1/4 and 5/12 and the normalized cost 1/4 + 5/12 = 2/3. At 0.2
    (threshold ln 4): A 1/2 and 0, B 2/3 and 1/2: rates 7/12 and 1/4, cost (0.2 * 7/12 + 0.8 *
    1/4) / 0.2 = 19/12. C_primary = (2/3 + 19/12) / 2 = 9/8.

    Minimum: the equalized (P_miss, P_fa) at the common thresholds are (0, 1), (0, 5/6),
    (0, 2/3), (1/4, 5/12), (5/12, 5/12), (5/12, 1/4), (7/12, 1/4), (5/6, 0), (1, 0); the least
    P_miss + P_fa is 2/3 and the least P_miss + 4 P_fa is 5/6: min C_primary = 3/4.
    """
    r = partition_report(TAR, NON, TAR_PART, NON_PART, c_primary=POINTS, operating_points=POINTS)
    (eq,) = r.equalized
    assert eq.c_primary.act_dcf == pytest.approx((2 / 3, 19 / 12), abs=1e-15)
    assert eq.c_primary.actual == pytest.approx(9 / 8, abs=1e-15)
    assert eq.c_primary.min_dcf == pytest.approx((2 / 3, 5 / 6), abs=1e-15)
    assert eq.c_primary.minimum == pytest.approx(3 / 4, abs=1e-15)
    assert [op.act_dcf for op in eq.operating_points] == list(eq.c_primary.act_dcf)
    # the equalized minimum is at least the mean of the partitions' own minima
    own = [min_dcf(TAR[:2], NON[:3], p_target=0.2), min_dcf(TAR[2:], NON[3:], p_target=0.2)]
    assert eq.c_primary.min_dcf[1] >= np.mean(own)


def _partitioned(seed, n_tar=300, n_non=900, sizes=None):
    rng = np.random.default_rng(seed)
    tar = np.round(rng.normal(2.0, 1.5, n_tar), 1)  # ties within and across partitions
    non = np.round(rng.normal(-2.0, 1.5, n_non), 1)
    p = sizes or [0.5, 0.3, 0.2]
    t_part = rng.choice(["x", "y", "z"], n_tar, p=p)
    n_part = rng.choice(["x", "y", "z"], n_non, p=p[::-1])
    shift = {"x": 0.0, "y": 1.0, "z": -1.5}  # partitions differ in calibration
    tar += np.vectorize(shift.get)(t_part)
    non += np.vectorize(shift.get)(n_part)
    return tar, non, t_part, n_part


@pytest.mark.parametrize("seed", range(4))
def test_one_partition_gives_the_pooled_numbers_exactly(seed):
    tar, non, _, _ = _partitioned(seed)
    r = partition_report(
        tar, non, ["all"] * tar.size, ["all"] * non.size, c_primary="sre16", operating_points=POINTS
    )
    (eq,) = r.equalized
    pooled = c_primary(tar, non, operating_points="sre16")
    assert eq.c_primary.actual == pooled.actual and eq.c_primary.minimum == pooled.minimum
    assert eq.c_primary.act_dcf == pooled.act_dcf and eq.c_primary.min_dcf == pooled.min_dcf
    for op, ref in zip(eq.operating_points, r.pooled.operating_points):
        assert (op.act_dcf, op.min_dcf) == (ref.act_dcf, ref.min_dcf)
    assert eq.eer == r.pooled.eer and eq.min_cllr == r.pooled.min_cllr
    assert eq.cllr == pytest.approx(r.pooled.cllr, rel=1e-14)


def test_each_partition_is_the_partition_evaluated_alone():
    tar, non, t_part, n_part = _partitioned(7)
    gender_t = np.where(np.arange(tar.size) % 2, "f", "m")
    gender_n = np.where(np.arange(non.size) % 3, "f", "m")
    r = partition_report(
        tar,
        non,
        {"lang": t_part, "gender": gender_t},
        {"lang": n_part, "gender": gender_n},
        c_primary="sre21",
        operating_points=POINTS,
        conventional_eer=True,
    )
    assert r.columns == ("lang", "gender")
    seen = set()
    for part in r.partitions:
        t_mask = np.ones(tar.size, bool)
        n_mask = np.ones(non.size, bool)
        for column, value in zip(part.columns, part.values):
            t_mask &= {"lang": t_part, "gender": gender_t}[column] == value
            n_mask &= {"lang": n_part, "gender": gender_n}[column] == value
        alone = calibration_report(
            tar[t_mask],
            non[n_mask],
            operating_points=POINTS,
            c_primary="sre21",
            conventional_eer=True,
            name=part.label,
        )
        assert part.report == alone
        seen.add(part.columns)
    assert seen == {("lang",), ("gender",), ("lang", "gender")}
    assert len(r.partitions) == 3 + 2 + 6
    assert [e.over for e in r.equalized] == [("lang",), ("gender",), ("lang", "gender")]
    assert r.pooled == calibration_report(
        tar, non, operating_points=POINTS, c_primary="sre21", conventional_eer=True
    )


def _brute_force(tar, non, t_codes, n_codes, p, c_miss=1.0, c_fa=1.0):
    """Equalized minimum normalized DCF: every threshold, the partitions' rates averaged."""
    thresholds = np.append(np.unique(np.concatenate((tar, non))), np.inf)
    pm = np.mean(
        [(tar[t_codes == k][None, :] < thresholds[:, None]).mean(1) for k in set(t_codes)], 0
    )
    pf = np.mean(
        [(non[n_codes == k][None, :] >= thresholds[:, None]).mean(1) for k in set(n_codes)], 0
    )
    cost = p * c_miss * pm + (1 - p) * c_fa * pf
    return cost.min() / min(p * c_miss, (1 - p) * c_fa), pm, pf


@pytest.mark.parametrize("sizes", [[0.5, 0.3, 0.2], [1 / 3, 1 / 3, 1 / 3]])
def test_equalized_minimum_agrees_with_a_brute_force_over_thresholds(sizes):
    tar, non, t_part, n_part = _partitioned(11, sizes=sizes)
    r = partition_report(tar, non, t_part, n_part, operating_points=[0.01, 0.1, (0.3, 2, 1)])
    (eq,) = r.equalized
    for op in eq.operating_points:
        expected, pm, pf = _brute_force(tar, non, t_part, n_part, op.p_target, op.c_miss, op.c_fa)
        assert op.min_dcf == pytest.approx(expected, rel=1e-12)
    # the ROCCH-EER of the equalized rates: the largest minimum Bayes error over priors
    p = np.linspace(0, 1, 200001)[:, None]
    largest = np.max(np.min(p * pm[None, :] + (1 - p) * pf[None, :], axis=1))
    assert eq.eer == pytest.approx(largest, abs=1e-5)


def _slow_weighted_pav(y, w):
    """Pool adjacent violators, one pair at a time (the textbook algorithm, thesis 7.7.3)."""
    blocks = [[yi, wi, 1] for yi, wi in zip(y, w)]
    i = 0
    while i < len(blocks) - 1:
        if blocks[i][0] > blocks[i + 1][0]:
            (y1, w1, c1), (y2, w2, c2) = blocks[i], blocks[i + 1]
            blocks[i : i + 2] = [[(y1 * w1 + y2 * w2) / (w1 + w2), w1 + w2, c1 + c2]]
            i = max(i - 1, 0)
        else:
            i += 1
    return np.repeat([b[0] for b in blocks], [b[2] for b in blocks])


def test_equalized_cllr_is_the_mean_of_the_partitions_and_min_cllr_the_weighted_pav():
    tar, non, t_part, n_part = _partitioned(5)
    r = partition_report(tar, non, t_part, n_part)
    (eq,) = r.equalized
    parts = [(tar[t_part == k], non[n_part == k]) for k in "xyz"]
    assert eq.cllr == pytest.approx(np.mean([cllr(t, n) for t, n in parts]), rel=1e-13)
    # the weighted PAV of the equalized trials (each class's weights summing to 1), ties pooled
    w_t = 1 / np.array([np.sum(t_part == k) for k in t_part]) / 3
    w_n = 1 / np.array([np.sum(n_part == k) for k in n_part]) / 3
    scores, inverse = np.unique(np.concatenate((tar, non)), return_inverse=True)
    at_t = np.bincount(inverse[: tar.size], w_t, minlength=scores.size)
    at_n = np.bincount(inverse[tar.size :], w_n, minlength=scores.size)
    post = _slow_weighted_pav(at_t / (at_t + at_n), at_t + at_n)  # prior odds 1: llr = logit
    with np.errstate(divide="ignore", invalid="ignore"):  # 0 * inf of an absent class: 0
        llr = np.log(post) - np.log1p(-post)
        cost_t = np.where(at_t > 0, at_t * np.logaddexp(0, -llr), 0.0)
        cost_n = np.where(at_n > 0, at_n * np.logaddexp(0, llr), 0.0)
    expected = (cost_t.sum() + cost_n.sum()) / 2 / np.log(2)
    assert eq.min_cllr == pytest.approx(expected, rel=1e-12)
    assert eq.min_cllr <= eq.cllr


def test_a_partition_of_one_class_counts_in_the_rates_only():
    tar, non = np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.5, -2.0, 2.5])
    r = partition_report(tar, non, ["a", "a", "b"], ["a", "a", "a", "a"], operating_points=[0.5])
    a, b = r.partitions
    assert b.report is None and (b.n_targets, b.n_nontargets) == (1, 0)
    # threshold 0: misses a 0/2, b 0/1; false alarms a 2/4 (0.5, 2.5): cost 0 + 1/2
    assert r.equalized[0].operating_points[0].act_dcf == pytest.approx(0.5)
    assert "one class only" in str(r)


def test_bad_partition_tables_are_refused_by_name():
    with pytest.raises(ValueError, match="tar_partitions.*one label per trial"):
        partition_report(TAR, NON, ["a"] * 4, ["a"] * 5)
    with pytest.raises(ValueError, match="same columns"):
        partition_report(TAR, NON, {"g": ["a"] * 5}, {"h": ["a"] * 5})
    with pytest.raises(ValueError, match="non_partitions"):
        partition_report(TAR, NON, ["a"] * 5, np.zeros((5, 2, 2)))


def test_intervals_per_partition_and_json():
    import json

    tar, non, t_part, n_part = _partitioned(2, n_tar=120, n_non=240)
    r = partition_report(
        tar, non, t_part, n_part, confidence=0.9, n_bootstrap=30, random_state=0, c_primary="sre16"
    )
    assert all(len(p.report.intervals) == 5 for p in r.partitions)
    assert "confidence intervals" in str(r)
    data = json.loads(json.dumps(r.to_dict()))
    assert data["equalized"][0]["c_primary"]["c_primary"] == r.equalized[0].c_primary.actual
