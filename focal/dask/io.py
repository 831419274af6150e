"""Score and key files larger than memory as dask collections, aligned by trial id.

Each file is one partition, read by :func:`focal.io.read_scores` / :func:`focal.io.read_key`
inside a task. Scores and key are aligned on the ``(model, test)`` pair by a partitioned hash
join: every partition sends each trial to bucket ``hash(model, test) mod B``, so all the records
of one trial (its key line and its score in every system) meet in the same bucket task, where
:func:`focal.io.align_trials` aligns them exactly, with its usual rules for missing and unknown
trials. A worker holds one file or one bucket at a time.
"""

from __future__ import annotations

import glob
import os

import numpy as np
from dask import delayed

from ..io.alignment import align_trials
from ..io.binary import TrialKey, TrialScores, read_key, read_scores

__all__ = ["read_trials", "expand_paths"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def expand_paths(pattern_or_paths, name: str):
    """A path, a glob pattern or a list of them -> sorted list of existing files (ValueError)."""
    items = (
        [pattern_or_paths]
        if isinstance(pattern_or_paths, (str, os.PathLike))
        else list(pattern_or_paths)
    )
    out: list[str] = []
    for item in items:
        item = os.fspath(item)
        matches = sorted(glob.glob(item)) if glob.has_magic(item) else [item]
        if not matches:
            raise ValueError(f"{name}: no file matches {item!r}")
        out.extend(matches)
    if not out:
        raise ValueError(f"{name}: no file given")
    return out


def _bytes_hash(ids):
    """Hash of each id that does not depend on the array's byte width (trailing NULs ignored)."""
    ids = np.ascontiguousarray(ids)
    width = ids.dtype.itemsize
    b = ids.view(np.uint8).reshape(ids.shape[0], width).astype(np.uint64)
    powers = np.cumprod(np.full(width, _GOLDEN, dtype=np.uint64), dtype=np.uint64)
    with np.errstate(over="ignore"):
        h = (b * powers).sum(axis=1, dtype=np.uint64)
        for shift, mult in ((33, 0xFF51AFD7ED558CCD), (33, 0xC4CEB9FE1A85EC53), (33, 1)):
            h ^= h >> np.uint64(shift)
            h *= np.uint64(mult)
    return h


def _bucket_of(models, tests, n_buckets):
    with np.errstate(over="ignore"):
        h = _bytes_hash(models) * np.uint64(31) + _bytes_hash(tests)
    return (h % np.uint64(n_buckets)).astype(np.int64)


def _split(obj, n_buckets):
    """Pieces of a TrialScores / TrialKey, one per bucket."""
    bucket = _bucket_of(obj.models, obj.tests, n_buckets)
    order = np.argsort(bucket, kind="stable")
    bounds = np.searchsorted(bucket[order], np.arange(n_buckets + 1))
    values = obj.scores if isinstance(obj, TrialScores) else obj.labels
    out = []
    for j in range(n_buckets):
        idx = order[bounds[j] : bounds[j + 1]]
        out.append((obj.models[idx], obj.tests[idx], values[idx], obj.path))
    return tuple(out)


def _read_split(kind, path, n_buckets, pos_label=None):
    return _split(
        read_key(path, pos_label=pos_label) if kind == "key" else read_scores(path), n_buckets
    )


def _join(pieces, kind):
    models = np.concatenate([p[0] for p in pieces])
    tests = np.concatenate([p[1] for p in pieces])
    values = np.concatenate([p[2] for p in pieces])
    path = ", ".join(dict.fromkeys(p[3] for p in pieces if len(p[2])))
    return (TrialKey if kind == "key" else TrialScores)(models, tests, values, path)


def _align_bucket(n_systems, missing, key_pieces, *system_pieces):
    key = _join(key_pieces, "key")
    systems = [_join(system_pieces[k::n_systems], "scores") for k in range(n_systems)]
    if len(key) == 0:
        for s in systems:
            if len(s) and missing == "error":
                raise ValueError(
                    f"{len(s)} scored trial(s) of {s.path} are not in the key, "
                    f"e.g. ({s.models[0]!r}, {s.tests[0]!r})"
                )
        return np.empty((0, n_systems)), np.empty(0, dtype=bool)
    try:
        X, y, _, _ = align_trials(key, *systems, missing=missing)
    except ValueError as exc:
        if "no trial is present" in str(exc):  # this bucket only: others may have trials
            return np.empty((0, n_systems)), np.empty(0, dtype=bool)
        raise
    return X, y


def read_trials(key, systems, *, missing: str = "error", pos_label=None, n_buckets=None):
    """Scores of several systems aligned with a key, as lazy dask arrays (files > memory).

    Parameters
    ----------
    key : path, glob pattern, or list of them
        Key files (``model test target|nontarget`` lines); each file is one partition.
    systems : list of (path, glob pattern, or list of them)
        The score files of each system (``model test score``); each file one partition.
    missing : {"error", "drop"}
        As in :func:`focal.io.align_trials`: a key trial without a score in some system, or a
        scored trial absent from the key, is an error, or dropped.
    pos_label : str, optional
        The key label of target trials when the keys use other labels than target /
        nontarget (:func:`focal.io.read_key`; checked file by file).
    n_buckets : int, optional
        Partitions of the result (default: the largest number of files of one input).

    Returns
    -------
    X : dask array, shape (n_trials, n_systems)
        Scores, one column per system; trials grouped by bucket (chunk sizes unknown until
        computed).
    y : dask array of bool, shape (n_trials,)
        True for target trials; partitions lined up with ``X``.
    """
    import dask.array as da

    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")
    key_files = expand_paths(key, "key")
    system_files = [expand_paths(s, "scores") for s in systems]
    if not system_files:
        raise ValueError("read_trials needs at least one system's score files")
    if n_buckets is None:
        n_buckets = max(len(key_files), *(len(f) for f in system_files))
    n_buckets = int(n_buckets)
    if n_buckets < 1:
        raise ValueError(f"n_buckets must be a positive integer, got {n_buckets}")
    read = delayed(_read_split, nout=n_buckets, pure=True)
    key_parts = [read("key", f, n_buckets, pos_label) for f in key_files]
    sys_parts = [[read("scores", f, n_buckets) for f in files] for files in system_files]
    n_sys = len(system_files)
    align = delayed(_align_bucket, nout=2, pure=True)
    xs, ys = [], []
    for j in range(n_buckets):
        per_system = [[p[j] for p in parts] for parts in sys_parts]
        # interleave: system k's pieces at positions k, k + n_sys, ...
        width = max(len(p) for p in per_system)
        flat = []
        for i in range(width):
            for k in range(n_sys):
                flat.append(per_system[k][i] if i < len(per_system[k]) else _EMPTY)
        X, y = align(n_sys, missing, [p[j] for p in key_parts], *flat)
        xs.append(da.from_delayed(X, (np.nan, n_sys), dtype=float))
        ys.append(da.from_delayed(y, (np.nan,), dtype=bool))
    return da.concatenate(xs), da.concatenate(ys)


_EMPTY = (np.empty(0, dtype="S8"), np.empty(0, dtype="S8"), np.empty(0), "")
