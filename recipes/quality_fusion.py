r"""
Duration-aware quality fusion
=============================

Duration-aware fusion: affine fusion vs QMF vs quality fusion, overall and by duration.

Run it from a checkout (the sample data by default, your files by argument)::

    python recipes/quality_fusion.py                  # the variable-length sample set
    python recipes/quality_fusion.py --dev-key dev.key --dev a.scores b.scores \
        --dev-quality dev.durations --eval-key eval.key --eval a.scores b.scores \
        --eval-quality eval.durations --out figures/

Scores whose calibration drifts with segment duration (data_samples/speaker_detection's
``*_varlen_*`` files: short trials separate less and score higher) are fused four ways, each
trained on dev by prior-weighted logistic regression at P_target (thesis eqs. 8.16-8.17):

- ``affine``: :class:`focal.LogisticFusion`, one offset and one weight per system;
- ``qmf``: :class:`focal.QualityFusion` ``form="linear"``: plus the min and max of the two sides'
  log durations in the offset (the "quality measure function" of speaker-recognition back-ends);
- ``bilinear``: ``form="bilinear"``: plus ``[1, q_m]^T W [1, q_t]`` in the log durations
  (BOSARIS's quality fusion);
- ``scale``: ``form="scale"``: the min / max log durations move the offset *and* every weight.

It prints Cllr, minCllr, EER and actual / minimum DCF on eval, then the actual DCF by duration
bucket (the shorter side of the trial), then fits data simulated with a known duration-dependent
slope and offset and prints the truth, the estimates and both fusions' eval Cllr. It writes
``dcf_by_duration.png`` (actual DCF per bucket, minimum DCF as the floor), ``nbe_short.png`` and
``nbe_long.png`` (normalized Bayes error-rate on the shortest and longest trials) and
``llr_vs_score.png`` (the fused LLR against the first system's score, colored by duration) into
``--out`` (default: a new temporary folder).
Quality files have a header ``segment duration`` and one line per enrolment or test segment.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(sys.argv[0]).resolve().parent.parent  # run as a script (also by the docs)
sys.path.insert(0, str(ROOT))

from focal import LogisticFusion, QualityFusion  # noqa: E402
from focal.io import align_trials, read_key, read_scores  # noqa: E402
from focal.io.quality import read_quality, trial_quality  # noqa: E402
from focal.metrics import calibration_report, cllr, dcf, from_labels, min_dcf  # noqa: E402

try:  # figures need the optional matplotlib
    from matplotlib.figure import Figure

    from focal import plots
except ImportError as exc:
    plots, NO_FIGURES = None, f"figures skipped: {exc}"

SAMPLES = ROOT / "data_samples" / "speaker_detection"
BUCKETS = (0.0, 5.0, 10.0, 20.0, np.inf)  # seconds of the shorter side


def load(key_path, score_paths, quality_path):
    """Scores (n, systems), labels and quality (n, 2): model-side then test-side duration."""
    X, y, models, tests = align_trials(read_key(key_path), *(read_scores(p) for p in score_paths))
    Q, _ = trial_quality(models, tests, read_quality(quality_path), ["duration"])
    return X, y, Q


def _simulate(rng, n, truth):
    """One system's scores and labels whose LLR is (a0 + a1 L) s + (b0 + b1 L), with L the log
    of the shorter side's duration: the labels are drawn from the posterior at prior 1/2.
    """
    durations = np.exp(rng.uniform(np.log(3), np.log(120), size=(n, 2)))
    L = np.log(durations.min(axis=1))
    s = rng.normal(scale=2.0, size=n)
    llr = (truth[0] + truth[1] * L) * s + truth[2] + truth[3] * L
    y = rng.random(n) < 1 / (1 + np.exp(-llr))
    return s[:, None], y, durations


def known_drift(p, n=100_000, truth=(-0.1, 0.45, 1.5, -0.8)):
    """Fit the scale form to data with a known duration-dependent slope and offset; print the
    truth, the estimates and the eval Cllr of the affine and the quality fusion.
    """
    rng = np.random.default_rng(2010)
    s, y, dur = _simulate(rng, n, truth)
    qf = QualityFusion(
        form="scale", measures=["duration"], quality_transform="log", p_target=0.5
    ).fit(s, y, quality=dur)
    lin = LogisticFusion(p_target=0.5).fit(s, y)
    # the prior-weighted optimum moves the offset by logit(1/2) - logit(proportion of targets)
    shift = -np.log(y.mean() / (1 - y.mean()))
    got = (qf.coef_[0], qf.scale_coef_[0, 0], qf.intercept_ - shift, qf.quality_coef_[0])
    print(
        f"\nSimulation ({n:,} trials): LLR = (a0 + a1 L) s + b0 + b1 L, L = log of the shorter "
        "side's duration (s)"
    )
    print(
        "  "
        + "  ".join(
            f"{name} true {t:+.3f} fitted {g:+.3f}"
            for name, t, g in zip(("a0", "a1", "b0", "b1"), truth, got)
        )
    )
    print(
        f"  (and {qf.scale_coef_[0, 1]:+.3f}, {qf.quality_coef_[1]:+.3f} on the longer side's "
        "log duration, truly 0)"
    )
    s2, y2, dur2 = _simulate(rng, n, truth)
    c_lin = cllr(*from_labels(lin.decision_function(s2), y2))
    c_q = cllr(*from_labels(qf.decision_function(s2, quality=dur2), y2))
    print(f"  eval Cllr: affine calibration {c_lin:.4f}, quality (scale) {c_q:.4f}\n")


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dev", nargs="+", help="development score files, one per system")
    parser.add_argument("--dev-key", help="development key")
    parser.add_argument("--dev-quality", help="development durations (segment duration)")
    parser.add_argument("--eval", nargs="+", help="evaluation score files, same systems")
    parser.add_argument("--eval-key", help="evaluation key")
    parser.add_argument("--eval-quality", help="evaluation durations")
    parser.add_argument(
        "--p-target",
        type=float,
        default=0.01,
        help="effective target prior of training and evaluation (default 0.01)",
    )
    parser.add_argument("--out", help="folder for the figures (default: a new temporary folder)")
    args = parser.parse_args(argv)

    dev = args.dev or sorted(SAMPLES.glob("dev_varlen_sys*.scores"))
    evl = args.eval or sorted(SAMPLES.glob("eval_varlen_sys*.scores"))
    if len(dev) != len(evl):
        parser.error(f"--dev has {len(dev)} systems, --eval {len(evl)}")
    X_dev, y_dev, Q_dev = load(
        args.dev_key or SAMPLES / "dev.key", dev, args.dev_quality or SAMPLES / "dev.durations"
    )
    X_ev, y_ev, Q_ev = load(
        args.eval_key or SAMPLES / "eval.key", evl, args.eval_quality or SAMPLES / "eval.durations"
    )
    p = args.p_target

    fusers = {"affine": LogisticFusion(p_target=p)}
    for label, form in (("qmf", "linear"), ("bilinear", "bilinear"), ("scale", "scale")):
        fusers[label] = QualityFusion(
            form=form, measures=["duration"], quality_transform="log", p_target=p
        )
    llr = {}
    for label, fuser in fusers.items():
        if label == "affine":
            llr[label] = fuser.fit(X_dev, y_dev).decision_function(X_ev)
        else:
            fuser.fit(X_dev, y_dev, quality=Q_dev)
            llr[label] = fuser.decision_function(X_ev, quality=Q_ev)

    print(
        f"Evaluation set: {y_ev.sum():,} target and {(~y_ev).sum():,} non-target trials, "
        f"durations {np.nanmin(Q_ev):.1f}-{np.nanmax(Q_ev):.1f} s; trained on dev at "
        f"P_target = {p:g}\n"
    )
    print(
        f"  {'fusion':<10}{'Cllr':>8}{'minCllr':>9}{'Cllr@P':>8}{'EER %':>8}{'actDCF':>9}"
        f"{'minDCF':>9}      (Cllr@P: Cllr at P_target, the training objective)"
    )
    cllrs = {}
    for label, scores in llr.items():
        tar, non = from_labels(scores, y_ev)
        r = calibration_report(tar, non, operating_points=[p], name=label)
        op = r.operating_points[0]
        cllrs[label] = cllr(tar, non, p)
        print(
            f"  {label:<10}{r.cllr:8.4f}{r.min_cllr:9.4f}{cllrs[label]:8.4f}{100 * r.eer:8.2f}"
            f"{op.act_dcf:9.4f}{op.min_dcf:9.4f}"
        )
    print(
        f"\n  eval Cllr at P_target = {p:g}: affine fusion {cllrs['affine']:.4f}, quality "
        f"fusion (scale) {cllrs['scale']:.4f} "
        f"({100 * (1 - cllrs['scale'] / cllrs['affine']):.1f}% lower)"
    )

    shorter = np.minimum(Q_ev[:, 0], Q_ev[:, 1])
    bucket = np.digitize(shorter, BUCKETS[1:-1])
    names = [
        f"{lo:g}-{hi:g} s" if np.isfinite(hi) else f">{lo:g} s"
        for lo, hi in zip(BUCKETS[:-1], BUCKETS[1:])
    ]
    print(
        f"\n  actual normalized DCF at P_target = {p:g} by the shorter side's duration "
        "(minimum DCF of the affine fusion in brackets)"
    )
    print(f"  {'bucket':<10}{'trials':>7}{'targets':>8}" + "".join(f"{f:>10}" for f in llr))
    act = {f: [] for f in llr}
    floor = []
    for b, name in enumerate(names):
        m = bucket == b
        tar_non = {f: from_labels(s[m], y_ev[m]) for f, s in llr.items()}
        for f, (tar, non) in tar_non.items():
            act[f].append(dcf(tar, non, p))
        floor.append(min_dcf(*tar_non["affine"], p))
        print(
            f"  {name:<10}{m.sum():7d}{y_ev[m].sum():8d}"
            + "".join(f"{act[f][-1]:10.4f}" for f in llr)
            + f"  [{floor[-1]:.4f}]"
        )
    print("\n  scale form: system weights at a 4 s and a 60 s shorter side (log durations)")
    sc = fusers["scale"]
    for seconds in (4.0, 60.0):
        f = np.array([np.log(seconds), np.log(max(seconds, 60.0))])  # min, max of the two sides
        w = sc.coef_ + sc.scale_coef_ @ f
        print(
            f"    {seconds:4.0f} s: "
            + ", ".join(f"sys{k + 1} {v:.4g}" for k, v in enumerate(w))
            + f"; offset {sc.intercept_ + f @ sc.quality_coef_:.3f} nats"
        )

    known_drift(p)

    if plots is None:
        print(NO_FIGURES)
        return 0
    out = plots.output_folder(args.out, "focal_quality_fusion_")

    fig = Figure(figsize=(8, 5), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / len(llr)
    x = np.arange(len(names))
    for i, (f, values) in enumerate(act.items()):
        ax.bar(x + (i - (len(llr) - 1) / 2) * width, values, width, label=f)
    ax.plot(x, floor, "k_", markersize=30, mew=2, label="minDCF (affine)")
    ax.set_xticks(x, names)
    ax.set_xlabel("duration of the shorter side")
    ax.set_ylabel(f"actual normalized DCF at P_target = {p:g}")
    ax.set_title("Evaluation set: calibration by duration")
    ax.legend()
    fig.savefig(out / "dcf_by_duration.png")

    for which, m, title in (
        ("short", bucket == 0, names[0]),
        ("long", bucket == len(names) - 1, names[-1]),
    ):
        fig = Figure(figsize=(8, 6), layout="constrained")
        ax = fig.subplots()
        for f, s in llr.items():
            plots.nbe_plot(*from_labels(s[m], y_ev[m]), label=f, ax=ax, operating_point=p)
        ax.set_title(f"Trials whose shorter side is {title}: normalized Bayes error-rate")
        fig.savefig(out / f"nbe_{which}.png")

    fig = Figure(figsize=(11, 4.5), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    for ax, f in zip(axes, ("affine", "scale")):
        points = ax.scatter(X_ev[:, 0], llr[f], c=np.log10(shorter), s=4, cmap="viridis")
        ax.set_title(f"{f}: fused LLR against sys1's score")
        ax.set_xlabel("sys1 score")
    axes[0].set_ylabel("LLR (nats)")
    fig.colorbar(points, ax=axes, label="log10 duration of the shorter side (s)")
    fig.savefig(out / "llr_vs_score.png")
    print(f"figures: {out}")
    return 0


if __name__ == "__main__":
    try:
        main()
    except ValueError as exc:  # a bad file or value: one line, no traceback
        sys.exit(f"quality_fusion: error: {exc}")
