"""
Calibration of language recognition
===================================

Calibration analysis of language-recognition log-likelihoods (Brümmer & van Leeuwen 2006).

Run it from a checkout (the sample data by default, your files by argument)::

    python recipes/language_calibration.py            # the Albayzin-style sample set
    python recipes/language_calibration.py --key eval.key sysA_closed.txt sysA_open.txt ...
    python recipes/language_calibration.py --key eval.key sys.txt --dev-key dev.key --dev dev.txt

Score files hold one segment per line with N natural-log likelihoods: the Albayzin 2012 format
(``Plenty Closed segment l1 ... l7``, the last column out-of-set) or the generic format (a header
``segment class1 ... classN``); keys hold ``segment language`` lines. The first file is analysed
as in the 2006 paper; every file gets a line of the Albayzin table.

The 2006 analysis of the first file (closed set: Albayzin out-of-set trials and column left out):

1. multiclass Cllr (eq. 17, bits; log2 N is the useless system) before and after the affine
   calibration ``alpha l + gamma`` (eq. 18) optimized on the same data, which measures the
   calibration loss (sec. 4.1); CAVG before and after (NIST's C_DET); and, when a development
   set is given (the sample's by default), the same calibration trained there with
   ``MulticlassFusion(mode="calibration")`` and applied to these data;
2. the pairwise analysis (sec. 4.2): Cllr of every pair before and after, and minCllr, which the
   calibration leaves unchanged;
3. the detection analysis (sec. 4.3): Cllr and minCllr of every language's one-vs-rest
   detection LLRs (eq. 9) before and after.

Then the Albayzin 2012 table (plan sec. 4) of every file: C_mce, C_def, C_min (nats), F_act,
F_dis, F_cal and the optimal alpha, for the closed or open condition of the file (generic files:
flat prior over all classes).

Figures (``--out``, default a new temporary folder, printed at the end): ``pairwise.png``, the
bar-graph matrix of fig. 3; ``detection_ape.png``, per-language APE plots before and after (fig.
2); ``scatter.png``, detection LLRs after against before for every language (fig. 1); and
``subsets.png``, CAVG over every subset of the languages (thesis fig. 8.3), before and after.
Figures need matplotlib (``pip install matplotlib``); without it only the numbers
are printed.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(sys.argv[0]).resolve().parent.parent  # run as a script (also by the docs)
sys.path.insert(0, str(ROOT))

from focal import MulticlassFusion  # noqa: E402
from focal.io import (  # noqa: E402
    align_multiclass,
    read_albayzin_scores,
    read_multiclass_key,
    read_multiclass_scores,
)
from focal.metrics import (  # noqa: E402
    affine_calibration,
    albayzin_measures,
    cavg,
    detection_analysis,
    multiclass_cllr,
    pairwise_analysis,
    subset_analysis,
)

try:  # figures need the optional matplotlib
    from matplotlib.figure import Figure

    from focal import plots
except ImportError as exc:
    plots, NO_FIGURES = None, f"figures skipped: {exc}"

SAMPLES = ROOT / "data_samples" / "language_recognition"


def read_system(path):
    """An Albayzin-format file, or else a generic one (header of class names)."""
    try:
        return read_albayzin_scores(path)
    except ValueError as albayzin_error:
        try:
            return read_multiclass_scores(path)
        except ValueError:
            raise albayzin_error from None


def align(key, system):
    """Log-likelihoods and labels of the key's segments; languages outside an Albayzin task's
    targets count as out-of-set (plan sec. 2).
    """
    X, y, _, classes = align_multiclass(
        key, system, other="oos" if system.task is not None else "error"
    )
    return X, y, classes


def closed_set(llh, labels, classes, system):
    """The closed-set problem: Albayzin's out-of-set column and trials left out (plan 4.1.1)."""
    if system.task is None:  # generic file: every class is a target
        return llh, labels, list(classes)
    keep = labels < llh.shape[1] - 1
    return llh[keep][:, :-1], labels[keep], list(classes[:-1])


def albayzin_row(name, llh, labels, system):
    if system.task is None:
        m = albayzin_measures(llh, labels, prior=np.full(llh.shape[1], 1.0 / llh.shape[1]))
        condition = "flat"
    else:
        m = albayzin_measures(llh, labels, open_set=system.condition == "Open")
        condition = system.condition.lower()
    return (
        f"  {name:<26}{condition:<8}{m.c_mce:8.4f}{m.c_def:8.4f}{m.c_min:8.4f}"
        f"{100 * m.f_act:9.2f}{100 * m.f_dis:9.2f}{100 * m.f_cal:9.2f}{m.alpha:8.3f}"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "scores",
        nargs="*",
        metavar="FILE",
        help="score files (default: the sample eval files); the first is analysed",
    )
    parser.add_argument("--key", help="key of the score files (default: the sample eval key)")
    parser.add_argument("--dev", help="development score file of the first system (optional)")
    parser.add_argument("--dev-key", help="development key")
    parser.add_argument("--out", help="folder for the figures (default: a new temporary folder)")
    args = parser.parse_args(argv)
    if (args.dev is None) != (args.dev_key is None):
        parser.error("--dev and --dev-key go together")
    if args.scores and args.key is None:
        parser.error("give the --key of the score files")

    sample = not args.scores
    files = args.scores or (
        [SAMPLES / "eval_sys2_closed.txt"]
        + [
            SAMPLES / f"eval_sys{k}_{c}.txt"
            for k in (1, 2, 3)
            for c in ("closed", "open")
            if (k, c) != (2, "closed")
        ]
    )
    key = read_multiclass_key(args.key or SAMPLES / "eval.key")
    systems = [read_system(f) for f in files]

    # -- the 2006 analysis of the first file ---------------------------------------------------
    X, y, classes = align(key, systems[0])
    L, y, names = closed_set(X, y, classes, systems[0])
    N = L.shape[1]
    ref = math.log2(N)
    alpha, gamma, c_min = affine_calibration(L, y)
    R = alpha * L + gamma
    print(
        f"{pathlib.Path(files[0]).name}: {L.shape[0]} segments, {N} languages "
        f"({', '.join(names)})\n"
    )
    print("Calibration analysis (Brümmer & van Leeuwen 2006, sec. 4.1 and 5.1)")
    before, after = multiclass_cllr(L, y), multiclass_cllr(R, y)
    print(f"  Cllr as given          {before:.4f} bits = {before / ref:.3f} log2 {N}")
    print(
        f"  Cllr after alpha l + gamma (optimized on these data): {after:.4f} bits = "
        f"{after / ref:.3f} log2 {N}; alpha = {alpha:.3f}"
    )
    print(f"  calibration loss       {before - after:.4f} bits")
    print(f"  CAVG                   {100 * cavg(L, y):.2f} % -> {100 * cavg(R, y):.2f} %")
    dev_file = args.dev or (SAMPLES / "dev_sys2_closed.txt" if sample else None)
    if dev_file is not None:
        dev_key = read_multiclass_key(args.dev_key or SAMPLES / "dev.key")
        dev_system = read_system(dev_file)
        Xd, yd, dev_classes = align(dev_key, dev_system)
        if tuple(dev_classes) != tuple(classes):
            raise ValueError(f"{dev_file}: classes {dev_classes} differ from {classes}")
        Ld, yd, _ = closed_set(Xd, yd, classes, dev_system)
        cal = MulticlassFusion(mode="calibration").fit(Ld, yd)
        trained = multiclass_cllr(cal.transform(L), y)
        print(
            f"  Cllr after the calibration trained on {pathlib.Path(dev_file).name}: "
            f"{trained:.4f} bits (alpha = {cal.coef_[0]:.3f})"
        )

    pairs_before, pairs_after = pairwise_analysis(L, y), pairwise_analysis(R, y)
    print("\nPairwise analysis (sec. 4.2): Cllr before -> after, minCllr (bits)")
    for k, (i, j) in enumerate(pairs_before.pairs):
        print(
            f"  {names[i]:>12} / {names[j]:<12}{pairs_before.cllr[k]:8.4f} ->"
            f"{pairs_after.cllr[k]:8.4f}{pairs_before.min_cllr[k]:10.4f}"
        )
    det_before, det_after = detection_analysis(L, y), detection_analysis(R, y)
    print("\nDetection analysis (sec. 4.3): Cllr before -> after, minCllr before / after (bits)")
    for t in range(N):
        print(
            f"  {names[t]:<12}{det_before.cllr[t]:8.4f} ->{det_after.cllr[t]:8.4f}"
            f"{det_before.min_cllr[t]:10.4f} /{det_after.min_cllr[t]:7.4f}"
        )

    # -- the Albayzin table of every file ------------------------------------------------------
    print("\nAlbayzin 2012 measures (plan sec. 4): C in nats, F in %")
    print(
        f"  {'file':<26}{'set':<8}{'C_mce':>8}{'C_def':>8}{'C_min':>8}{'F_act':>9}"
        f"{'F_dis':>9}{'F_cal':>9}{'alpha':>8}"
    )
    for path, system in zip(files, systems):
        Xs, ys, _ = align(key, system)
        print(albayzin_row(pathlib.Path(path).name, Xs, ys, system))

    if plots is None:
        print("\n" + NO_FIGURES)
        return 0
    out = plots.output_folder(args.out, "focal_language_calibration_")
    fig = Figure(figsize=(1.5 * N + 0.5, 1.25 * N + 0.2))
    plots.pairwise_bar_matrix(pairs_before, pairs_after, class_names=names, fig=fig)
    fig.savefig(out / "pairwise.png")
    fig = Figure(figsize=(9.6, 2.4 * N + 0.6))
    plots.detection_ape_plots(L, y, recalibrated=R, class_names=names, fig=fig)
    fig.savefig(out / "detection_ape.png")
    cols = min(N, 3)
    fig = Figure(figsize=(4 * cols, 3.6 * math.ceil(N / cols)), layout="constrained")
    for t, ax in zip(range(N), fig.subplots(math.ceil(N / cols), cols, squeeze=False).ravel()):
        plots.detection_llr_scatter(L, R, y, t, class_names=names, ax=ax)
    fig.savefig(out / "scatter.png")
    fig = Figure(figsize=(8, 5.5), layout="constrained")
    ax = fig.subplots()
    plots.subset_scatter(subset_analysis(L, y), ax=ax, label="as given", color="C1")
    plots.subset_scatter(subset_analysis(R, y), ax=ax, label="after alpha l + gamma", color="C0")
    fig.savefig(out / "subsets.png")
    print(f"\nfigures: {out}")
    return 0


if __name__ == "__main__":
    try:
        main()
    except ValueError as exc:  # a bad file or value: one line, no traceback
        sys.exit(f"language_calibration: error: {exc}")
