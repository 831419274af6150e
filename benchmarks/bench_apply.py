"""``focal apply`` streaming a saved 3-system fusion over 10M trials, against a polars script.

Target: ``focal apply`` streams a 3-system binary fusion at >= 1.5 M trials/s end to end on a
2-core machine (a process: Python's start, imports, loading the model, parsing the three score
files, checking that they list the same trials, the fusion, writing ``model test llr`` lines).
The peer is a polars script doing the same work (read the three files, check the trial ids,
fuse with the model's weights, write): the floor a user would write instead.

Each contender runs ``repeat`` times, interleaved; min and median wall times are printed, with
the CPU time (user + system, all threads) and the peak RSS. The steps read / apply / write are
then timed one after the other in this process (one thread) and printed as shares of their sum.

The score files are those of ``bench_io`` (about 300 MB per 10M-line file). They are generated
once in ``$FOCAL_BENCH_DIR`` (default: a folder under the system's temporary folder) and reused
by later runs. With ``$FOCAL_BENCH_REFERENCE`` set to another focal source tree (e.g. a worktree
of main), its ``focal apply`` runs too, side by side, and the outputs are compared byte for byte.
"""

from __future__ import annotations

import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from _common import optional_import, print_table, skipped
from bench_cli import _LAUNCHER, _models
from bench_io import N_SYSTEMS, _make_files

ROOT = pathlib.Path(__file__).resolve().parent.parent

_POLARS = r"""
import json, sys
import numpy as np
import polars as pl
coef, intercept = json.loads(sys.argv[1])
paths, output = sys.argv[2:-1], sys.argv[-1]
frames = [pl.read_csv(p, separator=" ", has_header=False, new_columns=["model", "test", "score"])
          for p in paths]
for f in frames[1:]:
    if not (f["model"].equals(frames[0]["model"]) and f["test"].equals(frames[0]["test"])):
        sys.exit("the files do not list the same trials")
llr = intercept
for w, f in zip(coef, frames):
    llr = llr + w * f["score"]
frames[0].select("model", "test").with_columns(llr=llr).write_csv(
    output, separator=" ", include_header=False)
"""


def _inputs(n):
    """The three systems' files (generated once) and a folder for models and outputs."""
    base = pathlib.Path(os.environ.get("FOCAL_BENCH_DIR") or tempfile.gettempdir())
    folder = base / f"focal-bench-apply-{n}"
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"sys{k + 1}.scores" for k in range(N_SYSTEMS)]
    done = folder / "complete"
    if not done.exists():
        print(f"generating {n:,} trials x {N_SYSTEMS} systems in {folder} (once)")
        _make_files(folder, n)
        done.write_text("ok\n")
    return folder, paths


def _process(command, root=ROOT):
    """Run ``command`` as a process: (wall seconds, CPU seconds, peak RSS bytes)."""
    env = dict(os.environ, PYTHONPATH=str(root))
    t0 = os.times()
    report = json.loads(
        subprocess.run(
            [sys.executable, "-c", _LAUNCHER, *map(str, command)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    t1 = os.times()
    if report["status"] != 0:
        raise RuntimeError(f"{command[:4]} failed ({report['status']}): {report['stderr']}")
    cpu = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
    return report["seconds"], cpu, report["peak"]


def _steps(model_path, paths, output):
    """CPU seconds of read (parse, check ids), apply (the model) and write (format, write), one
    after the other in this thread (no reader or writer thread): CPU time, since wall time on a
    shared machine also counts the other programs' turns.
    """
    from focal.io.stream import open_inputs
    from focal.runtime import load
    from focal.workflows.apply import _write_chunk

    model = load(model_path)
    times = dict.fromkeys(("read", "apply", "write"), 0.0)
    with open_inputs(paths, threads=0, records=True) as files, open(output, "wb") as out:
        chunks = files.chunks(1 << 16)
        while True:
            t0 = time.thread_time()
            chunk = next(chunks, None)
            t1 = time.thread_time()
            times["read"] += t1 - t0
            if chunk is None:
                break
            Y = model.transform(chunk.X)
            t2 = time.thread_time()
            _write_chunk(out, chunk, np.asarray(Y, dtype=np.float64).ravel())
            times["apply"] += t2 - t1
            times["write"] += time.thread_time() - t2
    return times


def run(quick: bool = False):
    n = 1_000_000 if quick else 10_000_000
    repeat = 2 if quick else 3
    folder, paths = _inputs(n)
    model = _models(folder)["fuser.json"]
    print(
        f"{n:,} trials x {N_SYSTEMS} systems; one score file is "
        f"{paths[0].stat().st_size / 2**20:.0f} MiB; {os.cpu_count()} CPUs; repeat {repeat}"
    )
    fused = json.loads(model.read_text())["model"]["fitted"]
    weights = json.dumps([fused["coef_"], float(fused["intercept_"])])
    contenders = {
        "focal apply (fuser.json)": [
            sys.executable,
            "-m",
            "focal",
            "apply",
            model,
            *paths,
            "-o",
            folder / "out.focal",
        ],
    }
    reference = os.environ.get("FOCAL_BENCH_REFERENCE")
    if reference:
        contenders["focal apply, reference tree"] = [
            sys.executable,
            "-m",
            "focal",
            "apply",
            model,
            *paths,
            "-o",
            folder / "out.reference",
        ]
    if optional_import("polars") is not None:
        contenders["polars script (read, check ids, fuse, write)"] = [
            sys.executable,
            "-c",
            _POLARS,
            weights,
            *paths,
            folder / "out.polars",
        ]
    runs = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, command in contenders.items():
            root = reference if name == "focal apply, reference tree" else ROOT
            runs[name].append(_process(command, root))
    print_table(
        f"apply a 3-system fusion to {n:,} trials (process, min of {repeat})",
        [(name, min(r[0] for r in rs)) for name, rs in runs.items()],
    )
    if "polars" not in " ".join(contenders):
        skipped("polars", "not installed")
    for name, rs in runs.items():
        wall = [r[0] for r in rs]
        print(
            f"  {name}: min {min(wall):.2f} s, median {statistics.median(wall):.2f} s = "
            f"{n / min(wall) / 1e6:.2f} / {n / statistics.median(wall) / 1e6:.2f} M trials/s "
            f"(min / median); CPU {min(r[1] for r in rs):.2f} s; peak RSS "
            f"{max(r[2] for r in rs) / 2**20:.0f} MiB"
        )
    if reference:
        same = (folder / "out.reference").read_bytes() == (folder / "out.focal").read_bytes()
        print(f"  output identical to the reference tree's: {same}")
    best = n / min(r[0] for r in runs["focal apply (fuser.json)"])
    print(f"  target >= 1.5 M trials/s: {best / 1e6:.2f} M trials/s ({best / 1.5e6:.2f}x)")
    steps = _steps(model, paths, folder / "out.steps")
    total = sum(steps.values())
    print(f"\n== steps of focal apply, one after the other in one thread ({total:.2f} s CPU)")
    for step, seconds in steps.items():
        print(f"  {step:<6} {seconds:7.2f} s  {seconds / total:6.1%}")
    same = (folder / "out.steps").read_bytes() == (folder / "out.focal").read_bytes()
    print(f"  output of the steps equals focal apply's: {same}")
