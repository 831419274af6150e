"""Each ``focal`` command is one call of one library workflow with the options given, and
``focal evaluate --json`` prints exactly the reports of :func:`focal.workflows.evaluate_binary`.
"""

import json
import math

import pytest

import focal.cli.demo
import focal.workflows
from focal.core.priors import effective_prior
from focal.workflows import Evaluation, evaluate_binary
from tests._support.cli import DEV, EVAL, LID, SPK, STD, run_main


class _Calls:
    """A stand-in workflow: records its calls and returns ``result``."""

    def __init__(self, result):
        self.result, self.calls = result, []

    def __call__(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        return self.result


class _Fit:
    model = None

    def __str__(self):
        return "a fit"

    def to_dict(self):
        return {}


class _STDReport:
    def to_text(self, per_query=False):
        return "an STD report"


class _Normalizer:
    enrol_ids_ = test_ids_ = None


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    """A binary fusion of the three sample systems, saved."""
    path = tmp_path_factory.mktemp("model") / "fuser.json"
    focal.workflows.train_fusion(DEV, SPK / "dev.key", output=path)
    return path


def _commands(tmp, model):
    """(argv, where the workflow is, its name, what it returns, (args, kwargs) expected)."""
    out = str(tmp / "out.txt")
    key, dev = str(SPK / "dev.key"), [str(p) for p in DEV]
    evals = [str(p) for p in EVAL]
    lid = [str(LID / "dev_sys1_open.txt"), str(LID / "dev_sys2_open.txt")]
    std = [str(STD / f"sws_sample.{x}") for x in ("stdlist.xml", "rttm", "ecf.xml")]
    return [
        (
            ["train", "--scores", *dev, "--key", key, "--cost", "0.01:1:10", "--pav", "-o", out],
            focal.workflows,
            "train_fusion",
            _Fit(),
            (
                (dev, key),
                dict(
                    p_target=effective_prior(0.01, 1.0, 10.0),
                    pav=True,
                    pseudo_count=1.0,
                    elub=False,
                    missing="error",
                    pos_label=None,
                    format=None,
                    key_format=None,
                    scores_are="llr",
                    output=out,
                    signing_key=None,
                    progress=False,
                    log10=False,
                ),
            ),
        ),
        (
            ["apply", str(model), *evals, "-o", out, "--align", "--systems", "a", "b", "c"],
            focal.workflows,
            "apply_model",
            7,
            (
                (evals, out),
                dict(
                    align=True,
                    missing="error",
                    condition=None,
                    chunk_size=1 << 16,
                    format=None,
                    output_format=None,
                    systems=["a", "b", "c"],
                    scores_are="llr",
                    log10=False,
                ),
            ),
        ),
        (
            ["evaluate", *evals, "--key", key, "--p-target", "0.01", "--cost", "0.1:1:10"]
            + ["--ci", "0.9", "--cluster", "model", "--c-primary", "cost", "--missing", "drop"]
            + ["--scores-are", "distance", "--progress", "--conventional-eer"],
            focal.workflows,
            "evaluate_binary",
            Evaluation([]),
            (
                (),
                dict(
                    score_paths=evals,
                    key_path=key,
                    operating_points=[0.01, (0.1, 1.0, 10.0)],
                    missing="drop",
                    pos_label=None,
                    format=None,
                    key_format=None,
                    scores_are="distance",
                    conventional_eer=True,
                    c_primary=[(0.1, 1.0, 10.0)],
                    confidence=0.9,
                    n_bootstrap=None,
                    cluster="model",
                    random_state=0,
                    n_jobs=None,
                    progress=True,
                    plot=None,
                    plot_size=(800, 600),
                    plot_formats=["png"],
                    dask=None,
                    partition=None,
                    partition_columns=None,
                    log10=False,
                ),
            ),
        ),
        (
            ["train-multiclass", "--scores", *lid, "--key", str(LID / "dev.key"), "-o", out]
            + ["--mode", "full", "--prior", "1", "1", "1", "1", "1", "1", "0"],
            focal.workflows,
            "train_multiclass_fusion",
            _Fit(),
            (
                (lid, str(LID / "dev.key")),
                dict(
                    mode="full",
                    prior=[1.0] * 6 + [0.0],
                    missing="error",
                    other="error",
                    output=out,
                    signing_key=None,
                    progress=False,
                ),
            ),
        ),
        (
            ["evaluate-multiclass", *lid, "--key", str(LID / "dev.key"), "--condition", "open"]
            + ["--other", "oos"],
            focal.workflows,
            "evaluate_multiclass",
            Evaluation([]),
            (
                (lid, str(LID / "dev.key"), ["open"]),
                dict(
                    missing="error",
                    other="oos",
                    progress=False,
                    plot=None,
                    plot_size=(800, 600),
                    plot_formats=["png"],
                ),
            ),
        ),
        (
            ["sws", *std, "--cost", "0.001:10:1", "--tolerance", "0.3", "--bayes-threshold"],
            focal.workflows,
            "evaluate_term_detection",
            Evaluation([_STDReport()]),
            (
                (*std, None),
                dict(
                    operating_point=(0.001, 10.0, 1.0),
                    tolerance=0.3,
                    n_tps=1.0,
                    threshold="bayes",
                    prefer="score",
                    cnxe_queries="evaluated",
                    progress=False,
                    plot=None,
                    plot_size=(800, 600),
                    plot_formats=["png"],
                ),
            ),
        ),
        (
            ["normalize", evals[0], "-o", out, "--method", "z-norm", "--enrol-cohort", dev[0]],
            focal.workflows,
            "normalize_files",
            _Normalizer(),
            (
                (evals[0], out),
                dict(
                    method="z-norm",
                    top_n=None,
                    enrol_cohort=dev[0],
                    test_cohort=None,
                    progress=False,
                ),
            ),
        ),
        (
            ["demo", "--out", str(tmp), "--p-target", "0.05"],
            focal.cli.demo,
            "run_demo",
            0,
            ((None, str(tmp), 0.05), dict(progress=False)),
        ),
    ]


def test_each_command_is_one_call_of_its_workflow(capsys, monkeypatch, tmp_path, model_file):
    commands = _commands(tmp_path, model_file)
    assert {argv[0] for argv, *_ in commands} == {
        "train",
        "apply",
        "evaluate",
        "train-multiclass",
        "evaluate-multiclass",
        "sws",
        "normalize",
        "demo",
    }
    for argv, module, name, result, (args, kwargs) in commands:
        stand_in = _Calls(result)
        with monkeypatch.context() as patch:
            patch.setattr(module, name, stand_in)
            status, _, err = run_main(capsys, *argv)
        assert status == 0, (argv[0], err)
        assert len(stand_in.calls) == 1, argv[0]
        got_args, got_kwargs = stand_in.calls[0]
        if name == "apply_model":
            got_args = got_args[1:]  # the model, loaded from the file given
        assert (got_args, got_kwargs) == (args, kwargs), argv[0]


def _as_printed(value):
    """A report dictionary as --json prints it: non-finite floats as the strings of JSON."""
    if isinstance(value, dict):
        return {k: _as_printed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_printed(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def test_evaluate_json_is_the_workflows_reports(capsys):
    """Intervals (model clusters), C_primary and the conventional EER: the same numbers."""
    options = dict(confidence=0.95, n_bootstrap=200, cluster="model", random_state=4)
    options.update(c_primary="sre16", conventional_eer=True, operating_points=[0.01, 0.001])
    status, out, err = run_main(
        capsys,
        "evaluate",
        *EVAL,
        "--key",
        SPK / "eval.key",
        "--p-target",
        "0.01",
        "0.001",
        "--ci",
        "0.95",
        "--bootstrap",
        "200",
        "--cluster",
        "model",
        "--seed",
        "4",
        "--c-primary",
        "sre16",
        "--conventional-eer",
        "--json",
    )
    assert status == 0, err
    evaluation = evaluate_binary([str(p) for p in EVAL], SPK / "eval.key", **options)
    expected = _as_printed(evaluation.to_dict())
    printed = json.loads(out)
    assert printed == expected
    assert all(r["intervals"] and r["c_primary"]["name"] == "sre16" for r in printed)
    assert all("eer_conventional" in r for r in printed)
