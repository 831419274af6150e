"""Binary core: PAV / ROCCH / minCllr / EER / minDCF on 10M trials (1M target, 9M non-target).

Targets: min_cllr, eer and min_dcf from one shared PAV/ROCCH run within 2x of
one ``numpy.sort`` of the same scores, each faster than the sklearn-based alternative, and peak
memory under 6x the input bytes.
"""

from __future__ import annotations

import numpy as np
from _common import best_time, interleaved_best, optional_import, peak_memory, print_table, skipped

from focal.metrics import rocch


def _focal_shared(tar, non):
    hull = rocch(tar, non)
    return hull.min_cllr(0.5), hull.eer, hull.min_dcf(0.01)


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


def run(quick: bool = False):
    n_tar, n_non = (100_000, 900_000) if quick else (1_000_000, 9_000_000)
    rng = np.random.default_rng(0)
    tar = rng.normal(2.0, 1.0, n_tar)
    non = rng.normal(0.0, 1.0, n_non)
    scores = np.concatenate([tar, non])
    labels = np.concatenate([np.ones(n_tar, dtype=bool), np.zeros(n_non, dtype=bool)])
    print(f"{n_tar + n_non:,} trials ({n_tar:,} target, {n_non:,} non-target), continuous scores")

    (t_sort, t_focal), (_, (mc, e, md)) = interleaved_best(
        [(np.sort, (scores,)), (_focal_shared, (tar, non))], repeat=5)
    rows = [("numpy.sort (floor)", t_sort), ("focal rocch: min_cllr + eer + min_dcf", t_focal)]

    if optional_import("sklearn") is not None:
        t_iso, _ = best_time(_sklearn_isotonic, scores, labels, repeat=1)
        t_roc, (e_sk, md_sk) = best_time(_sklearn_roc, scores, labels, repeat=1)
        rows += [("sklearn IsotonicRegression.fit (PAV)", t_iso),
                 ("sklearn roc_curve -> EER + minDCF", t_roc)]
    print_table("time, as a multiple of numpy.sort", rows)
    if optional_import("sklearn") is None:
        skipped("scikit-learn", "not installed")
    else:
        print(f"  focal shared run vs sklearn IsotonicRegression: {t_iso / t_focal:5.2f}x faster")
        print(f"  focal shared run vs sklearn roc_curve EER/minDCF: {t_roc / t_focal:5.2f}x faster")
        print(f"  values: focal EER {e:.6f} minDCF(0.01) {md:.6f}; "
              f"sklearn EER {e_sk:.6f} minDCF(0.01) {md_sk:.6f}")
    print(f"  minCllr {mc:.6f} bits")

    peak, _ = peak_memory(_focal_shared, tar, non)
    in_bytes = tar.nbytes + non.nbytes
    print(f"  peak memory {peak / 2**20:.0f} MiB = {peak / in_bytes:.2f}x the input "
          f"({in_bytes / 2**20:.0f} MiB); target < 6x")
    lir_metrics = optional_import("lir.metrics")
    if lir_metrics is None:
        skipped("lir (NFI)", "not installed (pip install lir)")
    else:
        data = lir_metrics.LLRData(features=scores / np.log(10.0), labels=labels.astype(int))
        t_lir, mc_lir = best_time(lir_metrics.cllr_min, data, repeat=1)
        t_mc, _ = best_time(lambda: rocch(tar, non).min_cllr(), repeat=3)
        print(f"  lir cllr_min {t_lir:.3f} s vs focal min_cllr {t_mc:.3f} s: "
              f"{t_lir / t_mc:5.2f}x faster (values {mc_lir:.6f} / {mc:.6f})")
    if optional_import("pyllr") is None:
        skipped("PYLLR", "not installed (not on PyPI)")
