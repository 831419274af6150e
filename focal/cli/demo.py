"""``focal demo``: the main job on the sample data, step by step, as a printed walkthrough.

Trains a fusion of the sample dev speaker-detection systems (``data_samples/``), saves it,
applies it to the eval set and prints the calibration analysis of each system and of the
fusion, with the equivalent command lines; with matplotlib, also writes the figures.
"""

from __future__ import annotations

import pathlib
import tempfile

from .._progress import step
from .._version import __version__

__all__ = ["run_demo"]


def _name(path) -> str:
    return pathlib.Path(path).name


def _shown(path) -> str:
    """``path`` relative to the current directory when it is inside it (shorter to read)."""
    path = pathlib.Path(path)
    try:
        return str(path.resolve().relative_to(pathlib.Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _default_samples() -> pathlib.Path:
    """The speaker-detection sample set that ships with this focal: ``data_samples/`` of the
    checkout these sources are in, else the copy installed with the package
    (``focal/cli/samples``, package data of the wheel).
    """
    checkout = pathlib.Path(__file__).resolve().parents[2] / "data_samples" / "speaker_detection"
    if checkout.is_dir():
        return checkout
    return pathlib.Path(__file__).resolve().parent / "samples"


def run_demo(data=None, out=None, p_target=0.01, reports=None, progress=False) -> int:
    """Train, save, apply and evaluate a fusion of the sample speaker-detection systems,
    printing each step and the command lines that do the same; returns 0.

    ``reports``: a list that receives the eval-set calibration reports (e.g. for JSON);
    ``progress``: show each long step on stderr (tqdm).

    ``data``: the folder of the sample sets, holding ``speaker_detection/`` (default: the sample
    set that ships with focal, see :func:`_default_samples`); ``out``: the folder for the model,
    the fused scores and the plots (default: a new temporary folder, kept).
    """
    from ..models.persistence import load, save
    from ..workflows import apply_model, evaluate_binary, train_fusion
    from ..workflows.evaluate import figure_names, summary_table
    from ..workflows.train import fusion_formula

    folder = pathlib.Path(data) / "speaker_detection" if data else _default_samples()
    if not folder.is_dir():
        raise ValueError(f"{folder}: sample data not found (--data names the folder holding it)")
    dev = sorted(folder.glob("dev_sys*.scores"))
    evals = sorted(folder.glob("eval_sys*.scores"))
    if not dev or len(dev) != len(evals):
        raise ValueError(
            f"{folder}: expected dev_sys*.scores and eval_sys*.scores files, one of each per system"
        )
    out = pathlib.Path(out) if out else pathlib.Path(tempfile.mkdtemp(prefix="focal-demo-"))
    out.mkdir(parents=True, exist_ok=True)
    folder, out = pathlib.Path(_shown(folder)), pathlib.Path(_shown(out))
    dev = [folder / f.name for f in dev]
    evals = [folder / f.name for f in evals]
    p = p_target
    model_path, fused_path = out / "fuser.json", out / "eval_fused.scores"
    print(
        f"focal {__version__} demo: fusion and calibration of {len(dev)} speaker-detection "
        f"systems\n  data:    {folder}\n  outputs: {out}\n\nThe same with the command line:\n"
        f"  focal train --scores {' '.join(map(str, dev))} --key {folder / 'dev.key'}"
        f" --p-target {p:g} -o {model_path}\n"
        f"  focal apply {model_path} {' '.join(map(str, evals))} --align -o {fused_path}\n"
        f"  focal evaluate {' '.join(map(str, evals))} {fused_path} --key "
        f"{folder / 'eval.key'} --p-target {p:g}\n"
    )
    fit = train_fusion(dev, folder / "dev.key", p_target=p, progress=progress)
    model = fit.model
    print(
        f"1. trained on {fit.n_trials:,} dev trials at p_target = {p:g}:\n   "
        f"{fusion_formula(model, [_name(f) for f in dev])}"
    )
    with step(f"write {model_path}"):
        save(model, model_path)
    print(f"saved to {model_path}")
    # the files list the trials in different orders: align
    with step(f"apply {model_path}", progress):
        n = apply_model(load(model_path), evals, fused_path, align=True)
    print(f"\n2. applied to {n:,} eval trials: {fused_path}\n")
    print("3. calibration analysis of the eval set (raw scores read as LLRs, and the fusion)\n")
    evaluation = evaluate_binary(
        [str(f) for f in evals] + [str(fused_path)], folder / "eval.key", [p], progress=progress
    )
    evaluated = evaluation.reports
    if reports is not None:
        reports.extend(evaluated)
    for report in evaluated:
        print(report)
        print()
    print(summary_table(evaluated, f"Summary (eval set; DCF at P_target = {p:g})"))
    print()
    try:
        from ..plots import write_report
    except ImportError as exc:
        print(f"plots: not written: {exc}")
        return 0
    with step(f"plots in {out / 'plots'}", progress):
        page = write_report(
            figure_names(evaluation.systems),
            out / "plots",
            operating_points=[p],
            title="focal demo: speaker-detection fusion",
        )
    print(f"plots: {page} (DET, normalized Bayes error, APE, ECE and Tippett figures)")
    return 0
