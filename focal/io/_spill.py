"""Trial ids kept on disk while a key is joined with score files by hash (``focal evaluate``,
``focal train``), so that neither file's ids are held in memory whole.

A key read for such a join (:class:`SpilledKey`) keeps its labels, line numbers and hash
table in memory; its ids are written, block by block, to a temporary file in key order
(:class:`IdSpill`); while a score file is streamed, each trial matched by its hash is written
with the key row it matched to one of several files, by key row range (:class:`MatchSpill`).
Then each range is checked at once: the key's ids of the range (read in sequence) against the
score file's ids matched to it, byte for byte. Memory is one range of ids, however large the
files; the disk holds the ids once per file (as a database's partitioned hash join spills).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._text.blocks import BLOCK_BYTES, _too_wide
from .._text.fields import LineMap, ids_text
from .._text.source import display_name
from ._ids import HashTable, _words, as_id_array, hash_ids
from ._prefetch import prefetch

__all__ = ["Growing", "IdSpill", "MatchSpill", "SpilledKey", "Unverified"]

#: Bytes of ids checked at a time (one key row range)
RANGE_BYTES = 16 << 20
#: Bytes buffered per range file while matches are recorded (at most), and for all the range
#: files of a score file (the buffers shrink when the ranges are many)
WRITE_BUFFER = 256 << 10
WRITE_BUFFERS = 32 << 20
#: Range files open at once in a process (files read at once are limited accordingly)
OPEN_RANGE_FILES = 768


class Growing:
    """A 1-D array appended to block by block (capacity doubled as needed; the unused tail
    of a large array takes no memory until written).
    """

    def __init__(self, dtype, capacity=1 << 20):
        self.array = np.empty(capacity, dtype=dtype)
        self.n = 0

    def add(self, values):
        """Append ``values`` (1-D)."""
        need = self.n + values.shape[0]
        if need > self.array.shape[0]:
            grown = np.empty(max(need, 2 * self.array.shape[0]), dtype=self.array.dtype)
            grown[: self.n] = self.array[: self.n]
            self.array = grown
        self.array[self.n : need] = values
        self.n = need

    def result(self):
        """The values appended, as one array (a copy only when much capacity is unused)."""
        out = self.array[: self.n]
        if self.n < self.array.shape[0] // 2:
            out = out.copy()
        self.array = np.empty(0, dtype=self.array.dtype)
        return out


def _widen(ids, width):
    return ids if ids.dtype.itemsize == width else ids.astype(f"S{width}")


class IdSpill:
    """Two id columns (models, tests) written block by block to ``path``, each block at its
    own widths, and read back by row range or by rows at the widest widths.
    """

    def __init__(self, path):
        self.path = path
        self._file = open(path, "wb")  # noqa: SIM115 (closed by finish / close)
        self._starts = [0]  # first row of each block, then the row count
        self._blocks = []  # (offset, wm, wt) of each block
        self._offset = 0
        self.widths = (8, 8)

    def add(self, models, tests):
        """Append one block of ids (bytes arrays of one length)."""
        n = models.shape[0]
        models, tests = np.ascontiguousarray(models), np.ascontiguousarray(tests)
        wm, wt = models.dtype.itemsize, tests.dtype.itemsize
        self._file.write(memoryview(models.view(np.uint8)))
        self._file.write(memoryview(tests.view(np.uint8)))
        self._blocks.append((self._offset, wm, wt))
        self._offset += n * (wm + wt)
        self._starts.append(self._starts[-1] + n)
        self.widths = (max(self.widths[0], wm), max(self.widths[1], wt))

    def finish(self):
        """Stop writing; the ids can now be read back."""
        self._file.close()
        self._starts = np.asarray(self._starts, dtype=np.int64)

    def __len__(self):
        return int(self._starts[-1])

    @property
    def nbytes(self):
        """Bytes written (each block at its own widths)."""
        return self._offset

    def _read(self, handle, b, lo, hi):
        """Rows ``lo:hi`` (within block ``b``) of both columns, at the block's widths."""
        offset, wm, wt = self._blocks[b]
        start, n = int(self._starts[b]), int(self._starts[b + 1] - self._starts[b])
        out = []
        for base, w in ((offset, wm), (offset + n * wm, wt)):
            handle.seek(base + (lo - start) * w)
            out.append(np.frombuffer(handle.read((hi - lo) * w), dtype=f"S{w}"))
        return out

    def rows(self, lo, hi):
        """Rows ``lo:hi`` as (models, tests) at the widest widths (read in place: a block at
        the widest widths straight into the result, the others widened).
        """
        hi = max(lo, min(hi, len(self)))
        out = [np.empty(hi - lo, dtype=f"S{w}") for w in self.widths]
        b = int(np.searchsorted(self._starts, lo, side="right")) - 1
        with open(self.path, "rb") as handle:
            while b < len(self._blocks) and self._starts[b] < hi:
                offset, *widths = self._blocks[b]
                start, n = int(self._starts[b]), int(self._starts[b + 1] - self._starts[b])
                a, z = max(lo, start), min(hi, start + n)
                for column, w, base in zip(out, widths, (offset, offset + n * widths[0])):
                    handle.seek(base + (a - start) * w)
                    part = column[a - lo : z - lo]
                    if w == column.dtype.itemsize:
                        handle.readinto(memoryview(part.view(np.uint8)))
                    else:
                        part[:] = np.frombuffer(handle.read((z - a) * w), dtype=f"S{w}")
                b += 1
        return out[0], out[1]

    def take(self, rows):
        """The ids of ``rows`` (sorted) as (models, tests) at the widest widths."""
        rows = np.asarray(rows, dtype=np.int64)
        blocks = np.searchsorted(self._starts, rows, side="right") - 1
        models = np.empty(rows.size, dtype=f"S{self.widths[0]}")
        tests = np.empty(rows.size, dtype=f"S{self.widths[1]}")
        with open(self.path, "rb") as handle:
            for b in np.unique(blocks):
                sel = np.flatnonzero(blocks == b)
                start = int(self._starts[b])
                m, t = self._read(handle, int(b), start, int(self._starts[b + 1]))
                models[sel] = m[rows[sel] - start]
                tests[sel] = t[rows[sel] - start]
        return models, tests


class MatchSpill:
    """Score trials matched to key rows by hash: ``(row, model, test, score)`` records
    written to one file per key row range, then checked byte for byte against the key's
    :class:`IdSpill`, a range at a time, and their scores put in place (a range of rows at a
    time: writes that stay in the cache, where each trial put in place as it is read is a
    cache miss). A key row matched twice fails the check too (a trial repeated in the score
    file, or a hash collision): the caller redoes the join exactly, and reports the repeat
    with its line.
    """

    def __init__(self, folder, name, key):
        self.key = key
        self.words = tuple(w // 8 for w in key.widths)  # ids of the key: whole 8-byte words
        self.width = 2 + sum(self.words)  # row, model and test words, score
        per_range = max(1, RANGE_BYTES // (8 * self.width))
        self.shift = max(0, int(per_range).bit_length() - 1)
        self.n_ranges = max(1, -(-len(key) // (1 << self.shift)))
        self.paths = [os.path.join(folder, f"{name}.{p}") for p in range(self.n_ranges)]
        self._files = [None] * self.n_ranges
        self._buffering = int(min(WRITE_BUFFER, max(8192, WRITE_BUFFERS // self.n_ranges)))
        self._buffer = np.empty((0, self.width), dtype=np.uint64)

    def add(self, rows, models, tests, scores=None):
        """Record the matches ``rows`` (key rows) of these score ids (and their scores);
        False when an id is wider than every key id of its column (a hash collision: it
        matches nothing).
        """
        ranges = rows >> self.shift
        ranges = ranges.astype(np.uint16 if self.n_ranges <= 1 << 16 else np.int64)
        order = np.argsort(ranges, kind="stable")  # a radix sort of 16-bit range numbers
        counts = np.bincount(ranges, minlength=self.n_ranges)
        if self._buffer.shape[0] < rows.size:  # reused: no page faults for each block
            self._buffer = np.empty((rows.size, self.width), dtype=np.uint64)
        records = self._buffer[: rows.size]
        records[:, 0] = rows.take(order)
        at = 1
        for ids, words in zip((models, tests), self.words):
            given = _words(as_id_array(ids))
            if given.shape[1] > words:
                if given[:, words:].any():
                    return False
                given = given[:, :words]  # only zero padding cut
            if given.shape[1] == words:  # the id as one field: a copy per row, not per word
                field = records[:, at : at + words].view(f"V{8 * words}")[:, 0]
                field[:] = given.view(f"V{8 * words}")[:, 0].take(order)
            else:
                records[:, at : at + given.shape[1]] = given.take(order, axis=0)
                records[:, at + given.shape[1] : at + words] = 0
            at += words
        if scores is None:
            records[:, -1] = 0
        else:
            records[:, -1] = np.asarray(scores, dtype=np.float64).take(order).view(np.uint64)
        end = 0
        for p in np.flatnonzero(counts):
            start, end = end, end + int(counts[p])
            if self._files[p] is None:
                self._files[p] = open(self.paths[p], "wb", buffering=self._buffering)  # noqa: SIM115
            self._files[p].write(memoryview(records[start:end]).cast("B"))
        return True

    def check(self, values=None):
        """Whether every recorded match holds byte for byte, each key row matched at most
        once (files removed as checked); the scores recorded are put in ``values`` (indexed
        by key row) as their range is checked.
        """
        self.close()
        self._buffer = np.empty((0, self.width), dtype=np.uint64)
        ok = True
        wm = self.words[0]
        for p, path in enumerate(self.paths):
            if not os.path.exists(path):
                continue
            if ok:
                records = np.fromfile(path, dtype=np.uint64).reshape(-1, self.width)
                lo = p << self.shift
                hi = min(len(self.key), lo + (1 << self.shift))
                models, tests = self.key.rows(lo, hi)
                index = records[:, 0].view(np.int64) - lo
                ok = (
                    not (np.bincount(index, minlength=hi - lo) > 1).any()
                    and np.array_equal(records[:, 1 : 1 + wm], _words(models).take(index, axis=0))
                    and np.array_equal(records[:, 1 + wm : -1], _words(tests).take(index, axis=0))
                )
                if values is not None:
                    values[lo:hi][index] = records[:, -1].view(np.float64)
                del records, models, tests, index
            os.remove(path)
        return ok

    def close(self):
        """Close the range files (kept on disk)."""
        for f in self._files:
            if f is not None:
                f.close()
        self._files = [None] * self.n_ranges


class Unverified(Exception):
    """A join by hash that its byte-for-byte check could not confirm (a hash collision, or a
    trial that looks repeated): the caller redoes it with the key's ids in memory.
    """


class SpilledKey:
    """A key read for a join by hash: its labels, line numbers and hash table in memory, its
    ids in a temporary file (:class:`focal.io._spill.IdSpill`).

    Same errors as :func:`focal.io.read_key` (a repeated trial is found among the rows whose
    hashes collide, from their bytes); the blocks are parsed in ``executor`` while the calling
    thread hashes and writes the previous one.
    """

    def __init__(self, path, folder, *, format=None, pos_label=None, block_bytes=BLOCK_BYTES):
        from .binary import _check_pos_label, _pieces
        from .formats import key_layout

        self.path = display_name(path)
        self.folder = folder
        self.spill = IdSpill(os.path.join(folder, "key"))
        hashes, labels = Growing(np.uint64), Growing(bool)
        self.lines = LineMap()
        n = 0
        with ThreadPoolExecutor(max_workers=1) as executor:
            pieces = _pieces(
                os.fspath(path), key_layout(format), ("label",), block_bytes, pos_label
            )
            for (models, tests), values, lines in prefetch(pieces, executor):
                hashes.add(hash_ids(models, tests))
                labels.add(values["label"])
                self.spill.add(models, tests)
                self.lines.add(n, lines)
                n += len(lines)
        self.spill.finish()
        if n == 0:
            raise ValueError(f"{self.path}: no trials found")
        if _too_wide(n * sum(self.spill.widths), self.spill.nbytes):
            raise Unverified  # a few very long ids: refused by the reader of the whole key
        self.labels = labels.result()
        self.table = HashTable(None, hashes=hashes.result(), fetch=self.spill.take)
        dup = self.table.duplicate()
        if dup is not None:
            first, second = dup
            models, tests = self.spill.take([second])
            raise ValueError(
                f"{self.path}:{self.lines.line(second)}: duplicate trial "
                f"({ids_text(models[0])}, {ids_text(tests[0])}), "
                f"first seen on line {self.lines.line(first)}"
            )
        _check_pos_label(self, pos_label)

    def __len__(self):
        return self.labels.shape[0]

    def ids(self, keep=None):
        """The key's (models, tests), of the rows ``keep`` (a mask) if given."""
        models, tests = self.spill.rows(0, len(self))
        return (models, tests) if keep is None else (models[keep], tests[keep])
