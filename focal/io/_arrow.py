"""Optional pyarrow acceleration of the exact decimal-to-float64 conversion (extra ``fast``).

NumPy's string-to-float cast (:mod:`focal.io._numbers`) is correctly rounded but costs about
0.3 µs a number, most of the time of reading a score file. pyarrow's cast from strings to
float64 is also correctly rounded (the ``fast_float`` algorithm of Lemire, "Number Parsing at a
Gigabyte per Second", Software: Practice and Experience, 2021), about ten times faster, and
gives the same float64 for every token both accept. It is used when pyarrow is installed and
the tokens are plain decimals: only the bytes ``0-9 . + - e E`` (so no spelling of infinity or
NaN, no underscore), every token accepted by pyarrow and every value finite. Anything else
(including a token that is not a number, or a decimal beyond the float64 range) goes to the
NumPy path, which gives the same values and the errors with their line.
"""

from __future__ import annotations

import functools
import sys

import numpy as np

__all__ = ["enabled", "parse_numbers"]

_MIN_TOKENS = 512  # below this, pyarrow's call overhead outweighs its speed
# importing pyarrow takes 0.2-0.5 s: worth it only once this many numbers were read the slow way
# (or when something else imported it already), so that small files start fast
_IMPORT_AFTER = 1 << 18
_parsed = 0
_MAX_WIDTH = 32  # longer tokens (rare) take the NumPy path
_DECIMAL_BYTES = b"0123456789.+-eE"
_DISABLED = False  # set by tests (and nothing else) to compare the two paths


@functools.cache
def _pyarrow():
    """``(pyarrow, pyarrow.compute)``, or None when pyarrow is not installed."""
    try:
        import pyarrow
        import pyarrow.compute
    except ImportError:
        return None
    return pyarrow, pyarrow.compute


def enabled() -> bool:
    """Whether the pyarrow conversions are used (pyarrow is installed and not switched off)."""
    return not _DISABLED and _pyarrow() is not None


def parse_numbers(buf, starts, lengths):
    """float64 values of the tokens ``buf[starts[i] : starts[i] + lengths[i]]``, or None.

    Parameters
    ----------
    buf : ndarray of uint8
        Text, with at least 32 readable bytes after every token start.
    starts, lengths : ndarray of int, shape (n,)
        Byte offsets and lengths of the tokens (lengths >= 1).

    Returns
    -------
    ndarray of float64, shape (n,), or None
        Exactly the values Python's ``float`` reads; None when pyarrow is not installed or
        switched off, or when any token is not a plain finite decimal (then the caller's NumPy
        path converts them and reports errors).
    """
    global _parsed
    n = starts.size
    if n < _MIN_TOKENS or _DISABLED:
        return None
    if _parsed < _IMPORT_AFTER and "pyarrow" not in sys.modules:
        _parsed += n
        return None
    if _pyarrow() is None:
        return None
    longest = int(lengths.max())
    if longest > _MAX_WIDTH:
        return None
    pa, pc = _pyarrow()
    from ._numbers import byte_masks

    width = max(8, -(-longest // 8) * 8)
    if int(starts.max()) + width > buf.size:
        buf = np.concatenate([buf, np.zeros(width, dtype=np.uint8)])
    windows = np.lib.stride_tricks.sliding_window_view(buf, width)
    words = np.ascontiguousarray(windows[starts]).view(np.uint64)
    words &= np.take(byte_masks(width // 8), lengths, axis=0)  # zero the bytes past each token
    text = words.tobytes().translate(None, b"\x00")  # the tokens back to back
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if len(text) != int(offsets[-1]) or text.translate(None, _DECIMAL_BYTES):
        return None  # a zero byte inside a token, or a byte no plain decimal holds
    array = pa.Array.from_buffers(
        pa.large_string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(text)]
    )
    try:
        values = pc.cast(array, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if values.null_count:
        return None
    # the values buffer itself: Array.to_numpy would import pandas (a second or more)
    value = np.frombuffer(values.buffers()[1], dtype=np.float64, count=n, offset=8 * values.offset)
    value = value.copy()
    if not np.isfinite(value).all():
        return None  # a decimal beyond the float64 range: the NumPy path says where
    return value
