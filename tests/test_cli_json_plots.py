"""``--json`` on every command (one JSON document on stdout, the numbers of the library) and
``--plot DIR`` pages of ``evaluate-multiclass`` and ``sws``.
"""

import json

import numpy as np
import pytest

from focal.cli.parser import build_parser
from tests._support.cli import LID, SPK, STD, run_main

SWS_FILES = [
    STD / n
    for n in (
        "sws_sample.stdlist.xml",
        "sws_sample.rttm",
        "sws_sample.ecf.xml",
        "sws_sample.tlist.xml",
    )
]


def run_json(capsys, *args):
    """The one JSON document a command prints on stdout (json.loads fails on anything else)."""
    status, out, err = run_main(capsys, *args, "--json")
    assert status == 0, err
    return json.loads(out), err


def test_every_command_has_json():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name, parser in sub.choices.items():
        options = {o for a in parser._actions for o in a.option_strings}
        assert "--json" in options, name


def test_train_and_apply_json(capsys, tmp_path):
    from focal import load

    dev = [SPK / f"dev_sys{k}.scores" for k in (1, 2)]
    d, err = run_json(
        capsys,
        "train",
        "--scores",
        *dev,
        "--key",
        SPK / "dev.key",
        "--p-target",
        "0.05",
        "-o",
        tmp_path / "m.json",
    )
    model = load(tmp_path / "m.json")
    assert d["model"] == str(tmp_path / "m.json") and "saved to" in err
    assert d["systems"] == ["dev_sys1.scores", "dev_sys2.scores"]
    assert d["coef"] == model.coef_.tolist() and d["intercept"] == model.intercept_
    assert d["p_target"] == 0.05 and d["pav"] is False
    assert d["n_targets"] + d["n_nontargets"] == len((SPK / "dev.key").read_text().splitlines())
    assert d["training_cllr"] == model.objective_
    pav, _ = run_json(
        capsys,
        "train",
        "--scores",
        *dev,
        "--key",
        SPK / "dev.key",
        "--pav",
        "-o",
        tmp_path / "p.json",
    )
    assert pav["pav"] is True and pav["pav_blocks"] == load(tmp_path / "p.json")[-1].llr_.size

    evals = [SPK / f"eval_sys{k}.scores" for k in (1, 2)]
    a, _ = run_json(
        capsys, "apply", tmp_path / "m.json", *evals, "--align", "-o", tmp_path / "fused.scores"
    )
    n_lines = len((tmp_path / "fused.scores").read_text().splitlines())
    assert a == {"output": str(tmp_path / "fused.scores"), "n_trials": n_lines}


def test_train_multiclass_and_evaluate_multiclass_json(capsys, tmp_path):
    from focal import load

    d, _ = run_json(
        capsys,
        "train-multiclass",
        "--scores",
        LID / "dev_sys1_closed.txt",
        "--key",
        LID / "dev.key",
        "-o",
        tmp_path / "lid.json",
    )
    model = load(tmp_path / "lid.json")
    assert d["model"] == str(tmp_path / "lid.json") and d["mode"] == "scalar"
    assert d["classes"] == list(model.class_names)
    assert d["intercept"] == model.intercept_.tolist() and d["training_c_mce"] == model.loss_
    (r,), _ = run_json(
        capsys, "evaluate-multiclass", LID / "eval_sys1_closed.txt", "--key", LID / "eval.key"
    )
    assert {"name", "classes", "measures", "n_segments"} <= set(r)


def test_evaluate_sws_normalize_and_demo_json(capsys, tmp_path, monkeypatch):
    (r,), _ = run_json(capsys, "evaluate", SPK / "eval_sys1.scores", "--key", SPK / "eval.key")
    assert {"cllr", "min_cllr", "eer", "operating_points"} <= set(r)
    s, _ = run_json(capsys, "sws", *SWS_FILES)
    assert {"atwv", "mtwv"} <= {k.lower() for k in s}
    if pytest.importorskip("matplotlib"):  # the demo's figures are tested elsewhere: not here
        monkeypatch.setattr("focal.plots.write_report", lambda *a, **k: tmp_path / "page.html")
    reports, err = run_json(capsys, "demo", "--out", tmp_path / "demo", "-q")
    assert reports[-1]["name"].endswith("eval_fused.scores") and "1. trained" in err
    assert len(reports) == 4


def test_normalize_json(capsys, tmp_path):
    rng = np.random.default_rng(0)
    models, tests, cohort = ["m1", "m2"], ["t1", "t2"], ["c1", "c2", "c3"]
    (tmp_path / "s.scores").write_text(
        "".join(f"{m} {t} {rng.normal():.6f}\n" for m in models for t in tests)
    )
    (tmp_path / "e.scores").write_text(
        "".join(f"{m} {c} {rng.normal():.6f}\n" for m in models for c in cohort)
    )
    d, _ = run_json(
        capsys,
        "normalize",
        tmp_path / "s.scores",
        "--enrol-cohort",
        tmp_path / "e.scores",
        "--method",
        "z-norm",
        "-o",
        tmp_path / "n.scores",
    )
    assert d["method"] == "z-norm" and d["n_enrolment_models"] == 2


def test_evaluate_multiclass_plot_page(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    status, out, err = run_main(
        capsys,
        "evaluate-multiclass",
        LID / "eval_sys2_open.txt",
        "--key",
        LID / "eval.key",
        "--plot",
        tmp_path / "lid",
        "--plot-size",
        "400x300",
        "--json",
    )
    assert status == 0, err
    assert len(json.loads(out)) == 1  # the page's path went to stderr
    assert f"report: {tmp_path / 'lid' / 'index.html'}" in err
    page = (tmp_path / "lid" / "index.html").read_text()
    for stem in ("detection_ape_1", "pairwise_1"):
        assert (tmp_path / "lid" / f"{stem}.png").exists() and f"{stem}.png" in page
    assert "eval_sys2_open.txt" in page and "C_mce" in page


def test_sws_plot_page(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    status, out, err = run_main(capsys, "sws", *SWS_FILES, "--plot", tmp_path / "sws")
    assert status == 0, err
    assert f"report: {tmp_path / 'sws' / 'index.html'}" in out
    assert (tmp_path / "sws" / "std_det.png").exists()
    assert "ATWV" in (tmp_path / "sws" / "index.html").read_text()
