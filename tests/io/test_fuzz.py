"""Fuzzing: truncated and mutated files make every reader raise ValueError and nothing else."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from focal.io import (
    iter_score_chunks,
    read_albayzin_scores,
    read_key,
    read_multiclass_key,
    read_multiclass_scores,
    read_scores,
)
from focal.workflows import apply_to_files

VALID = {
    "scores": (
        b"# system 1\nspk01 seg001 -1.25\nspk01 seg002 3.5e-2\n\nspk02,seg001,+7\n"
        b"spk02\tseg002\t-0.0\r\nspk03 seg003 1e300\n"
    ),
    "key": b"spk01 seg001 target\nspk01 seg002 nontarget\nspk02 seg001 tar\nspk02 seg002 0\n",
    "albayzin": (
        b"Plenty Closed xxyyffaa -0.5678 -0.0034 0.6723 1.4332 -7.0032 5.0065 0.0000\n"
        b"Plenty Closed gghhjbb 0.3421 -0.9734 -1.5671 -3.0087 -9.3215 -3.7666 0.0000\n"
    ),
    "multiclass": b"segment en fr de\nseg1 -1.5 0.25 3\nseg2,0,1e-3,-2\n",
    "mckey": b"seg1 en\nseg2 de\n",
}


def _stream_binary(path):
    for _ in iter_score_chunks([path, path], chunk_size=2, block_bytes=16):
        pass


def _apply_multiclass(path):
    apply_to_files(lambda X: X[:, :3], [path], str(path) + ".out", kind="multiclass")


READERS = {
    "scores": [read_scores, lambda p: read_scores(p, block_bytes=5), _stream_binary],
    "key": [read_key],
    "albayzin": [
        read_albayzin_scores,
        lambda p: list(iter_score_chunks([p], kind="albayzin", block_bytes=8)),
    ],
    "multiclass": [read_multiclass_scores, _apply_multiclass],
    "mckey": [read_multiclass_key],
}

# bytes that matter to the parsers: separators, signs, digits, letters of inf/nan/e, '#',
# NUL, a lone UTF-8 continuation byte, CR, the start of a multi-byte character
INTERESTING = [
    b" ",
    b",",
    b"\t",
    b"\n",
    b"\r",
    b"-",
    b"+",
    b".",
    b"e",
    b"E",
    b"0",
    b"9",
    b"#",
    b"\x00",
    b"\x80",
    b"\xc3",
    b"n",
    b"a",
    b"i",
    b"f",
    b"_",
    b"x",
    b"\xef\xbb\xbf",
]


@st.composite
def mutated(draw):
    kind = draw(st.sampled_from(sorted(VALID)))
    data = bytearray(VALID[kind])
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["replace", "insert", "delete", "truncate", "duplicate"]))
        if not data:
            break
        i = draw(st.integers(0, len(data) - 1))
        if op == "replace":
            data[i : i + 1] = draw(st.sampled_from(INTERESTING))
        elif op == "insert":
            data[i:i] = draw(st.one_of(st.sampled_from(INTERESTING), st.binary(max_size=4)))
        elif op == "delete":
            del data[i : i + draw(st.integers(1, 8))]
        elif op == "truncate":
            del data[i:]
        else:
            j = draw(st.integers(i, len(data)))
            data[j:j] = data[i:j]
    return kind, bytes(data)


def read_with_every_reader(folder, kind, data):
    """Each reader of ``kind`` either reads ``data`` or raises a ValueError naming the file."""
    path = folder / "file.txt"
    path.write_bytes(data)
    for reader in READERS[kind]:
        try:
            reader(path)
        except ValueError as exc:
            assert str(path) in str(exc)


@given(mutated())
@settings(max_examples=400)
def test_mutated_files_raise_only_value_error(tmp_path_factory, case):
    kind, data = case
    read_with_every_reader(tmp_path_factory.mktemp("fuzz"), kind, data)


@given(st.binary(max_size=200), st.sampled_from(sorted(VALID)))
@settings(max_examples=200)
def test_random_bytes_raise_only_value_error(tmp_path_factory, data, kind):
    read_with_every_reader(tmp_path_factory.mktemp("fuzz"), kind, data)


def test_the_unmutated_files_are_valid(tmp_path):
    for kind, data in VALID.items():
        path = tmp_path / kind
        path.write_bytes(data)
        for reader in READERS[kind]:
            reader(path)
    scores = read_scores(tmp_path / "scores")
    np.testing.assert_array_equal(scores.scores, [-1.25, 0.035, 7.0, -0.0, 1e300])
