"""Exact matching of trial ids (tuples of fixed-width byte strings) through 64-bit hashes.

Hashes make the sort cheap (one uint64 per trial instead of byte strings); every match they
propose is then checked byte for byte, and a hash collision (two different ids, one hash) falls
back to sorting the ids themselves. So the result never depends on the hash being perfect.
"""

from __future__ import annotations

import numpy as np

from .._text.fields import ids_text

__all__ = [
    "HashTable",
    "as_id_array",
    "check_matched",
    "check_unique",
    "find_duplicate",
    "hash_ids",
    "match_ids",
]

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
            ids = np.array(
                [v.encode("utf-8") if isinstance(v, str) else v for v in ids], dtype=bytes
            )
        else:
            raise ValueError(f"{name} must be strings or bytes, got dtype {ids.dtype}")
    width = max(8, -(-ids.dtype.itemsize // 8) * 8)
    if ids.dtype.itemsize != width:
        ids = ids.astype(f"S{width}")
    return ids


def _mix(h):
    """Final avalanche of 64-bit hashes (MurmurHash3's fmix64), in place."""
    h ^= h >> np.uint64(33)
    h *= _M1
    h ^= h >> np.uint64(33)
    h *= _M2
    h ^= h >> np.uint64(33)
    return h


def hash_ids(*columns):
    """One uint64 hash per row of the id columns (each a bytes array, width multiple of 8).

    Each 8-byte word is mixed (a multiply by a constant of its position and a shift) and
    added; one full avalanche ends each column. A zero word adds nothing, so an id's hash does
    not depend on its column's width (ids hold no NUL byte: zero words are padding), and ids
    read in blocks of different widths hash alike. Collisions cost time, never correctness:
    every use checks the bytes.
    """
    n = columns[0].shape[0]
    out = np.zeros(n, dtype=np.uint64)
    words = [_words(col) for col in columns]
    for i in range(0, n, _HASH_ROWS):  # a million rows at a time: small temporaries
        h = out[i : i + _HASH_ROWS]
        x = np.empty_like(h)
        shifted = np.empty_like(h)
        for c, w in enumerate(words):
            h += np.uint64((0x9E3779B97F4A7C15 * (c + 1)) % 2**64)
            for j in range(w.shape[1]):
                np.multiply(w[i : i + _HASH_ROWS, j], _position(j), out=x)
                np.right_shift(x, np.uint64(29), out=shifted)
                x ^= shifted
                x *= _M1
                h += x
            _mix(h)
    return out


def _position(j):
    """An odd 64-bit multiplier for word ``j`` of an id."""
    return np.uint64((0xC2B2AE3D27D4EB4F * (2 * j + 1) + 2 * j) % 2**64 | 1)


_HASH_ROWS = 1 << 20


def _exact_keys(columns):
    """Rows of the id columns as one void (raw bytes) array: exact, slow comparisons."""
    n = columns[0].shape[0]
    raw = np.concatenate(
        [np.ascontiguousarray(c).view(np.uint8).reshape(n, c.dtype.itemsize) for c in columns],
        axis=1,
    )
    return np.ascontiguousarray(raw).view(f"V{raw.shape[1]}").ravel()


def _words(column):
    """An id column (bytes, width a multiple of 8) as an (n, w/8) uint64 matrix (a view)."""
    column = np.ascontiguousarray(column)
    return column.view(np.uint64).reshape(column.shape[0], column.dtype.itemsize // 8)


def _same(columns_a, ia, columns_b, ib):
    """Whether row ``ia[k]`` of ``columns_a`` equals row ``ib[k]`` of ``columns_b``, byte for
    byte (ids are zero padded: a wider column's extra words must be zero); ``ia`` None: every
    row of ``columns_a`` in order.
    """
    diff = np.zeros(np.size(ib), dtype=np.uint64)  # OR of the XORs of the ids' words
    for a, b in zip(columns_a, columns_b):
        ga = _words(a) if ia is None else np.take(_words(a), ia, axis=0)
        gb = np.take(_words(b), ib, axis=0)
        k = min(ga.shape[1], gb.shape[1])
        for j in range(max(ga.shape[1], gb.shape[1])):
            if j < k:
                diff |= ga[:, j] ^ gb[:, j]
            else:  # the wider id's extra words must be zero padding
                diff |= ga[:, j] if ga.shape[1] > j else gb[:, j]
    return diff == 0


def check_unique(columns, shown, lines=None):
    """Refuse the earliest repeated row of the id columns (:func:`find_duplicate`).

    Parameters
    ----------
    columns : tuple of ndarray
        ``(segments,)`` or ``(models, tests)``, as given by the user or read from ``shown``.
    shown : str
        The file (or ``"scores"``, ``"key"`` for objects made in memory) the error names.
    lines : LineMap, optional
        The file lines of the rows: the error then names the two lines, else the two rows
        (counted from 0).
    """
    dup = find_duplicate(columns)
    if dup is None:
        return
    first, second = dup
    if len(columns) == 1:
        what = f"segment {ids_text(columns[0][second])!r}"
    else:
        what = f"trial ({', '.join(ids_text(c[second]) for c in columns)})"
    if lines is not None:
        raise ValueError(
            f"{shown}:{lines.line(second)}: duplicate {what}, first seen on line "
            f"{lines.line(first)}"
        )
    raise ValueError(f"{shown}: duplicate {what}: rows {first} and {second} (counted from 0)")


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


class HashTable:
    """Rows of id columns ready to be looked up by hash, block by block.

    The table is one sorted uint64 array: each row's hash with its low bits replaced by its
    row index (a plain sort, several times faster than an argsort of the hashes), and a
    directory of where each run of leading bits starts in it (buckets of 1 to 2 rows). A
    lookup reads a query's bucket, a few neighbouring words of the sorted array, and compares
    the hashes' high bits: two cache misses per query, where a binary search of 10^7 hashes
    costs one per step. Every proposed match is then checked byte for byte; rows whose high
    bits are shared by several table rows are matched exactly by their bytes. So the answer
    never depends on the hash being perfect.

    Parameters
    ----------
    columns : tuple of ndarray of bytes, or None
        The id columns (no repeated row). None when the table is built from ``hashes`` alone
        (a key whose ids are not kept in memory): ``fetch`` then gives the few rows whose high
        bits are shared, and lookups are not checked byte for byte (``verify=False``; the
        caller checks the matches).
    n_query : int
        Rows of the largest query (the index bits are those of the larger count).
    hashes : ndarray of uint64, optional
        :func:`hash_ids` of the columns, when already computed (consumed: sorted in place).
    fetch : callable, optional
        ``fetch(rows)``: the id columns of the given (sorted) rows.
    """

    def __init__(self, columns, n_query=0, *, hashes=None, fetch=None):
        self.columns = columns
        packed = hash_ids(*columns) if hashes is None else hashes
        n = packed.shape[0]
        self.n = n
        self.bits = _index_bits(max(n, n_query))
        self.mask = _U((1 << self.bits) - 1)
        packed &= ~self.mask
        packed |= np.arange(n, dtype=np.uint64)
        packed.sort()
        self.packed = packed
        self.shared_rows = None
        if n == 0:
            return
        # the directory: 2^d buckets of leading bits (d < bits: the high bits decide the
        # bucket), 1 to 2 rows each on average; bucket b is packed[first[b] : first[b + 1]]
        self.shift = _U(64 - max(1, min(self.bits, _index_bits(n) - _SPARSER)))
        first = np.full((1 << (64 - int(self.shift))) + 1, n, dtype=_row_type(n))
        first[int(packed[0] >> self.shift)] = 0
        shared = np.zeros(n - 1, dtype=bool)
        for i in range(1, n, _HASH_ROWS):  # each row and the one before: a new bucket? shared?
            a, b = packed[i - 1 : i - 1 + _HASH_ROWS], packed[i : i + _HASH_ROWS]
            a = a[: b.size]
            shared[i - 1 : i - 1 + b.size] = (a ^ b) <= self.mask
            new = (a >> self.shift) != (b >> self.shift)
            first[(b[new] >> self.shift).astype(np.intp)] = np.flatnonzero(new) + i
        np.minimum.accumulate(first[::-1], out=first[::-1])  # empty buckets: the next start
        self.first = first
        if shared.any():  # a few rows whose high bits collide: matched by their bytes
            both = np.zeros(n, dtype=bool)
            both[1:] |= shared
            both[:-1] |= shared
            self.shared_rows = np.sort((packed[both] & self.mask).astype(np.intp))
            self.shared_high = np.unique(packed[both] & ~self.mask)
            if fetch is None:
                self.shared_columns = tuple(c[self.shared_rows] for c in columns)
            else:
                self.shared_columns = tuple(fetch(self.shared_rows))

    def duplicate(self):
        """Rows (first, second) of the earliest repeated row, as :func:`find_duplicate`."""
        if self.shared_rows is None:
            return None
        dup = find_duplicate(self.shared_columns)
        return None if dup is None else tuple(int(self.shared_rows[i]) for i in dup)

    def _find(self, high):
        """Row of the table (the first) with each of the high bits ``high``, or -1."""
        bucket = (high >> self.shift).astype(np.intp)  # NumPy < 2 takes no uint64 indices
        start = self.first.take(bucket).astype(np.intp)
        size = self.first.take(bucket + 1) - start
        found = self.packed.take(start, mode="clip")  # the first row of each bucket
        out = (found & self.mask).view(np.int64)
        found &= ~self.mask
        out[found != high] = -1
        rest = np.flatnonzero((out < 0) & (size > 1))
        for k in range(1, _WINDOW):  # the next rows of the bucket: neighbours in memory
            if not rest.size:
                break
            found = self.packed.take(start[rest] + k, mode="clip")
            same = (found & ~self.mask) == high[rest]
            out[rest[same]] = (found[same] & self.mask).view(np.int64)
            rest = rest[~same & (size[rest] > k + 1)]
        if rest.size:  # rare large buckets: a binary search
            pos = np.minimum(np.searchsorted(self.packed, high[rest]), self.n - 1)
            found = self.packed[pos]
            ok = (found & ~self.mask) == high[rest]
            out[rest[ok]] = (found[ok] & self.mask).view(np.int64)
        return out.astype(np.intp, copy=False)

    def lookup(self, query, verify=True):
        """Row of the table holding each row of ``query`` (tuple of id columns), or -1.

        With ``verify=False`` a match of the hashes' high bits is not checked byte for byte
        (the caller checks it; only rows whose high bits are shared are matched by bytes).
        """
        nq = query[0].shape[0]
        if nq == 0 or self.n == 0:
            return np.full(nq, -1, dtype=np.intp)
        too_long = None
        if verify:
            query, too_long = _widths_of(query, self.columns)
        high = hash_ids(*query)
        high &= ~self.mask
        out = self._find(high)
        hit = out >= 0
        if verify:  # check the proposed matches byte for byte, in query order
            rows = None if hit.all() else np.flatnonzero(hit)
            index = out if rows is None else out[rows]
            ok = _same(query, rows, self.columns, index)
            if not ok.all():
                out[np.flatnonzero(~ok) if rows is None else rows[~ok]] = -1
            if too_long is not None:
                out[too_long] = -1
        if self.shared_rows is not None:  # a query whose high bits are shared: a hit
            candidates = np.flatnonzero(hit)
            at = np.searchsorted(self.shared_high, high[candidates])
            at = np.minimum(at, self.shared_high.size - 1)
            ambiguous = candidates[self.shared_high[at] == high[candidates]]
            if ambiguous.size:
                sub = _match_exact(tuple(c[ambiguous] for c in query), self.shared_columns)
                out[ambiguous] = np.where(sub >= 0, self.shared_rows[np.maximum(sub, 0)], -1)
        return out


#: Rows of a bucket compared by neighbouring reads (larger buckets: a binary search)
_WINDOW = 6
#: Directory buckets: 2^(index bits - _SPARSER), 1 to 2 rows each on average
_SPARSER = 1


def _row_type(n):
    return np.int32 if n < 2**31 else np.int64


def _widths_of(query, table):
    """The query columns at the table's widths (hashes read whole words, padding included);
    a query id longer than the table's width matches nothing (its rows: ``too_long``).
    """
    too_long = None
    out = []
    for q, t in zip(query, table):
        wq, wt = q.dtype.itemsize, t.dtype.itemsize
        if wq > wt:
            extra = _words(q)[:, wt // 8 :].any(axis=1)
            too_long = extra if too_long is None else too_long | extra
            q = (
                np.ascontiguousarray(q)
                .view(np.uint8)
                .reshape(-1, wq)[:, :wt]
                .copy()
                .view(f"S{wt}")
                .ravel()
            )
        elif wq < wt:
            q = q.astype(f"S{wt}")
        out.append(q)
    return tuple(out), too_long


def _index_bits(n):
    return max(1, int(max(n, 1) - 1).bit_length())


_U = np.uint64


def match_ids(query, table):
    """For each row of ``query`` (tuple of id columns), its row in ``table``, or -1.

    ``table`` must not contain repeated rows. Exact: hash matches are verified byte for byte.
    """
    nq = query[0].shape[0]
    nt = table[0].shape[0]
    if nq == nt and all(np.array_equal(q, t) for q, t in zip(query, table)):
        return np.arange(nq)
    return HashTable(table, nq).lookup(query)


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


def check_matched(
    where, n_table, label, reference_name, noun, what, sample_reference, sample_table
):
    """Raise ValueError when a reference row has no match, or a table row is matched by none.

    ``where`` is :func:`match_ids`'s answer for the reference rows in a table of ``n_table``
    rows; the message gives the count and the first ids (``sample_*`` format a few indices).
    """
    absent = np.flatnonzero(where < 0)
    if absent.size:
        raise ValueError(
            f"{label}: {absent.size} {noun}(s) of the {reference_name} have no "
            f"{what}, e.g. {sample_reference(absent)}; use missing='drop' (focal: "
            f"--missing drop) to skip "
            f"them"
        )
    used = np.zeros(n_table, dtype=bool)
    used[where] = True
    if not used.all():
        extra = np.flatnonzero(~used)
        raise ValueError(
            f"{label}: {extra.size} scored {noun}(s) are not in the "
            f"{reference_name}, e.g. {sample_table(extra)}; use missing='drop' "
            f"(focal: --missing drop) to "
            f"skip them"
        )
