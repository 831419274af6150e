"""The tokenizer of focal's text files: blocks of whole lines (:mod:`focal._text.blocks`) split
into fields with NumPy, no Python work per line, in one of two ways.

- :func:`split_lines`: each line's fields, any number per line (:class:`Lines`); fields are
  the maximal runs of bytes other than white space (space, tab, CR, VT, FF, LF; other control
  characters count as white space too), and commas when ``commas`` (score files; the
  term-detection tables of :mod:`focal.std` keep commas in their fields). The readers pick the
  lines they want (by first field, by field count) as :class:`Fields`.
- :func:`split_fields`: the records of a score or key file, exactly ``n_fields`` fields a line
  (:class:`Fields`); blank lines and lines whose first field starts with ``#`` are skipped; any
  other line is a ``ValueError`` naming the file and the line. The common block (one separator
  after every field, every line a record) is read by one scan that finds fields and lines at
  once; any other goes through :func:`split_lines`.

:class:`Fields` gives ids as fixed-width UTF-8 bytes (:func:`gather_ids`) and numbers parsed
exactly (:func:`focal._text.numbers.parse_numbers`), errors with their line. Ids share the width
of the longest (of a block, then of a file): one whose width would multiply the storage of the
others more than :data:`ID_WIDENING_LIMIT` times is refused with its line.

Ids never start with ``#`` (the writers refuse them). A line starting with ``#`` is a comment,
except that one whose first field is longer than the lone ``#`` and that holds exactly a
record's number of fields (``#spk1 seg1 2.5``) is refused as ambiguous instead of being
skipped silently: a trial is never lost to the comment rule.

The writers' side: ids checked before anything is written (:func:`check_id_column`) and lines
assembled from byte matrices (:func:`format_lines`).
"""

from __future__ import annotations

import contextlib
import ctypes
import re

import numpy as np

from ..exceptions import FileFormatError
from . import blocks as _blocks
from .blocks import FRONT, iter_blocks
from .numbers import byte_masks, parse_numbers

__all__ = [
    "ID_WIDENING_LIMIT",
    "Fields",
    "Ids",
    "LineMap",
    "Lines",
    "as_id_array",
    "blank_line",
    "check_id_column",
    "classes",
    "concat_pieces",
    "first_record",
    "fixed_width",
    "format_lines",
    "gather_ids",
    "ids_text",
    "iter_lines",
    "split_fields",
    "split_lines",
]


_SPLIT = re.compile(rb"[\x00-\x20,]+")


def first_record(block):
    """``(line, fields, start, end)`` of the block's first line that is neither blank nor a
    comment: its fields (a list of bytes) and its bytes ``start:end`` in the block's text; or None.
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
    file of another shape costs the general path little more than itself. What keeps it:
    reading 3 * 10^6 ``model test score`` lines takes 1.18 s of CPU with it, 1.38 s without.
    """
    size = block.size
    data = block.data
    if not size or data[FRONT + size - 1] != 10:
        return None
    comma = block.buffer.find(b",", FRONT, FRONT + size) >= 0
    if size > 2 * _PROBE:
        first = np.flatnonzero(block.body[:_PROBE] == 10)
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


def _edges(block, commas):
    """Starts and ends (positions in ``block.data``) of the block's fields."""
    body = block.body
    sep = np.ones(block.size + 2, dtype=bool)
    if commas:
        np.logical_or(body <= 32, body == 44, out=sep[1:-1])
    else:
        np.less_equal(body, 32, out=sep[1:-1])
    edges = np.flatnonzero(sep[1:] != sep[:-1]) + FRONT
    return edges[0::2], edges[1::2]


def split_lines(block, commas=False):
    """The fields of each line of a block, as :class:`Lines` (see the module's docstring)."""
    return Lines(block, *_edges(block, commas))


class Lines:
    """The fields of one block of lines, given where they start and end in ``block.data``.

    Field ``k`` is ``data[starts[k] : ends[k]]``. Line ``i`` of the block (file line
    ``first_line + i``) holds ``counts[i]`` fields, the first being field ``first[i]``.
    """

    __slots__ = ("counts", "data", "ends", "first", "first_line", "path", "starts")

    def __init__(self, block, starts, ends):
        self.data, self.starts, self.ends = block.data, starts, ends
        self.first_line, self.path, n_lines = block.first_line, block.path, block.n_lines
        line_of = np.searchsorted(block.newlines, starts)  # line feeds before each field
        self.counts = np.bincount(line_of, minlength=n_lines)[:n_lines]
        self.first = np.cumsum(self.counts) - self.counts

    def first_field_is(self, text: bytes) -> np.ndarray:
        """Boolean per line: its first field is exactly ``text``."""
        return self.first_field_starts_with(text, whole=True)

    def first_field_starts_with(self, prefix: bytes, whole: bool = False) -> np.ndarray:
        """Boolean per line: it has a field and the first one starts with ``prefix`` (is
        ``prefix``, when ``whole``).
        """
        out = self.counts > 0
        k = self.first[out]
        begin = self.starts[k]
        length = self.ends[k] - begin
        ok = length == len(prefix) if whole else length >= len(prefix)
        for j, byte in enumerate(prefix):
            ok &= self.data[np.minimum(begin + j, self.data.size - 1)] == byte
        out[out] = ok
        return out

    def line(self, i) -> int:
        """File line number of block line ``i``."""
        return self.first_line + int(i)

    def fail(self, i, message: str):
        """Raise a :class:`~focal.exceptions.FileFormatError` at block line ``i``."""
        raise FileFormatError(self.path, self.line(i), message)

    def text(self, i, k: int) -> str:
        """Field ``k`` of block line ``i``, decoded."""
        j = int(self.first[i]) + k
        return self.data[self.starts[j] : self.ends[j]].tobytes().decode("utf-8")

    def fields(self, rows, width: int):
        """The first ``width`` fields of the given block lines as :class:`Fields` (each of those
        lines must hold at least ``width``).
        """
        rows = np.asarray(rows, dtype=np.int64)
        take = (self.first[rows][:, None] + np.arange(width)).reshape(-1)
        starts = self.starts[take].reshape(-1, width)
        lengths = self.ends[take].reshape(-1, width) - starts
        return Fields(self.data, starts, lengths, rows + self.first_line, self.path)


def iter_lines(path):
    """Yield a file as :class:`Lines` (white space separated, commas kept in fields), one per
    block of whole lines (:func:`focal._text.blocks.iter_blocks`, reads of
    :data:`focal._text.blocks.BLOCK_BYTES`, which tests set small to cross block boundaries).
    """
    for block in iter_blocks(path, _blocks.BLOCK_BYTES):
        yield split_lines(block)


def _split_general(block, n_fields, layout):
    """Split any block (see :func:`split_fields`): its lines, then the records among them."""
    starts, ends = _edges(block, commas=True)
    if _uniform(starts, ends, block, n_fields):
        lines = np.arange(block.first_line, block.first_line + block.n_lines)
        starts = starts.reshape(-1, n_fields)
        return Fields(block.data, starts, ends.reshape(-1, n_fields) - starts, lines, block.path)
    found = Lines(block, starts, ends)
    comment = found.first_field_starts_with(b"#")
    record = (found.counts > 0) & ~comment
    glued = comment & (found.counts == n_fields) & ~found.first_field_is(b"#")
    if glued.any():
        found.fail(
            int(np.argmax(glued)),
            f"a line starting with '#' has "
            f"the {n_fields} fields of a record: a comment, or a record whose id "
            f"starts with '#'? Ids may not start with '#'; write comments as "
            f"'# text'",
        )
    wrong = record & (found.counts != n_fields)
    if wrong.any():
        i = int(np.argmax(wrong))
        found.fail(i, f"expected {n_fields} fields {layout}, got {int(found.counts[i])}")
    return found.fields(np.flatnonzero(record), n_fields)


def _uniform(starts, ends, block, n_fields):
    """True when every line holds exactly ``n_fields`` fields and none is a comment: the
    common case, checked without mapping each field to its line. What keeps it: the general
    path on 10^6 ``model  test score`` lines (two spaces) takes 0.078 CPU s with it, 0.26 s
    without.
    """
    n_lines, newlines, data = block.n_lines, block.newlines, block.data
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

    def numbers(self, n):
        """The line numbers of records ``0 .. n - 1`` as an int64 array."""
        out = np.empty(n, dtype=np.int64)
        ends = self._starts[1:] + [n]
        for start, end, first, lines in zip(self._starts, ends, self._first_lines, self._lines):
            out[start:end] = first + np.arange(end - start) if lines is None else lines
        return out

    def line(self, record):
        """Line number of record index ``record``."""
        b = int(np.searchsorted(self._starts, record, side="right")) - 1
        offset = record - self._starts[b]
        lines = self._lines[b]
        return self._first_lines[b] + offset if lines is None else int(lines[offset])


class Fields:
    """Records of one block: field ``j`` of record ``i`` is
    ``data[starts[i, j] : starts[i, j] + lengths[i, j]]``; ``lines[i]`` is its line number.
    """

    __slots__ = ("data", "lengths", "lines", "path", "starts")

    def __init__(self, data, starts, lengths, lines, path):
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

    def column(self, column):
        """Field ``column`` of every record as :class:`Ids` (views of the block's text).

        An id longer than :data:`MAX_ID_LENGTH` characters is a ``ValueError`` with its line.
        """
        starts, lengths = self.starts[:, column], self.lengths[:, column]
        limit = _blocks.MAX_ID_LENGTH
        if lengths.size and int(lengths.max()) > limit:  # bytes >= characters: check those
            for i in np.flatnonzero(lengths > limit):
                text = self.data[starts[i] : starts[i] + lengths[i]].tobytes().decode("utf-8")
                if len(text) > limit:
                    raise FileFormatError(
                        self.path, int(self.lines[i]), f"id longer than {limit} characters"
                    )
        return Ids(self.data, starts, lengths)

    def ids(self, column):
        """Field ``column`` of every record (:meth:`column`) as a fixed-width bytes array, at
        the width of the block's longest (refused as the module's docstring says).
        """
        ids = self.column(column)
        _check_widening(self.path, ids.lengths, lambda i: int(self.lines[i]), _ID_STORAGE_FREE // 2)
        return gather_ids(self.data, ids.starts, ids.lengths)


def as_id_array(ids, name="ids"):
    """Ids as a bytes array of a width that is a multiple of 8 (UTF-8 for str input)."""
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {ids.shape}")
    if ids.dtype.kind == "U":
        ids = np.char.encode(ids, "utf-8")
    elif ids.dtype.kind != "S":
        if ids.dtype.kind == "O" and all(isinstance(v, (str, bytes)) for v in ids):
            ids = np.array(
                [v.encode("utf-8") if isinstance(v, str) else v for v in ids], dtype=bytes
            )
        else:
            raise ValueError(f"{name} must be strings or bytes, got dtype {ids.dtype}")
    width = max(8, -(-ids.dtype.itemsize // 8) * 8)
    if ids.dtype.itemsize != width:
        ids = ids.astype(f"S{width}")
    return ids


class Ids:
    """A column of ids by their own length: id ``i`` is ``data[starts[i] : starts[i] +
    lengths[i]]``; in the compact form (``starts`` None) it is ``data[offsets[i] : offsets[i +
    1]]``.

    Parameters
    ----------
    data : ndarray of uint8
        The buffer.
    starts, lengths : ndarray of int, or None
        Where each id is (a block's ids, where the tokenizer found them).
    offsets : ndarray of int, optional
        Of the compact form: ``n + 1`` increasing offsets (uint32 when the buffer allows).
    """

    __slots__ = ("data", "lengths", "offsets", "starts")

    def __init__(self, data, starts=None, lengths=None, offsets=None):
        self.data, self.starts, self.lengths, self.offsets = data, starts, lengths, offsets

    @classmethod
    def of(cls, column):
        """The ids of a fixed-width bytes (or str) array, over its own bytes."""
        if isinstance(column, Ids):
            return column
        column = as_id_array(column)
        n, width = column.shape[0], column.dtype.itemsize
        raw = np.ascontiguousarray(column).view(np.uint8).reshape(n, width)
        lengths = np.empty(n, dtype=np.int64)
        for i in range(0, n, 1 << 16):  # ids hold no NUL byte: their length is their non-zeros
            lengths[i : i + (1 << 16)] = np.count_nonzero(raw[i : i + (1 << 16)], axis=1)
        starts = np.arange(n, dtype=np.int64) * width
        return cls(raw.reshape(-1), starts, lengths)

    def __len__(self):
        return (self.offsets.shape[0] - 1) if self.starts is None else self.starts.shape[0]

    def spans(self, rows=None):
        """``(starts, lengths)`` (int64) of the ids ``rows`` (None: all of them; an index
        array, a boolean mask or a slice).
        """
        rows = slice(None) if rows is None else rows
        if self.starts is None:
            starts = self.offsets[:-1][rows].astype(np.int64)
            return starts, self.offsets[1:][rows] - starts
        return self.starts[rows].astype(np.int64, copy=False), self.lengths[rows].astype(np.int64)

    def __getitem__(self, i):
        """Id ``i`` as bytes."""
        (start,), (length,) = self.spans(np.array([i]))
        return self.data[start : start + length].tobytes()

    def take(self, rows):
        """The ids ``rows`` (an index array or a boolean mask), viewing the same buffer."""
        return Ids(self.data, *self.spans(rows))

    def array(self, rows=None):
        """The ids ``rows`` (None: all) as a fixed-width bytes array (the longest's width)."""
        return gather_ids(self.data, *self.spans(rows))

    def compact(self):
        """The same ids in the compact form: a buffer of their bytes only, and offsets.

        Ids in buffer order, none empty and none overlapping (a block's column, as the
        tokenizer finds it) are cut out by a mask of their bytes (a byte of work per byte of the
        buffer, where an index per byte, which other ids take, costs eight).
        """
        starts, lengths = self.spans()
        offsets = np.zeros(lengths.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        ends = starts + lengths
        if starts.size and lengths.min() > 0 and (starts[1:] >= ends[:-1]).all():
            low, high = int(starts[0]), int(ends[-1])
            runs = np.empty(2 * starts.size, dtype=np.int64)  # the bytes before each id, its own
            runs[0] = 0
            np.subtract(starts[1:], ends[:-1], out=runs[2::2])
            runs[1::2] = lengths
            inside = np.repeat(np.tile(np.array([False, True]), starts.size), runs)
            return Ids(self.data[low:high][inside], offsets=offsets)
        index = np.repeat(starts - offsets[:-1], lengths)
        index += np.arange(index.size)
        return Ids(self.data[index], offsets=offsets)

    @staticmethod
    def concat(pieces):
        """Compact ids of consecutive pieces (compact each), one after the other; the list is
        emptied, each piece freed once copied.
        """
        total = sum(int(p.offsets[-1]) for p in pieces)
        dtype = np.uint32 if total < 2**32 else np.int64
        offsets = np.empty(sum(len(p) for p in pieces) + 1, dtype=dtype)
        offsets[0] = at = base = 0
        data = []
        for p in pieces:  # each piece's buffer is then held by ``data`` alone: freed once copied
            n = len(p)
            offsets[at + 1 : at + n + 1] = p.offsets[1:]
            offsets[at + 1 : at + n + 1] += base
            at, base = at + n, base + int(p.offsets[-1])
            data.append(p.data)
            p.data = p.offsets = None
        pieces.clear()
        return Ids(concat_pieces(data), offsets=offsets)

    def widths(self, rows=None):
        """Yield ``(where, starts, lengths)`` per width class of the ids ``rows``: ``where``
        indexes them (None: all), ``starts`` and ``lengths`` are theirs.
        """
        starts, lengths = self.spans(rows)
        for where in classes(lengths):
            if where is None:
                yield None, starts, lengths
            else:
                yield where, starts[where], lengths[where]


def classes(lengths):
    """Index arrays of ``lengths`` per width class (1-8 bytes, 9-16, 17-32, ...), or a single
    None when they are all of one class (the common case: no selection).
    """
    words = (np.maximum(lengths, 1) + 7) >> 3
    if not words.size or (int(words.min()) - 1).bit_length() == (int(words.max()) - 1).bit_length():
        return [None]
    classes = np.frexp((words - 1).astype(np.float64))[1]  # bit_length of words - 1
    return [np.flatnonzero(classes == c) for c in np.unique(classes)]


_MASKED_WIDTH = 128  # ids up to this many bytes are masked through a small lookup table


def gather_ids(data, starts, lengths):
    """Fixed-width bytes array (dtype ``S<8k>``) of the fields ``data[start : start + length]``."""
    n = starts.size
    if n == 0:
        return np.zeros(0, dtype="S8")
    width = max(8, -(-int(lengths.max()) // 8) * 8)
    if int(starts.max()) + width > data.size:  # ids near the end: from a padded copy
        base = max(0, data.size - width)
        tail = np.zeros(data.size - base + width, dtype=np.uint8)
        tail[: data.size - base] = data[base:]
        near = starts >= base
        fields = np.empty(n, dtype=f"S{width}")
        if not near.all():
            fields[~near] = _byte_strings(data, starts[~near], width)
        fields[near] = _byte_strings(tail, starts[near] - base, width)
    else:
        fields = _byte_strings(data, starts, width)
    if width <= _MASKED_WIDTH:
        words = fields.view(np.uint64).reshape(n, width // 8)
        words &= np.take(byte_masks(width // 8), lengths, axis=0)  # zero the bytes past the field
        return fields
    out = fields.view(np.uint8).reshape(n, width)  # wide ids: a mask table would be (8w+1) x w
    columns = np.arange(width)[None, :]
    for i in range(0, n, 4096):  # zero the bytes past each field, a bounded mask at a time
        out[i : i + 4096][columns >= lengths[i : i + 4096, None]] = 0
    return fields


def _byte_strings(data, starts, width):
    """``S<width>`` array of the ``width`` bytes at each ``data[start:]``.

    Gathered through a view of ``data`` as ``S<width>`` items one byte apart (an item may
    start at any byte): one fixed-size copy per field, cheaper than a gather of byte windows.
    """
    data = np.ascontiguousarray(data)
    items = np.ndarray((data.size - width + 1,), dtype=f"S{width}", buffer=data, strides=(1,))
    return items[starts]


#: Ids of a file share one width, that of the longest: widening the others by more than this
#: factor (and beyond _ID_STORAGE_FREE bytes) is refused rather than exhausting memory
ID_WIDENING_LIMIT = 16
_ID_STORAGE_FREE = 256 << 20  # a whole file (a block: half of it)


def _check_widening(path, lengths, line, free=_ID_STORAGE_FREE):
    """Refuse ids (``lengths``: each one's bytes) whose longest would widen the storage of the
    others more than :data:`ID_WIDENING_LIMIT` times (beyond ``free`` bytes), at the line
    ``line(i)`` of the longest (i-th of ``lengths``).
    """
    if not lengths.size:
        return
    need = lengths.size * max(8, -(-int(lengths.max()) // 8) * 8)
    stored = int(np.maximum(lengths, 8).sum()) if need > free else need
    if need > free and need > ID_WIDENING_LIMIT * stored:
        i = int(np.argmax(lengths))
        raise FileFormatError(
            path,
            line(i),
            f"an id of {int(lengths[i])} bytes among much shorter ones: ids are stored at the "
            f"width of the longest, which would take {need / 2**20:,.0f} MiB "
            f"({need / stored:.0f}x their size); shorten the long ids",
        )


def fixed_width(ids, rows, lines, path):
    """The ids ``rows`` (None: all) of an :class:`Ids` column as a fixed-width bytes array,
    refusing a column whose few long ids would widen every other id's storage more than
    :data:`ID_WIDENING_LIMIT` times (beyond 256 MiB), naming the line of the longest.
    """
    _, lengths = ids.spans(rows)

    def line(i):
        return lines.line(i if rows is None else int(np.arange(len(ids))[rows][i]))

    _check_widening(path, lengths, line)
    return ids.array(rows)


def concat_pieces(pieces):
    """Concatenate per-block arrays and empty the list, freeing each piece once copied (the
    peak is the result and one piece, not twice the result).
    """
    if len(pieces) == 1:
        return pieces.pop()
    n = sum(p.shape[0] for p in pieces)
    out = np.empty((n,) + pieces[0].shape[1:], dtype=np.result_type(*pieces))
    at = freed = 0
    pieces.reverse()
    while pieces:
        piece = pieces.pop()
        out[at : at + piece.shape[0]] = piece
        at += piece.shape[0]
        freed += piece.nbytes
        del piece
        if freed >= _TRIM_BYTES:
            freed = release_memory()
    release_memory()
    return out


_TRIM_BYTES = 16 << 20


def release_memory():
    """Give the memory freed by the C allocator back to the system (glibc's ``malloc_trim``;
    elsewhere nothing): the pieces of a file, a block each, sit between live arrays in the
    allocator's heap, where freeing them returns nothing to the system by itself. Without it,
    ``focal evaluate`` at 10^7 trials peaks 350 MiB higher (the key's pieces and their
    concatenation both resident). Returns 0.
    """
    with contextlib.suppress(OSError, AttributeError):  # not glibc
        ctypes.CDLL(None).malloc_trim(0)
    return 0


# ---------------------------------------------------------------------------------------------
# writing


def check_id_column(column, name):
    """An id column (bytes or str array) as an (n, w) uint8 matrix, zero padded, once checked:
    ids to be written must be non-empty and hold no separator, NUL or '#' at the start.
    """
    column = np.asarray(column)
    if column.dtype.kind == "U":
        column = np.char.encode(column, "utf-8")
    if column.dtype.kind != "S":
        raise ValueError(f"ids must be strings or bytes, got dtype {column.dtype}")
    m = np.ascontiguousarray(column).view(np.uint8).reshape(column.size, column.dtype.itemsize)
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
            f"{name}[{i}] = {ids_text(column[i])!r} cannot be written: "
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
