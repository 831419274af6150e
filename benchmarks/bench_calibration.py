"""PAV / ROCCH calibrators on 10M trials (1M target, 9M non-target, shuffled, with labels).

Targets: ``PAVCalibrator.fit`` at least 3x faster than sklearn's
``IsotonicRegression(out_of_bounds="clip").fit`` on the same data (which does not even give
LLRs), and ``PAVCalibrator.transform`` of 10M scores within 3x of ``numpy.searchsorted`` of the
same scores into the fitted thresholds.
"""

from __future__ import annotations

import numpy as np
from _common import best_time, optional_import, peak_memory, print_table, skipped

from focal import ROCCH, PAVCalibrator


def _sklearn_isotonic(scores, labels):
    from sklearn.isotonic import IsotonicRegression

    return IsotonicRegression(out_of_bounds="clip").fit(scores, labels)


def run(quick: bool = False):
    n_tar, n_non = (100_000, 900_000) if quick else (1_000_000, 9_000_000)
    rng = np.random.default_rng(0)
    scores = np.concatenate([rng.normal(2.0, 1.0, n_tar), rng.normal(0.0, 1.0, n_non)])
    labels = np.concatenate([np.ones(n_tar, dtype=bool), np.zeros(n_non, dtype=bool)])
    order = rng.permutation(scores.size)
    scores, labels = scores[order], labels[order]
    print(
        f"{scores.size:,} trials ({n_tar:,} target, {n_non:,} non-target), continuous scores "
        "in random order"
    )

    # -- fit ---------------------------------------------------------------------------------
    t_sort, _ = best_time(np.sort, scores)
    t_fit, cal = best_time(PAVCalibrator().fit, scores, labels)
    t_fit0, cal0 = best_time(PAVCalibrator(pseudo_count=0).fit, scores, labels)
    t_hull, hull = best_time(ROCCH().fit, scores, labels)
    rows = [
        ("numpy.sort of the scores (floor)", t_sort),
        ("focal PAVCalibrator().fit (bounded)", t_fit),
        ("focal PAVCalibrator(pseudo_count=0).fit", t_fit0),
        ("focal ROCCH().fit (+ EER, PRBEP, AUC)", t_hull),
    ]
    have_sklearn = optional_import("sklearn") is not None
    if have_sklearn:
        t_iso, iso = best_time(_sklearn_isotonic, scores, labels, repeat=1)
        rows.append(("sklearn IsotonicRegression(clip).fit", t_iso))
    print_table("fit, as a multiple of numpy.sort", rows)
    if have_sklearn:
        print(
            f"  PAVCalibrator.fit vs sklearn IsotonicRegression.fit: "
            f"{t_iso / t_fit:5.2f}x faster (target >= 3x)"
        )
        # the same PAV solution: sklearn's fraction, as an LLR, at every block threshold
        prior_log_odds = np.log(n_tar / n_non)
        p = iso.predict(cal0.score_lo_)
        with np.errstate(divide="ignore"):
            sk_llr = np.log(p) - np.log1p(-p) - prior_log_odds
        fin = np.isfinite(cal0.llr_)
        print(
            f"  {cal0.llr_.size} PAV blocks; max |LLR difference| vs sklearn isotonic "
            f"{np.max(np.abs(sk_llr[fin] - cal0.llr_[fin])):.2e}; bounded LLR range "
            f"[{cal.llr_[0]:.3f}, {cal.llr_[-1]:.3f}], EER {hull.eer_:.6f}"
        )
    else:
        skipped("scikit-learn", "not installed")
    peak, _ = peak_memory(PAVCalibrator().fit, scores, labels)
    in_bytes = scores.nbytes + labels.nbytes
    print(
        f"  fit peak memory {peak / 2**20:.0f} MiB = {peak / in_bytes:.2f}x the input "
        f"({in_bytes / 2**20:.0f} MiB)"
    )

    # -- transform -----------------------------------------------------------------------------
    lin = PAVCalibrator(interpolation="linear").fit(scores, labels)
    t_ss, _ = best_time(np.searchsorted, cal.score_lo_, scores)
    t_tr, _ = best_time(cal.transform, scores)
    t_lin, _ = best_time(lin.transform, scores)
    t_interp, _ = best_time(np.interp, scores, lin.score_lo_, lin.llr_)
    rows = [
        ("numpy.searchsorted(score_lo_, scores) (floor)", t_ss),
        ("focal PAVCalibrator.transform (step)", t_tr),
        ("focal PAVCalibrator.transform (linear)", t_lin),
        ("numpy.interp on the same blocks", t_interp),
    ]
    if have_sklearn:
        t_iso_tr, _ = best_time(iso.transform, scores, repeat=1)
        rows.append(("sklearn IsotonicRegression.transform", t_iso_tr))
    print_table(f"transform of {scores.size:,} scores, as a multiple of numpy.searchsorted", rows)
    print(
        f"  PAVCalibrator.transform / numpy.searchsorted: {t_tr / t_ss:5.2f}x (target <= 3x); "
        f"linear: {t_lin / t_ss:5.2f}x"
    )
