"""The ``focal`` command line (also ``python -m focal``): train, apply and evaluate on files.

    focal train --scores dev_sys1.scores dev_sys2.scores --key dev.key --p-target 0.01 -o fuser.json
    focal apply fuser.json eval_sys1.scores eval_sys2.scores -o eval_fused.scores
    focal evaluate eval_fused.scores --key eval.key --p-target 0.01
    focal train-multiclass --scores dev_sys1_open.txt dev_sys2_open.txt --key dev.key -o lid.json
    focal apply lid.json eval_sys1_open.txt eval_sys2_open.txt -o eval_fused_open.txt
    focal evaluate-multiclass eval_fused_open.txt --key eval.key
    focal sws system.stdlist.xml reference.rttm audio.ecf.xml queries.tlist.xml
    focal demo

Models are written and read with :func:`focal.save` / :func:`focal.load` (JSON, no code).
``focal apply`` streams the score files through :func:`focal.io.apply_to_files`, a chunk of
trials at a time, so files larger than memory are fine.

Exit status: 0 on success, 1 when an input file or value is bad (the error is printed on one
line, naming the file and, for score files, the line), 2 on usage errors (argparse), 130 when
interrupted.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys
import tempfile
import warnings

from ._version import __version__

_DEFAULT_P_TARGET = 0.01


# ---------------------------------------------------------------------------------------------
# argument types (a bad value is a usage error: exit status 2)


def _argument(convert, valid, requirement, kind="a number"):
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


_probability = _argument(float, lambda v: 0.0 < v < 1.0, "strictly between 0 and 1",
                         "a probability")
_non_negative = _argument(float, lambda v: math.isfinite(v) and v >= 0, "a finite number >= 0")
_positive = _argument(float, lambda v: math.isfinite(v) and v > 0, "a finite number > 0")
_finite = _argument(float, math.isfinite, "finite")
_positive_int = _argument(int, lambda v: v >= 1, ">= 1", "an integer")


def _plot_size(text: str):
    """``WIDTHxHEIGHT`` in pixels, e.g. ``800x600``."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT in pixels, got {text!r}") from None
    if min(w, h) < 100 or max(w, h) > 20000:
        raise argparse.ArgumentTypeError(f"each side must be 100 to 20000 pixels, got {text!r}")
    return w, h


# ---------------------------------------------------------------------------------------------
# shared helpers


def _json_safe(value):
    """Plain-Python value with non-finite floats as the strings "inf", "-inf", "nan" (JSON)."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _print_json(value) -> None:
    print(json.dumps(_json_safe(value), indent=2, allow_nan=False))


def _name(path) -> str:
    return pathlib.Path(path).name


def _shown(path) -> str:
    """``path`` relative to the current directory when it is inside it (shorter to read)."""
    path = pathlib.Path(path)
    try:
        return str(path.resolve().relative_to(pathlib.Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _final_step(model):
    """The last estimator of a (nested) Pipeline, or the model itself."""
    steps = getattr(model, "steps", None)
    if steps is None:
        return model
    return _final_step(next(e for _, e in reversed(steps) if e is not None and e != "passthrough"))


def _first_step(model):
    steps = getattr(model, "steps", None)
    if steps is None:
        return model
    return _first_step(next(e for _, e in steps if e is not None and e != "passthrough"))


def _is_multiclass(model) -> bool:
    from .estimators import GaussianBackend, MulticlassFusion

    return isinstance(_final_step(model), (MulticlassFusion, GaussianBackend))


def _read_multiclass(paths):
    """Each file's log-likelihoods (Albayzin or generic format); one task and condition."""
    from .io import multiclass_format, read_albayzin_scores, read_multiclass_scores

    def what(s):
        return f"{s.task} {s.condition}" if s.task else "generic format"

    systems = []
    for path in paths:
        kind = multiclass_format(path)
        read = read_albayzin_scores if kind == "albayzin" else read_multiclass_scores
        systems.append(read(path))
    first = systems[0]
    for other in systems[1:]:
        if (other.task, other.condition) != (first.task, first.condition):
            raise ValueError(f"{other.path}: {what(other)} differs from {first.path}'s "
                             f"{what(first)}; fuse files of one task and condition")
    return systems


class _Warnings:
    """Show warnings (e.g. a fit held by its penalty) as one ``focal: warning:`` line each."""

    def __enter__(self):
        self._saved = warnings.showwarning
        warnings.showwarning = self._show
        return self

    def __exit__(self, *exc):
        warnings.showwarning = self._saved

    @staticmethod
    def _show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        print(f"focal: warning: {category.__name__}: {text}", file=sys.stderr)


def _save(model, path, key=None) -> None:
    from .persistence import save

    save(model, path, key=key)
    print(f"saved to {path}", file=_summary_stream(path))


def _summary_stream(output):
    """Where to print a summary: stderr when the output itself is streamed (``-``, a pipe)."""
    from ._files import is_stream

    return sys.stderr if is_stream(output) else sys.stdout


# ---------------------------------------------------------------------------------------------
# binary: train, evaluate


def _read_trials(score_paths, key_path, missing):
    """Aligned ``X (n, n_systems)``, labels, models, tests of score files against a key."""
    from .io import align_trials, read_key, read_scores

    key = read_key(key_path)
    return align_trials(key, *(read_scores(p) for p in score_paths), missing=missing)


def _train_binary(X, y, p_target, pav, pseudo_count):
    """The fusion (and PAV calibration) that ``focal train`` fits."""
    from sklearn.pipeline import make_pipeline

    from .estimators import LogisticFusion, PAVCalibrator

    fusion = LogisticFusion(p_target=p_target)
    model = make_pipeline(fusion, PAVCalibrator(pseudo_count=pseudo_count)) if pav else fusion
    return model.fit(X, y)


def _describe_fusion(fusion, names) -> str:
    terms = " ".join(f"{'-' if w < 0 else '+'} {abs(w):.6g} * {n}" for w, n in
                     zip(fusion.coef_, names))
    return f"llr = {fusion.intercept_:.6g} {terms}"


def _cmd_train(args) -> int:
    X, y, _, _ = _read_trials(args.scores, args.key, args.missing)
    n_tar = int(y.sum())
    with _Warnings():
        model = _train_binary(X, y, args.p_target, args.pav, args.pseudo_count)
    fusion = model[0] if args.pav else model
    print(f"LogisticFusion of {len(args.scores)} system(s), trained at p_target = "
          f"{args.p_target:g} on {len(y):,} trials ({n_tar:,} target, {len(y) - n_tar:,} "
          f"non-target) of {args.key}:")
    print(f"  {_describe_fusion(fusion, [_name(p) for p in args.scores])}   (natural-log LLR)")
    print(f"  training Cllr at p_target = {args.p_target:g}: {fusion.objective_:.4f} "
          f"(1 = uninformative)")
    if args.pav:
        pav = model[-1]
        print(f"  then PAVCalibrator (pseudo_count {args.pseudo_count:g}): {pav.llr_.size} blocks, "
              f"LLRs from {pav.llr_[0]:.4g} to {pav.llr_[-1]:.4g}")
    _save(model, args.output, _signing_key(args))
    return 0


def _binary_systems(paths, key_path, missing):
    """``{path: (tar, non)}`` of each score file against the key."""
    from .io import align_trials, read_key, read_scores
    from .metrics import from_labels

    key = read_key(key_path)
    systems = {}
    for path in paths:
        X, y, _, _ = align_trials(key, read_scores(path), missing=missing)
        systems[str(path)] = from_labels(X[:, 0], y)
    return systems


def _reports(systems, p_targets):
    from .metrics import calibration_report

    return [calibration_report(tar, non, operating_points=p_targets, name=name)
            for name, (tar, non) in systems.items()]


def _report_writer():
    """:func:`focal.plots.write_report`, or a ValueError saying how to install matplotlib."""
    try:
        from .plots import write_report
    except ImportError as exc:
        raise ValueError(str(exc)) from None
    return write_report


def _short_names(systems):
    """File names as labels when they tell the systems apart (short legends), else paths."""
    names = [_name(p) for p in systems]
    return dict(zip(names, systems.values())) if len(set(names)) == len(names) else systems


def _dask_reports(args, p_targets):
    """``evaluate --dask``: :func:`focal.dask.evaluate_files` on a local or remote cluster."""
    if args.plot is not None:
        raise ValueError("--plot is not available with --dask: the figures need the scores in "
                         "memory")
    try:
        from .dask import evaluate_files
    except ImportError as exc:
        raise ValueError(str(exc)) from None
    return evaluate_files(args.scores, args.key, p_targets, missing=args.missing,
                          address=None if args.dask == "local" else args.dask)


def _cmd_evaluate(args) -> int:
    write_report = _report_writer() if args.plot is not None else None  # before any work
    p_targets = args.p_target or [_DEFAULT_P_TARGET]
    if args.dask is not None:
        systems, reports = None, _dask_reports(args, p_targets)
    else:
        systems = _binary_systems(args.scores, args.key, args.missing)
        reports = _reports(systems, p_targets)
    if args.json:
        _print_json([r.to_dict() for r in reports])
    else:
        for report in reports:
            print(report)
            print()
    if write_report is not None:
        page = write_report(_short_names(systems), args.plot, operating_points=p_targets,
                            size=args.plot_size, formats=args.plot_format)
        print(f"report: {page}", file=sys.stderr if args.json else sys.stdout)
    return 0


# ---------------------------------------------------------------------------------------------
# multiclass: train, evaluate


def _training_prior(args, systems, n_classes):
    from .metrics import albayzin_prior

    if args.prior is not None:
        if len(args.prior) != n_classes:
            raise ValueError(f"--prior: {len(args.prior)} values for {n_classes} classes "
                             f"({', '.join(systems[0].classes)})")
        return list(args.prior)
    if systems[0].condition == "Closed":
        return albayzin_prior(n_classes, open_set=False).tolist()
    return None  # flat


def _cmd_train_multiclass(args) -> int:
    from .estimators import MulticlassFusion
    from .io import align_multiclass, read_multiclass_key

    systems = _read_multiclass(args.scores)
    key = read_multiclass_key(args.key)
    X, labels, _, classes = align_multiclass(key, *systems, missing=args.missing,
                                             other=args.other)
    if args.mode == "calibration" and len(systems) != 1:
        raise ValueError(f"--mode calibration takes one score file, got {len(systems)}")
    prior = _training_prior(args, systems, len(classes))
    with _Warnings():
        model = MulticlassFusion(prior=prior, mode=args.mode).fit(X, labels)
    first = systems[0]
    where = f"{first.task} {first.condition}, " if first.task else ""
    shown = "flat" if prior is None else ", ".join(f"{p:.4g}" for p in model.prior_)
    print(f"MulticlassFusion ({args.mode}) of {len(systems)} system(s) on {len(labels):,} "
          f"segments of {args.key} ({where}{len(classes)} classes: {', '.join(classes)}), "
          f"prior {shown}:")
    if model.coef_.ndim == 1:
        for w, path in zip(model.coef_, args.scores):
            print(f"  weight {w:10.6g}  {_name(path)}")
    print(f"  offsets {', '.join(f'{b:.4g}' for b in model.intercept_)}")
    print(f"  training C_mce {model.loss_:.4f} nats (prior-weighted, Albayzin eq. 6)")
    _save(model, args.output, _signing_key(args))
    return 0


_CONDITIONS = ("closed", "open")


def _multiclass_measures(llh, labels, condition):
    """Albayzin measures, multiclass Cllr and CAVG of one condition (closed: OOS ignored)."""
    import numpy as np

    from .metrics import albayzin_measures, cavg, multiclass_cllr

    m = albayzin_measures(llh, labels, open_set=condition == "open")
    active = m.prior > 0
    keep = active[labels]
    index = np.cumsum(active) - 1
    out = m.to_dict()
    out["multiclass_cllr"] = float(multiclass_cllr(llh, labels, m.prior))
    out["cavg"] = float(cavg(llh[keep][:, active], index[labels[keep]]))
    return out


def _evaluate_multiclass(system, key, conditions, missing, other):
    from .io import align_multiclass

    X, labels, _, classes = align_multiclass(key, system, missing=missing, other=other)
    if conditions is None:
        conditions = ["closed" if system.condition == "Closed" else "open"]
    return {
        "name": system.path, "task": system.task, "condition": system.condition,
        "n_segments": int(len(labels)), "classes": list(classes),
        "measures": {c: _multiclass_measures(X, labels, c) for c in conditions},
    }


def _multiclass_text(result) -> str:
    measures = result["measures"]
    conditions = list(measures)
    head = (f"{result['task']} task, {result['condition']} condition; "
            if result["task"] else "")
    lines = [f"Multiclass analysis: {result['name']}",
             f"  {result['n_segments']:,} segments; {head}{len(result['classes'])} classes: "
             f"{', '.join(result['classes'])}",
             "  " + " " * 22 + "".join(f"{c + ' set':>12}" for c in conditions)]

    def row(label, key, fmt, note):
        values = "".join(f"{format(measures[c][key], fmt):>12}" if key != "prior" else
                         f"{format(measures[c]['prior'][-1], fmt):>12}" for c in conditions)
        lines.append(f"  {label:<22}{values}   {note}")

    row(f"prior of {result['classes'][-1]}", "prior", ".4g", "(last class; Albayzin eq. 2)")
    row("C_mce", "c_mce", ".4f", "nats, multiclass cross-entropy (eq. 6)")
    row("C_def", "c_def", ".4f", "nats, the prior entropy: a system that says nothing (eq. 7)")
    row("C_min", "c_min", ".4f", "nats, after the best affine recalibration (eq. 12)")
    row("multiclass Cllr", "multiclass_cllr", ".4f", "bits, C_mce / log 2")
    row("F_act", "f_act", ".4f", "actual relative confusion (eq. 10), the primary criterion")
    row("F_dis", "f_dis", ".4f", "discrimination: F after recalibration (eq. 13)")
    row("F_cal", "f_cal", ".4f", "calibration loss, F_act = (1 + F_cal) F_dis (eqs. 14-15)")
    row("recalibration scale", "alpha", ".4g", "alpha of the best alpha * l + beta (eq. 11)")
    lines.append(f"  {'Cavg':<22}" + "".join(f"{100 * measures[c]['cavg']:>11.2f}%"
                                               for c in conditions)
                 + "   NIST CAVG, P_target 0.5, over the classes of the condition")
    return "\n".join(lines)


def _cmd_evaluate_multiclass(args) -> int:
    from .io import read_multiclass_key

    systems = _read_multiclass(args.scores)
    key = read_multiclass_key(args.key)
    results = [_evaluate_multiclass(s, key, args.condition, args.missing, args.other)
               for s in systems]
    if args.json:
        _print_json(results)
        return 0
    for result in results:
        print(_multiclass_text(result))
        print()
    return 0


# ---------------------------------------------------------------------------------------------
# apply


def _apply_model(model, inputs, output, *, align=False, missing="error", condition=None,
                 chunk_size=1 << 16):
    """Stream ``inputs`` through ``model.transform`` into ``output``; returns the trial count."""
    from .io import apply_to_files, iter_score_chunks, multiclass_format

    n_inputs = getattr(_first_step(model), "n_features_in_", None)
    if _is_multiclass(model):
        kind = multiclass_format(inputs[0])
        head = iter_score_chunks(inputs[:1], kind=kind, chunk_size=1, threads=0)
        n_classes = next(head).X.shape[1]
        head.close()
        n_out = getattr(_final_step(model), "n_classes_", None)
        if n_inputs != len(inputs) * n_classes or n_out != n_classes:
            raise ValueError(f"the model takes {n_inputs} log-likelihoods per segment and gives "
                             f"{n_out}; {len(inputs)} file(s) of {n_classes} classes give "
                             f"{len(inputs) * n_classes}")
    else:
        kind = "binary"
        if n_inputs != len(inputs):
            raise ValueError(f"the model fuses {n_inputs} system(s), {len(inputs)} score file(s) "
                             f"given")
    return apply_to_files(model.transform, inputs, output, kind=kind, chunk_size=chunk_size,
                          on_mismatch="align" if align else "error", missing=missing,
                          condition=condition)


def _cmd_apply(args) -> int:
    from .persistence import load

    model = load(args.model, key=_signing_key(args))
    with _Warnings():
        n = _apply_model(model, args.scores, args.output, align=args.align, missing=args.missing,
                         condition=args.condition, chunk_size=args.chunk_size)
    print(f"{args.output}: {n:,} {'segments' if _is_multiclass(model) else 'trials'}",
          file=_summary_stream(args.output))
    return 0


# ---------------------------------------------------------------------------------------------
# sws


def _cmd_sws(args) -> int:
    from .core.priors import bayes_threshold
    from .std import STD2006, SWS2013, OperatingPoint, read_task, term_detection_report

    if args.cost is not None:
        op = OperatingPoint(*args.cost, name="given")
    else:
        op = {"sws2013": SWS2013, "std2006": STD2006, "sws2012": "sws2012"}[args.operating_point]
    audio = args.audio
    if not pathlib.Path(audio).exists():
        try:
            audio = float(audio)
        except ValueError:
            raise ValueError(f"{args.audio}: no such file (give an ECF file, an audio table, or "
                             f"T_audio in seconds)") from None
    task = read_task(args.system, args.reference, audio, args.queries, n_tps=args.n_tps)
    threshold = args.threshold
    if args.bayes_threshold:
        if isinstance(op, str):
            raise ValueError("--bayes-threshold needs a fixed operating point, not sws2012")
        threshold = bayes_threshold(op.p_target, op.c_miss, op.c_fa)
    report = term_detection_report(task, tolerance=args.tolerance, operating_point=op,
                                   decision_threshold=threshold)
    if args.json:
        _print_json(report.to_dict(per_query=args.per_query))
    else:
        print(report.to_text(per_query=args.per_query))
    return 0


# ---------------------------------------------------------------------------------------------
# demo


def _default_samples() -> pathlib.Path:
    """``data_samples/`` of the current directory (a checkout), else next to the sources."""
    here = pathlib.Path.cwd() / "data_samples"
    if here.is_dir():
        return here
    return pathlib.Path(__file__).resolve().parent.parent / "data_samples"


def _summary_table(reports, p_target) -> str:
    width = max(len(_name(r.name)) for r in reports) + 2
    lines = [f"Summary (eval set; DCF at P_target = {p_target:g})",
             f"  {'system':<{width}}{'Cllr':>8}{'minCllr':>9}{'EER %':>8}{'actDCF':>8}"
             f"{'minDCF':>8}"]
    for r in reports:
        op = r.operating_points[0]
        lines.append(f"  {_name(r.name):<{width}}{r.cllr:8.4f}{r.min_cllr:9.4f}"
                     f"{100 * r.eer:8.2f}{op.act_dcf:8.4f}{op.min_dcf:8.4f}")
    return "\n".join(lines)


def _demo_plots(systems, folder, p_target):
    """Write the report figures when matplotlib is installed; say so when it is not."""
    try:
        write_report = _report_writer()
    except ValueError as exc:
        print(f"plots: not written: {exc}")
        return
    page = write_report(systems, folder, operating_points=[p_target],
                        title="focal demo: speaker-detection fusion")
    print(f"plots: {page} (DET, normalized Bayes error, APE, ECE and Tippett figures)")


def _cmd_demo(args) -> int:
    folder = pathlib.Path(args.data or _default_samples()) / "speaker_detection"
    if not folder.is_dir():
        raise ValueError(f"{folder}: sample data not found (run from a focal checkout, or pass "
                         f"--data)")
    dev = sorted(folder.glob("dev_sys*.scores"))
    evals = sorted(folder.glob("eval_sys*.scores"))
    if not dev or len(dev) != len(evals):
        raise ValueError(f"{folder}: expected dev_sys*.scores and eval_sys*.scores files, one "
                         f"of each per system")
    out = pathlib.Path(args.out) if args.out else pathlib.Path(
        tempfile.mkdtemp(prefix="focal-demo-"))
    out.mkdir(parents=True, exist_ok=True)
    folder, out = pathlib.Path(_shown(folder)), pathlib.Path(_shown(out))
    dev = [folder / f.name for f in dev]
    evals = [folder / f.name for f in evals]
    p = args.p_target
    model_path, fused_path = out / "fuser.json", out / "eval_fused.scores"
    print(f"focal {__version__} demo: fusion and calibration of {len(dev)} speaker-detection "
          f"systems\n  data:    {folder}\n  outputs: {out}\n\nThe same with the command line:\n"
          f"  focal train --scores {' '.join(str(p_) for p_ in dev)} --key {folder / 'dev.key'}"
          f" --p-target {p:g} -o {model_path}\n"
          f"  focal apply {model_path} {' '.join(str(p_) for p_ in evals)} --align "
          f"-o {fused_path}\n"
          f"  focal evaluate {' '.join(str(p_) for p_ in evals)} {fused_path} --key "
          f"{folder / 'eval.key'} --p-target {p:g}\n")

    # 1. train a fusion on the dev set and save it
    X, y, _, _ = _read_trials(dev, folder / "dev.key", "error")
    with _Warnings():
        model = _train_binary(X, y, p, pav=False, pseudo_count=1.0)
    print(f"1. trained on {len(y):,} dev trials at p_target = {p:g}:\n   "
          f"{_describe_fusion(model, [_name(f) for f in dev])}")
    _save(model, model_path)

    # 2. apply it to the eval set (the files list the trials in different orders: --align)
    from .persistence import load

    n = _apply_model(load(model_path), [str(f) for f in evals], fused_path, align=True)
    print(f"\n2. applied to {n:,} eval trials: {fused_path}\n")

    # 3. evaluate every system and the fusion on the eval set
    print("3. calibration analysis of the eval set (raw scores read as LLRs, and the fusion)\n")
    systems = _binary_systems([str(f) for f in evals] + [str(fused_path)],
                              folder / "eval.key", "error")
    reports = _reports(systems, [p])
    for report in reports:
        print(report)
        print()
    print(_summary_table(reports, p))
    print()
    _demo_plots(_short_names(systems), out / "plots", p)
    return 0


# ---------------------------------------------------------------------------------------------
# the parser


class _Formatter(argparse.RawDescriptionHelpFormatter):
    pass


def _add_missing(parser, what="trials"):
    parser.add_argument("--missing", choices=["error", "drop"], default="error",
                        help=f"{what} missing from a score file or the key: an error (default), "
                             f"or dropped")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="focal", formatter_class=_Formatter,
        description="Fusion and calibration of recognizer scores, and the measures that judge "
                    "them.\n\nScore files are BOSARIS-style lines 'model test score'; keys "
                    "'model test target|nontarget'.\nMulticlass files are Albayzin 2012 system "
                    "outputs or 'segment score...' with a header;\nkeys 'segment language'. "
                    "Exit status: 1 on bad input, 2 on usage errors.",
    )
    parser.add_argument("--version", action="version", version=f"focal {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    tr = sub.add_parser(
        "train", formatter_class=_Formatter, help="train a binary fusion on dev score files",
        description="Train a LogisticFusion (prior-weighted logistic regression, thesis 8.3.1) "
                    "of one or several systems' dev scores against a key, optionally followed by "
                    "PAV calibration, and save it as a JSON model file (focal.save).",
        epilog="example:\n  focal train --scores dev_sys1.scores dev_sys2.scores --key dev.key "
               "--p-target 0.01 -o fuser.json")
    tr.add_argument("--scores", nargs="+", required=True, metavar="FILE",
                    help="one score file per system: lines 'model test score'")
    tr.add_argument("--key", required=True, metavar="FILE",
                    help="key file: lines 'model test target|nontarget' (also tar/non, 1/0)")
    tr.add_argument("--p-target", type=_probability, default=0.5, metavar="P",
                    help="effective target prior at which the fusion is trained (Cllr at P is "
                         "minimized): the operating point of the application (default 0.5)")
    tr.add_argument("--pav", action="store_true",
                    help="follow the fusion with a PAVCalibrator (non-parametric, monotone)")
    tr.add_argument("--pseudo-count", type=_non_negative, default=1.0, metavar="A",
                    help="with --pav: virtual trials bounding the extreme LLRs (default 1; 0 = "
                         "unbounded, +/-inf possible)")
    _add_missing(tr)
    tr.add_argument("-o", "--output", required=True, metavar="MODEL",
                    help="model file to write (JSON)")
    tr.set_defaults(func=_cmd_train)

    ap = sub.add_parser(
        "apply", formatter_class=_Formatter, help="apply a saved model to score files",
        description="Apply a model saved by 'focal train' or 'focal train-multiclass' (or "
                    "focal.save) to eval score files, one per system in the training order, and "
                    "write the calibrated LLRs (binary: 'model test llr') or log-likelihoods "
                    "(multiclass: the input format) with full float precision. The files are "
                    "streamed a chunk at a time, in bounded memory: they must list the same "
                    "trials in the same order (a repeated trial is scored twice: finding "
                    "repeats would take memory in proportion to the files), unless --align is "
                    "given, which reads them whole, aligns them on the trial ids and refuses "
                    "repeated trials.",
        epilog="example:\n  focal apply fuser.json eval_sys1.scores eval_sys2.scores "
               "-o eval_fused.scores")
    ap.add_argument("model", help="model file (JSON, from focal train / focal.save)")
    ap.add_argument("scores", nargs="+", metavar="SCORES",
                    help="one score file per system, in the order the model was trained on")
    ap.add_argument("-o", "--output", required=True, metavar="FILE", help="output score file")
    ap.add_argument("--align", action="store_true",
                    help="the files list the trials in different orders: read them whole and "
                         "align them on the trial ids (memory grows with the files)")
    _add_missing(ap, "with --align, trials")
    ap.add_argument("--condition", choices=["Closed", "Open"],
                    help="Albayzin output: the condition written (default: the first input's)")
    ap.add_argument("--chunk-size", type=_positive_int, default=1 << 16, metavar="N",
                    help="trials per chunk (default 65536)")
    ap.set_defaults(func=_cmd_apply)

    ev = sub.add_parser(
        "evaluate", formatter_class=_Formatter, help="calibration analysis of binary score files",
        description="Print Cllr, minCllr, calibration loss, ROCCH-EER, PRBEP and actual / "
                    "minimum normalized DCF of each score file (read as natural-log LLRs) "
                    "against a key.",
        epilog="example:\n  focal evaluate eval_fused.scores --key eval.key --p-target 0.01 "
               "0.001")
    ev.add_argument("scores", nargs="+", help="score files: lines 'model test score' (LLRs)")
    ev.add_argument("--key", required=True, help="key file: lines 'model test target|nontarget'")
    ev.add_argument("--p-target", nargs="+", type=_probability, metavar="P",
                    help=f"effective target priors of the DCF operating points (default "
                         f"{_DEFAULT_P_TARGET})")
    _add_missing(ev)
    ev.add_argument("--json", action="store_true", help="print the numbers as JSON")
    ev.add_argument("--plot", metavar="DIR",
                    help="also write DET, normalized Bayes error, APE, ECE and Tippett figures "
                         "and an HTML page (index.html) into DIR (needs matplotlib)")
    ev.add_argument("--plot-size", type=_plot_size, default=(800, 600), metavar="WxH",
                    help="size of each figure in pixels (default 800x600)")
    ev.add_argument("--plot-format", nargs="+", choices=["png", "pdf", "svg"], default=["png"],
                    help="figure formats besides PNG, which is always written")
    ev.add_argument("--dask", nargs="?", const="local", metavar="SCHEDULER_ADDRESS",
                    help="evaluate on a dask cluster (pip install 'focal-calibration[dask]'): "
                         "a local one, or the scheduler at SCHEDULER_ADDRESS; score files and "
                         "--key may then be glob patterns, each file one partition")
    ev.set_defaults(func=_cmd_evaluate)

    tm = sub.add_parser(
        "train-multiclass", formatter_class=_Formatter,
        help="train a multiclass fusion on dev log-likelihood files",
        description="Train a MulticlassFusion (multiclass logistic regression, thesis 8.3; "
                    "Albayzin eq. 11) of one or several systems' log-likelihood files (Albayzin "
                    "2012 format or 'segment score...' with a header) against a 'segment "
                    "language' key, and save it. The prior defaults to the Albayzin evaluation "
                    "prior of the files' condition (closed set: the out-of-set class and its "
                    "segments are ignored) or flat.",
        epilog="example:\n  focal train-multiclass --scores dev_sys1_open.txt dev_sys2_open.txt "
               "--key dev.key -o lid.json")
    tm.add_argument("--scores", nargs="+", required=True, metavar="FILE",
                    help="one log-likelihood file per system, same task and condition")
    tm.add_argument("--key", required=True, metavar="FILE", help="key: lines 'segment language'")
    tm.add_argument("--mode", choices=["scalar", "calibration", "full"], default="scalar",
                    help="scalar: a weight per system and an offset vector; calibration: one "
                         "system, alpha l + beta; full: a matrix per system (default scalar)")
    tm.add_argument("--prior", nargs="+", type=_non_negative, metavar="P",
                    help="training prior, one value per class in the files' order (zeros ignore "
                         "a class)")
    tm.add_argument("--other", choices=["error", "oos"], default="error",
                    help="key languages outside the classes: an error, or out-of-set")
    _add_missing(tm, "segments")
    tm.add_argument("-o", "--output", required=True, metavar="MODEL",
                    help="model file to write (JSON)")
    tm.set_defaults(func=_cmd_train_multiclass)

    em = sub.add_parser(
        "evaluate-multiclass", formatter_class=_Formatter,
        help="Albayzin / LRE measures of multiclass log-likelihood files",
        description="Print C_mce, C_def, C_min (nats), multiclass Cllr (bits), the Albayzin "
                    "2012 relative confusions F_act, F_dis, F_cal and NIST CAVG of each "
                    "log-likelihood file against a 'segment language' key, in the closed-set "
                    "condition (out-of-set segments and column ignored) and/or the open-set one "
                    "(flat prior over all classes).",
        epilog="example:\n  focal evaluate-multiclass eval_sys1_open.txt --key eval.key "
               "--condition closed open")
    em.add_argument("scores", nargs="+", help="log-likelihood files (Albayzin or generic)")
    em.add_argument("--key", required=True, help="key: lines 'segment language'")
    em.add_argument("--condition", nargs="+", choices=_CONDITIONS,
                    help="evaluation condition(s) (default: the file's; open for the generic "
                         "format)")
    em.add_argument("--other", choices=["error", "oos"], default="error",
                    help="key languages outside the classes: an error, or out-of-set")
    _add_missing(em, "segments")
    em.add_argument("--json", action="store_true", help="print the numbers as JSON")
    em.set_defaults(func=_cmd_evaluate_multiclass)

    sw = sub.add_parser(
        "sws", formatter_class=_Formatter, help="spoken term detection scoring (ATWV, C_nxe)",
        description="Score a spoken term detection system as MediaEval SWS 2013 does: "
                    "alignment, ATWV, MTWV, C_nxe and C_nxe^min (focal.std). Files in the "
                    "NIST STD 2006 formats (STDLIST, RTTM, ECF, TLIST) or plain tables.",
        epilog="example:\n  focal sws sys.stdlist.xml ref.rttm audio.ecf.xml queries.tlist.xml")
    sw.add_argument("system", help="STDLIST / KWSLIST XML, or a table 'query file tbeg dur "
                                   "score decision'")
    sw.add_argument("reference", help="RTTM, or a table 'query file tbeg dur'")
    sw.add_argument("audio", help="ECF XML, a table 'file tbeg dur', or T_audio in seconds")
    sw.add_argument("queries", nargs="?", help="TLIST XML or a table 'query text' (optional)")
    sw.add_argument("--operating-point", choices=["sws2013", "std2006", "sws2012"],
                    default="sws2013",
                    help="sws2013: P_target 0.00015, C_miss 100, C_fa 1 (default); std2006: "
                         "1e-4, 10, 1; sws2012: P_target = N_true / (n_tps T_audio)")
    sw.add_argument("--cost", nargs=3, type=_positive, metavar=("P_TARGET", "C_MISS", "C_FA"),
                    help="another operating point")
    sw.add_argument("--tolerance", type=_non_negative, default=0.5, metavar="SECONDS",
                    help="alignment tolerance (default 0.5 s)")
    sw.add_argument("--n-tps", type=_positive, default=1.0, metavar="N",
                    help="trials per second of audio (default 1)")
    thr = sw.add_mutually_exclusive_group()
    thr.add_argument("--threshold", type=_finite, metavar="T",
                     help="decide YES iff score >= T for ATWV (instead of the system's decisions)")
    thr.add_argument("--bayes-threshold", action="store_true",
                     help="decide at the Bayes threshold of the operating point (scores as LLRs)")
    sw.add_argument("--per-query", action="store_true", help="add the per-query table")
    sw.add_argument("--json", action="store_true", help="print the numbers as JSON")
    sw.set_defaults(func=_cmd_sws)

    demo = sub.add_parser(
        "demo", formatter_class=_Formatter, help="run the main job on the sample data",
        description="Train a fusion on the sample dev speaker-detection set (data_samples/), "
                    "save it, apply it to the eval set and print the calibration analysis of "
                    "each system and of the fusion; with matplotlib, also write the figures.")
    demo.add_argument("--data", default=None,
                      help="folder holding the sample sets (default: ./data_samples)")
    demo.add_argument("--out", default=None, metavar="DIR",
                      help="folder for the model, the fused scores and the plots (default: a new "
                           "temporary folder, kept)")
    demo.add_argument("--p-target", type=_probability, default=_DEFAULT_P_TARGET, metavar="P",
                      help=f"operating point (default {_DEFAULT_P_TARGET})")
    demo.set_defaults(func=_cmd_demo)
    for command in (tr, tm, ap):
        command.add_argument("--signing-key", metavar="FILE",
                             help="file holding a secret key: sign the saved model (train) or "
                                  "require its signature (apply) with HMAC-SHA256")
    return parser


def _signing_key(args):
    """The secret in ``--signing-key FILE`` (its bytes, without a final line break), or None."""
    path = getattr(args, "signing_key", None)
    if path is None:
        return None
    from ._files import open_input

    with open_input(path) as handle:
        key = handle.read(1 << 16).rstrip(b"\r\n")
    if not key:
        raise ValueError(f"{path}: the signing key file is empty")
    return key


# the library's error messages name its keyword arguments; on the command line, the options
_OPTIONS = {"on_mismatch='align'": "--align", "missing='drop'": "--missing drop",
            "other='oos'": "--other oos"}


def _one_line(exc) -> str:
    message = " ".join(str(exc).split())
    for keyword, option in _OPTIONS.items():
        message = message.replace(keyword, option)
    return message


def _check_output(args) -> None:
    """Refuse, before any work, an output that is a folder or one of the command's inputs."""
    from ._files import check_output

    if getattr(args, "output", None):
        inputs = [getattr(args, n, None) for n in ("model", "key", "signing_key")]
        check_output(args.output, inputs + list(getattr(args, "scores", None) or ()))


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        _check_output(args)
        return args.func(args)
    except ValueError as exc:
        print(f"focal: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except OSError as exc:  # e.g. an output folder that cannot be created
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"focal: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("focal: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
