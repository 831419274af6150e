"""Text files as lines of white-space separated fields, read in blocks with NumPy.

The block reader of :mod:`focal._text.blocks` (whole lines per block; NUL bytes, invalid UTF-8 and
over-long lines refused with ``path:line:``) split into fields at white space (bytes <= 32:
space, tab, CR, LF, other control characters), with no Python work per line. Unlike the score
readers of :mod:`focal.io`, a comma is part of a field and a line may hold any number of fields:
the caller picks the lines it wants (by first field, by field count) and gets their fields as
:class:`focal._text.blocks.Fields` (ids and exactly parsed numbers, errors with the line).

Used by the term-detection readers of :mod:`focal.std`, which sit below :mod:`focal.io` in the
package layers: like :mod:`focal._text.blocks`, a neutral helper that imports none of focal's
layers.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import FileFormatError
from . import blocks as _blocks
from .blocks import FRONT, Fields, iter_blocks

__all__ = ["LineFields", "iter_line_fields", "max_line_bytes"]

#: Bytes per read (None: the io readers' default); tests set it small to cross block boundaries
BLOCK_BYTES = None


def max_line_bytes() -> int:
    """The longest line the readers accept, in bytes (see :func:`focal.io.read_limits`)."""
    return _blocks.MAX_LINE_BYTES


class LineFields:
    """The fields of one block of lines.

    Field ``k`` is ``data[starts[k] : ends[k]]``. Line ``i`` of the block (file line
    ``first_line + i``) holds ``counts[i]`` fields, the first being field ``first[i]``.
    """

    __slots__ = ("data", "starts", "ends", "counts", "first", "first_line", "path")

    def __init__(self, data, starts, ends, counts, first, first_line, path):
        self.data, self.starts, self.ends = data, starts, ends
        self.counts, self.first, self.first_line, self.path = counts, first, first_line, path

    def first_field_is(self, text: bytes) -> np.ndarray:
        """Boolean per line: its first field is exactly ``text``."""
        return self.first_field_starts_with(text) & (self._first_length() == len(text))

    def first_field_starts_with(self, prefix: bytes) -> np.ndarray:
        """Boolean per line: it has a field and the first one starts with ``prefix``."""
        out = self.counts > 0
        where = np.flatnonzero(out)
        begin = self.starts[self.first[where]]
        ok = self._first_length()[where] >= len(prefix)
        for j, byte in enumerate(prefix):
            ok &= self.data[np.minimum(begin + j, self.data.size - 1)] == byte
        out[where] = ok
        return out

    def _first_length(self) -> np.ndarray:
        length = np.zeros(self.counts.size, dtype=np.int64)
        has = self.counts > 0
        k = self.first[has]
        length[has] = self.ends[k] - self.starts[k]
        return length

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


def iter_line_fields(path):
    """Yield a file as :class:`LineFields`, one per block of whole lines.

    Reading is :func:`focal._text.blocks.iter_blocks` (a leading BOM skipped; NUL bytes, invalid
    UTF-8 and lines longer than :func:`max_line_bytes` refused with ``path:line:``).
    """
    blocks = iter_blocks(path) if BLOCK_BYTES is None else iter_blocks(path, BLOCK_BYTES)
    for block in blocks:
        body = block.body
        sep = np.ones(block.size + 2, dtype=bool)
        np.less_equal(body, 32, out=sep[1:-1])
        edges = np.flatnonzero(sep[1:] != sep[:-1]) + FRONT
        starts, ends = edges[0::2], edges[1::2]
        newlines = block.newlines
        n_lines = int(newlines.size) + (1 if block.size and body[-1] != 10 else 0)
        line_of = np.cumsum(body == 10, dtype=np.int32)[starts - FRONT]  # newlines before
        counts = np.bincount(line_of, minlength=n_lines)[:n_lines]
        first = np.cumsum(counts) - counts
        yield LineFields(block.data, starts, ends, counts, first, block.first_line, block.path)
