"""The command line, run as a user runs it (subprocess)."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from focal.io import align_trials, read_key, read_scores
from focal.metrics import calibration_report, from_labels

ROOT = pathlib.Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "data_samples" / "speaker_detection"


def run_focal(*args, cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "focal", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


def test_demo_runs_on_the_samples():
    result = run_focal("demo")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("Calibration analysis") == 3


def test_evaluate_prints_the_same_numbers_as_the_api():
    path = SAMPLES / "eval_sys1.scores"
    result = run_focal("evaluate", str(path), "--key", str(SAMPLES / "eval.key"),
                       "--p-target", "0.01", "0.2")
    assert result.returncode == 0, result.stderr
    X, y, _, _ = align_trials(read_key(SAMPLES / "eval.key"), read_scores(path))
    report = calibration_report(*from_labels(X[:, 0], y), operating_points=[0.01, 0.2],
                                name=str(path))
    assert result.stdout.strip() == str(report).strip()


def test_bad_file_exits_1_with_one_line(tmp_path):
    bad = tmp_path / "bad.scores"
    bad.write_text("m1 t1 1.0\nm1 t2 oops\n")
    result = run_focal("evaluate", str(bad), "--key", str(SAMPLES / "eval.key"))
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0
    assert "bad.scores:2" in result.stderr


def test_usage_error_exits_2():
    assert run_focal("evaluate").returncode == 2
    assert run_focal("no-such-command").returncode == 2


@pytest.mark.parametrize("args", [["--help"], ["evaluate", "--help"], ["demo", "--help"]])
def test_help(args):
    result = run_focal(*args)
    assert result.returncode == 0
    assert "usage: focal" in result.stdout
