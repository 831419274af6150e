"""BOSARIS-style score and key files."""

import numpy as np
import pytest

from focal.io import align_trials, read_key, read_scores


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_read_and_align_two_systems_in_different_orders(tmp_path):
    key = write(tmp_path, "k", "# comment\nm1 t1 target\nm1 t2 nontarget\n\nm2 t1 NON\nm2 t2 1\n")
    s1 = write(tmp_path, "s1", "m2 t2 4.0\nm1 t1 1.5\nm1 t2 -2\nm2 t1 0.25\n")
    s2 = write(tmp_path, "s2", "m1,t1,10\nm1,t2,20\nm2,t1,30\nm2,t2,40\n")
    X, y, models, tests = align_trials(read_key(key), read_scores(s1), read_scores(s2))
    np.testing.assert_array_equal(y, [True, False, False, True])
    np.testing.assert_array_equal(models, ["m1", "m1", "m2", "m2"])
    np.testing.assert_array_equal(tests, ["t1", "t2", "t1", "t2"])
    np.testing.assert_array_equal(X, [[1.5, 10], [-2, 20], [0.25, 30], [4.0, 40]])


def test_missing_trials_are_an_error_unless_dropped(tmp_path):
    key = write(tmp_path, "k", "m1 t1 target\nm1 t2 nontarget\nm2 t1 nontarget\n")
    s = write(tmp_path, "s", "m1 t1 1\nm2 t1 0\n")
    with pytest.raises(ValueError, match=r"1 trial\(s\) of the key .* no score, e\.g\. \(m1, t2\)"):
        align_trials(read_key(key), read_scores(s))
    X, y, _, _ = align_trials(read_key(key), read_scores(s), missing="drop")
    np.testing.assert_array_equal(X[:, 0], [1, 0])
    np.testing.assert_array_equal(y, [True, False])


def test_scored_trial_not_in_key(tmp_path):
    key = write(tmp_path, "k", "m1 t1 target\n")
    s = write(tmp_path, "s", "m1 t1 1\nm9 t9 2\n")
    with pytest.raises(ValueError, match=r"not in the key.*\(m9, t9\)"):
        align_trials(read_key(key), read_scores(s))


@pytest.mark.parametrize("text,message", [
    ("m1 t1\n", r":1: expected 3 fields"),
    ("m1 t1 1.0\nm1 t2 abc\n", r":2: score 'abc' is not a number"),
    ("m1 t1 nan\n", r":1: score is NaN"),
    ("m1 t1 1\nm1 t1 2\n", r":2: duplicate trial \(m1, t1\), first seen on line 1"),
    ("", r"no trials"),
])
def test_malformed_score_files_name_file_and_line(tmp_path, text, message):
    path = write(tmp_path, "bad.scores", text)
    with pytest.raises(ValueError, match=r"bad\.scores" + message if text else message):
        read_scores(path)


def test_unknown_key_label(tmp_path):
    path = write(tmp_path, "bad.key", "m1 t1 target\nm1 t2 maybe\n")
    with pytest.raises(ValueError, match=r"bad\.key:2: unknown label 'maybe'"):
        read_key(path)


def test_unreadable_files(tmp_path):
    with pytest.raises(ValueError, match="cannot open"):
        read_scores(tmp_path / "absent")
    binary = tmp_path / "binary"
    binary.write_bytes(b"\xff\xfe\x00m1 t1 1\n")
    with pytest.raises(ValueError, match="not a UTF-8 text file"):
        read_scores(binary)
