"""Outputs never lose a user's data: an output that is an input (by any path or link) is refused
before anything is written; links, devices and FIFOs are never replaced; a failed or interrupted
write leaves the complete old file or the complete new one, and no temporary file; a report
folder gets all its files or none. The command-line reproductions of hostile outputs, run under
limits, are in test_hostile_outputs.py.
"""

from __future__ import annotations

import errno
import hashlib
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import focal
from focal import LogisticFusion
from focal._text.outputs import FolderWriter, check_output, is_stream, write_output
from focal.cli import main
from focal.io import read_scores, write_scores
from tests._support.cli import ROOT

ENV = dict(os.environ, PYTHONPATH=str(ROOT))  # `python -m focal` of this checkout, from any folder

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links, FIFOs, signals")


def _digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _scores(folder, n=2000, k=2, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.3
    paths = []
    for j in range(k):
        s = rng.normal(size=n) + 2.0 * (j + 1) * y
        path = folder / f"s{j}"
        write_scores(
            path,
            np.char.add("m", np.arange(n).astype(str)),
            np.char.add("t", np.arange(n).astype(str)),
            s,
        )
        paths.append(str(path))
    key = folder / "key"
    key.write_text(
        "".join(f"m{i} t{i} {'target' if t else 'nontarget'}\n" for i, t in enumerate(y))
    )
    return paths, str(key)


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "o").mkdir()
    paths, key = _scores(tmp_path)
    os.link(paths[1], tmp_path / "hard")
    os.symlink(paths[0], tmp_path / "soft")
    os.replace(paths[0], tmp_path / "o" / "s0")
    os.symlink(tmp_path / "o" / "s0", paths[0])
    status = main(["train", "--scores", *paths, "--key", key, "-o", "model.json"])
    assert status == 0
    return tmp_path


def _hashes(folder):
    return {p: _digest(folder / p) for p in ("o/s0", "s1", "key", "model.json")}


@pytest.mark.parametrize(
    "output", ["./o/s0", "o/../o/s0", "{abs}/o/s0", "s0", "soft", "hard", "model.json"]
)
def test_apply_refuses_an_output_that_is_an_input_or_the_model(workspace, capsys, output):
    before = _hashes(workspace)
    output = output.format(abs=workspace)
    status = main(["apply", "model.json", "o/s0", "s1", "-o", output])
    assert status == 1
    err = capsys.readouterr().err
    assert "would overwrite an input file" in err and err.count("\n") == 1
    assert _hashes(workspace) == before
    assert not [p for p in os.listdir(workspace) if p.startswith(".focal-")]


@pytest.mark.parametrize("output", ["key", "s1", "./hard"])
def test_train_refuses_to_replace_its_key_or_scores(workspace, capsys, output):
    before = _hashes(workspace)
    assert main(["train", "--scores", "s0", "s1", "--key", "key", "-o", output]) == 1
    assert "would overwrite an input file" in capsys.readouterr().err
    assert _hashes(workspace) == before


def test_an_output_folder_fails_before_any_work(workspace, capsys, monkeypatch):
    import focal.io.stream as stream

    def no_reading(*args, **kwargs):
        raise AssertionError("the files were read")

    monkeypatch.setattr(stream, "iter_score_chunks", no_reading)
    assert main(["apply", "model.json", "o/s0", "s1", "-o", "o"]) == 1
    assert capsys.readouterr().err == "focal: error: o: the output is a directory\n"


def test_a_symlink_output_is_followed_not_replaced(workspace, capsys):
    target = workspace / "o" / "result"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    os.symlink(target, workspace / "link")
    assert main(["apply", "model.json", "o/s0", "s1", "-o", "link"]) == 0
    assert os.path.islink(workspace / "link")
    assert len(read_scores(target)) == 2000
    assert os.stat(target).st_mode & 0o777 == 0o640


def test_a_fifo_output_is_streamed_to(workspace):
    fifo = workspace / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    assert main(["apply", "model.json", "o/s0", "s1", "-o", str(fifo)]) == 0
    reader.join(10)
    assert os.path.exists(fifo) and not os.path.isfile(fifo)
    assert got[0].count(b"\n") == 2000


@pytest.mark.parametrize("name", ["out.txt", "pipe"])
def test_the_output_written_is_the_one_checked(tmp_path, monkeypatch, name):
    # the output is looked at once: what write_output opens is what check_output found
    from focal._text import outputs

    output = tmp_path / name
    if name == "pipe":
        os.mkfifo(output)
        reader = threading.Thread(target=lambda: open(output, "rb").read())
        reader.start()
    looked = []
    target = outputs._target
    monkeypatch.setattr(outputs, "_target", lambda path: looked.append(path) or target(path))
    with write_output(output) as out:
        out.write(b"x\n")
    if name == "pipe":
        reader.join(10)
    else:
        assert output.read_bytes() == b"x\n"
    assert looked == [str(output)]


def test_dev_stdout_and_dash_stream_to_standard_output(workspace):
    for output in ("-", "/dev/stdout"):
        run = subprocess.run(
            [sys.executable, "-m", "focal", "apply", "model.json", "o/s0", "s1", "-o", output],
            capture_output=True,
            cwd=workspace,
            env=ENV,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.count(b"\n") == 2000 and run.stdout.startswith(b"m0 t0 ")
        assert b"2,000 trials" in run.stderr


def test_dev_stdout_redirected_to_a_file_appends_to_it(workspace):
    log = workspace / "log"
    log.write_bytes(b"previous\n")
    with open(log, "ab") as out:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "focal",
                "apply",
                "model.json",
                "o/s0",
                "s1",
                "-o",
                "/dev/stdout",
            ],
            stdout=out,
            stderr=subprocess.PIPE,
            cwd=workspace,
            env=ENV,
            timeout=120,
        )
    assert run.returncode == 0, run.stderr
    text = log.read_bytes()
    assert text.startswith(b"previous\nm0 t0 ") and text.count(b"\n") == 2001


def test_a_full_disk_names_the_output(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with pytest.raises(ValueError, match=r"^/dev/full: cannot write: No space left on device"):
        write_scores("/dev/full", ["a"] * 100_000, ["b"] * 100_000, np.zeros(100_000))
    path = tmp_path / "x"
    path.write_text("old\n")

    def full(*args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(ValueError, match=rf"^{path}: cannot write: No space left on device"):
        with write_output(path) as out:
            out.write(b"new")
            full()
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["x"]


def test_library_writers_are_atomic(tmp_path, monkeypatch):
    import focal.io.binary as binary

    path = tmp_path / "scores"
    path.write_text("old\n")
    calls = []

    def failing(columns, sep=b" "):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("interrupted in the middle")
        return b"x y 1\n" * len(columns[0])

    monkeypatch.setattr(binary, "format_lines", failing)
    with pytest.raises(RuntimeError):
        write_scores(path, ["a"] * 10, ["b"] * 10, np.zeros(10), chunk_size=4)
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["scores"]


def test_save_refuses_a_directory_and_keeps_links(tmp_path):
    model = LogisticFusion().fit(np.array([[0.0], [1.0], [2.0], [3.0]]), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="the output is a directory"):
        focal.save(model, tmp_path)
    real = tmp_path / "real.json"
    real.write_text("{}")
    os.symlink(real, tmp_path / "link.json")
    focal.save(model, tmp_path / "link.json")
    assert os.path.islink(tmp_path / "link.json") and focal.load(real).coef_.shape == (1,)


def test_check_output_compares_files_not_names(tmp_path):
    a = tmp_path / "a"
    a.write_text("x")
    os.link(a, tmp_path / "b")
    with pytest.raises(ValueError, match="would overwrite"):
        check_output(tmp_path / "b", [str(a)])
    check_output(tmp_path / "c", [str(a)])  # a new file is no input


def test_what_an_output_is_comes_from_the_file_not_the_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkfifo("fifo")
    (tmp_path / "file").write_text("x")
    assert is_stream("-") and is_stream("fifo") and is_stream(os.devnull)
    assert not is_stream("file") and not is_stream("new")
    if os.path.isdir("/proc/self/cwd"):
        assert not is_stream("/proc/self/cwd/file")
    if os.path.isdir("/dev/shm"):
        assert not is_stream("/dev/shm/focal-no-such-file")


@pytest.mark.parametrize(
    "name, message",
    [
        ("", "the output name is empty"),
        ("out/", "out/: the output names a folder"),
        ("missing/out", "missing/out: cannot write: the folder missing does not exist"),
        ("file/out", "file/out: cannot write: the folder file is not a folder"),
        (os.fsdecode(b"o\xff"), "the output name b'o\\xff' is not UTF-8 text"),
    ],
)
def test_output_names_are_checked_before_any_work(tmp_path, monkeypatch, name, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match=re.escape(message)):
        check_output(name)
    assert sorted(os.listdir(tmp_path)) == ["file"]


def test_save_names_the_file_once(tmp_path):
    model = LogisticFusion().fit(np.array([[0.0], [1.0], [2.0], [3.0]]), [0, 1, 0, 1])
    with pytest.raises(ValueError) as error:
        focal.save(model, tmp_path / "no" / "m.json")
    assert str(error.value) == (
        f"{tmp_path}/no/m.json: cannot write: the folder {tmp_path}/no does not exist"
    )


def _old_report(folder):
    folder.mkdir()
    (folder / "det.png").write_bytes(b"old det")
    (folder / "index.html").write_bytes(b"old page")
    return {p: (folder / p).read_bytes() for p in os.listdir(folder)}


def test_a_report_folder_gets_every_file_or_none(tmp_path):
    folder = tmp_path / "plots"
    old = _old_report(folder)
    with pytest.raises(RuntimeError, match="drawing failed"):
        with FolderWriter(folder) as files:
            files.write("det.png", b"new det")
            raise RuntimeError("drawing failed")
    assert {p: (folder / p).read_bytes() for p in os.listdir(folder)} == old
    with FolderWriter(folder) as files:
        files.write("det.png", b"new det")
        assert (folder / "det.png").read_bytes() == b"old det"  # renamed at the end only
        files.write("index.html", b"new page")
    assert (folder / "det.png").read_bytes() == b"new det"
    assert sorted(os.listdir(folder)) == ["det.png", "index.html"]
    # a folder it created (with its parents) is removed on failure; others' folders stay
    (tmp_path / "mine").mkdir()
    with pytest.raises(KeyboardInterrupt):
        with FolderWriter(tmp_path / "mine" / "a" / "b") as files:
            files.write("det.png", b"x")
            raise KeyboardInterrupt
    assert os.listdir(tmp_path / "mine") == []


def test_a_full_disk_in_a_report_names_the_file(tmp_path):
    def full(*args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(ValueError, match=r"plots/ape.png: cannot write: No space left on device"):
        with FolderWriter(tmp_path / "plots") as files:
            files.write("det.png", b"x")
            with files.open("ape.png") as out:
                out.write(b"half")
                full()
    assert os.listdir(tmp_path) == []


def test_a_report_replaces_links_and_refuses_inputs_and_folders(tmp_path):
    folder = tmp_path / "plots"
    folder.mkdir()
    other, scores = tmp_path / "other", tmp_path / "scores"
    other.write_text("keep")
    scores.write_text("m t 1\n")
    os.symlink(other, folder / "index.html")
    os.link(scores, folder / "det.png")
    (folder / "ape.png").mkdir()
    with pytest.raises(ValueError, match=r"det.png: the report would overwrite an input file"):
        FolderWriter(folder, [scores])  # checked when made, before any figure is drawn
    os.unlink(folder / "det.png")
    with FolderWriter(folder, [scores]) as files:
        with pytest.raises(ValueError, match=r"ape.png: the output is a directory"):
            files.write("ape.png", b"x")
        with pytest.raises(ValueError, match="is not a file name"):
            files.write("../escape.png", b"x")
        files.write("index.html", b"page")
    assert other.read_text() == "keep" and not (folder / "index.html").is_symlink()
    assert (folder / "index.html").read_bytes() == b"page"
    with pytest.raises(ValueError, match="not a folder"):
        FolderWriter(other)


# ---------------------------------------------------------------------- interruptions


def _big_inputs(folder, n):
    rng = np.random.default_rng(5)
    models = np.char.add("spk", (np.arange(n) % 5000).astype(str))
    tests = np.char.add("seg", np.arange(n).astype(str))
    paths = []
    for j in range(2):
        path = folder / f"big{j}"
        write_scores(path, models, tests, np.round(rng.normal(size=n), 6))
        paths.append(str(path))
    X = rng.normal(size=(400, 2))
    y = (X.sum(axis=1) + rng.normal(size=400) > 0).astype(int)
    focal.save(LogisticFusion().fit(X, y), folder / "model.json")
    return paths


def _untraced():
    """The environment of a process that a test signals, without coverage's start-up hook: a
    signal whose handler raises (SIGINT, focal's SIGTERM) landing inside coverage's tracer
    leaves coverage's own lock held, and the process then waits on it for ever (seen in CI).
    """
    return {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_PROCESS_")}


def test_sigterm_leaves_no_temporary_file(tmp_path):
    paths = _big_inputs(tmp_path, 500_000)  # 8 output chunks: the signal lands mid-write
    out = tmp_path / "out"
    out.write_text("old\n")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "focal",
            "apply",
            str(tmp_path / "model.json"),
            *paths,
            "-o",
            str(out),
        ],
        stderr=subprocess.PIPE,
        env=_untraced(),
    )
    while not [p for p in os.listdir(tmp_path) if p.startswith(".focal-")]:
        time.sleep(0.01)
        assert proc.poll() is None, proc.stderr.read()
    proc.send_signal(signal.SIGTERM)  # the output is being written
    proc.wait(60)
    assert proc.returncode != 0
    assert out.read_text() == "old\n"
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".focal-")]


_SIGTERM_AT_CREATION = """
import os, signal, sys, tempfile
from focal._text.outputs import write_output

real, calls = tempfile.mkstemp, []

def mkstemp(*args, **kwargs):  # SIGTERM the moment the n-th temporary file exists
    made = real(*args, **kwargs)
    calls.append(made)
    if len(calls) == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGTERM)
    return made

tempfile.mkstemp = mkstemp
with write_output(sys.argv[1]) as out:
    out.write(b"new")
"""


@pytest.mark.parametrize("n", [1, 2], ids=["probe", "output"])
def test_sigterm_as_the_temporary_file_is_created_leaves_no_file(tmp_path, n):
    # the window of the test above that a loaded machine hits: the signal lands between the
    # creation of a temporary file (the probe of the folder, then the output's) and the code
    # that removes it
    out = tmp_path / "out"
    out.write_text("old\n")
    run = subprocess.run(
        [sys.executable, "-c", _SIGTERM_AT_CREATION, str(out), str(n)],
        capture_output=True,
        env=dict(_untraced(), PYTHONPATH=str(ROOT)),
        timeout=60,
    )
    assert run.returncode == 128 + signal.SIGTERM, run.stderr
    assert out.read_text() == "old\n"
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".focal-")]


@pytest.mark.slow
def test_interrupting_apply_never_leaves_a_partial_output_or_changes_an_input(tmp_path):
    """1.5e6 trials, 12 interruptions at random times (SIGINT and SIGKILL): the output is the
    complete old file or the complete new one; the inputs are unchanged (by hash).
    """
    n = 1_500_000
    paths = _big_inputs(tmp_path, n)
    model = str(tmp_path / "model.json")
    inputs_before = {p: _digest(p) for p in paths + [model]}
    out = tmp_path / "out"
    out.write_bytes(b"old\n")
    old = _digest(out)
    command = [sys.executable, "-m", "focal", "apply", model, *paths, "-o", str(out)]
    start = time.monotonic()
    subprocess.run(command, check=True, capture_output=True)
    full_time = time.monotonic() - start
    new = _digest(out)
    assert len(read_scores(out)) == n
    out.write_bytes(b"old\n")
    rng = random.Random(7)
    outcomes = set()
    for trial in range(12):
        sig = signal.SIGINT if trial % 2 == 0 else signal.SIGKILL
        proc = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_untraced()
        )
        time.sleep(rng.uniform(0.0, 1.1 * full_time))
        proc.send_signal(sig)
        proc.wait(120)
        now = _digest(out)
        assert now in (old, new), f"partial output after {sig.name}"
        outcomes.add(now == new)
        if sig == signal.SIGINT:
            assert not [p for p in os.listdir(tmp_path) if p.startswith(".focal-")]
        for p in tmp_path.iterdir():  # SIGKILL may leave a temporary file: never the output
            if p.name.startswith(".focal-"):
                p.unlink()
        out.write_bytes(b"old\n")
    assert {p: _digest(p) for p in paths + [model]} == inputs_before
    assert False in outcomes  # some runs were interrupted before the output was complete
