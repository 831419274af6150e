"""The C_eta minimum over the affine calibration (thesis eq. 8.12): exact enumeration vs the
local search, side by side.

The exact minimum visits about ``n^(N-1)`` lines x trials (reported as ``work``); the local
search is a few exact line steps from three starts. Each row: best and median of ``repeat``
interleaved runs, and the minimum found (the exact one is never above the local one).
"""

from __future__ import annotations

import statistics

import numpy as np
from _common import interleaved_times

from focal.metrics import eta_risk_analysis
from focal.metrics.c_eta import exact_offset_work


def _trials(n, N, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N, n)
    y[:N] = np.arange(N)
    L = rng.normal(size=(n, N)) * 2.0
    L[np.arange(n), y] += 1.0
    return L, y


def run(quick: bool = False):
    sizes = [(3, 100), (3, 300), (4, 60)] if quick else [(3, 300), (3, 1000), (4, 100), (5, 40)]
    repeat = 2 if quick else 3
    print("\nC_eta minimum over the affine calibration: exact vs local search (flat eta)")
    for N, n in sizes:
        L, y = _trials(n, N, seed=N * n)
        calls = [
            (eta_risk_analysis, (L, y, None, None, False, False)),
            (eta_risk_analysis, (L, y, None, None, False, True)),
        ]
        times, results = interleaved_times(calls, repeat=repeat)
        local, exact = results[0].minimum, results[1].minimum
        work = 2 * exact_offset_work(L, y)
        print(f"  N = {N}, n = {n:5d}, exact work {work:10.3g} elements")
        for label, t, value in (("local", times[0], local), ("exact", times[1], exact)):
            print(
                f"    {label}: min {min(t):7.3f} s  median {statistics.median(t):7.3f} s"
                f"  minimum {value:.6f}"
            )
