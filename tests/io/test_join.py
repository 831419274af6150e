"""Score files streamed against a key (focal.io._join) give align_trials' answers and errors."""

import numpy as np
import pytest

from focal.io import align_trials, read_key, read_scores
from focal.io._join import align_files, iter_aligned

RNG = np.random.default_rng(11)
N = 3000
MODELS = np.array([f"spk{i % 37}" for i in range(N)])
TESTS = np.array([f"seg{i:05d}" for i in range(N)])
LABELS = RNG.random(N) < 0.2


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
