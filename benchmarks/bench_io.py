"""Score files: reading a 10M-line file, and streaming a 3-system fusion through apply_to_files.

Targets: a 10M-line score file loads in a few seconds and within 3x its in-memory
array size; applying a transform to 10M trials x 3 systems (the work of ``focal apply``) runs at
>= 1M trials/s end to end, parsing and writing included, with peak memory under 1 GiB.

The files are generated at run time in a temporary folder (about 300 MB per 10M-line file) and
deleted afterwards. Their scores have 6 decimals, as BOSARIS and Kaldi back-ends write them.
"""

from __future__ import annotations

import gc
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
from _common import best_time, optional_import, peak_memory, print_table, skipped

from focal.io import iter_score_chunks, read_scores, write_scores

N_SYSTEMS = 3
WEIGHTS = np.array([1.2, 0.8, -0.3])


def _make_files(folder, n):
    """Three systems' score files over the same n trials, in the same order."""
    rng = np.random.default_rng(0)
    models = np.char.add(
        b"spk", np.char.zfill(np.char.encode(rng.integers(0, 50_000, n).astype("U5")), 5)
    )
    tests = np.char.add(b"seg", np.char.zfill(np.char.encode(np.arange(n).astype("U8")), 8))
    paths, write_times = [], []
    for k in range(N_SYSTEMS):
        scores = np.round(rng.normal(size=n) * 3.0 + k, 6)
        path = folder / f"sys{k + 1}.scores"
        t0 = time.perf_counter()
        write_scores(path, models, tests, scores)
        write_times.append(time.perf_counter() - t0)
        paths.append(path)
    return paths, min(write_times)


_CHILD = r"""
import json, resource, sys, time
import numpy as np
from focal.io import apply_to_files
weights = np.array(json.loads(sys.argv[1]))
def fuse(X):
    out = np.full(X.shape[0], 0.5)
    for j in range(X.shape[1]):
        out = out + weights[j] * X[:, j]
    return out
paths, output = sys.argv[2:-1], sys.argv[-1]
t0 = time.perf_counter()
n = apply_to_files(fuse, paths, output)
seconds = time.perf_counter() - t0
try:  # this process's own high-water mark (ru_maxrss also counts the parent's pages at fork)
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) * 1024
except (OSError, StopIteration):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"n": n, "seconds": seconds, "max_rss": peak}))
"""


def _apply_in_child(paths, output):
    """Run apply_to_files in a fresh process: its peak RSS is the whole program's memory."""
    root = pathlib.Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(WEIGHTS.tolist()), *map(str, paths), str(output)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(result.stdout)


def _check_output(paths, output, n_check=1000):
    """The first trials of the output equal the affine fusion of the inputs."""
    chunk = next(iter_score_chunks(paths, chunk_size=n_check))
    expected = np.full(len(chunk), 0.5)
    for j in range(N_SYSTEMS):
        expected = expected + WEIGHTS[j] * chunk.X[:, j]
    got = next(iter_score_chunks([output], chunk_size=n_check)).X[:, 0]
    return bool(np.array_equal(got, expected))


def run(quick: bool = False):
    n = 1_000_000 if quick else 10_000_000
    with tempfile.TemporaryDirectory(prefix="focal-bench-io-") as tmp:
        folder = pathlib.Path(tmp)
        paths, t_write = _make_files(folder, n)
        size = paths[0].stat().st_size
        print(f"{n:,} trials x {N_SYSTEMS} systems; one score file is {size / 2**20:.0f} MiB")

        # 1. read one file
        t_read, scores = best_time(read_scores, paths[0], repeat=2)
        arrays = scores.models.nbytes + scores.tests.nbytes + scores.scores.nbytes
        del scores
        gc.collect()
        peak, _ = peak_memory(lambda: read_scores(paths[0]) is None)
        rows = [("focal.io.read_scores", t_read)]
        pd = optional_import("pandas")
        if pd is not None:
            t_pd, _ = best_time(
                lambda: (
                    pd.read_csv(paths[0], sep=" ", header=None, names=["model", "test", "score"])
                    is None
                ),
                repeat=1,
            )
            rows.append(("pandas.read_csv (C engine; ids as Python str)", t_pd))
        print_table(f"read a {n:,}-line score file", rows)
        if pd is None:
            skipped("pandas", "not installed")
        print(
            f"  read_scores: {n / t_read / 1e6:.2f} M lines/s; target: a 10M-line file in a few "
            f"seconds -> {t_read * 10_000_000 / n:.1f} s per 10M lines"
        )
        print(
            f"  peak memory {peak / 2**20:.0f} MiB = {peak / arrays:.2f}x the result arrays "
            f"({arrays / 2**20:.0f} MiB: ids as bytes, float64 scores); target <= 3x"
        )
        print(f"  write_scores: {n / t_write / 1e6:.2f} M lines/s (shortest round-trip decimals)")

        # 2. stream the fusion of three systems
        output = folder / "fused.scores"
        best = None
        for _ in range(2):
            result = _apply_in_child(paths, output)
            if best is None or result["seconds"] < best["seconds"]:
                best = result
        rate = best["n"] / best["seconds"]
        print(
            f"\n== apply_to_files: affine fusion of {N_SYSTEMS} systems, {n:,} trials "
            f"(read {N_SYSTEMS} files, check trial ids, transform, write)"
        )
        print(
            f"  {best['seconds']:.2f} s = {rate / 1e6:.2f} M trials/s; target >= 1 M trials/s "
            f"({rate / 1e6:.2f}x the target)"
        )
        print(
            f"  peak RSS of the whole process {best['max_rss'] / 2**20:.0f} MiB; target < 1024 MiB"
        )
        print(f"  output equals the fusion of the inputs: {_check_output(paths, output)}")
