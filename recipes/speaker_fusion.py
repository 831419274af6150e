r"""
Fusion of three speaker-detection systems
=========================================

Fuse three speaker-detection systems at P_target = 0.01 and compare with each system alone.

Run it from a checkout (the sample data by default, your files by argument)::

    python recipes/speaker_fusion.py                  # the sample set in data_samples/
    python recipes/speaker_fusion.py --dev-key dev.key --dev a.scores b.scores c.scores \
        --eval-key eval.key --eval a.scores b.scores c.scores --out figures/

The recipe of thesis sec. 8.3 on binary scores (files of lines ``model test score`` and keys of
lines ``model test target|nontarget``, any number of systems, the same order for dev and eval):

1. trains on the development set, by prior-weighted logistic regression at the application's
   effective prior (thesis eqs. 8.16-8.17): a LinearCalibrator per system (each system alone,
   affinely calibrated) and one LogisticFusion of all systems;
2. applies them to the evaluation set and prints, for each, Cllr, minCllr, the ROCCH-EER and the
   actual / minimum normalized DCF at P_target, then the full calibration report of the fusion
   and its weights;
3. writes figures into ``--out`` (default: a new temporary directory, printed at the end):
   ``det.png`` (eval DET of every system and the fusion, with the minDCF and actual-DCF points),
   ``nbe_fusion.png`` (normalized Bayes error-rate of the fusion on eval and dev, as thesis
   fig. 7.8, with the DR30 points and the operating point), ``nbe_systems.png`` (every system
   on eval) and ``ape.png`` (APE curves and Cllr bars on eval).

Figures need matplotlib (``pip install matplotlib``); without it the numbers are
printed and the figures skipped.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

ROOT = pathlib.Path(sys.argv[0]).resolve().parent.parent  # run as a script (also by the docs)
sys.path.insert(0, str(ROOT))

from focal import LinearCalibrator, LogisticFusion  # noqa: E402
from focal.io import align_trials, read_key, read_scores  # noqa: E402
from focal.metrics import calibration_report, from_labels  # noqa: E402

try:  # figures need the optional matplotlib
    from matplotlib.figure import Figure

    from focal import plots
except ImportError as exc:
    plots, NO_FIGURES = None, f"figures skipped: {exc}"

SAMPLES = ROOT / "data_samples" / "speaker_detection"


def load(key_path, score_paths):
    """Scores (n_trials, n_systems) and labels, aligned with the key on (model, test)."""
    X, y, _, _ = align_trials(read_key(key_path), *(read_scores(p) for p in score_paths))
    return X, y


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dev", nargs="+", help="development score files, one per system")
    parser.add_argument("--dev-key", help="development key")
    parser.add_argument("--eval", nargs="+", help="evaluation score files, same systems")
    parser.add_argument("--eval-key", help="evaluation key")
    parser.add_argument(
        "--p-target",
        type=float,
        default=0.01,
        help="effective target prior of training and evaluation (default 0.01)",
    )
    parser.add_argument("--out", help="folder for the figures (default: a new temporary folder)")
    args = parser.parse_args(argv)

    dev = args.dev or sorted(SAMPLES.glob("dev_sys*.scores"))
    evl = args.eval or sorted(SAMPLES.glob("eval_sys*.scores"))
    if len(dev) != len(evl):
        parser.error(f"--dev has {len(dev)} systems, --eval {len(evl)}")
    names = [pathlib.Path(p).stem.replace("eval_", "") for p in evl]
    X_dev, y_dev = load(args.dev_key or SAMPLES / "dev.key", dev)
    X_eval, y_eval = load(args.eval_key or SAMPLES / "eval.key", evl)
    p = args.p_target

    llr_eval, llr_dev = {}, {}
    for k, name in enumerate(names):
        cal = LinearCalibrator(p_target=p).fit(X_dev[:, k], y_dev)
        llr_eval[name] = cal.decision_function(X_eval[:, k])
    fusion = LogisticFusion(p_target=p).fit(X_dev, y_dev)
    llr_eval["fusion"] = fusion.decision_function(X_eval)
    llr_dev["fusion"] = fusion.decision_function(X_dev)

    print(
        f"Evaluation set: {y_eval.sum():,} target and {(~y_eval).sum():,} non-target trials; "
        f"trained on dev at P_target = {p:g}\n"
    )
    print(f"  {'system':<12}{'Cllr':>8}{'minCllr':>9}{'EER %':>8}{'actDCF':>9}{'minDCF':>9}")
    reports = {}
    for name, llr in llr_eval.items():
        r = calibration_report(*from_labels(llr, y_eval), operating_points=[p], name=name)
        reports[name] = r
        op = r.operating_points[0]
        print(
            f"  {name:<12}{r.cllr:8.4f}{r.min_cllr:9.4f}{100 * r.eer:8.2f}"
            f"{op.act_dcf:9.4f}{op.min_dcf:9.4f}"
        )
    print()
    print(reports["fusion"])
    weights = ", ".join(f"{n} {w:.4g}" for n, w in zip(names, fusion.coef_))
    print(f"  fusion weights: {weights}; offset {fusion.intercept_:.4g} nats\n")

    if plots is None:
        print(NO_FIGURES)
        return 0
    out = plots.output_folder(args.out, "focal_speaker_fusion_")

    evaluation = {name: from_labels(llr, y_eval) for name, llr in llr_eval.items()}

    def figure(filename, title, plot, systems, **kwargs):
        fig = Figure(figsize=(8, 6), layout="constrained")
        ax = fig.subplots()
        for name, (tar, non) in systems.items():
            plot(tar, non, label=name, ax=ax, **kwargs)
        ax.set_title(title)
        fig.savefig(out / filename)

    figure(
        "det.png",
        "Evaluation set: each system calibrated alone, and the fusion",
        plots.det_plot,
        evaluation,
        operating_point=p,
    )
    figure(
        "nbe_fusion.png",
        "Fusion: normalized Bayes error-rate (thesis fig. 7.8)",
        plots.nbe_plot,
        {"eval": evaluation["fusion"], "dev": from_labels(llr_dev["fusion"], y_dev)},
        operating_point=p,
    )
    figure(
        "nbe_systems.png",
        "Evaluation set: normalized Bayes error-rate",
        plots.nbe_plot,
        evaluation,
        operating_point=p,
    )

    fig = Figure(figsize=(9, 5), layout="constrained")
    ax, bars = fig.subplots(1, 2, width_ratios=[5, 1])
    for name, (tar, non) in evaluation.items():
        plots.ape_plot(tar, non, label=name, ax=ax, bar_ax=bars)
    fig.savefig(out / "ape.png")
    print(f"figures: {out}")
    return 0


if __name__ == "__main__":
    try:
        main()
    except ValueError as exc:  # a bad file or value: one line, no traceback
        sys.exit(f"speaker_fusion: error: {exc}")
