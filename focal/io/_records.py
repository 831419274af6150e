"""The records of a score file as they were read: for comparing two files' trials and for an
output written in the file's layout.

:class:`Records` holds, for each block, the block's text and its fields' offsets (the
tokenizer's :class:`focal._text.fields.Fields`), so nothing is copied until something asks.

- Streaming (:mod:`focal.io.stream`): the systems' files must list the same trials in the same
  order. Two files' trials are compared as text (:meth:`Records.same_trials`): the bytes from
  each record's model field to the end of its test field. Ids hold no separator, so equal runs
  have equal first and last fields, the ids; runs that differ (another separator, another
  column between) are compared again as id arrays. The id arrays (:meth:`Records.ids`) are made
  only when something asks for them.
- ``focal apply`` writes each trial's output where the first input file had its score
  (:meth:`Records.texts`): the record as it was read (its ids, any other column such as NIST's
  ``side`` or wespeaker's label, its separators), its score field's text replaced by the output
  value; a header line is written back as it was read.

What keeps the ids as text (the ``bench_apply`` files, 2 x 10^6 trials x 3 systems with
VoxCeleb-style ids read by :func:`focal.io.stream.stream` in one thread, CPU time): 2.9 s
against 4.7 s with id arrays (38 % less).
"""

from __future__ import annotations

import numpy as np

from .._text import arrow as _arrow
from .._text.fields import format_lines, gather_ids
from .._text.numbers import format_numbers

__all__ = ["Records", "same_ids"]


class Records:
    """Records of consecutive blocks of one file, with the columns of their roles.

    Parameters
    ----------
    parts : list of tuple
        ``(data, starts, lengths)`` per block: field ``j`` of record ``i`` is
        ``data[starts[i, j] : starts[i, j] + lengths[i, j]]``.
    columns : dict
        ``{role: column}`` of the file: ``model``, ``test``, ``score``, and ``label`` or
        ``side`` where it has them.
    header : bytes or None
        The file's header line as read (without its line end), or None.
    """

    __slots__ = ("columns", "header", "parts")

    def __init__(self, parts, columns, header=None):
        self.parts, self.columns, self.header = parts, columns, header

    def __len__(self):
        return sum(p[1].shape[0] for p in self.parts)

    def __getitem__(self, where):
        """The records of a slice of consecutive records (views of the same buffers)."""
        start, stop, step = where.indices(len(self))
        if step != 1:
            raise ValueError("Records take slices of consecutive records only")
        parts, at = [], 0
        for data, starts, lengths in self.parts:
            n = starts.shape[0]
            a, b = max(start - at, 0), min(stop - at, n)
            if a < b:
                parts.append((data, starts[a:b], lengths[a:b]))
            at += n
        return Records(parts, self.columns, self.header)

    def select(self, keep):
        """The records where the boolean mask ``keep`` (one entry per record) is True."""
        parts, at = [], 0
        for data, starts, lengths in self.parts:
            n = starts.shape[0]
            mask = keep[at : at + n]
            parts.append((data, starts[mask], lengths[mask]))
            at += n
        return Records(parts, self.columns, self.header)

    @staticmethod
    def concat(pieces):
        """Records of consecutive pieces, one after the other (the first one's header)."""
        first = pieces[0]
        return Records([p for r in pieces for p in r.parts], first.columns, first.header)

    def field(self, role):
        """The ``role`` field of every record as a fixed-width bytes array, or None when the
        file has no such column.
        """
        column = self.columns.get(role)
        if column is None:
            return None
        pieces = [gather_ids(d, s[:, column], n[:, column]) for d, s, n in self.parts]
        width = max(p.dtype.itemsize for p in pieces)
        return np.concatenate([p.astype(f"S{width}") for p in pieces])

    def ids(self):
        """``(models, tests)`` as fixed-width bytes arrays (:meth:`field`)."""
        return self.field("model"), self.field("test")

    def same_trials(self, other):
        """Whether ``other`` (as many records) holds the same (model, test) trials, record by
        record: compared as text where pyarrow can (:func:`focal._text.arrow.equal_segments`,
        see the module's docstring), else, and where the text differs, as id arrays.
        """
        edges = [np.cumsum([0] + [p[1].shape[0] for p in r.parts]) for r in (self, other)]
        # the edges merged without np.unique, which imports a module (a worker runs this)
        cuts = sorted({int(e) for e in np.concatenate(edges)})
        for lo, hi in zip(cuts[:-1], cuts[1:]):  # parts over the same records
            a, b = self[lo:hi], other[lo:hi]
            if not _arrow.equal_segments(*a._run(), *b._run()) and not same_ids(a.ids(), b.ids()):
                return False
        return True

    def _run(self):
        """``(data, starts, stops)`` of the text from the model field to the end of the test
        field of each record (one part).
        """
        data, starts, lengths = self.parts[0]
        model, test = self.columns["model"], self.columns["test"]
        return data, starts[:, model], starts[:, test] + lengths[:, test]

    def texts(self, values):
        """The output lines, a list of bytes-like pieces: each record as read, from its first
        field to its last, its score field's text replaced by ``repr`` of its value (as
        :func:`focal._text.numbers.format_numbers` writes it), and a line feed.
        """
        score = self.columns["score"]
        out, at = [], 0
        for data, starts, lengths in self.parts:
            n = starts.shape[0]
            y = values[at : at + n]
            at += n
            first, cut = starts[:, 0], starts[:, score]
            rest = cut + lengths[:, score]
            end = starts[:, -1] + lengths[:, -1]
            if score == starts.shape[1] - 1:  # the score ends the record: one segment a line
                text = _arrow.join_lines(data, first, cut, y, format_numbers)
                if text is None:
                    text = format_lines([_bytes(data, first, cut), format_numbers(y)], sep=b"")
            else:
                text = format_lines(
                    [_bytes(data, first, cut), format_numbers(y), _bytes(data, rest, end)], sep=b""
                )
            out.append(text)
        return out


def _bytes(data, starts, stops):
    """The segments ``data[starts[i] : stops[i]]`` as an (n, w) uint8 matrix, zero padded."""
    ids = gather_ids(data, starts, stops - starts)
    return ids.view(np.uint8).reshape(ids.size, ids.dtype.itemsize)


def same_ids(a, b):
    """Whether two tuples of id arrays (fixed-width bytes) hold the same ids, row by row; as raw
    words when their widths agree (10x faster than comparing the strings).
    """
    for x, y in zip(a, b):
        if x.dtype == y.dtype and x.dtype.itemsize % 8 == 0:
            x, y = (np.ascontiguousarray(c).view(np.uint64) for c in (x, y))
        if not np.array_equal(x, y):
            return False
    return True
