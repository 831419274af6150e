"""Vectorized splitting of text score files into records of fields (no Python loop per line).

A file is read in blocks of whole lines (:mod:`focal._text.blocks`, which also holds the records'
:class:`~focal._text.blocks.Fields`, the length limits and the id-width guard). In each block,
fields are the maximal runs of bytes other than white space (space, tab, CR, VT, FF, LF; other
control characters count as white space too) and commas; blank lines and lines whose first field
starts with ``#`` are skipped. A record is a line with exactly the expected number of fields;
anything else is a ``ValueError`` naming the file and the line.

Ids never start with ``#`` (the writers refuse them). A line starting with ``#`` is a comment,
except that one whose first field is longer than the lone ``#`` and that holds exactly a
record's number of fields (``#spk1 seg1 2.5``) is refused as ambiguous instead of being
skipped silently: a trial is never lost to the comment rule.

The writers' side: ids checked before anything is written (:func:`check_id_column`) and lines
assembled from byte matrices (:func:`format_lines`).
"""

from __future__ import annotations

import re

import numpy as np

from ..exceptions import FileFormatError
from . import blocks as _blocks
from .blocks import (
    FRONT,
    Fields,
)

# the block reader's names, for io's readers (defined once, in focal._text.blocks)
__all__ = [
    "LineMap",
    "blank_line",
    "check_id_column",
    "first_record",
    "format_lines",
    "ids_text",
    "split_fields",
]


def __getattr__(name):
    """``MAX_ID_LENGTH`` and ``MAX_LINE_BYTES``: the current limits of :mod:`focal._text.blocks`
    (which :func:`read_limits` changes), not a copy taken at import.
    """
    if name in ("MAX_ID_LENGTH", "MAX_LINE_BYTES"):
        return getattr(_blocks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_SPLIT = re.compile(rb"[\x00-\x20,]+")


def first_record(block):
    """``(line, fields)`` of the block's first line that is neither blank nor a comment (a
    list of bytes), or None.
    """
    body = block.body.tobytes()
    at, line = 0, block.first_line
    while at < len(body):
        end = body.find(b"\n", at)
        end = len(body) if end < 0 else end
        fields = [f for f in _SPLIT.split(body[at:end]) if f]
        if fields and not fields[0].startswith(b"#"):
            return line, fields, at, end
        at, line = end + 1, line + 1
    return None


def blank_line(block, start, end):
    """Turn the bytes ``start:end`` of the block's text into spaces (a header, once read)."""
    block.data[FRONT + start : FRONT + end] = 32


def split_fields(block, n_fields, layout):
    """Split a block into records of exactly ``n_fields`` fields.

    ``layout`` describes the expected fields for error messages, e.g. ``"'model test score'"``.
    Returns :class:`Fields`.
    """
    fields = _split_single_separators(block, n_fields)
    return fields if fields is not None else _split_general(block, n_fields, layout)


_PROBE = 4096  # bytes of a block's first lines tried alone first (a file of another shape)


def _split_single_separators(block, n_fields):
    """:class:`Fields` of the common block, or None: every field followed by one separator
    byte (white space or comma; the record's last field by its line feed, or by one separator
    and the line feed, as CR LF), every line a record, no comment.

    The separators are then the fields' ends and the line feeds are every ``n_fields``-th of
    them (every ``n_fields + 1``-th with CR LF line ends), so one scan finds fields and lines
    (stored in the block). Anything else (blank or comment lines, runs of separators such as
    ``", "``, a last line without line feed) is left to the general path, which gives the
    same fields. The block's first lines (:data:`_PROBE` bytes) are tried first, so that a
    file of another shape costs the general path little more than itself.
    """
    size = block.size
    data = block.data
    if not size or data[FRONT + size - 1] != 10:
        return None
    body = block.body
    buffer = block.buffer
    if buffer is not None:
        comma = buffer.find(b",", FRONT, FRONT + size) >= 0
    else:
        comma = bool((body == 44).any())
    if size > 2 * _PROBE:
        first = np.flatnonzero(body[:_PROBE] == 10)
        if first.size and _single_separators(data, first[-1] + 1, n_fields, comma) is None:
            return None
    found = _single_separators(data, size, n_fields, comma)
    if found is None:
        return None
    starts, lengths, newlines = found
    block.found_lines(newlines)
    lines = np.arange(block.first_line, block.first_line + newlines.size)
    return Fields(data, starts, lengths, lines, block.path)


def _single_separators(data, size, n_fields, comma):
    """``(starts, lengths, newlines)`` of the text ``data[FRONT : FRONT + size]`` (whole
    lines) when every field is followed by one separator (see
    :func:`_split_single_separators`), else None.
    """
    text = data[FRONT : FRONT + size]
    ends = np.flatnonzero((text <= 32) | (text == 44) if comma else text <= 32)
    line_feed = text[ends] == 10
    n_lines = int(np.count_nonzero(line_feed))
    per_line, rest = divmod(ends.size, n_lines)  # separators a line: n_fields, +1 with CR LF
    if rest or per_line - n_fields not in (0, 1) or not line_feed[per_line - 1 :: per_line].all():
        return None
    ends += FRONT
    starts = np.empty(ends.size, dtype=np.int64)  # each field starts after a separator
    starts[0] = FRONT
    np.add(ends[:-1], 1, out=starts[1:])
    lengths = ends - starts
    # no empty field: the only empty gaps are before the line feeds, after a separator (CR LF)
    gaps = per_line - n_fields
    if np.count_nonzero(lengths == 0) != gaps * n_lines:
        return None
    starts = starts.reshape(n_lines, per_line)
    lengths = lengths.reshape(n_lines, per_line)
    if gaps:
        if lengths[:, n_fields].any():
            return None
        starts, lengths = starts[:, :n_fields], lengths[:, :n_fields]
    if (data[starts[:, 0]] == 35).any():
        return None
    return starts, lengths, ends[per_line - 1 :: per_line]


def _split_general(block, n_fields, layout):
    """Split any block (see :func:`split_fields`): fields at the edges of separator runs."""
    data = block.data
    size = block.size
    b = block.body
    sep = np.ones(size + 2, dtype=bool)
    # separators: white space (and any other control character) and commas
    np.logical_or(b <= 32, b == 44, out=sep[1:-1])
    edges = np.flatnonzero(sep[1:] != sep[:-1]) + FRONT  # positions in `data`
    starts = edges[0::2]
    ends = edges[1::2]
    newlines = block.newlines
    n_lines = block.n_lines
    if starts.size == 0:
        return Fields(
            data,
            np.empty((0, n_fields), np.int64),
            np.empty((0, n_fields), np.int64),
            np.empty(0, np.int64),
            block.path,
        )
    if _uniform(starts, ends, newlines, n_lines, n_fields, data):
        lines = np.arange(block.first_line, block.first_line + n_lines)
        starts = starts.reshape(-1, n_fields)
        return Fields(data, starts, ends.reshape(-1, n_fields) - starts, lines, block.path)
    token_line = np.searchsorted(newlines, starts)
    counts = np.bincount(token_line, minlength=n_lines)
    first_token = np.cumsum(counts) - counts
    has_tokens = counts > 0
    comment = np.zeros(n_lines, dtype=bool)
    comment[has_tokens] = data[starts[first_token[has_tokens]]] == 35
    record = has_tokens & ~comment
    # '#model test 1.5' could be a trial whose id starts with '#': refuse rather than skip it
    glued = comment & (counts == n_fields)
    glued[glued] = ends[first_token[glued]] - starts[first_token[glued]] > 1
    if glued.any():
        i = int(np.argmax(glued))
        raise FileFormatError(
            block.path,
            block.first_line + i,
            f"a line starting with '#' has "
            f"the {n_fields} fields of a record: a comment, or a record whose id "
            f"starts with '#'? Ids may not start with '#'; write comments as "
            f"'# text'",
        )
    wrong = record & (counts != n_fields)
    if wrong.any():
        i = int(np.argmax(wrong))
        raise FileFormatError(
            block.path,
            block.first_line + i,
            f"expected {n_fields} fields {layout}, got {int(counts[i])}",
        )
    rows = np.flatnonzero(record)
    take = (first_token[rows][:, None] + np.arange(n_fields)).ravel()
    starts = starts[take].reshape(-1, n_fields)
    lengths = ends[take].reshape(-1, n_fields) - starts
    return Fields(data, starts, lengths, rows + block.first_line, block.path)


def _uniform(starts, ends, newlines, n_lines, n_fields, data):
    """True when every line holds exactly ``n_fields`` fields and none is a comment: the
    common case, checked without mapping each field to its line.
    """
    if starts.size != n_fields * n_lines:
        return False
    first = starts[::n_fields]
    last_end = ends[n_fields - 1 :: n_fields]
    line_end = newlines if newlines.size == n_lines else np.append(newlines, data.size)
    line_start = np.empty(n_lines, dtype=np.int64)
    line_start[0] = FRONT - 1
    line_start[1:] = newlines[: n_lines - 1]
    return bool(
        (first > line_start).all()
        and (last_end <= line_end).all()
        and not (data[first] == 35).any()
    )


def ids_text(value):
    """Printable text of one id (bytes or str)."""
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


class LineMap:
    """Line numbers of records, stored compactly: most blocks have no blank or comment line."""

    def __init__(self):
        self._starts = []  # first record index of each block
        self._first_lines = []
        self._lines = []  # None when the block's records are consecutive lines

    def add(self, record_start, lines):
        self._starts.append(record_start)
        consecutive = lines.size == 0 or int(lines[-1]) - int(lines[0]) == lines.size - 1
        self._first_lines.append(int(lines[0]) if lines.size else 0)
        self._lines.append(None if consecutive else lines.copy())

    def line(self, record):
        """Line number of record index ``record``."""
        b = int(np.searchsorted(self._starts, record, side="right")) - 1
        offset = record - self._starts[b]
        lines = self._lines[b]
        return self._first_lines[b] + offset if lines is None else int(lines[offset])


# ---------------------------------------------------------------------------------------------
# writing


def _as_byte_matrix(column):
    """An id column (bytes or str array) as an (n, w) uint8 matrix, zero padded."""
    column = np.asarray(column)
    if column.dtype.kind == "U":
        column = np.char.encode(column, "utf-8")
    if column.dtype.kind != "S":
        raise ValueError(f"ids must be strings or bytes, got dtype {column.dtype}")
    width = column.dtype.itemsize
    return np.ascontiguousarray(column).view(np.uint8).reshape(column.size, width)


def check_id_column(column, name):
    """Ids to be written must be non-empty and hold no separator, NUL or '#' at the start."""
    m = _as_byte_matrix(column)
    if m.shape[0] == 0:
        return m
    bad = ((m <= 32) & (m != 0)) | (m == 44)
    empty = m[:, 0] == 0
    comment = m[:, 0] == 35
    inner_nul = (m[:, :-1] == 0) & (m[:, 1:] != 0)
    problem = bad.any(axis=1) | empty | comment | inner_nul.any(axis=1)
    if problem.any():
        i = int(np.argmax(problem))
        raise ValueError(
            f"{name}[{i}] = {ids_text(np.asarray(column)[i])!r} cannot be written: "
            f"ids must be non-empty, without white space, commas or NUL bytes, "
            f"and not start with '#'"
        )
    return m


def format_lines(columns, sep=b" "):
    """Bytes of lines made of the given columns (each an (n, w) uint8 matrix, zero padded).

    Zero bytes are padding and are dropped; columns are joined by ``sep`` and lines end in LF.
    """
    n = columns[0].shape[0]
    k = len(sep)
    width = sum(c.shape[1] for c in columns) + k * (len(columns) - 1) + 1
    matrix = np.empty((n, width), dtype=np.uint8)
    at = 0
    for j, col in enumerate(columns):
        if j:
            matrix[:, at : at + k] = np.frombuffer(sep, dtype=np.uint8)
            at += k
        matrix[:, at : at + col.shape[1]] = col
        at += col.shape[1]
    matrix[:, at] = 10
    return matrix.tobytes().translate(None, b"\x00")
