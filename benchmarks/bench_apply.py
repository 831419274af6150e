"""``focal apply`` streaming a saved 3-system fusion over 10M trials, against a polars script.

Target: ``focal apply`` streams a 3-system binary fusion at >= 1.5 M trials/s end to end on a
2-core machine with the ``fast`` extra (a process: Python's start, imports, loading the model,
parsing the three score files, checking that they list the same trials, the fusion, writing
``model test llr`` lines), with short ids (``spk01234 seg00000042``) and VoxCeleb-style
29-character ids. The peer is a polars script doing the same work (read the three files, check
the trial ids, fuse with the model's weights, write): the floor a user would write instead.

Each contender runs ``repeat`` times, in turn; min and median wall times are printed, with the
CPU time (user + system, all threads) and the peak RSS. ``focal apply`` also runs with the
pyarrow kernels switched off (``FOCAL_NO_ARROW=1``): the figure that keeps them. The steps
read / apply / write are then timed one after the other in this process (one thread) and
printed as shares of their sum.

The score files are generated once in ``$FOCAL_BENCH_DIR`` (default: the system's temporary
folder) and reused. With ``$FOCAL_BENCH_REFERENCE`` set to another focal source tree (e.g. main
before a change), its ``focal apply`` runs too, side by side, and the outputs are compared byte
for byte.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
from _common import (
    ID_KINDS,
    bench_folder,
    focal_command,
    optional_import,
    race,
    reference_root,
    same_file,
    skipped,
    trial_ids,
)
from bench_cli import _models

N_SYSTEMS = 3

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


def _inputs(n, kind):
    """The three systems' files (the same trials in the same order, ``%.6f`` scores; generated
    once) and their folder.
    """
    from focal.io import write_scores

    folder = bench_folder(f"focal-bench-{n}-{kind}") / "apply"
    folder.mkdir(exist_ok=True)
    paths = [folder / f"sys{k + 1}.scores" for k in range(N_SYSTEMS)]
    done = folder / "complete"
    if not done.exists():
        print(f"generating {n:,} trials x {N_SYSTEMS} systems ({kind} ids) in {folder} (once)")
        rng = np.random.default_rng(0)
        models, tests = trial_ids(rng, n, kind)
        for k, path in enumerate(paths):
            write_scores(path, models, tests, np.round(rng.normal(size=n) * 3.0 + k, 6))
        done.write_text("ok\n")
    return folder, paths


def _steps(model_path, paths, output):
    """CPU seconds of read (parse, check ids), apply (the model) and write (format, write), one
    after the other in this thread (no reader or writer thread): CPU time, since wall time on a
    shared machine also counts the other programs' turns.
    """
    from focal.io.stream import stream
    from focal.runtime import load
    from focal.workflows.apply import _write_chunk

    model = load(model_path)
    times = dict.fromkeys(("read", "apply", "write"), 0.0)
    with stream(paths, threads=0, records=True) as files, open(output, "wb") as out:
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
    for kind in ID_KINDS:
        _run(n, kind, repeat)


def _run(n, kind, repeat):
    folder, paths = _inputs(n, kind)
    model = _models(folder)["fuser.json"]
    fused = json.loads(model.read_text())["model"]["fitted"]
    weights = json.dumps([fused["coef_"], float(fused["intercept_"])])
    output = folder / "out.focal"
    apply = ["apply", model, *paths]
    contenders = {
        "focal apply": (focal_command(*apply, "-o", output), None),
        "focal apply, no pyarrow kernels": (
            ["env", "FOCAL_NO_ARROW=1", *focal_command(*apply, "-o", folder / "out.numpy")],
            None,
        ),
    }
    reference = reference_root()
    if reference:
        contenders["focal apply, reference tree"] = (
            focal_command(*apply, "-o", folder / "out.reference"),
            reference,
        )
    if optional_import("polars") is not None:
        contenders["polars: read, check ids, fuse, write"] = (
            [sys.executable, "-c", _POLARS, weights, *paths, folder / "out.polars"],
            None,
        )
    else:
        skipped("polars", "not installed")
    race(
        f"apply a 3-system fusion to {n:,} trials ({kind} ids), streamed",
        contenders,
        repeat,
        n,
        floor="polars: read, check ids, fuse, write",
    )
    print(f"  output without pyarrow identical: {same_file(output, folder / 'out.numpy')}")
    if reference:
        same = same_file(output, folder / "out.reference")
        print(f"  output identical to the reference tree's: {same}")
    print("  target: focal apply >= 1.5 M trials/s")
    steps = _steps(model, paths, folder / "out.steps")
    total = sum(steps.values())
    print(f"  steps of focal apply, one after the other in one thread ({total:.2f} s CPU):")
    for step, seconds in steps.items():
        print(f"    {step:<6} {seconds:7.2f} s  {seconds / total:6.1%}")
    same = same_file(output, folder / "out.steps")
    print(f"    output of the steps equals focal apply's: {same}")
