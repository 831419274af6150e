"""Command-line options of the practitioners' features: operating points written
``P_TARGET:C_MISS:C_FA``, confidence intervals, C_primary, the conventional EER, score
normalization, progress and logging (argparse and printing only; the work is in the library).
"""

from __future__ import annotations

import argparse
import json
import logging
import math

from .args import argument

__all__ = [
    "add_cost",
    "add_logging",
    "configure_logging",
    "operating_points",
    "add_evaluate_options",
    "read_binary_systems",
    "evaluate_reports",
    "add_normalize",
    "add_json",
    "print_json",
    "plot_pages",
    "multiclass_page_writer",
]


def _cost(text: str):
    from ..metrics.report import parse_operating_point

    try:
        return parse_operating_point(text, "--cost")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_cost(parser, *, repeatable: bool = True):
    """``--cost P_TARGET:C_MISS:C_FA`` (a bare P_TARGET means unit costs)."""
    parser.add_argument(
        "--cost",
        type=_cost,
        action="append" if repeatable else "store",
        metavar="P:CMISS:CFA",
        help="an operating point as P_TARGET:C_MISS:C_FA, e.g. 0.01:1:10 (a "
        "bare P_TARGET: unit costs)" + ("; repeatable" if repeatable else ""),
    )


class JoinedCost(argparse.Action):
    """``--cost P:C_MISS:C_FA`` or ``--cost P C_MISS C_FA`` (the older three-number form)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if len(values) not in (1, 3):
            parser.error(
                f"argument {option_string}: expected P_TARGET:C_MISS:C_FA or three "
                f"numbers, got {' '.join(values)!r}"
            )
        try:
            setattr(namespace, self.dest, _cost(":".join(values)))
        except argparse.ArgumentTypeError as exc:
            parser.error(f"argument {option_string}: {exc}")


def operating_points(args, default):
    """The operating points of ``--p-target`` and ``--cost``, in that order, else ``default``."""
    points = list(getattr(args, "p_target", None) or []) + list(getattr(args, "cost", None) or [])
    return points or list(default)


def add_logging(parser):
    """``-v`` / ``-q``: more (repeatable) or fewer messages on stderr."""
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="more messages on stderr (-v: progress steps, -vv: details)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="only errors on stderr")


def configure_logging(args):
    """Set the ``focal`` logger from ``-v`` / ``-q`` (warnings by default)."""
    level = (
        logging.ERROR
        if getattr(args, "quiet", False)
        else {0: logging.WARNING, 1: logging.INFO}.get(getattr(args, "verbose", 0), logging.DEBUG)
    )
    logger = logging.getLogger("focal")
    logger.setLevel(level)
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("focal: %(message)s"))
        logger.addHandler(handler)


class _StderrHandler(logging.Handler):
    """Writes to whatever ``sys.stderr`` is when a message comes (not when it was created)."""

    def emit(self, record):
        import sys

        try:
            sys.stderr.write(self.format(record) + "\n")
        except Exception:  # noqa: BLE001 - logging must never break the command
            self.handleError(record)


def add_json(parser):
    """``--json``: print the result as JSON (:func:`print_json`)."""
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def print_json(value) -> None:
    """Print ``value`` as JSON, non-finite floats as the strings "inf", "-inf", "nan": the one
    JSON writer of every command.
    """

    def safe(v):
        if isinstance(v, dict):
            return {k: safe(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [safe(x) for x in v]
        if isinstance(v, float) and not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        return v

    print(json.dumps(safe(value), indent=2, allow_nan=False))


# -- evaluate --------------------------------------------------------------------------------


_confidence = argument(
    float, lambda v: 0.0 < v < 1.0, "strictly between 0 and 1", "a coverage such as 0.95"
)


def add_evaluate_options(ev):
    """Options of ``focal evaluate`` for intervals, C_primary, the conventional EER."""
    add_cost(ev)
    ev.add_argument(
        "--ci",
        type=_confidence,
        metavar="LEVEL",
        help="bootstrap confidence intervals at this coverage, e.g. 0.95",
    )
    ev.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        metavar="N",
        help="bootstrap replicates (default 1000)",
    )
    ev.add_argument(
        "--cluster",
        choices=["trial", "model", "test", "both"],
        default="trial",
        help="resample trials (default), whole models, whole test segments, or "
        "models and test segments independently (both: two-way)",
    )
    ev.add_argument("--seed", type=int, default=0, help="random seed of the bootstrap (0)")
    ev.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="parallel workers of the bootstrap (default 1; -1: all CPUs)",
    )
    ev.add_argument(
        "--progress", action="store_true", help="progress bar of the bootstrap (needs tqdm)"
    )
    ev.add_argument(
        "--c-primary",
        metavar="EVAL",
        help="also NIST SRE C_primary: sre16, sre18, sre19 or sre21 (their "
        "operating points), or 'cost' for the mean over the --cost points",
    )
    ev.add_argument(
        "--conventional-eer",
        action="store_true",
        help="also the conventional EER of the empirical ROC, beside the ROCCH-EER",
    )


def read_binary_systems(
    paths, key_path, missing, pos_label=None, format=None, key_format=None, ids=True
):
    """``({path: (tar, non)}, {path: (models, tests, y)})``: each system's target and
    non-target scores, and the trial ids (None unless ``ids``) and labels of its aligned trials.
    """
    from ..io.engine import iter_aligned

    systems, trials = {}, {}
    for path, x, y, models, tests in iter_aligned(
        paths,
        key_path,
        format=format,
        key_format=key_format,
        pos_label=pos_label,
        missing=missing,
        ids=ids,
    ):
        y = y.astype(bool)
        systems[str(path)] = (x[y], x[~y])
        trials[str(path)] = (models, tests, y)  # split only when clusters ask (memory)
    return systems, trials


def evaluate_reports(systems, ids, points, args):
    """The calibration reports of ``focal evaluate`` with its optional parts."""
    from ..metrics import calibration_report

    cluster = getattr(args, "cluster", "trial")
    c_primary = getattr(args, "c_primary", None)
    if c_primary is not None and c_primary.lower() == "cost":
        c_primary = list(getattr(args, "cost", None) or [])
    if getattr(args, "ci", None) is not None and not getattr(args, "bootstrap", 1) >= 1:
        raise ValueError("--bootstrap must be at least 1")
    reports = []
    for name, (tar, non) in systems.items():
        clusters = (None, None)
        if cluster != "trial":
            models, tests, y = ids[name]
            tm, tt, nm, nt = models[y], tests[y], models[~y], tests[~y]
            clusters = {"model": (tm, nm), "test": (tt, nt), "both": ((tm, tt), (nm, nt))}[cluster]
        reports.append(
            calibration_report(
                tar,
                non,
                operating_points=points,
                name=name,
                conventional_eer=getattr(args, "conventional_eer", False),
                c_primary=c_primary,
                confidence=getattr(args, "ci", None),
                n_bootstrap=getattr(args, "bootstrap", 1000),
                tar_clusters=clusters[0],
                non_clusters=clusters[1],
                random_state=getattr(args, "seed", 0),
                n_jobs=getattr(args, "jobs", None),
                progress=getattr(args, "progress", False),
            )
        )
    return reports


# -- figures of evaluate-multiclass and sws ----------------------------------------------------


def plot_pages():
    """:mod:`focal.plots.pages`, or a ValueError saying how to install matplotlib."""
    try:
        from ..plots import pages
    except ImportError as exc:
        raise ValueError(str(exc)) from None
    return pages


def multiclass_page_writer(args):
    """With ``--plot DIR``: a function writing the figures and page of ``focal
    evaluate-multiclass`` for its reports (matplotlib checked now, before any work).
    """
    if getattr(args, "plot", None) is None:
        return None
    pages = plot_pages()

    def write(reports):
        from ..io import align_multiclass, read_multiclass_key
        from ..io.multiclass import read_multiclass_systems

        key = read_multiclass_key(args.key)
        entries = []
        for system, report in zip(read_multiclass_systems(args.scores), reports):
            X, labels, _, classes = align_multiclass(
                key, system, missing=args.missing, other=args.other
            )
            entries.append(
                {
                    "name": report.name,
                    "llh": X,
                    "labels": labels,
                    "class_names": list(classes),
                    "text": str(report),
                }
            )
        return pages.write_multiclass_report(
            entries, args.plot, size=args.plot_size, formats=args.plot_format
        )

    return write


# -- normalize -------------------------------------------------------------------------------


def add_normalize(sub, formatter):
    """The ``focal normalize`` command."""
    nm = sub.add_parser(
        "normalize",
        formatter_class=formatter,
        help="z-, t-, s- or adaptive s-norm of scores",
        description="Normalize the scores of a 'model test score' file by cohort statistics "
        "(z-norm: of the model's scores against the cohort; t-norm: of the test "
        "segment's; s-norm: the mean of both; as-norm: s-norm over each side's "
        "top-N cohort scores). Cohort files: 'model cohort score' (enrolment) and "
        "'cohort_model test score' (test), each a full grid.",
        epilog="example:\n  focal normalize trials.scores --enrol-cohort enrol_cohort.scores "
        "--test-cohort cohort_test.scores --method as-norm --top-n 300 -o norm.scores",
    )
    nm.add_argument(
        "scores",
        nargs=1,
        metavar="SCORES",
        help="score file to normalize: lines 'model test score'",
    )
    nm.add_argument("-o", "--output", required=True, metavar="FILE", help="output score file")
    nm.add_argument(
        "--method",
        choices=["s-norm", "z-norm", "t-norm", "as-norm"],
        default="s-norm",
        help="normalization (default s-norm)",
    )
    nm.add_argument("--top-n", type=int, metavar="N", help="cohort members per side (as-norm)")
    nm.add_argument(
        "--enrol-cohort",
        metavar="FILE",
        help="enrolment models against the cohort: lines 'model cohort score'",
    )
    nm.add_argument(
        "--test-cohort",
        metavar="FILE",
        help="cohort models against the test segments: lines 'cohort test score'",
    )
    nm.add_argument("--progress", action="store_true", help="progress bar (needs tqdm)")
    add_json(nm)
    nm.set_defaults(func=cmd_normalize)


def cmd_normalize(args) -> int:
    from ..workflows.normalize import normalize_files

    norm = normalize_files(
        args.scores[0],
        args.output,
        method=args.method,
        top_n=args.top_n,
        enrol_cohort=args.enrol_cohort,
        test_cohort=args.test_cohort,
        progress=args.progress,
    )
    n_models = 0 if norm.enrol_ids_ is None else len(norm.enrol_ids_)
    n_tests = 0 if norm.test_ids_ is None else len(norm.test_ids_)
    if args.json:
        print_json(
            {
                "output": str(args.output),
                "method": args.method,
                "top_n": args.top_n,
                "n_enrolment_models": n_models,
                "n_test_segments": n_tests,
            }
        )
    else:
        print(
            f"{args.output}: {args.method} scores ({n_models:,} enrolment models, "
            f"{n_tests:,} test segments with cohort statistics)"
        )
    return 0
