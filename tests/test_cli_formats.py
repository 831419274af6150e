"""``focal evaluate / train / apply`` on the files users have: NIST SRE, wespeaker, speechbrain
and VoxCeleb layouts, header lines, gzip and standard input give the numbers of the same trials
written as BOSARIS files.

Most commands run in-process through ``focal.cli.main``; reading standard input and writing
standard output run as a user runs them (subprocess).
"""

import gzip
import io
import json
import pathlib

import numpy as np
import pytest

from focal.cli import main
from tests._support.cli import run_focal, run_main

ROOT = pathlib.Path(__file__).resolve().parent.parent
N = 400
RNG = np.random.default_rng(3)
MODELS = [f"id1{i % 17:04d}" for i in range(N)]
TESTS = [f"id1{i % 23:04d}/v{i:03d}/{i:05d}.wav" for i in range(N)]
LABELS = RNG.random(N) < 0.3
SCORES = np.round(RNG.normal(size=N) + 2.5 * LABELS, 5)
ORDER = RNG.permutation(N)  # keys list the trials in another order


def _lines(fields, order=range(N)):
    return "".join(" ".join(f(i) for f in fields) + "\n" for i in order)


def model(i):
    return MODELS[i]


def segment(i):
    return TESTS[i]


def score(i):
    return repr(float(SCORES[i]))


def word(i):
    return "target" if LABELS[i] else "nontarget"


def bit(i):
    return "1" if LABELS[i] else "0"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("formats")
    out = {}

    def put(name, text):
        out[name] = d / name
        out[name].write_text(text)

    put("bosaris.scores", _lines([model, segment, score]))
    put("bosaris.key", _lines([model, segment, word], ORDER))
    put(
        "nist.tsv",
        "modelid\tsegmentid\tside\tLLR\n"
        + _lines([model, segment, lambda i: "a", score]).replace(" ", "\t"),
    )
    put(
        "nist.key",
        "modelid\tsegmentid\tside\ttargettype\n"
        + _lines([model, segment, lambda i: "a", word], ORDER).replace(" ", "\t"),
    )
    put("wespeaker.score", _lines([model, segment, score, word]))
    put("speechbrain.txt", _lines([model, segment, bit, score]))
    put("voxceleb.txt", _lines([bit, model, segment], ORDER))
    put("header.scores", "enrol test score\n" + _lines([model, segment, score]))
    out["scores.gz"] = d / "scores.gz"
    out["scores.gz"].write_bytes(gzip.compress(_lines([model, segment, score]).encode()))
    return out


@pytest.fixture
def reference(files, capsys):
    status, out, err = run_main(
        capsys, "evaluate", files["bosaris.scores"], "--key", files["bosaris.key"], "--json"
    )
    assert status == 0, err
    return _numbers(out)


def _numbers(stdout):
    report = json.loads(stdout)
    report = report[0] if isinstance(report, list) else report
    return {k: v for k, v in report.items() if k not in ("name", "system", "path")}


@pytest.mark.parametrize(
    "args",
    [
        ["nist.tsv", "--key", "nist.key", "--format", "nist-sre"],
        ["wespeaker.score", "--format", "wespeaker"],
        ["speechbrain.txt", "--format", "speechbrain"],
        ["bosaris.scores", "--key", "voxceleb.txt", "--key-format", "voxceleb"],
        ["bosaris.scores", "--key", "voxceleb.txt", "--key-columns", "label enrol test"],
        ["nist.tsv", "--key", "bosaris.key", "--columns", "model=modelid test=segmentid score=LLR"],
        ["header.scores", "--key", "bosaris.key"],
        ["scores.gz", "--key", "bosaris.key"],
    ],
    ids=[
        "nist-sre",
        "wespeaker",
        "speechbrain",
        "voxceleb-key",
        "key-columns",
        "columns-by-name",
        "header",
        "gzip",
    ],
)
def test_evaluate_formats_give_the_bosaris_numbers(files, reference, capsys, args):
    args = [files.get(a, a) for a in args]
    status, out, err = run_main(capsys, "evaluate", *args, "--json")
    assert status == 0, err
    assert _numbers(out) == reference


def test_evaluate_reads_the_key_from_stdin(files, reference, capsys, monkeypatch):
    stdin = io.TextIOWrapper(io.BytesIO(files["voxceleb.txt"].read_bytes()))
    monkeypatch.setattr("sys.stdin", stdin)
    status, out, err = run_main(
        capsys,
        "evaluate",
        files["bosaris.scores"],
        "--key",
        "-",
        "--key-format",
        "voxceleb",
        "--json",
    )
    assert status == 0, err
    assert _numbers(out) == reference


def test_bad_format_input_exits_1_naming_file_and_line(files, capsys):
    status, _, err = run_main(
        capsys, "evaluate", files["bosaris.scores"], "--key", files["voxceleb.txt"]
    )
    assert status == 1 and "voxceleb.txt:1:" in err
    with pytest.raises(SystemExit, match="2"):  # a usage error
        main(["evaluate", str(files["bosaris.scores"])])
    assert "required: --key" in capsys.readouterr().err
    status, _, err = run_main(
        capsys,
        "evaluate",
        files["bosaris.scores"],
        "--key",
        files["bosaris.key"],
        "--format",
        "kaldi",
        "--columns",
        "model test score",
    )
    assert status == 1 and "not both" in err
    status, _, err = run_main(capsys, "evaluate", "-", "--key", "-")
    assert status == 1 and "standard input ('-') can be read once" in err


def _fitted(path):
    fitted = json.loads(path.read_text())["model"]["fitted"]
    return fitted["coef_"], fitted["intercept_"]


def test_train_and_apply_with_formats_stdin_and_stdout(files, tmp_path, capsys):
    ref = tmp_path / "ref.json"
    status, _, err = run_main(
        capsys,
        "train",
        "--scores",
        files["bosaris.scores"],
        "--key",
        files["bosaris.key"],
        "-o",
        ref,
    )
    assert status == 0, err
    model = tmp_path / "sb.json"
    status, _, err = run_main(
        capsys,
        "train",
        "--scores",
        files["speechbrain.txt"],
        "--format",
        "speechbrain",
        "-o",
        model,
    )
    assert status == 0, err
    (coef, intercept), (ref_coef, ref_intercept) = _fitted(model), _fitted(ref)
    assert coef == pytest.approx(ref_coef, rel=1e-12)  # trials summed in another order
    assert intercept == pytest.approx(ref_intercept, rel=1e-12)
    expected = tmp_path / "ref.out"
    status, _, err = run_main(capsys, "apply", model, files["bosaris.scores"], "-o", expected)
    assert status == 0, err
    out = tmp_path / "nist.out"
    status, _, err = run_main(
        capsys, "apply", model, files["nist.tsv"], "--format", "nist-sre", "-o", out
    )
    assert status == 0, err
    # the NIST layout kept: its header, tabs and side column, the LLR in place of the score
    llrs = [line.split() for line in expected.read_text().splitlines()]
    nist = "".join(f"{m}\t{t}\ta\t{llr}\n" for m, t, llr in llrs)
    assert out.read_text() == "modelid\tsegmentid\tside\tLLR\n" + nist
    got = run_focal("apply", model, "-", "-o", "-", stdin=files["header.scores"].read_text())
    assert got.returncode == 0, got.stderr
    assert got.stdout == "enrol test score\n" + expected.read_text()  # its header kept
