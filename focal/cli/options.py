"""Command-line options of the practitioners' features: operating points written
``P_TARGET:C_MISS:C_FA``, confidence intervals, C_primary, the conventional EER, score
normalization, progress and logging, and the one JSON printer (argparse and printing only; the
work is in the library).
"""

from __future__ import annotations

import argparse
import json
import logging
import math

from .args import argument, positive_int

__all__ = [
    "add_cost",
    "add_logging",
    "configure_logging",
    "operating_points",
    "add_evaluate_options",
    "add_normalize",
    "add_json",
    "print_json",
]


def _cost(text: str):
    from ..metrics.report import parse_operating_point

    try:
        return parse_operating_point(text, "--cost")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_cost(parser, *, repeatable: bool = True):
    """``--cost P_TARGET:C_MISS:C_FA`` (a bare P_TARGET means unit costs); not repeatable: once
    at most (a second one is a usage error).
    """
    from .args import Once

    parser.add_argument(
        "--cost",
        type=_cost,
        action="append" if repeatable else Once,
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
    """``-v`` / ``-q`` (more, repeatable, or fewer messages on stderr) and ``--progress``."""
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="more messages on stderr (-v: each step and its time, -vv: details)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="only errors on stderr")
    parser.add_argument(
        "--progress",
        action="store_true",
        help="progress bars on stderr of the long steps (needs tqdm)",
    )


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
    """Options of ``focal evaluate`` for intervals, C_primary, the conventional EER,
    partitions and log10 LRs.
    """
    add_cost(ev)
    ev.add_argument(
        "--ci",
        type=_confidence,
        metavar="LEVEL",
        help="bootstrap confidence intervals at this coverage, e.g. 0.95",
    )
    ev.add_argument(
        "--bootstrap",
        type=positive_int,
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
    ev.add_argument(
        "--partition",
        metavar="FILE",
        help="also the measures per partition of the trials, pooled and equalized (NIST "
        "SRE): a table with a header 'model test column...' giving each trial's labels "
        "(e.g. a NIST SRE18/19 key); intervals per partition with --ci",
    )
    ev.add_argument(
        "--partition-columns",
        nargs="+",
        metavar="NAME",
        help="the --partition file's columns to use (default: all after the trial's two)",
    )
    ev.add_argument(
        "--log10",
        action="store_true",
        help="the score files hold log10 likelihood-ratios; thresholds are printed and "
        "Tippett, histogram, calibration and ECE figures drawn in log10",
    )


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
    add_json(nm)
