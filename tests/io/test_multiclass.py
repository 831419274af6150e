"""Multiclass score files: Albayzin 2012 system output (plan sec. 6.1.3) and the generic format."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from focal.io import (
    ALBAYZIN_CLASSES,
    MulticlassScores,
    align_multiclass,
    align_multiclass_scores,
    read_albayzin_scores,
    read_multiclass_key,
    read_multiclass_scores,
    write_albayzin_scores,
    write_multiclass_scores,
)

# Figure 1 of the Albayzin 2012 evaluation plan, verbatim
FIGURE_1 = """\
Plenty Closed xxyyffaa -0.5678 -0.0034 0.6723 1.4332 -7.0032 5.0065 0.0000
Plenty Closed gghhjbb 0.3421 -0.9734 -1.5671 -3.0087 -9.3215 -3.7666 0.0000
Plenty Closed pplkkaa -1.7608 0.4559 -0.3946 -0.0004 2.1444 -0.0342 0.0000
Plenty Closed qqtzzii 0.1799 -5.5911 -0.0795 0.1005 0.1871 -6.998 0.0000
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def names(ids):
    return np.char.decode(ids, "utf-8").tolist()


def test_reads_the_plans_figure_1(tmp_path):
    s = read_albayzin_scores(write(tmp_path, "sys.txt", FIGURE_1))
    assert s.task == "Plenty" and s.condition == "Closed"
    assert s.classes == ("Basque", "Catalan", "English", "Galician", "Portuguese", "Spanish", "OOS")
    assert names(s.segments) == ["xxyyffaa", "gghhjbb", "pplkkaa", "qqtzzii"]
    np.testing.assert_array_equal(
        s.llh,
        [
            [-0.5678, -0.0034, 0.6723, 1.4332, -7.0032, 5.0065, 0.0],
            [0.3421, -0.9734, -1.5671, -3.0087, -9.3215, -3.7666, 0.0],
            [-1.7608, 0.4559, -0.3946, -0.0004, 2.1444, -0.0342, 0.0],
            [0.1799, -5.5911, -0.0795, 0.1005, 0.1871, -6.998, 0.0],
        ],
    )


def test_empty_task_open_set(tmp_path):
    s = read_albayzin_scores(
        write(
            tmp_path,
            "e",
            "Empty Open s1 1 2 3 4 5\nempty open s2 0 0 0 0 -1\n".replace(
                "empty open", "Empty Open"
            ),
        )
    )
    assert s.classes == ("French", "German", "Greek", "Italian", "OOS")
    assert s.condition == "Open"
    np.testing.assert_array_equal(s.llh[1], [0, 0, 0, 0, -1])


def test_task_and_condition_are_case_insensitive_but_constant(tmp_path):
    s = read_albayzin_scores(write(tmp_path, "a", "plenty CLOSED s1 1 2 3 4 5 6 0\n"))
    assert (s.task, s.condition) == ("Plenty", "Closed")
    with pytest.raises(ValueError, match=r"a:2: condition 'Open' differs from the file's first"):
        read_albayzin_scores(
            write(tmp_path, "a", "Plenty Closed s1 1 2 3 4 5 6 0\nPlenty Open s2 1 2 3 4 5 6 7\n")
        )


@pytest.mark.parametrize(
    "text,message",
    [
        ("Plenti Closed s 1 2 3 4 5 6 7\n", r"x:1: unknown task 'Plenti'"),
        ("# c\nPlenty Shut s 1 2 3 4 5 6 7\n", r"x:2: unknown condition 'Shut'"),
        ("Plenty\n", r"x:1: unknown condition ''"),
        ("Plenty Closed s 1 2 3 4 5 6\n", r"x:1: expected 10 fields .*Basque.*OOS.*got 9"),
        ("Empty Closed s 1 2 3 4 5 6 7\n", r"x:1: expected 8 fields"),
        ("Plenty Closed s 1 2 3 4 5 6 x\n", r"x:1: log-likelihood 'x' is not a number"),
        (
            "Plenty Closed s 1 2 3 4 5 6 7\nPlenty Closed t 1 2 nan 4 5 6 7\n",
            r"x:2: log-likelihood is NaN",
        ),
        (
            "Plenty Closed s 1 2 3 4 5 6 7\nPlenty Closed s 1 2 3 4 5 6 7\n",
            r"x:2: duplicate segment 's', first seen on line 1",
        ),
        ("Empty Closed s 1 2 3 4 5\nPlenty Closed t 1 2 3 4 5\n", r"x:2: task 'Plenty' differs"),
        ("\n# nothing\n", r"x: no segments"),
    ],
)
def test_albayzin_errors_name_file_and_line(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        read_albayzin_scores(write(tmp_path, "x", text))


def test_generic_format(tmp_path):
    text = "# my system\nsegment,english,french,german\nseg1,-1.5,0.25,3\nseg2,0,1e-3,-2\n"
    s = read_multiclass_scores(write(tmp_path, "g", text))
    assert s.classes == ("english", "french", "german")
    assert s.task is None
    assert names(s.segments) == ["seg1", "seg2"]
    np.testing.assert_array_equal(s.llh, [[-1.5, 0.25, 3], [0, 1e-3, -2]])
    assert [s.lines.line(i) for i in range(2)] == [3, 4]


@pytest.mark.parametrize(
    "text,message",
    [
        ("segment\n", r"g:1: the header must name the classes"),
        ("segment a b a\n", r"g:1: class 'a' named twice"),
        ("segment a b\ns1 1\n", r"g:2: expected 3 fields 'segment' and 2 scores \(a, b\), got 2"),
        ("segment a b\ns1 1 two\n", r"g:2: log-likelihood 'two' is not a number"),
        ("segment a b\n", r"g: no segments"),
    ],
)
def test_generic_errors(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        read_multiclass_scores(write(tmp_path, "g", text))


def test_key_and_alignment(tmp_path):
    scores = read_albayzin_scores(write(tmp_path, "s", FIGURE_1))
    key = read_multiclass_key(
        write(tmp_path, "k", "qqtzzii spanish\nxxyyffaa Basque\ngghhjbb OOS\npplkkaa Portuguese\n")
    )
    X, labels, segments, classes = align_multiclass(key, scores)
    assert names(segments) == ["qqtzzii", "xxyyffaa", "gghhjbb", "pplkkaa"]
    np.testing.assert_array_equal(labels, [5, 0, 6, 4])
    np.testing.assert_array_equal(X, scores.llh[[3, 0, 1, 2]])
    assert classes == ALBAYZIN_CLASSES["Plenty"]
    # two systems side by side
    X2, _, _, _ = align_multiclass(key, scores, scores)
    np.testing.assert_array_equal(X2, np.hstack([X, X]))


def test_unknown_language_and_the_oos_policy(tmp_path):
    scores = read_albayzin_scores(write(tmp_path, "s", FIGURE_1))
    key = read_multiclass_key(
        write(
            tmp_path, "k", "qqtzzii Spanish\nxxyyffaa Basque\ngghhjbb Arabic\npplkkaa out-of-set\n"
        )
    )
    with pytest.raises(ValueError, match=r"k:3: unknown language 'Arabic' \(classes: Basque, "):
        align_multiclass(key, scores)
    _, labels, _, _ = align_multiclass(key, scores, other="oos")
    np.testing.assert_array_equal(labels, [5, 0, 6, 6])


def test_oos_policy_needs_an_oos_class(tmp_path):
    scores = read_multiclass_scores(write(tmp_path, "g", "seg a b\ns1 1 2\n"))
    key = read_multiclass_key(write(tmp_path, "k", "s1 c\n"))
    with pytest.raises(ValueError, match="needs an out-of-set class"):
        align_multiclass(key, scores, other="oos")


def test_missing_segments(tmp_path):
    scores = read_albayzin_scores(write(tmp_path, "s", FIGURE_1))
    key = read_multiclass_key(write(tmp_path, "k", "qqtzzii Spanish\nzzz Basque\nyyy Basque\n"))
    # scored segments not in the key are named first, as the join of binary files names them
    with pytest.raises(ValueError, match=r"s: 3 scored segment\(s\) are not in the key"):
        align_multiclass(key, scores)
    every = "xxyyffaa gghhjbb pplkkaa qqtzzii zzz yyy".split()
    full = read_multiclass_key(write(tmp_path, "full", "".join(f"{s} Basque\n" for s in every)))
    with pytest.raises(
        ValueError, match=r"s: 2 segment\(s\) of the key .* have no scores, e\.g\. zzz, yyy"
    ):
        align_multiclass(full, scores)
    X, labels, segments, _ = align_multiclass(key, scores, missing="drop")
    assert names(segments) == ["qqtzzii"]
    key = read_multiclass_key(write(tmp_path, "k2", "qqtzzii Spanish\n"))
    with pytest.raises(ValueError, match=r"3 scored segment\(s\) are not in the key"):
        align_multiclass(key, scores)


def test_generic_systems_with_classes_in_another_order(tmp_path):
    a = read_multiclass_scores(write(tmp_path, "a", "seg x y z\ns1 1 2 3\ns2 4 5 6\n"))
    b = read_multiclass_scores(write(tmp_path, "b", "seg z x y\ns2 60 40 50\ns1 30 10 20\n"))
    key = read_multiclass_key(write(tmp_path, "k", "s2 Y\ns1 z\n"))
    X, labels, _, classes = align_multiclass(key, a, b)
    assert classes == ("x", "y", "z")
    np.testing.assert_array_equal(labels, [1, 2])
    np.testing.assert_array_equal(X, [[4, 5, 6, 40, 50, 60], [1, 2, 3, 10, 20, 30]])
    c = read_multiclass_scores(write(tmp_path, "c", "seg x y w\ns1 1 2 3\ns2 4 5 6\n"))
    with pytest.raises(ValueError, match="classes x, y, w differ"):
        align_multiclass(key, a, c)
    X, segments, _ = align_multiclass_scores(b, a)
    assert names(segments) == ["s2", "s1"]
    np.testing.assert_array_equal(X, [[60, 40, 50, 6, 4, 5], [30, 10, 20, 3, 1, 2]])


def test_key_errors(tmp_path):
    with pytest.raises(ValueError, match=r"k:2: expected 2 fields 'segment language', got 3"):
        read_multiclass_key(write(tmp_path, "k", "s1 en\ns2 en fr\n"))
    with pytest.raises(ValueError, match=r"k:2: duplicate segment 's1'"):
        read_multiclass_key(write(tmp_path, "k", "s1 en\ns1 fr\n"))


segment_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-.", min_size=1, max_size=10)
llh_values = st.floats(allow_nan=False, width=64)


@given(st.data())
def test_writers_round_trip_bit_identically(tmp_path_factory, data):
    task = data.draw(st.sampled_from(["Plenty", "Empty"]))
    m = len(ALBAYZIN_CLASSES[task])
    segs = data.draw(st.lists(segment_names, min_size=1, max_size=20, unique=True))
    llh = np.array(
        data.draw(
            st.lists(
                st.lists(llh_values, min_size=m, max_size=m), min_size=len(segs), max_size=len(segs)
            )
        )
    )
    folder = tmp_path_factory.mktemp("mc")
    write_albayzin_scores(folder / "a", np.array(segs), llh, task, "Open", chunk_size=3)
    back = read_albayzin_scores(folder / "a")
    assert (back.task, back.condition) == (task, "Open")
    assert names(back.segments) == segs
    np.testing.assert_array_equal(back.llh.view(np.uint64), llh.view(np.uint64))
    classes = [f"c{j}" for j in range(m)]
    write_multiclass_scores(folder / "g", np.array(segs), llh, classes)
    back = read_multiclass_scores(folder / "g")
    assert back.classes == tuple(classes)
    np.testing.assert_array_equal(back.llh.view(np.uint64), llh.view(np.uint64))


def test_writer_checks(tmp_path):
    segs = np.array(["a", "b"])
    with pytest.raises(ValueError, match="the Empty task has 5 classes"):
        write_albayzin_scores(tmp_path / "x", segs, np.zeros((2, 7)), "Empty", "Open")
    with pytest.raises(ValueError, match="task must be"):
        write_albayzin_scores(tmp_path / "x", segs, np.zeros((2, 5)), "Full", "Open")
    with pytest.raises(ValueError, match="condition must be"):
        write_albayzin_scores(tmp_path / "x", segs, np.zeros((2, 5)), "Empty", "Half")
    with pytest.raises(ValueError, match=r"llh\[1, 2\] is NaN"):
        write_multiclass_scores(tmp_path / "x", segs, [[0, 0, 0], [0, 0, np.nan]], "xyz")
    with pytest.raises(ValueError, match="3 class names for 2 llh columns"):
        write_multiclass_scores(tmp_path / "x", segs, np.zeros((2, 2)), "xyz")
    with pytest.raises(ValueError, match=r"segments\[1\] = 'b c' cannot be written"):
        write_multiclass_scores(tmp_path / "x", np.array(["a", "b c"]), np.zeros((2, 1)), ["x"])
    assert not (tmp_path / "x").exists() or (tmp_path / "x").stat().st_size == 0


def test_plan_example_written_back(tmp_path):
    s = read_albayzin_scores(write(tmp_path, "s", FIGURE_1))
    write_albayzin_scores(tmp_path / "o", s.segments, s.llh, s.task, s.condition)
    lines = (tmp_path / "o").read_text().splitlines()
    assert lines[3] == "Plenty Closed qqtzzii 0.1799 -5.5911 -0.0795 0.1005 0.1871 -6.998 0.0"
    assert isinstance(s, MulticlassScores)


def test_multiclass_format_is_sniffed_like_the_readers_split(tmp_path):
    from focal.io import multiclass_format

    albayzin = tmp_path / "a.txt"
    albayzin.write_bytes(b"\xef\xbb\xbf# comment\n\n\tplenty,Closed seg1 1 2 3 4 5 6 0\n")
    generic = tmp_path / "g.txt"
    generic.write_text("segment en fr\ns1 0.1 0.2\n")
    empty = tmp_path / "e.txt"
    empty.write_text("")
    assert multiclass_format(albayzin) == "albayzin"
    assert multiclass_format(generic) == "multiclass"
    assert multiclass_format(empty) == "multiclass"


@pytest.mark.parametrize("missing", ["error", "drop"])
def test_a_segment_given_twice_in_memory_is_refused_not_matched_once(missing):
    """As for binary trials: a repeated segment of MulticlassScores / MulticlassKey made in
    memory was matched to its first row silently, or called absent from the key.
    """
    from focal.io import MulticlassKey, MulticlassScores, align_multiclass, align_multiclass_scores

    key = MulticlassKey(np.array([b"s1", b"s2"]), np.array(["en", "fr"]))
    llh = np.arange(6.0).reshape(3, 2)
    twice = MulticlassScores(np.array([b"s1", b"s2", b"s1"]), llh, ("en", "fr"))
    with pytest.raises(ValueError, match=r"^scores: duplicate segment 's1': rows 0 and 2"):
        align_multiclass(key, twice, missing=missing)
    with pytest.raises(ValueError, match=r"^scores: duplicate segment 's1': rows 0 and 2"):
        align_multiclass_scores(twice, missing=missing)
    key_twice = MulticlassKey(np.array([b"s1", b"s1"]), np.array(["en", "fr"]))
    once = MulticlassScores(np.array([b"s1"]), llh[:1], ("en", "fr"))
    with pytest.raises(ValueError, match=r"^key: duplicate segment 's1': rows 0 and 1"):
        align_multiclass(key_twice, once, missing=missing)


def test_one_long_segment_among_short_ones_is_refused_with_its_line(tmp_path):
    # The segments are returned at the width of the longest: one of 4,000 bytes among 70,000
    # short ones would take 267 MiB; a long one of 40 bytes is fine.
    segments = [f"s{i}" for i in range(70_000)]
    segments[5000] = "x" * 4000
    scores = write(tmp_path, "m", "segment a b\n" + "".join(f"{s} 1 2\n" for s in segments))
    key = write(tmp_path, "k", "".join(f"{s} a\n" for s in segments))
    with pytest.raises(ValueError, match=r"m:5002: an id of 4000 bytes among much shorter"):
        read_multiclass_scores(scores)
    with pytest.raises(ValueError, match=r"k:5001: an id of 4000 bytes among much shorter"):
        read_multiclass_key(key)
    segments[5000] = "x" * 40
    scores = write(tmp_path, "m", "segment a b\n" + "".join(f"{s} 1 2\n" for s in segments))
    assert read_multiclass_scores(scores).segments[5000] == b"x" * 40
