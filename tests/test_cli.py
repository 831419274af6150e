"""The focal command line: the workflows give the Python API's numbers exactly; bad input exits 1
with one line naming the file and line; usage errors exit 2.

The main binary workflow and the demo run as a user runs them (subprocess); the other commands
run in-process through ``focal.cli.main``, the same code behind the console script.
"""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

import focal
from focal import LogisticFusion, MulticlassFusion, PAVCalibrator
from focal.io import (
    align_multiclass,
    align_multiclass_scores,
    align_scores,
    align_trials,
    read_albayzin_scores,
    read_key,
    read_multiclass_key,
    read_scores,
)
from focal.metrics import (
    albayzin_measures,
    calibration_report,
    cavg,
    from_labels,
    multiclass_cllr,
)
from focal.workflows import summary_table
from tests._support.cli import (
    BLOCK_MATPLOTLIB,
    DEV,
    EVAL,
    LID,
    ROOT,
    SPK,
    STD,
    run_focal,
    run_main,
)


def exact(a, b):
    """Bit-identical float arrays."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def as_json(value):
    """What the CLI's --json prints for a plain-Python value (floats round-trip exactly)."""
    return json.loads(json.dumps(value))


# ----------------------------------------------------------------- binary: the whole workflow


def test_train_apply_evaluate_through_the_command_gives_the_api_numbers(tmp_path):
    model_path, fused = tmp_path / "fuser.json", tmp_path / "eval_fused.scores"
    result = run_focal(
        "train", "--scores", *DEV, "--key", SPK / "dev.key", "--p-target", "0.01", "-o", model_path
    )
    assert result.returncode == 0, result.stderr
    result = run_focal("apply", model_path, *EVAL, "--align", "-o", fused)
    assert result.returncode == 0, result.stderr
    result = run_focal(
        "evaluate", fused, "--key", SPK / "eval.key", "--p-target", "0.01", "0.001", "--json"
    )
    assert result.returncode == 0, result.stderr
    cli_report = json.loads(result.stdout)

    # the Python API on the same arrays
    X, y, _, _ = align_trials(read_key(SPK / "dev.key"), *map(read_scores, DEV))
    api = LogisticFusion(p_target=0.01).fit(X, y)
    cli_model = focal.load(model_path)
    assert exact(cli_model.coef_, api.coef_) and cli_model.intercept_ == api.intercept_

    X_eval, models, tests = align_scores(*map(read_scores, EVAL))  # first file's order
    written = read_scores(fused)
    assert (written.models == models).all() and (written.tests == tests).all()
    assert exact(written.scores, api.decision_function(X_eval))

    X_key, y_key, _, _ = align_trials(read_key(SPK / "eval.key"), *map(read_scores, EVAL))
    report = calibration_report(
        *from_labels(api.decision_function(X_key), y_key),
        operating_points=[0.01, 0.001],
        name=str(fused),
    )
    assert cli_report == [as_json(report.to_dict())]


def test_train_with_pav_and_apply_give_the_pipeline_numbers(tmp_path, capsys):
    model_path, fused = tmp_path / "fuser.json", tmp_path / "fused.scores"
    status, out, err = run_main(
        capsys,
        "train",
        "--scores",
        *DEV,
        "--key",
        SPK / "dev.key",
        "--p-target",
        "0.05",
        "--pav",
        "--pseudo-count",
        "0.5",
        "-o",
        model_path,
    )
    assert status == 0, err
    assert "PAVCalibrator (pseudo_count 0.5)" in out and f"saved to {model_path}" in out
    X, y, _, _ = align_trials(read_key(SPK / "dev.key"), *map(read_scores, DEV))
    api = make_pipeline(LogisticFusion(p_target=0.05), PAVCalibrator(pseudo_count=0.5)).fit(X, y)
    status, _, err = run_main(
        capsys, "apply", model_path, *EVAL, "--align", "--chunk-size", "1000", "-o", fused
    )
    assert status == 0, err
    X_eval, _, _ = align_scores(*map(read_scores, EVAL))
    assert exact(read_scores(fused).scores, api.transform(X_eval)[:, 0])


def test_apply_streams_files_in_the_same_order(tmp_path, capsys):
    """Without --align the files are streamed; a file of another trial order is refused with
    both files and lines named and --align suggested.
    """
    model_path = tmp_path / "fuser.json"
    X, y, models, tests = align_trials(read_key(SPK / "dev.key"), *map(read_scores, DEV))
    focal.save(LogisticFusion().fit(X, y), model_path)
    X_eval, models, tests = align_scores(*map(read_scores, EVAL))
    inputs = []
    for k in range(3):
        path = tmp_path / f"sys{k}.scores"
        focal.io.write_scores(path, models, tests, X_eval[:, k])
        inputs.append(path)
    status, out, err = run_main(
        capsys, "apply", model_path, *inputs, "--chunk-size", "777", "-o", tmp_path / "out.scores"
    )
    assert status == 0, err
    assert out.strip() == f"{tmp_path / 'out.scores'}: 4,400 trials"
    assert exact(
        read_scores(tmp_path / "out.scores").scores,
        focal.load(model_path).decision_function(X_eval),
    )
    status, _, err = run_main(
        capsys, "apply", model_path, inputs[0], EVAL[1], inputs[2], "-o", tmp_path / "other.scores"
    )
    assert status == 1 and err.count("\n") == 1
    assert "eval_sys2.scores:1: trial" in err and "sys0.scores:1" in err and "--align" in err
    assert not (tmp_path / "other.scores").exists()


def test_evaluate_prints_the_api_report(capsys):
    status, out, err = run_main(
        capsys, "evaluate", EVAL[0], EVAL[2], "--key", SPK / "eval.key", "--p-target", "0.01", "0.2"
    )
    assert status == 0, err
    key = read_key(SPK / "eval.key")
    reports = []
    for path in (EVAL[0], EVAL[2]):
        X, y, _, _ = align_trials(key, read_scores(path))
        reports.append(
            calibration_report(
                *from_labels(X[:, 0], y), operating_points=[0.01, 0.2], name=str(path)
            )
        )
    # two systems: the summary table (a line each), then each report
    expected = [summary_table(reports)] + [str(r) for r in reports]
    assert out.strip() == "\n\n".join(expected)


# ------------------------------------------------------------------ multiclass workflow


def lid_files(split, condition):
    return [LID / f"{split}_sys{k}_{condition}.txt" for k in (1, 2, 3)]


def expected_measures(llh, labels, condition):
    """The API's numbers for one condition, computed here from the metric functions."""
    m = albayzin_measures(llh, labels, open_set=condition == "open")
    active = m.prior > 0
    keep = active[labels]
    out = m.to_dict()
    out["multiclass_cllr"] = multiclass_cllr(llh, labels, m.prior)
    out["cavg"] = cavg(llh[keep][:, active], np.cumsum(active)[labels[keep]] - 1)
    return out


def same_measures(got, expected):
    """The numbers equal; the CAVG definition says NIST's (closed) or focal's own (open)."""
    got = dict(got)
    label = got.pop("cavg_definition")
    assert ("focal's own extension" in label) == (expected["prior"][-1] > 0), label
    return got == expected


@pytest.mark.parametrize("condition, mode", [("open", "scalar"), ("closed", "full")])
def test_multiclass_train_apply_evaluate_gives_the_api_numbers(tmp_path, capsys, condition, mode):
    model_path, fused = tmp_path / "lid.json", tmp_path / "fused.txt"
    status, out, err = run_main(
        capsys,
        "train-multiclass",
        "--scores",
        *lid_files("dev", condition),
        "--key",
        LID / "dev.key",
        "--mode",
        mode,
        "-o",
        model_path,
    )
    assert status == 0, err
    X, labels, _, classes = align_multiclass(
        read_multiclass_key(LID / "dev.key"),
        *map(read_albayzin_scores, lid_files("dev", condition)),
    )
    # the default training prior is the Albayzin evaluation prior of the condition (eq. 2)
    prior = None if condition == "open" else [1 / 6] * 6 + [0.0]
    api = MulticlassFusion(prior=prior, mode=mode).fit(X, labels)
    cli = focal.load(model_path)
    assert exact(cli.coef_, api.coef_) and exact(cli.intercept_, api.intercept_)

    status, _, err = run_main(
        capsys, "apply", model_path, *lid_files("eval", condition), "-o", fused
    )
    assert status == 0, err
    X_eval, segments, _ = align_multiclass_scores(
        *map(read_albayzin_scores, lid_files("eval", condition))
    )
    written = read_albayzin_scores(fused)
    assert written.task == "Plenty" and written.condition == condition.capitalize()
    assert (written.segments == segments).all()
    assert exact(written.llh, api.transform(X_eval))

    status, out, err = run_main(
        capsys,
        "evaluate-multiclass",
        fused,
        "--key",
        LID / "eval.key",
        "--condition",
        "closed",
        "open",
        "--json",
    )
    assert status == 0, err
    llh, y, _, _ = align_multiclass(read_multiclass_key(LID / "eval.key"), written)
    (result,) = json.loads(out)
    assert result["classes"] == list(classes) and result["n_segments"] == len(y)
    for c in ("closed", "open"):
        assert same_measures(result["measures"][c], as_json(expected_measures(llh, y, c))), c


def test_evaluate_multiclass_text_uses_the_file_condition(capsys):
    status, out, err = run_main(
        capsys, "evaluate-multiclass", LID / "eval_sys2_closed.txt", "--key", LID / "eval.key"
    )
    assert status == 0, err
    llh, y, _, _ = align_multiclass(
        read_multiclass_key(LID / "eval.key"), read_albayzin_scores(LID / "eval_sys2_closed.txt")
    )
    m = expected_measures(llh, y, "closed")
    assert "closed set" in out and "open set" not in out
    assert f"{m['f_act']:.4f}" in out and f"{100 * m['cavg']:.2f}%" in out
    assert f"{m['c_mce']:.4f}" in out and f"{m['multiclass_cllr']:.4f}" in out


def test_multiclass_model_and_files_must_agree(tmp_path, capsys):
    model_path = tmp_path / "lid.json"
    X, labels, _, _ = align_multiclass(
        read_multiclass_key(LID / "dev.key"), *map(read_albayzin_scores, lid_files("dev", "open"))
    )
    focal.save(MulticlassFusion().fit(X, labels), model_path)
    status, _, err = run_main(
        capsys, "apply", model_path, *lid_files("eval", "open")[:2], "-o", tmp_path / "out.txt"
    )
    assert status == 1 and "the model takes 3 system(s), 2 score file(s) given" in err
    status, _, err = run_main(
        capsys,
        "train-multiclass",
        "--scores",
        *lid_files("dev", "open")[:2],
        "--key",
        LID / "dev.key",
        "--mode",
        "calibration",
        "-o",
        model_path,
    )
    assert status == 1 and "one score file" in err
    status, _, err = run_main(
        capsys,
        "train-multiclass",
        "--scores",
        LID / "dev_sys1_open.txt",
        LID / "dev_sys2_closed.txt",
        "--key",
        LID / "dev.key",
        "-o",
        model_path,
    )
    assert status == 1 and "Plenty Closed differs" in err


# ------------------------------------------------------------------------------------- sws


@pytest.mark.parametrize(
    "files",
    [
        ["sws_sample.stdlist.xml", "sws_sample.rttm", "sws_sample.ecf.xml", "sws_sample.tlist.xml"],
        ["detections.txt", "reference.txt", "audio.txt", "queries.txt"],
    ],
)
def test_sws_prints_the_term_detection_report(capsys, files):
    from focal.std import read_task, term_detection_report

    paths = [STD / f for f in files]
    status, out, err = run_main(capsys, "sws", *paths, "--json", "--per-query")
    assert status == 0, err
    report = term_detection_report(read_task(*paths))
    assert json.loads(out) == as_json(report.to_dict(per_query=True))
    status, out, err = run_main(
        capsys, "sws", *paths, "--cost", "0.001", "10", "1", "--bayes-threshold"
    )
    assert status == 0, err
    expected = term_detection_report(
        read_task(*paths),
        operating_point=(0.001, 10, 1),
        decision_threshold=focal.bayes_threshold(0.001, 10, 1),
    )
    assert out.strip().splitlines()[4:] == str(expected).splitlines()[4:]


def test_sws_audio_duration_as_a_number(capsys):
    status, out, err = run_main(
        capsys,
        "sws",
        STD / "detections.txt",
        STD / "reference.txt",
        "632.48",
        "--operating-point",
        "std2006",
    )
    assert status == 0, err
    assert "NIST STD 2006" in out and "632.48 s" in out
    status, _, err = run_main(
        capsys, "sws", STD / "detections.txt", STD / "reference.txt", "no-such-audio"
    )
    assert status == 1 and "no-such-audio: no such file" in err


# --------------------------------------------------------------------- bad input: exit 1


def bad_files(tmp_path):
    """Malformed score and key files: (what, path, the file:line the message must name)."""
    lines = (SPK / "eval_sys1.scores").read_text().splitlines()
    key_lines = (SPK / "eval.key").read_text().splitlines()
    cases = {
        "missing column": (lines[:5] + [" ".join(lines[5].split()[:2])] + lines[6:], 6),
        "non-numeric score": (lines[:9] + [lines[9].rsplit(" ", 1)[0] + " 0.3x"] + lines[10:], 10),
        "duplicate trial": (lines[:20] + [lines[3]] + lines[20:], 21),
        "NaN score": (lines[:2] + [lines[2].rsplit(" ", 1)[0] + " nan"] + lines[3:], 3),
    }
    out = []
    for what, (content, line) in cases.items():
        path = tmp_path / f"{what.replace(' ', '_')}.scores"
        path.write_text("\n".join(content) + "\n")
        out.append((what, "scores", path, f"{path}:{line}"))
    key = tmp_path / "unknown_label.key"
    key_lines[7] = key_lines[7].rsplit(" ", 1)[0] + " maybe"
    key.write_text("\n".join(key_lines) + "\n")
    out.append(("unknown key label", "key", key, f"{key}:8"))
    return out


def test_malformed_files_exit_1_with_one_line_naming_file_and_line(tmp_path, capsys):
    model = tmp_path / "fuser.json"
    X, y, _, _ = align_trials(read_key(SPK / "dev.key"), *map(read_scores, DEV[:1]))
    focal.save(LogisticFusion().fit(X, y), model)
    for what, kind, path, where in bad_files(tmp_path):
        if kind == "scores":
            commands = [
                ["evaluate", path, "--key", SPK / "eval.key"],
                ["train", "--scores", path, "--key", SPK / "eval.key", "-o", model],
                ["apply", model, path, "--align", "-o", tmp_path / "out.scores"],
            ]
            if what != "duplicate trial":  # streaming keeps no memory of the trials seen
                commands.append(["apply", model, path, "-o", tmp_path / "out.scores"])
        else:
            commands = [
                ["evaluate", EVAL[0], "--key", path],
                ["train", "--scores", EVAL[0], "--key", path, "-o", model],
            ]
        for command in commands:
            status, out, err = run_main(capsys, *command)
            assert status == 1, (what, command[0], err)
            assert err.startswith("focal: error: ") and err.count("\n") == 1, (what, err)
            assert where + ":" in err, (what, command[0], err)
    assert focal.load(model)  # the failed trainings did not touch it
    assert not (tmp_path / "out.scores").exists()


def test_bad_model_file_and_wrong_number_of_systems_exit_1(tmp_path, capsys):
    model = tmp_path / "fuser.json"
    X, y, _, _ = align_trials(read_key(SPK / "dev.key"), *map(read_scores, DEV))
    focal.save(LogisticFusion().fit(X, y), model)
    status, _, err = run_main(capsys, "apply", model, *EVAL[:2], "-o", tmp_path / "o.scores")
    assert status == 1 and "the model takes 3 system(s), 2 score file(s) given" in err
    model.write_text(model.read_text().replace('"p_target": 0.5', '"p_target": 0.25'))
    status, _, err = run_main(capsys, "apply", model, *EVAL, "-o", tmp_path / "o.scores")
    assert status == 1 and err.count("\n") == 1 and f"{model}: integrity.sha256" in err
    status, _, err = run_main(
        capsys, "apply", tmp_path / "none.json", *EVAL, "-o", tmp_path / "o.scores"
    )
    assert status == 1 and "none.json: cannot open" in err


def test_unwritable_outputs_exit_1(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    status, _, err = run_main(capsys, "demo", "--out", blocker / "sub")
    assert status == 1 and err.count("\n") == 1 and str(blocker) in err
    status, _, err = run_main(
        capsys, "train", "--scores", DEV[0], "--key", SPK / "dev.key", "-o", blocker / "m.json"
    )
    assert status == 1 and err.count("\n") == 1 and "m.json: cannot write" in err


def test_bad_input_through_the_console_exits_1(tmp_path):
    bad = tmp_path / "bad.scores"
    bad.write_text("m1 t1 1.0\nm1 t2 oops\n")
    result = run_focal("evaluate", bad, "--key", SPK / "eval.key")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and f"{bad}:2:" in result.stderr


# ---------------------------------------------------------------- usage: exit 2, --help

COMMANDS = ["train", "apply", "evaluate", "train-multiclass", "evaluate-multiclass", "sws", "demo"]


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["no-such-command"],
        ["evaluate"],
        ["evaluate", "x.scores"],
        ["evaluate", "x.scores", "--key", "k", "--p-target", "1.5"],
        ["train", "--scores", "a", "--key", "k"],
        ["train", "--scores", "a", "--key", "k", "-o", "m", "--pseudo-count", "-1"],
        ["apply", "m.json", "-o", "out"],
        ["apply", "m.json", "a", "-o", "o", "--chunk-size", "0"],
        ["train-multiclass", "--scores", "a", "--key", "k", "-o", "m", "--mode", "matrix"],
        ["evaluate-multiclass", "a", "--key", "k", "--condition", "both"],
        ["sws", "a", "b", "c", "--threshold", "1", "--bayes-threshold"],
        ["sws", "a", "b", "c", "--cost", "0.1", "10"],
        ["demo", "--p-target", "0"],
    ],
)
def test_usage_errors_exit_2(capsys, args):
    status, out, err = run_main(capsys, *args)
    assert status == 2
    assert "usage: focal" in err


@pytest.mark.parametrize("command", COMMANDS)
def test_help_on_every_subcommand(capsys, command):
    status, out, _ = run_main(capsys, command, "--help")
    assert status == 0
    assert out.startswith(f"usage: focal {command}")


def test_console_help_and_usage_error():
    result = run_focal("--help")
    assert result.returncode == 0 and all(c in result.stdout for c in COMMANDS)
    assert run_focal("train").returncode == 2


# -------------------------------------------------------------------------------------- demo


def test_demo_runs_from_an_installed_copy_on_its_own_samples(tmp_path):
    """As after ``pip install`` of the wheel without matplotlib, run outside the checkout: the
    package lives elsewhere with the sample set it ships (``focal/cli/samples``, pyproject.toml's
    package-dir), and the demo says why it draws nothing.
    """
    site = tmp_path / "site"
    shutil.copytree(ROOT / "focal", site / "focal", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "data_samples" / "speaker_detection", site / "focal" / "cli" / "samples")
    out = tmp_path / "demo"
    code = BLOCK_MATPLOTLIB + (
        "import os, runpy\n"
        "sys.path[:] = [p for p in sys.path if p not in ('', os.getcwd())]  # not the checkout's\n"
        "import focal\n"
        f"assert focal.__file__.startswith({str(site)!r}), focal.__file__\n"
        "runpy.run_module('focal', run_name='__main__')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=str(site)),
    )
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.count("Calibration analysis") == 4
    model = focal.load(out / "fuser.json")
    assert model.n_features_in_ == 3
    fused = read_scores(out / "eval_fused.scores")
    assert len(fused) == 4400
    # the fusion is better than every system on its own, on the eval set
    summary = text[text.index("Summary") :].splitlines()[2:6]
    cllrs = [float(line.split()[1]) for line in summary]
    assert cllrs[3] < min(cllrs[:3])
    assert "plots: not written: focal.plots needs matplotlib" in text
    assert "pip install matplotlib" in text
    assert not (out / "plots").exists()


def test_demo_writes_the_figures_with_matplotlib(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    status, out, err = run_main(capsys, "demo", "--out", tmp_path)
    assert status == 0, err
    page = tmp_path / "plots" / "index.html"
    assert f"plots: {page}" in out
    html = page.read_text()
    assert all(name in html for name in ("eval_sys1.scores", "eval_fused.scores"))
    assert len(list((tmp_path / "plots").glob("*.png"))) >= 5


def test_exceptions_map_to_exit_statuses(capsys, monkeypatch):
    """Messages are printed as the library wrote them, on one line; the type sets the status."""
    import focal.io

    def fail(exc):
        def raise_(*args, **kwargs):
            raise exc

        return raise_

    for exc, status, text in [
        (
            MemoryError(),
            1,
            "focal: error: out of memory (use smaller "
            "files, --chunk-size, or a machine with more "
            "memory)",
        ),
        (ValueError("a.scores:3: bad\n  thing"), 1, "focal: error: a.scores:3: bad thing"),
        (
            FileNotFoundError(2, "No such file or directory", "x.key"),
            1,
            "focal: error: x.key: No such file or directory",
        ),
        (KeyboardInterrupt(), 130, "focal: interrupted"),
    ]:
        monkeypatch.setattr(focal.workflows, "evaluate_multiclass", fail(exc))
        got, out, err = run_main(capsys, "evaluate-multiclass", "f.txt", "--key", "k")
        assert got == status and err == text + "\n" and out == ""


def test_no_raw_warnings_from_extreme_log_likelihoods(tmp_path, capsys):
    """Overflowing log-likelihood differences give finite or infinite measures, not numpy's
    RuntimeWarnings on stderr (pytest turns an escaping warning into an error).
    """
    scores, key = tmp_path / "x.txt", tmp_path / "x.key"
    scores.write_text("segment a b OOS\ns1 1e308 -1e308 0\ns2 1e308 -1e308 2\ns3 -1e308 0 1e308\n")
    key.write_text("s1 a\ns2 b\ns3 OOS\n")
    status, out, err = run_main(
        capsys, "evaluate-multiclass", scores, "--key", key, "--condition", "closed", "open"
    )
    assert status == 0 and err == ""
    assert "focal's own extension" in out


def test_output_piped_into_head_ends_quietly():
    """More output than a pipe holds: the writes after `head` exits meet a broken pipe."""
    files = " ".join([str(LID / "eval_sys1_open.txt")] * 120)
    result = subprocess.run(
        f"{sys.executable} -m focal evaluate-multiclass {files} --key {LID / 'eval.key'} "
        f'--condition closed open --json | head -1; echo "status ${{PIPESTATUS[0]}}"',
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        timeout=300,
    )
    assert result.stdout == "[\nstatus 0\n" and result.stderr == ""


def test_sws_with_extreme_scores_prints_no_raw_warnings(tmp_path, capsys):
    lines = (STD / "detections.txt").read_text().splitlines()
    extreme = [lines[0]] + [
        " ".join(ln.split()[:4] + [("1e160", "-1e160")[i % 2]] + ln.split()[5:])
        for i, ln in enumerate(lines[1:])
    ]
    detections = tmp_path / "det.txt"
    detections.write_text("\n".join(extreme) + "\n")
    status, out, err = run_main(
        capsys, "sws", detections, STD / "reference.txt", STD / "audio.txt", STD / "queries.txt"
    )
    assert status == 0 and err == "" and "ATWV" in out
