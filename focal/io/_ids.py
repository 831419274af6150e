"""Exact matching of trial ids (tuples of fixed-width byte strings) through 64-bit hashes.

Hashes make the sort cheap (one uint64 per trial instead of byte strings); every match they
propose is then checked byte for byte, and a hash collision (two different ids, one hash) falls
back to sorting the ids themselves. So the result never depends on the hash being perfect.
"""

from __future__ import annotations

import numpy as np

__all__ = ["as_id_array", "hash_ids", "find_duplicate", "match_ids", "check_matched"]

_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)


def as_id_array(ids, name="ids"):
    """Ids as a bytes array of a width that is a multiple of 8 (UTF-8 for str input)."""
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {ids.shape}")
    if ids.dtype.kind == "U":
        ids = np.char.encode(ids, "utf-8")
    elif ids.dtype.kind != "S":
        if ids.dtype.kind == "O" and all(isinstance(v, (str, bytes)) for v in ids):
            ids = np.array([v.encode("utf-8") if isinstance(v, str) else v for v in ids],
                           dtype=bytes)
        else:
            raise ValueError(f"{name} must be strings or bytes, got dtype {ids.dtype}")
    width = max(8, -(-ids.dtype.itemsize // 8) * 8)
    if ids.dtype.itemsize != width:
        ids = ids.astype(f"S{width}")
    return ids


def _mix(h):
    h ^= h >> np.uint64(33)
    h *= _M1
    h ^= h >> np.uint64(33)
    h *= _M2
    h ^= h >> np.uint64(33)
    return h


def hash_ids(*columns):
    """One uint64 hash per row of the id columns (each a bytes array, width multiple of 8)."""
    n = columns[0].shape[0]
    h = np.zeros(n, dtype=np.uint64)
    for c, col in enumerate(columns):
        words = np.ascontiguousarray(col).view(np.uint64).reshape(n, -1)
        h += np.uint64((0x9E3779B97F4A7C15 * (c + 1)) % 2**64)
        for j in range(words.shape[1]):
            h ^= words[:, j]
            h = _mix(h)
    return h


def _exact_keys(columns):
    """Rows of the id columns as one void (raw bytes) array: exact, slow comparisons."""
    n = columns[0].shape[0]
    raw = np.concatenate([np.ascontiguousarray(c).view(np.uint8).reshape(n, -1)
                          for c in columns], axis=1)
    return np.ascontiguousarray(raw).view(f"V{raw.shape[1]}").ravel()


def _same(columns_a, ia, columns_b, ib):
    eq = np.ones(np.size(ia), dtype=bool)
    for a, b in zip(columns_a, columns_b):
        eq &= a[ia] == b[ib]
    return eq


def find_duplicate(columns):
    """Indices (first, second) of the earliest repeated row of the id columns, or None.

    ``second`` is the smallest index whose row occurred before; ``first`` that earlier row.
    """
    n = columns[0].shape[0]
    if n < 2:
        return None
    h = hash_ids(*columns)
    s = np.sort(h)
    repeated = s[1:] == s[:-1]
    if not repeated.any():
        return None
    suspects = np.flatnonzero(np.isin(h, s[1:][repeated]))
    keys = _exact_keys([c[suspects] for c in columns])
    order = np.argsort(keys, kind="stable")  # equal rows stay in file order
    same = keys[order][1:] == keys[order][:-1]
    if not same.any():
        return None  # hash collisions only
    run = np.cumsum(np.concatenate([[True], ~same])) - 1
    run_first = suspects[order][np.flatnonzero(np.concatenate([[True], ~same]))]
    later = np.flatnonzero(same) + 1
    seconds = suspects[order[later]]
    k = int(np.argmin(seconds))
    return int(run_first[run[later[k]]]), int(seconds[k])


def _search_sorted_queries(sorted_table, queries):
    """``np.searchsorted(sorted_table, queries)``, with the queries searched in sorted order.

    Same answer; queries in random order make nearly every step of every binary search a cache
    miss (10^7 random queries into 10^7 hashes: about 20 s), sorted ones walk the table once.
    """
    if queries.size < 2:
        return np.searchsorted(sorted_table, queries)
    order = np.argsort(queries, kind="stable")
    pos = np.empty(queries.size, dtype=np.intp)
    pos[order] = np.searchsorted(sorted_table, queries[order])
    return pos


def match_ids(query, table):
    """For each row of ``query`` (tuple of id columns), its row in ``table``, or -1.

    ``table`` must not contain repeated rows. Exact: hash matches are verified byte for byte.
    """
    nq = query[0].shape[0]
    nt = table[0].shape[0]
    if nq == nt and all(np.array_equal(q, t) for q, t in zip(query, table)):
        return np.arange(nq)
    hq = hash_ids(*query)
    ht = hash_ids(*table)
    order = np.argsort(ht)
    sorted_h = ht[order]
    if nt > 1 and (sorted_h[1:] == sorted_h[:-1]).any():
        return _match_exact(query, table)
    if nt == 0:
        return np.full(nq, -1)
    pos = np.minimum(_search_sorted_queries(sorted_h, hq), nt - 1)
    hit = sorted_h[pos] == hq
    index = np.where(hit, order[pos], -1)
    rows = np.flatnonzero(hit)
    verified = _same(query, rows, table, index[rows])
    if not verified.all():  # a collision between a query id and a different table id
        return _match_exact(query, table)
    return index


def _match_exact(query, table):
    widths = [max(q.dtype.itemsize, t.dtype.itemsize) for q, t in zip(query, table)]
    kq = _exact_keys([q.astype(f"S{w}") for q, w in zip(query, widths)])
    kt = _exact_keys([t.astype(f"S{w}") for t, w in zip(table, widths)])
    order = np.argsort(kt, kind="stable")
    sorted_k = kt[order]
    if sorted_k.size == 0:
        return np.full(kq.size, -1)
    pos = np.minimum(_search_sorted_queries(sorted_k, kq), sorted_k.size - 1)
    hit = sorted_k[pos] == kq
    return np.where(hit, order[pos], -1)


def check_matched(where, n_table, label, reference_name, noun, what, sample_reference,
                  sample_table):
    """Raise ValueError when a reference row has no match, or a table row is matched by none.

    ``where`` is :func:`match_ids`'s answer for the reference rows in a table of ``n_table``
    rows; the message gives the count and the first ids (``sample_*`` format a few indices).
    """
    absent = np.flatnonzero(where < 0)
    if absent.size:
        raise ValueError(f"{label}: {absent.size} {noun}(s) of the {reference_name} have no "
                         f"{what}, e.g. {sample_reference(absent)}; use missing='drop' (focal: "
                         f"--missing drop) to skip "
                         f"them")
    used = np.zeros(n_table, dtype=bool)
    used[where] = True
    if not used.all():
        extra = np.flatnonzero(~used)
        raise ValueError(f"{label}: {extra.size} scored {noun}(s) are not in the "
                         f"{reference_name}, e.g. {sample_table(extra)}; use missing='drop' "
                         f"(focal: --missing drop) to "
                         f"skip them")
