"""Exact matching of trial ids (:class:`focal._text.fields.Ids`, held by their own length)
through 64-bit hashes.

The kernels that want fixed-width words (hashing, byte-for-byte comparison) gather the ids a
width class at a time (:func:`focal._text.fields.classes`: ids of 1-8 bytes at width 8, 9-16
at 16, 17-32 at 32, ...), a block's worth at a time, so their temporaries are at most twice
the ids' own bytes, whatever the lengths of the others.

Hashes make the join cheap (one uint64 per trial instead of byte strings); every match they
propose is then checked byte for byte, and ids whose hashes collide are matched by their bytes.
So the result never depends on the hash being perfect.
"""

from __future__ import annotations

import numpy as np

from .._text.fields import Ids, gather_ids, ids_text

__all__ = [
    "HashTable",
    "check_matched",
    "check_unique",
    "compact_gathered",
    "duplicate_error",
    "find_duplicate",
    "gather_classes",
    "hash_ids",
    "match_ids",
]

_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_U = np.uint64


def _mix(h):
    """Final avalanche of 64-bit hashes (MurmurHash3's fmix64), in place."""
    h ^= h >> np.uint64(33)
    h *= _M1
    h ^= h >> np.uint64(33)
    h *= _M2
    h ^= h >> np.uint64(33)
    return h


def hash_ids(*columns, gathered=None):
    """One uint64 hash per row of the id columns (each :class:`Ids` or a bytes array).

    Each 8-byte word is mixed (a multiply by a constant of its position and a shift) and
    added; one full avalanche ends each column. A zero word adds nothing, so an id's hash does
    not depend on the width it is gathered at (ids hold no NUL byte: zero words are padding).
    Collisions cost time, never correctness: every use checks the bytes. ``gathered``: the
    columns' :func:`gather_classes`, when already gathered (a block's: hashed and reused).
    """
    columns = [Ids.of(c) for c in columns]
    n = len(columns[0])
    out = np.zeros(n, dtype=np.uint64)
    for c, column in enumerate(columns):
        out += np.uint64((0x9E3779B97F4A7C15 * (c + 1)) % 2**64)
        if gathered is not None:
            for where, _, fields in gathered[c]:
                _add_words(out, where, _words(fields))
        for i in range(0, n if gathered is None else 0, _HASH_ROWS):  # a million rows at a time
            rows = np.arange(i, min(i + _HASH_ROWS, n)) if n > _HASH_ROWS else None
            h = out[i : i + _HASH_ROWS]
            for where, starts, lengths in column.widths(rows):
                _add_words(h, where, _words(gather_ids(column.data, starts, lengths)))
        _mix(out)
    return out


def gather_classes(column):
    """``[(where, lengths, fields)]`` per width class of the ids (:meth:`Ids.widths`), the ids
    gathered as fixed-width bytes (:func:`focal._text.fields.gather_ids`): a block's ids
    gathered once for hashing, checking hash hits and compacting.
    """
    return [
        (where, lengths, gather_ids(column.data, starts, lengths))
        for where, starts, lengths in column.widths()
    ]


def compact_gathered(column, classes):
    """:meth:`Ids.compact` of ``column`` from its :func:`gather_classes`: the non-zero bytes of
    the fixed-width ids, in row order (ids hold no NUL byte), a byte of work per gathered byte
    instead of two per byte of the block; ids all of one length, a strided copy.
    """
    if len(classes) != 1 or classes[0][0] is not None:
        return column.compact()
    _, lengths, fields = classes[0]
    raw = fields.view(np.uint8)
    offsets = np.zeros(lengths.size + 1, dtype=np.int64 if fields.nbytes >= 2**32 else np.uint32)
    np.cumsum(lengths, out=offsets[1:])
    if lengths.size and lengths.min() == lengths.max():  # one length (ids of one pattern)
        width = int(lengths[0])
        return Ids(raw.reshape(lengths.size, -1)[:, :width].ravel(), offsets=offsets)
    return Ids(raw[raw != 0], offsets=offsets)


def _add_words(h, where, words):
    """Add to the hashes ``h`` (rows ``where``, None: all) the mixed words of a width class."""
    part = np.zeros(words.shape[0], dtype=np.uint64)
    x = np.empty_like(part)
    shifted = np.empty_like(part)
    for j in range(words.shape[1]):
        np.multiply(words[:, j], _position(j), out=x)
        np.right_shift(x, np.uint64(29), out=shifted)
        x ^= shifted
        x *= _M1
        part += x
    if where is None:
        h += part
    else:
        h[where] += part


def _position(j):
    """An odd 64-bit multiplier for word ``j`` of an id."""
    return np.uint64((0xC2B2AE3D27D4EB4F * (2 * j + 1) + 2 * j) % 2**64 | 1)


_HASH_ROWS = 1 << 20


def _words(column):
    """An id column (bytes, width a multiple of 8) as an (n, w/8) uint64 matrix (a view)."""
    column = np.ascontiguousarray(column)
    return column.view(np.uint64).reshape(column.shape[0], column.dtype.itemsize // 8)


def _same(query, rows, table, index, gathered):
    """Whether id ``rows[k]`` of ``query`` equals id ``index[k]`` of ``table``, byte for byte,
    column by column (``rows`` None: every query row in order); ``gathered``: the query
    columns' :func:`gather_classes`.
    """
    same = np.ones(np.size(index), dtype=bool)
    at = None
    if rows is not None:  # the position of each hit row among the hits
        at = np.full(len(query[0]), -1, dtype=np.intp)
        at[rows] = np.arange(rows.size)
    for classes_q, t in zip(gathered, table):
        ts, tl = t.spans(index)
        for where, ql, fields in classes_q:
            if at is None:
                k, sel = where, None
            else:
                k = at if where is None else at[where]
                sel = np.flatnonzero(k >= 0)
                k = k[sel]
            a = _words(fields if sel is None else fields[sel])
            length_q = ql if sel is None else ql[sel]
            length_t = tl if k is None else tl[k]
            ok = length_q == length_t
            check = None if ok.all() else np.flatnonzero(ok)  # None: all (no copies)
            if check is None or check.size:
                starts_t = ts if k is None else ts[k]
                if check is not None:
                    a, starts_t, length_t = a[check], starts_t[check], length_t[check]
                b = _words(gather_ids(t.data, starts_t, length_t))
                # a is as wide as b or wider: its extra words are zeros
                equal = a[:, 0] == b[:, 0]
                for j in range(1, b.shape[1]):
                    equal &= a[:, j] == b[:, j]
                ok = equal if check is None else _put(ok, check, equal)
            if k is None:
                same &= ok
            else:
                same[k] &= ok
    return same


def _put(out, where, values):
    """``out`` with ``values`` at ``where``."""
    out[where] = values
    return out


def _exact_keys(columns):
    """Rows of the id columns as one void (raw bytes) array: exact, slow comparisons."""
    n = columns[0].shape[0]
    raw = np.concatenate(
        [np.ascontiguousarray(c).view(np.uint8).reshape(n, c.dtype.itemsize) for c in columns],
        axis=1,
    )
    return np.ascontiguousarray(raw).view(f"V{raw.shape[1]}").ravel()


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
    raise duplicate_error(shown, what, first, second, lines)


def duplicate_error(shown, what, first, second, lines=None):
    """The error of a repeated ``what`` (``"trial (m, t)"``) in ``shown`` at rows ``first`` and
    ``second``: by their lines (``lines``, a LineMap), else by the rows (counted from 0).
    """
    if lines is not None:
        return ValueError(
            f"{shown}:{lines.line(second)}: duplicate {what}, first seen on line "
            f"{lines.line(first)}"
        )
    return ValueError(f"{shown}: duplicate {what}: rows {first} and {second} (counted from 0)")


def find_duplicate(columns):
    """Indices (first, second) of the earliest repeated row of the id columns, or None.

    ``second`` is the smallest index whose row occurred before; ``first`` that earlier row.
    """
    columns = [Ids.of(c) for c in columns]
    if len(columns[0]) < 2:
        return None
    h = hash_ids(*columns)
    s = np.sort(h)
    repeated = s[1:] == s[:-1]
    if not repeated.any():
        return None
    return _duplicate_among(columns, np.flatnonzero(np.isin(h, s[1:][repeated])))


def _duplicate_among(columns, suspects):
    """:func:`find_duplicate` among the rows ``suspects`` (sorted) of the columns."""
    keys = _exact_keys([c.array(suspects) for c in columns])
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
    columns : tuple of Ids or of bytes arrays, or None
        The id columns; None when they are on disk (``fetch`` gives the rows whose hashes
        collide, and lookups are checked later: :mod:`focal.io._spill`).
    n_query : int
        Rows of the largest query (the index bits are those of the larger count).
    hashes : ndarray of uint64, optional
        :func:`hash_ids` of the columns, when already computed (consumed: sorted in place).
    fetch : callable, optional
        ``fetch(rows)``: the id columns of those rows as bytes arrays (with ``columns`` None).
    """

    def __init__(self, columns, n_query=0, *, hashes=None, fetch=None):
        if columns is not None:
            columns = tuple(Ids.of(c) for c in columns)
            fetch = lambda rows: tuple(c.array(rows) for c in columns)  # noqa: E731
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
            self.shared_columns = fetch(self.shared_rows)

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

    def lookup(self, query, verify=True, gathered=None):
        """Row of the table holding each row of ``query`` (a tuple of :class:`Ids` or of
        bytes arrays), or -1; with ``verify`` False, the row its hash matched (its bytes are
        checked later, by the caller), except where hashes collide in the table (matched
        exactly here); ``gathered``: the query's :func:`gather_classes`, when made already.

        A query is gathered once, for its hashes and for checking its hits, at most
        :data:`_GATHER_ROWS` rows (a block's) at a time.
        """
        query = tuple(Ids.of(c) for c in query)
        nq = len(query[0])
        if nq == 0 or self.n == 0:
            return np.full(nq, -1, dtype=np.intp)
        if gathered is None and nq > _GATHER_ROWS:  # in slices: the temporaries stay small
            rows = [slice(i, i + _GATHER_ROWS) for i in range(0, nq, _GATHER_ROWS)]
            return np.concatenate([self.lookup([c.take(r) for c in query], verify) for r in rows])
        if gathered is None:
            gathered = [gather_classes(c) for c in query]
        high = hash_ids(*query, gathered=gathered)
        high &= ~self.mask
        out = self._find(high)
        hit = out >= 0
        if verify:
            rows = None if hit.all() else np.flatnonzero(hit)  # checked byte for byte, in order
            ok = _same(query, rows, self.columns, out if rows is None else out[rows], gathered)
            if not ok.all():
                out[np.flatnonzero(~ok) if rows is None else rows[~ok]] = -1
        if self.shared_rows is not None:  # a query whose high bits are shared: a hit
            candidates = np.flatnonzero(hit)
            at = np.searchsorted(self.shared_high, high[candidates])
            at = np.minimum(at, self.shared_high.size - 1)
            ambiguous = candidates[self.shared_high[at] == high[candidates]]
            if ambiguous.size:
                sub = _match_exact(tuple(c.array(ambiguous) for c in query), self.shared_columns)
                out[ambiguous] = np.where(sub >= 0, self.shared_rows[np.maximum(sub, 0)], -1)
        return out


#: Rows of a query gathered once as fixed-width ids (larger queries: hashed in slices)
_GATHER_ROWS = 1 << 20
#: Rows of a bucket compared by neighbouring reads (larger buckets: a binary search)
_WINDOW = 6
#: Directory buckets: 2^(index bits - _SPARSER), 1 to 2 rows each on average
_SPARSER = 1


def _row_type(n):
    return np.int32 if n < 2**31 else np.int64


def _index_bits(n):
    return max(1, int(max(n, 1) - 1).bit_length())


def match_ids(query, table):
    """For each row of ``query`` (tuple of id columns), its row in ``table``, or -1.

    ``table`` must not contain repeated rows. Exact: hash matches are verified byte for byte.
    """
    nq, nt = len(query[0]), len(table[0])
    if (
        nq == nt
        and all(isinstance(c, np.ndarray) for c in (*query, *table))
        and all(np.array_equal(q, t) for q, t in zip(query, table))
    ):
        return np.arange(nq)
    return HashTable(table, nq).lookup(query)


def _match_exact(query, table):
    """Row of ``table`` holding each row of ``query`` (bytes arrays), or -1: exact keys sorted
    and searched (the few rows whose hashes collide).
    """
    widths = [max(q.dtype.itemsize, t.dtype.itemsize) for q, t in zip(query, table)]
    kq = _exact_keys([q.astype(f"S{w}") for q, w in zip(query, widths)])
    kt = _exact_keys([t.astype(f"S{w}") for t, w in zip(table, widths)])
    order = np.argsort(kt, kind="stable")
    sorted_k = kt[order]
    if sorted_k.size == 0:
        return np.full(kq.size, -1)
    pos = np.minimum(np.searchsorted(sorted_k, kq), sorted_k.size - 1)
    hit = sorted_k[pos] == kq
    return np.where(hit, order[pos], -1)


def check_matched(
    where, n_table, label, reference_name, noun, what, sample_reference, sample_table
):
    """Raise ValueError when a table row is matched by no reference row, or a reference row
    has no match (in that order, as the join of binary files reports them).

    ``where`` is :func:`match_ids`'s answer for the reference rows in a table of ``n_table``
    rows; the message gives the count and the first ids (``sample_*`` format a few indices).
    """
    used = np.zeros(n_table, dtype=bool)
    used[where[where >= 0]] = True
    if not used.all():
        extra = np.flatnonzero(~used)
        raise ValueError(
            f"{label}: {extra.size} scored {noun}(s) are not in the {reference_name}, e.g. "
            f"{sample_table(extra)}; use missing='drop' (focal: --missing drop) to skip them"
        )
    absent = np.flatnonzero(where < 0)
    if absent.size:
        raise ValueError(
            f"{label}: {absent.size} {noun}(s) of the {reference_name} have no {what}, e.g. "
            f"{sample_reference(absent)}; use missing='drop' (focal: --missing drop) to skip "
            "them"
        )
