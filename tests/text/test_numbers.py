"""Exact, vectorized number text: parsing equals Python's float(), formatting equals repr()."""

import math
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from focal._text.numbers import format_numbers, parse_numbers

EDGES = [
    0.0,
    -0.0,
    math.inf,
    -math.inf,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    2.225073858507201e-308,
    1e308,
    -1e308,
    1.7976931348623157e308,
    0.1,
    0.3,
    1 / 3,
    1e16,
    1e15,
    9999999999999998.0,
    1e-4,
    9.999999999999999e-05,
    1e-5,
    123.0,
    1.5,
    100.0,
    9.999999999999999e22,
    2.0**-1074,
    2.0**53,
    2.0**53 + 2,
    0.5,
    1e-6,
    1e17,
    1e22,
    1e23,
]


def texts_of(values):
    """Formatted text of each value (zero bytes are padding)."""
    matrix = format_numbers(np.asarray(values, dtype=np.float64))
    return [bytes(row).replace(b"\x00", b"").decode() for row in matrix]


def buffer_of(tokens):
    """A text buffer holding the tokens on separate lines (padded with zero bytes on both
    sides, as the file reader pads its blocks), and the tokens' starts and lengths.
    """
    encoded = [t.encode() for t in tokens]
    data = b"\n".join(encoded) + b"\n"
    lengths = np.array([len(t) for t in encoded], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
    return np.frombuffer(bytes(32) + data + bytes(64), dtype=np.uint8), starts + 32, lengths


def fail(i, message):
    raise ValueError(f"token {i}: {message}")


def parse(tokens):
    return parse_numbers(*buffer_of(tokens), fail)


def bits(values):
    return np.asarray(values, dtype=np.float64).view(np.uint64)


finite_or_not = st.floats(allow_nan=False, allow_infinity=True, allow_subnormal=True, width=64)


@given(st.lists(finite_or_not, min_size=1, max_size=60))
def test_formatted_numbers_read_back_bit_identically_and_equal_repr(values):
    texts = texts_of(values)
    for v, t in zip(values, texts):
        assert t == repr(float(v))
        assert struct.pack("<d", float(t)) == struct.pack("<d", v)
    np.testing.assert_array_equal(bits(parse(texts)), bits(values))


def test_edge_values_round_trip():
    rng = np.random.default_rng(3)
    values = np.concatenate(
        [
            EDGES,
            rng.normal(size=20_000) * 3,
            rng.standard_cauchy(5_000) * 1e6,
            10.0 ** rng.uniform(-320, 308, 5_000) * rng.choice([-1, 1], 5_000),
            rng.integers(-4000, 4000, 2_000) / 16,
        ]
    )
    texts = texts_of(values)
    assert texts == [repr(float(v)) for v in values]
    np.testing.assert_array_equal(bits(parse(texts)), bits(values))


def test_nan_is_written_as_nan():
    assert texts_of([math.nan, -math.nan]) == ["nan", "nan"]


digits = st.text(alphabet="0123456789", min_size=0, max_size=22)


@st.composite
def decimal_tokens(draw):
    sign = draw(st.sampled_from(["", "-", "+"]))
    whole = draw(digits)
    frac = draw(st.one_of(st.none(), digits))
    if not whole and not frac:
        whole = "0"
    exp = draw(st.one_of(st.none(), st.integers(-400, 400)))
    token = sign + whole + ("" if frac is None else "." + frac)
    if exp is not None:
        token += (
            draw(st.sampled_from(["e", "E"]))
            + draw(st.sampled_from(["", "+"])) * (exp >= 0)
            + str(exp)
        )
    return token


@given(st.lists(decimal_tokens(), min_size=1, max_size=40))
def test_parsing_equals_python_float(tokens):
    # except that a decimal beyond the float64 range (float() reads inf) is an error
    expected = [float(t) for t in tokens]
    if any(math.isinf(v) for v in expected):
        with pytest.raises(ValueError, match="out of the float64 range"):
            parse(tokens)
        tokens = [t for t, v in zip(tokens, expected) if not math.isinf(v)] or ["0"]
        expected = [float(t) for t in tokens]
    np.testing.assert_array_equal(bits(parse(tokens)), bits(expected))


@pytest.mark.parametrize(
    "token", ["1e400", "-1e400", "1" * 400, "+9" * 1 + "e99999", "0." + "0" * 5000 + "1e5400"]
)
def test_a_decimal_beyond_float64_is_an_error_not_inf(token):
    with pytest.raises(ValueError, match="out of the float64 range"):
        parse(["1.5", token, "2"])


@pytest.mark.parametrize("token", ["inf", "-inf", "+Infinity", "INF", "-iNfInItY"])
def test_infinity_spelled_out_is_read(token):
    assert parse([token, "0"])[0] == float(token)


def test_long_tokens_off_the_fast_path_are_exact_and_linear():
    long = "0." + "0" * 3000 + "15"  # converted on its own, not widening the others
    tokens = ["inf", "1e-320"] * 20000 + [long]
    got = parse(tokens)
    assert got[-1] == float(long) and np.isinf(got[0]) and got[1] == 1e-320


@given(
    st.lists(st.floats(allow_nan=False, width=64), min_size=1, max_size=30),
    st.sampled_from(["%.6f", "%.17g", "%.3e", "%g", "%.20f", "%.15g", "%a"]),
)
def test_parsing_common_formats(values, fmt):
    if fmt == "%a":  # hexadecimal floats are not score-file syntax
        tokens = [fmt % v for v in values]
        with pytest.raises(ValueError, match="is not a number"):
            parse([t for t in tokens if "x" in t] or ["0x1p0"])
        return
    # '%.3e' % 1.7976931348623157e308 is '1.798e+308', beyond float64: an error, tested above
    tokens = [fmt % v for v in values if math.isfinite(float(fmt % v))] or ["0"]
    np.testing.assert_array_equal(bits(parse(tokens)), bits([float(t) for t in tokens]))


@pytest.mark.parametrize(
    "token",
    [
        "inf",
        "-inf",
        "+Infinity",
        "INF",
        "1e-999",
        "0000000000000000000000001.5",
        ".5",
        "5.",
        "-.5e-3",
        "00.00e-00",
        "9007199254740993",
        "1" * 40,
        "123456789012345678901234567890e-10",
    ],
)
def test_unusual_valid_tokens(token):
    assert parse([token])[0] == float(token) or (math.isnan(float(token)))
    assert math.copysign(1, parse([token])[0]) == math.copysign(1, float(token))


@pytest.mark.parametrize(
    "token",
    [
        "abc",
        "1.2.3",
        "1e",
        "e5",
        "1e+",
        "--1",
        "1_0",
        "1..",
        ".",
        "+",
        "-",
        "0x10",
        "1,5",
        "1e5.0",
        "١",
        "1d5",
        "inf5",
        "1e1_0",
        "\x01",
    ],
)
def test_invalid_tokens(token):
    with pytest.raises(ValueError, match="token 1: .* is not a number"):
        parse(["1.0", token])


@pytest.mark.parametrize("token", ["nan", "NaN", "-nan", "+NAN"])
def test_nan_is_refused(token):
    with pytest.raises(ValueError, match="token 0: is NaN"):
        parse([token, "2"])


@pytest.mark.parametrize("longest", [8, 16, 24])
@given(data=st.data())
def test_parsing_short_tokens_uses_fewer_words_exactly(longest, data):
    """Tokens of one, two or three 8-byte words are read exactly."""
    tokens = data.draw(
        st.lists(
            decimal_tokens().filter(lambda t: len(t) <= longest and math.isfinite(float(t))),
            min_size=1,
            max_size=40,
        )
    )
    np.testing.assert_array_equal(bits(parse(tokens)), bits([float(t) for t in tokens]))
