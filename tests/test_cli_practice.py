"""Command-line options of the practitioners' features: each gives the library's numbers."""

import json
import logging

import numpy as np
import pytest

from focal.io import align_trials, read_key, read_scores
from focal.metrics import bootstrap_ci, c_primary, calibration_report, conventional_eer, rocch
from tests._support.cli import EVAL, SPK, STD, run_main


def trials(path):
    X, y, models, tests = align_trials(read_key(SPK / "eval.key"), read_scores(path))
    return X[:, 0], y.astype(bool), models, tests


def test_evaluate_cost_ci_cluster_c_primary_conventional_eer(capsys):
    status, out, err = run_main(
        capsys,
        "evaluate",
        EVAL[0],
        "--key",
        SPK / "eval.key",
        "--p-target",
        "0.001",
        "--cost",
        "0.01:1:10",
        "--ci",
        "0.9",
        "--bootstrap",
        "60",
        "--cluster",
        "both",
        "--seed",
        "3",
        "--c-primary",
        "sre16",
        "--conventional-eer",
        "--json",
    )
    assert status == 0, err
    (d,) = json.loads(out)
    s, y, models, tests = trials(EVAL[0])
    tar, non = s[y], s[~y]
    ref = calibration_report(tar, non, operating_points=[0.001, (0.01, 1, 10)])
    assert [(o["p_target"], o["c_miss"], o["c_fa"]) for o in d["operating_points"]] == [
        (0.001, 1.0, 1.0),
        (0.01, 1.0, 10.0),
    ]
    assert [o["min_dcf"] for o in d["operating_points"]] == [
        o.min_dcf for o in ref.operating_points
    ]
    assert d["eer_threshold"] == rocch(tar, non).eer_threshold.value
    assert (
        d["operating_points"][1]["min_dcf_threshold"]
        == rocch(tar, non).min_dcf_threshold(0.01, 1, 10).value
    )
    assert d["eer_conventional"] == conventional_eer(tar, non)
    assert d["c_primary"]["c_primary"] == c_primary(tar, non, "sre16").actual
    direct = bootstrap_ci(
        "cllr",
        tar,
        non,
        n_bootstrap=60,
        confidence=0.9,
        random_state=3,
        tar_clusters=(models[y], tests[y]),
        non_clusters=(models[~y], tests[~y]),
    )
    got = d["intervals"][0]
    assert got["resampling"] == "two-way"
    assert (got["low"], got["high"]) == pytest.approx((direct.low, direct.high), rel=1e-12)


def test_evaluate_c_primary_over_the_cost_points_and_bad_costs(capsys):
    status, out, _ = run_main(
        capsys,
        "evaluate",
        EVAL[0],
        "--key",
        SPK / "eval.key",
        "--cost",
        "0.01",
        "--cost",
        "0.05:1:1",
        "--c-primary",
        "cost",
    )
    assert status == 0 and "C_primary  actual" in out
    status, _, err = run_main(
        capsys, "evaluate", EVAL[0], "--key", SPK / "eval.key", "--cost", "0.01:1"
    )
    assert status == 2 and "P_TARGET:C_MISS:C_FA" in err
    status, _, err = run_main(
        capsys, "evaluate", EVAL[0], "--key", SPK / "eval.key", "--c-primary", "sre99"
    )
    assert status == 1 and "sre16" in err


def test_normalize_command(capsys, tmp_path):
    rng = np.random.default_rng(0)
    models, tests, cohort = ["m1", "m2"], ["t1", "t2", "t3"], [f"c{i}" for i in range(6)]
    E, T = rng.normal(size=(2, 6)), rng.normal(size=(3, 6))
    (tmp_path / "e.txt").write_text(
        "".join(
            f"{m} {c} {float(E[i, j])!r}\n"
            for i, m in enumerate(models)
            for j, c in enumerate(cohort)
        )
    )
    (tmp_path / "t.txt").write_text(
        "".join(
            f"{c} {t} {float(T[i, j])!r}\n"
            for i, t in enumerate(tests)
            for j, c in enumerate(cohort)
        )
    )
    (tmp_path / "s.txt").write_text("m1 t1 1.5\nm2 t3 -0.5\n")
    status, out, err = run_main(
        capsys,
        "normalize",
        tmp_path / "s.txt",
        "--enrol-cohort",
        tmp_path / "e.txt",
        "--test-cohort",
        tmp_path / "t.txt",
        "--method",
        "z-norm",
        "-o",
        tmp_path / "n.txt",
        "--json",
    )
    assert status == 0, err
    assert json.loads(out)["n_enrolment_models"] == 2
    got = read_scores(tmp_path / "n.txt").scores
    np.testing.assert_allclose(
        got, [(1.5 - E[0].mean()) / E[0].std(), (-0.5 - E[1].mean()) / E[1].std()], rtol=1e-12
    )
    status, _, err = run_main(
        capsys, "normalize", tmp_path / "s.txt", "--method", "t-norm", "-o", tmp_path / "n.txt"
    )
    assert status == 1 and "test_cohort" in err


def test_verbose_logs_the_bootstrap(capsys):
    logger = logging.getLogger("focal")
    try:
        status, _, err = run_main(
            capsys,
            "evaluate",
            EVAL[0],
            "--key",
            SPK / "eval.key",
            "--ci",
            "0.9",
            "--bootstrap",
            "20",
            "-v",
        )
        assert status == 0 and "bootstrap (trial resampling): 20 replicates" in err
        status, _, err = run_main(
            capsys,
            "evaluate",
            EVAL[0],
            "--key",
            SPK / "eval.key",
            "--ci",
            "0.9",
            "--bootstrap",
            "20",
        )
        assert "bootstrap" not in err
    finally:
        logger.setLevel(logging.WARNING)


def test_train_cost_is_its_effective_prior(capsys, tmp_path):
    status, out, err = run_main(
        capsys,
        "train",
        "--scores",
        *EVAL[:2],
        "--key",
        SPK / "eval.key",
        "--cost",
        "0.01:1:10",
        "-o",
        tmp_path / "m.json",
    )
    assert status == 0, err
    from focal import load

    model = load(tmp_path / "m.json")
    assert model.p_target == pytest.approx(0.01 / (0.01 + 0.99 * 10))


def test_sws_cost_in_either_form(capsys):
    paths = [
        STD / n
        for n in (
            "sws_sample.stdlist.xml",
            "sws_sample.rttm",
            "sws_sample.ecf.xml",
            "sws_sample.tlist.xml",
        )
    ]
    a = run_main(capsys, "sws", *paths, "--cost", "0.001:10:1", "--json")
    b = run_main(capsys, "sws", *paths, "--cost", "0.001", "10", "1", "--json")
    assert a[0] == b[0] == 0 and json.loads(a[1]) == json.loads(b[1])
