"""Vectorized splitting of text score files into records of fields (no Python loop per line).

A file is read in blocks of whole lines. In each block, fields are the maximal runs of bytes
other than white space (space, tab, CR, VT, FF, LF; other control characters count as white
space too) and commas; blank lines and lines whose first field starts with ``#`` are skipped. A
record is a line with exactly the expected number of fields; anything else is a ``ValueError``
naming the file and the line.

Ids never start with ``#`` (the writers refuse them). A line starting with ``#`` is a comment,
except that one whose first field is longer than the lone ``#`` and that holds exactly a
record's number of fields (``#spk1 seg1 2.5``) is refused as ambiguous instead of being
skipped silently: a trial is never lost to the comment rule.

Hostile input stays linear: each byte is scanned for line breaks once, NUL bytes are detected
in every read (``/dev/zero`` fails at once), lines longer than :data:`MAX_LINE_BYTES` and ids
longer than :data:`MAX_ID_LENGTH` characters are errors (:func:`read_limits` changes both). Ids
share the width of the longest (of a block, then of the file): one whose width would multiply the
storage of the others more than :data:`ID_WIDENING_LIMIT` times is refused with its line.
"""

from __future__ import annotations

import contextlib
import os
import re

import numpy as np

from ..exceptions import FileFormatError, InvalidParameterError
from ._numbers import byte_masks, parse_numbers
from ._source import display_name, open_source

__all__ = [
    "MAX_ID_LENGTH",
    "MAX_LINE_BYTES",
    "Block",
    "Fields",
    "LineMap",
    "blank_line",
    "check_id_column",
    "concat_ids",
    "concat_pieces",
    "first_record",
    "format_lines",
    "gather_ids",
    "ids_text",
    "iter_blocks",
    "read_limits",
    "split_fields",
]

FRONT = 32  # zero bytes before each block, so that windows may end at any field's end
PAD = 64  # zero bytes after each block, so that fixed-width windows never run off the end
BLOCK_BYTES = 1 << 20
_BOM = b"\xef\xbb\xbf"


class Block:
    """One block of whole lines: ``data`` is FRONT zero bytes, the ``size`` bytes of text, then
    PAD zero bytes; ``first_line`` is the line number of its first line; ``newlines`` the
    positions of its line feeds in ``data``.
    """

    __slots__ = ("data", "first_line", "n_lines", "newlines", "path", "size")

    def __init__(self, data, size, first_line, n_lines, path, newlines):
        self.data, self.size, self.first_line, self.n_lines, self.path = (
            data,
            size,
            first_line,
            n_lines,
            path,
        )
        self.newlines = newlines

    @property
    def body(self):
        """The text bytes (a view)."""
        return self.data[FRONT : FRONT + self.size]


#: Longest trial / segment / class id accepted, in characters (see :func:`read_limits`)
MAX_ID_LENGTH = 4096
#: Longest line accepted, in bytes (see :func:`read_limits`)
MAX_LINE_BYTES = 1 << 20


@contextlib.contextmanager
def read_limits(*, max_id_length: int | None = None, max_line_bytes: int | None = None):
    """Change the readers' length limits for the duration of a ``with`` block (process-wide).

    Parameters
    ----------
    max_id_length : int, optional
        Longest id (field other than a number) accepted, in characters; default 4096. A
        longer one is a ``ValueError`` ``path:line: id longer than N characters``.
    max_line_bytes : int, optional
        Longest line accepted, in bytes; default 1 MiB. A longer line (a file without line
        breaks, ``/dev/zero``, ...) is refused as soon as that many bytes are read, so reading
        hostile input stays linear in time and bounded in memory.

    Yields
    ------
    None
        The limits hold inside the ``with`` block and are restored on exit.
    """
    global MAX_ID_LENGTH, MAX_LINE_BYTES
    saved = MAX_ID_LENGTH, MAX_LINE_BYTES
    if max_id_length is not None:
        MAX_ID_LENGTH = _positive(max_id_length, "max_id_length")
    if max_line_bytes is not None:
        MAX_LINE_BYTES = _positive(max_line_bytes, "max_line_bytes")
    try:
        yield
    finally:
        MAX_ID_LENGTH, MAX_LINE_BYTES = saved


def _positive(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidParameterError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


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


def iter_blocks(path, block_bytes=BLOCK_BYTES):
    """Yield the file as :class:`Block` objects of whole lines (the last may lack a newline).

    The bytes are checked to be text: no NUL byte (checked in every read, before any line
    break is seen), valid UTF-8 (a leading BOM is skipped); a line longer than
    :data:`MAX_LINE_BYTES` is refused. Each byte is scanned for line breaks once: only the
    partial line at the end of a read is copied, and never searched again.
    """
    source = os.fspath(path)
    path = display_name(source)
    block_bytes = max(int(block_bytes), len(_BOM))
    max_line = MAX_LINE_BYTES
    with open_source(source) as handle:
        carry = np.empty(0, dtype=np.uint8)  # the unfinished last line of the previous read
        line = 1
        first = True
        while True:
            data = np.empty(FRONT + carry.size + block_bytes + PAD, dtype=np.uint8)
            data[:FRONT] = 0
            data[FRONT : FRONT + carry.size] = carry
            got = handle.readinto(memoryview(data)[FRONT + carry.size : -PAD])
            end_of_file = got == 0
            if first:
                first = False
                if got >= len(_BOM) and data[FRONT : FRONT + len(_BOM)].tobytes() == _BOM:
                    data[FRONT : FRONT + got - len(_BOM)] = data[FRONT + len(_BOM) : FRONT + got]
                    got -= len(_BOM)
            size = carry.size + got
            fresh = data[FRONT + carry.size : FRONT + size]  # bytes not scanned yet
            if got and fresh.min() == 0:
                at = carry.size + int(np.argmax(fresh == 0))
                raise FileFormatError(
                    path, line + _count_lines(data[FRONT : FRONT + at]), "NUL byte: not a text file"
                )
            newlines = np.flatnonzero(fresh == 10) + (FRONT + carry.size)
            if end_of_file:  # what is left is a last line without newline
                if size:
                    data[FRONT + size : FRONT + size + PAD] = 0
                    yield _make_block(data, size, newlines, size, line, path)
                return
            if newlines.size == 0:  # no newline yet: keep reading (a long line)
                if size > max_line:
                    raise FileFormatError(
                        path,
                        line,
                        f"line longer than {max_line} bytes (no line break): not a score file?",
                    )
                carry = data[FRONT : FRONT + size].copy()
                continue
            cut = int(newlines[-1]) + 1 - FRONT
            if size - cut > max_line or _longest_line(newlines) > max_line:
                raise FileFormatError(
                    path,
                    line + _long_line(newlines, max_line),
                    f"line longer than {max_line} bytes: not a score file?",
                )
            carry = data[FRONT + cut : FRONT + size].copy()
            data[FRONT + cut : FRONT + cut + PAD] = 0
            block = _make_block(data, cut, newlines, newlines.size, line, path)
            line += block.n_lines
            yield block


def _count_lines(body):
    return int(np.count_nonzero(body == 10))


def _line_lengths(newlines):
    """Length of each complete line of a read (without its line feed)."""
    return np.diff(newlines, prepend=FRONT - 1) - 1


def _longest_line(newlines):
    return int(_line_lengths(newlines).max())


def _long_line(newlines, max_line):
    """Index (0-based line offset in the block) of the first over-long line."""
    return int(np.argmax(_line_lengths(newlines) > max_line))


def _make_block(data, size, newlines, n_lines, first_line, path):
    """Check the text of a block (no NUL, UTF-8) and wrap it."""
    block = Block(data, size, first_line, n_lines, path, newlines)
    body = block.body
    if size and body.max() >= 128:
        try:
            body.tobytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FileFormatError(
                path, _line_at(block, exc.start), f"not a UTF-8 text file ({exc.reason})"
            ) from None
    return block


def _line_at(block, offset):
    return block.first_line + int(np.count_nonzero(block.body[:offset] == 10))


class Fields:
    """Records of one block: field ``j`` of record ``i`` is
    ``data[starts[i, j] : starts[i, j] + lengths[i, j]]``; ``lines[i]`` is its line number.
    """

    __slots__ = ("data", "lengths", "lines", "path", "starts")

    def __init__(self, data, starts, lengths, lines, path=""):
        self.data, self.starts, self.lengths, self.lines = data, starts, lengths, lines
        self.path = path

    def __len__(self):
        return self.starts.shape[0]

    def numbers(self, columns, path, what="score"):
        """float64 matrix of the given field columns (exact parsing, errors with the line)."""
        cols = list(columns)
        starts = self.starts[:, cols].ravel()
        lengths = self.lengths[:, cols].ravel()

        def fail(i, message):
            raise FileFormatError(path, int(self.lines[i // len(cols)]), f"{what} {message}")

        return parse_numbers(self.data, starts, lengths, fail).reshape(len(self), len(cols))

    def ids(self, column):
        """Field ``column`` of every record as a fixed-width bytes array.

        An id longer than :data:`MAX_ID_LENGTH` characters is a ``ValueError`` with its line.
        """
        starts, lengths = self.starts[:, column], self.lengths[:, column]
        limit = MAX_ID_LENGTH
        if lengths.size and int(lengths.max()) > limit:  # bytes >= characters: check those
            for i in np.flatnonzero(lengths > limit):
                text = self.data[starts[i] : starts[i] + lengths[i]].tobytes().decode("utf-8")
                if len(text) > limit:
                    raise FileFormatError(
                        self.path, int(self.lines[i]), f"id longer than {limit} characters"
                    )
        if lengths.size:  # the block's ids share the width of its longest
            need = lengths.size * max(8, -(-int(lengths.max()) // 8) * 8)
            if need > _BLOCK_ID_STORAGE_FREE:
                stored = int(np.maximum(lengths, 8).sum())
                if _too_wide(need, stored, _BLOCK_ID_STORAGE_FREE):
                    i = int(np.argmax(lengths))
                    _refuse_widening(self.path, int(self.lines[i]), int(lengths[i]), need, stored)
        return gather_ids(self.data, starts, lengths)


def split_fields(block, n_fields, layout):
    """Split a block into records of exactly ``n_fields`` fields.

    ``layout`` describes the expected fields for error messages, e.g. ``"'model test score'"``.
    Returns :class:`Fields`.
    """
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


_MASKED_WIDTH = 128  # ids up to this many bytes are masked through a small lookup table


def gather_ids(data, starts, lengths):
    """Fixed-width bytes array (dtype ``S<8k>``) of the fields ``data[start : start + length]``."""
    n = starts.size
    longest = int(lengths.max()) if n else 1
    width = max(8, -(-longest // 8) * 8)
    if n and int(starts.max()) + width > data.size:
        data = np.concatenate([data, np.zeros(width, dtype=np.uint8)])
    windows = np.lib.stride_tricks.sliding_window_view(data, width)
    if width <= _MASKED_WIDTH:
        words = np.ascontiguousarray(windows[starts]).view(np.uint64)
        words &= np.take(byte_masks(width // 8), lengths, axis=0)  # zero the bytes past the field
        return words.view(f"S{width}").ravel()
    out = np.ascontiguousarray(windows[starts])  # wide ids: a table of masks would be (8w+1) x w
    columns = np.arange(width)[None, :]
    for i in range(0, n, 4096):  # zero the bytes past each field, a bounded mask at a time
        out[i : i + 4096][columns >= lengths[i : i + 4096, None]] = 0
    return out.view(f"S{width}").ravel()


def ids_text(value):
    """Printable text of one id (bytes or str)."""
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


#: Ids of a file share one width, that of the longest: widening the others by more than this
#: factor (and beyond _ID_STORAGE_FREE bytes) is refused rather than exhausting memory
ID_WIDENING_LIMIT = 16
_ID_STORAGE_FREE = 256 << 20  # a whole file
_BLOCK_ID_STORAGE_FREE = 128 << 20  # one block


def concat_ids(pieces, lines, path):
    """Concatenate per-block id arrays (empties the list), refusing a file whose few long ids
    would widen every other id's storage more than :data:`ID_WIDENING_LIMIT` times.
    """
    n = sum(p.shape[0] for p in pieces)
    widest = max(range(len(pieces)), key=lambda k: pieces[k].dtype.itemsize)
    width = pieces[widest].dtype.itemsize
    need = n * width
    if need > _ID_STORAGE_FREE and _too_wide(need, _content_bytes(pieces)):
        lengths = np.char.str_len(pieces[widest])
        i = int(np.argmax(lengths))
        record = sum(p.shape[0] for p in pieces[:widest]) + i
        _refuse_widening(path, lines.line(record), int(lengths[i]), need, _content_bytes(pieces))
    return concat_pieces(pieces)


def _content_bytes(pieces):
    """Bytes of the ids themselves (8 at least each: the narrowest storage)."""
    return sum(int(np.maximum(np.char.str_len(p), 8).sum()) for p in pieces)


def _too_wide(need, stored, free=_ID_STORAGE_FREE):
    return need > free and need > ID_WIDENING_LIMIT * stored


def _refuse_widening(path, line, length, need, stored):
    raise FileFormatError(
        path,
        line,
        f"an id of {length} bytes among much shorter ones: ids are "
        f"stored at the width of the longest, which would take "
        f"{need / 2**20:,.0f} MiB ({need / stored:.0f}x their size); shorten the "
        f"long ids",
    )


def concat_pieces(pieces):
    """Concatenate per-block arrays and empty the list, freeing each piece once copied (the
    peak is the result and one piece, not twice the result).
    """
    if len(pieces) == 1:
        return pieces.pop()
    n = sum(p.shape[0] for p in pieces)
    dtype = (
        np.result_type(*pieces)
        if pieces[0].dtype.kind != "S"
        else f"S{max(p.dtype.itemsize for p in pieces)}"
    )
    out = np.empty((n,) + pieces[0].shape[1:], dtype=dtype)
    at = 0
    pieces.reverse()
    while pieces:
        piece = pieces.pop()
        out[at : at + piece.shape[0]] = piece
        at += piece.shape[0]
    return out


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
