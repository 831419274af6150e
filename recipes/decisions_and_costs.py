"""
Decisions, costs and other scoring rules
========================================

Bayes decisions for any cost function, combined criteria and other proper scoring rules.

Run it from a checkout (the sample data by default, your files by argument)::

    python recipes/decisions_and_costs.py             # the sample sets in data_samples/
    python recipes/decisions_and_costs.py --out figures/

Speaker detection (data_samples/speaker_detection): three systems fused by
``LogisticFusion(p_target=0.01)`` trained on dev, evaluated on eval:

1. a *refer* option (Brümmer 2010, ch. 2-3: decisions need not be classes): at P_target = 0.01,
   C_miss = 10, C_fa = 1, every trial can also be referred to a human at a fixed cost. The
   table gives the empirical Bayes risk of the fused LLRs' Bayes decisions, the risk of the
   best decision made without scores and their ratio, the fraction referred and the monotone
   minimum (the best two thresholds);
2. the NIST SRE'12 primary cost, the mean of the normalized DCFs at P_target 0.01 and 0.001,
   as *one* compound application (thesis sec. 6.2, eq. 6.7; the keynote's "mixture of two
   operating points"), checked against the two DCFs;
3. Cllr, the prior-shifted Cllr at P_target = 0.01 and the keynote's truncated Cllr on the low
   false-alarm range of prior log-odds [logit 0.001, logit 0.05], with its PAV minimum.

Language recognition (data_samples/language_recognition, closed set, eval):

4. for each system, the multiclass Brier cost (Brümmer & van Leeuwen 2006, eq. 13) before and
   after its optimal affine calibration, the C_eta criterion at flat eta (thesis eq. 8.12) and
   its local minimum over the calibration, and CAVG's criterion E_lre at the flat
   prior and at a non-flat one (thesis eq. 8.11);
5. the Albayzin C_min / F_dis of the sign-inverted (negated) sys1: the plan's free alpha
   (eqs. 11-12) against the thesis' alpha >= 0 (sec. 8.4.2);
6. ``cavg_sweep.png`` in ``--out`` (default: a new temporary folder): normalized CAVG swept over
   the target prior, actual and after affine calibration (thesis sec. 8.5.1).

The figure needs matplotlib (``pip install matplotlib``); without it only the
numbers are printed.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(sys.argv[0]).resolve().parent.parent  # run as a script (also by the docs)
sys.path.insert(0, str(ROOT))

from focal import LogisticFusion  # noqa: E402
from focal.io import (  # noqa: E402
    align_multiclass,
    align_trials,
    read_albayzin_scores,
    read_key,
    read_multiclass_key,
    read_scores,
)
from focal.metrics import (  # noqa: E402
    albayzin_measures,
    bayes_decisions,
    bayes_risk_analysis,
    brier_analysis,
    cavg_sweep,
    cllr,
    combine_applications,
    dcf,
    detection_cost_matrix,
    e_lre,
    eta_risk_analysis,
    from_labels,
    min_truncated_cllr,
    truncated_cllr,
)

try:  # the figure needs the optional matplotlib
    from matplotlib.figure import Figure

    from focal import plots
except ImportError as exc:
    plots, NO_FIGURES = None, f"figure skipped: {exc}"

SPEAKERS = ROOT / "data_samples" / "speaker_detection"
LANGUAGES = ROOT / "data_samples" / "language_recognition"


def logit(p):
    return float(np.log(p) - np.log1p(-p))


def speaker_part():
    def load(part):
        scores = [read_scores(SPEAKERS / f"{part}_sys{k}.scores") for k in (1, 2, 3)]
        X, y, _, _ = align_trials(read_key(SPEAKERS / f"{part}.key"), *scores)
        return X, y

    X_dev, y_dev = load("dev")
    X_eval, y_eval = load("eval")
    llr = LogisticFusion(p_target=0.01).fit(X_dev, y_dev).transform(X_eval).ravel()
    tar, non = from_labels(llr, y_eval)

    print("Speaker detection: fused LLRs of 3 systems (eval)")
    print("\n1. Refer option at P_target = 0.01, C_miss = 10, C_fa = 1")
    print(
        f"  {'C_refer':>8}{'risk':>9}{'default':>9}{'normalized':>12}{'referred':>10}"
        f"{'monotone min':>14}"
    )
    for c_refer in (None, 0.08, 0.05, 0.02):
        C = detection_cost_matrix(10.0, 1.0, c_refer=c_refer)
        a = bayes_risk_analysis(llr, y_eval, 0.01, C, normalize=False)
        referred = np.mean(bayes_decisions(llr, 0.01, C) == 2) if c_refer is not None else 0.0
        name = "none" if c_refer is None else f"{c_refer:g}"
        print(
            f"  {name:>8}{a.actual:9.4f}{a.default:9.4f}{a.actual / a.default:12.4f}"
            f"{referred:10.2%}{a.minimum:14.4f}"
        )
    print(
        "  (risk and minimum in cost units per trial; the default is the best decision without"
        " scores:\n   reject all, or refer all when that is cheaper)"
    )

    print("\n2. SRE'12 primary cost: mean normalized DCF at P_target 0.01 and 0.001")
    C = detection_cost_matrix()
    sre12 = combine_applications([(0.01, C), (0.001, C)], [0.5 / 0.01, 0.5 / 0.001])
    a = bayes_risk_analysis(llr, y_eval, sre12.prior, sre12.cost, normalize=False)
    mean = 0.5 * (dcf(tar, non, 0.01) + dcf(tar, non, 0.001))
    print(
        f"  one compound application ({len(sre12.cost)} decisions): {a.actual:.4f}   "
        f"mean of the two DCFs: {mean:.4f}   monotone minimum: {a.minimum:.4f}"
    )

    print("\n3. Cllr family (bits per bit; 1 = uninformative)")
    low_fa = (logit(0.001), logit(0.05))
    print(
        f"  Cllr {cllr(tar, non):.4f}   prior-shifted at 0.01 {cllr(tar, non, 0.01):.4f}   "
        f"truncated on prior log-odds [{low_fa[0]:.2f}, {low_fa[1]:.2f}] "
        f"{truncated_cllr(tar, non, low_fa):.4f} (PAV minimum "
        f"{min_truncated_cllr(tar, non, low_fa):.4f})"
    )


def language_part(out_dir):
    key = read_multiclass_key(LANGUAGES / "eval.key")
    systems = {
        f"sys{k}": read_albayzin_scores(LANGUAGES / f"eval_sys{k}_closed.txt") for k in (1, 2, 3)
    }
    prior = np.array([0.3, 0.3, 0.1, 0.1, 0.1, 0.1])
    print("\nLanguage recognition: closed set, eval (6 targets)")
    print("\n4. Other proper scoring rules")
    print(
        f"  {'system':<8}{'Brier':>8}{'min':>8}{'alpha':>8}{'C_eta':>8}{'min':>8}{'E_lre':>8}"
        f"{'E_lre(pi)':>11}"
    )
    sweeps = {}
    for name, system in systems.items():
        X, y, _, _ = align_multiclass(key, system, other="oos")
        keep = y < 6  # closed set: targets only
        L, y = X[keep, :6], y[keep]
        b = brier_analysis(L, y)
        c = eta_risk_analysis(L, y)
        print(
            f"  {name:<8}{b.actual:8.4f}{b.minimum:8.4f}{b.alpha:8.3f}{c.actual:8.4f}"
            f"{c.minimum:8.4f}{e_lre(L, y):8.4f}{e_lre(L, y, prior):11.4f}"
        )
        sweeps[name] = cavg_sweep(L, y)
    print(f"  (E_lre(pi): prior {prior.tolist()}; E_lre at the flat prior is CAVG)")

    print("\n5. Albayzin C_min of the sign-inverted sys1 (closed set)")
    X, y, _, _ = align_multiclass(key, systems["sys1"], other="oos")
    for label, nonneg in (("plan, alpha free", False), ("thesis, alpha >= 0", True)):
        m = albayzin_measures(-X, y, nonnegative_alpha=nonneg)
        print(
            f"  {label:<20} C_min {m.c_min:.4f}  F_dis {m.f_dis:.4f}  F_cal {m.f_cal:.1f}  "
            f"alpha {m.alpha:.3f}"
        )

    if plots is None:
        print("\n" + NO_FIGURES)
        return
    fig = Figure(figsize=(8, 5.5), layout="constrained")
    ax = fig.subplots()
    for name, sweep in sweeps.items():
        plots.cavg_sweep_plot(sweep, ax=ax, label=name)
    ax.set_title("Normalized CAVG over the target prior (closed set, eval)")
    out = plots.output_folder(out_dir, "focal_decisions_")
    fig.savefig(out / "cavg_sweep.png")
    print(f"\nfigure: {out / 'cavg_sweep.png'}")


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", help="folder for the figure (default: a new temporary folder)")
    args = parser.parse_args(argv)
    speaker_part()
    language_part(args.out)
    return 0


if __name__ == "__main__":
    main()
