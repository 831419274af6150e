"""The ``focal`` command line (also ``python -m focal``).

Exit status: 0 on success, 1 when an input file or value is bad (the error is printed on one
line), 2 on usage errors (argparse).
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from ._version import __version__



def _default_samples() -> pathlib.Path:
    """``data_samples/`` of the current directory (a checkout), else next to the sources."""
    here = pathlib.Path.cwd() / "data_samples"
    if here.is_dir():
        return here
    return pathlib.Path(__file__).resolve().parent.parent / "data_samples"


def _operating_points(values):
    return [float(v) for v in values] if values else [0.01]


def _plot_size(text: str):
    """``WIDTHxHEIGHT`` in pixels, e.g. ``800x600``."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT in pixels, got {text!r}") from None
    if min(w, h) < 100 or max(w, h) > 20000:
        raise argparse.ArgumentTypeError(f"each side must be 100 to 20000 pixels, got {text!r}")
    return w, h


def _cmd_evaluate(args) -> int:
    from .io import align_trials, read_key, read_scores
    from .metrics import calibration_report, from_labels

    plot_dir = getattr(args, "plot", None)
    if plot_dir is not None:
        try:
            from .plots import write_report
        except ImportError as exc:
            raise ValueError(str(exc)) from None
    key = read_key(args.key)
    systems = {}
    for path in args.scores:
        X, y, _, _ = align_trials(key, read_scores(path), missing=args.missing)
        systems[str(path)] = from_labels(X[:, 0], y)
        report = calibration_report(*systems[str(path)],
                                    operating_points=_operating_points(args.p_target),
                                    name=str(path))
        print(report)
        print()
    if plot_dir is not None:
        names = [pathlib.Path(p).name for p in systems]
        if len(set(names)) == len(names):  # short legends when the file names tell them apart
            systems = dict(zip(names, systems.values()))
        page = write_report(systems, plot_dir, operating_points=_operating_points(args.p_target),
                            size=args.plot_size, formats=args.plot_format)
        print(f"report: {page}")
    return 0


def _cmd_demo(args) -> int:
    folder = pathlib.Path(args.data or _default_samples()) / "speaker_detection"
    if not folder.is_dir():
        raise ValueError(f"{folder}: sample data not found (run from a focal checkout, or pass --data)")
    print(f"focal {__version__} demo: calibration analysis of the sample speaker-detection "
          f"systems in {folder}\n(each system's raw scores evaluated as if they were LLRs)\n")
    scores = sorted(str(p) for p in folder.glob("eval_sys*.scores"))
    if not scores:
        raise ValueError(f"{folder}: no eval_sys*.scores files")
    ns = argparse.Namespace(key=str(folder / "eval.key"), scores=scores, p_target=None,
                            missing="error")
    return _cmd_evaluate(ns)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="focal",
        description="Fusion and calibration of recognizer scores, and the measures that judge them.",
    )
    parser.add_argument("--version", action="version", version=f"focal {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ev = sub.add_parser("evaluate", help="calibration analysis of binary score files",
                        description="Print Cllr, minCllr, calibration loss, EER and actual / "
                                    "minimum DCF of each score file against a key.")
    ev.add_argument("scores", nargs="+", help="score files: lines 'model test score' (LLRs)")
    ev.add_argument("--key", required=True, help="key file: lines 'model test target|nontarget'")
    ev.add_argument("--p-target", nargs="+", metavar="P",
                    help="effective target priors of the DCF operating points (default 0.01)")
    ev.add_argument("--missing", choices=["error", "drop"], default="error",
                    help="what to do with trials missing from a score file or the key")
    ev.add_argument("--plot", metavar="DIR",
                    help="also write DET, normalized Bayes error, APE, ECE and Tippett figures "
                         "and an HTML page (index.html) into DIR (needs matplotlib)")
    ev.add_argument("--plot-size", type=_plot_size, default=(800, 600), metavar="WxH",
                    help="size of each figure in pixels (default 800x600)")
    ev.add_argument("--plot-format", nargs="+", choices=["png", "pdf", "svg"], default=["png"],
                    help="figure formats besides PNG, which is always written")
    ev.set_defaults(func=_cmd_evaluate)

    demo = sub.add_parser("demo", help="run the main job on the sample data in data_samples/",
                          description="Evaluate the sample speaker-detection systems.")
    demo.add_argument("--data", default=None,
                      help="folder holding the sample sets (default: ./data_samples)")
    demo.set_defaults(func=_cmd_demo)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ValueError as exc:
        print(f"focal: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
