"""Binary core: PAV / ROCCH / minCllr / EER / minDCF on 10M trials (1M target, 9M non-target).

Targets: ``rocch(tar, non)`` + EER + minDCF + minCllr within 1.5x of one ``numpy.sort`` of the
same 10^7 scores on continuous scores, within 2x with heavy ties (integer scores); each faster
than the sklearn-based alternative; peak memory under 6x the input bytes. The same three measures
called one by one on one :class:`focal.metrics.BinaryScores` cost one sort, not three.
Ratios are interleaved (each round runs every contender once), min and median over the rounds.
"""

from __future__ import annotations

import numpy as np
from _common import best_time, interleaved_times, optional_import, peak_memory, skipped

from focal.metrics import BinaryScores, eer, min_cllr, min_dcf, rocch


def _focal_shared(tar, non):
    hull = rocch(tar, non)
    return min_cllr(hull), eer(hull), min_dcf(hull, p_target=0.01)


def _focal_one_by_one(tar, non):
    """Three separate calls on raw arrays: three sorts and three PAV runs."""
    return min_cllr(tar, non), eer(tar, non), min_dcf(tar, non, 0.01)


def _focal_one_by_one_shared(tar, non):
    """Three separate calls on one BinaryScores: one sort, one PAV."""
    scores = BinaryScores(tar, non)
    return min_cllr(scores), eer(scores), min_dcf(scores, p_target=0.01)


def _sklearn_isotonic(scores, labels):
    from sklearn.isotonic import IsotonicRegression

    return IsotonicRegression(out_of_bounds="clip").fit(scores, labels)


def _sklearn_roc(scores, labels):
    """What a user without focal writes: roc_curve, then EER and minDCF from its points."""
    from sklearn.metrics import roc_curve

    fpr, tpr, _ = roc_curve(labels, scores)
    fnr = 1.0 - tpr
    i = np.nanargmin(np.abs(fnr - fpr))
    eer = 0.5 * (fnr[i] + fpr[i])
    p = 0.01
    min_dcf = np.min(p * fnr + (1 - p) * fpr) / min(p, 1 - p)
    return eer, min_dcf


def _ratio_table(title, labels, times, targets):
    """Print min and median of each contender's time and their ratios to the first (the floor)."""
    print(f"\n== {title}")
    floor_min, floor_med = min(times[0]), float(np.median(times[0]))
    width = max(len(label) for label in labels)
    for label, t, target in zip(labels, times, targets):
        lo, med = min(t), float(np.median(t))
        note = f"   target <= {target:.1f}x" if target else ""
        print(
            f"  {label:<{width}}  min {lo:7.3f} s {lo / floor_min:5.2f}x   "
            f"median {med:7.3f} s {med / floor_med:5.2f}x{note}"
        )


def run(quick: bool = False):
    n_tar, n_non = (100_000, 900_000) if quick else (1_000_000, 9_000_000)
    repeat = 3 if quick else 7
    rng = np.random.default_rng(0)
    tar = rng.normal(2.0, 1.0, n_tar)
    non = rng.normal(0.0, 1.0, n_non)
    cases = {
        "continuous scores (normal)": (tar, non, 1.5),
        "heavy ties (integer scores, about 100 distinct values)": (
            np.round(10.0 * tar),
            np.round(10.0 * non),
            2.0,
        ),
    }
    print(
        f"{n_tar + n_non:,} trials ({n_tar:,} target, {n_non:,} non-target); "
        f"{repeat} interleaved rounds"
    )
    labels = [
        "numpy.sort of all scores (floor)",
        "rocch + min_cllr + eer + min_dcf",
        "min_cllr, eer, min_dcf on one BinaryScores",
        "min_cllr, eer, min_dcf on arrays",
    ]
    for name, (t, n, target) in cases.items():
        scores = np.concatenate([t, n])
        calls = [
            (np.sort, (scores,)),
            (_focal_shared, (t, n)),
            (_focal_one_by_one_shared, (t, n)),
            (_focal_one_by_one, (t, n)),
        ]
        times, results = interleaved_times(calls, repeat=repeat)
        assert results[1] == results[2] == results[3]
        _ratio_table(
            f"{name}: time as a multiple of numpy.sort", labels, times, [None, target, target, None]
        )
    mc, e, md = _focal_shared(tar, non)

    labels = np.concatenate([np.ones(n_tar, dtype=bool), np.zeros(n_non, dtype=bool)])
    scores = np.concatenate([tar, non])
    if optional_import("sklearn") is None:
        skipped("scikit-learn", "not installed")
    else:
        t_focal, _ = best_time(_focal_shared, tar, non, repeat=3)
        t_iso, _ = best_time(_sklearn_isotonic, scores, labels, repeat=1)
        t_roc, (e_sk, md_sk) = best_time(_sklearn_roc, scores, labels, repeat=1)
        print(f"\n  focal shared run vs sklearn IsotonicRegression: {t_iso / t_focal:5.2f}x faster")
        print(f"  focal shared run vs sklearn roc_curve EER/minDCF: {t_roc / t_focal:5.2f}x faster")
        print(
            f"  values: focal EER {e:.6f} minDCF(0.01) {md:.6f}; "
            f"sklearn EER {e_sk:.6f} minDCF(0.01) {md_sk:.6f}"
        )
    print(f"  minCllr {mc:.6f} bits")

    peak, _ = peak_memory(_focal_shared, tar, non)
    in_bytes = tar.nbytes + non.nbytes
    print(
        f"  peak memory {peak / 2**20:.0f} MiB = {peak / in_bytes:.2f}x the input "
        f"({in_bytes / 2**20:.0f} MiB); target < 6x"
    )
    lir_metrics = optional_import("lir.metrics")
    if lir_metrics is None:
        skipped("lir (NFI)", "not installed (pip install lir)")
    else:
        data = lir_metrics.LLRData(features=scores / np.log(10.0), labels=labels.astype(int))
        t_lir, mc_lir = best_time(lir_metrics.cllr_min, data, repeat=1)
        t_mc, _ = best_time(lambda: min_cllr(rocch(tar, non)), repeat=3)
        print(
            f"  lir cllr_min {t_lir:.3f} s vs focal min_cllr {t_mc:.3f} s: "
            f"{t_lir / t_mc:5.2f}x faster (values {mc_lir:.6f} / {mc:.6f})"
        )
    if optional_import("pyllr") is None:
        skipped("PYLLR", "not installed (not on PyPI)")
