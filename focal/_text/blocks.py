"""Text files read in blocks of whole lines with NumPy (no Python work per line).

The one block reader of focal's text files: score and key files (:mod:`focal.io`), the term
detection tables and RTTM (:mod:`focal.std`). A neutral helper: any layer may import it, and it
imports none of focal's layers. A file (``-`` is standard input, a gzip stream is decompressed:
:mod:`focal._text.source`) is read as :class:`Block` objects of whole lines, which the tokenizer
(:mod:`focal._text.fields`) splits into fields. Every error is a
:class:`~focal.exceptions.FileFormatError` ``path:line: message``.

Hostile input stays linear: each read is cut after its last line break (searched from the end;
the partial line after it is carried, never searched again), NUL bytes are detected in every
read (``/dev/zero`` fails at once), invalid UTF-8 is refused, lines longer than
:data:`MAX_LINE_BYTES` and ids longer than :data:`MAX_ID_LENGTH` characters are errors
(:func:`read_limits` changes both).
"""

from __future__ import annotations

import collections
import contextlib
import os

import numpy as np

from ..exceptions import FileFormatError, InvalidParameterError
from .source import display_name, open_source

__all__ = [
    "BLOCK_BYTES",
    "FRONT",
    "MAX_ID_LENGTH",
    "MAX_LINE_BYTES",
    "PAD",
    "Block",
    "iter_blocks",
    "read_limits",
]

FRONT = 32  # zero bytes before each block, so that windows may end at any field's end
PAD = 64  # zero bytes after each block, so that fixed-width windows never run off the end
BLOCK_BYTES = 1 << 20
_LARGEST_READ = 16 << 20  # larger block sizes read this much at a time (the buffer is zeroed)
_BOM = b"\xef\xbb\xbf"
_BOM0 = bytes(len(_BOM))


class Block:
    """One block of whole lines of UTF-8 text (checked here): ``data`` is FRONT zero bytes, the
    ``size`` bytes of text, then PAD zero bytes (a NumPy view of ``buffer``, a ``bytearray``);
    ``first_line`` is the line number of its first line. ``newlines`` (the positions of its
    line feeds in ``data``) and ``n_lines`` are found when first asked for, unless a reader
    that found them already (:func:`focal._text.fields.split_fields`) stored them.

    ``first_line`` is given, or the previous block, whose first line and line count give it
    when first asked for: the worker threads that split the blocks find their line feeds, so
    the thread reading the file does not count them (at 2x10^6 VoxCeleb-style trials x 3 files,
    that count was a quarter of ``focal apply``'s reading thread's CPU).
    """

    __slots__ = ("_before", "_n_lines", "_newlines", "buffer", "data", "path", "size")

    def __init__(self, data, size, first_line, n_lines, path, buffer):
        self.data, self.size, self._before, self.path = data, size, first_line, path
        self._n_lines, self._newlines, self.buffer = n_lines, None, buffer
        body = self.body
        if size and body.max() >= 128:
            try:
                body.tobytes().decode("utf-8")
            except UnicodeDecodeError as exc:
                line = self.first_line + _count_lines(body[: exc.start])
                raise FileFormatError(path, line, f"not a UTF-8 text file ({exc.reason})") from None

    @property
    def first_line(self):
        """Line number of the block's first line."""
        before = self._before
        if isinstance(before, Block):  # (any thread: each finds the same number)
            before = self._before = before.first_line + before.n_lines
        return before

    @property
    def body(self):
        """The text bytes (a view)."""
        return self.data[FRONT : FRONT + self.size]

    @property
    def newlines(self):
        """Positions of the block's line feeds in ``data`` (int64)."""
        if self._newlines is None:
            self._newlines = np.flatnonzero(self.body == 10) + FRONT
        return self._newlines

    @property
    def n_lines(self):
        """Number of lines: the line feeds, and the last line when it has none."""
        if self._n_lines is None:
            ends_open = bool(self.size and self.data[FRONT + self.size - 1] != 10)
            found = self._newlines
            self._n_lines = (_count_lines(self.body) if found is None else found.size) + ends_open
        return self._n_lines

    def found_lines(self, newlines):
        """Store the positions of the line feeds found by a reader (the block ends with one)."""
        self._newlines, self._n_lines = newlines, newlines.size


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


def iter_blocks(path, block_bytes=BLOCK_BYTES):
    """Yield the file as :class:`Block` objects of whole lines (the last may lack a newline).

    The bytes are checked to be text: no NUL byte (checked in every read, before any line
    break is seen), valid UTF-8 (a leading BOM is skipped); a line longer than
    :data:`MAX_LINE_BYTES` is refused. Each read is cut after its last line feed (found from
    the end); only the partial line after it is copied, and never searched again. The line
    feeds themselves are not searched here: a block's line count is taken once its reader is
    done with it (:attr:`Block.n_lines`, found by the tokenizer in the common case).
    """
    source = os.fspath(path)
    path = display_name(source)
    block_bytes = min(max(int(block_bytes), len(_BOM)), _LARGEST_READ)
    max_line = MAX_LINE_BYTES
    with open_source(source) as handle:
        carry = b""  # the unfinished last line of the previous read
        before = 1  # the next block's first line, or the block before it
        recent = collections.deque()  # the blocks yielded last, numbered from the one before
        first = True
        while True:
            buffer = bytearray(FRONT + len(carry) + block_bytes + PAD)  # zero filled
            fresh = FRONT + len(carry)  # where the bytes not scanned yet start
            buffer[FRONT:fresh] = carry
            got = handle.readinto(memoryview(buffer)[fresh:-PAD])
            end_of_file = got == 0
            if first:
                first = False
                if got >= len(_BOM) and buffer.startswith(_BOM, FRONT):
                    buffer[FRONT : FRONT + got] = buffer[FRONT + len(_BOM) : FRONT + got] + _BOM0
                    got -= len(_BOM)
            end = fresh + got
            size = end - FRONT
            at = buffer.find(0, fresh, end) if got else -1
            if at >= 0:
                raise FileFormatError(
                    path,
                    _line_after(before) + buffer.count(b"\n", FRONT, at),
                    "NUL byte: not a text file",
                )
            data = np.frombuffer(buffer, dtype=np.uint8)
            if end_of_file:  # what is left is a last line without newline
                if size:
                    yield Block(data, size, before, 1, path, buffer)
                return
            last = buffer.rfind(b"\n", fresh, end)
            if last < 0:  # no newline yet: keep reading (a long line)
                if size > max_line:
                    raise FileFormatError(
                        path,
                        _line_after(before),
                        f"line longer than {max_line} bytes (no line break): not a score file?",
                    )
                carry = bytes(buffer[FRONT:end])
                continue
            cut = last + 1 - FRONT
            _check_line_lengths(buffer, data, cut, size, max_line, before, path)
            carry = bytes(buffer[FRONT + cut : end])
            buffer[FRONT + cut : FRONT + cut + PAD] = bytes(PAD)
            block = before = Block(data, cut, before, None, path, buffer)
            yield block
            recent.append(block)
            if len(recent) > _CHAIN:  # numbered here, once a worker has counted its lines:
                oldest = recent.popleft()  # the chain of blocks (and their memory) stays short
                oldest._before = oldest.first_line


_CHAIN = 4  # blocks yielded before the reading thread numbers one (the pool's depth)


def _line_after(before):
    """The line number after ``before`` (a line number, or the :class:`Block` before)."""
    return before if isinstance(before, int) else before.first_line + before.n_lines


_SCREEN_MIN = 1 << 16  # shortest stretch searched for a line feed with bytearray.find


def _check_line_lengths(buffer, data, cut, size, max_line, before, path):
    """Refuse a line longer than ``max_line`` bytes in a read of ``size`` bytes cut after
    ``cut`` (the unfinished line after the cut included); ``before``: the read's first line
    number, or the block before it.

    A line of more than ``max_line`` bytes holds a whole aligned stretch of ``(max_line + 1)
    // 2`` bytes: when every such stretch holds a line feed (a ``find`` from its start, which
    stops at the first), no line is too long and the line feeds are not searched; otherwise
    (or for short limits) the line lengths are measured.
    """
    step = (max_line + 1) // 2
    if step >= _SCREEN_MIN and size - cut <= max_line:
        stops = range(FRONT, FRONT + cut - step + 1, step)
        if all(buffer.find(b"\n", at, at + step) >= 0 for at in stops):
            return
    newlines = np.flatnonzero(data[FRONT : FRONT + cut] == 10) + FRONT
    lengths = np.diff(newlines, prepend=FRONT - 1, append=FRONT + size) - 1
    if int(lengths.max()) > max_line:
        raise FileFormatError(
            path,
            _line_after(before) + int(np.argmax(lengths > max_line)),
            f"line longer than {max_line} bytes: not a score file?",
        )


def _count_lines(body):
    return int(np.count_nonzero(body == 10))
