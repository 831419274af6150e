"""Score files streamed against a key (the file engine's join, focal.io.engine) give the answers
and errors of align_trials on the files read whole.
"""

import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from focal.io import _ids, _spill, align_trials, read_key, read_scores
from focal.io.engine import in_memory, iter_aligned, join, kept_rows, read_aligned, read_columns
from focal.io.formats import key_layout

RNG = np.random.default_rng(11)
N = 3000
MODELS = np.array([f"spk{i % 37}" for i in range(N)])
TESTS = np.array([f"seg{i:05d}" for i in range(N)])
LABELS = RNG.random(N) < 0.2


def align_files(key, paths, **options):
    """The join of a key and score files, as align_trials returns it."""
    reference = in_memory(key)
    X = join(reference, paths, **options)
    keep = kept_rows(X, reference, paths)
    keep = slice(None) if keep is None else keep
    return X[keep], key.labels[keep], key.models[keep], key.tests[keep]


def _write_key(path, rows):
    path.write_text(
        "".join(f"{MODELS[i]} {TESTS[i]} {'tar' if LABELS[i] else 'non'}\n" for i in rows)
    )
    return path


def _write_scores(path, rows, scores):
    path.write_text("".join(f"{MODELS[i]} {TESTS[i]} {scores[i]!r}\n" for i in rows))
    return path


@pytest.mark.parametrize("block_bytes", [256, 1 << 20])
@pytest.mark.parametrize("missing", ["error", "drop"])
def test_same_answer_as_reading_both_files_whole(tmp_path, block_bytes, missing):
    scores = RNG.normal(size=N).tolist()
    key = _write_key(tmp_path / "key", RNG.permutation(N))
    rows = RNG.permutation(N) if missing == "error" else RNG.permutation(N)[: N - 100]
    a = _write_scores(tmp_path / "a", rows, scores)
    b = _write_scores(tmp_path / "b", RNG.permutation(N), scores)
    k = read_key(key)
    expected = align_trials(k, read_scores(a), read_scores(b), missing="drop")
    if missing == "error" and rows.size < N:
        return
    got = align_files(k, [a, b], missing=missing, block_bytes=block_bytes)
    for e, g in zip(expected, got):
        assert np.array_equal(e, g)
    assert got[0].shape == (rows.size, 2)
    per_file = list(iter_aligned([a, b], key, missing=missing))
    assert np.array_equal(per_file[0][1], expected[0][:, 0])
    assert per_file[1][1].size == N


def test_errors_name_the_file_line_and_trials(tmp_path):
    scores = RNG.normal(size=N).tolist()
    k = read_key(_write_key(tmp_path / "key", range(N)))
    short = _write_scores(tmp_path / "short", range(N - 2), scores)
    with pytest.raises(
        ValueError,
        match=r"short: 2 trial\(s\) of the key .* have no score, e.g. "
        r"\(spk1, seg02998\)",
    ):
        align_files(k, [short])
    extra_key = read_key(_write_key(tmp_path / "key2", range(N - 5)))
    with pytest.raises(ValueError, match=r"5 scored trial\(s\) are not in the key"):
        align_files(extra_key, [_write_scores(tmp_path / "full", range(N), scores)])
    rows = list(range(N)) + [1500]
    twice = _write_scores(tmp_path / "twice", rows, scores)
    for block_bytes in (256, 1 << 20):  # repeated in another block, and in the same block
        with pytest.raises(
            ValueError, match=rf"twice:{N + 1}: duplicate trial \(spk20, seg01500\)"
        ):
            align_files(k, [twice], block_bytes=block_bytes)
    rows = list(range(N - 5)) + [N - 3, N - 3]  # a repeat among trials absent from the key
    with pytest.raises(ValueError, match=rf"dup:{N - 3}: duplicate trial"):
        align_files(extra_key, [_write_scores(tmp_path / "dup", rows, scores)], missing="drop")


def _exact(key, paths, missing):
    return align_trials(read_key(key), *map(read_scores, paths), missing=missing)


@pytest.mark.parametrize("missing", ["error", "drop"])
@pytest.mark.parametrize("threads", [0, 1, None])
def test_the_join_gives_the_answer_of_reading_both_files_whole(tmp_path, missing, threads):
    scores = RNG.normal(size=N).tolist()
    key = _write_key(tmp_path / "key", RNG.permutation(N))
    rows = RNG.permutation(N) if missing == "error" else RNG.permutation(N)[: N - 100]
    a = _write_scores(tmp_path / "a", rows, scores)
    b = _write_scores(tmp_path / "b", RNG.permutation(N), scores)
    expected = _exact(key, [a, b], "drop")
    got = align_files(read_key(key), [a, b], missing=missing, threads=threads, block_bytes=4096)
    for e, g in zip(expected, got):
        assert np.array_equal(e, g)
    got = read_aligned([a, b], key, missing=missing)
    assert got[-1] == str(key)
    for e, g in zip(expected, got):
        assert np.array_equal(e, g)
    no_ids = read_aligned([a, b], key, missing=missing, ids=False)
    assert no_ids[2] is None and no_ids[3] is None and np.array_equal(no_ids[0], expected[0])
    per_file = list(iter_aligned([a, b], key, missing=missing, ids=False))
    assert np.array_equal(per_file[0][1], _exact(key, [a], missing)[0][:, 0])
    assert per_file[1][3] is None


def _hash_of_models_only(monkeypatch):
    """Every trial of a model hashes alike: trials of a key with one trial per model have
    hashes of their own, and a scored trial of another test collides with the key's.
    """
    real = _ids.hash_ids
    monkeypatch.setattr(_ids, "hash_ids", lambda models, tests, **_: real(models))


def test_a_hash_collision_never_mismatches_trials(tmp_path, monkeypatch):
    _hash_of_models_only(monkeypatch)
    n = 200
    key = tmp_path / "key"
    key.write_text("".join(f"m{i} t{i} {'tar' if i % 3 == 0 else 'non'}\n" for i in range(n)))
    lines = [f"m{i} t{i} {i / 7!r}\n" for i in range(n)]
    lines[57] = "m57 other 5.5\n"  # not in the key: its hash is that of the key's (m57, t57)
    scores = tmp_path / "scores"
    scores.write_text("".join(lines[::-1]))
    with pytest.raises(ValueError, match=r"1 scored trial\(s\) are not in the key"):
        read_aligned([scores], key)
    X, y, models, tests, _ = read_aligned([scores], key, missing="drop")
    assert X.shape == (n - 1, 1) and b"t57" not in tests.tolist()
    assert np.array_equal(X[:, 0], np.delete(np.arange(n) / 7, 57))
    got = list(iter_aligned([scores, scores], key, missing="drop"))
    assert len(got) == 2 and all(np.array_equal(g[1], X[:, 0]) for g in got)
    # files joined together are checked together: the collision is found in its own file
    good = tmp_path / "good"
    good.write_text("".join(lines[:57] + ["m57 t57 5.5\n"] + lines[58:]))
    for files in ([good, scores], [scores, good]):
        with pytest.raises(ValueError, match=r"scores: 1 scored trial\(s\) are not in the key"):
            read_aligned(files, key)
        X, _, _, tests, _ = read_aligned(files, key, missing="drop")
        assert X.shape == (n - 1, 2) and b"t57" not in tests.tolist()
        assert np.array_equal(X, np.delete(np.arange(n)[:, None] / np.ones(2) / 7, 57, axis=0))
    lines[57] = "m57 t57 5.5\n"
    scores.write_text("".join(lines))
    assert read_aligned([scores], key)[0][57, 0] == 5.5


def test_collisions_within_the_key_are_matched_by_their_bytes(tmp_path, monkeypatch):
    _hash_of_models_only(monkeypatch)  # 37 models: every key hash is shared
    scores = RNG.normal(size=N).tolist()
    key = _write_key(tmp_path / "key", RNG.permutation(N))
    a = _write_scores(tmp_path / "a", RNG.permutation(N), scores)
    expected = _exact(key, [a], "error")
    for e, g in zip(expected, read_aligned([a], key)):
        assert np.array_equal(e, g)
    twice = _write_key(tmp_path / "twice", list(range(N)) + [17])
    with pytest.raises(ValueError, match=rf"twice:{N + 1}: duplicate trial \(spk17, seg00017\), "):
        read_aligned([a], twice)


def test_the_join_errors_as_reading_the_files_whole(tmp_path):
    scores = RNG.normal(size=N).tolist()
    key = _write_key(tmp_path / "key", list(range(N)) + [5])
    a = _write_scores(tmp_path / "a", range(N), scores)
    with pytest.raises(ValueError) as whole:
        read_key(key)
    with pytest.raises(ValueError) as joined:
        read_aligned([a], key)
    assert str(joined.value) == str(whole.value) and "first seen on line 6" in str(whole.value)
    short = _write_scores(tmp_path / "short", range(N - 2), scores)
    full = _write_key(tmp_path / "full", range(N))
    with pytest.raises(ValueError, match=r"short: 2 trial\(s\) of the key .* \(spk1, seg02998\)"):
        read_aligned([short], full)
    twice = _write_scores(tmp_path / "twice", list(range(N)) + [1500], scores)
    with pytest.raises(ValueError, match=rf"twice:{N + 1}: duplicate trial \(spk20, seg01500\)"):
        read_aligned([twice], full)


def test_a_key_of_other_trials_is_named_with_the_files(tmp_path):
    scores = RNG.normal(size=N).tolist()
    key = _write_key(tmp_path / "key", range(N // 2))
    other = _write_scores(tmp_path / "other", range(N // 2, N), scores)
    with pytest.raises(ValueError, match=rf"other: {N // 2} scored trial\(s\) are not in the key"):
        read_aligned([other], key)
    message = r"no trial of the key .*key is in every score file \(.*other\): is it the key"
    with pytest.raises(ValueError, match=message):
        read_aligned([other], key, missing="drop")


@pytest.mark.parametrize("threads", [0, None])
def test_files_report_the_error_of_the_first_that_fails(tmp_path, threads):
    scores = RNG.normal(size=N).tolist()
    key = _write_key(tmp_path / "key", RNG.permutation(N))
    good = _write_scores(tmp_path / "good", RNG.permutation(N), scores)
    short = _write_scores(tmp_path / "short", range(N - 2), scores)
    twice = _write_scores(tmp_path / "twice", list(range(N)) + [1500], scores)
    extra = tmp_path / "extra"
    extra.write_text(good.read_text() + "nobody seg99999 0.5\n")

    def join(paths):
        return align_files(read_key(key), paths, block_bytes=4096, threads=threads)[:2]

    X, y = join([good, good, good])
    assert np.array_equal(X, np.repeat(X[:, :1], 3, axis=1))
    for paths, error in (
        ([good, twice, extra], rf"twice:{N + 1}: duplicate trial \(spk20, seg01500\)"),
        ([extra, twice, good], r"extra: 1 scored trial\(s\) are not in the key"),
        ([good, good, short], r"short: 2 trial\(s\) of the key"),
    ):
        with pytest.raises(ValueError, match=error):
            join(paths)
    for paths, error in (  # each file aligned on its own: its missing trials first
        ([short, extra], r"short: 2 trial\(s\) of the key"),
        ([extra, short], r"extra: 1 scored trial\(s\) are not in the key"),
    ):
        with pytest.raises(ValueError, match=error):
            list(iter_aligned(paths, key))


@pytest.mark.parametrize("long_at", [0, 7, 69_999])
def test_one_long_id_is_joined_without_widening_the_others(tmp_path, long_at):
    # Ids are held by their own length: one id of 4,000 bytes among 70,000 short ones would
    # take 267 MiB at the width of the longest (a refusal), here it takes its own bytes.
    n = 70_000
    models = [f"m{i % 50}" for i in range(n)]
    models[long_at] = "x" * 4000
    labels = np.arange(n) % 3 == 0
    order = np.random.default_rng(5).permutation(n)
    key, scores = tmp_path / "key", tmp_path / "scores"
    key.write_text(
        "".join(f"{models[i]} t{i} {'target' if labels[i] else 'nontarget'}\n" for i in order)
    )
    scores.write_text("".join(f"{models[i]} t{i} {i}\n" for i in range(n)))
    X, y, _, _, _ = read_aligned([scores], key, ids=False)
    assert np.array_equal(X[:, 0], order) and np.array_equal(y, labels[order])
    per_file = list(iter_aligned([scores], key, ids=False))
    assert np.array_equal(per_file[0][1], order)


_ID_CHARS = "abcXYZ019-_/.:"


@st.composite
def _join_case(draw):
    """A key of distinct trials with ids of many lengths (1 to 300 bytes, every width class of
    the hash kernels), and a score file of some of its trials in another order, some trials
    not in the key.
    """
    short = st.text(_ID_CHARS, min_size=1, max_size=40)
    ids = st.one_of(short, short, st.integers(41, 300).map(lambda k: "L" * k))
    trials = draw(st.lists(st.tuples(ids, ids), min_size=1, max_size=60, unique=True))
    labels = draw(st.lists(st.booleans(), min_size=len(trials), max_size=len(trials)))
    scored = draw(st.permutations(range(len(trials))))
    scored = scored[: draw(st.integers(1, len(trials)))]
    extra = [(m + "!", t) for m, t in draw(st.lists(st.sampled_from(trials), max_size=3))]
    return trials, labels, scored, sorted(set(extra))


@given(_join_case(), st.sampled_from([64, 1 << 20]), st.sampled_from([0, None]), st.booleans())
@settings(max_examples=80, deadline=None)
def test_the_join_equals_a_dictionary_lookup(tmp_path_factory, case, block_bytes, threads, spill):
    trials, labels, scored, extra = case
    folder = tmp_path_factory.mktemp("join")
    key, scores = folder / "key", folder / "scores"
    key.write_text(
        "".join(f"{m} {t} {'target' if y else 'nontarget'}\n" for (m, t), y in zip(trials, labels))
    )
    written = [(*trials[i], float(i) / 3) for i in scored] + [(m, t, -1.0) for m, t in extra]
    scores.write_text("".join(f"{m} {t} {s!r}\n" for m, t, s in written))
    oracle = {(m, t): s for m, t, s in written}  # the slow, obvious join
    spill = str(tmp_path_factory.mktemp("spill")) if spill else None
    reference = read_columns(
        key, key_layout(None), ("label",), block_bytes=block_bytes, spill=spill
    )
    X = join(reference, [scores], missing="drop", threads=threads, block_bytes=block_bytes)
    expected = [oracle.get(trial, np.nan) for trial in trials]
    assert np.array_equal(X[:, 0], expected, equal_nan=True)
    assert reference.values["label"].tolist() == labels
    models, tests = reference.arrays()
    assert [(m.decode(), t.decode()) for m, t in zip(models, tests)] == trials
    if extra or len(scored) < len(trials):
        with pytest.raises(ValueError, match=r"scores: \d+ (scored )?trial"):
            join(reference, [scores], threads=threads, block_bytes=block_bytes)


def test_a_spilled_key_is_checked_range_by_range(tmp_path, monkeypatch):
    # Ranges of a few dozen key rows: matches land in many range files, each checked apart.
    monkeypatch.setattr(_spill, "RANGE_BYTES", 1024)
    scores = RNG.normal(size=N).tolist()
    key = _write_key(tmp_path / "key", RNG.permutation(N))
    a = _write_scores(tmp_path / "a", RNG.permutation(N)[: N - 40], scores)
    b = _write_scores(tmp_path / "b", RNG.permutation(N)[: N - 7], scores[::-1])
    c = _write_scores(tmp_path / "c", RNG.permutation(N), RNG.normal(size=N).tolist())
    for files in ([a], [a, b, c], [c, b]):  # the files of a join checked together
        expected = _exact(key, files, "drop")
        for e, g in zip(expected, read_aligned(files, key, missing="drop")):
            assert np.array_equal(e, g)
    # two trials scored twice, the later range's repeat first in the file: its line is named
    twice = _write_scores(tmp_path / "twice", list(range(N)) + [2500, 10], scores)
    with pytest.raises(ValueError, match=rf"twice:{N + 1}: duplicate trial \(spk21, seg02500\)"):
        read_aligned([twice], key)


def test_the_key_ids_go_to_a_temporary_file_once_they_outgrow_memory(tmp_path, monkeypatch):
    absent = tmp_path / "absent"
    monkeypatch.setattr(tempfile, "tempdir", str(absent))  # no temporary file can be made
    scores = RNG.normal(size=N).tolist()
    key = _write_key(tmp_path / "key", RNG.permutation(N))
    a = _write_scores(tmp_path / "a", RNG.permutation(N), scores)
    expected = _exact(key, [a], "error")
    for e, g in zip(expected, read_aligned([a], key)):  # a small key: held in memory
        assert np.array_equal(e, g)
    monkeypatch.setattr(_spill, "SPOOL_BYTES", 4096)
    with pytest.raises(OSError, match="cannot write the temporary files of the join") as error:
        read_aligned([a], key)
    assert error.value.filename == str(absent) and "TMPDIR" in error.value.strerror
    absent.mkdir()
    for e, g in zip(expected, read_aligned([a], key)):
        assert np.array_equal(e, g)
    assert not any(absent.iterdir())  # the temporary files are gone
