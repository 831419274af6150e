"""Scores of a key's trials, read from score files streamed block by block (``focal evaluate``,
``focal train``).

Several score files are read at once, a thread each (NumPy releases the GIL: both cores
work); a file read alone is parsed a block at a time in a worker thread while the calling
thread looks the previous block's trials up in the key's :class:`focal.io._ids.HashTable` and
puts their scores in place. When the files can be read twice (not standard input), the key's
ids are not held in memory either (:class:`SpilledKey`): trials are matched by hash, their ids
written (with their scores) to temporary files and checked byte for byte range by range
afterwards, the scores put in place as their range is checked (:mod:`focal.io._spill`);
should a check fail (a hash collision) or a trial look repeated, the join is redone with the
key's ids in memory. Memory is then one float64 column of scores per system, the key's labels
and hashes. Same answers and errors as reading both files whole and aligning them
(:func:`focal.io.align_trials`).
"""

from __future__ import annotations

import concurrent.futures
import os
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._text import arrow
from .._text.blocks import BLOCK_BYTES
from .._text.fields import ids_text
from .._text.source import display_name
from ._ids import HashTable, as_id_array, find_duplicate
from ._prefetch import prefetch
from ._spill import OPEN_RANGE_FILES, MatchSpill, SpilledKey, Unverified

#: Score files read at once by :func:`align_files` (a thread each), and by
#: :func:`iter_aligned` (its memory: a column of scores per file)
FILE_THREADS = 4
_EACH_AT_ONCE = 2

__all__ = [
    "align_files",
    "iter_aligned",
    "key_scores",
    "read_aligned",
]


def _sample(models, tests, rows, k=3):
    rows = list(rows)
    return ", ".join(f"({ids_text(models[i])}, {ids_text(tests[i])})" for i in rows[:k])


def key_scores(
    key,
    path,
    table,
    *,
    format=None,
    missing="error",
    block_bytes=BLOCK_BYTES,
    executor=None,
    out=None,
    spill=None,
    stop=None,
):
    """The score of each key trial in the score file ``path`` (NaN where it has none).

    Parameters
    ----------
    key : TrialKey
    path : path-like
    table : HashTable
        Of the key's (models, tests).
    format : str or Layout, optional
        Columns of the score file (:func:`focal.io.read_scores`).
    missing : {"error", "drop"}
        Scored trials absent from the key: an error (count and first trials), or skipped.
    executor : ThreadPoolExecutor, optional
        Where the blocks are parsed (default: read in the calling thread).
    out : ndarray of float64, shape (len(key),), optional
        Where to put the scores (e.g. a column of the systems' matrix).
    spill : MatchSpill, optional
        The key's ids are not in memory (:class:`SpilledKey`): matches by hash are recorded
        there to be checked afterwards; a failed check (a hash collision, or a trial that
        looks repeated) raises :class:`Unverified` (the caller redoes the join exactly).
    stop : threading.Event, optional
        Once set, reading stops at the next block (:class:`Stopped`): another file failed.

    Returns
    -------
    ndarray of float64, shape (len(key),)

    Raises
    ------
    ValueError
        A reader error (``path:line:``), a repeated trial (``path:line:``), scored trials not in
        the key (with ``missing="error"``), or no trials.
    """
    from .binary import score_pieces

    shown = display_name(path)
    values = np.empty(len(key)) if out is None else out
    values[:] = np.nan  # NaN: not scored yet (the readers refuse NaN scores)
    absent, n_absent, n = [], 0, 0
    pieces = score_pieces(os.fspath(path), block_bytes, format)
    if executor is not None:
        pieces = prefetch(pieces, executor)
    for (models, tests), scores, lines in pieces:
        if stop is not None and stop.is_set():
            raise Stopped
        n += len(lines)
        where = table.lookup((models, tests), verify=spill is None)
        hit = where >= 0
        rows = where[hit]
        if spill is None:
            before = ~np.isnan(values[rows])  # scored in an earlier block
            order = np.arange(rows.size, dtype=np.float64)
            values[rows] = order  # a row written twice keeps its last index only
            if before.any() or (values[rows] != order).any():
                _repeated(shown, models, tests, lines, where, before)
            values[rows] = scores[hit, 0]
        else:  # scores put in place by the check, where a row matched twice fails
            matched = (models, tests, scores[:, 0])
            if rows.size < hit.size:  # copies of the ids only when some trials missed
                matched = (models[hit], tests[hit], scores[hit, 0])
            if not spill.add(rows, *matched):
                raise Unverified
        if rows.size < hit.size:
            n_absent += int((~hit).sum())
            miss = np.flatnonzero(~hit)
            if missing == "error":
                if len(absent) < 3:
                    absent.extend(
                        f"({ids_text(models[i])}, {ids_text(tests[i])})"
                        for i in miss[: 3 - len(absent)]
                    )
            else:  # kept to check them for repeats at the end
                absent.append((models[miss], tests[miss], lines[miss]))
    if n == 0:
        raise ValueError(f"{shown}: no trials found")
    if spill is not None and not spill.check(values):
        raise Unverified
    if n_absent and missing == "error":
        raise ValueError(
            f"{shown}: {n_absent} scored trial(s) are not in the key {key.path}, "
            f"e.g. {', '.join(absent)}; use missing='drop' (focal: --missing drop) "
            f"to skip them"
        )
    if absent:
        _check_repeats(shown, absent)
    return values


def _repeated(shown, models, tests, lines, where, before):
    """Raise the error of a trial scored twice (in this block, or in this block and before:
    ``before`` marks the block's matched trials scored in an earlier block).
    """
    order = np.flatnonzero(where >= 0)
    rows = where[order]
    first = np.zeros(rows.size, dtype=bool)
    _, at = np.unique(rows, return_index=True)
    first[at] = True
    bad = before | ~first
    i = order[int(np.argmax(bad))]
    raise ValueError(
        f"{shown}:{int(lines[i])}: duplicate trial ({ids_text(models[i])}, "
        f"{ids_text(tests[i])}), scored before in the file"
    )


def _check_repeats(shown, absent):
    models = np.concatenate(
        [a[0].astype(f"S{max(x[0].dtype.itemsize for x in absent)}") for a in absent]
    )
    tests = np.concatenate(
        [a[1].astype(f"S{max(x[1].dtype.itemsize for x in absent)}") for a in absent]
    )
    lines = np.concatenate([a[2] for a in absent])
    dup = find_duplicate((models, tests))
    if dup is not None:
        first, second = dup
        raise ValueError(
            f"{shown}:{int(lines[second])}: duplicate trial "
            f"({ids_text(models[second])}, {ids_text(tests[second])}), first seen "
            f"on line {int(lines[first])}"
        )


class Stopped(Exception):
    """A file's reading abandoned, because another file of the same join failed."""


def _key_ids(key, rows):
    if isinstance(key, SpilledKey):
        return key.spill.take(rows)
    return key.models[rows], key.tests[rows]


def _spillable(paths, key_path):
    """Whether the key can be joined by hash with its ids on disk (files that can be read
    again, should the join have to be redone exactly).
    """
    from ._tables import table_kind

    return "-" not in paths + [key_path] and table_kind(key_path) is None


def align_files(
    key,
    score_paths,
    *,
    format=None,
    missing="error",
    block_bytes=BLOCK_BYTES,
    threads=True,
    ids=True,
    each=False,
):
    """:func:`focal.io.align_trials` of a key and score files, the files streamed.

    Parameters
    ----------
    key : TrialKey or SpilledKey
        With a :class:`SpilledKey`, matches are made by hash and checked from the files on
        disk afterwards (:class:`Unverified` when the check fails).
    threads : bool
        Read several files at once, a thread each (one file: its blocks parsed in a thread
        while the previous one is looked up); the errors are those of reading them in order.
    ids : bool
        Return the trial ids (else None for both).
    each : bool
        Align each file with the key on its own (``missing="drop"`` drops per file): a list
        of the results below, one per file (X of shape (n_trials, 1)); the errors are those
        of aligning the files one after the other.

    Returns
    -------
    X : ndarray, shape (n_trials, n_systems)
    y : ndarray of bool
    models, tests : ndarray of bytes, or None
        Of the key trials kept (all of them with ``missing="error"``).
    """
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")
    spilled = isinstance(key, SpilledKey)
    if spilled:
        table = key.table
    else:
        table = HashTable((as_id_array(key.models, "models"), as_id_array(key.tests, "tests")))
    X = np.empty((len(key), len(score_paths)))
    spills = [
        MatchSpill(key.folder, f"scores{j}", key.spill) if spilled else None
        for j in range(len(score_paths))
    ]
    at_once = min(FILE_THREADS, len(score_paths))
    if spilled:  # each file's spill keeps a file open per key row range
        at_once = min(at_once, OPEN_RANGE_FILES // spills[0].n_ranges)

    kept = [None] * len(score_paths)  # with each: the trials kept of each file

    def column(j, executor=None, stop=None):
        try:
            key_scores(
                key,
                score_paths[j],
                table,
                format=format,
                missing=missing,
                block_bytes=block_bytes,
                executor=executor,
                out=X[:, j],
                spill=spills[j],
                stop=stop,
            )
        finally:
            if spills[j] is not None:
                spills[j].close()  # after an error: its range files
        if each:  # checked as the file is read: its error before the next file's
            kept[j] = _kept(key, X[:, j : j + 1], [score_paths[j]], missing)

    if threads and at_once > 1:
        _in_parallel(column, len(score_paths), at_once)
    else:
        executor = ThreadPoolExecutor(max_workers=1) if threads else None
        try:
            for j in range(len(score_paths)):
                column(j, executor)
        finally:
            if executor is not None:
                executor.shutdown(wait=True, cancel_futures=True)
    table = None  # the lookups are done: memory back
    if each:
        return [_trials(key, X[:, j : j + 1], keep, ids) for j, keep in enumerate(kept)]
    return _trials(key, X, _kept(key, X, score_paths, missing), ids)


def _trials(key, X, keep, ids):
    """(X, y, models, tests) of the key trials ``keep`` (a mask; None: all)."""
    spilled = isinstance(key, SpilledKey)
    y = np.asarray(key.labels, dtype=bool)
    if keep is not None:
        X, y = X[keep], y[keep]
    if not ids:
        return X, y, None, None
    if spilled:
        return (X, y, *key.ids(keep))
    if keep is None:
        return X, y, key.models, key.tests
    return X, y, key.models[keep], key.tests[keep]


def _in_parallel(column, n, at_once):
    """``column(j, stop=event)`` for j < n, a thread per file (``at_once`` at a time: each
    parses its blocks and looks them up; NumPy releases the GIL), with the outcome of calling
    them in order: the error of the first file that fails is raised, and the files after it
    stop at their next block.
    """
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=at_once) as executor:
        futures = [executor.submit(column, j, stop=stop) for j in range(n)]
        try:
            for future in futures:
                while not future.done():  # the workers never import: pyarrow is loaded here
                    arrow.load()
                    concurrent.futures.wait([future], timeout=0.05)
                future.result()
        except BaseException:
            stop.set()
            raise


def _kept(key, X, score_paths, missing):
    """None when every key trial has its scores, else the mask of those that have (with
    ``missing="error"``: the error naming the first file with absent trials).
    """
    if not np.isnan(X).any():  # the common case, in one pass (a row-wise any: 10x slower)
        return None
    absent_any = np.isnan(X).any(axis=1)
    if missing == "error":
        j = int(np.argmax(np.isnan(X).any(axis=0)))
        absent = np.flatnonzero(np.isnan(X[:, j]))
        models, tests = _key_ids(key, absent[:3])
        raise ValueError(
            f"{display_name(score_paths[j])}: {absent.size} trial(s) of the key "
            f"{key.path} have no score, e.g. "
            f"{_sample(models, tests, range(models.size))}; use missing='drop' "
            f"(focal: --missing drop) to skip them"
        )
    if absent_any.all():
        raise ValueError(
            f"no trial of the key {key.path} is in every score file "
            f"({', '.join(display_name(p) for p in score_paths)}): is it the key of these scores?"
        )
    return ~absent_any


def read_aligned(
    score_paths,
    key_path=None,
    *,
    format=None,
    key_format=None,
    pos_label=None,
    missing="error",
    ids=True,
):
    """What ``focal train`` / ``evaluate`` read: the key, then each score file streamed and
    aligned with it (:func:`align_files`); without a key, the first file's labels
    (:func:`focal.io.read_key_and_scores`).

    Files that can be read twice are joined by hash with the key's ids on disk
    (:class:`SpilledKey`: memory is the scores and labels, not the ids), and joined again
    with the ids in memory in the rare case the byte-for-byte check fails.

    Returns
    -------
    X, y, models, tests, key_path
        As :func:`focal.io.align_trials` (ids None unless ``ids``), and the name of the file
        the labels came from.
    """
    from .alignment import align_trials
    from .binary import default_key_format, read_key, read_key_and_scores

    paths = [os.fspath(p) for p in score_paths]
    if key_path is None:
        key, systems = read_key_and_scores(paths, None, format=format, pos_label=pos_label)
        return (*align_trials(key, *systems, missing=missing), key.path)
    if (paths + [os.fspath(key_path)]).count("-") > 1:
        raise ValueError("standard input ('-') can be read once: give it for one file only")
    key_format = default_key_format(format) if key_format is None else key_format
    if _spillable(paths, os.fspath(key_path)):
        try:
            with tempfile.TemporaryDirectory(prefix="focal-join-") as folder:
                key = SpilledKey(key_path, folder, format=key_format, pos_label=pos_label)
                X, y, models, tests = align_files(
                    key, paths, format=format, missing=missing, ids=ids
                )
                return X, y, models, tests, key.path
        except (Unverified, OSError):  # OSError: no room for the temporary files
            pass
    key = read_key(key_path, pos_label=pos_label, format=key_format)
    return (*align_files(key, paths, format=format, missing=missing, ids=ids), key.path)


def iter_aligned(
    score_paths,
    key_path=None,
    *,
    format=None,
    key_format=None,
    pos_label=None,
    missing="error",
    ids=True,
):
    """Each score file aligned with the key on its own (``missing="drop"`` drops per file):
    yields ``(path, scores, y, models, tests)`` (ids None unless ``ids``); the key is read
    once (as in :func:`read_aligned`), the files two at a time, a thread each.
    """
    from .alignment import align_trials
    from .binary import default_key_format, read_key, read_key_and_scores

    paths = [os.fspath(p) for p in score_paths]
    if key_path is None:
        key, systems = read_key_and_scores(paths, None, format=format, pos_label=pos_label)
        for path, system in zip(paths, systems):
            X, y, models, tests = align_trials(key, system, missing=missing)
            yield path, X[:, 0], y, models, tests
        return
    if (paths + [os.fspath(key_path)]).count("-") > 1:
        raise ValueError("standard input ('-') can be read once: give it for one file only")
    key_format = default_key_format(format) if key_format is None else key_format
    done = 0
    if _spillable(paths, os.fspath(key_path)):
        try:
            with tempfile.TemporaryDirectory(prefix="focal-join-") as folder:
                key = SpilledKey(key_path, folder, format=key_format, pos_label=pos_label)
                for start in range(0, len(paths), _EACH_AT_ONCE):
                    group = paths[start : start + _EACH_AT_ONCE]
                    aligned = align_files(
                        key, group, format=format, missing=missing, ids=ids, each=True
                    )
                    for path, (X, y, models, tests) in zip(group, aligned):
                        done += 1
                        yield path, X[:, 0], y, models, tests
                return
        except (Unverified, OSError):  # OSError: no room for the temporary files
            pass
    key = read_key(key_path, pos_label=pos_label, format=key_format)
    for path in paths[done:]:
        X, y, models, tests = align_files(key, [path], format=format, missing=missing, ids=ids)
        yield path, X[:, 0], y, models, tests
