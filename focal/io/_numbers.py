"""Vectorized, exact conversion between decimal text and float64 (no Python loop per number).

Score files hold millions of numbers; formatting or parsing them one Python object at a time costs
a few hundred nanoseconds each, which is the whole time budget of a streaming back-end. Here
numbers travel as byte matrices, a few thousand rows at a time (so that temporaries stay in the
CPU cache).

Parsing
-------
Each token's bytes are read as three 64-bit words, classified byte by byte with SWAR ("SIMD within
a register") arithmetic, and its digits turned into an integer significand ``m < 2**64`` and a
decimal exponent ``q``. ``m * 10**q`` is then converted by one correctly rounded operation in
extended precision (``np.longdouble``; x87 80-bit on x86-64 Linux), ``m * 10**q`` or
``m / 10**-q`` with ``10**|q|`` exact (``|q| <= 27``), and rounded to float64. Rounding twice can
only go wrong when the first result is exactly half-way between two float64 values; those cases,
and everything outside the fast range (more than 19 digits, large exponents, ``inf``,
subnormals), are converted by NumPy's correctly rounded string conversion instead. On platforms
whose ``longdouble`` is plain float64 the fast path is Clinger's (``m < 2**53``, ``|q| <= 22``: a
single rounding). The result is always what Python's ``float`` reads.

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

__all__ = ["parse_numbers", "format_numbers", "decimal_to_float", "byte_masks"]

_LD = np.longdouble
_U = np.uint64
_EXTENDED = np.finfo(_LD).nmant >= 63
# largest k with 5**k exactly representable in the wide type (10**k = 5**k * 2**k)
_QMAX_EXT = 27 if np.finfo(_LD).nmant < 112 else 48
_QMAX_DOUBLE = 22


def _exact_powers_of_ten(qmax, dtype):
    five = np.array([5**k for k in range(min(qmax, 27) + 1)], dtype=np.uint64).astype(dtype)
    if qmax > 27:  # IEEE quad long double: 5**k beyond uint64, build by exact multiplication
        extra = [five[-1]]
        for _ in range(qmax - 27):
            extra.append(extra[-1] * dtype(5))
        five = np.concatenate([five, np.array(extra[1:], dtype=dtype)])
    return np.ldexp(five, np.arange(qmax + 1))


# x87 80-bit extended (x86 Linux): significand in the first 8 bytes of each element
_X87 = (_EXTENDED and np.finfo(_LD).nmant == 63 and np.dtype(_LD).itemsize in (12, 16)
        and np.little_endian)
_LD_WORDS = np.dtype(_LD).itemsize // 8 if np.dtype(_LD).itemsize % 8 == 0 else 0
_X87 = _X87 and _LD_WORDS > 0
_P10_LD = _exact_powers_of_ten(_QMAX_EXT, _LD) if _EXTENDED else None
_P10_D = _exact_powers_of_ten(_QMAX_DOUBLE, np.float64)
_TWO53 = np.uint64(2**53)


def decimal_to_float(m, q, extended=_EXTENDED, x87=_X87):
    """Correctly rounded float64 of ``m * 10**q`` where possible without big-number arithmetic.

    Parameters
    ----------
    m : ndarray of uint64
        Decimal significands.
    q : ndarray of int
        Decimal exponents.
    extended : bool
        Use the extended-precision path (default: when ``np.longdouble`` has a 64-bit or wider
        significand); otherwise Clinger's float64 fast path. Exposed for tests.
    x87 : bool
        Detect half-way cases from the bits of an x87 80-bit significand (default on x86);
        otherwise by comparison with the neighbouring doubles. Exposed for tests.

    Returns
    -------
    value : ndarray of float64
        The correctly rounded value where ``ok``; unspecified elsewhere.
    ok : ndarray of bool
        False where this function cannot guarantee correct rounding (out of range, or the
        extended result is a float64 half-way point): convert those another way.
    """
    m = np.asarray(m, dtype=np.uint64)
    q = np.asarray(q, dtype=np.int64)
    if extended:
        ok = np.abs(q) <= _QMAX_EXT
        k = np.where(ok, np.abs(q), 0)
        p = np.take(_P10_LD, k)
        wide = m.astype(_LD)
        if (q <= 0).all():  # the usual case, decimals without exponent: one division
            wide /= p
        elif (q >= 0).all():
            wide *= p
        else:
            wide = np.where(q >= 0, wide * p, wide / p)
        value = wide.astype(np.float64)
        if x87:
            # the 64-bit significand: half-way between doubles <=> its low 11 bits are 0x400
            low = wide.view(np.uint64)[::_LD_WORDS] & _U(0x7FF)
            half_way = low == _U(0x400)
        else:
            back = value.astype(_LD)
            toward = np.where(wide > back, np.inf, -np.inf)
            neighbour = np.nextafter(value, toward).astype(_LD)
            half_way = (wide != back) & ((back + neighbour) * _LD(0.5) == wide)
        if half_way.any():
            # a double rounding can only err there; Clinger's single rounding settles most
            rows = np.flatnonzero(half_way & ok)
            value[rows], ok[rows] = decimal_to_float(m[rows], q[rows], extended=False)
        return value, ok
    ok = (np.abs(q) <= _QMAX_DOUBLE) & (m < _TWO53)
    k = np.where(ok, np.abs(q), 0)
    p = np.take(_P10_D, k)
    small = m.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        value = np.where(q >= 0, small * p, small / p)
    return value, ok


# ---------------------------------------------------------------------------------------------
# parsing: SWAR ("SIMD within a register") on the tokens' bytes viewed as three uint64 words

_HIGH = _U(0x8080808080808080)
_LOW7 = _U(0x7F7F7F7F7F7F7F7F)
_ZEROS = _U(0x3030303030303030)  # eight ASCII '0'
_MOVEMASK = _U(0x0102040810204080)
_TOKEN_BYTES = 24  # longer tokens take the slow path


_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)


def _low_bytes_mask(k):
    """uint64 mask of the lowest ``k`` bytes (0 <= k <= 8; k may be an array)."""
    return np.take(_LOW_BYTES, k)


@functools.cache
def byte_masks(n_words):
    """Row k: masks of the bytes 0..k-1 of an ``n_words``-word value (looked up with np.take,
    which is several times faster than fancy indexing for small tables).
    """
    table = np.array([[(1 << (8 * min(max(k - 8 * i, 0), 8))) - 1 for i in range(n_words)]
                      for k in range(8 * n_words + 1)], dtype=np.uint64)
    table.setflags(write=False)
    return table


_BELOW = {w: byte_masks(w) for w in (1, 2, 3)}


def _nondigit(w):
    """High bit of each byte set where the byte is not an ASCII digit."""
    x = w ^ _ZEROS
    return (((x & _LOW7) + _U(0x7676767676767676)) | x) & _HIGH


def _equal(w, c):
    """High bit of each byte set where the byte equals ``c``."""
    y = w ^ _U(c * 0x0101010101010101)
    return ~(((y & _LOW7) + _LOW7) | y) & _HIGH


def _row_bits(high):
    """(n, w) words of per-byte high bits -> one (8 w)-bit mask per row (bit j = byte j)."""
    packed = ((high >> _U(7)) * _MOVEMASK) >> _U(56)
    bits = packed[:, 0].copy()
    for i in range(1, packed.shape[1]):
        bits |= packed[:, i] << _U(8 * i)
    return bits.astype(np.int64)


def _lowest_bit(bits, default):
    """Index of the lowest set bit of each (small, non-negative) integer; ``default`` if none."""
    low = (bits & -bits).astype(np.float64)  # a power of two: its float exponent is the index
    return np.where(bits != 0, (low.view(np.int64) >> 52) - 1023, default)


def _eight_digits(w):
    """Value of eight ASCII digits packed in a uint64 (first digit in the lowest byte)."""
    x = w - _ZEROS
    x = x * _U(10) + (x >> _U(8))
    mask = _U(0x000000FF000000FF)
    return ((x & mask) * _U(100 + (1000000 << 32))
            + ((x >> _U(16)) & mask) * _U(1 + (10000 << 32))) >> _U(32)


def _scan_decimal(words, lengths, windows, starts):
    """Decimal tokens ``[+-]digits[.digits][(e|E)[+-]digits]`` -> (negative, m, q, fast).

    ``words`` is (n, w) uint64, 1 <= w <= 3: each token's bytes (at most 8 w), zero past its
    length; ``windows[starts + k]`` are the 8 w bytes of the text from ``starts + k`` (``k`` may
    be as low as -8 w). The value is ``(-1)**negative * m * 10**q``; rows with ``fast`` False
    (another grammar such as ``inf``, malformed, or too many digits for uint64) must be parsed
    another way.
    """
    n, n_words = words.shape
    width = 8 * n_words
    lengths = lengths.astype(np.int64)
    valid = (np.int64(1) << lengths) - 1
    first = words[:, 0] & _U(0xFF)
    negative = first == 45
    has_sign = (negative | (first == 43)).astype(np.int64)
    nondigit = _row_bits(_nondigit(words))
    other = nondigit & valid & ~has_sign  # non-digit bytes besides a leading sign
    if ((other & (other - 1)) == 0).all():
        # the usual chunk: every token is [sign] digits [point digits]; no exponent
        any_e = False
        e_pos = lengths
        has_dot = other != 0
        dot_pos = _lowest_bit(other, lengths)
        point = np.take(words.view(np.uint8).ravel(),
                        np.arange(0, width * n, width) + np.minimum(dot_pos, width - 1))
        fast = ~has_dot | (point == 46)
    else:
        dots = _row_bits(_equal(words, 46))
        e_bits = _row_bits(_equal(words | _U(0x2020202020202020), 101)) & valid
        any_e = bool(e_bits.any())
        e_pos = _lowest_bit(e_bits, lengths) if any_e else lengths
        mantissa = ((np.int64(1) << e_pos) - 1) & ~has_sign
        mant_dots = mantissa & dots
        fast = ((mantissa & nondigit & ~dots) == 0) & ((mant_dots & (mant_dots - 1)) == 0)
        has_dot = mant_dots != 0
        dot_pos = _lowest_bit(mant_dots, e_pos)
    n_digits = e_pos - has_sign - has_dot
    fast &= (n_digits >= 1) & (n_digits <= 19)
    # the `width` bytes of text ending where the mantissa ends
    right = np.ascontiguousarray(windows[starts + e_pos - width]).view(np.uint64)
    # close the gap of the decimal point: the bytes before it move up by one
    table = _BELOW[n_words]
    shift = width - e_pos
    below = np.take(table, np.where(has_dot, dot_pos + shift, 0), axis=0)
    after = np.take(table, np.where(has_dot, dot_pos + shift + 1, 0), axis=0)
    low = right & below
    merged = (low << _U(8)) | (right & ~after)
    if n_words > 1:
        merged[:, 1:] |= low[:, :-1] >> _U(56)
    # the digits now fill the last n_digits bytes: the bytes before them become '0'
    fill = np.take(table, width - np.minimum(np.maximum(n_digits, 0), width), axis=0)
    digits = _eight_digits((merged & ~fill) | (_ZEROS & fill))
    significand = digits[:, 0].copy()
    for i in range(1, n_words):
        significand *= _U(10**8)
        significand += digits[:, i]
    exponent = -np.where(has_dot, e_pos - dot_pos - 1, 0)
    if any_e:
        rows = np.flatnonzero(e_bits)
        exp_value, exp_fast = _scan_exponent(words[rows], lengths[rows], valid[rows],
                                             nondigit[rows], e_pos[rows], windows, starts[rows])
        fast[rows] &= exp_fast
        exponent[rows] += np.where(exp_fast, exp_value, 0)
    return negative, significand, exponent, fast


def _scan_exponent(words, lengths, valid, nondigit, e_pos, windows, starts):
    """Exponent ``(e|E)[+-]d{1,3}`` after the marker at ``e_pos`` (rows that have one):
    (value, valid and short).
    """
    minus = _row_bits(_equal(words, 45))
    signs = _row_bits(_equal(words, 43)) | minus
    after = np.minimum(e_pos + 1, 62)
    exp_sign = ((signs >> after) & 1) == 1
    exp_from = e_pos + 1 + exp_sign
    n_exp = lengths - exp_from
    exp_region = valid & ~((np.int64(1) << np.minimum(exp_from, 62)) - 1)
    ok = (n_exp >= 1) & (n_exp <= 3) & ((exp_region & nondigit) == 0)
    # the last 8 bytes of the token: the exponent digits are its top bytes
    width = windows.shape[1]
    tail = np.ascontiguousarray(windows[starts + lengths - width]).view(np.uint64)[:, -1]
    keep = ~_low_bytes_mask(8 - np.minimum(np.maximum(n_exp, 0), 8))
    value = _eight_digits((tail & keep) | (_ZEROS & ~keep)).astype(np.int64)
    negative = exp_sign & (((minus >> after) & 1) == 1)
    return np.where(negative, -value, value), ok


_ROWS = 16384  # rows converted at a time: the kernels' temporaries stay in the CPU cache


def parse_numbers(buf, starts, lengths, on_error):
    """float64 values of the number tokens ``buf[starts[i] : starts[i] + lengths[i]]``.

    Parameters
    ----------
    buf : ndarray of uint8
        Text, with at least 24 readable bytes before and after every token start.
    starts, lengths : ndarray of int, shape (n,)
    on_error : callable
        ``on_error(i, message)`` is called for the first token ``i`` that is not a number
        (message ``"'text' is not a number"``) or is NaN (``"is NaN"``); it must raise.

    Values are exactly what Python's ``float`` reads, except that underscores (which ``float``
    accepts) are rejected, NaN is an error, and so is a finite decimal too large for float64
    (``1e400``, which ``float`` reads as inf); ``inf`` and ``infinity`` (any case, signed) are
    accepted.
    """
    n = starts.size
    value = np.empty(n, dtype=np.float64)
    windows = {}
    slow = []
    for i in range(0, n, _ROWS):
        s = starts[i:i + _ROWS]
        lens = np.minimum(lengths[i:i + _ROWS], _TOKEN_BYTES)
        n_words = max(1, min(3, (int(lens.max()) + 7) // 8)) if lens.size else 1
        if n_words not in windows:
            windows[n_words] = np.lib.stride_tricks.sliding_window_view(buf, 8 * n_words)
        words = np.ascontiguousarray(windows[n_words][s]).view(np.uint64)
        words &= np.take(_BELOW[n_words], lens, axis=0)
        negative, significand, exponent, fast = _scan_decimal(words, lens, windows[n_words], s)
        fast &= lengths[i:i + _ROWS] <= _TOKEN_BYTES
        got, exact = decimal_to_float(significand, np.where(fast, exponent, 0))
        value[i:i + _ROWS] = np.where(negative, -got, got)
        done = fast & exact
        if not done.all():
            slow.append(np.flatnonzero(~done) + i)
    if slow:
        slow = np.concatenate(slow)
        long = lengths[slow] > _SLOW_WIDTH  # rare: one at a time, so memory stays linear
        for i in slow[long]:
            token = buf[starts[i]:starts[i] + lengths[i]]
            value[i] = _parse_slow(token[None, :], np.array([i]), on_error)[0]
        slow = slow[~long]
    if len(slow):
        width = int(lengths[slow].max())
        if int(starts[slow].max()) + width > buf.size:
            buf = np.concatenate([buf, np.zeros(width, np.uint8)])
        full = np.lib.stride_tricks.sliding_window_view(buf, width)
        text = full[starts[slow]].copy()
        text[np.arange(width)[None, :] >= lengths[slow][:, None]] = 0
        value[slow] = _parse_slow(text, slow, on_error)
    return value


_SLOW_WIDTH = 64  # longer tokens off the fast path are converted one by one


def _parse_slow(tokens, rows, on_error):
    """NumPy's correctly rounded string conversion for the few tokens off the fast path."""
    underscore = (tokens == 95).any(axis=1)
    if underscore.any():
        i = int(np.argmax(underscore))
        on_error(rows[i], f"{_show(tokens[i])!r} is not a number")
    text = np.ascontiguousarray(tokens).view(f"S{tokens.shape[1]}").ravel()
    try:
        with np.errstate(over="ignore"):  # 1e999 reads as inf, refused below
            value = text.astype(np.float64)
    except ValueError:  # includes UnicodeDecodeError
        for i, token in enumerate(text):
            try:
                float(token)
            except ValueError:
                on_error(rows[i], f"{_show(tokens[i])!r} is not a number")
        raise  # pragma: no cover - the loop above finds the culprit
    nan = np.isnan(value)
    if nan.any():
        on_error(rows[int(np.argmax(nan))], "is NaN")
    overflow = np.isinf(value) & ((tokens >= 48) & (tokens <= 57)).any(axis=1)
    if overflow.any():  # digits that overflow, not a spelling of infinity
        i = int(np.argmax(overflow))
        on_error(rows[i], f"{_show(tokens[i])!r} is out of the float64 range (write inf for "
                          f"an infinite value)")
    return value


def _show(row):
    return bytes(row).rstrip(b"\x00").decode("utf-8", "replace")


# ---------------------------------------------------------------------------------------------
# formatting

_LUT4 = np.frombuffer("".join(f"{i:04d}" for i in range(10_000)).encode(), dtype=np.uint8)
_LUT4 = _LUT4.reshape(10_000, 4)
_ZERO = np.uint8(48)
_WIDTH = 24  # sign, up to 17 digits, the point, up to 4 leading zeros of 0.000x
_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp's splitting constant
_P10_HI = (_P10_D * _SPLIT) - ((_P10_D * _SPLIT) - _P10_D)  # Veltkamp split of 10**k
_P10_LO = _P10_D - _P10_HI
_I = np.int64


def _two_product(a, k):
    """(hi, lo) with hi + lo == a * 10**k exactly (Dekker's product; 0 <= k <= 22, no FMA)."""
    p, ph, pl = np.take(_P10_D, k), np.take(_P10_HI, k), np.take(_P10_LO, k)
    c = a * _SPLIT
    ah = c - (c - a)
    al = a - ah
    hi = a * p
    lo = ((ah * ph - hi) + ah * pl + al * ph) + al * pl
    return hi, lo


_LUT4_U32 = np.ascontiguousarray(_LUT4).view(np.uint32).ravel()


def _digits17(d):
    """(n, 17) ASCII digit matrix of integers 0 <= d < 10**17, zero padded on the left."""
    d = d.astype(np.uint64)
    groups = np.empty((d.size, 5), dtype=np.uint32)  # 20 digits, four at a time
    for j in range(4, -1, -1):
        q = d // np.uint64(10_000)
        groups[:, j] = np.take(_LUT4_U32, (d - q * np.uint64(10_000)).astype(np.intp))
        d = q
    return groups.view(np.uint8)[:, 3:]


def _round_candidate(whole, frac, unit):
    """Round ``whole + frac`` (int64 + [0, 1)) to a multiple of ``unit``, ties to even."""
    q = whole // unit
    r = (whole - q * unit) + frac  # in [0, unit)
    half = unit / 2
    up = (r > half) | ((r == half) & (q % 2 == 1))
    return (q + up) * unit


def _shortest_digits(a):
    """Shortest round-tripping decimal of positive float64 values 1e-6 <= a < 1e17.

    Returns (d, e, ok): ``d`` a 17-digit integer (trailing zeros past the shortest digits),
    the decimal exponent ``e`` of its first digit, and ok (False: format another way).

    The exact product P = a * 10**(16 - e) (a two-product: 10**k is exact for k <= 22) gives
    the correctly rounded 15-, 16- and 17-digit candidates; a candidate reads back as ``a``
    when it lies inside a's rounding interval, whose half-widths (half the gaps to the
    neighbouring doubles, times 10**k) are exact in float64. Candidates too close to the
    interval's ends to decide are skipped for a longer one.
    """
    e = np.floor(np.log10(a)).astype(_I)
    k = np.minimum(np.maximum(16 - e, 0), 22)
    hi, lo = _two_product(a, k)
    off = (hi >= 1e17) | (hi < 1e16)
    if off.any():  # log10 may be off by one next to powers of ten
        rows = np.flatnonzero(off)
        e[rows] += (hi[rows] >= 1e17).astype(_I) - (hi[rows] < 1e16)
        k[rows] = np.minimum(np.maximum(16 - e[rows], 0), 22)
        hi[rows], lo[rows] = _two_product(a[rows], k[rows])
    ok = (hi >= 1e16) & (hi < 1e17) & (16 - e >= 0) & (16 - e <= 22)
    floor_lo = np.floor(lo)
    whole = hi.astype(_I) + floor_lo.astype(_I)  # hi is an integer (>= 2**53)
    frac = lo - floor_lo  # exact, in [0, 1)
    half_unit = 0.5 * np.take(_P10_D, k)  # exact: a power of two times 10**k, k <= 22
    margin = 1e-9  # far above the rounding error of `diff`, far below the half-gaps (> 0.25)
    above = (np.nextafter(a, np.inf) - a) * half_unit - margin
    below = (a - np.nextafter(a, 0)) * half_unit - margin
    chosen = whole + ((frac > 0.5) | ((frac == 0.5) & (whole % 2 == 1)))  # 17 digits
    done = np.zeros(a.size, dtype=bool)
    for unit in (100, 10):
        c = _round_candidate(whole, frac, unit)
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
    parts = [_format_rows(x[i:i + _ROWS]) for i in range(0, x.size, _ROWS)]
    width = max(p.shape[1] for p in parts)
    out = np.zeros((x.size, width), dtype=np.uint8)
    for i, p in zip(range(0, x.size, _ROWS), parts):
        out[i:i + p.shape[0], :p.shape[1]] = p
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
            lead = -v - 1
            block = np.zeros((rows.size, _WIDTH - 1), dtype=np.uint8)
            block[:, 0] = _ZERO
            block[:, 1] = 46
            block[:, 2:2 + lead] = _ZERO
            block[:, 2 + lead:2 + lead + 17] = digits[rows, :17]
            out[rows, 1:] = block
    rest = np.flatnonzero(~ok)
    if rest.size:
        out = _format_slow(out, rest, x)
    used = np.flatnonzero(out.any(axis=0))
    return out[:, :used[-1] + 1] if used.size else out[:, :1]


_SPECIAL = {0: b"0.0", 1: b"inf", 2: b"nan"}


def _format_slow(out, rows, x):
    """repr() of the values off the vectorized path (zeros, non-finite, tiny or huge)."""
    values = x[rows]
    texts = np.empty(rows.size, dtype=object)
    zero_or_inf = (values == 0) | np.isinf(values) | np.isnan(values)
    # the common specials without a Python call each
    for code, word in _SPECIAL.items():
        sel = {0: values == 0, 1: np.isinf(values), 2: np.isnan(values)}[code]
        texts[sel] = word
    others = np.flatnonzero(~zero_or_inf)
    for i in others:
        texts[i] = repr(abs(float(values[i]))).encode()
    width = max(max(len(t) for t in texts) + 1, out.shape[1])
    if width > out.shape[1]:
        out = np.concatenate([out, np.zeros((out.shape[0], width - out.shape[1]), np.uint8)],
                             axis=1)
    block = np.zeros((rows.size, width), dtype=np.uint8)
    block[:, 1:] = np.array(list(texts), dtype=f"S{width - 1}").view(np.uint8).reshape(
        rows.size, width - 1)
    block[:, 0] = np.where(np.signbit(values) & ~np.isnan(values), 45, 0)
    out[rows] = block
    return out
