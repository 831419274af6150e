"""Optional pyarrow acceleration of the text kernels of the streaming readers (extra ``fast``).

Three kernels, each answering exactly what its NumPy counterpart answers, or None (pyarrow not
installed or switched off, a batch too small to gain, anything unexpected), and the caller then
takes the NumPy path:

- :func:`parse_numbers`, decimal tokens to float64. pyarrow's cast from strings to float64 is
  correctly rounded (the ``fast_float`` algorithm of Lemire, "Number Parsing at a Gigabyte per
  Second", Software: Practice and Experience, 2021), so every token it accepts reads to the
  double Python's ``float`` reads. It accepts a subset of ``float``'s syntax (no underscore,
  no white space, no non-ASCII digit) plus ``nan(...)``; the spellings of infinity and NaN are
  left to NumPy by refusing every non-finite result, and so is a decimal beyond the float64
  range.
- :func:`equal_segments`, whether two lists of byte segments are equal pairwise.
- :func:`join_lines`, lines ``segment + repr(value) + newline``. pyarrow writes the shortest
  round-tripping digits (as ``repr``), in another layout for some magnitudes and for integral
  values: those rows are written by the NumPy kernel the caller hands in instead, and a probe
  of hard values checks the whole writer against ``repr`` once per process (any difference, as
  another pyarrow version might bring, switches the writer off).

The text is never gathered: each kernel sees the block buffer itself as a pyarrow array of
``2 n`` elements whose offsets interleave the tokens with the bytes between them, the latter
marked null by a validity bitmap of ``0x55`` bytes (so the kernels skip them).

The kernels never call the NumPy ones (:mod:`focal._text.numbers` calls them, and hands its
writer in to :func:`join_lines`). ``FOCAL_NO_ARROW=1`` switches them off for a process.

What keeps them (``benchmarks/bench_apply.py``, ``focal apply`` of a 3-system fusion, 10^7
trials, 2 cores): 12.0 CPU s with them, 26.1 s without (the pyarrow row against the
``FOCAL_NO_ARROW=1`` row of the same run).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading

import numpy as np

__all__ = ["enabled", "equal_segments", "join_lines", "parse_numbers"]

_MIN_TOKENS = 512  # below this, pyarrow's call overhead outweighs its speed
# importing pyarrow takes 0.2-0.5 s: worth it only once this many numbers were read or written
# the slow way (or when something else imported it already), so that small files start fast
_IMPORT_AFTER = 1 << 18
_seen = 0
_FEW = 32  # join_lines writes up to this many numbers of a batch with repr itself
#: Switched off for the process by the environment variable FOCAL_NO_ARROW (any value but
#: empty or 0), and by tests, to compare the two paths
_DISABLED = os.environ.get("FOCAL_NO_ARROW", "") not in ("", "0")


@functools.cache
def _pyarrow():
    """``(pyarrow, pyarrow.compute)``, or None when pyarrow is not installed.

    Called in the main thread only (:func:`load`): a worker thread never imports. When Ctrl-C
    lands in the main thread while CPython's import machinery holds its global import lock
    (a weak-reference callback of a module lock), the KeyboardInterrupt is swallowed and the
    lock stays held by the main thread: an import in a worker then waits for ever, and so does
    the main thread waiting for the worker (``focal apply`` hung on 1 Ctrl-C in about 150 at
    start-up on a loaded machine).
    """
    try:
        import pyarrow
        import pyarrow.compute
    except ImportError:
        return None
    return pyarrow, pyarrow.compute


_loaded = None  # (pyarrow, pyarrow.compute), set by load()
_importing = threading.local()  # .allowed: this thread may load (imports_allowed)


@contextlib.contextmanager
def imports_allowed():
    """Let the calling thread load pyarrow (:func:`load`) though it is not the main one: for
    threads focal does not own, that import code anyway (a Dask worker's tasks, which would
    otherwise read every partition without the kernels).
    """
    _importing.allowed = True
    try:
        yield
    finally:
        _importing.allowed = False


def load():
    """Import pyarrow (and what the writer's probe needs), in the main thread (or one under
    :func:`imports_allowed`), once ``_IMPORT_AFTER`` numbers were counted (or pyarrow was
    imported by something else).

    The readers' and writers' calling threads call it between the blocks their workers
    handle; the kernels answer from then on. Returns whether the kernels are loaded.
    """
    global _loaded
    here = threading.current_thread() is threading.main_thread()
    if _loaded is None and (here or getattr(_importing, "allowed", False)):
        if not _DISABLED and (_seen >= _IMPORT_AFTER or "pyarrow" in sys.modules):
            arrow = _pyarrow()
            if arrow is not None:
                import numpy.random  # noqa: F401 - for the writer's probe, run in a worker

                _loaded = arrow
    return _loaded is not None


def enabled() -> bool:
    """Whether the pyarrow kernels are used (pyarrow is installed and not switched off)."""
    return not _DISABLED and _pyarrow() is not None


def _arrow_for(n, numbers=True):
    """``(pyarrow, pyarrow.compute)`` when a batch of n items is worth pyarrow, else None.

    Before pyarrow is loaded (:func:`load`), batches of numbers count towards
    ``_IMPORT_AFTER`` (other items, cheap in NumPy, do not).
    """
    global _seen
    if n < _MIN_TOKENS or _DISABLED:
        return None
    if _loaded is None and not load():
        _seen += n if numbers else 0
        return None
    return _loaded


def _interleaved(starts, stops, size):
    """Offsets ``starts[0], stops[0], starts[1], stops[1], ...``, or None when they decrease.

    Element ``2 i`` of an array with these offsets is segment i, element ``2 i + 1`` the bytes
    between segment i and segment i + 1 (up to ``size`` after the last one).
    """
    n = starts.size
    off = np.empty(2 * n + 1, dtype=np.int64)
    off[0:-1:2] = starts
    off[1:-1:2] = stops
    off[-1] = size
    if off[0] < 0 or (off[1:] < off[:-1]).any():
        return None
    return off


def _segments(pa, kind, data, off):
    """Array of the segments of ``data`` (uint8) at the interleaved offsets, without a copy.

    The elements between segments are null: kernels skip them.
    """
    n = (off.size - 1) // 2
    validity = np.full(-(-2 * n // 8), 0x55, dtype=np.uint8)  # bits 0, 2, 4, ...: the segments
    buffers = [pa.py_buffer(validity), pa.py_buffer(off), pa.py_buffer(data)]
    return pa.Array.from_buffers(kind, 2 * n, buffers, null_count=n)


def _values(array, dtype, count):
    """The first ``count`` values (a primitive pyarrow array) or offsets (a large binary one) as
    a NumPy view (``to_numpy`` would import pandas, a second or more).
    """
    at = array.offset * np.dtype(dtype).itemsize
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=count, offset=at)


def parse_numbers(buf, starts, lengths):
    """float64 values of the tokens ``buf[starts[i] : starts[i] + lengths[i]]``, or None.

    Parameters
    ----------
    buf : ndarray of uint8
        Text holding every token.
    starts, lengths : ndarray of int, shape (n,)
        Byte offsets and lengths of the tokens (lengths >= 1), in any order.

    Returns
    -------
    ndarray of float64, shape (n,), or None
        Exactly the values Python's ``float`` reads; None when pyarrow is not installed or
        switched off, when tokens overlap, or when any token is not a finite decimal of
        pyarrow's syntax (then the caller's NumPy path converts them and reports errors).
    """
    n = starts.size
    arrow = _arrow_for(n)
    if arrow is None:
        return None
    pa, pc = arrow
    buf = np.ascontiguousarray(buf, dtype=np.uint8)
    order = None
    off = _interleaved(starts, starts + lengths, buf.size)
    if off is None:  # tokens read out of position order (rare): sort them
        order = np.argsort(starts, kind="stable")
        off = _interleaved(starts[order], starts[order] + lengths[order], buf.size)
        if off is None:
            return None  # overlapping tokens
    try:
        values = pc.cast(_segments(pa, pa.large_string(), buf, off), pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None  # a token pyarrow refuses: the NumPy path says which
    value = _values(values, np.float64, 2 * n)[0::2]
    if not np.isfinite(value).all():
        return None  # inf, nan or a decimal beyond the float64 range: the NumPy path decides
    if order is None:
        return value.copy()
    out = np.empty(n, dtype=np.float64)
    out[order] = value
    return out


def equal_segments(data_a, starts_a, stops_a, data_b, starts_b, stops_b):
    """Whether ``data_a[starts_a[i] : stops_a[i]] == data_b[starts_b[i] : stops_b[i]]`` for
    every i, or None.

    Parameters
    ----------
    data_a, data_b : ndarray of uint8
        Text buffers.
    starts_a, stops_a, starts_b, stops_b : ndarray of int, shape (n,)
        Byte offsets of the segments, each list in increasing position order.

    Returns
    -------
    bool or None
        None when pyarrow is not installed or switched off, or when the segments of a buffer
        overlap or are out of order.
    """
    n = starts_a.size
    if starts_b.size != n:
        return None
    arrow = _arrow_for(n, numbers=False)
    if arrow is None:
        return None
    pa, pc = arrow
    if not np.array_equal(stops_a - starts_a, stops_b - starts_b):
        return False
    data_a = np.ascontiguousarray(data_a, dtype=np.uint8)
    data_b = np.ascontiguousarray(data_b, dtype=np.uint8)
    off_a = _interleaved(starts_a, stops_a, data_a.size)
    off_b = _interleaved(starts_b, stops_b, data_b.size)
    if off_a is None or off_b is None:
        return None
    a = _segments(pa, pa.large_binary(), data_a, off_a)
    b = _segments(pa, pa.large_binary(), data_b, off_b)
    return bool(pc.all(pc.equal(a, b), min_count=0).as_py())


# ---------------------------------------------------------------------------------------------
# writing


def _arrow_writes_repr(x):
    """Rows whose pyarrow text is ``repr``'s: a safe subset, found empirically (pyarrow 14 and 26)
    and checked at first use by :func:`_writer_agrees`.

    ``repr`` writes positional notation for ``1e-4 <= |x| < 1e16`` with ``.0`` after integral
    values and scientific notation elsewhere with at least two exponent digits (``1e-05``);
    pyarrow writes positional notation for about ``1e-7 <= |x| < 1e10``, integral values
    without ``.0``, and one exponent digit when one is enough. Both write the shortest digits
    that read back to x. A double below (above) a power of ten has its shortest decimal below
    (above) it too, so comparing x with the thresholds compares the decimals' exponents.
    """
    a = np.abs(x)
    positional = (a >= 1e-4) & (a < 1e10) & (x != np.trunc(x))
    return positional | (a >= 1e16) | ((a < 1e-9) & (a > 0))


def _lines(pa, pc, data, starts, stops, x, format_numbers):
    """The bytes of the lines: segment i, the text of ``x[i]``, a newline; or None.

    One ``take`` over an array C whose data is ``data``, pyarrow's texts of x, the texts of the
    rows pyarrow writes otherwise than ``repr`` (:func:`focal._text.numbers.format_numbers`) and a
    newline; C's elements are the segments and the bytes between them (element 2 i: segment
    i), then the n texts, the fixed texts, and the newline. Segments that start lines of
    ``data`` take the newline before them along (the previous line's end): two elements a line
    instead of three.
    """
    n, size = x.size, data.size
    numbers = pa.Array.from_buffers(pa.float64(), n, [None, pa.py_buffer(x)])
    text = pc.cast(numbers, pa.large_string())
    text_off = np.frombuffer(text.buffers()[1], np.int64, count=n + 1, offset=8 * text.offset)
    text_data = np.frombuffer(text.buffers()[2], np.uint8, count=int(text_off[-1]))
    fix = np.flatnonzero(~_arrow_writes_repr(x))
    m, end = fix.size, size + int(text_off[-1])
    fixed_off = np.zeros(m + 1, dtype=np.int64)
    if m > _FEW:
        matrix = format_numbers(x[fix])  # zero bytes are padding (leading or trailing)
        fixed = matrix.tobytes().translate(None, b"\x00")
        np.cumsum(np.count_nonzero(matrix, axis=1), out=fixed_off[1:])
    else:  # format_numbers' set-up would cost more than repr, which it calls for most of them
        texts = [repr(v).encode() for v in x[fix].tolist()]
        fixed = b"".join(texts)
        np.cumsum([len(t) for t in texts], out=fixed_off[1:])
    # C's offsets: segments and the bytes between them, the texts, the fixed texts, a newline
    c_off = np.empty(3 * n + m + 2, dtype=np.int64)
    c_off[0 : 2 * n : 2] = starts
    c_off[1 : 2 * n : 2] = stops
    c_off[2 * n : 3 * n + 1] = text_off + size
    c_off[3 * n : 3 * n + m + 1] = fixed_off + end
    c_off[-1] = c_off[-2] + 1
    segments = c_off[: 2 * n + 1]  # c_off[2 n] = size: the last gap runs to the end of data
    fold = n > 1 and 1 <= int(starts[1:].min()) and int(starts[1:].max()) <= size
    fold = fold and bool((data[starts[1:] - 1] == 10).all())
    if fold:
        segments[2 : 2 * n : 2] -= 1
        if (segments[1:] < segments[:-1]).any():  # the newlines belong to the segments
            fold = False
            segments[2 : 2 * n : 2] += 1
    if segments[0] < 0 or (segments[1:] < segments[:-1]).any():
        return None
    c_data = np.concatenate(
        [data, text_data, np.frombuffer(fixed, np.uint8), np.frombuffer(b"\n", np.uint8)]
    )
    buffers = [None, pa.py_buffer(c_off), pa.py_buffer(c_data)]
    c = pa.Array.from_buffers(pa.large_binary(), 3 * n + m + 1, buffers)
    texts_at = np.arange(2 * n, 3 * n)
    texts_at[fix] = np.arange(3 * n, 3 * n + m)
    per_line = 2 if fold else 3
    count = per_line * n + fold
    take = np.empty(count, dtype=np.int64)
    take[0 : per_line * n : per_line] = np.arange(0, 2 * n, 2)
    take[1 : per_line * n : per_line] = texts_at
    if fold:
        take[-1] = 3 * n + m  # the other lines' newlines start the next segments
    else:
        take[2::3] = 3 * n + m
    out = pc.take(c, pa.Array.from_buffers(pa.int64(), count, [None, pa.py_buffer(take)]))
    total = int(_values(out, np.int64, count + 1)[-1])
    return memoryview(out.buffers()[2])[:total]


def _probe():
    """Hard values for the writer: every decade and its neighbours, integers, zeros,
    infinities, ties, the extreme doubles, and random doubles of every exponent.
    """
    rng = np.random.default_rng(20240601)
    decades = 10.0 ** np.arange(-12, 23)
    hard = [
        decades,
        np.nextafter(decades, 0),
        np.nextafter(decades, np.inf),
        1.5 * decades,
        np.arange(-100, 101, dtype=np.float64),
        np.array([0.0, -0.0, np.inf, -np.inf, 0.5, 2.5, 1e15 + 0.5, 2.0**53, 2.0**53 + 2]),
        np.array([5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1 / 3]),
        rng.normal(size=2000) * 10.0 ** rng.integers(-12, 20, 2000),
        rng.integers(0, 2**64, 2000, dtype=np.uint64).view(np.float64),
    ]
    x = np.concatenate(hard)
    x = x[~np.isnan(x)]
    return np.concatenate([x, -x])


@functools.cache
def _writer_agrees(format_numbers):
    """Whether :func:`_lines` writes ``repr``'s text on the probe values (once a process; the
    probe's ``numpy.random`` was imported by :func:`load`).
    """
    pa, pc = _loaded
    x = _probe()
    empty = np.zeros(x.size, dtype=np.int64)
    got = _lines(pa, pc, np.zeros(0, dtype=np.uint8), empty, empty, x, format_numbers)
    want = "".join(f"{v!r}\n" for v in x.tolist()).encode()
    return got is not None and bytes(got) == want


def join_lines(data, starts, stops, values, format_numbers):
    """The lines ``data[starts[i] : stops[i]]``, ``repr(values[i])``, newline; or None.

    Parameters
    ----------
    data : ndarray of uint8
        Text holding the segments.
    starts, stops : ndarray of int, shape (n,)
        Byte offsets of the segments, in increasing position order, not overlapping.
    values : ndarray of float64, shape (n,)
        Finite or infinite values (a NaN is written ``nan``).
    format_numbers : callable
        The NumPy kernel (:func:`focal._text.numbers.format_numbers`), which writes the values
        whose pyarrow text differs from ``repr``'s.

    Returns
    -------
    memoryview of bytes, or None
        The lines, one after the other: the text of a value is exactly ``repr``'s (as written
        by :func:`focal._text.numbers.format_numbers`). None when pyarrow is not installed or
        switched off, when the segments are out of order or overlap, or when pyarrow's
        number text differs from ``repr`` on the probe values.
    """
    n = starts.size
    arrow = _arrow_for(n)
    if arrow is None or not _writer_agrees(format_numbers):
        return None
    pa, pc = arrow
    data = np.ascontiguousarray(data, dtype=np.uint8)
    x = np.ascontiguousarray(values, dtype=np.float64).ravel()
    if x.size != n or stops.size != n:
        return None
    return _lines(pa, pc, data, starts, stops, x, format_numbers)
