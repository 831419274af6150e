"""Vectorized, exact conversion between decimal text and float64 (no Python loop per number).

Score files hold millions of numbers; formatting or parsing them one Python object at a time costs
a few hundred nanoseconds each, which is the whole time budget of a streaming back-end. Here
numbers travel as byte matrices, a few thousand rows at a time (so that temporaries stay in the
CPU cache).

Parsing
-------
The tokens of a block are gathered into one fixed-width bytes array (a few thousand at a time)
and converted by NumPy's string-to-float cast, which is correctly rounded: each number is the
float64 that Python's ``float`` reads. Tokens longer than 64 bytes are converted one at a time,
so that one long token never widens the others. A whole-array check then refuses what
``float`` would read but a score file must not hold (NaN, underscores, a finite decimal beyond
the float64 range).

Formatting
----------
For ``1e-4 <= |x| < 1e16`` (where ``repr`` writes positional notation), the exact product
``|x| * 10**k`` (a float64 two-product, ``10**k`` exact for ``k <= 22``) gives the correctly
rounded 15-, 16- and 17-digit decimals; the shortest one inside the rounding interval of ``x``
(whose half-widths are exact in float64) is written. That is ``repr``'s text, and it reads back
bit-identically. Zeros, infinities and NaN are written as ``repr`` writes them, and the few other
values (tiny, huge, subnormal) by ``repr`` itself.
"""

from __future__ import annotations

import functools

import numpy as np

from . import arrow as _arrow

__all__ = ["byte_masks", "format_numbers", "parse_numbers"]

_P10_D = np.array([float(10**k) for k in range(23)])  # exact: 5**k < 2**53 for k <= 22
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)  # k bytes 0xFF


@functools.cache
def byte_masks(n_words):
    """(8 * n_words + 1, n_words) uint64 table: row k keeps the first k bytes of a token."""
    k = np.arange(8 * n_words + 1)[:, None]
    j = np.arange(n_words)[None, :]
    return np.take(_LOW_BYTES, np.clip(k - 8 * j, 0, 8))


_ROWS = 16384  # rows converted at a time: the kernels' temporaries stay in the CPU cache
_SLOW_WIDTH = 64  # longer tokens are converted one by one


def parse_numbers(buf, starts, lengths, on_error):
    """float64 values of the number tokens ``buf[starts[i] : starts[i] + lengths[i]]``.

    Parameters
    ----------
    buf : ndarray of uint8
        Text, with at least 64 readable bytes after every token start.
    starts, lengths : ndarray of int, shape (n,)
    on_error : callable
        ``on_error(i, message)`` is called for the first token ``i`` that is not a number
        (message ``"'text' is not a number"``) or is NaN (``"is NaN"``); it must raise.

    Values are exactly what Python's ``float`` reads, except that underscores (which ``float``
    accepts) are rejected, NaN is an error, and so is a finite decimal too large for float64
    (``1e400``, which ``float`` reads as inf); ``inf`` and ``infinity`` (any case, signed) are
    accepted.
    """
    fast = _arrow.parse_numbers(buf, starts, lengths)  # optional pyarrow, same values
    if fast is not None:
        return fast
    value = np.empty(starts.size, dtype=np.float64)
    first = None  # (row, message) of the first bad token: the batches are read out of order
    long = np.flatnonzero(lengths > _SLOW_WIDTH)  # rare: one at a time, memory stays linear
    for i in long:
        token = buf[starts[i] : starts[i] + lengths[i]]
        first = _parse_slow(value, token[None, :], np.array([i]))
        if first is not None:
            break
    rows_all = np.flatnonzero(lengths <= _SLOW_WIDTH) if long.size else np.arange(starts.size)
    if rows_all.size:
        width = max(8, -(-int(lengths[rows_all].max()) // 8) * 8)
        if int(starts[rows_all].max()) + width > buf.size:
            buf = np.concatenate([buf, np.zeros(width, dtype=np.uint8)])
        windows = np.lib.stride_tricks.sliding_window_view(buf, width)
        masks = byte_masks(width // 8)
        for i in range(0, rows_all.size, _ROWS):
            rows = rows_all[i : i + _ROWS]
            words = np.ascontiguousarray(windows[starts[rows]]).view(np.uint64)
            words &= np.take(masks, lengths[rows], axis=0)  # zero the bytes past each token
            bad = _parse_slow(value, words.view(np.uint8), rows)
            if bad is not None:  # rows increase in each kind of batch: no earlier error after
                first = bad if first is None else min(first, bad)
                break
    if first is not None:
        on_error(*first)
    return value


def _parse_slow(value, tokens, rows):
    """NumPy's correctly rounded string conversion of a (n, w) matrix of zero-padded tokens
    into ``value[rows]``; returns None, or ``(row, message)`` of the first bad token (in row
    order).
    """
    text = np.ascontiguousarray(tokens).view(f"S{tokens.shape[1]}").ravel()
    bad = np.zeros(text.size, dtype=bool)
    if (tokens == 95).any():  # float() and NumPy read '1_0' as 10: not score-file syntax
        bad = (tokens == 95).any(axis=1)
        text = np.where(bad, b"0", text)
    with np.errstate(over="ignore"):  # 1e999 reads as inf, refused below
        try:
            parsed = text.astype(np.float64)
        except ValueError:  # includes UnicodeDecodeError: find which (a slow path, once)
            parsed = np.zeros(text.size)
            for i, token in enumerate(text):
                try:
                    parsed[i] = float(token)
                except ValueError:
                    bad[i] = True
    special = ~np.isfinite(parsed)
    nan = np.isnan(parsed) & ~bad
    overflow = special & ~nan & ~bad  # digits that overflow, not a spelling of infinity
    overflow[overflow] = ((tokens[overflow] >= 48) & (tokens[overflow] <= 57)).any(axis=1)
    wrong = bad | nan | overflow
    if not wrong.any():
        value[rows] = parsed
        return None
    i = int(np.argmax(wrong))
    if bad[i]:
        return rows[i], f"{_show(tokens[i])!r} is not a number"
    if nan[i]:
        return rows[i], "is NaN"
    return rows[i], (
        f"{_show(tokens[i])!r} is out of the float64 range (write inf for an infinite value)"
    )


def _show(row):
    return bytes(row).rstrip(b"\x00").decode("utf-8", "replace")


# ---------------------------------------------------------------------------------------------
# formatting

_ZERO = np.uint8(48)
_WIDTH = 24  # sign, up to 17 digits, the point, up to 4 leading zeros of 0.000x
_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp's splitting constant
_P10_HI = (_P10_D * _SPLIT) - ((_P10_D * _SPLIT) - _P10_D)  # Veltkamp split of 10**k
_P10_LO = _P10_D - _P10_HI


def _two_product(a, k):
    """(hi, lo) with hi + lo == a * 10**k exactly (Dekker's product; 0 <= k <= 22, no FMA)."""
    p, ph, pl = np.take(_P10_D, k), np.take(_P10_HI, k), np.take(_P10_LO, k)
    c = a * _SPLIT
    ah = c - (c - a)
    al = a - ah
    hi = a * p
    lo = ((ah * ph - hi) + ah * pl + al * ph) + al * pl
    return hi, lo


_LUT4_U32 = np.frombuffer("".join(f"{i:04d}" for i in range(10_000)).encode(), dtype=np.uint32)


def _digits17(d):
    """(n, 17) ASCII digit matrix of integers 0 <= d < 10**17, zero padded on the left."""
    d = d.astype(np.uint64)
    groups = np.empty((d.size, 5), dtype=np.uint32)  # 20 digits, four at a time
    for j in range(4, -1, -1):
        q = d // np.uint64(10_000)
        groups[:, j] = np.take(_LUT4_U32, (d - q * np.uint64(10_000)).astype(np.intp))
        d = q
    return groups.view(np.uint8)[:, 3:]


def _shortest_digits(a):
    """Shortest round-tripping decimal of positive float64 values 1e-6 <= a < 1e17.

    Returns (d, e, ok): ``d`` a 17-digit integer (trailing zeros past the shortest digits),
    the decimal exponent ``e`` of its first digit, and ok (False: format another way).

    The candidates are those of the module's docstring, from ``a * 10**(16 - e)``; the
    half-widths of a's rounding interval are half the gaps to the neighbouring doubles, times
    ``10**k``. Candidates too close to the interval's ends to decide are skipped for a longer
    one.
    """
    e = np.floor(np.log10(a)).astype(np.int64)
    k = np.minimum(np.maximum(16 - e, 0), 22)
    hi, lo = _two_product(a, k)
    off = (hi >= 1e17) | (hi < 1e16)
    if off.any():  # log10 may be off by one next to powers of ten
        rows = np.flatnonzero(off)
        e[rows] += (hi[rows] >= 1e17).astype(np.int64) - (hi[rows] < 1e16)
        k[rows] = np.minimum(np.maximum(16 - e[rows], 0), 22)
        hi[rows], lo[rows] = _two_product(a[rows], k[rows])
    ok = (hi >= 1e16) & (hi < 1e17) & (16 - e >= 0) & (16 - e <= 22)
    floor_lo = np.floor(lo)
    whole = hi.astype(np.int64) + floor_lo.astype(np.int64)  # hi is an integer (>= 2**53)
    frac = lo - floor_lo  # exact, in [0, 1)
    half_unit = 0.5 * np.take(_P10_D, k)  # exact: a power of two times 10**k, k <= 22
    margin = 1e-9  # far above the rounding error of `diff`, far below the half-gaps (> 0.25)
    above = (np.nextafter(a, np.inf) - a) * half_unit - margin
    below = (a - np.nextafter(a, 0)) * half_unit - margin
    chosen = whole + ((frac > 0.5) | ((frac == 0.5) & (whole % 2 == 1)))  # 17 digits
    done = np.zeros(a.size, dtype=bool)
    for unit in (100, 10):  # whole + frac to a multiple of unit (15, 16 digits), ties to even
        q = whole // unit
        r = (whole - q * unit) + frac  # in [0, unit)
        c = (q + ((r > unit / 2) | ((r == unit / 2) & (q % 2 == 1)))) * unit
        diff = (c - whole).astype(np.float64) - frac
        take = (diff < above) & (diff > -below) & ~done
        chosen = np.where(take, c, chosen)
        done |= take
    diff = (chosen - whole).astype(np.float64) - frac
    ok &= (diff < above) & (diff > -below)
    carry = chosen >= 10**17  # 9.99...5 rounded up to 10**(e+1)
    chosen = np.where(carry, chosen // 10, chosen)
    return chosen, e + carry, ok


def format_numbers(x):
    """Text of float64 values as an (n, w) uint8 matrix; zero bytes are padding, to be dropped.

    The text reads back to the identical float64 (``float(text) == x`` bit for bit, -0.0 and
    infinities included). It is what ``repr`` writes (positional for 1e-4 <= |x| < 1e16,
    scientific otherwise), apart from ties between two equally short decimals. NaN is written
    as ``nan``.
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    if x.size <= _ROWS:
        return _format_rows(x)
    parts = [_format_rows(x[i : i + _ROWS]) for i in range(0, x.size, _ROWS)]
    width = max(p.shape[1] for p in parts)
    out = np.zeros((x.size, width), dtype=np.uint8)
    for i, p in zip(range(0, x.size, _ROWS), parts):
        out[i : i + p.shape[0], : p.shape[1]] = p
    return out


_COL18 = np.arange(18, dtype=np.int8)[None, :]


def _point_tables():
    """Byte masks, per exponent e = 0..15, of the positional layout ddd.ddd (18 columns)."""
    e = np.arange(16)[:, None]
    col = np.arange(18)[None, :]
    int_part = np.where(col <= e, 0xFF, 0).astype(np.uint8)
    fraction = np.where(col >= e + 2, 0xFF, 0).astype(np.uint8)
    point = np.where(col == e + 1, 46, 0).astype(np.uint8)
    one_zero = np.where(col == e + 2, 48, 0).astype(np.uint8)  # "1.0", not "1."
    return int_part, fraction, point, one_zero


_INT_PART, _FRACTION, _POINT, _ONE_ZERO = _point_tables()


def _format_rows(x):
    n = x.size
    a = np.abs(x)
    out = np.zeros((n, _WIDTH), dtype=np.uint8)
    fast = (a >= 1e-4) & (a < 1e16)  # repr's positional range, where the fast path works
    d, e, ok = _shortest_digits(np.where(fast, a, 1.0))
    ok &= fast
    e = np.where(ok, e, 0).astype(np.int8)
    digits = np.zeros((n, 18), dtype=np.uint8)  # the 17 digits and a zero byte
    digits[:, :17] = _digits17(np.where(ok, d, 10**16))
    # significant digits: up to the last non-zero one; the fraction's trailing zeros are dropped
    n_sig = 17 - np.argmax(digits[:, 16::-1] != _ZERO, axis=1).astype(np.int8)
    keep = np.maximum(n_sig, e + 1)
    digits *= _COL18 < keep[:, None]
    out[:, 0] = np.signbit(x).view(np.uint8) * np.uint8(45)
    # |x| >= 1: the digits with the point inserted after digit e, and "1.0", not "1."
    row = np.maximum(e, 0)
    shifted = np.zeros_like(digits)
    shifted[:, 1:] = digits[:, :17]
    text = digits & np.take(_INT_PART, row, axis=0)
    text |= shifted & np.take(_FRACTION, row, axis=0)
    text |= np.take(_POINT, row, axis=0)
    text += (text == 0) * np.take(_ONE_ZERO, row, axis=0)
    out[:, 1:19] = text
    # |x| < 1: "0." then -e - 1 zeros, then the digits
    for v in range(-4, 0):
        rows = np.flatnonzero(ok & (e == v))
        if rows.size:
            block = np.zeros((rows.size, _WIDTH - 1), dtype=np.uint8)
            block[:, : 1 - v] = _ZERO
            block[:, 1] = 46
            block[:, 1 - v : 18 - v] = digits[rows, :17]
            out[rows, 1:] = block
    rest = np.flatnonzero(~ok)
    if rest.size:
        out = _format_slow(out, rest, x)
    used = np.flatnonzero(out.any(axis=0))
    return out[:, : used[-1] + 1] if used.size else out[:, :1]


def _format_slow(out, rows, x):
    """repr() of the values off the vectorized path (zeros, non-finite, tiny or huge)."""
    values = x[rows]
    texts = np.full(rows.size, b"0.0", dtype=object)  # the specials without a Python call each
    texts[np.isinf(values)] = b"inf"
    texts[np.isnan(values)] = b"nan"
    for i in np.flatnonzero(np.isfinite(values) & (values != 0)):
        texts[i] = repr(abs(float(values[i]))).encode()
    width = max(max(len(t) for t in texts) + 1, out.shape[1])
    if width > out.shape[1]:
        out = np.pad(out, ((0, 0), (0, width - out.shape[1])))
    out[rows, 1:] = texts.astype(f"S{width - 1}").view(np.uint8).reshape(rows.size, width - 1)
    out[rows, 0] = np.where(np.signbit(values) & ~np.isnan(values), 45, 0)
    return out
