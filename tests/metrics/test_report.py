"""The calibration-analysis report: every number against an independent
computation (``_calibration_reference``: plain-Python log cost, the O(T^2) closed-form PAV,
brute-force thresholds, the minimax EER / PRBEP of thesis eqs. 7.29-7.32), hand-worked cases,
and the readability of ``str``.
"""

import json
import math

import numpy as np
import pytest

from focal.metrics import CalibrationReport, calibration_report, from_labels
from tests._support.calibration_reference import (
    brute_act_dcf,
    brute_min_dcf,
    closed_form_pav_llr,
    log_cost_cllr,
    rocch_eer,
    rocch_prbep,
)


def llr_set(seed, n_tar=35, n_non=50):
    """Miscalibrated LLRs (shifted and overconfident), rounded to give ties."""
    rng = np.random.default_rng(seed)
    tar = np.round(2.5 * rng.normal(1.0, 1, n_tar) + 0.7, 1)
    non = np.round(2.5 * rng.normal(-1.0, 1, n_non) + 0.7, 1)
    return tar, non


def independent_min_cllr(tar, non, p):
    scores = list(tar) + list(non)
    labels = [True] * len(tar) + [False] * len(non)
    llr = closed_form_pav_llr(scores, labels)
    return log_cost_cllr(llr[: len(tar)], llr[len(tar) :], p)


OPS = [0.01, (0.001, 10.0, 1.0), (0.5, 1.0, 1.0), np.array([0.2, 1.0, 3.0])]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("p", [0.5, 0.05])
def test_every_number_against_independent_computations(seed, p):
    tar, non = llr_set(seed)
    rep = calibration_report(tar, non, operating_points=OPS, p_target=p, name="sys")
    assert (rep.n_targets, rep.n_nontargets, rep.p_target, rep.name) == (35, 50, p, "sys")
    assert rep.cllr == pytest.approx(log_cost_cllr(tar, non, p), rel=1e-12)
    assert rep.min_cllr == pytest.approx(independent_min_cllr(tar, non, p), rel=1e-10)
    assert rep.calibration_loss == pytest.approx(
        log_cost_cllr(tar, non, p) - independent_min_cllr(tar, non, p), rel=1e-9
    )
    assert rep.eer == pytest.approx(float(rocch_eer(tar, non)), rel=1e-14)
    # PRBEP: misses = false alarms m on the hull, precision = recall = 1 - m / N_tar
    assert rep.prbep_errors == pytest.approx(float(rocch_prbep(tar, non)), rel=1e-14)
    assert rep.prbep == pytest.approx(1 - float(rocch_prbep(tar, non)) / tar.size, rel=1e-14)
    assert len(rep.operating_points) == len(OPS)
    for op, spec in zip(rep.operating_points, OPS):
        pt, cm, cf = (spec, 1.0, 1.0) if np.ndim(spec) == 0 else tuple(spec)
        assert (op.p_target, op.c_miss, op.c_fa) == (pt, cm, cf)
        assert op.effective_prior == pytest.approx(cm * pt / (cm * pt + cf * (1 - pt)), rel=1e-14)
        assert op.act_dcf == pytest.approx(brute_act_dcf(tar, non, pt, cm, cf), rel=1e-12)
        assert op.min_dcf == pytest.approx(brute_min_dcf(tar, non, pt, cm, cf), rel=1e-12)
        assert op.calibration_loss == pytest.approx(op.act_dcf - op.min_dcf, abs=1e-15)
        assert op.min_dcf <= op.act_dcf + 1e-15


def test_miscalibration_shows_as_calibration_loss_and_pav_removes_it():
    tar, non = llr_set(4, 300, 500)
    rep = calibration_report(tar, non)
    assert rep.calibration_loss > 0.05
    # report of the PAV-recalibrated LLRs: Cllr = minCllr, no calibration loss (thesis 7.7.4)
    scores = np.r_[tar, non]
    labels = [True] * tar.size + [False] * non.size
    llr = np.array(closed_form_pav_llr(scores, labels))
    after = calibration_report(llr[: tar.size], llr[tar.size :])
    assert after.cllr == pytest.approx(rep.min_cllr, rel=1e-10)
    assert after.calibration_loss == pytest.approx(0.0, abs=1e-10)
    assert after.eer == rep.eer and after.prbep == rep.prbep  # same order, same hull


def test_hand_worked_uninformative_and_perfect_systems():
    flat = calibration_report([0.0, 0.0], [0.0, 0.0, 0.0], operating_points=[0.01, 0.5])
    assert flat.cllr == 1.0 and flat.min_cllr == 1.0 and flat.calibration_loss == 0.0
    assert flat.eer == 0.5
    assert flat.prbep_errors == pytest.approx(6 / 5)  # misses m, false alarms 3 (1 - m / 2) = m
    assert flat.prbep == pytest.approx(1 - 3 / 5)  # precision = recall = 1 - m / 2
    assert [op.act_dcf for op in flat.operating_points] == [1.0, 1.0]  # p=0.5: all accepted
    assert [op.min_dcf for op in flat.operating_points] == [1.0, 1.0]

    perfect = calibration_report([np.inf, 30.0], [-np.inf, -30.0], operating_points=[0.01])
    assert perfect.cllr == pytest.approx(0.0, abs=1e-12) and perfect.min_cllr == 0.0
    assert perfect.eer == 0.0 and perfect.prbep == 1.0 and perfect.prbep_errors == 0.0
    assert perfect.operating_points[0].act_dcf == 0.0


def test_infinitely_wrong_llrs_give_infinite_cllr_and_loss():
    rep = calibration_report([-np.inf, 2.0, 3.0], [-1.0, 0.5], operating_points=[0.1])
    assert rep.cllr == math.inf and rep.calibration_loss == math.inf
    assert rep.min_cllr == pytest.approx(
        independent_min_cllr([-np.inf, 2.0, 3.0], [-1.0, 0.5], 0.5), rel=1e-12
    )
    text = str(rep)
    assert "inf" in text and "% of Cllr" not in text and "nan" not in text


def test_scores_and_labels_via_from_labels():
    tar, non = llr_set(5)
    rng = np.random.default_rng(0)
    scores = np.r_[tar, non]
    labels = np.r_[np.ones(tar.size, bool), np.zeros(non.size, bool)]
    perm = rng.permutation(scores.size)
    a = calibration_report(*from_labels(scores[perm], labels[perm]), operating_points=[0.1])
    b = calibration_report(tar, non, operating_points=[0.1])
    for key in ("cllr", "min_cllr", "eer", "prbep"):
        assert getattr(a, key) == pytest.approx(getattr(b, key), rel=1e-12)
    assert a.operating_points == b.operating_points


def test_a_bare_prior_and_no_operating_points():
    tar, non = llr_set(6)
    one = calibration_report(tar, non, operating_points=0.05)
    assert [op.p_target for op in one.operating_points] == [0.05]
    none = calibration_report(tar, non, operating_points=())
    assert none.operating_points == () and "DCF" not in str(none)


@pytest.mark.parametrize(
    "ops, error, match",
    [
        ([(0.01, 1.0)], ValueError, r"operating_points\[0\] must be a target prior or a tuple"),
        ([0.1, (0.01, 1.0, 1.0, 1.0)], ValueError, r"operating_points\[1\] must be"),
        ([1.0], ValueError, r"operating_points\[0\] P_target must be strictly between 0 and 1"),
        ([0.0], ValueError, r"operating_points\[0\] P_target"),
        (
            [(0.1, 0.0, 1.0)],
            ValueError,
            r"operating_points\[0\] C_miss must be a finite number > 0",
        ),
        ([(0.1, 1.0, -2.0)], ValueError, r"operating_points\[0\] C_fa"),
        ([(0.1, 1.0, np.nan)], ValueError, r"operating_points\[0\] C_fa"),
        (["0.1"], TypeError, r"operating_points\[0\] P_target must be a real number"),
    ],
)
def test_bad_operating_points_name_the_culprit(ops, error, match):
    with pytest.raises(error, match=match):
        calibration_report([1.0, 2.0], [0.0], operating_points=ops)


@pytest.mark.parametrize(
    "tar, non, kwargs, match",
    [
        ([1.0, np.nan], [0.0], {}, "NaN"),
        ([], [0.0], {}, "empty"),
        ([1.0], [[0.0]], {}, "1-D"),
        ([1.0], [0.0], {"p_target": 1.0}, "p_target"),
    ],
)
def test_bad_llrs_or_prior_raise_value_error(tar, non, kwargs, match):
    with pytest.raises(ValueError, match=match):
        calibration_report(tar, non, **kwargs)


def test_to_dict_is_json_ready_and_complete():
    tar, non = llr_set(7)
    rep = calibration_report(tar, non, operating_points=OPS[:2], name="x")
    d = json.loads(json.dumps(rep.to_dict()))
    for key in (
        "name",
        "n_targets",
        "n_nontargets",
        "p_target",
        "cllr",
        "min_cllr",
        "eer",
        "prbep",
        "calibration_loss",
    ):
        assert d[key] == getattr(rep, key)
    assert len(d["operating_points"]) == 2
    for got, op in zip(d["operating_points"], rep.operating_points):
        for key in (
            "p_target",
            "c_miss",
            "c_fa",
            "effective_prior",
            "act_dcf",
            "min_dcf",
            "calibration_loss",
        ):
            assert got[key] == getattr(op, key)


def test_report_is_immutable():
    rep = calibration_report([1.0, 2.0], [0.0])
    assert isinstance(rep, CalibrationReport) and isinstance(rep.operating_points, tuple)
    with pytest.raises(AttributeError):
        rep.cllr = 0.0


def test_str_is_a_readable_aligned_table():
    tar, non = llr_set(8, 1200, 24000)
    rep = calibration_report(tar, non, operating_points=OPS, name="dev fusion")
    lines = str(rep).splitlines()
    assert lines[0] == "Calibration analysis: dev fusion"
    assert lines[1] == "  1,200 target and 24,000 non-target trials"
    assert lines[2] == f"  Cllr              {rep.cllr:9.4f} bits"
    assert lines[3] == f"  minCllr (PAV)     {rep.min_cllr:9.4f} bits"
    assert lines[4].startswith(f"  calibration loss  {rep.calibration_loss:9.4f} bits  (")
    assert f"{100 * rep.calibration_loss / rep.cllr:.1f} % of Cllr" in lines[4]
    assert lines[5] == f"  EER (ROCCH)       {100 * rep.eer:9.3f} %"
    assert lines[6] == (
        f"  PRBEP             {100 * rep.prbep:9.3f} %  (precision = recall; "
        f"{rep.prbep_errors:.1f} misses = false alarms)"
    )
    assert lines[7] == "  normalized DCF"
    header, rows = lines[8], lines[9 : 9 + len(OPS)]
    assert lines[9 + len(OPS)].startswith("  score thresholds (accept iff score >= t")
    thresholds = lines[10 + len(OPS) :]
    assert len(thresholds) == 1 + len(OPS) and thresholds[0].split()[:2] == [
        "EER",
        f"{rep.eer_threshold.value:.6g}",
    ]
    # every row is as wide as the header and its numbers end under their column titles
    for title in ("C_miss", "C_fa", "actDCF", "minDCF", "loss"):
        end = header.index(title) + len(title)
        for row, _ in zip(rows, rep.operating_points):
            assert len(row) == len(header)
            assert row[end - 1] != " " and (end == len(row) or row[end] == " ")
    for row, op in zip(rows, rep.operating_points):
        fields = row.split()
        assert float(fields[0]) == pytest.approx(op.p_target, rel=1e-3)
        assert float(fields[3]) == pytest.approx(op.effective_prior, rel=1e-3)
        assert fields[4:] == [
            f"{op.act_dcf:.4f}",
            f"{op.min_dcf:.4f}",
            f"{op.calibration_loss:.4f}",
        ]
    assert all(len(line) <= 100 for line in lines)


def test_docstring_example():
    import doctest

    import focal.metrics.report as module

    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted >= 2


def test_str_at_another_prior_says_what_the_numbers_are():
    tar, non = llr_set(9)
    text = str(calibration_report(tar, non, p_target=0.01, operating_points=()))
    assert "bits" not in text  # normalized by the prior entropy: not bits any more
    assert "Cllr at p_target=0.01: cross-entropy / prior entropy, 1 = uninformative" in text
    assert str(calibration_report(tar, non)).splitlines()[0] == "Calibration analysis"
