"""Exact id matching through hashes (focal.io._ids): the answer of a Python dict, even when
every hash collides, ids differ in width, or queries are absent.
"""

import numpy as np
import pytest

from focal._text.fields import Ids
from focal.io import _ids


def _oracle(query, table):
    where = {row: i for i, row in enumerate(zip(*(c.tolist() for c in table)))}
    return np.array([where.get(row, -1) for row in zip(*(c.tolist() for c in query))])


def _columns(rng, n, width):
    models = np.array([b"m%d" % k for k in rng.integers(0, 30, n)], dtype=f"S{width}")
    tests = np.array([b"t%05d" % k for k in rng.integers(0, 3000, n)], dtype="S8")
    return models, tests


@pytest.mark.parametrize("gather_rows", [1 << 20, 777])  # 777: the query looked up in slices
@pytest.mark.parametrize("window", [1, 4])
@pytest.mark.parametrize("hashing", ["real", "colliding", "constant"])
def test_match_ids_equals_a_dict_lookup(monkeypatch, hashing, window, gather_rows):
    monkeypatch.setattr(_ids, "_WINDOW", window)  # 1: most buckets searched past the window
    monkeypatch.setattr(_ids, "_GATHER_ROWS", gather_rows)
    rng = np.random.default_rng(5)
    models, tests = _columns(rng, 3000, 8)
    pairs = sorted(set(zip(models.tolist(), tests.tolist())))
    table = (np.array([p[0] for p in pairs], dtype="S8"), np.array([p[1] for p in pairs], "S8"))
    qm, qt = _columns(rng, 2500, 16)  # wider query ids: zero padding must not matter
    query = (
        np.concatenate([qm, table[0][:500].astype("S16")]),
        np.concatenate([qt, table[1][:500]]),
    )
    real = _ids.hash_ids
    if hashing == "colliding":  # many hashes shared by different ids
        monkeypatch.setattr(_ids, "hash_ids", lambda *c, **_: real(*c) & np.uint64(0xF << 60))
    elif hashing == "constant":
        monkeypatch.setattr(_ids, "hash_ids", lambda *c, **_: np.zeros(len(c[0]), np.uint64))
    got = _ids.match_ids(query, table)
    assert np.array_equal(got, _oracle(query, table))
    assert (got[-500:] == np.arange(500)).all()


def test_hash_does_not_depend_on_the_column_width():
    ids = np.array([b"a", b"spk0001", b"x" * 20, b"seg/12345678.wav"], dtype="S24")
    narrow = ids.astype("S16")[:2]
    assert np.array_equal(_ids.hash_ids(ids)[:2], _ids.hash_ids(narrow))
    assert np.array_equal(_ids.hash_ids(ids, ids), _ids.hash_ids(ids.astype("S32"), ids))
    assert np.unique(_ids.hash_ids(ids)).size == ids.size
    # the columns are not interchangeable: (a, b) and (b, a) hash apart
    a, b = ids[:2], ids[2:]
    assert not np.array_equal(_ids.hash_ids(a, b), _ids.hash_ids(b, a))


@pytest.mark.parametrize("n", [1, 2, 3, 9, 64, 65, 1000])
def test_lookups_of_tables_of_any_size(n):
    rng = np.random.default_rng(n)
    table = (np.array([b"m%d" % i for i in range(n)], "S8"), np.full(n, b"t", "S8"))
    rows = rng.integers(0, 2 * n, 3 * n)  # half of them absent
    query = (np.array([b"m%d" % i for i in rows], "S8"), np.full(rows.size, b"t", "S8"))
    expected = np.where(rows < n, rows, -1)
    assert np.array_equal(_ids.HashTable(table).lookup(query), expected)


@pytest.mark.parametrize(
    "ids",
    [
        [b"spk1", b"spk2", b"spk3"],  # one length: a strided copy
        [b"a", b"bcdefgh", b"ijklmnop"],  # one width class, several lengths
        [b"a", b"b" * 20, b"cd", b"e" * 9],  # several width classes
    ],
)
def test_a_block_gathered_once_gives_its_ids_and_their_hashes(ids):
    # a block's text: the ids between other fields, as the tokenizer finds them
    text = b"".join(b"%s 1.5\n" % i for i in ids)
    data = np.frombuffer(text, dtype=np.uint8)
    starts = np.array([text.index(b"%s 1.5\n" % i) for i in ids])
    column = Ids(data, starts, np.array([len(i) for i in ids]))
    gathered = _ids.gather_classes(column)
    compact = _ids.compact_gathered(column, gathered)
    assert [compact[k] for k in range(len(ids))] == ids
    assert compact.data.tobytes() == b"".join(ids)
    hashes = _ids.hash_ids(column, gathered=[gathered])
    assert np.array_equal(hashes, _ids.hash_ids(np.array(ids)))
