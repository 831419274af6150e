"""The records of a score file as they were read, for an output written in the file's layout.

``focal apply`` writes each trial's output where the first input file had its score: the record
is kept as it was read (its ids, any other column such as NIST's ``side`` or wespeaker's label,
its separators) with the score field's text replaced by the output value, and a header line is
written back as it was read. :class:`Records` holds, for each block, the block's text and its
fields' offsets (the tokenizer's :class:`focal._text.fields.Fields`), so nothing is copied
until the output is written; :func:`focal.workflows.apply.write_applied` calls
:meth:`Records.texts`.
"""

from __future__ import annotations

import numpy as np

from .._text import arrow as _arrow
from .._text.fields import format_lines, gather_ids
from .._text.numbers import format_numbers

__all__ = ["Records", "slice_parts"]


def slice_parts(parts, where, kind):
    """The parts (tuples of a buffer and per-record arrays, one part per block) of the records
    of the slice ``where`` of consecutive records, as views of the same buffers; ``kind`` names
    the holder in the error of a step.
    """
    start, stop, step = where.indices(sum(p[1].shape[0] for p in parts))
    if step != 1:
        raise ValueError(f"{kind} take slices of consecutive records only")
    out, at = [], 0
    for data, *rows in parts:
        n = rows[0].shape[0]
        a, b = max(start - at, 0), min(stop - at, n)
        if a < b:
            out.append((data, *(r[a:b] for r in rows)))
        at += n
    return out


class Records:
    """Records of consecutive blocks of one file, with the column of their score.

    Parameters
    ----------
    parts : list of tuple
        ``(data, starts, lengths)`` per block: field ``j`` of record ``i`` is
        ``data[starts[i, j] : starts[i, j] + lengths[i, j]]``.
    columns : dict
        ``{role: column}`` of the file: ``score``, and ``label`` or ``side`` where it has them.
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
        return Records(slice_parts(self.parts, where, "Records"), self.columns, self.header)

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
