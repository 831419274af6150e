"""The ``focal`` command line (also ``python -m focal``): train, apply and evaluate on files
(``focal COMMAND --help``; examples in the README).

Argument parsing (:mod:`focal.cli.parser`) and printing only: every job is a library
function (:mod:`focal.workflows.train`, :func:`focal.workflows.apply_model`,
:func:`focal.std.term_detection_report`, :func:`focal.save` / :func:`focal.load`) whose report
objects print themselves.

Exit status: 0 on success, 1 when an input file or value is bad (a ``ValueError``: its message
is printed on one line, naming the file and, for score files, the line; also a file that cannot
be read or written, and running out of memory), 2 on usage errors (argparse), 130 when
interrupted. Output piped into a program that stops reading (``| head``) ends quietly.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import TYPE_CHECKING

from .._progress import step
from . import options as _extras
from .parser import DEFAULT_P_TARGET, build_parser

if TYPE_CHECKING:
    from ..metrics.report import CalibrationReport

# ---------------------------------------------------------------------------------------------
# printing


def _print_reports(reports, as_json) -> None:
    if as_json:
        _extras.print_json([r.to_dict() for r in reports])
        return
    for report in reports:
        print(report)
        print()


def _summary_stream(output):
    """Where to print a summary: stderr when the output itself is streamed (``-``, a pipe)."""
    from .._text.outputs import is_stream

    return sys.stderr if is_stream(output) else sys.stdout


# ---------------------------------------------------------------------------------------------
# commands


def _formats(args):
    """(score format, key format) from --format/--columns and --key-format/--key-columns."""

    def one(preset, columns, option):
        if preset is not None and columns is not None:
            raise ValueError(f"give --{option}format or --{option}columns, not both")
        return columns if columns is not None else preset

    key = one(getattr(args, "key_format", None), getattr(args, "key_columns", None), "key-")
    scores = one(args.format, args.columns, "")
    if getattr(args, "key", "") is None:
        from ..io.formats import score_layout

        if not score_layout(scores).has("label"):  # a usage error, as argparse reports one
            build_parser().error(
                f"{args.command}: the following arguments are required: --key "
                f"(the score files have no label column)"
            )
    return scores, key


def _cmd_train(args) -> int:
    from ..workflows import train_fusion

    p_target = 0.5 if args.p_target is None else args.p_target
    if args.cost is not None:  # --cost P:C_MISS:C_FA trains at its effective prior
        from ..core.priors import effective_prior

        p_target = effective_prior(*args.cost)
    score_format, key_format = _formats(args)
    fit = train_fusion(
        args.scores,
        args.key,
        p_target=p_target,
        pav=args.pav,
        pseudo_count=args.pseudo_count,
        elub=args.elub,
        missing=args.missing,
        pos_label=args.pos_label,
        format=score_format,
        key_format=key_format,
        scores_are=args.scores_are,
        output=args.output,
        signing_key=args.signing_key,
        progress=args.progress,
        log10=args.log10,
    )
    return _print_fit(fit, args)


def _print_fit(fit, args) -> int:
    """The fit's summary and where the model went, or with ``--json`` its numbers (stdout then
    holds the JSON document only).
    """
    if args.json:
        print(f"saved to {args.output}", file=sys.stderr)
        _extras.print_json({"model": str(args.output), **fit.to_dict()})
    else:
        stream = _summary_stream(args.output)
        print(fit, file=stream)
        print(f"saved to {args.output}", file=stream)
    return 0


def evaluate_arguments(args) -> dict:
    """The keyword arguments of :func:`focal.workflows.evaluate_binary` given by the options of
    ``focal evaluate``: the one place where the command's options become the workflow's
    arguments.
    """
    score_format, key_format = _formats(args)
    c_primary = args.c_primary
    if c_primary is not None and c_primary.lower() == "cost":  # the mean over the --cost points
        c_primary = list(args.cost or [])
    return dict(
        score_paths=args.scores,
        key_path=args.key,
        operating_points=_extras.operating_points(args, [DEFAULT_P_TARGET]),
        missing=args.missing,
        pos_label=args.pos_label,
        format=score_format,
        key_format=key_format,
        scores_are=args.scores_are,
        conventional_eer=args.conventional_eer,
        c_primary=c_primary,
        confidence=args.ci,
        n_bootstrap=args.bootstrap,
        cluster=args.cluster,
        random_state=args.seed,
        n_jobs=args.jobs,
        progress=args.progress,
        plot=args.plot,
        plot_size=args.plot_size,
        plot_formats=args.plot_format,
        dask=args.dask,
        partition=args.partition,
        partition_columns=args.partition_columns,
        log10=args.log10,
    )


def _cmd_evaluate(args) -> int:
    from ..workflows import evaluate_binary
    from ..workflows.evaluate import summary_table

    if args.summary_only and args.json:
        build_parser().error("evaluate: --summary-only is a text table; --json prints every number")
    evaluation = evaluate_binary(**evaluate_arguments(args))
    if not args.json and (args.summary_only or len(evaluation.reports) > 1):
        print(summary_table(evaluation.reports))
        print()
    if args.json:
        _extras.print_json(evaluation.to_dict())
    elif not args.summary_only:
        _print_reports(evaluation.reports, False)
        for partitions in evaluation.partitions or ():
            print(partitions)
            print()
    _print_page(evaluation.page, args.json)
    return 0


def _print_page(page, as_json) -> None:
    if page is not None:
        print(f"report: {page}", file=sys.stderr if as_json else sys.stdout)


def _cmd_train_multiclass(args) -> int:
    from ..workflows import train_multiclass_fusion

    fit = train_multiclass_fusion(
        args.scores,
        args.key,
        mode=args.mode,
        prior=args.prior,
        missing=args.missing,
        other=args.other,
        output=args.output,
        signing_key=args.signing_key,
        progress=args.progress,
    )
    return _print_fit(fit, args)


def _cmd_evaluate_multiclass(args) -> int:
    from ..workflows import evaluate_multiclass

    evaluation = evaluate_multiclass(
        args.scores,
        args.key,
        args.condition,
        missing=args.missing,
        other=args.other,
        progress=args.progress,
        plot=args.plot,
        plot_size=args.plot_size,
        plot_formats=args.plot_format,
    )
    _print_reports(evaluation.reports, args.json)
    _print_page(evaluation.page, args.json)
    return 0


def _apply_quality(model, args) -> int:
    """``focal apply`` of a quality fusion: scores plus per-segment or per-trial quality."""
    from ..workflows import apply_quality_model
    from ..workflows.apply import quality_step

    for option, given in (("--systems", args.systems), ("--scores-are", args.scores_are != "llr")):
        if given:
            raise ValueError(
                f"{args.model}: {option} is not available with a quality fusion (it fuses the "
                f"files in the order given)"
            )
    if not (args.quality or args.trial_quality):
        raise ValueError(
            f"{args.model}: the model uses quality measures "
            f"({', '.join(quality_step(model).measures_)}): give --quality FILE "
            "or --trial-quality SIDE_NAME=FILE"
        )
    per_trial = dict(item.partition("=")[::2] for item in args.trial_quality or ())
    with step(f"apply {args.model} to {', '.join(args.scores)}", args.progress):
        n, n_backoff = apply_quality_model(
            model,
            args.scores,
            args.output,
            args.quality or (),
            per_trial,
            output_format=args.output_format,
            on_mismatch="align" if args.align else "error",
            missing=args.missing,
            chunk_size=args.chunk_size,
            log10=args.log10,
        )
    if args.json:
        _extras.print_json({"output": str(args.output), "n_trials": n, "n_backoff": n_backoff})
    else:
        print(
            f"{args.output}: {n:,} trials ({n_backoff:,} without quality: affine back-off)",
            file=_summary_stream(args.output),
        )
    return 0


def _cmd_apply(args) -> int:
    from ..models.schema import input_schema
    from ..runtime import load  # NumPy alone: no scikit-learn or SciPy to apply a model
    from ..workflows import apply_model
    from ..workflows.apply import quality_step

    with step(f"read {args.model}"):
        model = load(args.model, key=_signing_key(args))
    if args.quality or args.trial_quality or quality_step(model) is not None:
        return _apply_quality(model, args)
    schema = input_schema(model)
    for note in schema.notes:
        print(f"focal: note: {args.model}: {note}", file=sys.stderr)
    with step(f"apply {args.model} to {', '.join(args.scores)}", args.progress):
        n = apply_model(
            model,
            args.scores,
            args.output,
            align=args.align,
            missing=args.missing,
            condition=args.condition,
            chunk_size=args.chunk_size,
            format=_formats(args)[0],
            output_format=args.output_format,
            systems=args.systems,
            scores_are=args.scores_are,
            log10=args.log10,
        )
    unit = "segments" if schema.kind == "multiclass" else "trials"
    if args.json:
        _extras.print_json({"output": str(args.output), f"n_{unit}": n})
    else:
        print(f"{args.output}: {n:,} {unit}", file=_summary_stream(args.output))
    return 0


def _cmd_sws(args) -> int:
    from ..workflows import evaluate_term_detection

    evaluation = evaluate_term_detection(
        args.system,
        args.reference,
        args.audio,
        args.queries,
        operating_point=args.cost or args.operating_point,
        tolerance=args.tolerance,
        n_tps=args.n_tps,
        threshold="bayes" if args.bayes_threshold else args.threshold,
        prefer=args.prefer,
        cnxe_queries=args.cnxe_queries,
        progress=args.progress,
        plot=args.plot,
        plot_size=args.plot_size,
        plot_formats=args.plot_format,
    )
    (report,) = evaluation.reports
    if args.json:
        _extras.print_json(report.to_dict(per_query=args.per_query))
    else:
        print(report.to_text(per_query=args.per_query))
    _print_page(evaluation.page, args.json)
    return 0


def _cmd_demo(args) -> int:
    from .demo import run_demo

    if not args.json:
        return run_demo(args.data, args.out, args.p_target, progress=args.progress)
    import contextlib

    reports: list[CalibrationReport] = []
    with contextlib.redirect_stdout(sys.stderr):  # the narrative to stderr, the numbers to stdout
        status = run_demo(
            args.data, args.out, args.p_target, reports=reports, progress=args.progress
        )
    _extras.print_json([r.to_dict() for r in reports])
    return status


def _cmd_normalize(args) -> int:
    from ..workflows import normalize_files

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
        _extras.print_json(
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


def _signing_key(args):
    """The secret in ``--signing-key FILE``, or None."""
    from .._text.outputs import read_secret

    return None if getattr(args, "signing_key", None) is None else read_secret(args.signing_key)


def _check_output(args) -> None:
    """Refuse, before any work, outputs (``-o``, ``--plot``) that cannot be written safely."""
    from .._text.outputs import check_command

    check_command(vars(args))


_COMMANDS = {
    "train": _cmd_train,
    "apply": _cmd_apply,
    "evaluate": _cmd_evaluate,
    "train-multiclass": _cmd_train_multiclass,
    "evaluate-multiclass": _cmd_evaluate_multiclass,
    "sws": _cmd_sws,
    "demo": _cmd_demo,
    "normalize": _cmd_normalize,
}

__all__ = [
    "main",
]

# exit status of each exception type; messages are printed as they are, on one line
_EXIT = ((ValueError, 1), (OSError, 1), (MemoryError, 1), (KeyboardInterrupt, 130))


def _message(exc) -> str:
    if isinstance(exc, MemoryError):
        return "out of memory (use smaller files, --chunk-size, or a machine with more memory)"
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    return " ".join(str(exc).split())


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """A warning (e.g. a fit held by its penalty) as one ``focal: warning:`` line, naming its
    kind unless it is a plain UserWarning.
    """
    kind = "" if category is UserWarning else f"{category.__name__}: "
    print(f"focal: warning: {kind}{' '.join(str(message).split())}", file=sys.stderr)


def _check_stdout() -> None:
    """Refuse to run, before any work, when standard output is closed (``>&-``): what the
    command prints would be lost.
    """
    closed = sys.stdout is None
    if not closed:
        try:
            fd = sys.stdout.fileno()
        except (AttributeError, ValueError, OSError):  # not a file (a capture, a StringIO)
            fd = None
        if fd is not None:
            try:
                os.fstat(fd)
            except OSError:
                closed = True
    if closed:
        raise ValueError(
            "standard output is closed: what focal prints would be lost (redirect it to a file, "
            "or to /dev/null to discard it)"
        )


class _Stdout:
    """Standard output whose write errors name it: ``standard output: cannot write: No space
    left on device`` (a closed pipe stays a BrokenPipeError: the command then ends quietly).
    """

    def __init__(self, stream):
        self._stream = stream

    def _named(self, call, *args):
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OSError(exc.errno, f"cannot write: {exc.strerror}", "standard output") from None

    def write(self, text):
        """Write ``text``; an error names standard output."""
        return self._named(self._stream.write, text)

    def flush(self):
        """Flush; an error names standard output."""
        return self._named(self._stream.flush)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def main(argv=None) -> int:
    """Run the ``focal`` command line on ``argv`` and return its exit status."""
    args = build_parser().parse_args(argv)
    _extras.configure_logging(args)
    stdout = sys.stdout
    try:
        _check_stdout()
        sys.stdout = _Stdout(stdout)
        _check_output(args)
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            status = _COMMANDS[args.command](args)
        sys.stdout.flush()  # what is left, now: a failure is an error (exit status 1)
        return status
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except tuple(t for t, _ in _EXIT) as exc:
        status = next(code for t, code in _EXIT if isinstance(exc, t))
        print(f"focal: {'' if status == 130 else 'error: '}{_message(exc)}", file=sys.stderr)
        return status
    finally:
        sys.stdout = stdout
