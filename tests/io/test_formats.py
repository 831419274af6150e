"""Column layouts of binary trial files (focal.io.formats): every preset reads back a file
written here by plain Python formatting; header lines are recognised only when they name the
columns; gzip and standard input are read as they are.
"""

import gzip

import numpy as np
import pytest

from focal.io import read_key, read_scores
from focal.io.binary import read_trials
from focal.io.engine import read_aligned
from focal.io.formats import PRESETS, Layout, key_layout, parse_layout, score_layout


def as_str(ids):
    return [bytes(v).decode() for v in ids]


RNG = np.random.default_rng(7)
N = 50
MODELS = [f"spk{i % 7}" for i in range(N)]
TESTS = [f"id10{i:03d}/vid/{i:05d}.wav" for i in range(N)]
SCORES = np.round(RNG.normal(size=N), 6).tolist()
LABELS = (RNG.random(N) < 0.4).tolist()
LABELS[0], LABELS[1] = True, False


def _word(role, i, label_words):
    if role == "model":
        return MODELS[i]
    if role == "test":
        return TESTS[i]
    if role == "score":
        return repr(SCORES[i])
    if role == "label":
        return label_words[0] if LABELS[i] else label_words[1]
    return "a"  # an ignored column (the NIST side)


def _write(path, layout, header=None, label_words=("target", "nontarget"), sep=" "):
    lines = [sep.join(header)] if header else []
    lines += [sep.join(_word(r, i, label_words) for r in layout.roles) for i in range(N)]
    path.write_text("\n".join(lines) + "\n")
    return path


_HEADERS = {
    "nist-sre": (
        ["modelid", "segmentid", "side", "LLR"],
        ["modelid", "segmentid", "side", "targettype"],
    )
}
_WORDS = {"voxceleb": ("1", "0"), "speechbrain": ("1", "0")}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_each_preset_reads_back_a_generated_file(tmp_path, preset):
    scores_layout, keys_layout = PRESETS[preset]
    header_s, header_k = _HEADERS.get(preset, (None, None))
    words = _WORDS.get(preset, ("target", "nontarget"))
    sep = "\t" if preset == "nist-sre" else " "
    s = read_scores(_write(tmp_path / "s", scores_layout, header_s, words, sep), format=preset)
    k = read_key(_write(tmp_path / "k", keys_layout, header_k, words, sep), format=preset)
    assert s.models.astype(str).tolist() == MODELS and s.tests.astype(str).tolist() == TESTS
    assert s.scores.tolist() == SCORES
    assert k.models.astype(str).tolist() == MODELS and k.tests.astype(str).tolist() == TESTS
    assert k.labels.tolist() == LABELS


def test_nist_sre_without_header_reads_by_position(tmp_path):
    s = read_scores(_write(tmp_path / "s", PRESETS["nist-sre"][0]), format="nist-sre")
    assert s.scores.tolist() == SCORES


def test_nist_sre_header_in_another_order_is_read_by_name(tmp_path):
    rows = ["LLR\tside\tsegmentid\tmodelid"] + [
        f"{SCORES[i]!r}\ta\t{TESTS[i]}\t{MODELS[i]}" for i in range(N)
    ]
    (tmp_path / "s").write_text("\n".join(rows) + "\n")
    s = read_scores(tmp_path / "s", format="nist-sre")
    assert s.scores.tolist() == SCORES and s.models.astype(str).tolist() == MODELS


def test_columns_by_header_name(tmp_path):
    rows = ["# a comment", "", "utt_b utt_a cos"] + [
        f"{TESTS[i]} {MODELS[i]} {SCORES[i]!r}" for i in range(N)
    ]
    (tmp_path / "s").write_text("\n".join(rows) + "\n")
    s = read_scores(tmp_path / "s", format="model=utt_a test=utt_b score=cos")
    assert s.scores.tolist() == SCORES and s.tests.astype(str).tolist() == TESTS
    with pytest.raises(ValueError, match=r"s:3: no header line naming the columns 'enrol'"):
        read_scores(tmp_path / "s", format="model=enrol test=utt_b score=cos")


def test_header_line_is_skipped_only_when_it_names_the_columns(tmp_path):
    rows = [f"{MODELS[i]} {TESTS[i]} {SCORES[i]!r}" for i in range(N)]
    (tmp_path / "named").write_text("enrol test score\n" + "\n".join(rows) + "\n")
    assert read_scores(tmp_path / "named").scores.tolist() == SCORES
    (tmp_path / "plain").write_text("\n".join(rows) + "\n")
    assert len(read_scores(tmp_path / "plain")) == N
    # three names, the score column not a known column name: a header or a broken record?
    (tmp_path / "odd").write_text("enrol test value\n" + "\n".join(rows) + "\n")
    with pytest.raises(
        ValueError,
        match=r"odd:1: 'value' in the score column is neither a score "
        r"nor a header name.*--columns",
    ):
        read_scores(tmp_path / "odd")
    # a number among the fields: a record with a bad score, never a header
    (tmp_path / "bad").write_text("m 7 x\n" + "\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"bad:1: score 'x' is not a number"):
        read_scores(tmp_path / "bad")


def test_key_header_and_a_key_whose_first_trial_looks_like_a_header(tmp_path):
    rows = [f"{MODELS[i]} {TESTS[i]} {'target' if LABELS[i] else 'nontarget'}" for i in range(N)]
    (tmp_path / "k").write_text("model segment label\n" + "\n".join(rows) + "\n")
    assert read_key(tmp_path / "k").labels.tolist() == LABELS
    (tmp_path / "k2").write_text("\n".join(rows) + "\n")  # 'spk0 id.. target': a record
    assert read_key(tmp_path / "k2").labels.tolist() == LABELS


def test_gzip_is_recognised_by_its_magic_bytes(tmp_path):
    rows = "".join(f"{MODELS[i]},{TESTS[i]},{SCORES[i]!r}\n" for i in range(N))
    (tmp_path / "scores.txt").write_bytes(gzip.compress(rows.encode()))  # no .gz suffix
    assert read_scores(tmp_path / "scores.txt").scores.tolist() == SCORES
    (tmp_path / "broken.gz").write_bytes(gzip.compress(rows.encode())[:-30])
    with pytest.raises(ValueError, match="broken.gz"):
        read_scores(tmp_path / "broken.gz")


def test_scores_and_labels_in_one_file(tmp_path):
    path = _write(tmp_path / "wespeaker", PRESETS["wespeaker"][0])
    scores, key = read_trials(path, format="wespeaker")
    assert scores.scores.tolist() == SCORES and key.labels.tolist() == LABELS
    X, y, _, _, _ = read_aligned([path], None, format="wespeaker")
    assert y.tolist() == LABELS and X[:, 0].tolist() == SCORES
    with pytest.raises(ValueError, match="no label column: give the key file"):
        read_aligned([path], None, format="bosaris")


def test_parse_layout_and_errors():
    assert parse_layout("label enrol test").roles == ("label", "model", "test")
    assert parse_layout("model,test,-,llr").roles == ("model", "test", None, "score")
    assert parse_layout("model=a test=b score=c").names == {"model": "a", "test": "b", "score": "c"}
    with pytest.raises(ValueError, match="unknown role 'speaker'"):
        parse_layout("speaker test score")
    with pytest.raises(ValueError, match="not a mix"):
        parse_layout("model=a test score")
    with pytest.raises(ValueError, match="role is given twice"):
        Layout(("model", "model", "score"))
    with pytest.raises(ValueError, match="unknown format 'kaldy'"):
        score_layout("kaldy")
    with pytest.raises(ValueError, match="no label column for a key"):
        key_layout("model test score")
    with pytest.raises(ValueError, match="no score column"):
        score_layout(PRESETS["voxceleb"][1])


def test_wrong_number_of_fields_names_the_layout(tmp_path):
    (tmp_path / "s").write_text("a b c 1.0\n")
    with pytest.raises(ValueError, match=r"s:1: expected 3 fields 'model test score', got 4"):
        read_scores(tmp_path / "s")


# ------------------------------------------------------- the files as the tools write them


def test_nist_sre18_trial_key_is_read_by_its_header(tmp_path):
    """A NIST SRE18/19 trial key: 9 tab-separated columns, ``targettype`` among them (the
    values of the other columns are those the SRE18 scoring software partitions on).
    """
    rng = np.random.default_rng(18)
    header = (
        "modelid segmentid side targettype num_enroll_segs phone_num_match gender "
        "source_type data_source"
    )
    rows, truth = [], []
    for i in range(60):
        target = bool(rng.random() < 0.3)
        truth.append(target)
        rows.append(
            [
                f"{1000 + i % 7}_sre18",
                f"seg{i:04d}_sre18.sph",
                "a",
                "target" if target else "nontarget",
                str(rng.choice([1, 3])),
                str(rng.choice(["Y", "N"])),
                str(rng.choice(["male", "female"])),
                str(rng.choice(["pstn", "voip"])),
                str(rng.choice(["cmn2", "vast"])),
            ]
        )
    path = tmp_path / "sre18_dev_trial_key.tsv"
    path.write_text("\t".join(header.split()) + "\n" + "".join("\t".join(r) + "\n" for r in rows))
    key = read_key(path, format="nist-sre")
    assert key.labels.tolist() == truth
    assert as_str(key.models) == [r[0] for r in rows]
    assert as_str(key.tests) == [r[1] for r in rows]


def test_wespeaker_scores_of_an_unlabelled_trial_list(tmp_path):
    """The ``score.py`` of wespeaker writes ``enrol test score label`` for a labelled trial list and
    ``enrol test score`` (``'{} {} {:.5f}'``) for an unlabelled one: both are its format.
    """
    trials = [("id10270/x.wav", "id10271/y.wav", 0.61234), ("id10270/x.wav", "id10300/z.wav", -0.2)]
    unlabelled = tmp_path / "vox1_O_unlabelled.score"
    unlabelled.write_text("".join("{} {} {:.5f}\n".format(*t) for t in trials))
    s = read_scores(unlabelled, format="wespeaker")
    assert s.scores.tolist() == [0.61234, -0.2]
    with pytest.raises(ValueError, match=r"unlabelled\.score:1: records of 3 fields have no label"):
        read_key(unlabelled, format="wespeaker")
    labelled = tmp_path / "vox1_O.score"
    labelled.write_text(
        "".join("{} {} {:.5f} {}\n".format(*t, w) for t, w in zip(trials, ("target", "nontarget")))
    )
    assert read_key(labelled, format="wespeaker").labels.tolist() == [True, False]
    mixed = tmp_path / "mixed.score"
    mixed.write_text(labelled.read_text() + unlabelled.read_text())
    with pytest.raises(ValueError, match=r"mixed\.score:3: expected 4 fields"):
        read_scores(mixed, format="wespeaker")
