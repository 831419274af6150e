"""Scores of a key's trials, read from score files streamed block by block (``focal evaluate``,
``focal train``).

The key is read whole and its trial ids put in a :class:`focal.io._ids.HashTable`; each score
file is then parsed a block at a time in a worker thread (the second core) while the calling
thread looks the previous block's trials up in the key and puts their scores in place. A score
file's ids are never all held in memory: memory is the key's, plus one column of scores per
system. Same answers and errors as reading both files whole and aligning them
(:func:`focal.io.align_trials`).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._ids import HashTable, as_id_array, find_duplicate
from ._text import BLOCK_BYTES, display_name, ids_text

__all__ = ["align_files", "iter_aligned", "key_scores", "read_aligned"]


def _prefetch(pieces, executor):
    """The pieces of a generator, the next one parsed in ``executor`` while one is used."""
    future = executor.submit(next, pieces, None)
    while True:
        piece = future.result()
        if piece is None:
            return
        future = executor.submit(next, pieces, None)
        yield piece


def _sample(models, tests, rows, k=3):
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
    executor : ThreadPoolExecutor, optional
        Where the blocks are parsed (default: read in the calling thread).
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
    values[:] = np.nan
    seen = np.zeros(len(key), dtype=bool)
    absent, n_absent, n = [], 0, 0
    pieces = score_pieces(os.fspath(path), block_bytes, format)
    if executor is not None:
        pieces = _prefetch(pieces, executor)
    for (models, tests), scores, lines in pieces:
        n += len(lines)
        where = table.lookup((models, tests))
        hit = where >= 0
        rows = where[hit]
        again = seen[rows]
        if again.any() or np.unique(rows).size != rows.size:
            _repeated(shown, models, tests, lines, where, seen)
        seen[rows] = True
        values[rows] = scores[hit, 0]
        if not hit.all():
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


def _repeated(shown, models, tests, lines, where, seen):
    """Raise the error of a trial scored twice (in this block, or in this block and before)."""
    order = np.flatnonzero(where >= 0)
    rows = where[order]
    before = seen[rows]
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
    key, score_paths, *, format=None, missing="error", block_bytes=BLOCK_BYTES, threads=True
):
    """:func:`focal.io.align_trials` of a key and score files, the files streamed.

    Returns
    -------
    X : ndarray, shape (n_trials, n_systems)
    y : ndarray of bool
    models, tests : ndarray of bytes
        Of the key trials kept (all of them with ``missing="error"``).
    """
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")
    models = as_id_array(key.models, "models")
    tests = as_id_array(key.tests, "tests")
    table = HashTable((models, tests))
    X = np.empty((len(key), len(score_paths)))
    executor = ThreadPoolExecutor(max_workers=1) if threads else None
    try:
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
    finally:
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
    del table
    keep = _kept(key, X, score_paths, missing)
    y = np.asarray(key.labels, dtype=bool)
    if keep is None:
        return X, y, key.models, key.tests
    return X[keep], y[keep], key.models[keep], key.tests[keep]


def _kept(key, X, score_paths, missing):
    """None when every key trial has its scores, else the mask of those that have (with
    ``missing="error"``: the error naming the first file with absent trials).
    """
    absent_any = np.isnan(X).any(axis=1)
    if not absent_any.any():
        return None
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
        raise ValueError("no trial is present in the key and in every score file")
    return ~absent_any


def read_aligned(
    score_paths, key_path=None, *, format=None, key_format=None, pos_label=None, missing="error"
):
    """What ``focal train`` / ``evaluate`` read: the key, then each score file streamed and
    aligned with it (:func:`align_files`); without a key, the first file's labels
    (:func:`focal.io.read_key_and_scores`).

    Returns
    -------
    X, y, models, tests, key_path
        As :func:`focal.io.align_trials`, and the name of the file the labels came from.
    """
    from .binary import align_trials, default_key_format, read_key, read_key_and_scores

    paths = [os.fspath(p) for p in score_paths]
    if key_path is None:
        key, systems = read_key_and_scores(paths, None, format=format, pos_label=pos_label)
        return (*align_trials(key, *systems, missing=missing), key.path)
    if (paths + [os.fspath(key_path)]).count("-") > 1:
        raise ValueError("standard input ('-') can be read once: give it for one file only")
    key_format = default_key_format(format) if key_format is None else key_format
    key = read_key(key_path, pos_label=pos_label, format=key_format)
    return (*align_files(key, paths, format=format, missing=missing), key.path)


def iter_aligned(
    score_paths, key_path=None, *, format=None, key_format=None, pos_label=None, missing="error"
):
    """Each score file aligned with the key on its own (``missing="drop"`` drops per file):
    yields ``(path, scores, y, models, tests)``; the key is read once.
    """
    from .binary import align_trials, default_key_format, read_key, read_key_and_scores

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
    key = read_key(key_path, pos_label=pos_label, format=key_format)
    if len(paths) == 1:
        X, y, models, tests = align_files(key, paths, format=format, missing=missing)
        yield paths[0], X[:, 0], y, models, tests
        return
    table = HashTable((as_id_array(key.models, "models"), as_id_array(key.tests, "tests")))
    labels = np.asarray(key.labels, dtype=bool)
    with ThreadPoolExecutor(max_workers=1) as executor:
        for path in paths:
            x = key_scores(key, path, table, format=format, missing=missing, executor=executor)
            keep = _kept(key, x[:, None], [path], missing)
            if keep is None:
                yield path, x, labels, key.models, key.tests
            else:
                yield path, x[keep], labels[keep], key.models[keep], key.tests[keep]
