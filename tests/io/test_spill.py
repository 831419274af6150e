"""Ids kept on disk for a join by hash (focal.io._spill): read back as written, matches
checked byte for byte range by range.
"""

import numpy as np

from focal.io import _spill


def _ids(rng, n, longest):
    lengths = rng.integers(1, longest + 1, n)
    words = [bytes(rng.integers(97, 123, k).astype(np.uint8)) for k in lengths]
    width = max(8, -(-int(lengths.max()) // 8) * 8)
    return np.array(words, dtype=f"S{width}")


def test_growing_appends_in_order():
    g = _spill.Growing(np.int64, capacity=3)
    parts = [np.arange(k) for k in (2, 5, 0, 9)]
    for p in parts:
        g.add(p)
    assert np.array_equal(g.result(), np.concatenate(parts))


def test_ids_read_back_by_range_and_rows_at_the_widest_width(tmp_path):
    rng = np.random.default_rng(3)
    spill = _spill.IdSpill(str(tmp_path / "ids"))
    blocks = [
        (_ids(rng, n, w), _ids(rng, n, v)) for n, w, v in ((5, 3, 20), (7, 12, 4), (1, 30, 9))
    ]
    for m, t in blocks:
        spill.add(m, t)
    spill.finish()
    wm = max(m.dtype.itemsize for m, _ in blocks)
    wt = max(t.dtype.itemsize for _, t in blocks)
    models = np.concatenate([m.astype(f"S{wm}") for m, _ in blocks])
    tests = np.concatenate([t.astype(f"S{wt}") for _, t in blocks])
    assert len(spill) == 13 and spill.widths == (wm, wt) and wm > 8
    for lo, hi in ((0, 13), (3, 9), (5, 12), (12, 13), (4, 4)):
        m, t = spill.rows(lo, hi)
        assert m.dtype == models.dtype and np.array_equal(m, models[lo:hi])
        assert np.array_equal(t, tests[lo:hi])
    rows = np.array([0, 4, 5, 11, 12])
    m, t = spill.take(rows)
    assert np.array_equal(m, models[rows]) and np.array_equal(t, tests[rows])


def test_matches_are_checked_byte_for_byte_in_every_range(tmp_path, monkeypatch):
    rng = np.random.default_rng(4)
    n = 500
    models, tests = _ids(rng, n, 10), _ids(rng, n, 14)
    key = _spill.IdSpill(str(tmp_path / "key"))
    for i in range(0, n, 64):
        key.add(models[i : i + 64], tests[i : i + 64])
    key.finish()
    monkeypatch.setattr(_spill, "RANGE_BYTES", 700)  # many ranges of a few rows
    for wrong in (None, 0, 137, n - 1):
        spill = _spill.MatchSpill(str(tmp_path), "s", key)
        assert spill.n_ranges > 10
        order = rng.permutation(n)
        m, t = models[order].copy(), tests[order].copy()
        if wrong is not None:  # one matched trial whose test id differs by its last byte
            i = int(np.flatnonzero(order == wrong)[0])
            t[i] = t[i][:-1] + b"~"
        scores = rng.normal(size=n)
        for a in range(0, n, 100):
            b = a + 100
            assert spill.add(order[a:b], m[a:b], t[a:b].astype("S24"), scores[a:b])
        values = np.full(n, np.nan)
        assert spill.check(values) is (wrong is None)
        if wrong is None:  # each score put at the key row its trial matched
            assert np.array_equal(values[order], scores)
        assert not list(tmp_path.glob("s.*"))  # the range files are removed
    spill = _spill.MatchSpill(str(tmp_path), "w", key)  # an id wider than every key id
    assert not spill.add(np.array([0]), np.array([b"x" * 40]), tests[:1])
    spill.close()


def test_a_key_row_matched_twice_fails_the_check(tmp_path):
    rng = np.random.default_rng(5)
    n = 300
    models, tests = _ids(rng, n, 10), _ids(rng, n, 14)
    key = _spill.IdSpill(str(tmp_path / "key"))
    key.add(models, tests)
    key.finish()
    for first, second in (((0, 150), (150, n)), ((0, n), (42, 43))):  # no repeat, a repeat
        spill = _spill.MatchSpill(str(tmp_path), "s", key)
        for lo, hi in (first, second):  # the same ids, in separate blocks
            rows = np.arange(lo, hi)
            assert spill.add(rows, models[rows], tests[rows])
        assert spill.check() is (second[0] == first[1])
