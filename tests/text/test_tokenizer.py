"""The block reader and the tokenizer against independent oracles: Python's own line and
field splitting, the general tokenizer for its single-separator fast path, byte slicing for
the id gather.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from focal._text import fields as _text
from focal._text.blocks import FRONT, iter_blocks, read_limits
from focal._text.fields import gather_ids
from focal.exceptions import FileFormatError

K = 3  # fields of a record
LAYOUT = "'model test score'"
TOKENS = [b"a", b"spk12345", b"seg00000001", b"-2.345678", b"1e3", b"s\xc3\xa9g", b"x" * 20]
SEPARATORS = [b" ", b"\t", b",", b"  ", b" , ", b"\x0b", b"\r"]


@st.composite
def text_files(draw):
    """Lines of records (mostly single-space separated, as written by focal and BOSARIS), with
    random separators, blank and comment lines, CR LF, a wrong field count now and then, and
    maybe no line feed at the end.
    """
    lines = []
    for _ in range(draw(st.integers(0, 30))):
        kind = draw(st.sampled_from(["record"] * 12 + ["blank", "comment", "glued", "short"]))
        if kind == "blank":
            lines.append(draw(st.sampled_from([b"", b" ", b"\t", b","])))
        elif kind == "comment":
            lines.append(draw(st.sampled_from([b"# note", b"#", b"  # a b", b"#x"])))
        elif kind == "glued":  # '#x y 1': an id starting with '#' is refused, never skipped
            lines.append(b"#x y 1")
        else:
            n = K if kind == "record" else draw(st.sampled_from([1, 2, 4]))
            fields = [draw(st.sampled_from(TOKENS)) for _ in range(n)]
            plain = draw(st.integers(0, 3)) > 0
            seps = [b" " if plain else draw(st.sampled_from(SEPARATORS)) for _ in range(n - 1)]
            line = fields[0] + b"".join(s + f for s, f in zip(seps, fields[1:]))
            if not plain:
                line = draw(st.sampled_from([b"", b" ", b","])) + line
                line += draw(st.sampled_from([b"", b" ", b"\r", b" ,"]))
            lines.append(line)
    end = draw(st.sampled_from([b"\n", b"\n", b"\r\n"]))  # LF or CR LF line ends
    text = b"".join(line + end for line in lines)
    if text and draw(st.booleans()):
        text = text[:-1]
    return text


def oracle(text):
    """(records as (line, [fields])), lines that are errors) by Python's splitting."""
    records, bad = [], []
    lines = text.split(b"\n")
    if text.endswith(b"\n") or not text:
        lines.pop()
    for number, line in enumerate(lines, 1):
        fields = [f for f in re.split(rb"[\x00-\x20,]+", line) if f]
        if not fields:
            continue
        if fields[0].startswith(b"#"):
            if len(fields) == K and len(fields[0]) > 1:
                bad.append(number)
            continue
        if len(fields) != K:
            bad.append(number)
        records.append((number, fields))
    return records, bad


def _records(fields):
    """(line, [field bytes]) of every record of a Fields."""
    data = fields.data
    return [
        (int(line), [data[s : s + n].tobytes() for s, n in zip(starts, lengths)])
        for line, starts, lengths in zip(fields.lines, fields.starts, fields.lengths)
    ]


@pytest.mark.parametrize("asked", ["in order", "last first", "shuffled"])
def test_blocks_are_numbered_whatever_order_they_are_asked_in(tmp_path, asked):
    # a block's first line comes from the block before it, counted when first asked for (by
    # the worker that splits it, usually); the reading thread numbers the blocks a few behind
    path = tmp_path / "lines.txt"
    lines = ["x" * (i % 13) + " 1\n" for i in range(3000)]
    path.write_text("".join(lines))
    blocks = list(iter_blocks(path, 100))
    order = list(range(len(blocks)))
    if asked == "last first":
        order.reverse()
    elif asked == "shuffled":
        np.random.default_rng(0).shuffle(order)
    first = {i: blocks[i].first_line for i in order}
    counts = [b.body.tobytes().count(b"\n") for b in blocks]
    assert [first[i] for i in range(len(blocks))] == list(np.cumsum([1] + counts[:-1]))
    assert sum(counts) == len(lines) and len(blocks) > 100


def _same_fields(a, b):
    assert np.array_equal(a.starts, b.starts)
    assert np.array_equal(a.lengths, b.lengths)
    assert np.array_equal(a.lines, b.lines)


@given(text_files(), st.sampled_from([3, 7, 40, 200, 1 << 20]))
@settings(max_examples=100, deadline=None)
def test_blocks_and_fields_match_python_splitting(tmp_path_factory, text, block_bytes):
    path = tmp_path_factory.getbasetemp() / "tokenizer.txt"
    path.write_bytes(text)
    expected, bad = oracle(text)
    got = []
    lines_so_far = 1
    try:
        for block in iter_blocks(path, block_bytes):
            assert block.first_line == lines_so_far
            body = block.body.tobytes()
            newlines = [i + FRONT for i, c in enumerate(body) if c == 10]
            fast = _text._split_single_separators(block, K)  # None: not for the fast path
            try:
                general = _text._split_general(block, K, LAYOUT)
            except FileFormatError:
                assert fast is None
                raise
            if fast is not None:  # the fast path agrees with the general one, field for field
                _same_fields(fast, general)
            assert block.newlines.tolist() == newlines
            assert block.n_lines == len(newlines) + (not body.endswith(b"\n"))
            lines_so_far += block.n_lines
            got.extend(_records(_text.split_fields(block, K, LAYOUT)))
    except FileFormatError as exc:
        assert exc.line in bad
        return
    assert not bad
    assert got == expected
    assert lines_so_far - 1 == text.count(b"\n") + (not text.endswith(b"\n") and bool(text))


@given(text_files(), st.sampled_from([3, 40, 1 << 20]), st.booleans())
@settings(max_examples=100, deadline=None)
def test_lines_match_python_splitting(tmp_path_factory, text, block_bytes, commas):
    """split_lines: each line's fields are Python's split of the line (at white space and,
    with ``commas``, commas), line numbers included, across block boundaries.
    """
    path = tmp_path_factory.getbasetemp() / "lines.txt"
    path.write_bytes(text)
    lines = text.split(b"\n")
    if text.endswith(b"\n") or not text:
        lines.pop()
    separators = rb"[\x00-\x20,]+" if commas else rb"[\x00-\x20]+"
    expected = [[f for f in re.split(separators, line) if f] for line in lines]
    got = []
    for block in iter_blocks(path, block_bytes):
        found = _text.split_lines(block, commas)
        assert found.counts.size == block.n_lines and found.first_line == len(got) + 1
        for i in range(block.n_lines):
            got.append([found.text(i, k).encode() for k in range(int(found.counts[i]))])
            starts = found.first_field_starts_with(b"#")[i]
            assert starts == bool(got[-1] and got[-1][0].startswith(b"#"))
    assert got == expected


@pytest.mark.parametrize(
    "sep, end",
    [(b" ", b"\n"), (b"\t", b"\n"), (b",", b"\n"), (b" ", b"\r\n"), (b" ", b" \n"), (b",", b",\n")],
)
def test_the_fast_path_takes_the_common_file_and_finds_its_lines(tmp_path, sep, end):
    path = tmp_path / "s.txt"
    text = b"spk1 seg1 -2.5\nspk22 seg333 1e3\n".replace(b" ", sep).replace(b"\n", end)
    path.write_bytes(text * 50)
    (block,) = iter_blocks(path)
    fields = _text._split_single_separators(block, K)
    assert fields is not None
    assert block.n_lines == 100
    assert block._newlines.tolist() == [i + FRONT for i, c in enumerate(block.body) if c == 10]
    assert fields.lengths[:2].tolist() == [[4, 4, 4], [5, 6, 3]]
    assert fields.lines.tolist() == list(range(1, 101))


@pytest.mark.parametrize(
    "text",
    [
        b"a b 1\r\r\n",  # two carriage returns
        b"a b 1\rc d 2\r\n",  # a carriage return alone
        b"a b 1\n\nc d 2\n",  # a blank line
        b"a  b 1\n",  # two separators in a row
        b"a, b,1\n",  # a comma and a space
        b"# note\na b 1\n",  # a comment
        b" a b 1\n",  # a leading blank
        b"a b 1\nc d 2",  # no final line feed: the last line is a block of its own
        b"a b\nc d 2 3\n",  # 2 and 4 fields: as many white-space bytes as 2 records
        b"a b\nc\n",  # 2 and 1 fields: every third white-space byte a line feed
        b"a b 1 c\n",  # 4 fields: a fourth separator, not right before the line feed
        b"a  b\n",  # 2 fields, 3 white-space bytes: an empty field between them
        b" a b\n",  # 2 fields after a leading blank
    ],
)
def test_the_fast_path_declines_what_it_cannot_read(tmp_path, text):
    path = tmp_path / "s.txt"
    path.write_bytes(text)
    last = list(iter_blocks(path))[-1]
    assert _text._split_single_separators(last, K) is None


def test_a_last_line_without_line_feed_is_one_line(tmp_path):
    path = tmp_path / "s.txt"
    path.write_bytes(b"a b 1\nlonger_model longer_test 2.5")
    blocks = list(iter_blocks(path, 8))
    assert [b.first_line for b in blocks] == [1, 2]
    assert [b.n_lines for b in blocks] == [1, 1]
    assert _text.split_fields(blocks[1], K, LAYOUT).lines.tolist() == [2]


def test_a_long_line_after_the_last_line_feed_of_a_read_is_named(tmp_path):
    path = tmp_path / "s.txt"
    path.write_bytes(b"a b 1\nc d 2\n" + b"x" * 50 + b" y 3\n")
    with read_limits(max_line_bytes=20), pytest.raises(FileFormatError) as caught:
        list(iter_blocks(path, 1000))
    assert caught.value.line == 3


@pytest.mark.parametrize("long_at", [1, 700, 1400])
def test_long_lines_are_found_by_the_screen_of_line_feeds(tmp_path, long_at):
    """A 160 KiB limit screens 80 KiB stretches for a line feed: a line one byte over the limit
    is refused with its number, wherever it falls in the 1 MiB reads; one at the limit is read.
    """
    limit = 160 << 10
    for extra, refused in ((1, True), (0, False)):
        lines = [b"a b 1\n"] * 1500
        lines[long_at - 1] = b"m" * (limit - 4 + extra) + b" t 2\n"  # limit + extra bytes
        path = tmp_path / "s.txt"
        path.write_bytes(b"".join(lines))
        with read_limits(max_line_bytes=limit):
            if refused:
                with pytest.raises(FileFormatError, match="line longer than") as caught:
                    list(iter_blocks(path, 100_000))
                assert caught.value.line == long_at
            else:
                assert sum(b.n_lines for b in iter_blocks(path, 100_000)) == 1500


@given(
    st.binary(min_size=1, max_size=400),
    st.lists(st.tuples(st.integers(0, 399), st.integers(1, 130)), min_size=0, max_size=30),
    st.integers(0, 64),
    st.booleans(),
)
@settings(max_examples=300, deadline=None)
def test_gather_ids_equals_byte_slicing(text, spans, padding, front):
    """Any ids, none at all, in a buffer with or without bytes before and after the text (a key
    of two trials none of which is scored made the uniform-width check fail on no ids).
    """
    at = FRONT if front else 0  # a block's buffer, or ids cut out into a buffer of their own
    data = np.zeros(at + len(text) + padding, dtype=np.uint8)
    data[at : at + len(text)] = np.frombuffer(text, dtype=np.uint8)
    spans = [(s % len(text), min(n, len(text) - s % len(text))) for s, n in spans]
    starts = np.array([s + at for s, _ in spans], dtype=np.int64)
    lengths = np.array([n for _, n in spans], dtype=np.int64)
    ids = gather_ids(data, starts, lengths)
    width = max(8, -(-int(lengths.max()) // 8) * 8) if spans else 8
    assert ids.dtype == np.dtype(f"S{width}") and ids.size == len(spans)
    expected = [text[s : s + n] + bytes(width - n) for s, n in spans]
    assert [bytes(v) + bytes(width - len(bytes(v))) for v in ids] == expected


def test_the_screen_misses_no_line_one_byte_too_long_wherever_it_starts(tmp_path):
    """With an odd limit (stretches of (limit + 1) / 2 bytes), a line of limit + 1 bytes
    starting just before, at or after a stretch's start is refused all the same.
    """
    limit = 140_001
    step = (limit + 1) // 2
    path = tmp_path / "s.txt"
    for start in range(step - 2, step + 4):
        short = (start - 10) // 6
        head = b"a b 1\n" * short + b"h" * (start - 6 * short - 1) + b"\n"  # `start` bytes
        path.write_bytes(head + b"m" * (limit + 1) + b"\n" + b"a b 1\n" * 10)
        with read_limits(max_line_bytes=limit), pytest.raises(FileFormatError) as caught:
            list(iter_blocks(path, 1 << 20))
        assert caught.value.line == short + 2


def test_a_huge_block_size_reads_a_small_file_without_a_huge_buffer(tmp_path):
    path = tmp_path / "s.txt"
    path.write_bytes(b"a b 1\nc d 2")
    blocks = list(iter_blocks(path, 1 << 40))  # a terabyte: the reads are capped
    assert [(b.first_line, b.size) for b in blocks] == [(1, 6), (2, 5)]
    assert len(blocks[0].buffer) <= (16 << 20) + 96


@pytest.mark.parametrize("odd", [b"a  b 1\n", b"# note\n", b"\n", b"a, b 1\n"])
@pytest.mark.parametrize("where", [0, 300, 1800])  # in the first 4 KiB probed, or beyond
def test_the_probe_of_the_first_lines_and_the_whole_block_agree(tmp_path, odd, where):
    lines = [b"m%d t%d %d.5\n" % (i % 97, i, i) for i in range(2000)]
    lines[where] = odd
    path = tmp_path / "s.txt"
    path.write_bytes(b"".join(lines))
    (block,) = iter_blocks(path)
    assert block.size > 2 * _text._PROBE
    assert _text._split_single_separators(block, K) is None
    general = _text._split_general(block, K, LAYOUT)
    _same_fields(_text.split_fields(block, K, LAYOUT), general)
    lines[where] = b"m t 1\n"  # regular again: the fast path reads it
    path.write_bytes(b"".join(lines))
    (block,) = iter_blocks(path)
    _same_fields(_text._split_single_separators(block, K), _text._split_general(block, K, LAYOUT))
