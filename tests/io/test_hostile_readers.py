"""Hostile input to every reader: a clear error naming the file and line, or the right result,
always in linear time and bounded memory (each case runs in a child under CPU and memory limits,
so a regression to super-linear behaviour fails instead of hanging).
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import focal.std as std
from focal import io
from focal.io import read_limits
from tests._support.limits import expect_error, run_limited

# ------------------------------------------------------------------------ the binary readers

BINARY_READERS = {
    "scores": io.read_scores,
    "key": io.read_key,
    "stream": lambda p: sum(len(c) for c in io.iter_score_chunks([p], threads=0)),
}
MULTICLASS_READERS = {
    "generic": io.read_multiclass_scores,
    "segment-key": io.read_multiclass_key,
}


def _write(folder, name, data: bytes):
    path = folder / name
    path.write_bytes(data)
    return str(path)


def _third(reader):  # a record's third field: a score or a label
    return b"target" if reader == "key" else b"1.5"


def _attacks(third):
    """(name, file bytes, expected error) for a 'model test X' reader."""
    ok = b"m1 t1 " + third + b"\n"
    return [
        ("one 50 MB line", b"a" * 50_000_000, r":1: line longer than 1048576 bytes"),
        ("line after records", ok * 1000 + b"b" * 5_000_000, r":1001: line longer than"),
        (
            "40k-character id",
            ok + b"x" * 40_000 + b" t2 " + third + b"\n",
            r":2: id longer than 4096 characters",
        ),
        (
            "10k id, many short ids",
            ok
            + b"y" * 10_000
            + b" t "
            + third
            + b"\n"
            + b"".join(b"m%d t %s\n" % (i, third) for i in range(20_000)),
            r":2: id longer than 4096",
        ),
        ("NUL first", b"\x00" * 10_000_000, r":1: NUL byte"),
        ("NUL on line 3", ok * 2 + b"m3 t\x003 " + third + b"\n", r":3: NUL byte"),
        ("NUL without newline", ok + b"\x00" * 3_000_000, r":2: NUL byte"),
        ("invalid UTF-8", ok + b"m\xff t2 " + third + b"\n", r":2: not a UTF-8 text file"),
        ("truncated UTF-8", ok + b"m\xc3", r":2: not a UTF-8 text file"),
        ("duplicated trial", ok + b"m2 t2 " + third + b"\n" + ok, r":3: duplicate trial"),
        ("'#'-id", ok + b"#m2 t2 " + third + b"\n", r":2: a line starting with '#'"),
        ("empty", b"", r"no trials found"),
        ("only blank and comments", b"\n\n# x\r\n  \t\n", r"no trials found"),
        ("two fields", ok + b"m2 t2\n", r":2: expected 3 fields"),
    ]


BINARY_CASES = [
    (reader, *attack)
    for reader in BINARY_READERS
    for attack in _attacks(_third(reader))
    if not (reader == "stream" and attack[0] == "duplicated trial")
]


def _read(reader, path):
    value = BINARY_READERS[reader](path)
    return value if isinstance(value, int) else len(value)


@pytest.mark.parametrize(
    "reader, name, data, match", BINARY_CASES, ids=[f"{r}-{n}" for r, n, _, _ in BINARY_CASES]
)
def test_binary_readers_refuse_hostile_files_fast(tmp_path, reader, name, data, match):
    path = _write(tmp_path, "f", data)
    message = expect_error(run_limited(_read, reader, path, cpu_seconds=10, memory_mb=300), match)
    assert path in message or "no trials" in message


@pytest.mark.parametrize("reader", list(BINARY_READERS))
def test_dev_zero_and_urandom_fail_at_once(reader):
    for device in ("/dev/zero", "/dev/urandom"):
        if not os.path.exists(device):
            pytest.skip(f"no {device}")
        outcome = run_limited(_read, reader, device, cpu_seconds=3, memory_mb=200, wall_seconds=10)
        expect_error(outcome, rf"{device}:\d+: (NUL byte|not a UTF-8)")


@pytest.mark.parametrize(
    "token, match",
    [
        (b"1e400", r"'1e400' is out of the float64 range"),
        (b"-1e400", r"out of the float64 range"),
        (b"1" * 400, r"out of the float64 range"),
        (b"nan", r"is NaN"),
        (b"NaN", r"is NaN"),
        (b"-nan", r"is NaN"),
        (b"+NAN", r"is NaN"),
        (b"1_000", r"'1_000' is not a number"),
        (b"0x1p3", r"is not a number"),
        (b"1e5e5", r"is not a number"),
        (b"--1", r"is not a number"),
        (b"\xd9\xa3", r"is not a number"),  # an Arabic-Indic digit: float() reads 3
    ],
)
def test_score_tokens_that_are_errors(tmp_path, token, match):
    path = _write(tmp_path, "s", b"m1 t1 1\nm2 t2 " + token + b"\n")
    with pytest.raises(ValueError, match=rf"{re.escape(path)}:2: score .*{match}"):
        io.read_scores(path)


@pytest.mark.parametrize(
    "token, value",
    [
        (b"inf", np.inf),
        (b"-inf", -np.inf),
        (b"+Infinity", np.inf),
        (b"-INFINITY", -np.inf),
        (b"1e308", 1e308),
        (b"4.9e-324", 5e-324),
        (b"1e-400", 0.0),
        (b"-0", -0.0),
    ],
)
def test_score_tokens_read_right(tmp_path, token, value):
    path = _write(tmp_path, "s", b"m1 t1 " + token + b"\n")
    got = io.read_scores(path).scores[0]
    assert got == value and np.signbit(got) == np.signbit(value)


def test_bom_crlf_commas_and_no_final_newline_read_right(tmp_path):
    path = _write(tmp_path, "s", b"\xef\xbb\xbfa,b,1.5\r\n\r\nc\td\t-2\r\n# note\r\ne f 3")
    got = io.read_scores(path)
    assert got.models.tolist() == [b"a", b"c", b"e"]
    assert got.scores.tolist() == [1.5, -2.0, 3.0]


def test_a_lone_hash_starts_a_comment_and_ids_starting_with_hash_are_not_skipped(tmp_path):
    path = _write(tmp_path, "s", b"# model test score\nm1 t1 1\n#m2 t2 2\n")
    with pytest.raises(ValueError, match=r":3: a line starting with '#' has the 3 fields"):
        io.read_scores(path)
    assert len(io.read_scores(_write(tmp_path, "t", b"# model test score\nm1 t1 1\n"))) == 1


def test_missing_trials_are_named(tmp_path):
    key = io.read_key(_write(tmp_path, "k", b"a b target\nc d nontarget\n"))
    scores = io.read_scores(_write(tmp_path, "s", b"a b 1\n"))
    with pytest.raises(ValueError, match=r"1 trial\(s\) of the key .* have no score.*\(c, d\)"):
        io.align_trials(key, scores)


def test_the_id_limit_is_configurable_and_counts_characters(tmp_path):
    ids = "é" * 3000  # 3000 characters, 6000 bytes: within the default limit
    path = _write(tmp_path, "s", f"{ids} t 1\n".encode())
    assert io.read_scores(path).models[0].decode() == ids
    with read_limits(max_id_length=100):
        with pytest.raises(ValueError, match=r":1: id longer than 100 characters"):
            io.read_scores(path)
    with read_limits(max_line_bytes=1000), pytest.raises(ValueError, match="line longer"):
        io.read_scores(path)
    with pytest.raises(ValueError, match="max_id_length must be a positive integer"):
        with read_limits(max_id_length=0):
            pass


def test_long_ids_are_read_exactly_near_the_limit(tmp_path):
    rng = np.random.default_rng(0)
    ids = [bytes(rng.integers(97, 123, size=k, dtype=np.uint8)) for k in (1, 7, 8, 9, 200, 4096)]
    text = b"".join(i + b" t%d %d\n" % (n, n) for n, i in enumerate(ids))
    got = io.read_scores(_write(tmp_path, "s", text))
    assert got.models.tolist() == ids


# ------------------------------------------------------------------------ multiclass readers


def _multiclass_attacks(reader):
    head = b"" if reader == "segment-key" else b"segment a b\n"
    ok = b"s1 a\n" if reader == "segment-key" else b"s1 1 2\n"
    return [
        ("one 50 MB line", b"a" * 50_000_000, r":1: line longer than"),
        ("40k id", head + ok + b"x" * 40_000 + ok[2:], r"id longer than 4096"),
        ("NUL", head + ok + b"\x00" * 1000, r"NUL byte"),
        ("invalid UTF-8", head + ok + b"\xfe" + ok, r"not a UTF-8 text file"),
        ("duplicate", head + ok + ok, r"duplicate segment"),
    ]


MULTICLASS_CASES = [(r, *a) for r in MULTICLASS_READERS for a in _multiclass_attacks(r)]


def _read_multiclass(reader, path):
    return len(MULTICLASS_READERS[reader](path))


@pytest.mark.parametrize(
    "reader, name, data, match",
    MULTICLASS_CASES,
    ids=[f"{r}-{n}" for r, n, _, _ in MULTICLASS_CASES],
)
def test_multiclass_readers_refuse_hostile_files_fast(tmp_path, reader, name, data, match):
    path = _write(tmp_path, "f", data)
    expect_error(run_limited(_read_multiclass, reader, path), match)


def test_albayzin_reader_refuses_nan_and_overflow(tmp_path):
    line = b"Plenty Closed s1 1 2 3 4 5 6 1e400\n"
    with pytest.raises(ValueError, match=r":1: log-likelihood '1e400' is out of the float64"):
        io.read_albayzin_scores(_write(tmp_path, "a", line))


# ------------------------------------------------------------------------ STD readers

STD_TEXT = {
    "rttm": (std.read_rttm, b"LEXEME f 1 0.5 0.2 q1 lex <NA> <NA>\n"),
    "detections": (std.read_detection_table, b"q1 f 0.5 0.2 1.5 YES\n"),
    "reference": (std.read_reference_table, b"q1 f 0.5 0.2\n"),
    "audio": (std.read_audio_table, b"f 0 10\n"),
    "queries": (std.read_query_table, b"q1 some text\n"),
}
STD_XML = {
    "ecf": (std.read_ecf, b'<ecf><excerpt audio_filename="f" tbeg="0" dur="1"/></ecf>'),
    "tlist": (
        std.read_tlist,
        b'<termlist><term termid="q"><termtext>x</termtext></term></termlist>',
    ),
    "stdlist": (
        std.read_stdlist,
        b'<stdlist><detected_termlist termid="q"><term file="f" '
        b'tbeg="0" dur="1" score="1" decision="YES"/>'
        b"</detected_termlist></stdlist>",
    ),
}


def _read_std(table, name, path):
    reader = {**STD_TEXT, **STD_XML}[name][0]
    result = reader(path)
    return len(result) if hasattr(result, "__len__") else 1


STD_CASES = (
    [
        (n, "50 MB line", b"a" * 50_000_000, r"line longer than|no XML element")
        for n in list(STD_TEXT) + list(STD_XML)
    ]
    + [(n, "NUL", b"\x00" * 5_000_000, r"NUL byte") for n in list(STD_TEXT) + list(STD_XML)]
    + [(n, "invalid UTF-8", STD_TEXT[n][1] + b"\xff\xfe\n", r":2: not a UTF-8") for n in STD_TEXT]
    + [
        (
            "ecf",
            "50 MB attribute",
            b'<ecf><excerpt audio_filename="' + b"a" * 50_000_000,
            r"no XML element",
        )
    ]
)


@pytest.mark.parametrize(
    "name, attack, data, match", STD_CASES, ids=[f"{n}-{a}" for n, a, _, _ in STD_CASES]
)
def test_std_readers_refuse_hostile_files_fast(tmp_path, name, attack, data, match):
    path = _write(tmp_path, "f", data)
    expect_error(run_limited(_read_std, None, name, path, cpu_seconds=10, memory_mb=300), match)


@pytest.mark.parametrize("name", list(STD_TEXT) + list(STD_XML))
def test_std_readers_fail_at_once_on_dev_zero(name):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    expect_error(
        run_limited(
            _read_std, None, name, "/dev/zero", cpu_seconds=3, memory_mb=200, wall_seconds=10
        ),
        r"NUL byte",
    )


BOMB = (
    b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    + b"".join(
        b'<!ENTITY lol%d "%s">' % (i, b"&lol%d;" % (i - 1) * 10 if i else b"&lol;" * 10)
        for i in range(10)
    )
    + b"]><ecf>&lol9;</ecf>"
)
EXTERNAL = (
    b'<?xml version="1.0"?><!DOCTYPE ecf [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
    b'<ecf><excerpt audio_filename="&xxe;" tbeg="0" dur="1"/></ecf>'
)


@pytest.mark.parametrize("name", list(STD_XML))
@pytest.mark.parametrize("data", [BOMB, EXTERNAL], ids=["billion-laughs", "external-entity"])
def test_xml_bombs_and_external_entities_are_refused(tmp_path, name, data):
    path = _write(tmp_path, "x", data)
    expect_error(
        run_limited(_read_std, None, name, path, cpu_seconds=5, memory_mb=200),
        r"DOCTYPE .* refused",
    )


@pytest.mark.parametrize(
    "line, match",
    [
        (b"q1 f 1_000 0.2 1.5 YES\n", r"d:1: tbeg '1_000' is not a number"),
        (b"q1 f -0.5 0.2 1.5 YES\n", r"d:1: tbeg must be >= 0 seconds"),
        (b"q1 f inf 0.2 1.5 YES\n", r"d:1: tbeg must be a finite number"),
        (b"q1 f 0.5 -0.2 1.5 YES\n", r"d:1: dur must be >= 0 seconds"),
        (b"q1 f 0.5 0.2 1e400 YES\n", r"d:1: score '1e400' is out of the float64 range"),
        (b"q1 f 0.5 0.2 nan YES\n", r"d:1: score is NaN"),
        (b"q1 f 0.5 0.2 1_5 YES\n", r"d:1: score '1_5' is not a number"),
        (b"q1 f 0.5 0.2 1.5 MAYBE\n", r"d:1: decision must be YES or NO, got 'MAYBE'"),
        (b"#q1 f 0.5 0.2 1.5 YES\n", r"d:1: a line starting with '#q1' has the fields"),
    ],
)
def test_std_detection_numbers_and_comments(tmp_path, line, match):
    path = _write(tmp_path, "d", b"# query file tbeg dur score decision\n" + line)
    with pytest.raises(ValueError, match=match.replace(":1:", ":2:")):
        std.read_detection_table(path)


def test_std_spelled_infinity_score_and_a_lone_hash_comment_read_right(tmp_path):
    path = _write(tmp_path, "d", b"# a comment with many fields a b c\nq1 f 0.5 0.2 -inf NO\n")
    got = std.read_detection_table(path)
    assert got.score.tolist() == [-np.inf] and got.tbeg.tolist() == [0.5]


def test_std_xml_negative_start_and_underscores(tmp_path):
    ecf = b'<ecf><excerpt audio_filename="f" tbeg="-1" dur="1"/></ecf>'
    with pytest.raises(ValueError, match=r"<excerpt> #1: tbeg must be >= 0"):
        std.read_ecf(_write(tmp_path, "e", ecf))
    ecf = b'<ecf><excerpt audio_filename="f" tbeg="0" dur="1_0"/></ecf>'
    with pytest.raises(ValueError, match=r"<excerpt> #1: dur '1_0' is not a number"):
        std.read_ecf(_write(tmp_path, "e", ecf))


def test_a_class_name_longer_than_the_id_limit_is_refused(tmp_path):
    path = _write(tmp_path, "m", b"segment a " + b"b" * 5000 + b"\ns1 1 2\n")
    with pytest.raises(ValueError, match=r":1: id longer than 4096 characters"):
        io.read_multiclass_scores(path)


def _lines(n):
    return b"".join(b"m%d t%d 1\n" % (i, i) for i in range(n))


@pytest.mark.parametrize("where", ["last", "first"])
def test_one_long_id_does_not_widen_every_id_of_the_file(tmp_path, where):
    """Ids share the width of the longest: 400k ids widened to 4000 bytes would take 1.5 GB."""
    long = b"x" * 4000 + b" t 2\n"
    body = _lines(400_000)
    path = _write(tmp_path, "s", body + long if where == "last" else long + body)
    line = 400_001 if where == "last" else 1
    expect_error(
        run_limited(io.read_scores, path, cpu_seconds=10, memory_mb=400),
        rf":{line}: an id of 4000 bytes among much shorter ones",
    )
    # a few thousand trials with a long id are fine
    assert len(io.read_scores(_write(tmp_path, "t", _lines(5000) + long))) == 5001
