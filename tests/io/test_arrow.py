"""pyarrow's exact decimal-to-float64 conversion (optional extra ``fast``): the values Python's
``float`` reads, bit for bit, or no answer (the NumPy path then reads the tokens and reports
errors); files read and applied with and without pyarrow are bit-identical.
"""

import numpy as np
import pytest

from focal.io import _arrow, apply_to_files, read_scores, write_scores

pytest.importorskip("pyarrow")


@pytest.fixture
def arrow_at_once(monkeypatch):
    """Use pyarrow from the first token on (not only after a quarter million)."""
    monkeypatch.setattr(_arrow, "_IMPORT_AFTER", 0)
    monkeypatch.setattr(_arrow, "_MIN_TOKENS", 1)


def _tokens(tokens):
    """(buffer, starts, lengths) of the tokens, space separated, with the reader's padding."""
    starts, at = [], 0
    for t in tokens:
        starts.append(at)
        at += len(t) + 1
    buf = np.frombuffer(b" ".join(tokens) + bytes(64), dtype=np.uint8)
    return buf, np.array(starts, dtype=np.int64), np.array([len(t) for t in tokens])


def _bits(values):
    return np.asarray(values, dtype=np.float64).view(np.uint64)


def _decimals(rng, n):
    """Plain decimals of every shape: signs, 1-25 digits, points anywhere, exponents to the
    ends of the float64 range (subnormals, overflow to the largest double), halfway cases.
    """
    out = []
    for _ in range(n):
        digits = "".join(rng.choice(list("0123456789"), size=int(rng.integers(1, 26))))
        point = int(rng.integers(0, len(digits) + 1))
        text = digits[:point] + "." + digits[point:] if rng.random() < 0.8 else digits
        if text == ".":
            text = "0."
        if rng.random() < 0.4:
            text += "eE"[int(rng.integers(2))] + str(int(rng.integers(-340, 300)))
        out.append(["", "-", "+"][int(rng.integers(3))] + text)
    return out + [
        "9007199254740993",  # 2**53 + 1: halfway between two doubles, rounds to even
        "2.2250738585072011e-308",
        "4.9406564584124654e-324",
        "2.4703282292062328e-324",
        "1.7976931348623157e308",
        "0.1",
        "1e23",
        "-0.0",
        "8.98846567431158e307",
        "123456789012345678901234",
    ]


def test_plain_decimals_read_as_python_float(arrow_at_once):
    tokens = _decimals(np.random.default_rng(0), 1500)
    tokens = [t for t in tokens if abs(float(t)) != float("inf")]  # overflow: not answered
    got = _arrow.parse_numbers(*_tokens([t.encode() for t in tokens]))
    assert got is not None
    np.testing.assert_array_equal(_bits(got), _bits([float(t) for t in tokens]))


def test_anything_but_a_plain_finite_decimal_is_left_to_numpy(arrow_at_once):
    for word in (b"inf", b"-Infinity", b"nan", b"1_0", b"0x10", b"1e400", b"1e", b"--1", b"."):
        assert _arrow.parse_numbers(*_tokens([b"1.5", word, b"2"])) is None, word


def test_short_tokens_agree_with_float_or_are_not_answered(arrow_at_once):
    """Tokens of the decimal alphabet: those float reads, pyarrow reads to the same doubles;
    those float refuses ('1e', '+-1', '.'), pyarrow does not answer.
    """
    rng = np.random.default_rng(1)
    alphabet = np.frombuffer(b"0123456789.+-eE", dtype=np.uint8)
    tokens = {rng.choice(alphabet, size=int(rng.integers(1, 6))).tobytes() for _ in range(3000)}
    good, bad = [], []
    for token in sorted(tokens):
        try:
            value = float(token)
        except ValueError:
            bad.append(token)
            continue
        if np.isfinite(value):  # '9e999' overflows: left to NumPy, which refuses it
            good.append((token, value))
    got = _arrow.parse_numbers(*_tokens([t for t, _ in good]))
    assert got is not None and len(good) > 100
    np.testing.assert_array_equal(_bits(got), _bits([v for _, v in good]))
    for token in bad[::8]:  # each alone: one refused token is enough to leave a batch
        assert _arrow.parse_numbers(*_tokens([token])) is None, token


def test_small_batches_and_a_disabled_pyarrow_are_not_answered(monkeypatch):
    monkeypatch.setattr(_arrow, "_IMPORT_AFTER", 0)
    assert _arrow.parse_numbers(*_tokens([b"1.5"] * 10)) is None  # below the minimum batch
    monkeypatch.setattr(_arrow, "_DISABLED", True)
    assert not _arrow.enabled()
    assert _arrow.parse_numbers(*_tokens([b"1.5"] * 2000)) is None


def _fuse(X):
    out = np.full(X.shape[0], 0.25)
    for j, w in enumerate((1.5, -0.75, 3.0)):
        out = out + w * X[:, j]
    return out


def test_files_read_and_applied_bit_identically_with_and_without_pyarrow(
    tmp_path, monkeypatch, arrow_at_once
):
    rng = np.random.default_rng(2)
    n = 3000
    models = np.array([f"spk{i % 31}" for i in range(n)])
    tests = np.array([f"seg{i:05d}" for i in range(n)])
    paths = []
    for k in range(3):  # repr-exact, rounded and scientific scores
        path = tmp_path / f"sys{k}.scores"
        scores = rng.normal(size=n) * 10.0 ** rng.integers(-6, 8, n)
        if k == 1:
            scores = np.round(scores, 6)
        write_scores(path, models, tests, scores)
        if k == 2:  # the same values, written in scientific notation by another program
            lines = [f"{m} {t} {s:.17e}" for m, t, s in zip(models, tests, scores)]
            path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    answered = []
    original = _arrow.parse_numbers

    def spy(*args):
        value = original(*args)
        answered.append(value is not None)
        return value

    monkeypatch.setattr(_arrow, "parse_numbers", spy)
    outputs, values = [], []
    for disabled in (False, True):
        monkeypatch.setattr(_arrow, "_DISABLED", disabled)
        values.append([read_scores(p).scores for p in paths])
        out = tmp_path / f"out{int(disabled)}"
        assert apply_to_files(_fuse, paths, out, block_bytes=1 << 14) == n
        outputs.append(out.read_bytes())
    assert any(answered) and not all(answered)  # pyarrow read, then NumPy read
    for a, b in zip(*values):
        np.testing.assert_array_equal(_bits(a), _bits(b))
    assert outputs[0] == outputs[1]
