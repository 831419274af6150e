r"""
Scoring spoken term detection
=============================

Score a spoken term detection system: ATWV, MTWV, C_nxe, C_nxe^min and the DET curve.

Run it from a checkout (the sample data by default, your files by argument)::

    python recipes/term_detection.py                 # the sample set in data_samples/
    python recipes/term_detection.py sys.stdlist.xml ref.rttm audio.ecf.xml terms.tlist.xml \
        --operating-point 0.0001 10 1 --out figures/

The MediaEval 2013 Spoken Web Search evaluation (Rodríguez-Fuentes & Penagarikano 2013) of
one system. The four inputs are the system's detections (STDLIST XML or a table
``query file tbeg dur score decision``), the reference (RTTM or a table ``query file tbeg dur``),
the audio (ECF XML, a table ``file tbeg dur``, or T_audio in seconds) and optionally the term
list (TLIST XML or a table); formats are recognized by content (:func:`focal.std.read_task`).
The recipe

1. aligns detections with reference occurrences (plan sec. 2.1) and prints the report: ATWV of
   the system's decisions, MTWV and its threshold (eqs. 1-7), C_nxe over the full trial set with
   censored trials (eqs. 38-43) and C_nxe^min after the best affine recalibration
   ``gamma llr + delta`` (eqs. 44-45), and the per-query table;
2. applies that recalibration to the scores and reports the ATWV of Bayes decisions on the
   recalibrated LLRs (threshold ``-logit(P_tar)``, eq. 31): what calibration alone would give;
3. writes ``det.png`` into ``--out`` (default: a new temporary directory, printed at the end):
   the DET of the threshold sweep (plan sec. 2.5) with the ATWV and MTWV points.

The DET figure needs matplotlib (``pip install matplotlib``); without it the
numbers are printed and the figure skipped.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import pathlib
import sys

ROOT = pathlib.Path(sys.argv[0]).resolve().parent.parent  # run as a script (also by the docs)
sys.path.insert(0, str(ROOT))

from focal import bayes_threshold, std  # noqa: E402

try:  # the figure needs the optional matplotlib
    from matplotlib.figure import Figure

    from focal import plots
except ImportError as exc:
    plots, NO_FIGURES = None, f"figure skipped: {exc}"

SAMPLES = ROOT / "data_samples" / "term_detection"


def recalibrated(task, gamma: float, delta: float):
    """The task with every detection score mapped to ``gamma * score + delta``, no decisions."""
    det = task.detections
    new = dataclasses.replace(det, score=gamma * det.score + delta, decision=None)
    return dataclasses.replace(task, detections=new)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="SYSTEM REFERENCE AUDIO [QUERIES] (default: the sample set)",
    )
    parser.add_argument(
        "--tolerance", type=float, default=0.5, help="alignment tolerance in seconds (default 0.5)"
    )
    parser.add_argument(
        "--operating-point",
        nargs=3,
        type=float,
        metavar=("P_TARGET", "C_MISS", "C_FA"),
        help="application (default: SWS 2013, 0.00015 100 1)",
    )
    parser.add_argument("--out", help="folder for the figure (default: a new temporary folder)")
    args = parser.parse_args(argv)

    files = args.files or [
        SAMPLES / "sws_sample.stdlist.xml",
        SAMPLES / "sws_sample.rttm",
        SAMPLES / "sws_sample.ecf.xml",
        SAMPLES / "sws_sample.tlist.xml",
    ]
    if len(files) not in (3, 4):
        parser.error("give SYSTEM REFERENCE AUDIO [QUERIES]")
    audio = files[2]
    try:
        audio = float(str(audio))  # T_audio in seconds
    except ValueError:
        pass
    task = std.read_task(files[0], files[1], audio, files[3] if len(files) == 4 else None)
    op = std.OperatingPoint(*args.operating_point) if args.operating_point else std.SWS2013
    report = std.term_detection_report(task, tolerance=args.tolerance, operating_point=op)
    print(report.to_text(per_query=True))

    cal = report.recalibration
    if cal is not None and math.isfinite(cal.gamma) and math.isfinite(cal.delta):
        threshold = bayes_threshold(op.p_target, op.c_miss, op.c_fa)
        fixed = std.term_detection_report(
            recalibrated(task, cal.gamma, cal.delta),
            tolerance=args.tolerance,
            operating_point=op,
            decision_threshold=threshold,
        )
        print(
            f"\nAfter llr -> {cal.gamma:.5g} llr + {cal.delta:.5g}, Bayes decisions at "
            f"llr >= {threshold:.4g}:"
        )
        print(
            f"  ATWV {fixed.atwv.twv:.4f} (was {report.atwv.twv:.4f}; MTWV "
            f"{report.mtwv.twv:.4f}), C_nxe {fixed.cnxe:.4f} (= C_nxe^min {report.min_cnxe:.4f})"
            if report.atwv is not None
            else f"  ATWV {fixed.atwv.twv:.4f}"
        )

    if plots is None:
        print("\n" + NO_FIGURES)
        return 0
    fig = Figure(figsize=(8, 6), layout="constrained")
    ax = plots.std_det_plot(report, label=report.name or "system", ax=fig.subplots())
    ax.set_title(f"Term detection DET ({op.name or 'operating point'}: beta = {op.beta:.4g})")
    out = plots.output_folder(args.out, "focal_term_detection_")
    fig.savefig(out / "det.png")
    print(f"\nfigure: {out / 'det.png'}")
    return 0


if __name__ == "__main__":
    try:
        main()
    except ValueError as exc:  # a bad file or value: one line, no traceback
        sys.exit(f"term_detection: error: {exc}")
