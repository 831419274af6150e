"""The command line speaks to its user: score direction, chance-level systems, steps and their
times, system names, conflicting operating points, trial sets, closed-set files, a closed
standard output, one-class keys, and the summary table of several systems.
"""

import json
import re
import subprocess
import sys

import pytest

from focal.io import align_trials, read_key, read_scores
from focal.metrics import calibration_report, rocch
from tests._support.cli import DEV, EVAL, LID, ROOT, SPK, run_main

KEY = SPK / "eval.key"


def _negated(src, dst):
    """A copy of a score file with every score negated: distances (lower = target)."""
    lines = []
    for line in src.read_text().splitlines():
        model, test, score = line.split()
        lines.append(f"{model} {test} {-float(score)!r}\n")
    dst.write_text("".join(lines))
    return dst


def _trials(path, key=KEY):
    X, y, _, _ = align_trials(read_key(key), read_scores(path))
    return X[:, 0], y


# ----------------------------------------------------------------------- score direction


def test_distances_are_evaluated_as_negated_scores_with_a_hint_without(capsys, tmp_path):
    distances = _negated(EVAL[0], tmp_path / "dist.scores")
    status, out, err = run_main(capsys, "evaluate", distances, "--key", KEY, "--json")
    assert status == 0
    (plain,) = json.loads(out)
    assert plain["eer"] == 0.5  # reversed scores: the hull is the chance diagonal
    assert "dist.scores: ROCCH-EER 50.0 % is above 45 %" in err
    assert "--scores-are distance" in err
    status, out, err = run_main(
        capsys, "evaluate", distances, "--key", KEY, "--scores-are", "distance", "--json"
    )
    assert status == 0 and err == ""
    (got,) = json.loads(out)
    s, y = _trials(EVAL[0])
    ref = calibration_report(s[y], s[~y])
    assert (got["eer"], got["min_cllr"], got["prbep"]) == (ref.eer, ref.min_cllr, ref.prbep)
    assert got["operating_points"][0]["min_dcf"] == ref.operating_points[0].min_dcf
    assert got["eer_threshold"] == rocch(s[y], s[~y]).eer_threshold.value


def test_a_system_read_the_wrong_way_is_hinted_at(capsys, tmp_path):
    status, _, err = run_main(capsys, "evaluate", EVAL[0], "--key", KEY, "--scores-are", "distance")
    assert status == 0
    assert "ROCCH-EER 50.0 % is above 45 %" in err and "were read as distances" in err


def test_train_and_apply_say_which_way_the_scores_point(capsys, tmp_path):
    dev = _negated(DEV[0], tmp_path / "dev_d.scores")
    model = tmp_path / "m.json"
    status, out, err = run_main(
        capsys, "train", "--scores", dev, "--key", SPK / "dev.key", "-o", model, "--json"
    )
    assert status == 0
    assert json.loads(out)["coef"][0] < 0
    assert "every system gets a negative weight (dev_d.scores)" in err
    status, out, err = run_main(
        capsys, "train", "--scores", dev, "--key", SPK / "dev.key", "-o", model,
        "--scores-are", "distance",
    )  # fmt: skip
    assert status == 0 and "warning" not in err
    # applied to distances: the model trained on them takes them as they are
    evald = _negated(EVAL[0], tmp_path / "eval_d.scores")
    out_path = tmp_path / "llr.txt"
    status, _, err = run_main(
        capsys, "apply", model, evald, "-o", out_path, "--scores-are", "distance"
    )
    assert status == 0, err
    # a model trained on similarities refuses distances
    similar = tmp_path / "s.json"
    run_main(capsys, "train", "--scores", DEV[0], "--key", SPK / "dev.key", "-o", similar)
    status, _, err = run_main(
        capsys, "apply", similar, evald, "-o", tmp_path / "x.txt", "--scores-are", "distance"
    )
    assert status == 1
    assert "a positive weight" in err and "not trained on distances" in err
    assert not (tmp_path / "x.txt").exists()


# ----------------------------------------------------------------------- steps and progress

_STEP = re.compile(r"^focal: (.+): \d+\.\d\d s$", re.M)


@pytest.mark.parametrize(
    "argv, steps",
    [
        (["evaluate", EVAL[0], "--key", KEY], ["read and align", "measures of"]),
        (
            ["train", "--scores", *DEV, "--key", SPK / "dev.key", "-o", "{tmp}/m.json"],
            ["read and align", "fit on 4,400 trials", "write"],
        ),
        (
            ["train-multiclass", "--scores", LID / "dev_sys1_open.txt", "--key", LID / "dev.key"]
            + ["-o", "{tmp}/lid.json"],
            ["read and align", "fit on", "write"],
        ),
        (
            ["evaluate-multiclass", LID / "eval_sys1_open.txt", "--key", LID / "eval.key"],
            ["read", "align and measure"],
        ),
        (
            ["normalize", EVAL[0], "-o", "{tmp}/n.txt", "--method", "z-norm"]
            + ["--enrol-cohort", "{tmp}/cohort.txt"],
            ["read", "cohort statistics", "normalize"],
        ),
    ],
)
def test_verbose_logs_each_step_with_its_time(capsys, tmp_path, argv, steps):
    (tmp_path / "cohort.txt").write_text(
        "".join(f"spk{m:04d} c{c} {0.1 * (m + c):.2f}\n" for m in range(1000) for c in range(3))
    )
    argv = [str(a).replace("{tmp}", str(tmp_path)) for a in argv]
    status, _, err = run_main(capsys, *argv, "-v")
    logged = _STEP.findall(err)
    for what in steps:
        assert any(line.startswith(what) for line in logged), (what, err)
    if argv[0] != "normalize":  # its cohort does not cover the sample's models
        assert status == 0, err


def test_verbose_apply_and_plots(capsys, tmp_path):
    model = tmp_path / "m.json"
    run_main(capsys, "train", "--scores", *DEV, "--key", SPK / "dev.key", "-o", model)
    status, _, err = run_main(
        capsys, "apply", model, *EVAL, "--align", "-o", tmp_path / "o.txt", "-v"
    )
    assert status == 0
    assert [s.split()[0] for s in _STEP.findall(err)] == ["read", "apply"]
    pytest.importorskip("matplotlib")
    status, _, err = run_main(
        capsys, "evaluate", EVAL[0], "--key", KEY, "--plot", tmp_path / "p", "-v"
    )
    assert status == 0 and any(s.startswith("plots in") for s in _STEP.findall(err))


def test_progress_shows_each_long_step(capsys, tmp_path):
    pytest.importorskip("tqdm")
    status, _, err = run_main(
        capsys, "train", "--scores", *DEV, "--key", SPK / "dev.key", "-o", tmp_path / "m.json",
        "--progress",
    )  # fmt: skip
    assert status == 0
    assert "read and align" in err and "fit on 4,400 trials" in err  # the bars' labels
    status, _, err = run_main(
        capsys, "evaluate", *EVAL, "--key", KEY, "--ci", "0.9", "--bootstrap", "20", "--progress"
    )
    assert status == 0 and "bootstrap" in err and "read and align" in err


# ----------------------------------------------------------------------- system names


def test_apply_names_the_systems_of_renamed_files(capsys, tmp_path):
    model = tmp_path / "m.json"
    run_main(capsys, "train", "--scores", *DEV[:2], "--key", SPK / "dev.key", "-o", model)
    renamed = [tmp_path / "first.txt", tmp_path / "second.txt"]
    for src, dst in zip(EVAL, renamed):
        dst.write_bytes(src.read_bytes())
    status, _, err = run_main(capsys, "apply", model, *renamed, "--align", "-o", tmp_path / "o")
    assert status == 1 and "--systems" in err and not (tmp_path / "o").exists()
    status, _, err = run_main(
        capsys, "apply", model, *renamed, "--align", "-o", tmp_path / "o",
        "--systems", "sys1", "sys2",
    )  # fmt: skip
    assert status == 0, err
    status, _, err = run_main(
        capsys, "apply", model, *renamed, "--align", "-o", tmp_path / "o2",
        "--systems", "sys2", "sys1",
    )  # fmt: skip
    assert status == 1 and "order" in err
    status, _, err = run_main(
        capsys, "apply", model, *renamed, "--align", "-o", tmp_path / "o3", "--systems", "sys1"
    )
    assert status == 1 and "1 name(s) for 2 score file(s)" in err


def test_same_file_names_in_other_folders_are_told_apart(capsys, tmp_path):
    paths = []
    for folder, src in zip(("alpha", "beta"), DEV[:2]):
        (tmp_path / folder).mkdir()
        paths.append(tmp_path / folder / "scores.txt")
        paths[-1].write_bytes(src.read_bytes())
    status, out, err = run_main(
        capsys, "train", "--scores", *paths, "--key", SPK / "dev.key", "-o", tmp_path / "m.json"
    )
    assert status == 0, err
    assert " * alpha " in out and " * beta " in out and "scores.txt" not in out


# ----------------------------------------------------------------------- operating points


@pytest.mark.parametrize(
    "points, message",
    [
        (["--p-target", "0.5", "--cost", "0.01:10:1"], "not allowed with argument --p-target"),
        (["--cost", "0.01:10:1", "--cost", "0.5"], "argument --cost: given twice"),
        (["--p-target", "0.01", "--p-target", "0.5"], "argument --p-target: given twice"),
    ],
)
def test_train_refuses_conflicting_operating_points(capsys, tmp_path, points, message):
    status, _, err = run_main(
        capsys, "train", "--scores", *DEV, "--key", SPK / "dev.key", "-o", tmp_path / "m.json",
        *points,
    )  # fmt: skip
    assert status == 2 and message in err and not (tmp_path / "m.json").exists()


# ----------------------------------------------------------------------- trial sets


def test_missing_drop_says_when_the_systems_keep_other_trials(capsys, tmp_path):
    lines = EVAL[1].read_text().splitlines(True)
    short = tmp_path / "short.scores"
    short.write_text("".join(lines[10:]))
    argv = ["evaluate", EVAL[0], short, "--key", KEY, "--missing", "drop", "--json"]
    status, out, err = run_main(capsys, *argv)
    assert status == 0
    counts = [r["n_targets"] + r["n_nontargets"] for r in json.loads(out)]
    assert counts == [4400, 4390]
    assert "compared on different trial sets" in err
    assert "short.scores 4,390" in err
    # the same trials dropped from both: no note
    other = tmp_path / "other.scores"
    other.write_text("".join(EVAL[0].read_text().splitlines(True)[10:]))
    same = [line.split()[:2] for line in lines[10:]] == [
        line.split()[:2] for line in other.read_text().splitlines()
    ]
    status, _, err = run_main(capsys, "evaluate", other, short, "--key", KEY, "--missing", "drop")
    assert status == 0 and ("compared on different" in err) != same


def test_a_closed_set_file_evaluated_as_open_is_warned_about(capsys):
    closed = LID / "eval_sys1_closed.txt"
    status, out, err = run_main(
        capsys, "evaluate-multiclass", closed, "--key", LID / "eval.key", "--condition", "open",
        "--json",
    )  # fmt: skip
    assert status == 0
    measures = json.loads(out)[0]["measures"]["open"]
    assert measures["c_mce"] > measures["c_def"]  # the file's numbers: worse than the prior
    assert "a closed-set file (condition Closed) evaluated in the open-set condition" in err
    assert f"C_mce {measures['c_mce']:.4f} is above C_def {measures['c_def']:.4f}" in err
    status, _, err = run_main(capsys, "evaluate-multiclass", closed, "--key", LID / "eval.key")
    assert status == 0 and err == ""


# ----------------------------------------------------------------------- outputs and keys


def test_closed_standard_output_is_an_error(tmp_path):
    """``>&-``: the report would go nowhere: exit status 1 and a message, before any work."""
    import shlex

    argv = [sys.executable, "-m", "focal", "evaluate", str(EVAL[0]), "--key", str(KEY)]
    result = subprocess.run(
        ["sh", "-c", " ".join(map(shlex.quote, argv)) + " >&-"],
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 1
    assert "standard output is closed" in result.stderr
    # closed after Python started: the same, before the work (no model written)
    code = (
        "import os, sys; os.close(1); from focal.cli import main; "
        f"sys.exit(main(['train', '--scores', {str(DEV[0])!r}, '--key', "
        f"{str(SPK / 'dev.key')!r}, '-o', {str(tmp_path / 'm.json')!r}]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    assert result.returncode == 1
    assert "standard output is closed" in result.stderr
    assert not (tmp_path / "m.json").exists()


def test_unwritable_standard_output_names_it(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "focal", "evaluate", str(EVAL[0]), "--key", str(KEY)],
        stdout=open("/dev/full", "w"),  # noqa: SIM115 - closed with the process
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 1
    assert "standard output: cannot write: No space left on device" in result.stderr


@pytest.mark.parametrize("kind", ["target", "nontarget"])
def test_a_one_class_key_says_so_naming_the_file(capsys, tmp_path, kind):
    key = tmp_path / "one.key"
    key.write_text(
        "".join(line for line in KEY.read_text().splitlines(True) if line.split()[2] == kind)
    )
    name = "target" if kind == "target" else "non-target"
    other = "non-target" if kind == "target" else "target"
    status, _, err = run_main(capsys, "evaluate", EVAL[0], "--key", key, "--missing", "drop")
    assert status == 1
    assert (
        f"{EVAL[0]}: the " in err and f"trials it shares with the key {key} are all {name}" in err
    )
    assert f"the measures need {other} trials too" in err
    subset = tmp_path / "subset.scores"
    keep = {tuple(line.split()[:2]) for line in key.read_text().splitlines()}
    subset.write_text(
        "".join(s for s in EVAL[0].read_text().splitlines(True) if tuple(s.split()[:2]) in keep)
    )
    status, _, err = run_main(capsys, "evaluate", subset, "--key", key)
    assert status == 1 and f"{key}: every trial of the key is a {name} trial" in err
    status, _, err = run_main(
        capsys, "train", "--scores", subset, "--key", key, "-o", tmp_path / "m.json"
    )
    assert status == 1 and f"training needs {other} trials too" in err


# ----------------------------------------------------------------------- summary table


def test_several_systems_get_a_summary_table_first(capsys):
    argv = ["evaluate", *EVAL[:2], "--key", KEY, "--p-target", "0.01", "0.001"]
    status, out, _ = run_main(capsys, *argv, "--c-primary", "sre16")
    assert status == 0
    table, reports = out.split("\n\n", 1)
    assert reports.startswith("Calibration analysis")
    rows = table.splitlines()[3:]
    assert [r.split()[0] for r in rows] == ["eval_sys1.scores", "eval_sys2.scores"]
    for row, path in zip(rows, EVAL):
        s, y = _trials(path)
        ref = calibration_report(s[y], s[~y], [0.01, 0.001], c_primary="sre16")
        expected = [ref.cllr, ref.min_cllr, 100 * ref.eer]
        for op in ref.operating_points:
            expected += [op.act_dcf, op.min_dcf]
        expected += [ref.c_primary.actual, ref.c_primary.minimum]
        decimals = [4, 4, 2] + [4] * 6
        assert row.split()[1:] == [f"{v:.{d}f}" for v, d in zip(expected, decimals)]
    status, only, _ = run_main(capsys, *argv, "--summary-only")
    assert status == 0 and "Calibration analysis" not in only
    assert only.splitlines()[3].split()[0] == "eval_sys1.scores"
    status, out, _ = run_main(capsys, "evaluate", EVAL[0], "--key", KEY)
    assert status == 0 and out.startswith("Calibration analysis")  # one system: no table
