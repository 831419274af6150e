"""focal evaluate --partition and --log10: partitioned scoring and log10 LRs from the command
line, through the evaluate workflow.
"""

import json

import numpy as np
import pytest

from focal.metrics import calibration_report, from_labels, partition_report
from focal.workflows import evaluate_binary
from tests._support.cli import EVAL, SPK, run_main

KEY = SPK / "eval.key"


def _key():
    rows = [line.split() for line in KEY.read_text().splitlines() if line.strip()]
    return rows


@pytest.fixture(scope="module")
def partitions(tmp_path_factory):
    """A partition file of the sample key: gender by the model's number, channel by the
    segment's, in an order of their own, with a comment and a trial not in the key.
    """
    rows = _key()
    lines = ["modelid segmentid gender channel", "# made for the test"]
    for model, test, _ in reversed(rows):
        gender = "f" if int(model[3:]) % 2 else "m"
        channel = "mic" if int(test[3:7]) % 3 == 0 else "tel"
        lines.append(f"{model} {test} {gender} {channel}")
    lines.append("spk9999 seg9999_00000 f tel")
    path = tmp_path_factory.mktemp("parts") / "parts.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def _expected(path, column):
    """The partition report of a score file computed here: its trials' labels by hand."""
    scores = {(m, t): float(s) for m, t, s in (ln.split() for ln in path.read_text().splitlines())}
    rows = _key()
    x = np.array([scores[m, t] for m, t, _ in rows])
    y = np.array([lab == "target" for *_, lab in rows])
    if column == "gender":
        labels = np.array(["f" if int(m[3:]) % 2 else "m" for m, _, _ in rows])
    else:
        labels = np.array(["mic" if int(t[3:7]) % 3 == 0 else "tel" for _, t, _ in rows])
    tar, non = from_labels(x, y)
    return partition_report(tar, non, {column: labels[y]}, {column: labels[~y]},
                            operating_points=[0.01], name=str(path))  # fmt: skip


def test_the_workflow_gives_each_systems_partition_report(partitions):
    evaluation = evaluate_binary(
        EVAL[:2], KEY, [0.01], partition=partitions, partition_columns=["gender"]
    )
    assert len(evaluation.partitions) == 2
    for path, got in zip(EVAL[:2], evaluation.partitions):
        expected = _expected(path, "gender")
        assert got.columns == ("gender",)
        assert [p.report for p in got.partitions] == [p.report for p in expected.partitions]
        assert got.equalized == expected.equalized
    assert evaluation.to_dict()[0]["partitions"]["columns"] == ["gender"]


def test_cli_prints_and_jsons_the_partitions(partitions, capsys):
    status, out, err = run_main(
        capsys, "evaluate", EVAL[0], "--key", KEY, "--partition", partitions, "--c-primary",
        "sre16",
    )  # fmt: skip
    assert status == 0, err
    assert "Partitioned analysis" in out and "equalized over gender x channel" in out
    assert "gender=f, channel=mic" in out
    status, out, err = run_main(
        capsys, "evaluate", EVAL[0], "--key", KEY, "--partition", partitions,
        "--partition-columns", "channel", "--json",
    )  # fmt: skip
    assert status == 0, err
    (doc,) = json.loads(out)
    assert doc["partitions"]["columns"] == ["channel"]
    expected = _expected(EVAL[0], "channel")
    assert doc["partitions"]["equalized"][0]["cllr"] == expected.equalized[0].cllr


def test_partition_errors_name_the_file(partitions, tmp_path, capsys):
    short = tmp_path / "short.txt"
    short.write_text("model test gender\n" + "spk0118 seg0169_00784 m\n")
    status, _, err = run_main(capsys, "evaluate", EVAL[0], "--key", KEY, "--partition", short)
    assert status == 1 and f"{short}:" in err and "no partition labels" in err
    status, _, err = run_main(
        capsys, "evaluate", EVAL[0], "--key", KEY, "--partition", partitions,
        "--partition-columns", "lang",
    )  # fmt: skip
    assert status == 1 and "lang" in err and "gender" in err
    bad = tmp_path / "bad.txt"
    bad.write_text("model test gender\nspk0118 seg0169_00784\n")
    status, _, err = run_main(capsys, "evaluate", EVAL[0], "--key", KEY, "--partition", bad)
    assert status == 1 and f"{bad}:2:" in err
    twice = tmp_path / "twice.txt"
    twice.write_text("model test gender\nspk1 seg1 m\n\nspk1 seg1 f\n")
    status, _, err = run_main(capsys, "evaluate", EVAL[0], "--key", KEY, "--partition", twice)
    assert status == 1 and f"{twice}:4: trial repeated (first at line 2)" in err


def test_log10_scores_give_the_same_measures_and_log10_thresholds(tmp_path, capsys):
    lines = [ln.split() for ln in EVAL[0].read_text().splitlines()]
    log10 = tmp_path / "log10.scores"
    log10.write_text("".join(f"{m} {t} {float(s) / np.log(10):.17g}\n" for m, t, s in lines))
    evaluation = evaluate_binary([log10], KEY, [0.01], log10=True)
    (got,) = evaluation.reports
    (ref,) = evaluate_binary([EVAL[0]], KEY, [0.01]).reports
    assert got.cllr == pytest.approx(ref.cllr, rel=1e-12) and got.eer == ref.eer
    assert got.eer_threshold.value == pytest.approx(ref.eer_threshold.value / np.log(10))
    threshold = got.operating_points[0].min_dcf_threshold.value
    assert threshold == pytest.approx(ref.operating_points[0].min_dcf_threshold.value / np.log(10))
    status, out, err = run_main(capsys, "evaluate", log10, "--key", KEY, "--log10")
    assert status == 0 and f"{100 * ref.eer:9.3f} %" in out


def test_dask_refuses_partitions_by_name(partitions, capsys):
    pytest.importorskip("dask")
    status, _, err = run_main(
        capsys, "evaluate", EVAL[0], "--key", KEY, "--partition", partitions, "--dask"
    )
    assert status == 1 and "--partition" in err and "--dask" in err


def test_calibration_report_is_unchanged_by_partitions(partitions):
    evaluation = evaluate_binary([EVAL[0]], KEY, [0.01], partition=partitions)
    tar, non = evaluation.systems[str(EVAL[0])]
    assert evaluation.reports[0] == calibration_report(tar, non, [0.01], name=str(EVAL[0]))


def test_apply_log10_writes_log10_lrs_that_evaluate_log10_reads(tmp_path, capsys):
    from tests._support.cli import DEV

    model = tmp_path / "m.json"
    status, _, err = run_main(
        capsys, "train", "--scores", DEV[0], "--key", SPK / "dev.key", "-o", model
    )
    assert status == 0, err
    plain, log10 = tmp_path / "out.txt", tmp_path / "out10.txt"
    assert run_main(capsys, "apply", model, EVAL[0], "-o", plain)[0] == 0
    assert run_main(capsys, "apply", model, EVAL[0], "-o", log10, "--log10")[0] == 0
    a = np.array([float(ln.split()[2]) for ln in plain.read_text().splitlines()])
    b = np.array([float(ln.split()[2]) for ln in log10.read_text().splitlines()])
    np.testing.assert_allclose(b, a / np.log(10), rtol=1e-15)
    (ref,) = evaluate_binary([plain], KEY, [0.01]).reports
    (got,) = evaluate_binary([log10], KEY, [0.01], log10=True).reports
    assert got.cllr == pytest.approx(ref.cllr, rel=1e-12) and got.min_cllr == ref.min_cllr


def test_the_html_report_holds_what_the_command_printed(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    status, out, err = run_main(
        capsys, "evaluate", EVAL[0], "--key", KEY, "--ci", "0.9", "--bootstrap", "30",
        "--c-primary", "sre16", "--conventional-eer", "--plot", tmp_path / "rep",
        "--plot-size", "400x300",
    )  # fmt: skip
    assert status == 0, err
    page = (tmp_path / "rep" / "index.html").read_text()
    import html

    text = html.unescape(page)
    printed = out.split("report:")[0].strip()
    for line in printed.splitlines()[1:]:  # the title names the file by its name alone
        assert line.strip() in text, line  # every printed line, numbers included
    assert "[" in text and "C_primary (SRE16)" in text and "conventional EER" in text


def test_train_log10_prints_the_map_apply_log10_writes(tmp_path, capsys):
    from tests._support.cli import DEV

    model = tmp_path / "m.json"
    status, out, err = run_main(
        capsys, "train", "--scores", DEV[0], "--key", SPK / "dev.key", "-o", model, "--log10"
    )
    assert status == 0, err
    (formula,) = [ln for ln in out.splitlines() if "log10 LR =" in ln]
    # "log10 LR = b + w * name": the printed map, evaluated here on the eval scores
    _, rhs = formula.split("=", 1)
    parts = rhs.split()
    b, sign, w = float(parts[0]), parts[1], float(parts[2])
    w = w if sign == "+" else -w
    written = tmp_path / "out10.txt"
    assert run_main(capsys, "apply", model, EVAL[0], "-o", written, "--log10")[0] == 0
    scores = np.array([float(ln.split()[2]) for ln in EVAL[0].read_text().splitlines()])
    got = np.array([float(ln.split()[2]) for ln in written.read_text().splitlines()])
    np.testing.assert_allclose(got, b + w * scores, rtol=1e-5, atol=1e-5)


def test_train_pav_elub_clips_to_the_limits_of_the_training_llrs(tmp_path, capsys):
    import focal
    from focal.io import align_trials, read_key, read_scores
    from focal.metrics import elub_bounds
    from focal.workflows import train_fusion
    from tests._support.cli import DEV

    key = SPK / "dev.key"
    model = tmp_path / "m.json"
    args = ["train", "--scores", *DEV, "--key", key, "--pav", "--pseudo-count", "0"]
    status, out, err = run_main(capsys, *args, "--elub", "-o", model)
    assert status == 0 and "ELUB" in out, err
    free = train_fusion(DEV, key, pav=True, pseudo_count=0).model  # the same fit, unclipped
    X, y = align_trials(read_key(key), *map(read_scores, DEV))[:2]
    train = free.decision_function(X)
    lower, upper = elub_bounds(train[y], train[~y])
    clipped = focal.load(model)
    np.testing.assert_array_equal(clipped.decision_function(X), np.clip(train, lower, upper))
    assert clipped[0].bounds is None  # the PAV step clips, not the fusion


def test_train_elub_without_pav_clips_the_fusion_to_the_limits_of_its_training_llrs(
    tmp_path, capsys
):
    import json

    import focal
    import focal.runtime
    from focal.io import align_trials, read_key, read_scores
    from focal.metrics import elub_bounds
    from tests._support.cli import DEV, EVAL

    key = SPK / "dev.key"
    model = tmp_path / "m.json"
    args = ["train", "--scores", *DEV, "--key", key, "--elub", "-o", model]
    status, out, err = run_main(capsys, *args)
    assert status == 0, err
    X, y = align_trials(read_key(key), *map(read_scores, DEV))[:2]
    fused = focal.load(model)
    train = X @ fused.coef_ + fused.intercept_  # the fusion's training LLRs, written out here
    lower, upper = elub_bounds(train[y], train[~y])
    np.testing.assert_allclose(fused.bounds_, [lower, upper], rtol=1e-12)
    (line,) = [ln for ln in out.splitlines() if "ELUB" in ln]
    assert f"{lower:.4g} to {upper:.4g}" in line
    expected = np.clip(train, lower, upper)
    got = fused.decision_function(X)
    assert (got == fused.bounds_[0]).any() and (got == fused.bounds_[1]).any()  # clip at work
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)
    status, out, err = run_main(capsys, *args[:-1], tmp_path / "j.json", "--json")
    assert status == 0, err
    np.testing.assert_array_equal(json.loads(out)["elub"], fused.bounds_)
    written = tmp_path / "eval.txt"  # focal apply (the runtime) writes the clipped LLRs
    assert run_main(capsys, "apply", model, *EVAL, "--align", "-o", written)[0] == 0
    applied = np.array([float(ln.split()[2]) for ln in written.read_text().splitlines()])
    lower, upper = fused.bounds_  # the saved clip, bit for bit (the text is repr's)
    assert applied.min() >= lower and applied.max() == upper


def test_summary_table_of_four_systems(capsys):
    """``focal evaluate a b c d --summary-only``: a line per system, in the order given, each
    the numbers of that system's report computed here.
    """
    from focal.io import align_trials, read_key, read_scores

    paths = [*EVAL, SPK / "eval_varlen_sys1.scores"]
    argv = ["evaluate", *paths, "--key", KEY, "--p-target", "0.01", "0.001"]
    status, out, err = run_main(capsys, *argv, "--c-primary", "sre18", "--summary-only")
    assert status == 0, err
    assert "Calibration analysis" not in out
    rows = out.strip().splitlines()[3:]
    assert [r.split()[0] for r in rows] == [p.name for p in paths]
    key = read_key(KEY)
    for row, path in zip(rows, paths):
        X, y = align_trials(key, read_scores(path))[:2]
        ref = calibration_report(X[y, 0], X[~y, 0], [0.01, 0.001], c_primary="sre18")
        expected = [ref.cllr, ref.min_cllr, 100 * ref.eer]
        for op in ref.operating_points:
            expected += [op.act_dcf, op.min_dcf]
        expected += [ref.c_primary.actual, ref.c_primary.minimum]
        decimals = [4, 4, 2] + [4] * 6
        assert row.split()[1:] == [f"{v:.{d}f}" for v, d in zip(expected, decimals)]
