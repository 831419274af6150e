"""Streaming: apply a per-trial transform to score files larger than memory.

A production back-end scores one trial list with every system, so the systems' files list the
same trials in the same order. :func:`iter_score_chunks` reads them side by side, a chunk of
trials at a time (:func:`stream`, over the file engine's block reader
:func:`focal.io.engine.pieces`), checks chunk by chunk that every file has the same trial ids on
the same record, and yields :class:`ScoreChunk` objects: the trial ids and ``X`` of shape
``(chunk, n_systems)`` (binary) or ``(chunk, n_systems * n_classes)`` (multiclass: the systems'
blocks side by side); memory is bounded by the chunk and block sizes, not by the files.
:func:`focal.workflows.apply_to_files` runs a transform on each chunk and writes the result.

When the files do not list the same trials in the same order, the default is a ``ValueError``
naming both files, the lines and the trial ids. ``on_mismatch="align"`` is the documented
fallback: the files are read whole and aligned on the trial ids (memory then grows with the
files; trials missing from some file follow the ``missing`` policy).

References
----------
.. [1] :cite:t:`albayzin2012plan` ("Albayzin plan").
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

from .._text.blocks import BLOCK_BYTES
from .._text.fields import Ids, ids_text
from .._text.pool import in_order, worker_pool
from ._multiclass_align import align_multiclass_scores
from ._records import Records, same_ids
from .engine import check_missing, join, kept_rows, pieces, read_columns
from .formats import score_layout
from .multiclass import _MulticlassReader

__all__ = ["FileLayout", "ScoreChunk", "iter_score_chunks", "stream"]

_KINDS = ("binary", "albayzin", "multiclass")
_READER_KIND = {"albayzin": "albayzin", "multiclass": "generic", "auto": "auto"}


class ScoreChunk:
    """One chunk of aligned trials.

    Attributes
    ----------
    ids : tuple of ndarray of bytes
        ``(models, tests)`` for binary files, ``(segments,)`` for multiclass ones.
    X : ndarray of float64, shape (n, n_columns)
    lines : ndarray of int or None
        Line numbers of the rows in the first file (None when the files were read whole and
        aligned, ``on_mismatch="align"``).
    records : Records or None
        The first file's records as read (:mod:`focal.io._records`), when asked for
        (``records=True``) and the file is text.
    """

    __slots__ = ("X", "_ids", "lines", "records")

    def __init__(self, ids, X, lines, records=None):
        self._ids, self.X, self.lines, self.records = ids, X, lines, records

    @property
    def ids(self):
        """The trial ids as a tuple of fixed-width bytes arrays (made on first use when the
        chunk holds them as the text they were read from, :class:`focal.io._records.Records`).
        """
        self._ids = _arrays(self._ids)
        return self._ids

    def __len__(self):
        return self.X.shape[0]


class _Stream:
    """The records of one file, served in exact counts from its parsed blocks."""

    def __init__(self, path, pieces):
        self.path = path
        self._buffer = []  # [ids, values, lines] pieces not yet served
        self._buffered = 0
        self._done = False
        self._ahead = pieces  # the next blocks are parsed ahead, in the pool's workers

    def _pull(self):
        piece = next(self._ahead, None)
        if piece is None:
            self._done = True
            return
        ids, values, lines, *records = piece  # records: a file written back in its layout
        self._buffer.append([ids, values, lines, records[0] if records else None])
        self._buffered += values.shape[0]

    def peek_size(self):
        """Records available without reading further, reading one block if none is."""
        while not self._buffered and not self._done:
            self._pull()
        return self._buffered

    def take(self, n):
        """The next ``n`` records (fewer at the end of the file) as (ids, values, lines,
        records), or None at the end of the file.
        """
        while self._buffered < n and not self._done:
            self._pull()
        n = min(n, self._buffered)
        if n == 0:
            return None
        parts = []
        while n:
            ids, values, lines, records = self._buffer[0]
            k = values.shape[0]
            if k <= n:
                parts.append(self._buffer.pop(0))
                n -= k
                self._buffered -= k
            else:
                head, tail = slice(None, n), slice(n, None)
                parts.append([_slice(ids, head), values[:n], lines[:n], _slice(records, head)])
                self._buffer[0] = [_slice(ids, tail), values[n:], lines[n:], _slice(records, tail)]
                self._buffered -= n
                n = 0
        if len(parts) == 1:
            return parts[0]
        ids = _concat([p[0] for p in parts])
        records = None if parts[0][3] is None else Records.concat([p[3] for p in parts])
        values = np.concatenate([p[1] for p in parts])
        return ids, values, np.concatenate([p[2] for p in parts]), records


def _arrays(ids):
    """Ids as a tuple of fixed-width bytes arrays, whether given so, as
    :class:`~focal.io._records.Records` or as a tuple of :class:`~focal._text.fields.Ids`.
    """
    if isinstance(ids, Records):
        return ids.ids()
    return tuple(c.array() if isinstance(c, Ids) else c for c in ids)


def _slice(ids, where):
    """The records ``where`` (a slice) of a piece's ids (or records; None: None): a file's
    pieces hold :class:`~focal.io._records.Records` (text) or :class:`~focal._text.fields.Ids`
    (a table, a multiclass file), views of their buffers either way.
    """
    if ids is None or isinstance(ids, Records):
        return None if ids is None else ids[where]
    return tuple(c.take(where) for c in ids)


def _concat(parts):
    """The ids of a file's consecutive pieces (all Records, or all tuples of Ids) as one."""
    if isinstance(parts[0], Records):
        return Records.concat(parts)
    return tuple(Ids.concat([p[j].compact() for p in parts]) for j in range(len(parts[0])))


def _open_stream(path, kind, block_bytes, info, executor=None, layout=None, records=False):
    path = os.fspath(path)
    if kind == "binary":

        def scores(piece):
            ids, values, lines, *text = piece
            return (ids, values["score"][:, None], lines, *text)

        parts = pieces(
            path,
            score_layout(layout),
            text_ids=True,
            records=records,
            executor=executor,
            then=scores,
            block_bytes=block_bytes,
        )
        return _Stream(path, parts)
    reader = _MulticlassReader(path, block_bytes)
    stream = _Stream(path, reader.pieces(_READER_KIND[kind], executor))
    stream.peek_size()  # reads the first block: classes, task and condition are known
    if not hasattr(reader, "classes"):
        raise ValueError(f"{path}: no segments found")
    info.append(reader)
    return stream


def _check_kind(kind):
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {', '.join(_KINDS)}, got {kind!r}")


def _describe(ids, i):
    return (
        "(" + ", ".join(ids_text(c[i]) for c in ids) + ")"
        if len(ids) > 1
        else repr(ids_text(ids[0][i]))
    )


@contextlib.contextmanager
def stream(
    paths,
    *,
    kind="binary",
    on_mismatch="error",
    missing="error",
    block_bytes=BLOCK_BYTES,
    threads=None,
    format=None,
    records=False,
):
    """The systems' score files, streamed side by side or, with ``on_mismatch="align"``,
    joined on the trial ids with the first file (:func:`focal.io.engine.join`: the first file
    read whole, the others streamed against it); either way each file is parsed once and
    ``layouts`` is known before the first chunk.

    Parameters
    ----------
    paths : sequence of path-like
        One file per system.
    kind : {"binary", "albayzin", "multiclass", "auto"}
        The files' format (``"auto"``: multiclass files, each in the format its first record
        shows).
    on_mismatch : {"error", "align"}
        Files that do not list the same trials in the same order: an error, or joined.
    missing : {"error", "drop"}
        With ``on_mismatch="align"``: a trial absent from some file.
    block_bytes : int
        Bytes read at a time.
    threads : int, optional
        Worker threads (:func:`focal._text.pool.worker_pool`).
    format : str or Layout, optional
        Columns of binary files.
    records : bool
        Chunks of binary files carry the first file's records as read.

    Yields
    ------
    object
        With ``layouts`` (one :class:`FileLayout` per file), ``executor`` and
        ``chunks(chunk_size)`` (yielding :class:`focal.io.ScoreChunk`).
    """
    if on_mismatch not in ("error", "align"):
        raise ValueError(f"on_mismatch must be 'error' or 'align', got {on_mismatch!r}")
    check_missing(missing)
    paths = [os.fspath(p) for p in paths]
    with worker_pool(threads) as executor:
        if on_mismatch == "align":
            yield _WholeFiles(paths, kind, missing, format, executor, records)
        else:
            yield _OpenFiles(paths, kind, block_bytes, executor, format, records)


def iter_score_chunks(
    paths,
    *,
    kind: str = "binary",
    chunk_size: int = 1 << 16,
    block_bytes: int = BLOCK_BYTES,
    threads: int | None = None,
):
    """Read several systems' score files side by side, a chunk of trials at a time.

    Parameters
    ----------
    paths : sequence of path-like
        One file per system, listing the same trials in the same order.
    kind : {"binary", "albayzin", "multiclass"}
        ``model test score`` files, Albayzin 2012 system outputs, or the generic multiclass
        format with a header (see :mod:`focal.io.multiclass`).
    chunk_size : int
        Trials per chunk (the last one may be shorter).
    block_bytes : int
        Bytes read from each file at a time.
    threads : int, optional
        Worker threads that parse the files' next blocks ahead of use (NumPy releases the GIL,
        so files are parsed in parallel, and while the caller works on a chunk): default one
        per available core; 0 reads in the calling thread (:mod:`focal._text.pool`).

    Yields
    ------
    ScoreChunk

    Raises
    ------
    ValueError
        Any reader error (file and line), or files that do not list the same trials in the
        same order (both files, lines and trial ids), or files of different lengths.
    """
    _check_kind(kind)
    with stream(paths, kind=kind, block_bytes=block_bytes, threads=threads) as files:
        _check_same_classes(files.layouts)
        yield from files.chunks(chunk_size)


class FileLayout:
    """What the first record of a score file says: its format, classes, task and condition.

    ``kind`` is ``"binary"``, ``"albayzin"`` or ``"multiclass"`` (the generic format);
    ``classes``, ``task`` and ``condition`` are None where the format has none.
    """

    __slots__ = ("classes", "condition", "kind", "path", "task")

    def __init__(self, path, kind, classes=None, task=None, condition=None):
        self.path, self.kind, self.classes = path, kind, classes
        self.task, self.condition = task, condition


class _OpenFiles:
    """Score files opened side by side (:func:`stream`): each file's first block
    is parsed (``layouts``, known before any trial is served) and the rest is served by
    :meth:`chunks`, so each file is parsed exactly once.
    """

    def __init__(self, paths, kind, block_bytes, executor, layout=None, records=False):
        if kind not in _KINDS + ("auto",):
            raise ValueError(f"kind must be one of {', '.join(_KINDS + ('auto',))}, got {kind!r}")
        if not paths:
            raise ValueError("no score files given")
        self.executor = executor
        info = []
        self.streams = [
            _open_stream(p, kind, block_bytes, info, executor, layout, records and i == 0)
            for i, p in enumerate(paths)
        ]
        if kind == "binary":
            self.layouts = [FileLayout(p, "binary") for p in paths]
        else:
            self.layouts = [
                FileLayout(r.path, r.kind, tuple(r.classes), r.task, r.condition) for r in info
            ]

    def chunks(self, chunk_size):
        if int(chunk_size) < 1:
            raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
        return _chunks(self.streams, int(chunk_size), self.executor)


def _check_same_classes(layouts):
    first = layouts[0]
    for other in layouts[1:]:
        if other.classes != first.classes:
            raise ValueError(
                f"{other.path}: classes {', '.join(other.classes)} differ from "
                f"{first.path}'s {', '.join(first.classes)}"
            )


def _chunks(streams, chunk_size, executor):
    """The files' chunks of ``chunk_size`` trials, in order: taken from the streams here, their
    trials compared and their scores put side by side in ``executor``'s workers (at 2x10^6
    VoxCeleb-style trials x 3 files, the comparison was 40 % of ``focal apply``'s reading
    thread's CPU).
    """
    return in_order(_side_by_side, _taken(streams, chunk_size), executor, depth=2)


def _taken(streams, chunk_size):
    """Each chunk of the first file with as many trials of every other file: ``[(stream,
    (ids, values, lines, records)), ...]``; files of other lengths refused.
    """
    first = streams[0]
    total = 0
    while True:
        head = first.take(chunk_size)
        if head is None:
            for stream in streams[1:]:
                if stream.take(1) is not None:
                    raise ValueError(
                        f"{stream.path}: has more trials than {first.path} "
                        f"({total}); the files must list the same trials"
                    )
            if total == 0:
                raise ValueError(f"{first.path}: no trials found")
            return
        got = head[1].shape[0]
        taken = [(first, head)]
        for stream in streams[1:]:
            other = stream.take(got)
            have = 0 if other is None else other[1].shape[0]
            if have != got:
                raise ValueError(
                    f"{stream.path}: ends after {total + have} trials, {first.path} "
                    f"has more; the files must list the same trials"
                )
            taken.append((stream, other))
        total += got
        yield taken


def _side_by_side(taken):
    """The :class:`ScoreChunk` of a chunk of :func:`_taken`, its files' trials compared."""
    (first, (ids, values, lines, records)), *others = taken
    for stream, (other_ids, _, other_lines, _) in others:
        both = isinstance(ids, Records) and isinstance(other_ids, Records)
        if not (ids.same_trials(other_ids) if both else same_ids(*map(_arrays, (ids, other_ids)))):
            ids, other_ids = _arrays(ids), _arrays(other_ids)
            same = np.ones(len(lines), dtype=bool)
            for a, b in zip(ids, other_ids):
                same &= a == b
            i = int(np.argmin(same))
            raise ValueError(
                f"{stream.path}:{int(other_lines[i])}: trial {_describe(other_ids, i)} is not "
                f"the trial {_describe(ids, i)} of {first.path}:{int(lines[i])}; the files "
                f"must list the same trials in the same order (or be aligned on the trial "
                f"ids, which holds the first file in memory: on_mismatch='align', "
                f"apply_model(align=True), "
                f"focal apply --align)"
            )
    X = values if not others else np.concatenate([values] + [o[1][1] for o in others], axis=1)
    return ScoreChunk(ids, X, lines, records)


class _WholeFiles:
    """The ``on_mismatch="align"`` fallback: files read whole (each parsed once) and aligned on
    the trial ids, in the first file's order; multiclass columns in the first file's class order.
    """

    def __init__(self, paths, kind, missing, layout=None, executor=None, records=False):
        self.executor = executor  # formats the output (focal.workflows.apply)
        self.records = self.rows = None
        # the stream's pool, or none (threads=0): no pool of their own
        if kind == "binary":  # the first file read whole, the others joined with it
            layout = score_layout(layout)
            first = read_columns(paths[0], layout, records=records, threads=0, pool=executor)
            first.kind = "first score file"
            X = join(first, paths[1:], format=layout, missing=missing, threads=0, pool=executor)
            X = np.column_stack([first.values["score"], X])
            keep = kept_rows(X, first, paths)
            self.rows = np.arange(len(first)) if keep is None else np.flatnonzero(keep)
            self.ids = first.ids
            self.records = first.records
            if self.records is not None and keep is not None:
                self.records = self.records.select(keep)
            X = X if keep is None else X[keep]
            self.layouts = [FileLayout(p, "binary") for p in paths]
        else:
            systems = [
                _MulticlassReader(p, BLOCK_BYTES).read(_READER_KIND[kind], 0, executor)
                for p in paths
            ]
            X, segments, classes = align_multiclass_scores(*systems, missing=missing)
            self.ids = (segments,)
            self.layouts = [
                FileLayout(
                    s.path, "albayzin" if s.task else "multiclass", classes, s.task, s.condition
                )
                for s in systems
            ]
        self.X = X

    def chunks(self, chunk_size):
        if int(chunk_size) < 1:
            raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
        for i in range(0, self.X.shape[0], int(chunk_size)):
            j = i + int(chunk_size)
            records = None if self.records is None else self.records[i:j]
            ids = tuple(c[i:j] if self.rows is None else c.take(self.rows[i:j]) for c in self.ids)
            yield ScoreChunk(ids, self.X[i:j], None, records)
