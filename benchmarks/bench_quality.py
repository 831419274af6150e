"""Quality-measure fusion: 10^6 trials x 3 systems with 2 + 2 quality measures.

Target: fitting ``QualityFusion`` (each form) takes at most 3x the time of ``LogisticFusion``
on the same scores. ``QualityFusion.fit`` includes fitting that affine fusion (its back-off and
starting point), so the ratio is the full price of the quality terms. The contenders run in
turn, ``repeat`` rounds; min and median of the rounds are printed, and the ratios of both.
"""

from __future__ import annotations

import gc
import time

import numpy as np

from focal import LogisticFusion, QualityFusion

P_TARGET = 0.05


def _data(n, seed=0):
    """Three correlated systems whose calibration drifts with the log durations of both sides,
    and a second quality measure (an SNR in dB) that moves the offset.
    """
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.1
    dur = np.exp(rng.uniform(np.log(3), np.log(120), size=(n, 2)))
    snr = rng.uniform(0, 30, size=(n, 2))
    L = np.log(dur.min(axis=1))
    shared = rng.standard_normal(n)
    X = (
        0.5 * shared[:, None]
        + rng.standard_normal((n, 3))
        + y[:, None] * (0.5 * L)[:, None] * np.array([1.0, 0.8, 0.6])
    )
    X += (0.3 * L - 0.02 * snr.min(axis=1))[:, None]
    X *= np.array([3.0, 0.05, 1.0])
    Q = np.column_stack([dur[:, 0], snr[:, 0], dur[:, 1], snr[:, 1]])  # model side, test side
    return X, y, Q


def _rounds(calls, repeat):
    times = [[] for _ in calls]
    for _ in range(repeat):
        for i, fn in enumerate(calls):
            gc.collect()
            t0 = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t0)
    return [np.array(t) for t in times]


def run(quick: bool = False):
    n = 50_000 if quick else 1_000_000
    repeat = 3 if quick else 7
    X, y, Q = _data(n)
    names = ["duration", "snr"]
    contenders = [("LogisticFusion", lambda: LogisticFusion(p_target=P_TARGET).fit(X, y))]
    for form in ("bilinear", "linear", "scale"):

        def fit(form=form):
            return QualityFusion(
                form=form, measures=names, quality_transform=["log", None], p_target=P_TARGET
            ).fit(X, y, quality=Q)

        contenders.append((f"QualityFusion({form})", fit))
    times = _rounds([fn for _, fn in contenders], repeat)
    print(f"\n== fit, {n} trials x 3 systems, 2 + 2 quality measures ({repeat} rounds)")
    base_min, base_med = times[0].min(), np.median(times[0])
    width = max(len(label) for label, _ in contenders)
    for (label, _), t in zip(contenders, times):
        print(
            f"  {label:<{width}}  min {t.min():7.3f} s  median {np.median(t):7.3f} s   "
            f"ratio min {t.min() / base_min:5.2f}x  median {np.median(t) / base_med:5.2f}x "
            "(target <= 3x)"
        )
    for form in ("bilinear", "linear", "scale"):
        qf = QualityFusion(
            form=form, measures=names, quality_transform=["log", None], p_target=P_TARGET
        ).fit(X, y, quality=Q)
        print(
            f"  {form:<9} Cllr {qf.objective_:.4f} vs affine {qf.linear_objective_:.4f}  "
            f"({qf.n_iter_} Newton steps, {qf.n_passes_} passes)"
        )


if __name__ == "__main__":
    run()
