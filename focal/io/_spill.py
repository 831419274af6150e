"""A key's ids kept on disk while score files are joined with it: the join of files.

Joining files (``focal evaluate``, ``focal train``, :func:`focal.io.engine.read_aligned`) holds the
key's labels, line numbers and hash table in memory and writes its ids, block by block, to a
temporary file (:class:`SpilledIds`). While a score file is streamed, each trial its hash matches
to a key row is recorded (the row, its line, its score and its ids) in one of several temporary
files by key row range (:class:`Matches`); once the files are read, each range is checked at once,
byte for byte, against the key's ids of the range, read back in order (once for all the files of
the join). A trial whose bytes differ from those of the row its hash found is not in the key (rows
whose hashes collide with each other are matched exactly as the table is built:
:class:`focal.io._ids.HashTable`); a row matched by two equal trials is a repeated trial, found
once the files are read. So the answer never depends on the hash, and there is no other join to
fall back on. Each temporary file is written :data:`SPOOL_BYTES` at a time (a file's share of them
for the range files): a small join never touches the disk; ``TMPDIR`` says where the files go.

Memory is the key's hashes (8 bytes per trial), labels and line map, a score column per file
and a few ranges of ids (16 MiB each) at a time, whatever the ids' lengths; the disk holds the
key's ids and the matched trials of the files being joined (about 100 bytes per trial and file
with 29-byte ids).

What keeps it (a key of 10^7 VoxCeleb-style trials, 29-byte ids, read and joined with one score
file in another order, 2 cores, whole processes, median of 3): peak 390 MiB with the ids
spilled, 941 MiB with them held in memory (59 % less), for 1.29x the CPU (19.9 s against
14.1 s) and 1.31x the wall time (12.6 s against 8.8 s); the one join is the spilled one when it
saves at least 25 % of peak memory. ``focal evaluate`` on ``benchmarks/bench_evaluate.py`` at
10^7 trials: 0.99x (VoxCeleb-style ids) and 0.92x (short ids) the median wall time of a polars
script that only reads and joins the two files, at 558 and 559 MiB against its 5,068 and
3,019 MiB; ``focal train`` (three score files): 0.98x and 0.80x, at 636 and 652 MiB.
"""

from __future__ import annotations

import contextlib
import errno
import tempfile

import numpy as np

from .._text.fields import Ids
from .._text.pool import in_order
from ._ids import _words, gather_classes

__all__ = ["Matches", "SpilledIds"]

#: Bytes of key ids checked at a time (one key row range)
RANGE_BYTES = 16 << 20
#: Range files of a join at most (open at once while its score files are read)
MAX_RANGES = 512
#: Bytes held in memory before each write to a temporary file (the first makes it): for the
#: key's ids, and for all the range files of a join (a small join never touches the disk)
SPOOL_BYTES = 16 << 20


@contextlib.contextmanager
def _writing():
    """A temporary file that cannot be written (a full disk, a file size limit) named as such."""
    try:
        yield
    except OSError as exc:
        raise OSError(
            exc.errno or errno.EIO,
            f"cannot write the temporary files of the join ({exc.strerror}); set TMPDIR to a "
            f"folder with room",
            tempfile.gettempdir(),
        ) from exc


class _Spool:
    """Arrays written one after the other, held in memory up to ``budget`` bytes, then in a
    temporary file (deleted once closed) written ``budget`` bytes at a time, read back by
    offset or whole.

    Writing in batches: each write lets the worker threads take the GIL, and the calling thread
    waits up to a switch interval to get it back; a join of 3x10^6 VoxCeleb-style trials x 3
    files wrote its range files in 13,731 writes, 1.25 s of its calling thread's wall time.
    """

    def __init__(self, budget):
        self.budget, self.size, self.parts, self.file = budget, 0, {}, None
        self.held = 0  # bytes of parts not written to the file yet

    def write(self, data):
        """Append ``data`` (a C-contiguous array, kept as it is until written); its offset."""
        at = self.size
        self.parts[at] = data
        self.size += data.nbytes
        self.held += data.nbytes
        if self.held > self.budget:
            self._flush()
        return at

    def _flush(self):
        with _writing():
            if self.file is None:
                self.file = tempfile.TemporaryFile(prefix="focal-join-")
            parts = [p.reshape(-1).view(np.uint8) for p in self.parts.values()]
            if parts:
                self.file.write(np.concatenate(parts) if len(parts) > 1 else parts[0])
                self.file.flush()
        self.parts, self.held = {}, 0

    def read(self, offset, nbytes):
        """The ``nbytes`` bytes written at ``offset`` by one :meth:`write` (uint8)."""
        if self.file is None:
            return self.parts[offset].reshape(-1).view(np.uint8)
        self._flush()
        self.file.seek(offset)
        return np.fromfile(self.file, dtype=np.uint8, count=nbytes)

    def content(self, dtype):
        """Everything written, as one array of ``dtype``."""
        if self.file is None:
            parts = [p.reshape(-1).view(np.uint8) for p in self.parts.values()]
            return np.concatenate(parts).view(dtype) if parts else np.empty(0, dtype)
        self._flush()
        self.file.seek(0)
        return np.fromfile(self.file, dtype=dtype)

    def close(self):
        """Forget the arrays, delete the file."""
        if self.file is not None:
            self.file.close()
        self.parts, self.file, self.held = {}, None, 0


def _lengths(ids):
    return np.diff(ids.offsets).astype(np.uint32)


def _from_lengths(data, lengths):
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return Ids(data, offsets=offsets)


class SpilledIds:
    """Two id columns (models, tests) written block by block to a temporary file (each block:
    the lengths of its ids, then their bytes), read back by row range or by rows.

    In memory: a few numbers per block, and up to :data:`SPOOL_BYTES` not written yet.
    """

    def __init__(self):
        self._file = _Spool(SPOOL_BYTES)
        self._blocks = []  # (first row, rows, offset in the file, model bytes, test bytes)
        self._last = None  # the last block read back
        self.n = 0
        self.nbytes = 0

    def add(self, models, tests):
        """Append a block of ids (:class:`Ids` in the compact form, as many models as tests)."""
        n = len(models)
        (lm, dm), (lt, dt) = ((_lengths(c), c.data[: int(c.offsets[-1])]) for c in (models, tests))
        block = np.concatenate([lm.view(np.uint8), lt.view(np.uint8), dm, dt])
        self._blocks.append((self.n, n, self._file.write(block), dm.size, dt.size))
        self.n += n
        self.nbytes += block.size

    def finish(self):
        """Stop writing: the ids can now be read back."""
        self._starts = np.array([b[0] for b in self._blocks] + [self.n], dtype=np.int64)

    def close(self):
        """Delete the file."""
        self._file.close()
        self._last = None

    def _block(self, b):
        if self._last is None or self._last[0] != b:
            first, n, offset, nm, nt = self._blocks[b]
            raw = self._file.read(offset, 8 * n + nm + nt)
            lm, lt = raw[: 4 * n].view(np.uint32), raw[4 * n : 8 * n].view(np.uint32)
            m, t = _from_lengths(raw[8 * n : 8 * n + nm], lm), _from_lengths(raw[8 * n + nm :], lt)
            self._last = (b, first, m, t)
        return self._last[1:]

    def rows(self, lo, hi):
        """The ids of the rows ``lo:hi``, as ``(models, tests)`` in the compact form (the
        last block read is kept: ranges read in order read each block once).
        """
        models, tests = [], []
        b = int(np.searchsorted(self._starts, lo, side="right")) - 1
        if self._starts[b] == lo and self._starts[b + 1] == hi:  # one whole block: no copy
            return self._block(b)[1:]
        while b < len(self._blocks) and self._starts[b] < hi:
            first, m, t = self._block(b)
            a, z = max(lo, first) - first, min(hi, int(self._starts[b + 1])) - first
            for column, ids in ((models, m), (tests, t)):
                o = ids.offsets
                column.append(Ids(ids.data[o[a] : o[z]], offsets=o[a : z + 1] - o[a]))
            b += 1
        return Ids.concat(models), Ids.concat(tests)

    def take(self, rows):
        """The ids of ``rows`` (an index array), as ``(models, tests)`` fixed-width arrays."""
        rows = np.asarray(rows, dtype=np.int64)
        blocks = np.searchsorted(self._starts, rows, side="right") - 1
        out = [[b""] * rows.size, [b""] * rows.size]
        for b in np.unique(blocks):
            first, *ids = self._block(int(b))
            for k in np.flatnonzero(blocks == b):
                for column, c in zip(out, ids):
                    column[k] = c[int(rows[k]) - first]
        width = max((len(i) for column in out for i in column), default=1)
        return tuple(np.array(column, dtype=f"S{width}") for column in out)


class Matches:
    """The score trials the hashes of one or more score files matched to key rows, written by
    key row range to temporary files, then checked byte for byte against the key's
    :class:`SpilledIds`, a range at a time, their scores put in place (writes that stay in the
    cache). The files of a join are checked together: each key range is read back and gathered
    once for all of them (``focal train`` at 3x10^6 VoxCeleb-style trials x 3 files: a third of
    the checking CPU).

    A match is four uint64 numbers (the key row, the line, the score, the two ids' lengths) and
    each id as the fixed-width words its width class was gathered at to be hashed
    (:func:`focal.io._ids.gather_classes`); the matches of a block and pair of width classes
    are written to each range as one chunk (its count, widths and score file, the numbers, the
    ids).

    Parameters
    ----------
    key : SpilledIds
        The key's ids.
    """

    def __init__(self, key):
        self.key = key
        per_row = 32 + max(16, key.nbytes // max(key.n, 1))  # a record's bytes, about
        shift = max(0, int(max(1, RANGE_BYTES // per_row)).bit_length() - 1)
        while (key.n >> shift) >= MAX_RANGES:
            shift += 1
        self.shift = shift
        self.n_ranges = max(1, -(-key.n // (1 << shift)))
        self._files = [None] * self.n_ranges

    def pack(self, rows, lines, scores, gathered, source):
        """The records of a block's matches ``rows`` (key rows, -1: none), as the chunks to
        append to their range files (in a worker thread: no file touched); ``gathered``: the
        block's :func:`~focal.io._ids.gather_classes` of models and tests; ``source``: the
        index of its score file (its column of the join).

        Returns
        -------
        list of (int, ndarray of uint64)
            A range and its chunk, per range and pair of width classes: the count, the id
            widths (in words) and ``source``, then the records' numbers (row, line, score,
            lengths) and their ids' words.
        """
        hit = np.flatnonzero(rows >= 0)
        ranges = (rows[hit] >> self.shift).astype(np.uint16)  # MAX_RANGES < 2^16
        order = hit[np.argsort(ranges, kind="stable")]  # a radix sort of 16-bit numbers
        where = None  # one width class per column (the common case): one group
        groups = [order]
        if any(len(classes) > 1 for classes in gathered):
            where = [_class_of_rows(rows.size, classes) for classes in gathered]
            pair = where[0][0][order] * 64 + where[1][0][order]
            groups = [order[pair == g] for g in np.unique(pair)]
        out = []
        for sel in groups:
            columns = []
            for c, classes in enumerate(gathered):
                if where is None:
                    (_, lengths, fields), at = classes[0], sel
                else:
                    cls, pos = where[c]
                    (_, lengths, fields), at = classes[int(cls[sel[0]])], pos[sel]
                columns.append((lengths[at], _words(fields).take(at, axis=0)))
            (lm, wm), (lt, wt) = columns
            numbers = np.empty((sel.size, 4), dtype=np.uint64)
            numbers[:, 0] = rows[sel]
            numbers[:, 1] = np.asarray(lines)[sel]
            numbers[:, 2] = np.asarray(scores, dtype=np.float64)[sel].view(np.uint64)
            numbers[:, 3] = lm.astype(np.uint64) | (lt.astype(np.uint64) << np.uint64(32))
            counts = np.bincount(rows[sel] >> self.shift, minlength=self.n_ranges)
            end = 0
            for p in np.flatnonzero(counts):
                start, end = end, end + int(counts[p])
                head = np.array([end - start, wm.shape[1], wt.shape[1], source], dtype=np.uint64)
                parts = (part[start:end].ravel() for part in (numbers, wm, wt))
                out.append((int(p), np.concatenate([head, *parts])))
        return out

    def write(self, packed):
        """Append the chunks of a block packed by :meth:`pack` to their range files."""
        for p, chunk in packed:
            if self._files[p] is None:
                self._files[p] = _Spool(SPOOL_BYTES // self.n_ranges)
            self._files[p].write(chunk)

    def close(self):
        """Delete the range files."""
        for f in self._files:
            if f is not None:
                f.close()
        self._files = [None] * self.n_ranges

    def _read(self, p):
        """The matches of range ``p``: ``(source, numbers, models, tests)`` per score file and
        pair of id widths, the ids as fixed-width bytes arrays.
        """
        raw = self._files[p].content(np.uint64)
        self._files[p].close()
        self._files[p] = None
        groups, at = {}, 4
        while at <= raw.size:
            k, wm, wt, source = (int(v) for v in raw[at - 4 : at])
            parts = groups.setdefault((source, wm, wt), ([], [], []))
            for part, width in zip(parts, (4, wm, wt)):
                part.append(raw[at : at + k * width])
                at += k * width
            at += 4
        out = []
        for (source, wm, wt), parts in groups.items():
            numbers, models, tests = (np.concatenate(p) for p in parts)
            out.append(
                (
                    source,
                    numbers.reshape(-1, 4),
                    models.view(f"S{8 * wm}"),
                    tests.view(f"S{8 * wt}"),
                )
            )
        return out

    def check(self, values, executor=None):
        """Check every range (its file deleted once read), putting the scores of the matches
        that hold in ``values`` (indexed by key row and score file); each range checked in
        ``executor`` while the calling thread reads the next
        (:func:`focal._text.pool.in_order`).

        Returns
        -------
        dict
            For each score file with matches (by its index): ``(absent, repeat)``. ``absent``:
            the trials whose bytes differ from the key row their hash matched (not in the
            key), as ``(models, tests, lines)`` (fixed-width bytes arrays and line numbers),
            or None. ``repeat``: ``(line, model, test)`` of the earliest second match of a key
            row, or None.
        """

        def ranges():  # the key's ids read here (one file); a range's matches by its worker
            for p in range(self.n_ranges):
                if self._files[p] is not None:
                    lo = p << self.shift
                    hi = min(self.key.n, lo + (1 << self.shift))
                    yield lo, p, self.key.rows(lo, hi)

        def checked(item):
            lo, p, key = item
            key = [(ids.spans()[1], gather_classes(ids)) for ids in key]  # in order: no misses
            absent, kept = {}, {}
            for source, numbers, models, tests in self._read(p):
                index = numbers[:, 0].view(np.int64) - lo
                lengths = numbers[:, 3] & np.uint64(0xFFFFFFFF), numbers[:, 3] >> np.uint64(32)
                same = np.ones(index.size, dtype=bool)
                for column, length, (key_lengths, classes) in zip((models, tests), lengths, key):
                    same &= _equal(index, length, _words(column), key_lengths, classes)
                if not same.all():
                    wrong = ~same
                    absent.setdefault(source, []).append(
                        (models[wrong], tests[wrong], numbers[wrong, 1])
                    )
                    numbers, index = numbers[same], index[same]
                    models, tests = models[same], tests[same]
                values[lo + index, source] = numbers[:, 2].view(np.float64)  # this range only
                kept.setdefault(source, []).append(
                    (index, numbers[:, 1].view(np.int64), models, tests)
                )
            return absent, {source: _repeat(k) for source, k in kept.items()}

        absent, repeat = {}, {}
        try:
            for wrong, twice in in_order(checked, ranges(), executor, depth=2):
                for source, found in wrong.items():
                    absent.setdefault(source, []).extend(found)
                for source, found in twice.items():
                    if found is not None and (
                        repeat.get(source) is None or found[0] < repeat[source][0]
                    ):
                        repeat[source] = found
        finally:
            self.close()
        return {s: (_stacked(absent.get(s)), repeat.get(s)) for s in {*absent, *repeat}}


def _stacked(absent):
    """``(models, tests, lines)`` of lists of them, the ids at one width; None for none."""
    if not absent:
        return None
    models, tests, lines = zip(*absent)
    width = max(m.dtype.itemsize for m in models), max(t.dtype.itemsize for t in tests)
    return (
        np.concatenate([m.astype(f"S{width[0]}") for m in models]),
        np.concatenate([t.astype(f"S{width[1]}") for t in tests]),
        np.concatenate(lines).view(np.int64),
    )


def _equal(index, lengths, words, key_lengths, classes):
    """Whether each id (``lengths``, fixed-width ``words``) equals the key's id at row
    ``index``; the key's ids as :func:`~focal.io._ids.gather_classes` gave them (``classes``)
    and their ``key_lengths``.

    Ids of one length are of one width class, each gathered at a width of its class, zero
    beyond its length: the words both hold are compared.
    """
    same = key_lengths[index] == lengths
    if len(classes) > 1:
        cls, pos = _class_of_rows(key_lengths.size, classes)
    for c, (_, _, fields) in enumerate(classes):
        rows = (
            np.flatnonzero(same) if len(classes) == 1 else np.flatnonzero(same & (cls[index] == c))
        )
        if not rows.size:
            continue
        key_rows = index[rows] if len(classes) == 1 else pos[index[rows]]
        theirs = _words(fields).take(key_rows, axis=0)
        ours = words if rows.size == index.size else words.take(rows, axis=0)
        equal = ours[:, 0] == theirs[:, 0]
        for j in range(1, min(ours.shape[1], theirs.shape[1])):
            equal &= ours[:, j] == theirs[:, j]
        same[rows] = equal
    return same


def _repeat(kept):
    """``(line, model, test)`` of the earliest second match of a key row among the checked
    matches ``kept`` (``(index, lines, models, tests)`` per group), or None.
    """
    index = np.concatenate([k[0] for k in kept])
    if not index.size or np.bincount(index).max() < 2:
        return None
    lines = np.concatenate([k[1] for k in kept])
    order = np.lexsort((lines, index))
    twice = np.flatnonzero(index[order][1:] == index[order][:-1]) + 1
    i = int(order[twice[np.argmin(lines[order][twice])]])
    sizes = np.cumsum([k[0].size for k in kept])
    g = int(np.searchsorted(sizes, i, side="right"))
    j = i - (int(sizes[g - 1]) if g else 0)
    return int(lines[i]), kept[g][2][j], kept[g][3][j]


def _class_of_rows(n, classes):
    """For each of ``n`` rows, its width class (index into ``classes``) and its position there."""
    cls = np.zeros(n, dtype=np.int64)
    pos = np.arange(n)
    for c, (where, _, _) in enumerate(classes):
        if where is not None:
            cls[where] = c
            pos[where] = np.arange(where.size)
    return cls, pos
