"""``focal apply`` writes the layout it read: every ``--format`` preset (and CSV) keeps its
header, its other columns and its separators, the LLR in place of the score; ``.gz`` outputs are
gzip; ``--output-format`` writes another preset's layout; ``apply`` then ``evaluate --format``
round-trips. The inputs are unchanged by hash.

The expected LLRs come from the estimator (``focal.load(...).transform``), a path other than the
NumPy runtime that ``focal apply`` uses, written as ``repr`` writes them.
"""

import gzip
import hashlib
import json

import numpy as np
import pytest

from focal import LogisticFusion, load, save
from tests._support.cli import run_main

N = 300
RNG = np.random.default_rng(29)
MODELS = [f"id1{i % 13:04d}" for i in range(N)]
TESTS = [f"id1{i % 17:04d}/v{i:03d}/{i:05d}.wav" for i in range(N)]
LABELS = RNG.random(N) < 0.3
SCORES = np.round(RNG.normal(size=N) + 2.5 * LABELS, 5)
WORD = np.where(LABELS, "target", "nontarget")
BIT = np.where(LABELS, "1", "0")


def _score(i):
    return repr(float(SCORES[i]))


#: preset -> (header line or None, the fields of trial i, the index of the score field)
LAYOUTS = {
    "bosaris": (None, lambda i: [MODELS[i], TESTS[i], _score(i)], 2),
    "kaldi": (None, lambda i: [MODELS[i], TESTS[i], _score(i)], 2),
    "voxceleb": (None, lambda i: [MODELS[i], TESTS[i], _score(i)], 2),
    "nist-sre": (
        "modelid\tsegmentid\tside\tLLR",
        lambda i: [MODELS[i], TESTS[i], "a", _score(i)],
        3,
    ),
    "wespeaker": (None, lambda i: [MODELS[i], TESTS[i], _score(i), str(WORD[i])], 2),
    "speechbrain": (None, lambda i: [MODELS[i], TESTS[i], str(BIT[i]), _score(i)], 3),
}
SEPARATOR = {"nist-sre": "\t"}


def _text(header, fields, sep=" ", order=range(N)):
    return (header + "\n" if header else "") + "".join(sep.join(fields(i)) + "\n" for i in order)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    d = tmp_path_factory.mktemp("apply_formats")
    files = {}
    for preset, (header, fields, _) in LAYOUTS.items():
        files[preset] = d / f"{preset}.scores"
        files[preset].write_text(_text(header, fields, SEPARATOR.get(preset, " ")))
    order = RNG.permutation(N)  # the keys list the trials in another order
    keys = {
        "bosaris": _text(None, lambda i: [MODELS[i], TESTS[i], str(WORD[i])], order=order),
        "nist-sre": _text(
            "modelid\tsegmentid\tside\ttargettype",
            lambda i: [MODELS[i], TESTS[i], "a", str(WORD[i])],
            "\t",
            order,
        ),
        "voxceleb": _text(None, lambda i: [str(BIT[i]), MODELS[i], TESTS[i]], order=order),
    }
    for name, text in keys.items():
        files[f"{name}.key"] = d / f"{name}.key"
        files[f"{name}.key"].write_text(text)
    files["model"] = d / "m.json"
    save(LogisticFusion().fit(SCORES[:, None], LABELS), files["model"])
    llr = load(files["model"]).transform(SCORES[:, None]).ravel()
    return d, files, [repr(float(v)) for v in llr]


def _hashes(files):
    return {k: hashlib.sha256(p.read_bytes()).hexdigest() for k, p in files.items()}


def _numbers(stdout):
    report = json.loads(stdout)
    report = report[0] if isinstance(report, list) else report
    return {k: v for k, v in report.items() if k not in ("name", "system", "path")}


def _evaluate(capsys, *args):
    status, out, err = run_main(capsys, "evaluate", *args, "--json")
    assert status == 0, err
    return _numbers(out)


KEYS = {"nist-sre": "nist-sre", "voxceleb": "voxceleb", "bosaris": "bosaris", "kaldi": "bosaris"}


@pytest.mark.parametrize("preset", sorted(LAYOUTS))
def test_apply_writes_the_layout_it_read_and_evaluate_reads_it_back(setup, capsys, preset):
    d, files, llrs = setup
    before = _hashes(files)
    header, fields, score = LAYOUTS[preset]
    sep = SEPARATOR.get(preset, " ")
    out = d / f"out-{preset}.scores"
    status, _, err = run_main(
        capsys, "apply", files["model"], files[preset], "--format", preset, "-o", out
    )
    assert status == 0, err

    def fused(i):
        row = fields(i)
        row[score] = llrs[i]
        return row

    assert out.read_text() == _text(header, fused, sep)  # header, columns, separators kept
    assert _hashes(files) == before
    reference = _evaluate(capsys, d / "out-reference.scores", "--key", files["bosaris.key"])
    key = [] if preset not in KEYS else ["--key", files[f"{KEYS[preset]}.key"]]
    assert _evaluate(capsys, out, "--format", preset, *key) == reference


@pytest.fixture(scope="module", autouse=True)
def reference_output(setup):
    """The default layout's output (``model test llr``), which the round trips are held to."""
    d, files, llrs = setup
    (d / "out-reference.scores").write_text(
        "".join(f"{MODELS[i]} {TESTS[i]} {llrs[i]}\n" for i in range(N))
    )


def test_csv_keeps_its_commas_and_header(setup, capsys):
    d, files, llrs = setup
    csv = d / "scores.csv"
    csv.write_text(
        "enrol,test,score\n" + "".join(f"{MODELS[i]},{TESTS[i]},{_score(i)}\n" for i in range(N))
    )
    out = d / "out.csv"
    status, _, err = run_main(capsys, "apply", files["model"], csv, "-o", out)
    assert status == 0, err
    expected = "enrol,test,score\n" + "".join(
        f"{MODELS[i]},{TESTS[i]},{llrs[i]}\n" for i in range(N)
    )
    assert out.read_text() == expected


def test_gz_output_is_gzip(setup, capsys):
    """``-o out.gz`` wrote plain text under a ``.gz`` name."""
    d, files, llrs = setup
    plain, packed = d / "nist.out", d / "nist.out.gz"
    for out in (plain, packed):
        status, _, err = run_main(
            capsys, "apply", files["model"], files["nist-sre"], "--format", "nist-sre", "-o", out
        )
        assert status == 0, err
    raw = packed.read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    assert gzip.decompress(raw) == plain.read_bytes()
    key = ["--key", files["nist-sre.key"]]
    assert _evaluate(capsys, packed, "--format", "nist-sre", *key) == _evaluate(
        capsys, plain, "--format", "nist-sre", *key
    )


def test_output_format_overrides_the_input_layout(setup, capsys):
    d, files, llrs = setup
    out = d / "override.scores"
    cases = [
        (files["nist-sre"], ["--format", "nist-sre", "--output-format", "bosaris"], "bosaris"),
        (files["bosaris"], ["--output-format", "nist-sre"], "nist-sre"),
        (
            files["speechbrain"],
            ["--format", "speechbrain", "--output-format", "wespeaker"],
            "wespeaker",
        ),
        (
            files["wespeaker"],
            ["--format", "wespeaker", "--output-format", "speechbrain"],
            "speechbrain",
        ),
    ]
    for source, options, target in cases:
        status, _, err = run_main(capsys, "apply", files["model"], source, *options, "-o", out)
        assert status == 0, err
        header, fields, score = LAYOUTS[target]

        def fused(i, fields=fields, score=score):
            row = fields(i)
            row[score] = llrs[i]
            return row

        assert out.read_text() == _text(header, fused, SEPARATOR.get(target, " ")), options
    status, _, err = run_main(
        capsys, "apply", files["model"], files["bosaris"], "--output-format", "wespeaker", "-o", out
    )
    assert status == 1 and "output format wespeaker has a label column" in err


def test_align_keeps_the_first_file_layout(setup, capsys):
    """``--align`` reads the files whole: the output still has the first file's layout (its
    trials in its order, those absent from another file dropped with ``--missing drop``).
    """
    d, files, llrs = setup
    other = d / "other.scores"
    order = RNG.permutation(N)[: N - 10]
    other.write_text("".join(f"{MODELS[i]} {TESTS[i]} {_score(i)}\n" for i in order))
    two = d / "two.json"
    X = np.column_stack([SCORES, SCORES])
    save(LogisticFusion().fit(X, LABELS), two)
    fused = load(two).transform(X).ravel()
    out = d / "aligned.scores"
    status, _, err = run_main(
        capsys,
        "apply",
        two,
        files["wespeaker"],
        other,
        "--format",
        "wespeaker",
        "--align",
        "--missing",
        "drop",
        "-o",
        out,
    )
    assert status == 0, err
    kept = sorted(order)
    expected = "".join(f"{MODELS[i]} {TESTS[i]} {float(fused[i])!r} {WORD[i]}\n" for i in kept)
    assert out.read_text() == expected
