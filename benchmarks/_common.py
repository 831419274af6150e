"""Shared helpers for the benchmark scripts: timing, peak memory, ratio tables."""

from __future__ import annotations

import gc
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
