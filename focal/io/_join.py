"""Scores of a key's trials, read from score files streamed block by block: the one join of the
file engine (``focal evaluate``, ``focal train``).

The key is held in memory: its ids, labels and a :class:`focal.io._ids.HashTable` of its
trials. Each score file is read block by block; the blocks are parsed and their trials looked up
in the table by the worker threads (:mod:`focal._text.pool`), and the calling thread puts the
scores in place in file order, where a trial scored twice is found. The files are read one after
the other, each with every core. Same answers and errors as reading the files whole and aligning
them (:func:`focal.io.align_trials`).

(A join with the key's ids spilled to temporary files was dropped: on ``bench_train`` at 10^7
trials it saved 43 MiB of 833, 5 %, for 460 lines and a second path.)
"""

from __future__ import annotations

import os

import numpy as np

from .._text.blocks import BLOCK_BYTES
from .._text.fields import LineMap, concat_ids, concat_pieces, ids_text
from .._text.pool import worker_pool
from .._text.source import display_name
from . import _ids
from ._ids import HashTable, as_id_array, find_duplicate

__all__ = ["align_files", "iter_aligned", "key_scores", "read_aligned"]


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
    executor : concurrent.futures.Executor, optional
        Where the blocks are parsed and looked up (default: in the calling thread).
    out : ndarray of float64, shape (len(key),), optional
        Where to put the scores (e.g. a column of the systems' matrix).

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

    def look_up(piece):
        return piece, table.lookup(piece[0])

    for ((models, tests), scores, lines), where in score_pieces(
        os.fspath(path), block_bytes, format, executor=executor, then=look_up
    ):
        n += len(lines)
        hit = where >= 0
        rows = where[hit]
        before = ~np.isnan(values[rows])  # scored in an earlier block
        order = np.arange(rows.size, dtype=np.float64)
        values[rows] = order  # a row written twice keeps its last index only
        if before.any() or (values[rows] != order).any():
            _repeated(shown, models, tests, lines, where, before)
        values[rows] = scores[hit, 0]
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


def align_files(
    key,
    score_paths,
    *,
    format=None,
    missing="error",
    block_bytes=BLOCK_BYTES,
    threads=None,
    ids=True,
    table=None,
):
    """:func:`focal.io.align_trials` of a key and score files, the files streamed.

    Parameters
    ----------
    key : TrialKey
    score_paths : sequence of path-like
    threads : int, optional
        Worker threads that parse the blocks and look their trials up
        (:func:`focal._text.pool.worker_pool`: default one per core; 0: none).
    ids : bool
        Return the trial ids (else None for both).
    table : HashTable, optional
        Of the key's trials, when made already.

    Returns
    -------
    X : ndarray, shape (n_trials, n_systems)
    y : ndarray of bool
    models, tests : ndarray of bytes, or None
        Of the key trials kept (all of them with ``missing="error"``).
    """
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")
    if table is None:
        table = HashTable((as_id_array(key.models, "models"), as_id_array(key.tests, "tests")))
    X = np.empty((len(key), len(score_paths)))
    with worker_pool(threads) as executor:
        for j, path in enumerate(score_paths):
            key_scores(
                key,
                path,
                table,
                format=format,
                missing=missing,
                block_bytes=block_bytes,
                executor=executor,
                out=X[:, j],
            )
    del table  # the lookups are done: memory back
    keep = _kept(key, X, score_paths, missing)
    y = np.asarray(key.labels, dtype=bool)
    if keep is not None:
        X, y = X[keep], y[keep]
    if not ids:
        return X, y, None, None
    if keep is None:
        return X, y, key.models, key.tests
    return X, y, key.models[keep], key.tests[keep]


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
        raise ValueError(
            f"{display_name(score_paths[j])}: {absent.size} trial(s) of the key "
            f"{key.path} have no score, e.g. "
            f"{_sample(key.models, key.tests, absent)}; use missing='drop' "
            f"(focal: --missing drop) to skip them"
        )
    if absent_any.all():
        names = ", ".join(display_name(p) for p in score_paths)
        raise ValueError(
            f"no trial is present in the key and in every score file (key {key.path}; "
            f"score files {names})"
        )
    return ~absent_any


def _read_key(paths, key_path, key_format, format, pos_label):
    """The key and the hash table of its trials, for a join: as :func:`focal.io.read_key`
    (same errors), each block's ids hashed by the worker that parses it, and repeated trials
    found among the rows whose hashes collide (no second pass over the ids).
    """
    from .binary import TrialKey, _check_pos_label, _pieces, default_key_format
    from .formats import key_layout

    if (paths + [os.fspath(key_path)]).count("-") > 1:
        raise ValueError("standard input ('-') can be read once: give it for one file only")
    key_format = default_key_format(format) if key_format is None else key_format
    shown = display_name(key_path)

    def hashed(piece):
        (models, tests), values, lines = piece
        return (models, tests), values, lines, _ids.hash_ids(models, tests)

    models, tests, labels, hashes, lines, n = [], [], [], [], LineMap(), 0
    with worker_pool() as executor:
        layout = key_layout(key_format)
        for (m, t), values, where, h in _pieces(
            os.fspath(key_path),
            layout,
            ("label",),
            BLOCK_BYTES,
            pos_label,
            executor=executor,
            then=hashed,
        ):
            models.append(m)
            tests.append(t)
            labels.append(values["label"])
            hashes.append(h)
            lines.add(n, where)
            n += len(where)
    if n == 0:
        raise ValueError(f"{shown}: no trials found")
    models, tests = concat_ids(models, lines, shown), concat_ids(tests, lines, shown)
    key = TrialKey(models, tests, concat_pieces(labels), shown, lines)
    table = HashTable((models, tests), hashes=concat_pieces(hashes))
    dup = table.duplicate()
    if dup is not None:
        first, second = dup
        raise ValueError(
            f"{shown}:{lines.line(second)}: duplicate trial "
            f"({ids_text(models[second])}, {ids_text(tests[second])}), "
            f"first seen on line {lines.line(first)}"
        )
    _check_pos_label(key, pos_label)
    return key, table


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

    Returns
    -------
    X, y, models, tests, key_path
        As :func:`focal.io.align_trials` (ids None unless ``ids``), and the name of the file
        the labels came from.
    """
    from .alignment import align_trials
    from .binary import read_key_and_scores

    paths = [os.fspath(p) for p in score_paths]
    if key_path is None:
        key, systems = read_key_and_scores(paths, None, format=format, pos_label=pos_label)
        return (*align_trials(key, *systems, missing=missing), key.path)
    key, table = _read_key(paths, key_path, key_format, format, pos_label)
    X, y, models, tests = align_files(
        key, paths, format=format, missing=missing, ids=ids, table=table
    )
    return X, y, models, tests, key.path


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
    once (as in :func:`read_aligned`).
    """
    from .alignment import align_trials
    from .binary import read_key_and_scores

    paths = [os.fspath(p) for p in score_paths]
    if key_path is None:
        key, systems = read_key_and_scores(paths, None, format=format, pos_label=pos_label)
        for path, system in zip(paths, systems):
            X, y, models, tests = align_trials(key, system, missing=missing)
            yield path, X[:, 0], y, models, tests
        return
    key, table = _read_key(paths, key_path, key_format, format, pos_label)
    for k, path in enumerate(paths):
        X, y, models, tests = align_files(
            key, [path], format=format, missing=missing, ids=ids, table=table
        )
        if k == len(paths) - 1:  # the caller's work on the last file has their memory
            del key, table
        yield path, X[:, 0], y, models, tests
