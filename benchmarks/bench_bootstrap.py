"""Bootstrap intervals of the EER: the smoothed bootstrap (default) against the plain one.

Both draw the same replicate weights; the smoothed one jitters every drawn copy of a trial and
takes the ROCCH-EER of a block of replicates at once from one sort per row, the plain one runs
the weighted PAV of each replicate. Reported: min and median of interleaved runs, and the ratio
to the plain bootstrap's Cllr alone (one matrix product per block: the floor).
"""

from __future__ import annotations

import numpy as np
from _common import interleaved_times

from focal.metrics import bootstrap_ci


def run(quick: bool = False):
    n, n_bootstrap = (2_000, 200) if quick else (20_000, 1000)
    rng = np.random.default_rng(0)
    tar, non = rng.normal(2.0, 2.0, n), rng.normal(-2.0, 2.0, n)
    print(f"{n:,} + {n:,} trials, {n_bootstrap} replicates, one process")

    def interval(measure, smoothing):
        return bootstrap_ci(
            measure, tar, non, n_bootstrap=n_bootstrap, random_state=0, smoothing=smoothing
        )

    calls = [
        (interval, ("cllr", None)),
        (interval, ("eer", None)),
        (interval, ("eer", 1.0)),
        (interval, (["eer", "conventional_eer", ("min_dcf", 0.01)], 1.0)),
    ]
    labels = [
        "Cllr (floor)",
        "EER, plain (weighted PAV per replicate)",
        "EER, smoothed (default)",
        "EER + conventional EER + minDCF, smoothed",
    ]
    times, _ = interleaved_times(calls, repeat=3)
    floor = min(times[0])
    print("\n== bootstrap intervals: min / median seconds, ratio of the mins to the floor")
    width = max(map(len, labels))
    for label, t in zip(labels, times):
        print(f"  {label:<{width}}  {min(t):8.3f} / {np.median(t):8.3f} s  {min(t) / floor:6.2f}x")


if __name__ == "__main__":
    run()
