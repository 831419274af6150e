"""Hostile outputs: an output is what the file is, not what its path says (issue: outputs through
/dev and /proc, links in plot folders). Each case reproduces an attack with the ``focal``
command in a child process under CPU, memory, wall-clock and file-size limits (so a regression
that appends an output to the input it reads stops at the limit instead of filling the disk),
and checks a clear error or the right answer, with every input unchanged by hash.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shlex
import shutil
import subprocess
import sys

import numpy as np
import pytest

from focal.cli import main
from tests._support.cli import ROOT, SPK
from tests._support.limits import run_limited

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="/proc, /dev/shm, descriptors of Linux"
)

FILES = ("dev_sys1.scores", "dev.key", "eval_sys1.scores", "eval.key", "eval.durations")


def _focal(folder, argv, stdin=None):
    """``focal argv`` run in ``folder`` (standard input from the file ``stdin``): (status,
    stdout, stderr). Called in the limited child.
    """
    os.chdir(folder)
    if stdin is not None:
        fd = os.open(stdin, os.O_RDONLY)
        os.dup2(fd, 0)
        os.close(fd)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the child's standard input
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def focal_limited(folder, *argv, stdin=None, file_mb=16, memory_mb=600):
    """``focal argv`` under limits (one string is split as the shell does); the outcome
    (status, stdout, stderr).
    """
    if len(argv) == 1 and isinstance(argv[0], str):
        argv = tuple(shlex.split(argv[0]))
    outcome = run_limited(
        _focal,
        folder,
        argv,
        stdin,
        cpu_seconds=60,
        memory_mb=memory_mb,
        wall_seconds=120,
        file_mb=file_mb,
    )
    assert outcome[0] == "ok", outcome
    return outcome[1]


def _hashes(folder):
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A one-system model trained on the sample dev set."""
    folder = tmp_path_factory.mktemp("model")
    model = folder / "m1.json"
    with contextlib.redirect_stdout(io.StringIO()):
        status = main(
            [
                "train",
                "--scores",
                str(SPK / FILES[0]),
                "--key",
                str(SPK / "dev.key"),
                "-o",
                str(model),
            ]
        )
    assert status == 0
    return model


@pytest.fixture
def work(tmp_path, trained):
    for name in FILES:
        shutil.copy(SPK / name, tmp_path / name)
    shutil.copy(trained, tmp_path / "m1.json")
    return tmp_path


def refused(outcome, message):
    status, out, err = outcome
    assert status == 1, (out, err)
    assert err.count("\n") == 1 and message in err, err
    return err


# ------------------------------------------------------------------ outputs under /proc, /dev


def test_an_input_reached_through_proc_self_cwd_is_refused(work):
    before = _hashes(work)
    err = refused(
        focal_limited(work, "apply m1.json eval_sys1.scores -o /proc/self/cwd/eval_sys1.scores"),
        "would overwrite an input file",
    )
    assert err.startswith("focal: error: /proc/self/cwd/eval_sys1.scores: ")
    assert _hashes(work) == before


@pytest.fixture
def shm(work):
    """A folder in /dev/shm (a tmpfs: regular files under /dev)."""
    if not os.path.isdir("/dev/shm") or not os.access("/dev/shm", os.W_OK):
        pytest.skip("no writable /dev/shm")
    folder = os.path.join("/dev/shm", f"focal-test-{os.getpid()}-{work.name}")
    os.mkdir(folder)
    yield folder
    shutil.rmtree(folder)


def test_dev_shm_input_and_output_is_refused(work, shm):
    shutil.copy(work / "eval_sys1.scores", os.path.join(shm, "in"))
    before = hashlib.sha256(open(os.path.join(shm, "in"), "rb").read()).hexdigest()
    path = os.path.join(shm, "in")
    refused(
        focal_limited(work, "apply", "m1.json", path, "-o", path), "would overwrite an input file"
    )
    assert hashlib.sha256(open(path, "rb").read()).hexdigest() == before


def test_dev_shm_outputs_are_replaced_not_appended_to(work, shm):
    model = os.path.join(shm, "m.json")
    for _ in range(2):  # the second model replaces the first: one JSON document
        status, _, err = focal_limited(
            work, f"train --scores dev_sys1.scores --key dev.key -o {model}"
        )
        assert status == 0, err
    assert json.loads(open(model).read())["format"]
    scores = os.path.join(shm, "out.txt")
    for _ in range(2):
        assert focal_limited(work, f"apply m1.json eval_sys1.scores -o {scores}")[0] == 0
    assert open(scores).read().count("\n") == 4400


def test_a_failed_run_leaves_no_new_file(work, shm):
    bad = work / "bad.scores"
    bad.write_text((work / "eval_sys1.scores").read_text() + "m t oops\n")
    for output in (os.path.join(shm, "new.txt"), str(work / "new.txt")):
        refused(focal_limited(work, f"apply m1.json bad.scores -o {output}"), ":4401:")
        assert not os.path.lexists(output)
    assert not [p for p in os.listdir(shm) if p.startswith(".focal-")]


def test_dev_stdin_is_not_an_output(work):
    before = _hashes(work)
    for stdin in ("eval_sys1.scores", "eval.key"):  # an input, or any file read-only on fd 0
        refused(
            focal_limited(work, "apply m1.json eval_sys1.scores -o /dev/stdin", stdin=stdin),
            "/dev/stdin: descriptor 0 (standard input) is open for reading only",
        )
    assert _hashes(work) == before


@pytest.mark.parametrize(
    "argv, stdin",
    [
        (["apply", "m1.json", "-", "-o", "eval_sys1.scores"], "eval_sys1.scores"),
        (["train", "--scores", "dev_sys1.scores", "--key", "-", "-o", "dev.key"], "dev.key"),
    ],
)
def test_an_input_read_from_standard_input_is_protected(work, argv, stdin):
    before = _hashes(work)
    refused(focal_limited(work, *argv, stdin=stdin), "(standard input is the same file)")
    assert _hashes(work) == before


@pytest.mark.parametrize(
    "extra, output",
    [
        (["--quality", "eval.durations"], "eval.durations"),
        (["--trial-quality", "model_duration=eval.durations"], "eval.durations"),
        (["--signing-key", "eval.key"], "eval.key"),
        ([], "m1.json"),
    ],
)
def test_files_read_by_options_are_protected(work, extra, output):
    before = _hashes(work)
    refused(
        focal_limited(work, "apply", "m1.json", "eval_sys1.scores", *extra, "-o", output),
        "would overwrite an input file",
    )
    assert _hashes(work) == before


def test_cohort_files_are_protected(work):
    before = _hashes(work)
    for option in ("--enrol-cohort", "--test-cohort"):
        refused(
            focal_limited(
                work,
                f"normalize eval_sys1.scores {option} dev_sys1.scores -o dev_sys1.scores "
                f"--method {'z-norm' if option == '--enrol-cohort' else 't-norm'}",
            ),
            "would overwrite an input file (dev_sys1.scores is the same file)",
        )
    assert _hashes(work) == before


def test_standard_output_redirected_to_an_input_is_refused(work):
    before = _hashes(work)
    with open(work / "eval_sys1.scores", "ab") as appended:
        run = subprocess.run(
            [sys.executable, "-m", "focal", "apply", "m1.json", "eval_sys1.scores", "-o", "-"],
            stdout=appended,
            stderr=subprocess.PIPE,
            cwd=work,
            timeout=120,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
    assert run.returncode == 1
    assert b"standard output: the output would overwrite an input file" in run.stderr
    assert _hashes(work) == before


# ------------------------------------------------------------------ checked before the work


def test_a_missing_output_folder_fails_before_training(work, monkeypatch):
    import focal.workflows

    def no_training(*args, **kwargs):
        raise AssertionError("the fit ran")

    monkeypatch.setattr(focal.workflows, "train_fusion", no_training)
    err = refused(
        focal_limited(
            work,
            "train --scores dev_sys1.scores --key dev.key -o /nonexistent/dir/f.json",
        ),
        "cannot write",
    )
    assert err == (
        "focal: error: /nonexistent/dir/f.json: cannot write: the folder /nonexistent/dir "
        "does not exist\n"
    )


def test_an_output_ending_with_a_slash_is_not_written_as_a_file(work):
    refused(
        focal_limited(work, "apply m1.json eval_sys1.scores -o out/"),
        "out/: the output names a folder",
    )
    assert not os.path.lexists(work / "out")


def test_a_non_utf8_output_name_is_refused_before_the_work(work):
    name = os.fsdecode(b"out\xff.scores")
    for argv in (
        ["apply", "m1.json", "eval_sys1.scores", "-o", name],
        ["evaluate", "eval_sys1.scores", "--key", "eval.key", "--plot", name],
    ):
        status, out, err = focal_limited(work, *argv)
        assert status == 1 and out == "" and "b'out\\xff.scores' is not UTF-8" in err
    assert not [p for p in os.listdir(work) if p.startswith("out")]


# ------------------------------------------------------------------ --plot folders


def test_a_link_to_the_key_in_the_plot_folder_is_refused_before_the_work(work):
    (work / "plots").mkdir()
    os.symlink("../eval.key", work / "plots" / "index.html")
    before = _hashes(work)
    status, out, err = focal_limited(work, "evaluate eval_sys1.scores --key eval.key --plot plots")
    assert status == 1 and out == ""  # nothing evaluated
    assert "plots/index.html: the report would overwrite an input file (eval.key" in err
    assert _hashes(work) == before and os.listdir(work / "plots") == ["index.html"]


def test_a_hard_link_to_the_scores_in_the_plot_folder_is_refused(work):
    (work / "plots").mkdir()
    os.link(work / "eval_sys1.scores", work / "plots" / "det.png")
    before = _hashes(work)
    refused(
        focal_limited(work, "evaluate eval_sys1.scores --key eval.key --plot plots"),
        "plots/det.png: the report would overwrite an input file (eval_sys1.scores",
    )
    assert _hashes(work) == before


def test_links_in_the_plot_folder_are_replaced_not_followed(work):
    (work / "plots").mkdir()
    (work / "notes.txt").write_text("mine\n")
    os.symlink("../notes.txt", work / "plots" / "index.html")
    status, _, err = focal_limited(work, "evaluate eval_sys1.scores --key eval.key --plot plots")
    assert status == 0, err
    assert (work / "notes.txt").read_text() == "mine\n"
    page = work / "plots" / "index.html"
    assert not page.is_symlink() and page.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("existing", [False, True])
def test_a_full_disk_names_the_figure_and_leaves_no_partial_folder(work, existing):
    if existing:  # an earlier report stays as it was
        (work / "plots").mkdir()
        (work / "plots" / "det.png").write_bytes(b"old figure")
    before = (
        {p: (work / "plots" / p).read_bytes() for p in os.listdir(work / "plots")}
        if existing
        else None
    )
    status, out, err = focal_limited(
        work,
        "evaluate eval_sys1.scores --key eval.key --plot plots",
        file_mb=0.02,  # 20 kB: the first figure does not fit
    )
    assert status == 1 and out == ""  # the workflow draws the figures before anything is printed
    assert err == "focal: error: plots/det.png: cannot write: File too large\n"
    if existing:
        assert {p: (work / "plots" / p).read_bytes() for p in os.listdir(work / "plots")} == before
    else:
        assert not os.path.lexists(work / "plots")


# ------------------------------------------------------------------ signing keys


def test_signing_keys_are_read_whole(work):
    a, b = work / "a.key", work / "b.key"
    a.write_bytes(b"k" * 65535 + b"a")  # equal in their first 64 KiB - 1 bytes
    b.write_bytes(b"k" * 65535 + b"b")
    train = ["train", "--scores", "dev_sys1.scores", "--key", "dev.key"]
    assert focal_limited(work, *train, "--signing-key", a, "-o", "s.json")[0] == 0
    ok = focal_limited(work, f"apply s.json eval_sys1.scores --signing-key {a} -o o")
    assert ok[0] == 0, ok
    refused(
        focal_limited(work, f"apply s.json eval_sys1.scores --signing-key {b} -o o2"),
        "signature",
    )
    big = work / "big.key"
    big.write_bytes(b"k" * 65536 + b"x")  # equal to a and b in their first 64 KiB
    refused(
        focal_limited(work, f"apply s.json eval_sys1.scores --signing-key {big} -o o3"),
        "big.key: the signing key file is larger than 65536 bytes",
    )
    refused(
        focal_limited(work, *train, "--signing-key", "/dev/zero", "-o", "z.json"),
        "/dev/zero: the signing key file is larger than 65536 bytes",
    )
    assert not os.path.lexists(work / "o2") and not os.path.lexists(work / "z.json")


# ------------------------------------------------------------------ non-finite outputs


def _cohorts(work, value):
    trials = np.loadtxt(work / "eval_sys1.scores", dtype=str)
    models, tests = np.unique(trials[:, 0]), np.unique(trials[:, 1])
    signs = [-value, value, -value, value]
    with open(work / "enrol.cohort", "w") as f:
        f.writelines(f"{m} c{j} {s!r}\n" for m in models for j, s in enumerate(signs))
    with open(work / "test.cohort", "w") as f:
        f.writelines(f"k{j} {t} {s!r}\n" for t in tests for j, s in enumerate(signs))


def test_normalize_refuses_a_cohort_that_overflows(work):
    _cohorts(work, 1e308)
    before = _hashes(work)
    for method in ("s-norm", "z-norm", "t-norm"):
        status, out, err = focal_limited(
            work,
            "normalize eval_sys1.scores --enrol-cohort enrol.cohort --test-cohort test.cohort "
            f"--method {method} -o norm.scores",
        )
        assert status == 1 and out == "" and err.count("\n") == 1, err
        assert "cohort scores of" in err and "overflow float64" in err
        assert ("enrol.cohort" if method != "t-norm" else "test.cohort") in err
        assert not os.path.lexists(work / "norm.scores")
    assert _hashes(work) == before


def test_normalize_refuses_a_normalized_score_that_overflows(work):
    _cohorts(work, 1e-150)  # a tiny spread: a score of 1e300 normalizes to inf
    lines = (work / "eval_sys1.scores").read_text().splitlines()
    model, test, _ = lines[2].split()
    lines[2] = f"{model} {test} 1e300"
    (work / "eval_sys1.scores").write_text("\n".join(lines) + "\n")
    refused(
        focal_limited(
            work,
            "normalize eval_sys1.scores --enrol-cohort enrol.cohort --method z-norm -o norm.scores",
        ),
        f"eval_sys1.scores:3: the z-norm score of trial ({model}, {test}) is inf",
    )
    assert not os.path.lexists(work / "norm.scores")


def test_apply_refuses_an_output_that_overflows(work):
    dev = np.loadtxt(work / "dev_sys1.scores", dtype=str)
    with open(work / "small.scores", "w") as f:  # scores 1000 times smaller: a weight near 1000
        f.writelines(f"{m} {t} {float(s) / 1000!r}\n" for m, t, s in dev)
    train = ["train", "--scores", "small.scores", "--key", "dev.key", "-o", "big.json"]
    assert focal_limited(work, *train)[0] == 0
    lines = (work / "eval_sys1.scores").read_text().splitlines()
    model, test, _ = lines[4].split()
    lines[4] = f"{model} {test} 1e306"
    (work / "eval_sys1.scores").write_text("\n".join(lines) + "\n")
    err = refused(
        focal_limited(work, "apply big.json eval_sys1.scores -o out.scores"),
        "focal: error: eval_sys1.scores:",
    )
    assert "overflow" in err or "inf" in err
    assert not os.path.lexists(work / "out.scores")
