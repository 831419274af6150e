"""BOSARIS HDF5 Scores / Key (h5py) and parquet tables (pyarrow) read as the text files of the
same trials; recognised by their magic bytes.
"""

import numpy as np
import pytest

from focal.io import align_trials, read_key, read_scores
from focal.io._join import align_files

MODELS = np.array([b"m1", b"m2", b"m3"])
SEGMENTS = np.array([b"s1", b"s2", b"s22222222222", b"s4"])
SCORES = np.array([[0.5, -1.25, 2.0, 9.0], [3.5, 0.0, -7.0, 1e-3], [1.0, 1.5, -2.5, 4.0]])
TRIALS = np.array([[1, 1, 0, 1], [1, 0, 1, 0], [0, 1, 1, 1]], dtype=bool)  # masked-in cells
TARGET = np.array([[1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=bool)


def _text_files(tmp_path):
    rows, cols = np.nonzero(TRIALS)
    s = tmp_path / "scores.txt"
    s.write_text(
        "".join(
            f"{MODELS[r].decode()} {SEGMENTS[c].decode()} {float(SCORES[r, c])!r}\n"
            for r, c in zip(rows, cols)
        )
    )
    k = tmp_path / "key.txt"
    k.write_text(
        "".join(
            f"{MODELS[r].decode()} {SEGMENTS[c].decode()} "
            f"{'target' if TARGET[r, c] else 'nontarget'}\n"
            for r, c in zip(rows[::-1], cols[::-1])
        )
    )
    return s, k


def test_bosaris_hdf5_scores_and_key(tmp_path):
    h5py = pytest.importorskip("h5py")
    with h5py.File(tmp_path / "scores.h5", "w") as f:
        f["scores"] = SCORES
        f["score_mask"] = TRIALS.astype(np.uint8)
        f["ID/row_ids"] = MODELS
        f["ID/column_ids"] = SEGMENTS
    with h5py.File(tmp_path / "key.h5", "w") as f:  # Key.save_hdf5: +1 target, -1 non-target
        f["trial_mask"] = (TARGET.astype(np.int8) - (TRIALS & ~TARGET)).T  # transposed
        f["file_format"] = "2.0"
        f["ID/row_ids"] = MODELS
        f["ID/column_ids"] = SEGMENTS
    s_txt, k_txt = _text_files(tmp_path)
    expected = align_trials(read_key(k_txt), read_scores(s_txt))
    got = align_trials(read_key(k_txt), read_scores(tmp_path / "scores.h5"))
    for e, g in zip(expected, got):
        assert np.array_equal(e, g)
    by_h5_key = align_trials(read_key(tmp_path / "key.h5"), read_scores(s_txt))
    assert by_h5_key[1].tolist() == TARGET[TRIALS].tolist()  # row-major cells
    assert by_h5_key[0][:, 0].tolist() == SCORES[TRIALS].tolist()
    streamed = align_files(read_key(k_txt), [tmp_path / "scores.h5"])
    assert np.array_equal(streamed[0], expected[0])
    with pytest.raises(ValueError, match="no /scores: a BOSARIS Key or Ndx"):
        read_scores(tmp_path / "key.h5")


def test_parquet_scores_and_key(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows, cols = np.nonzero(TRIALS)
    pq.write_table(
        pa.table(
            {
                "enrol": MODELS[rows].astype(str),
                "segment": SEGMENTS[cols],
                "llr": SCORES[rows, cols],
            }
        ),
        tmp_path / "scores.pq",
    )
    pq.write_table(
        pa.table(
            {
                "modelid": MODELS[rows].astype(str),
                "segmentid": SEGMENTS[cols].astype(str),
                "targettype": np.where(TARGET[rows, cols], "target", "nontarget"),
            }
        ),
        tmp_path / "key.parquet",
    )
    s_txt, k_txt = _text_files(tmp_path)
    expected = align_trials(read_key(k_txt), read_scores(s_txt))
    got = align_trials(read_key(k_txt), read_scores(tmp_path / "scores.pq"))
    for e, g in zip(expected, got):
        assert np.array_equal(e, g)
    got = align_trials(read_key(tmp_path / "key.parquet", format="nist-sre"), read_scores(s_txt))
    assert got[1].tolist() == TARGET[TRIALS].tolist()
    with pytest.raises(ValueError, match="no score column"):
        read_scores(tmp_path / "key.parquet")
