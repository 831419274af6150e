"""Argument types and argument groups shared by the commands of :mod:`focal.cli.parser`.

A bad value is a usage error (exit status 2, argparse's message).
"""

from __future__ import annotations

import argparse
import math

__all__ = [
    "argument",
    "probability",
    "non_negative",
    "positive",
    "finite",
    "positive_int",
    "plot_size",
    "Formatter",
    "command",
    "add_flags",
    "add_plot",
    "add_pos_label",
    "add_missing",
    "PRESETS",
    "add_formats",
    "add_signing_key",
    "add_scores_are",
    "Once",
]


def argument(convert, valid, requirement, kind="a number"):
    """An argparse ``type``: ``convert(text)``, refused (a usage error) unless ``valid``."""

    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind}, got {text!r}") from None
        if not valid(value):
            raise argparse.ArgumentTypeError(f"must be {requirement}, got {text}")
        return value

    return parse


probability = argument(float, lambda v: 0.0 < v < 1.0, "strictly between 0 and 1", "a probability")
non_negative = argument(float, lambda v: math.isfinite(v) and v >= 0, "a finite number >= 0")
positive = argument(float, lambda v: math.isfinite(v) and v > 0, "a finite number > 0")
finite = argument(float, math.isfinite, "finite")
positive_int = argument(int, lambda v: v >= 1, ">= 1", "an integer")


def plot_size(text: str):
    """``WIDTHxHEIGHT`` in pixels, e.g. ``800x600``."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT in pixels, got {text!r}") from None
    if min(w, h) < 100 or max(w, h) > 20000 or w * h > 25_000_000:  # plots.report.MAX_PIXELS
        raise argparse.ArgumentTypeError(
            f"each side must be 100 to 20000 pixels, at most 25 million pixels in all "
            f"(e.g. 5000x5000), got {text!r}"
        )
    return w, h


# ---------------------------------------------------------------------------------------------
# argument groups that several commands share


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Help of every command: descriptions and examples keep their line breaks."""


def command(sub, name, help, description, example=None):
    """A subcommand (``args.command`` is its name)."""
    return sub.add_parser(
        name,
        formatter_class=Formatter,
        help=help,
        description=description,
        epilog=example and f"example:\n  {example}",
    )


def add_flags(parser, *, json=False, other=False, model_output=False):
    """``--other`` (multiclass keys), ``--json`` and ``-o MODEL``, as asked."""
    if other:
        parser.add_argument(
            "--other",
            choices=["error", "oos"],
            default="error",
            help="key languages outside the classes: an error, or out-of-set",
        )
    if json:
        parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    if model_output:
        parser.add_argument(
            "-o", "--output", required=True, metavar="MODEL", help="model file to write (JSON)"
        )


def add_plot(parser, what):
    """``--plot DIR`` with ``--plot-size`` and ``--plot-format``, as ``focal evaluate`` has."""
    parser.add_argument(
        "--plot",
        metavar="DIR",
        help=f"also write {what} and an HTML page (index.html) into DIR (needs matplotlib)",
    )
    parser.add_argument(
        "--plot-size",
        type=plot_size,
        default=(800, 600),
        metavar="WxH",
        help="size of each figure in pixels (default 800x600; at most 25 million pixels)",
    )
    parser.add_argument(
        "--plot-format",
        nargs="+",
        choices=["png", "pdf", "svg"],
        default=["png"],
        help="figure formats besides PNG, which is always written",
    )


def add_pos_label(parser):
    """``--pos-label`` of the binary keys."""
    parser.add_argument(
        "--pos-label",
        metavar="LABEL",
        help="the key's target label (e.g. genuine), when the key does not use "
        "target/nontarget, tar/non or 1/0; every other trial must carry one "
        "other label",
    )


def add_missing(parser, what="trials"):
    """``--missing error|drop`` for ``what`` missing from a score file or the key."""
    parser.add_argument(
        "--missing",
        choices=["error", "drop"],
        default="error",
        help=f"{what} missing from a score file or the key: an error (default), or dropped",
    )


PRESETS = ("bosaris", "kaldi", "nist-sre", "wespeaker", "speechbrain", "voxceleb")


def add_formats(parser, key=True):
    """--format / --columns of the score files (and of the key): focal.io.formats."""
    parser.add_argument(
        "--format",
        choices=PRESETS,
        metavar="NAME",
        help="column layout of the score files: "
        + ", ".join(PRESETS)
        + " (default bosaris: 'model test score'; a header line naming "
        "the columns is skipped); gzip files and '-' (stdin) are read too",
    )
    parser.add_argument(
        "--columns",
        metavar="ROLES",
        help="the score files' columns for other layouts, by position "
        "('model test - score', '-' skips a column) or by header name "
        "('model=modelid test=segmentid score=LLR'); roles model/enrol, "
        "test/segment, score/llr, label/key",
    )
    if key:
        parser.add_argument(
            "--key-format",
            choices=PRESETS,
            metavar="NAME",
            help="column layout of the key (default: that of --format; "
            "voxceleb trial lists are 'label enrol test')",
        )
        parser.add_argument(
            "--key-columns",
            metavar="ROLES",
            help="the key's columns, as --columns (e.g. 'label model test')",
        )


def add_signing_key(parser):
    """``--signing-key`` of the commands that save or load a model file."""
    parser.add_argument(
        "--signing-key",
        metavar="FILE",
        help="file holding a secret key: sign the saved model (train) or "
        "require its signature (apply) with HMAC-SHA256",
    )


def add_scores_are(parser):
    """``--scores-are llr|distance``: which way the score files point."""
    parser.add_argument(
        "--scores-are",
        choices=["llr", "distance"],
        default="llr",
        help="llr (default): higher scores mean target (LLRs, similarities); distance: lower "
        "scores mean target (evaluate negates them; a fusion learns negative weights)",
    )


class Once(argparse.Action):
    """Store the value; a second occurrence of the option is a usage error (never the last one
    silently).
    """

    def __call__(self, parser, namespace, values, option_string=None):
        """Store ``values``, or stop with a usage error when the option came before."""
        if getattr(namespace, self.dest, None) is not None:
            parser.error(f"argument {option_string}: given twice (give one value)")
        setattr(namespace, self.dest, values)
