"""``focal apply`` end to end, as a user runs it: a saved 3-system fusion on 10M trials.

Target: ``focal apply`` on a 10M-trial, 3-system binary set runs in bounded memory
(peak under 1 GiB) and at least 1M trials/s end to end: the command is started as a process
(``python -m focal apply fuser.json sys1 sys2 sys3 -o out``), so the time includes Python's
start, the imports, loading and checking the JSON model, parsing the three files, checking
the trial ids, the fusion and writing the output. Peak memory is the process's maximum
resident set size, as ``/usr/bin/time`` reports it (``getrusage`` of a small launcher).

The score files are those of ``bench_io`` (generated in a temporary folder, about 300 MB per
10M-line file, deleted afterwards).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
from _common import print_table
from bench_io import N_SYSTEMS, _make_files

import focal
from focal.io import iter_score_chunks

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _models(folder):
    """A 3-system fusion, and the fusion followed by PAV, trained on synthetic dev scores."""
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(1)
    y = rng.random(200_000) < 0.1
    X = rng.normal(size=(y.size, N_SYSTEMS)) * 3.0 + np.arange(N_SYSTEMS) + 2.0 * y[:, None]
    paths = {}
    for name, model in (
        ("fuser.json", focal.LogisticFusion(p_target=0.01)),
        (
            "fuser_pav.json",
            make_pipeline(focal.LogisticFusion(p_target=0.01), focal.PAVCalibrator()),
        ),
    ):
        focal.save(model.fit(X, y), folder / name)
        paths[name] = folder / name
    return paths


# A small launcher (no NumPy: a few MiB) starts the command and reports its wall time and the
# maximum resident set size of the command's process: measured from here instead, the figure
# could include this benchmark's own pages at the spawn.
_LAUNCHER = r"""
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
result = subprocess.run(sys.argv[1:], capture_output=True, text=True)
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024   # KiB on Linux
print(json.dumps({"status": result.returncode, "stderr": result.stderr, "seconds": seconds,
                  "peak": peak}))
"""


def _focal_apply(model, inputs, output):
    """Run ``python -m focal apply`` as a process: (wall seconds, peak RSS bytes)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = [
        sys.executable,
        "-m",
        "focal",
        "apply",
        str(model),
        *map(str, inputs),
        "-o",
        str(output),
    ]
    report = json.loads(
        subprocess.run(
            [sys.executable, "-c", _LAUNCHER, *command],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    if report["status"] != 0:
        raise RuntimeError(f"focal apply failed ({report['status']}): {report['stderr']}")
    return report["seconds"], report["peak"]


def _startup():
    """Seconds of ``python -m focal --version`` and of importing what apply loads."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import focal.models.persistence, focal.estimators, focal.io, sklearn.pipeline",
        ],
        env=env,
        check=True,
    )
    return time.perf_counter() - t0


def _output_is_the_fusion(model_path, inputs, output, n_check=2000):
    model = focal.load(model_path)
    chunk = next(iter_score_chunks(inputs, chunk_size=n_check))
    got = next(iter_score_chunks([output], chunk_size=n_check)).X[:, 0]
    return bool(np.array_equal(got, model.transform(chunk.X)[:, 0]))


def run(quick: bool = False):
    n = 1_000_000 if quick else 10_000_000
    with tempfile.TemporaryDirectory(prefix="focal-bench-cli-") as tmp:
        folder = pathlib.Path(tmp)
        inputs, _ = _make_files(folder, n)
        models = _models(folder)
        print(
            f"{n:,} trials x {N_SYSTEMS} systems; one score file is "
            f"{inputs[0].stat().st_size / 2**20:.0f} MiB"
        )
        rows, results = [], {}
        for name, what in (
            ("fuser.json", "LogisticFusion"),
            ("fuser_pav.json", "LogisticFusion + PAVCalibrator pipeline"),
        ):
            output = folder / "out.scores"
            runs = [_focal_apply(models[name], inputs, output) for _ in range(2)]
            seconds = min(s for s, _ in runs)
            peak = max(p for _, p in runs)
            results[what] = (seconds, peak, _output_is_the_fusion(models[name], inputs, output))
            rows.append((f"focal apply {name} ({what})", seconds))
        print_table(f"focal apply, {n:,} trials x {N_SYSTEMS} systems, end to end (process)", rows)
        startup = _startup()
        for what, (seconds, peak, ok) in results.items():
            rate = n / seconds
            print(
                f"  {what}: {rate / 1e6:.2f} M trials/s ({rate / 1e6:.2f}x the 1 M trials/s "
                f"target), peak RSS {peak / 2**20:.0f} MiB ({peak / 2**30:.2f}x the 1 GiB "
                f"limit); output equals model.transform of the inputs: {ok}"
            )
        print(f"  (of which Python start and imports of focal, scikit-learn: {startup:.2f} s)")
