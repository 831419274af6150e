"""Shared helpers for the benchmark scripts: timing, peak memory, ratio tables."""

from __future__ import annotations

import filecmp
import gc
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc


def best_time(fn, *args, repeat: int = 3, **kwargs):
    """Best wall-clock time of ``repeat`` calls (seconds) and the last result."""
    best = float("inf")
    result = None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - t0)
    return best, result


def interleaved_best(calls, repeat: int = 5):
    """Best time of each ``(fn, args)`` in ``calls``, running them in turn ``repeat`` times.

    Interleaving makes the ratios fair on a shared machine: a burst of load from elsewhere slows
    every contender's round, not one contender's whole measurement.
    """
    best = [float("inf")] * len(calls)
    results = [None] * len(calls)
    for _ in range(repeat):
        for i, (fn, args) in enumerate(calls):
            gc.collect()
            t0 = time.perf_counter()
            results[i] = fn(*args)
            best[i] = min(best[i], time.perf_counter() - t0)
    return best, results


def interleaved_times(calls, repeat: int = 5):
    """Every wall-clock time of each ``(fn, args)`` in ``calls``, run in turn ``repeat`` times
    (as :func:`interleaved_best`), and the last results: report their min and median.
    """
    times = [[] for _ in calls]
    results = [None] * len(calls)
    for _ in range(repeat):
        for i, (fn, args) in enumerate(calls):
            gc.collect()
            t0 = time.perf_counter()
            results[i] = fn(*args)
            times[i].append(time.perf_counter() - t0)
    return times, results


def peak_memory(fn, *args, **kwargs):
    """Peak bytes allocated through Python / NumPy while running ``fn`` once, and its result."""
    gc.collect()
    tracemalloc.start()
    try:
        result = fn(*args, **kwargs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, result


def optional_import(name: str):
    """Import a peer package, or return None (the caller prints a 'skipped' note)."""
    try:
        return __import__(name, fromlist=["_"])
    except Exception:  # a broken install of a peer must not break the benchmark
        return None


def print_table(title: str, rows, floor_label: str | None = None):
    """Print ``rows`` of (label, seconds) with each time's ratio to the first row (the floor)."""
    print(f"\n== {title}")
    if not rows:
        return
    floor = rows[0][1]
    width = max(len(r[0]) for r in rows)
    for label, seconds in rows:
        ratio = seconds / floor if floor > 0 else float("nan")
        print(f"  {label:<{width}}  {seconds:9.3f} s   {ratio:6.2f}x {floor_label or rows[0][0]}")


def skipped(peer: str, why: str):
    print(f"  (skipped {peer}: {why})")


# ---------------------------------------------------------------------------------------------
# whole commands as processes, raced against peers in the same run

ROOT = pathlib.Path(__file__).resolve().parent.parent

# A small launcher (no NumPy: a few MiB) runs the command and reports its wall time, its CPU time
# (user + system, all threads) and the maximum resident set size of the command's process
# (measured here, the figure could include the benchmark's own pages at the spawn).
LAUNCHER = r"""
import hashlib, json, resource, subprocess, sys, time
t0 = time.perf_counter()
result = subprocess.run(sys.argv[1:], capture_output=True)
seconds = time.perf_counter() - t0
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"status": result.returncode, "stderr": result.stderr.decode(errors="replace"),
                  "seconds": seconds, "cpu": usage.ru_utime + usage.ru_stime,
                  "peak": usage.ru_maxrss * 1024,   # KiB on Linux
                  "stdout": hashlib.sha256(result.stdout).hexdigest()}))
"""


def run_process(command, root=None):
    """Run ``command`` as a process with focal from ``root`` (default: this tree): a dict of
    ``seconds`` (wall), ``cpu``, ``peak`` (RSS bytes) and ``stdout`` (its SHA-256).
    """
    env = dict(os.environ, PYTHONPATH=str(root or ROOT))
    report = json.loads(
        subprocess.run(
            [sys.executable, "-c", LAUNCHER, *map(str, command)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    if report["status"] != 0:
        raise RuntimeError(f"{list(command)[:4]} failed ({report['status']}): {report['stderr']}")
    return report


def focal_command(*args):
    """``python -m focal ARGS``."""
    return [sys.executable, "-m", "focal", *map(str, args)]


def reference_root():
    """``$FOCAL_BENCH_REFERENCE``: another focal source tree (e.g. main before a change) whose
    commands race beside this tree's, their outputs compared byte for byte; or None.
    """
    return os.environ.get("FOCAL_BENCH_REFERENCE") or None


def race(title, contenders, repeat, n, floor=None):
    """Run ``{name: (command, root)}`` as processes, in turn, ``repeat`` times; print min and
    median wall time, trials per second, CPU time and peak RSS of each, and the ratios of the
    mins and of the medians to ``floor`` (a contender's name). Returns ``{name: [report]}``.
    """
    runs = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, (command, root) in contenders.items():
            runs[name].append(run_process(command, root))
    print(f"\n== {title} ({repeat} runs each, in turn)")
    width = max(map(len, runs))
    base = runs.get(floor)
    for name, reports in runs.items():
        wall = [r["seconds"] for r in reports]
        low, mid = min(wall), statistics.median(wall)
        ratio = ""
        if base is not None:
            floor_wall = [r["seconds"] for r in base]
            ratio = (
                f"  {low / min(floor_wall):5.2f}x / {mid / statistics.median(floor_wall):5.2f}x "
                f"{floor.split(':')[0]}"
            )
        print(
            f"  {name:<{width}}  min {low:6.2f} s  median {mid:6.2f} s  "
            f"{n / low / 1e6:5.2f} / {n / mid / 1e6:5.2f} M trials/s  "
            f"CPU {min(r['cpu'] for r in reports):6.2f} s  "
            f"peak {max(r['peak'] for r in reports) / 2**20:6.0f} MiB{ratio}"
        )
    return runs


def same_file(a, b):
    """Whether two files hold the same bytes."""
    return filecmp.cmp(a, b, shallow=False)


# ---------------------------------------------------------------------------------------------
# trial ids

ID_KINDS = ("short", "voxceleb")


def _voxceleb_ids(rng, n):
    """``id1SSSS/VVVVVVVVVVV/UUUUU.wav`` (29 characters): speaker, 11-character video id,
    utterance.
    """
    import numpy as np

    alphabet = np.frombuffer(
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", dtype=np.uint8
    )
    out = np.empty((n, 29), dtype=np.uint8)
    out[:, :3] = np.frombuffer(b"id1", dtype=np.uint8)
    out[:, 3:7] = (
        np.char.zfill(rng.integers(0, 1251, n).astype("S4"), 4).view(np.uint8).reshape(n, 4)
    )
    out[:, 7] = out[:, 19] = ord("/")
    out[:, 8:19] = alphabet[rng.integers(0, alphabet.size, (n, 11))]
    out[:, 20:25] = (
        np.char.zfill((rng.integers(1, 400, n)).astype("S5"), 5).view(np.uint8).reshape(n, 5)
    )
    out[:, 25:] = np.frombuffer(b".wav", dtype=np.uint8)
    return out.view("S29").ravel()


def trial_ids(rng, n, kind):
    """``(models, tests)`` of n distinct trials: ``short`` (``spk01234 seg00000042``, 8 and 11
    bytes) or ``voxceleb`` (29-character VoxCeleb-style file names, as in its trial lists).
    """
    import numpy as np

    if kind == "short":
        models = np.char.add(
            b"spk", np.char.zfill(np.char.encode(rng.integers(0, 50_000, n).astype("U5")), 5)
        )
        tests = np.char.add(b"seg", np.char.zfill(np.char.encode(np.arange(n).astype("U8")), 8))
        return models, tests
    return _voxceleb_ids(rng, n), _voxceleb_ids(rng, n)


def bench_folder(name):
    """``$FOCAL_BENCH_DIR/name`` (files generated once, reused by later runs), or a folder of
    that name under the system's temporary folder.
    """
    base = pathlib.Path(os.environ.get("FOCAL_BENCH_DIR") or tempfile.gettempdir())
    folder = base / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder
