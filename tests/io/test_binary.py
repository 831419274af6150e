"""BOSARIS-style score and key files: reading, alignment, writing."""

import pathlib
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from focal._text.fields import as_id_array
from focal.io import _ids, align_scores, align_trials, read_key, read_scores, write_scores
from focal.io.binary import TrialKey, TrialScores


def write(tmp_path, name, text, mode="w"):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def as_str(ids):
    return [bytes(v).decode() for v in ids]


def test_read_and_align_two_systems_in_different_orders(tmp_path):
    key = write(tmp_path, "k", "# comment\nm1 t1 target\nm1 t2 nontarget\n\nm2 t1 NON\nm2 t2 1\n")
    s1 = write(tmp_path, "s1", "m2 t2 4.0\nm1 t1 1.5\nm1 t2 -2\nm2 t1 0.25\n")
    s2 = write(tmp_path, "s2", "m1,t1,10\nm1,t2,20\nm2,t1,30\nm2,t2,40\n")
    X, y, models, tests = align_trials(read_key(key), read_scores(s1), read_scores(s2))
    np.testing.assert_array_equal(y, [True, False, False, True])
    assert as_str(models) == ["m1", "m1", "m2", "m2"]
    assert as_str(tests) == ["t1", "t2", "t1", "t2"]
    np.testing.assert_array_equal(X, [[1.5, 10], [-2, 20], [0.25, 30], [4.0, 40]])


def test_layout_variants(tmp_path):
    """Tabs, CRLF, commas with spaces, a BOM, leading blanks, no final newline, comments."""
    text = "\ufeff# scores\r\n  a\tb\t1.5\r\n\r\nc , d , -2e3\r\n   # indented comment\ne f +.25"
    s = read_scores(write(tmp_path, "s", text))
    assert as_str(s.models) == ["a", "c", "e"]
    assert as_str(s.tests) == ["b", "d", "f"]
    np.testing.assert_array_equal(s.scores, [1.5, -2000.0, 0.25])
    assert [s.lines.line(i) for i in range(3)] == [2, 4, 6]


@pytest.mark.parametrize("block_bytes", [1, 2, 3, 1 << 20])
def test_byte_order_mark_is_skipped_whatever_the_block_size(tmp_path, block_bytes):
    s = read_scores(write(tmp_path, "s", "\ufeffa b 1\nc d 2\n"), block_bytes=block_bytes)
    assert as_str(s.models) == ["a", "c"]


def test_unicode_ids(tmp_path):
    s = read_scores(write(tmp_path, "s", "señor ü 1\n説話者 テスト 2\n"))
    assert [v.decode("utf-8") for v in s.models] == ["señor", "説話者"]
    assert np.char.decode(s.tests, "utf-8").tolist() == ["ü", "テスト"]


def random_trials(rng, n, id_len=(1, 30)):
    alphabet = np.array(list("abcXYZ019_-./:é"))
    ids = set()
    while len(ids) < n:
        m = "".join(rng.choice(alphabet, rng.integers(*id_len)))
        t = "".join(rng.choice(alphabet, rng.integers(*id_len)))
        ids.add((m, t))
    return sorted(ids)


@pytest.mark.parametrize("block_bytes", [1, 7, 64, 1000, 1 << 22])
def test_block_size_does_not_change_the_result(tmp_path, block_bytes):
    rng = np.random.default_rng(block_bytes)
    trials = random_trials(rng, 400)
    scores = rng.normal(size=400) * 10
    lines = ["# header"] + [f"{m} {t} {float(v)!r}" for (m, t), v in zip(trials, scores)]
    lines.insert(100, "")
    lines.insert(200, "# middle")
    path = write(tmp_path, "s", "\n".join(lines) + "\n")
    s = read_scores(path, block_bytes=block_bytes)
    assert np.char.decode(s.models, "utf-8").tolist() == [m for m, _ in trials]
    assert np.char.decode(s.tests, "utf-8").tolist() == [t for _, t in trials]
    np.testing.assert_array_equal(s.scores, scores)
    text = path.read_text(encoding="utf-8").split("\n")
    for i in (0, 98, 99, 197, 198, 399):  # each record's line holds its trial
        assert text[s.lines.line(i) - 1].startswith(trials[i][0] + " " + trials[i][1] + " ")


def test_missing_trials_are_an_error_unless_dropped(tmp_path):
    key = write(tmp_path, "k", "m1 t1 target\nm1 t2 nontarget\nm2 t1 nontarget\n")
    s = write(tmp_path, "s", "m1 t1 1\nm2 t1 0\n")
    with pytest.raises(ValueError, match=r"1 trial\(s\) of the key .* no score, e\.g\. \(m1, t2\)"):
        align_trials(read_key(key), read_scores(s))
    X, y, _, _ = align_trials(read_key(key), read_scores(s), missing="drop")
    np.testing.assert_array_equal(X[:, 0], [1, 0])
    np.testing.assert_array_equal(y, [True, False])


def test_missing_count_and_first_ids(tmp_path):
    key = "".join(f"m{i} t{i} target\n" for i in range(10))
    scores = "m0 t0 1\nm5 t5 2\n"
    with pytest.raises(
        ValueError, match=r"8 trial\(s\) .* e\.g\. \(m1, t1\), \(m2, t2\), \(m3, t3\);"
    ):
        align_trials(read_key(write(tmp_path, "k", key)), read_scores(write(tmp_path, "s", scores)))


def test_scored_trial_not_in_key(tmp_path):
    key = write(tmp_path, "k", "m1 t1 target\n")
    s = write(tmp_path, "s", "m1 t1 1\nm9 t9 2\n")
    with pytest.raises(ValueError, match=r"1 scored trial\(s\) are not in the key.*\(m9, t9\)"):
        align_trials(read_key(key), read_scores(s))
    X, y, _, _ = align_trials(read_key(key), read_scores(s), missing="drop")
    np.testing.assert_array_equal(X, [[1.0]])


def test_nothing_in_common(tmp_path):
    key = read_key(write(tmp_path, "k", "a b 1\n"))
    s = read_scores(write(tmp_path, "s", "c d 1\n"))
    with pytest.raises(ValueError, match="no trial of the key .*k is in every score file"):
        align_trials(key, s, missing="drop")


def test_a_key_of_other_trials_is_named_by_the_file_workflows(tmp_path):
    """Issue 30: the wrong key (no trial in common with the scores) said "cannot reshape array
    of size 0 into shape (0,newaxis)", naming no file.
    """
    from focal.workflows import evaluate_binary

    key = write(tmp_path, "k.key", "x y target\nz w nontarget\n")
    s = write(tmp_path, "s.scores", "a b 1.0\nc d 2.0\n")
    with pytest.raises(ValueError, match=r"s.scores: 2 scored trial\(s\) are not in the key"):
        evaluate_binary([s], key)
    with pytest.raises(ValueError, match=r"no trial of the key .*k.key is in every score file"):
        evaluate_binary([s], key, missing="drop")


@pytest.mark.parametrize(
    "text,message",
    [
        ("m1 t1\n", r":1: expected 3 fields 'model test score', got 2"),
        ("m1 t1 1 2\n", r":1: expected 3 fields 'model test score', got 4"),
        ("m1 t1 1.0\n\n# c\nm1 t2\n", r":4: expected 3 fields"),
        ("m1 t1 1.0\nm1 t2 abc\n", r":2: score 'abc' is not a number"),
        ("m1 t1 1.0\nm1 t2 1,5\n", r":2: expected 3 fields"),
        ("m1 t1 nan\n", r":1: score is NaN"),
        ("m1 t1 1\nm1 t1 2\n", r":2: duplicate trial \(m1, t1\), first seen on line 1"),
        (
            "a b 1\nm1 t1 1\nc d 2\nm1 t1 2\nm1 t1 3\n",
            r":4: duplicate trial \(m1, t1\), first seen on line 2",
        ),
        ("", r": no trials"),
        ("# only a comment\n\n", r": no trials"),
        (b"m1 t1 1\nm2 t\x002 1\n", r":2: NUL byte"),
        (b"m1 t1 1\nm2 t\xff 1\n", r":2: not a UTF-8 text file"),
    ],
)
def test_malformed_score_files_name_file_and_line(tmp_path, text, message):
    path = write(tmp_path, "bad.scores", text)
    with pytest.raises(ValueError, match=r"bad\.scores" + message):
        read_scores(path)


def test_duplicate_found_across_blocks(tmp_path):
    lines = [f"m{i} t{i} {i}" for i in range(500)] + ["m7 t7 1"]
    path = write(tmp_path, "s", "\n".join(lines) + "\n")
    with pytest.raises(
        ValueError, match=r"s:501: duplicate trial \(m7, t7\), first seen on line 8"
    ):
        read_scores(path, block_bytes=100)


def test_unknown_key_label(tmp_path):
    path = write(tmp_path, "bad.key", "m1 t1 target\nm1 t2 maybe\n")
    with pytest.raises(ValueError, match=r"bad\.key:2: unknown label 'maybe'"):
        read_key(path)


def test_key_label_spellings(tmp_path):
    text = (
        "a 1 target\na 2 nontarget\na 3 TAR\na 4 Non\na 5 1\na 6 0\na 7 true\na 8 false\n"
        "a 9 non-target\na 10 impostor\n"
    )
    key = read_key(write(tmp_path, "k", text))
    np.testing.assert_array_equal(key.labels, [1, 0, 1, 0, 1, 0, 1, 0, 0, 0])


def test_unreadable_files(tmp_path):
    with pytest.raises(ValueError, match="cannot open"):
        read_scores(tmp_path / "absent")
    binary = tmp_path / "binary"
    binary.write_bytes(b"\xff\xfe\x00m1 t1 1\n")
    with pytest.raises(ValueError, match=r"binary:1: (NUL byte|not a UTF-8)"):
        read_scores(binary)


def slow_align(key_rows, system_rows):
    """Dictionary-based reference alignment: trials of the key present in every system."""
    tables = [dict(((m, t), v) for m, t, v in rows) for rows in system_rows]
    out = []
    for m, t, label in key_rows:
        if all((m, t) in table for table in tables):
            out.append((m, t, label, [table[(m, t)] for table in tables]))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_alignment_matches_a_dictionary_reference(tmp_path, seed):
    rng = np.random.default_rng(seed)
    trials = random_trials(rng, 300, id_len=(1, 12))
    # ids that concatenate alike and prefixes: ("ab", "c") vs ("a", "bc"), "x" vs "xx"
    trials += [("ab", "c"), ("a", "bc"), ("x", "y"), ("xx", "y"), ("x", "yy")]
    labels = rng.integers(0, 2, len(trials))
    key_rows = [(m, t, int(v)) for (m, t), v in zip(trials, labels)]
    system_rows = []
    for _ in range(3):
        keep = rng.random(len(trials)) < 0.9
        order = rng.permutation(np.flatnonzero(keep))
        system_rows.append([(trials[i][0], trials[i][1], float(rng.normal())) for i in order])
    kpath = write(tmp_path, "k", "".join(f"{m} {t} {v}\n" for m, t, v in key_rows))
    spaths = [
        write(tmp_path, f"s{k}", "".join(f"{m} {t} {v!r}\n" for m, t, v in rows))
        for k, rows in enumerate(system_rows)
    ]
    X, y, models, tests = align_trials(read_key(kpath), *map(read_scores, spaths), missing="drop")
    expected = slow_align(key_rows, system_rows)
    assert list(zip(np.char.decode(models, "utf-8"), np.char.decode(tests, "utf-8"))) == [
        (m, t) for m, t, _, _ in expected
    ]
    np.testing.assert_array_equal(y, [lab for _, _, lab, _ in expected])
    np.testing.assert_array_equal(X, [v for _, _, _, v in expected])


def test_alignment_is_exact_even_when_every_hash_collides(monkeypatch):
    rng = np.random.default_rng(7)
    trials = random_trials(rng, 200)
    models = np.array([m for m, _ in trials])
    tests = np.array([t for _, t in trials])
    labels = rng.integers(0, 2, 200).astype(bool)
    order = rng.permutation(200)
    system = TrialScores(models[order], tests[order], np.arange(200.0)[order])
    key = TrialKey(models, tests, labels)
    reference = align_trials(key, system)
    monkeypatch.setattr(_ids, "hash_ids", lambda *cols, **_: np.zeros(len(cols[0]), np.uint64))
    X, y, m, t = align_trials(key, system)
    np.testing.assert_array_equal(X[:, 0], np.arange(200.0))
    np.testing.assert_array_equal(X, reference[0])
    np.testing.assert_array_equal(y, labels)
    assert _ids.find_duplicate((as_id_array(models), as_id_array(tests))) is None
    dup = _ids.find_duplicate(
        (
            as_id_array(np.append(models, models[5])),
            as_id_array(np.append(tests, tests[5])),
        )
    )
    assert dup == (5, 200)


def test_align_scores_orders_by_the_first_system(tmp_path):
    a = read_scores(write(tmp_path, "a", "x 1 1\ny 1 2\nz 1 3\n"))
    b = read_scores(write(tmp_path, "b", "z 1 30\nx 1 10\ny 1 20\n"))
    X, models, _ = align_scores(a, b)
    np.testing.assert_array_equal(X, [[1, 10], [2, 20], [3, 30]])
    assert as_str(models) == ["x", "y", "z"]
    c = read_scores(write(tmp_path, "c", "z 1 300\nx 1 100\n"))
    with pytest.raises(ValueError, match=r"c: 1 trial\(s\) of the first score file .*\(y, 1\)"):
        align_scores(a, c)
    X, _, _ = align_scores(a, c, missing="drop")
    np.testing.assert_array_equal(X, [[1, 100], [3, 300]])


def test_str_ids_built_in_memory_align_with_file_ids(tmp_path):
    s = read_scores(write(tmp_path, "s", "é 1 5\nb 2 6\n"))
    key = TrialKey(np.array(["b", "é"]), np.array(["2", "1"]), np.array([True, False]))
    X, y, _, _ = align_trials(key, s)
    np.testing.assert_array_equal(X[:, 0], [6, 5])


def test_bad_arguments(tmp_path):
    s = read_scores(write(tmp_path, "s", "a b 1\n"))
    key = read_key(write(tmp_path, "k", "a b 1\n"))
    with pytest.raises(ValueError, match="missing must be"):
        align_trials(key, s, missing="ignore")
    with pytest.raises(ValueError, match="at least one system"):
        align_trials(key)
    with pytest.raises(ValueError, match="key must be a TrialKey"):
        align_trials(s, s)


ids = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc"),
        blacklist_characters=",#\x85\x1c\x1d\x1e\x1f",
    ),
    min_size=1,
    max_size=12,
)


@given(
    st.lists(
        st.tuples(ids, ids, st.floats(allow_nan=False, width=64)),
        min_size=1,
        max_size=40,
        unique_by=lambda r: (r[0], r[1]),
    )
)
def test_write_then_read_is_bit_identical(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("w") / "s"
    models = np.array([r[0] for r in rows])
    tests = np.array([r[1] for r in rows])
    scores = np.array([r[2] for r in rows])
    write_scores(path, models, tests, scores, chunk_size=7)
    back = read_scores(path)
    assert np.char.decode(back.models, "utf-8").tolist() == models.tolist()
    assert np.char.decode(back.tests, "utf-8").tolist() == tests.tolist()
    np.testing.assert_array_equal(back.scores.view(np.uint64), scores.view(np.uint64))


def test_unwritable_path(tmp_path):
    with pytest.raises(ValueError, match="cannot write"):
        write_scores(tmp_path / "absent" / "s", np.array(["a"]), np.array(["b"]), [1.0])


def test_written_text_is_plain(tmp_path):
    path = tmp_path / "s"
    write_scores(path, np.array(["m1", "m2"]), np.array([b"t1", b"t2"]), [0.1, -3.0])
    assert path.read_text() == "m1 t1 0.1\nm2 t2 -3.0\n"


@pytest.mark.parametrize(
    "models,scores,message",
    [
        (["a b", "c"], [1.0, 2.0], r"models\[0\] = 'a b' cannot be written"),
        (["", "c"], [1.0, 2.0], r"models\[0\] = '' cannot be written"),
        (["#a", "c"], [1.0, 2.0], r"models\[0\]"),
        (["a,b", "c"], [1.0, 2.0], r"models\[0\]"),
        (["a", "c"], [1.0, np.nan], r"scores\[1\] is NaN"),
        (["a"], [1.0, 2.0], r"1-D of one length"),
    ],
)
def test_write_refuses_what_cannot_be_read_back(tmp_path, models, scores, message):
    tests = np.array(["t"] * len(scores))
    with pytest.raises(ValueError, match=message):
        write_scores(tmp_path / "s", np.array(models), tests, scores)


# ------------------------------------------------------------- messages that name the culprit


def test_first_bad_line_of_a_score_file_is_reported_at_its_own_line(tmp_path, capsys):
    r"""``printf 'a b 1.0\nc d oops\ne f some_id.wav\n'`` was reported at ``:3:`` (the
    underscore check ran over the whole batch before the conversion found line 2).
    """
    from tests._support.cli import run_main

    scores = write(tmp_path, "bad.scores", "a b 1.0\nc d oops\ne f some_id.wav\n")
    key = write(tmp_path, "k.key", "a b target\nc d nontarget\ne f target\n")
    status, _, err = run_main(capsys, "evaluate", scores, "--key", key)
    assert status == 1 and "bad.scores:2: score 'oops' is not a number" in err, err
    long = "9" * 70 + "x"  # tokens longer than 64 bytes are converted apart, first
    cases = {
        f"a b 1.0\nc d oops\ne f {long}\n": ":2: score 'oops' is not a number",
        f"a b 1.0\nc d {long}\ne f oops\n": f":2: score '{long}' is not a number",
        "a b 1.0\nc d 1e999\ne f nan\n": ":2: score '1e999' is out of the float64 range",
        "a b 1.0\nc d NaN\ne f 1_0\n": ":2: score is NaN",
        "a b 1.0\nc d 1_0\ne f oops\n": ":2: score '1_0' is not a number",
    }
    for text, message in cases.items():
        with pytest.raises(ValueError, match=re.escape(message)):
            read_scores(write(tmp_path, "s", text))


def test_pos_label_naming_the_non_targets_is_refused(tmp_path, capsys):
    """``--pos-label nontarget`` on a target/nontarget key inverted every label silently
    (Cllr 2.159 instead of 0.528 on the sample eval set).
    """
    from tests._support.cli import run_main

    samples = pathlib.Path(__file__).resolve().parents[2] / "data_samples" / "speaker_detection"
    status, _, err = run_main(
        capsys,
        "evaluate",
        samples / "eval_sys1.scores",
        "--key",
        samples / "eval.key",
        "--pos-label",
        "nontarget",
    )
    assert status == 1 and "pos_label 'nontarget' (--pos-label) names the non-target" in err
    key = write(tmp_path, "k", "m1 t1 1\nm1 t2 0\n")
    for word in ("0", "NON", "false", "impostor"):
        with pytest.raises(ValueError, match=f"pos_label '{word}' .* names the non-target"):
            read_key(key, pos_label=word)
    assert read_key(key, pos_label="1").labels.tolist() == [True, False]


def test_a_genuine_impostor_key_is_told_to_name_its_target_label(tmp_path, capsys):
    """The message said to use --columns (as if the first line were a header)."""
    from tests._support.cli import run_main

    scores = write(tmp_path, "s", "a b 1\nc d 2\ne f 3\n")
    for text, line in (
        ("a b genuine\nc d impostor\ne f genuine\n", 1),
        ("a b impostor\nc d genuine\ne f genuine\n", 2),
    ):
        key = write(tmp_path, "k", text)
        status, _, err = run_main(capsys, "evaluate", scores, "--key", key)
        assert status == 1 and f"k:{line}: unknown label 'genuine'" in err, err
        assert "--pos-label genuine" in err and "--columns" not in err
        status, _, err = run_main(
            capsys, "evaluate", scores, "--key", key, "--pos-label", "genuine"
        )
        assert status == 0, err


@pytest.mark.parametrize("missing", ["error", "drop"])
def test_a_trial_given_twice_in_memory_is_refused_not_matched_once(missing):
    """A TrialScores or TrialKey made in memory with a repeated trial: matching took the first
    of the two rows silently (``missing="drop"``) or said the trial was not in the key.
    """
    from focal.io import TrialKey, TrialScores, align_scores

    key = TrialKey(np.array([b"m", b"m"]), np.array([b"a", b"b"]), np.array([True, False]))
    twice = TrialScores(np.array([b"m", b"m", b"m"]), np.array([b"a", b"b", b"a"]), np.ones(3))
    with pytest.raises(ValueError, match=r"^scores: duplicate trial \(m, a\): rows 0 and 2"):
        align_trials(key, twice, missing=missing)
    with pytest.raises(ValueError, match=r"^scores: duplicate trial \(m, a\): rows 0 and 2"):
        align_scores(twice, missing=missing)
    key_twice = TrialKey(np.array([b"m", b"m"]), np.array([b"a", b"a"]), np.array([1, 0]) > 0)
    once = TrialScores(np.array([b"m"]), np.array([b"a"]), np.ones(1))
    with pytest.raises(ValueError, match=r"^key: duplicate trial \(m, a\): rows 0 and 1"):
        align_trials(key_twice, once, missing=missing)
