"""The error types: bad parameters are ValueError and TypeError; file errors carry path and line."""

import pickle

import pytest

from focal.core.validation import check_int, check_non_negative, check_positive, check_probability
from focal.exceptions import FileFormatError, InvalidParameterError


def test_invalid_parameter_error_is_both_value_and_type_error():
    err = InvalidParameterError("p must be ...")
    assert isinstance(err, ValueError) and isinstance(err, TypeError)


@pytest.mark.parametrize(
    "call",
    [
        lambda: check_probability(1.0),
        lambda: check_probability("0.5"),
        lambda: check_positive(-1.0, "c"),
        lambda: check_positive(None, "c"),
        lambda: check_non_negative(True, "reg"),
        lambda: check_int(2.5, "n"),
    ],
)
def test_parameter_checks_raise_it(call):
    for kind in (InvalidParameterError, ValueError, TypeError):
        with pytest.raises(kind):
            call()


def test_file_format_error_message_and_attributes():
    err = FileFormatError("dir/scores.txt", 12, "expected 3 fields, got 2")
    assert str(err) == "dir/scores.txt:12: expected 3 fields, got 2"
    assert (err.path, err.line, err.message) == ("dir/scores.txt", 12, "expected 3 fields, got 2")
    assert isinstance(err, ValueError) and not isinstance(err, TypeError)
    whole = FileFormatError("e.xml", None, "<excerpt> #1: missing attribute(s) dur")
    assert str(whole) == "e.xml: <excerpt> #1: missing attribute(s) dur" and whole.line is None
    back = pickle.loads(pickle.dumps(err))  # crosses process boundaries (joblib, dask)
    assert (type(back), str(back), back.line) == (FileFormatError, str(err), 12)


def test_readers_raise_it_with_the_line(tmp_path):
    from focal.io import read_scores
    from focal.std import read_detection_table, read_rttm, read_stdlist

    bad = tmp_path / "s.txt"
    bad.write_text("m t 1.5\nm u oops\n")
    with pytest.raises(FileFormatError) as err:
        read_scores(bad)
    assert (err.value.path, err.value.line) == (str(bad), 2)
    assert str(err.value).startswith(f"{bad}:2: ")
    table = tmp_path / "d.txt"
    table.write_text("# query file tbeg dur score decision\nq f 1 1 0.5 YES\nq f 1 1\n")
    with pytest.raises(FileFormatError) as err:
        read_detection_table(table)
    assert err.value.line == 3 and "has 6 fields, got 4" in err.value.message
    rttm = tmp_path / "r.rttm"
    rttm.write_text(";; c\nLEXEME f 1 0 -1 q lex s <NA>\n")
    with pytest.raises(FileFormatError, match=r"r.rttm:2: tdur must be >= 0 seconds, got '-1'"):
        read_rttm(rttm)
    xml = tmp_path / "s.xml"
    xml.write_text(
        "<stdlist><detected_termlist termid='q'><term file='f'/></detected_termlist></stdlist>"
    )
    with pytest.raises(FileFormatError, match=r"s.xml: <term> #1 .*missing attribute") as err:
        read_stdlist(xml)
    assert err.value.line is None
    xml.write_text("<stdlist>\n<detected_termlist termid='q'></stdlist>")
    with pytest.raises(FileFormatError, match=r"s.xml:2: not well-formed XML"):
        read_stdlist(xml)


def test_a_missing_file_stays_an_os_error_that_names_the_file(tmp_path):
    from focal.io import read_scores

    path = tmp_path / "absent.scores"
    with pytest.raises(FileNotFoundError) as err:
        read_scores(path)
    assert str(err.value) == f"{path}: cannot open: No such file or directory"
    assert err.value.filename == str(path) and err.value.errno == 2
    assert isinstance(err.value, ValueError)  # what these errors were before
    back = pickle.loads(pickle.dumps(err.value))
    assert isinstance(back, FileNotFoundError) and str(back) == str(err.value)
    with pytest.raises(IsADirectoryError, match="cannot open"):
        read_scores(tmp_path)
