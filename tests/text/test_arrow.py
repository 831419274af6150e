"""pyarrow's text kernels (optional extra ``fast``): the values Python's ``float`` reads, bit for
bit, the lines ``repr`` writes, byte for byte, and pairwise equality of byte segments, or no
answer (the NumPy path then does the work and reports errors); files read and applied with and
without pyarrow are bit-identical.
"""

import numpy as np
import pytest

from focal._text import arrow as _arrow
from focal._text.numbers import format_numbers
from focal.io import read_scores, write_scores
from focal.workflows import apply_to_files

pytest.importorskip("pyarrow")


@pytest.fixture
def arrow_at_once(monkeypatch):
    """Use pyarrow from the first token on (not only after a quarter million)."""
    monkeypatch.setattr(_arrow, "_IMPORT_AFTER", 0)
    monkeypatch.setattr(_arrow, "_MIN_TOKENS", 0)


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


HOSTILE = [
    b"inf", b"-inf", b"+inf", b"INF", b"Infinity", b"-INFINITY", b"infinit", b"infinityy",
    b"nan", b"NaN", b"-nan", b"+NAN", b"nan(123)", b"nan()", b"1_0", b"_1", b"1_", b"1e5_0",
    b"+.5", b"-.5e-3", b".5", b"5.", b".", b"e5", b"E5", b"1e", b"1e+", b"1e-", b"1.e3", b".e3",
    b"0x10", b"0X1p3", b"0b1", b"1d5", b"1D5", b"1f", b"1,5", b" 1", b"1 ", b"\t1", b"1\n",
    b"--1", b"+-1", b"-+1", b"++1", b"+", b"-", b"1\x00", b"\x001", b"00012", b"-0", b"+0",
    b"0e0", b"1e0001", b"1e400", b"-1e400", b"1e-400", b"2.4703282292062327e-324",
    b"2.4703282292062328e-324", "\u0661\u0662".encode(), "\uff11".encode(), b"\xff1",
    b"1" * 400, b"0." + b"0" * 400 + b"1", b"9" * 309, b"1e-5", b"1E+05", b"-1.5E-05",
    b"0." + b"0" * 500 + b"1e501", b"1" + b"0" * 400 + b"e-400", b"9" * 800 + b"e-800",
    b"1e99999999999999999999", b"1e-99999999999999999999", b"1e+00000000000000000000001",
    b"1.0e-400000000000000000000000000", b"123456789012345678901234567890e-29",
]  # fmt: skip


def _agrees_with_float(token, got):
    """The pyarrow answer for one token is None, or the finite double float reads."""
    if got is None:
        return True
    try:
        want = float(token)
    except ValueError:
        return False
    return got.size == 1 and np.isfinite(want) and _bits(got)[0] == _bits([want])[0]


def test_whatever_pyarrow_answers_is_what_float_reads(arrow_at_once):
    """Hostile tokens (spellings of infinity and NaN in any case, underscores, hexadecimal,
    white space, unicode digits, overflow) and random strings over an alphabet of such bytes:
    pyarrow either does not answer or answers float's finite double.
    """
    rng = np.random.default_rng(3)
    odd = b".+-eEinfatyINFATYxXpd_ \x00\xd9\xa1"
    alphabet = np.frombuffer(b"0123456789" * 4 + odd, dtype=np.uint8)
    fuzz = {rng.choice(alphabet, size=int(rng.integers(1, 9))).tobytes() for _ in range(2000)}
    answered = 0
    for token in HOSTILE + sorted(fuzz):
        got = _arrow.parse_numbers(*_tokens([token]))
        assert _agrees_with_float(token, got), token
        answered += got is not None
    assert answered > 100
    for token in (b"inf", b"nan", b"nan(123)", b"1e400", b" 1", b"1_0", "\u0661".encode()):
        assert _arrow.parse_numbers(*_tokens([token])) is None, token


def test_tokens_in_any_order_and_overlapping_tokens(arrow_at_once):
    tokens = [t.encode() for t in _decimals(np.random.default_rng(4), 200)]
    tokens = [t for t in tokens if np.isfinite(float(t))]
    buf, starts, lengths = _tokens(tokens)
    want = _bits([float(t) for t in tokens])
    order = np.random.default_rng(5).permutation(len(tokens))  # columns read in another order
    got = _arrow.parse_numbers(buf, starts[order], lengths[order])
    np.testing.assert_array_equal(_bits(got), want[order])
    tight = buf[: int(starts[-1] + lengths[-1])]  # no byte after the last token
    np.testing.assert_array_equal(_bits(_arrow.parse_numbers(tight, starts, lengths)), want)
    again = np.concatenate([starts, starts[:3]])  # a token read twice
    assert _arrow.parse_numbers(buf, again, np.concatenate([lengths, lengths[:3]])) is None
    empty = _arrow.parse_numbers(buf, starts[:0], lengths[:0])
    assert empty is not None and empty.size == 0


def _random_segments(rng, n, size=9):
    """A buffer of arbitrary bytes (newlines and zeros included) and n segments of 0-size
    bytes in increasing order with gaps of 0-3 bytes between them.
    """
    lengths = rng.integers(0, size, n)
    gaps = rng.integers(0, 4, n)
    starts = np.cumsum(gaps) + np.concatenate([[0], np.cumsum(lengths)[:-1]])
    stops = starts + lengths
    data = rng.integers(0, 256, int(stops[-1]) + 5 if n else 5, dtype=np.uint8)
    return data, starts, stops


def _pieces(data, starts, stops):
    return [data[s:e].tobytes() for s, e in zip(starts, stops)]


def test_equal_segments_against_a_python_oracle(arrow_at_once):
    rng = np.random.default_rng(6)
    data, starts, stops = _random_segments(rng, 3000)
    # the same segments at other places of another buffer
    shift = rng.integers(0, 3, starts.size).cumsum()
    other = np.zeros(int(stops[-1] + shift[-1]) + 2, dtype=np.uint8)
    for s, e, d in zip(starts, stops, shift):
        other[s + d : e + d] = data[s:e]
    assert _arrow.equal_segments(data, starts, stops, other, starts + shift, stops + shift)
    changed = other.copy()
    i = int(np.flatnonzero(stops > starts)[1000])
    changed[starts[i] + shift[i]] ^= 1
    assert _pieces(data, starts, stops) != _pieces(changed, starts + shift, stops + shift)
    assert not _arrow.equal_segments(data, starts, stops, changed, starts + shift, stops + shift)
    # the same bytes cut elsewhere: lengths differ
    assert not _arrow.equal_segments(data, starts, stops, data, starts, stops + (starts == 7))
    assert _arrow.equal_segments(data, starts[:0], stops[:0], other, starts[:0], stops[:0])
    for j in (i, i + 1):  # one pair: the same segment, then another of the same length
        one = [
            np.array([s])
            for s in (starts[i], stops[i], starts[j], starts[j] + stops[i] - starts[i])
        ]
        want = _pieces(data, *one[:2]) == _pieces(data, *one[2:])
        assert _arrow.equal_segments(data, *one[:2], data, *one[2:]) is want
    # out of order or overlapping segments, or a different count: no answer
    back, back_stops = starts[::-1], stops[::-1]
    assert _arrow.equal_segments(data, back, back_stops, data, back, back_stops) is None
    assert _arrow.equal_segments(data, starts, stops, data, starts[1:], stops[1:]) is None


def _repr_lines(data, starts, stops, values):
    """The pure-Python oracle of join_lines."""
    return b"".join(
        data[s:e].tobytes() + repr(v).encode() + b"\n"
        for s, e, v in zip(starts, stops, values.tolist())
    )


def _hard_values(rng):
    decades = 10.0 ** np.arange(-330, 309, dtype=np.float64)
    values = [
        decades,
        np.nextafter(decades, 0),
        np.nextafter(decades, np.inf),
        np.arange(-1000, 1000) / 8,  # integers and halves
        np.array([0.0, -0.0, np.inf, -np.inf, 5e-324, 1.7976931348623157e308, 2.0**53 + 2]),
        np.array([1e15 + 0.5, 2.0**52 + 0.5, 0.1, 1 / 3, 2 / 3, 9.999999999999999e-05]),
        rng.normal(size=5000) * 10.0 ** rng.integers(-20, 25, 5000),
    ]
    x = np.concatenate(values)
    return np.concatenate([x, -x])


def test_join_lines_writes_repr(arrow_at_once):
    rng = np.random.default_rng(7)
    values = _hard_values(rng)
    data, starts, stops = _random_segments(rng, values.size)
    got = _arrow.join_lines(data, starts, stops, values, format_numbers)
    assert got is not None
    assert bytes(got) == _repr_lines(data, starts, stops, values)
    for n in (0, 1):
        got = _arrow.join_lines(data, starts[:n], stops[:n], values[:n], format_numbers)
        assert bytes(got) == _repr_lines(data, starts[:n], stops[:n], values[:n])
    mostly = rng.normal(size=500)  # a few values written otherwise by pyarrow
    mostly[[3, 70, 400]] = [1.0, -1e-05, 1e12 + 0.5]
    got = _arrow.join_lines(data, starts[:500], stops[:500], mostly, format_numbers)
    assert bytes(got) == _repr_lines(data, starts[:500], stops[:500], mostly)
    assert _arrow.join_lines(data, starts[:500], stops[:500], mostly[:-1], format_numbers) is None


def test_join_lines_is_the_numpy_writer(arrow_at_once):
    """Byte-identical to the lines the NumPy writer makes of the same fields, whether the
    segments start lines of a score file (the newline before each is taken along) or not.
    """
    from focal._text.fields import format_lines
    from focal._text.numbers import format_numbers

    rng = np.random.default_rng(8)
    values = rng.normal(size=4000) * 10.0 ** rng.integers(-8, 18, 4000)
    fields = np.array([f"spk{i % 97} seg{i:06d} ".encode() for i in range(values.size)])
    want = format_lines(
        [fields.view(np.uint8).reshape(values.size, -1), format_numbers(values)], sep=b""
    )
    for end in (b"", b"-1.25\n"):  # fields alone, or lines of a score file
        lines = [f + end for f in fields]
        data = np.frombuffer(bytes(7) + b"".join(lines), dtype=np.uint8)
        starts = 7 + np.concatenate([[0], np.cumsum([len(t) for t in lines])[:-1]])
        stops = starts + np.char.str_len(fields)
        assert bytes(_arrow.join_lines(data, starts, stops, values, format_numbers)) == want, end
        assert bytes(
            _arrow.join_lines(data, starts[:2], stops[:2], values[:2], format_numbers)
        ) == b"".join(want.splitlines(keepends=True)[:2])


@pytest.mark.slow
def test_join_lines_writes_repr_of_a_million_random_doubles(arrow_at_once):
    """Every bit pattern (all exponents, subnormals, infinities; NaN left out)."""
    rng = np.random.default_rng(9)
    values = rng.integers(0, 2**64, 1_000_000, dtype=np.uint64).view(np.float64)
    values = values[~np.isnan(values)]
    stops = starts = np.zeros(values.size, dtype=np.int64)
    data = np.zeros(0, dtype=np.uint8)
    got = _arrow.join_lines(data, starts, stops, values, format_numbers)
    assert bytes(got) == "".join(f"{v!r}\n" for v in values.tolist()).encode()


def test_join_lines_without_an_answer(arrow_at_once, monkeypatch):
    rng = np.random.default_rng(10)
    data, starts, stops = _random_segments(rng, 100)
    values = rng.normal(size=100)
    assert (
        _arrow.join_lines(data, starts[::-1], stops[::-1], values, format_numbers) is None
    )  # out of order
    monkeypatch.setattr(_arrow, "_DISABLED", True)
    assert _arrow.join_lines(data, starts, stops, values, format_numbers) is None
    assert _arrow.equal_segments(data, starts, stops, data, starts, stops) is None
    monkeypatch.setattr(_arrow, "_DISABLED", False)
    # pyarrow text in another layout than repr's (here: integral values without ".0"), as
    # another pyarrow version might write: the probe finds it and switches the writer off
    monkeypatch.setattr(_arrow, "_arrow_writes_repr", lambda x: np.ones(x.size, dtype=bool))
    _arrow._writer_agrees.cache_clear()
    try:
        assert _arrow.join_lines(data, starts, stops, values, format_numbers) is None
    finally:
        _arrow._writer_agrees.cache_clear()


def test_pyarrow_is_imported_only_after_many_numbers(monkeypatch):
    """Until pyarrow is imported, the kernels count the numbers they leave to NumPy (not the
    cheap segment comparisons) and answer once ``_IMPORT_AFTER`` of them were counted.
    """
    import sys

    assert _arrow._pyarrow() is not None  # imported once and for all (cached)
    monkeypatch.delitem(sys.modules, "pyarrow")  # as in a fresh process (restored after)
    monkeypatch.setattr(_arrow, "_loaded", None)
    monkeypatch.setattr(_arrow, "_IMPORT_AFTER", 1000)
    monkeypatch.setattr(_arrow, "_seen", 0)
    monkeypatch.setattr(_arrow, "_MIN_TOKENS", 1)
    buf, starts, lengths = _tokens([b"1.5"] * 600)
    stops = starts + lengths
    assert _arrow.equal_segments(buf, starts, stops, buf, starts, stops) is None
    assert _arrow._seen == 0
    assert _arrow.join_lines(buf, starts, stops, np.ones(600), format_numbers) is None
    assert _arrow.parse_numbers(buf, starts, lengths) is None
    assert _arrow._seen == 1200
    assert _arrow.parse_numbers(buf, starts, lengths) is not None
    assert _arrow.equal_segments(buf, starts, stops, buf, starts, stops)


_NO_IMPORT_IN_WORKERS = """
import runpy, sys, threading
imported = []
def hook(event, args):
    if event == "import" and threading.current_thread() is not threading.main_thread():
        imported.append(args[0])
sys.addaudithook(hook)
sys.argv = ["focal", *sys.argv[1:]]
try:
    runpy.run_module("focal", run_name="__main__")
finally:
    from focal._text import arrow
    print("loaded", arrow._loaded is not None, "imported in workers", sorted(set(imported)))
"""


@pytest.mark.parametrize("command", ["apply", "apply-gz", "evaluate", "train"])
def test_worker_threads_never_import_and_pyarrow_is_still_loaded(command, tmp_path):
    """A worker thread that imports can wait for ever: Ctrl-C landing in CPython's import
    machinery can leave the global import lock held by the main thread, the interrupt
    swallowed (``focal apply`` hung on 1 Ctrl-C in about 150). The calling thread loads
    pyarrow for its workers, after enough numbers (here 4 x 10^5 per file).
    """
    import subprocess
    import sys

    from focal import LogisticFusion, save

    n = 200_000
    rng = np.random.default_rng(3)
    models = np.char.add("m", (np.arange(n) % 700).astype(str))
    tests = np.char.add("t", np.arange(n).astype(str))
    paths = [tmp_path / f"s{j}" for j in range(2)]
    for path in paths:
        write_scores(path, models, tests, np.round(rng.normal(size=n), 6))
    key = tmp_path / "key"
    labels = np.where(rng.random(n) < 0.3, "target", "nontarget")
    key.write_text("".join(f"{m} {t} {c}\n" for m, t, c in zip(models, tests, labels)))
    model = tmp_path / "model.json"
    save(LogisticFusion().fit(rng.normal(size=(50, 2)), np.arange(50) % 2), model)
    files = [str(p) for p in paths]
    args = {
        "apply": ["apply", str(model), *files, "-o", str(tmp_path / "out")],
        "apply-gz": ["apply", str(model), *files, "-o", str(tmp_path / "out.gz")],
        "evaluate": ["evaluate", *files, "--key", str(key)],
        "train": ["train", "--scores", *files, "--key", str(key), "-o", str(tmp_path / "m")],
    }[command]
    done = subprocess.run(
        [sys.executable, "-c", _NO_IMPORT_IN_WORKERS, *args],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines()[-1] == "loaded True imported in workers []"


def test_a_thread_loads_pyarrow_only_where_imports_are_allowed(monkeypatch):
    """The worker threads of focal never load pyarrow; a thread it does not own (a Dask task)
    may, under ``imports_allowed``: focal.dask reads its partitions so.
    """
    import threading

    monkeypatch.setattr(_arrow, "_loaded", None)
    monkeypatch.setattr(_arrow, "_IMPORT_AFTER", 0)
    monkeypatch.setattr(_arrow, "_MIN_TOKENS", 1)
    buf, starts, lengths = _tokens([b"1.5"] * 600)
    got = {}

    def parse(name, allowed):
        if allowed:
            with _arrow.imports_allowed():
                got[name] = _arrow.parse_numbers(buf, starts, lengths)
        else:
            got[name] = _arrow.parse_numbers(buf, starts, lengths)

    for name, allowed in (("worker", False), ("task", True)):
        thread = threading.Thread(target=parse, args=(name, allowed))
        thread.start()
        thread.join()
    assert got["worker"] is None
    np.testing.assert_array_equal(got["task"], np.full(600, 1.5))
    assert _arrow._loaded is not None


def test_segments_past_the_end_of_their_buffer_are_not_answered(arrow_at_once):
    buf, starts, lengths = _tokens([b"1.5", b"2.5", b"3.5"])
    past = starts + np.array([0, 0, buf.size])
    assert _arrow.parse_numbers(buf, past, lengths) is None
    assert _arrow.equal_segments(buf, past, past + 1, buf, starts, starts + 1) is None
    lines = np.frombuffer(b"a 1\nb 2\nc 3\n", dtype=np.uint8)
    starts = np.array([0, 4, 8 + lines.size])
    assert _arrow.join_lines(lines, starts, starts + 2, np.ones(3), format_numbers) is None


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
