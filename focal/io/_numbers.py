"""Vectorized, exact conversion between decimal text and float64 (no Python loop per number).

Score files hold millions of numbers; formatting or parsing them one Python object at a time costs
a few hundred nanoseconds each, which is the whole time budget of a streaming back-end. Here
numbers travel as byte matrices: one row per number, zero padded on the right.

Exactness
---------
A decimal ``m * 10**q`` (integer ``m < 2**64``) is converted by one correctly rounded operation in
extended precision (``np.longdouble``; x87 80-bit on x86-64 Linux), ``m * 10**q`` or ``m / 10**-q``
with ``10**|q|`` exact (``|q| <= 27``), then rounded to float64. Rounding twice can only go wrong
when the first result is exactly half-way between two float64 values; those cases, and everything
outside the fast range (more than 19 digits, large exponents, ``inf``, subnormals), are converted
by NumPy's correctly rounded string conversion instead. On platforms whose ``longdouble`` is plain
float64 the fast path is Clinger's (``m < 2**53``, ``|q| <= 22``: a single rounding).

Formatting writes the shortest of the correctly rounded 16- or 17-significant-digit decimals that
reads back bit-identically (what ``repr`` gives, apart from rare ties), checked by the exact parser
above; any number the check does not confirm is formatted with ``repr``. So every written number
reads back to the same float64, including -0.0, subnormals, 1e308 and +-inf.
"""

from __future__ import annotations

import numpy as np

__all__ = ["parse_numbers", "format_numbers", "decimal_to_float"]

_LD = np.longdouble
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


_P10_LD = _exact_powers_of_ten(_QMAX_EXT, _LD) if _EXTENDED else None
_P10_D = _exact_powers_of_ten(_QMAX_DOUBLE, np.float64)
_TWO53 = np.uint64(2**53)


def decimal_to_float(m, q, extended=_EXTENDED):
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
        p = _P10_LD[k]
        wide = m.astype(_LD)
        wide = np.where(q >= 0, wide * p, wide / p)
        value = wide.astype(np.float64)
        back = value.astype(_LD)
        off = wide != back
        if off.any():
            # a double rounding can only err when `wide` is exactly half-way between two doubles
            toward = np.where(wide > back, np.inf, -np.inf)
            neighbour = np.nextafter(value, toward).astype(_LD)
            half_way = off & ((back + neighbour) * _LD(0.5) == wide)
            ok &= ~half_way
        return value, ok
    ok = (np.abs(q) <= _QMAX_DOUBLE) & (m < _TWO53)
    k = np.where(ok, np.abs(q), 0)
    p = _P10_D[k]
    small = m.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        value = np.where(q >= 0, small * p, small / p)
    return value, ok


# ---------------------------------------------------------------------------------------------
# parsing: SWAR ("SIMD within a register") on the tokens' bytes viewed as three uint64 words

_U = np.uint64
_ONES = _U(0x0101010101010101)
_HIGH = _U(0x8080808080808080)
_LOW7 = _U(0x7F7F7F7F7F7F7F7F)
_ZEROS = _U(0x3030303030303030)  # eight ASCII '0'
_MOVEMASK = _U(0x0102040810204080)
_TOKEN_BYTES = 24  # longer tokens take the slow path


def _low_bytes_mask(k):
    """uint64 mask of the lowest ``k`` bytes (0 <= k <= 8; k may be an array)."""
    return (_U(1) << (np.asarray(k).astype(np.uint64) << _U(3))) - _U(1)


def _words_below(k):
    """Masks of bytes 0..k-1 of a 3-word (24-byte) value, as three uint64 arrays."""
    k = np.asarray(k, dtype=np.int64)
    return [_low_bytes_mask(np.clip(k - 8 * i, 0, 8)) for i in range(3)]


def _nondigit(w):
    """High bit of each byte set where the byte is not an ASCII digit."""
    x = w ^ _ZEROS
    return (((x & _LOW7) + _U(0x7676767676767676)) | x) & _HIGH


def _equal(w, c):
    """High bit of each byte set where the byte equals ``c``."""
    y = w ^ _U(c * 0x0101010101010101)
    return ~(((y & _LOW7) + _LOW7) | y) & _HIGH


def _row_bits(high):
    """(n, 3) words of per-byte high bits -> one 24-bit mask per row (bit j = byte j)."""
    packed = ((high >> _U(7)) * _MOVEMASK) >> _U(56)
    return (packed[:, 0] | (packed[:, 1] << _U(8)) | (packed[:, 2] << _U(16))).astype(np.int64)


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


def _shift_up(w0, w1, w2, nbytes):
    """The 24-byte value (w0, w1, w2) moved ``nbytes`` (0..24, per row) to higher bytes."""
    q = nbytes >> 3
    r = ((nbytes & 7) << 3).astype(np.uint64)
    zero = _U(0)
    u0 = np.where(q == 0, w0, zero)
    u1 = np.where(q == 0, w1, np.where(q == 1, w0, zero))
    u2 = np.where(q == 0, w2, np.where(q == 1, w1, np.where(q == 2, w0, zero)))
    back = _U(64) - r
    return u0 << r, (u1 << r) | (u0 >> back), (u2 << r) | (u1 >> back)


def _scan_decimal(words, lengths):
    """Decimal tokens ``[+-]digits[.digits][(e|E)[+-]digits]`` -> (negative, m, q, fast).

    ``words`` is (n, 3) uint64: each token's bytes (at most 24), zero past its length. The value
    is ``(-1)**negative * m * 10**q``; rows with ``fast`` False (another grammar such as ``inf``,
    malformed, or too many digits for uint64) must be parsed another way.
    """
    lengths = lengths.astype(np.int64)
    valid = (np.int64(1) << lengths) - 1
    nondigit = _row_bits(_nondigit(words))
    dots = _row_bits(_equal(words, 46))
    e_bits = _row_bits(_equal(words | _U(0x2020202020202020), 101)) & valid
    minus = _row_bits(_equal(words, 45))
    signs = _row_bits(_equal(words, 43)) | minus
    has_sign = signs & 1
    negative = (minus & 1) == 1
    e_pos = _lowest_bit(e_bits, lengths)
    has_e = e_bits != 0
    mantissa = ((np.int64(1) << e_pos) - 1) & ~has_sign
    mant_dots = mantissa & dots
    fast = ((mantissa & nondigit & ~dots) == 0) & ((mant_dots & (mant_dots - 1)) == 0)
    has_dot = mant_dots != 0
    n_digits = e_pos - has_sign - has_dot
    fast &= (n_digits >= 1) & (n_digits <= 19)
    # exponent: optional sign, then 1..3 digits
    exp_sign = has_e & (((signs >> np.minimum(e_pos + 1, 62)) & 1) == 1)
    exp_from = e_pos + 1 + exp_sign
    n_exp = np.where(has_e, lengths - exp_from, 0)
    exp_region = valid & ~((np.int64(1) << np.minimum(exp_from, 62)) - 1)
    fast &= ~has_e | ((n_exp >= 1) & (n_exp <= 3) & ((exp_region & nondigit) == 0))
    exp_negative = exp_sign & (((minus >> np.minimum(e_pos + 1, 62)) & 1) == 1)
    # close the gap of the decimal point: bytes before it move up by one
    w0, w1, w2 = words[:, 0], words[:, 1], words[:, 2]
    dot_pos = _lowest_bit(mant_dots, e_pos)
    b0, b1, b2 = _words_below(np.where(has_dot, dot_pos, 0))
    a0, a1, a2 = _words_below(np.where(has_dot, dot_pos + 1, 0))
    eight, top = _U(8), _U(56)
    low0, low1, low2 = w0 & b0, w1 & b1, w2 & b2
    w0 = (low0 << eight) | (w0 & ~a0)
    w1 = (low1 << eight) | (low0 >> top) | (w1 & ~a1)
    w2 = (low2 << eight) | (low1 >> top) | (w2 & ~a2)
    # the digits now end at byte e_pos: move them to end at byte 24, fill the rest with '0'
    t0, t1, t2 = _shift_up(w0, w1, w2, np.clip(24 - e_pos, 0, 24))
    k0, k1, k2 = _words_below(24 - np.clip(n_digits, 0, 24))
    d0 = _eight_digits((t0 & ~k0) | (_ZEROS & k0))
    d1 = _eight_digits((t1 & ~k1) | (_ZEROS & k1))
    d2 = _eight_digits((t2 & ~k2) | (_ZEROS & k2))
    significand = (d0 * _U(10**8) + d1) * _U(10**8) + d2
    # exponent digits: move them to the top bytes of the last word
    _, _, x2 = _shift_up(words[:, 0], words[:, 1], words[:, 2], np.clip(24 - lengths, 0, 24))
    keep = ~_low_bytes_mask(8 - np.clip(n_exp, 0, 8))
    exp_value = _eight_digits((x2 & keep) | (_ZEROS & ~keep)).astype(np.int64)
    exp_value = np.where(has_e & fast, exp_value, 0)
    exponent = np.where(exp_negative, -exp_value, exp_value) - np.where(has_dot, e_pos - dot_pos - 1, 0)
    return negative, significand, exponent, fast


def parse_numbers(buf, starts, lengths, on_error):
    """float64 values of the number tokens ``buf[starts[i] : starts[i] + lengths[i]]``.

    Parameters
    ----------
    buf : ndarray of uint8
        Text, with at least 24 readable bytes after every token start.
    starts, lengths : ndarray of int, shape (n,)
    on_error : callable
        ``on_error(i, message)`` is called for the first token ``i`` that is not a number or is
        NaN; it must raise.

    Values are exactly what Python's ``float`` reads, except that underscores (which ``float``
    accepts) are rejected and NaN is an error; ``inf`` and ``infinity`` (any case, signed) are
    accepted.
    """
    n = starts.size
    value = np.empty(n, dtype=np.float64)
    if n == 0:
        return value
    short = lengths <= _TOKEN_BYTES
    rows = np.flatnonzero(short) if not short.all() else None
    s = starts if rows is None else starts[rows]
    lens = lengths if rows is None else lengths[rows]
    windows = np.lib.stride_tricks.sliding_window_view(buf, _TOKEN_BYTES)
    words = np.ascontiguousarray(windows[s]).view(np.uint64)
    below = _words_below(lens)
    for i in range(3):
        words[:, i] &= below[i]
    negative, significand, exponent, fast = _scan_decimal(words, lens)
    got, exact = decimal_to_float(np.where(fast, significand, 0), np.where(fast, exponent, 0))
    got = np.where(negative, -got, got)
    done = fast & exact
    if rows is None:
        value[:] = got
        slow = np.flatnonzero(~done)
    else:
        value[rows] = got
        slow = np.union1d(rows[~done], np.flatnonzero(~short))
    if slow.size:
        width = int(lengths[slow].max())
        text = np.zeros((slow.size, width), dtype=np.uint8)
        col = np.arange(width)
        full = np.lib.stride_tricks.sliding_window_view(np.concatenate([buf, np.zeros(width, np.uint8)]), width)
        text[:] = np.where(col[None, :] < lengths[slow][:, None], full[starts[slow]], 0)
        value[slow] = _parse_slow(text, slow, on_error)
    return value


def _parse_slow(tokens, rows, on_error):
    """NumPy's correctly rounded string conversion for the few tokens off the fast path."""
    underscore = (tokens == 95).any(axis=1)
    if underscore.any():
        i = int(np.argmax(underscore))
        on_error(rows[i], f"{_show(tokens[i])!r} is not a number")
    text = np.ascontiguousarray(tokens).view(f"S{tokens.shape[1]}").ravel()
    try:
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
        on_error(rows[int(np.argmax(nan))], "score is NaN")
    return value


def _show(row):
    return bytes(row).rstrip(b"\x00").decode("utf-8", "replace")


# ---------------------------------------------------------------------------------------------
# formatting

_LUT4 = np.frombuffer("".join(f"{i:04d}" for i in range(10_000)).encode(), dtype=np.uint8)
_LUT4 = _LUT4.reshape(10_000, 4)
_E_MIN, _E_MAX = -4, 16  # repr's positional range: 1e-4 <= |x| < 1e16


def _digits17(d):
    """(n, 17) ASCII digit matrix of integers 0 <= d < 10**17, zero padded on the left."""
    head = d // np.uint64(10**16)
    rest = d % np.uint64(10**16)
    hi = rest // np.uint64(10**8)
    lo = rest % np.uint64(10**8)
    out = np.empty((d.size, 17), dtype=np.uint8)
    out[:, 0] = head.astype(np.uint8) + _ZERO
    out[:, 1:5] = _LUT4[(hi // np.uint64(10_000)).astype(np.intp)]
    out[:, 5:9] = _LUT4[(hi % np.uint64(10_000)).astype(np.intp)]
    out[:, 9:13] = _LUT4[(lo // np.uint64(10_000)).astype(np.intp)]
    out[:, 13:17] = _LUT4[(lo % np.uint64(10_000)).astype(np.intp)]
    return out


def _round_scaled(a, k):
    """rint(a * 10**k) in extended precision, for |k| <= the exact-power range."""
    p = _P10_LD[np.abs(k)]
    wide = a.astype(_LD)
    return np.rint(np.where(k >= 0, wide * p, wide / p))


def _shortest_digits(a):
    """Shortest round-tripping 16/17-digit decimal of finite positive float64 values ``a``.

    Returns (digits (n, 17) ASCII, decimal exponent of the first digit, n significant digits, ok);
    rows with ok False must be formatted another way.
    """
    e = np.floor(np.log10(a)).astype(np.int64)
    ok = (e >= 16 - _QMAX_EXT) & (e <= 15 + _QMAX_EXT)
    e = np.where(ok, e, 0)
    a = np.where(ok, a, 1.0)
    # correctly rounded 17-digit significand; log10 may be off by one next to powers of ten
    d17 = _round_scaled(a, 16 - e)
    high = d17 >= _LD(1e17)
    low = d17 < _LD(1e16)
    if high.any() or low.any():
        e = e + high - low
        ok &= (e >= 16 - _QMAX_EXT) & (e <= 15 + _QMAX_EXT)
        e = np.where(ok, e, 0)
        d17 = _round_scaled(a, 16 - e)
    d17 = d17.astype(np.uint64)
    # 16 digits when they read back exactly (then they are what repr gives)
    d16 = _round_scaled(a, 15 - e).astype(np.uint64)
    carry = d16 >= np.uint64(10**16)  # 9.999...5 rounded up to 10**16
    d16 = np.where(carry, d16 // np.uint64(10), d16)
    e16 = e + carry
    back16, exact16 = decimal_to_float(d16, e16 - 15)
    use16 = exact16 & (back16 == a)
    back17, exact17 = decimal_to_float(d17, e - 16)
    ok &= use16 | (exact17 & (back17 == a))
    digits = _digits17(np.where(use16, d16 * np.uint64(10), d17))
    exp10 = np.where(use16, e16, e)
    nonzero = digits != _ZERO
    n_sig = 17 - np.argmax(nonzero[:, ::-1], axis=1)
    return digits, exp10, n_sig, ok


def format_numbers(x):
    """Text of float64 values as an (n, w) uint8 matrix, zero padded on the right.

    The text reads back to the identical float64 (``float(text) == x`` bit for bit, -0.0 and
    infinities included); it is ``repr(x)`` apart from rare ties between two equally short
    decimals. NaN is written as ``nan``.
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    n = x.size
    a = np.abs(x)
    regular = np.isfinite(x) & (a != 0)
    if _EXTENDED and regular.any():
        digits, exp10, n_sig, ok = _shortest_digits(np.where(regular, a, 1.0))
        ok &= regular
    else:
        digits = np.zeros((n, 17), dtype=np.uint8)
        exp10 = np.zeros(n, dtype=np.int64)
        n_sig = np.ones(n, dtype=np.int64)
        ok = np.zeros(n, dtype=bool)
    negative = np.signbit(x) & ok
    positional = (exp10 >= _E_MIN) & (exp10 < _E_MAX)
    # slots: sign(1) int(17) dot(1) frac(20) e(1) esign(1) edigits(3), unused bytes zero
    width = 44
    out = np.zeros((n, width), dtype=np.uint8)
    out[:, 0] = np.where(negative, 45, 0)
    src = np.concatenate([digits, np.full((n, 21), _ZERO, dtype=np.uint8)], axis=1)  # zeros past 17
    rows = np.arange(n)[:, None]
    # integer part
    int_len = np.where(positional & (exp10 >= 0), exp10 + 1, 1)
    c = np.arange(17)
    take = c[None, :] < int_len[:, None]
    int_src = np.where(positional[:, None] & (exp10[:, None] < 0), -1, c[None, :])  # "0" for 0.x
    int_chars = np.where(int_src >= 0, src[rows, np.maximum(int_src, 0)], _ZERO)
    out[:, 1:18] = np.where(take, int_chars, 0)
    # fraction part
    frac_start = np.where(positional & (exp10 < 0), exp10 + 1, int_len)  # digit index of frac col 0
    frac_len = np.where(positional & (exp10 < 0), n_sig - exp10 - 1, np.maximum(n_sig - int_len, 0))
    frac_len = np.where(positional, np.maximum(frac_len, 1), frac_len)  # "1.0", not "1."
    has_frac = frac_len > 0
    out[:, 18] = np.where(has_frac, 46, 0)
    f = np.arange(20)
    idx = frac_start[:, None] + f[None, :]
    frac_chars = np.where(idx >= 0, src[rows, np.clip(idx, 0, 37)], _ZERO)
    out[:, 19:39] = np.where(f[None, :] < frac_len[:, None], frac_chars, 0)
    # exponent (scientific notation only), at least two digits as repr writes them
    sci = ~positional
    out[:, 39] = np.where(sci, 101, 0)
    out[:, 40] = np.where(sci, np.where(exp10 < 0, 45, 43), 0)
    mag = np.abs(exp10)
    out[:, 41] = np.where(sci & (mag >= 100), mag // 100 + 48, 0)
    out[:, 42] = np.where(sci, (mag // 10) % 10 + 48, 0)
    out[:, 43] = np.where(sci, mag % 10 + 48, 0)
    # zeros and non-finite values, written as repr writes them
    special = ~regular
    if special.any():
        sign = np.signbit(x) & ~np.isnan(x)
        word = np.where(np.isnan(x), 0, np.where(a == 0, 1, 2))[special]
        texts = np.array([[48, 46, 48], [105, 110, 102], [110, 97, 110]], dtype=np.uint8)
        texts = texts[[2, 0, 1]][word]  # nan, 0.0, inf
        block = np.zeros((word.size, width), dtype=np.uint8)
        block[:, 0] = np.where(sign[special], 45, 0)
        block[:, 1:4] = texts
        out[special] = block
        ok |= special
    rest = np.flatnonzero(~ok)
    if rest.size:
        out = _format_slow(out, rest, x)
    return out


def _format_slow(out, rows, x):
    """repr() of the values the vectorized path could not confirm (zeros, inf, nan, extremes)."""
    texts = [repr(float(v)).encode() for v in x[rows]]
    longest = max(len(t) for t in texts)
    if longest > out.shape[1]:
        out = np.concatenate([out, np.zeros((out.shape[0], longest - out.shape[1]), np.uint8)],
                             axis=1)
    block = np.zeros((rows.size, out.shape[1]), dtype=np.uint8)
    flat = np.frombuffer(b"".join(t.ljust(out.shape[1], b"\x00") for t in texts), np.uint8)
    block[:] = flat.reshape(rows.size, out.shape[1])
    out[rows] = block
    return out
