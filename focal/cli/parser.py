"""The ``focal`` command line's arguments: argparse definitions only (run by
:mod:`focal.cli.commands`).

One function per command; the argument types and the groups several commands share are in
:mod:`focal.cli.args`. A bad value is a usage error (exit status 2, argparse's message).

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`sws2013measures` ("SWS plan").
.. [3] :cite:t:`albayzin2012plan` ("Albayzin plan").
"""

from __future__ import annotations

import argparse

from .._version import __version__
from . import args as _args
from . import options as _extras

__all__ = ["build_parser", "DEFAULT_P_TARGET"]

#: ``focal.metrics.multiclass_report.CONDITIONS``, written out: importing the measures would load
#: SciPy for ``focal --help`` (tests/test_import_contract.py checks that the two agree).
CONDITIONS = ("closed", "open")

#: Operating point of ``focal evaluate`` and ``focal demo`` when none is given.
DEFAULT_P_TARGET = 0.01


def build_parser() -> argparse.ArgumentParser:
    """The parser of every ``focal`` command (``args.command`` names the one given)."""
    parser = argparse.ArgumentParser(
        prog="focal",
        formatter_class=_args.Formatter,
        description="Fusion and calibration of recognizer scores, and the measures that judge "
        "them.\n\nScore files are BOSARIS-style lines 'model test score'; keys "
        "'model test target|nontarget'.\nMulticlass files are Albayzin 2012 system "
        "outputs or 'segment score...' with a header;\nkeys 'segment language'. "
        "Exit status: 1 on bad input, 2 on usage errors.",
    )
    parser.add_argument("--version", action="version", version=f"focal {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    for add_command in (
        _train,
        _apply,
        _evaluate,
        _train_multiclass,
        _evaluate_multiclass,
        _sws,
        _demo,
    ):
        add_command(sub)
    _extras.add_normalize(sub, _args.Formatter)
    for command in sub.choices.values():
        _extras.add_logging(command)
    return parser


# ---------------------------------------------------------------------------------------------
# the commands


def _train(sub):
    """The ``focal train`` command: a binary fusion trained on dev score files."""
    tr = _args.command(
        sub,
        "train",
        "train a binary fusion on dev score files",
        "Train a LogisticFusion (prior-weighted logistic regression, thesis 8.3.1) "
        "of one or several systems' dev scores against a key, optionally followed by "
        "PAV calibration, and save it as a JSON model file (focal.save).",
        "focal train --scores dev_sys1.scores dev_sys2.scores --key dev.key "
        "--p-target 0.01 -o fuser.json",
    )
    tr.add_argument(
        "--scores",
        nargs="+",
        required=True,
        metavar="FILE",
        help="one score file per system: lines 'model test score'",
    )
    tr.add_argument(
        "--key",
        metavar="FILE",
        help="key file: lines 'model test target|nontarget' (also tar/non, 1/0); "
        "not needed when the score files carry the labels (wespeaker, "
        "speechbrain)",
    )
    _args.add_formats(tr)
    _args.add_pos_label(tr)
    _args.add_scores_are(tr)
    point = tr.add_mutually_exclusive_group()  # one operating point: a prior, or costs
    point.add_argument(
        "--p-target",
        type=_args.probability,
        action=_args.Once,
        metavar="P",
        help="effective target prior at which the fusion is trained (Cllr at P is "
        "minimized): the operating point of the application (default 0.5)",
    )
    _extras.add_cost(point, repeatable=False)
    tr.add_argument(
        "--pav",
        action="store_true",
        help="follow the fusion with a PAVCalibrator (non-parametric, monotone)",
    )
    tr.add_argument(
        "--pseudo-count",
        type=_args.non_negative,
        default=1.0,
        metavar="A",
        help="with --pav: virtual trials bounding the extreme LLRs (default 1; 0 = "
        "unbounded, +/-inf possible)",
    )
    tr.add_argument(
        "--elub",
        action="store_true",
        help="clip the model's LLRs to the ELUB limits of its training LLRs (Vergeer et al. "
        "2016), the strongest LRs the data support (forensic practice): the fusion's, or with "
        "--pav the PAV calibration's",
    )
    tr.add_argument(
        "--log10",
        action="store_true",
        help="the score files hold log10 likelihood-ratios and the model's output is read as "
        "log10 LRs too (focal apply --log10): the fusion is printed as 'log10 LR = ...'; the "
        "scores are taken as they are (the fusion's map absorbs their scale)",
    )
    _args.add_missing(tr)
    _args.add_flags(tr, json=True, model_output=True)
    _args.add_signing_key(tr)
    return tr


def _apply(sub):
    """The ``focal apply`` command: a saved model applied to score files."""
    ap = _args.command(
        sub,
        "apply",
        "apply a saved model to score files",
        "Apply a model saved by 'focal train', 'focal train-multiclass' or focal.save to eval "
        "score files, one per system in the training order (checked against the model's "
        "systems; class columns matched by name), and write the calibrated LLRs or "
        "log-likelihoods in the input format (focal.workflows.apply_model). The files are "
        "streamed in bounded memory: they must list the same trials in the same order, unless "
        "--align is given, which holds the first file in memory and joins the others with it "
        "on the trial ids.",
        "focal apply fuser.json eval_sys1.scores eval_sys2.scores -o eval_fused.scores",
    )
    ap.add_argument("model", help="model file (JSON, from focal train / focal.save)")
    ap.add_argument(
        "scores",
        nargs="+",
        metavar="SCORES",
        help="one score file per system, in the order the model was trained on",
    )
    ap.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="output score file, in the layout of the first score file (its header and other "
        "columns kept, the LLR in place of the score); gzip when FILE ends in .gz",
    )
    _args.add_formats(ap, key=False)
    _args.add_scores_are(ap)
    ap.add_argument(
        "--systems",
        nargs="+",
        metavar="NAME",
        help="the system of each score file, in order, checked against the model's systems "
        "instead of the names the file names give (e.g. a renamed eval file)",
    )
    ap.add_argument(
        "--output-format",
        choices=_args.PRESETS,
        metavar="NAME",
        help="write the output in this layout instead of the input's: "
        + ", ".join(_args.PRESETS)
        + " (nist-sre: header, tabs, side 'a' unless the input has one; wespeaker and "
        "speechbrain: the input's labels as target/nontarget and 1/0)",
    )
    ap.add_argument(
        "--log10",
        action="store_true",
        help="write log10 likelihood-ratios (the LLRs divided by ln 10), as forensic reports "
        "give them; the input scores are read as they are (a calibrator's map absorbs "
        "their scale, so a model trained on log10 LRs takes them as given)",
    )
    ap.add_argument(
        "--align",
        action="store_true",
        help="the files list the trials in different orders: read them whole and "
        "align them on the trial ids (memory grows with the files)",
    )
    _args.add_missing(ap, "with --align, trials")
    ap.add_argument(
        "--condition",
        choices=["Closed", "Open"],
        help="Albayzin output: the condition written (default: the first input's)",
    )
    ap.add_argument(
        "--chunk-size",
        type=_args.positive_int,
        default=1 << 16,
        metavar="N",
        help="trials per chunk (default 65536)",
    )
    ap.add_argument(
        "--quality",
        nargs="+",
        metavar="FILE",
        help="quality files of a QualityFusion model: a header 'segment name ...' "
        "naming the measures, then one line per enrolment or test segment; "
        "trials of segments without a line get the affine back-off fusion",
    )
    ap.add_argument(
        "--trial-quality",
        nargs="+",
        metavar="SIDE_NAME=FILE",
        help="per-trial quality files of a QualityFusion model, e.g. "
        "model_duration=a.txt test_duration=b.txt, each of lines 'model test "
        "value'",
    )
    _args.add_flags(ap, json=True)
    _args.add_signing_key(ap)
    return ap


def _evaluate(sub):
    """The ``focal evaluate`` command: calibration analysis of binary score files."""
    ev = _args.command(
        sub,
        "evaluate",
        "calibration analysis of binary score files",
        "Print Cllr, minCllr, calibration loss, ROCCH-EER, PRBEP and actual / "
        "minimum normalized DCF of each score file (read as natural-log LLRs) "
        "against a key.",
        "focal evaluate eval_fused.scores --key eval.key --p-target 0.01 0.001",
    )
    ev.add_argument("scores", nargs="+", help="score files: lines 'model test score' (LLRs)")
    ev.add_argument(
        "--key",
        help="key file: lines 'model test target|nontarget'; not needed "
        "when the score files carry the labels (wespeaker, speechbrain)",
    )
    _args.add_formats(ev)
    _args.add_pos_label(ev)
    _args.add_scores_are(ev)
    ev.add_argument(
        "--p-target",
        nargs="+",
        type=_args.probability,
        metavar="P",
        help=f"effective target priors of the DCF operating points (default {DEFAULT_P_TARGET})",
    )
    _args.add_missing(ev)
    _args.add_flags(ev, json=True)
    ev.add_argument(
        "--summary-only",
        action="store_true",
        help="print only the summary table (a line per system) that precedes the reports "
        "of several systems",
    )
    _args.add_plot(
        ev,
        "DET, normalized Bayes error, APE, ECE, calibration (PAV), reliability, histogram and "
        "Tippett figures (and per-partition DCF bars with --partition)",
    )
    _extras.add_evaluate_options(ev)
    ev.add_argument(
        "--dask",
        nargs="?",
        const="local",
        metavar="SCHEDULER_ADDRESS",
        help="evaluate on a dask cluster (needs pip install 'dask[distributed]'): "
        "a local one, or the scheduler at SCHEDULER_ADDRESS; score files and "
        "--key may then be glob patterns, each file one partition",
    )
    return ev


def _train_multiclass(sub):
    """The ``focal train-multiclass`` command: a multiclass fusion."""
    tm = _args.command(
        sub,
        "train-multiclass",
        "train a multiclass fusion on dev log-likelihood files",
        "Train a MulticlassFusion (multiclass logistic regression, thesis 8.3; "
        "Albayzin eq. 11) of one or several systems' log-likelihood files (Albayzin "
        "2012 format or 'segment score...' with a header) against a 'segment "
        "language' key, and save it. The prior defaults to the Albayzin evaluation "
        "prior of the files' condition (closed set: the out-of-set class and its "
        "segments are ignored) or flat.",
        "focal train-multiclass --scores dev_sys1_open.txt dev_sys2_open.txt "
        "--key dev.key -o lid.json",
    )
    tm.add_argument(
        "--scores",
        nargs="+",
        required=True,
        metavar="FILE",
        help="one log-likelihood file per system, same task and condition",
    )
    tm.add_argument("--key", required=True, metavar="FILE", help="key: lines 'segment language'")
    tm.add_argument(
        "--mode",
        choices=["scalar", "calibration", "full"],
        default="scalar",
        help="scalar: a weight per system and an offset vector; calibration: one "
        "system, alpha l + beta; full: a matrix per system (default scalar)",
    )
    tm.add_argument(
        "--prior",
        nargs="+",
        type=_args.non_negative,
        metavar="P",
        help="training prior, one value per class in the files' order (zeros ignore a class)",
    )
    _args.add_missing(tm, "segments")
    _args.add_flags(tm, json=True, other=True, model_output=True)
    _args.add_signing_key(tm)
    return tm


def _evaluate_multiclass(sub):
    """The ``focal evaluate-multiclass`` command: Albayzin / LRE measures."""
    em = _args.command(
        sub,
        "evaluate-multiclass",
        "Albayzin / LRE measures of multiclass log-likelihood files",
        "Print C_mce, C_def, C_min (nats), multiclass Cllr (bits), the Albayzin "
        "2012 relative confusions F_act, F_dis, F_cal and NIST CAVG of each "
        "log-likelihood file against a 'segment language' key, in the closed-set "
        "condition (out-of-set segments and column ignored) and/or the open-set one "
        "(flat prior over all classes; its CAVG is focal's own extension: the out-of-set "
        "class counted as one more target).",
        "focal evaluate-multiclass eval_sys1_open.txt --key eval.key --condition closed open",
    )
    em.add_argument("scores", nargs="+", help="log-likelihood files (Albayzin or generic)")
    em.add_argument("--key", required=True, help="key: lines 'segment language'")
    em.add_argument(
        "--condition",
        nargs="+",
        choices=CONDITIONS,
        help="evaluation condition(s) (default: the file's; open for the generic format)",
    )
    _args.add_missing(em, "segments")
    _args.add_flags(em, json=True, other=True)
    _args.add_plot(
        em, "the one-vs-rest detection APE plots and the pairwise Cllr bars of each file"
    )
    return em


def _sws(sub):
    """The ``focal sws`` command: spoken term detection scoring."""
    sw = _args.command(
        sub,
        "sws",
        "spoken term detection scoring (ATWV, C_nxe)",
        "Score a spoken term detection system as MediaEval SWS 2013 does: "
        "alignment, ATWV, MTWV, C_nxe and C_nxe^min (focal.std). Files in the "
        "NIST STD 2006 formats (STDLIST, RTTM, ECF, TLIST) or plain tables.",
        "focal sws sys.stdlist.xml ref.rttm audio.ecf.xml queries.tlist.xml",
    )
    sw.add_argument(
        "system", help="STDLIST / KWSLIST XML, or a table 'query file tbeg dur score decision'"
    )
    sw.add_argument("reference", help="RTTM, or a table 'query file tbeg dur'")
    sw.add_argument("audio", help="ECF XML, a table 'file tbeg dur', or T_audio in seconds")
    sw.add_argument("queries", nargs="?", help="TLIST XML or a table 'query text' (optional)")
    sw.add_argument(
        "--operating-point",
        choices=["sws2013", "std2006", "sws2012"],
        default="sws2013",
        help="sws2013: P_target 0.00015, C_miss 100, C_fa 1 (default); std2006: "
        "1e-4, 10, 1; sws2012: P_target = N_true / (n_tps T_audio)",
    )
    sw.add_argument(
        "--cost",
        nargs="+",
        action=_extras.JoinedCost,
        metavar="P:CMISS:CFA",
        help="another operating point: P_TARGET:C_MISS:C_FA (or the three numbers)",
    )
    sw.add_argument(
        "--tolerance",
        type=_args.non_negative,
        default=0.5,
        metavar="SECONDS",
        help="alignment tolerance (default 0.5 s)",
    )
    sw.add_argument(
        "--n-tps",
        type=_args.positive,
        default=1.0,
        metavar="N",
        help="trials per second of audio (default 1)",
    )
    thr = sw.add_mutually_exclusive_group()
    thr.add_argument(
        "--threshold",
        type=_args.finite,
        metavar="T",
        help="decide YES iff score >= T for ATWV (instead of the system's decisions)",
    )
    thr.add_argument(
        "--bayes-threshold",
        action="store_true",
        help="decide at the Bayes threshold of the operating point (scores as LLRs)",
    )
    sw.add_argument("--per-query", action="store_true", help="add the per-query table")
    sw.add_argument(
        "--prefer",
        choices=["score", "decision"],
        default="score",
        help="of two detections competing for one occurrence, align the higher "
        "score (default) or the YES decision (changes ATWV when decisions are "
        "not monotone in score)",
    )
    sw.add_argument(
        "--cnxe-queries",
        choices=["evaluated", "all"],
        default="evaluated",
        help="C_nxe over the queries with occurrences (default) or over every query, "
        "keeping the trials of queries without occurrences (plan eq. 41)",
    )
    _args.add_flags(sw, json=True)
    _args.add_plot(sw, "the term-weighted DET")
    return sw


def _demo(sub):
    """The ``focal demo`` command."""
    demo = _args.command(
        sub,
        "demo",
        "run the main job on the sample data",
        "Train a fusion on the sample dev speaker-detection set (data_samples/), "
        "save it, apply it to the eval set and print the calibration analysis of "
        "each system and of the fusion; with matplotlib, also write the figures.",
    )
    demo.add_argument(
        "--data",
        default=None,
        help="folder holding speaker_detection/ (default: the sample set shipped with focal)",
    )
    demo.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="folder for the model, the fused scores and the plots (default: a new "
        "temporary folder, kept)",
    )
    demo.add_argument(
        "--p-target",
        type=_args.probability,
        default=DEFAULT_P_TARGET,
        metavar="P",
        help=f"operating point (default {DEFAULT_P_TARGET})",
    )
    _args.add_flags(demo, json=True)
    return demo
