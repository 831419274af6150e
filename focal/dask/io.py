"""Score and key files larger than memory as dask collections, aligned by trial id.

Each file is one partition, read by :func:`focal.io.read_scores` / :func:`focal.io.read_key`
inside a task (so a repeated trial within a file, or a bad line, is refused with the reader's own
``path:line:`` message). Scores and key are aligned on the ``(model, test)`` pair by a
partitioned hash join: every partition sends each trial to bucket ``hash(model, test) mod B``,
so all the records of one trial (its key lines and its scores in every file of every system)
meet in the same bucket task. There the rules of the single-process join
(:func:`focal.io.align_trials`) are applied to the trials of all the files at once: a trial
repeated across files (a key trial in two key files, whatever its labels; a scored trial in two
score files of one system, whatever its scores and ``missing``) is refused, naming both files
and lines; key trials without a score and scored trials absent from the key are counted over
every bucket and refused (``missing="error"``) or dropped (``"drop"``) as in memory, with the
same messages. A worker holds one file or one bucket at a time.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field

import numpy as np
from dask import delayed

from .._text import arrow
from .._text.fields import as_id_array, ids_text
from .._text.source import display_name
from ..io._ids import find_duplicate, hash_ids, match_ids
from ..io.binary import read_key, read_scores
from ..io.formats import default_key_format, score_layout

__all__ = ["read_trials", "expand_paths", "aligned_parts", "check_alignment"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_SAMPLES = 3  # trial ids shown in a message


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


@dataclass(frozen=True)
class _Source:
    """How to read one file of the join (and read it again for the line of a record)."""

    kind: str  # "key" or "scores"
    path: str
    layout: object = None
    pos_label: str | None = None

    def read(self):
        with arrow.imports_allowed():  # a worker's task: pyarrow's kernels for large files
            if self.kind == "key":
                return read_key(self.path, pos_label=self.pos_label, format=self.layout)
            return read_scores(self.path, format=self.layout)

    @property
    def shown(self) -> str:
        return display_name(self.path)


def _read_split(source, file_index, n_buckets):
    """Pieces of one file, one per bucket: ``(models, tests, values, file index, records)``."""
    obj = source.read()
    values = obj.labels if source.kind == "key" else obj.scores
    bucket = _bucket_of(obj.models, obj.tests, n_buckets)
    order = np.argsort(bucket, kind="stable")  # records in file order within a bucket
    bounds = np.searchsorted(bucket[order], np.arange(n_buckets + 1))
    out = []
    for j in range(n_buckets):
        idx = order[bounds[j] : bounds[j + 1]]
        files = np.full(idx.size, file_index, dtype=np.int32)
        out.append((obj.models[idx], obj.tests[idx], values[idx], files, idx.astype(np.int64)))
    return tuple(out)


def _join(pieces):
    """One bucket's pieces of several files, in file order: ``(ids, values, (files, records))``."""
    pieces = [p for p in pieces if len(p[2])]
    if not pieces:
        empty = np.empty(0, dtype="S8")
        return (empty, empty), np.empty(0), (np.empty(0, np.int32), np.empty(0, np.int64))
    models = as_id_array(np.concatenate([p[0] for p in pieces]), "models")
    tests = as_id_array(np.concatenate([p[1] for p in pieces]), "tests")
    values = np.concatenate([p[2] for p in pieces])
    where = (np.concatenate([p[3] for p in pieces]), np.concatenate([p[4] for p in pieces]))
    return (models, tests), values, where


@dataclass
class _Findings:
    """What a bucket found against the single-process rules (merged over the buckets)."""

    key_duplicate: tuple | None = None  # (second (file, record), first (file, record), ids)
    duplicate: dict = field(default_factory=dict)  # system -> as key_duplicate
    absent: dict = field(default_factory=dict)  # system -> (count, [((file, record), ids)])
    extra: dict = field(default_factory=dict)  # system -> (count, [((file, record), ids)])
    n_kept: int = 0
    n_targets: int = 0
    fingerprint: int = 0  # of the kept trials (:func:`focal.io.alignment.trial_set`)


def _first(ids, where, rows):
    """The first ``_SAMPLES`` of ``rows`` in (file, record) order, with their ids."""
    rows = np.asarray(rows)
    order = np.lexsort((where[1][rows], where[0][rows]))[:_SAMPLES]
    return [((int(where[0][r]), int(where[1][r])), (ids[0][r], ids[1][r])) for r in rows[order]]


def _duplicate(ids, where):
    dup = find_duplicate(ids)
    if dup is None:
        return None
    first, second = dup
    return (
        (int(where[0][second]), int(where[1][second])),
        (int(where[0][first]), int(where[1][first])),
        (ids[0][second], ids[1][second]),
    )


def _align_bucket(n_systems, missing, key_pieces, *system_pieces):
    """``(X, y, findings)`` of one bucket: the key's trials with a score in every system."""
    key_ids, labels, key_where = _join(key_pieces)
    found = _Findings(key_duplicate=_duplicate(key_ids, key_where))
    empty = np.empty((0, n_systems)), np.empty(0, dtype=bool)
    if found.key_duplicate is not None:
        return (*empty, found)
    keep = np.ones(labels.size, dtype=bool)
    X = np.empty((labels.size, n_systems))
    for k in range(n_systems):
        ids, scores, where = _join(system_pieces[k::n_systems])
        dup = _duplicate(ids, where)
        if dup is not None:
            found.duplicate[k] = dup
            return (*empty, found)
        at = match_ids(key_ids, ids) if len(scores) and labels.size else np.full(labels.size, -1)
        hit = at >= 0
        if not hit.all():
            found.absent[k] = (int((~hit).sum()), _first(key_ids, key_where, np.flatnonzero(~hit)))
        used = np.zeros(len(scores), dtype=bool)
        used[at[hit]] = True
        if not used.all():
            found.extra[k] = (int((~used).sum()), _first(ids, where, np.flatnonzero(~used)))
        X[:, k] = np.where(hit, scores[np.maximum(at, 0)] if len(scores) else np.nan, np.nan)
        keep &= hit
    y = labels.astype(bool)[keep]
    found.n_kept, found.n_targets = int(keep.sum()), int(y.sum())
    found.fingerprint = int(hash_ids(key_ids[0][keep], key_ids[1][keep]).sum(dtype=np.uint64))
    return X[keep], y, found


def _samples(items):
    return ", ".join(f"({ids_text(m)}, {ids_text(t)})" for _, (m, t) in items)


def _merge(found, k, what):
    """``(count, first samples)`` of ``what`` ("absent" or "extra") of system ``k`` over buckets."""
    parts = [getattr(f, what)[k] for f in found if k in getattr(f, what)]
    if not parts:
        return 0, []
    items = sorted((item for _, sample in parts for item in sample), key=lambda it: it[0])
    return sum(n for n, _ in parts), items[:_SAMPLES]


def _duplicate_error(duplicates, sources):
    """The earliest repeated trial (as :func:`focal.io.read_key` reports one), with its lines."""
    (second, first, (m, t)) = min(duplicates, key=lambda d: d[0])
    a, b = sources[first[0]], sources[second[0]]
    line_b = b.read().lines.line(second[1])  # the line numbers: read again, on error only
    line_a = line_b if first[0] == second[0] else None
    seen = a.read().lines.line(first[1]) if line_a is None else line_a
    where = f"on line {seen}" if first[0] == second[0] else f"on line {seen} of {a.shown}"
    return ValueError(
        f"{b.shown}:{line_b}: duplicate trial ({ids_text(m)}, {ids_text(t)}), first seen {where}"
    )


def check_alignment(missing, key_sources, system_sources, *found):
    """Raise the error the single-process join raises for these files, if any, in its order:
    a repeated key trial; then for each system a repeated scored trial, scored trials absent
    from the key and key trials without a score (``missing="error"``); no trial at all.

    Returns
    -------
    n_kept, n_targets : int
        The aligned trials and the targets among them.
    fingerprint : int
        Of the aligned trials, as :func:`focal.io.alignment.trial_set` gives it.
    """
    key_dups = [f.key_duplicate for f in found if f.key_duplicate is not None]
    if key_dups:
        raise _duplicate_error(key_dups, key_sources)
    key_name = ", ".join(dict.fromkeys(s.shown for s in key_sources))
    for k, sources in enumerate(system_sources):
        dups = [f.duplicate[k] for f in found if k in f.duplicate]
        if dups:
            raise _duplicate_error(dups, sources)
        if missing != "error":
            continue
        shown = ", ".join(dict.fromkeys(s.shown for s in sources))
        n, sample = _merge(found, k, "extra")
        if n:
            raise ValueError(
                f"{shown}: {n} scored trial(s) are not in the key {key_name}, e.g. "
                f"{_samples(sample)}; use missing='drop' (focal: --missing drop) to skip them"
            )
        n, sample = _merge(found, k, "absent")
        if n:
            raise ValueError(
                f"{shown}: {n} trial(s) of the key {key_name} have no score, e.g. "
                f"{_samples(sample)}; use missing='drop' (focal: --missing drop) to skip them"
            )
    n_kept = sum(f.n_kept for f in found)
    if n_kept == 0:
        files = ", ".join(dict.fromkeys(s.shown for sources in system_sources for s in sources))
        raise ValueError(
            f"no trial of the key {key_name} is in every score file ({files}): "
            "is it the key of these scores?"
        )
    return n_kept, sum(f.n_targets for f in found), sum(f.fingerprint for f in found) % 2**64


def aligned_parts(
    key, systems, *, missing="error", pos_label=None, n_buckets=None, format=None, key_format=None
):
    """The delayed parts of :func:`read_trials`: ``(parts, check)`` where ``parts`` are
    ``(X, y)`` per bucket and ``check`` is :func:`check_alignment` of every bucket's findings
    (it raises the join's error, or gives the numbers of trials and targets kept).
    """
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")
    system_files = [expand_paths(s, "scores") for s in systems]
    if not system_files:
        raise ValueError("read_trials needs at least one system's score files")
    layout = score_layout(format)
    if key is None:  # the first system's files carry the labels
        if not layout.has("label"):
            raise ValueError(
                f"no key given, and the {layout.name} score files have no label "
                f"column: give the key file (--key)"
            )
        key_files = system_files[0]
    else:
        key_files = expand_paths(key, "key")
    key_layout = default_key_format(format) if key_format is None else key_format
    if n_buckets is None:
        n_buckets = max(len(key_files), *(len(f) for f in system_files))
    n_buckets = int(n_buckets)
    if n_buckets < 1:
        raise ValueError(f"n_buckets must be a positive integer, got {n_buckets}")
    key_sources = [_Source("key", f, key_layout, pos_label) for f in key_files]
    system_sources = [[_Source("scores", f, layout) for f in files] for files in system_files]
    read = delayed(_read_split, nout=n_buckets, pure=True)
    key_parts = [read(s, i, n_buckets) for i, s in enumerate(key_sources)]
    sys_parts = [[read(s, i, n_buckets) for i, s in enumerate(ss)] for ss in system_sources]
    n_sys = len(system_files)
    align = delayed(_align_bucket, nout=3, pure=True)
    parts, found = [], []
    for j in range(n_buckets):
        per_system = [[p[j] for p in files] for files in sys_parts]
        # interleave: system k's pieces at positions k, k + n_sys, ...
        width = max(len(p) for p in per_system)
        flat = []
        for i in range(width):
            for k in range(n_sys):
                flat.append(per_system[k][i] if i < len(per_system[k]) else _EMPTY)
        X, y, f = align(n_sys, missing, [p[j] for p in key_parts], *flat)
        parts.append((X, y))
        found.append(f)
    check = delayed(check_alignment, pure=True)(missing, key_sources, system_sources, *found)
    return parts, check


def _checked(part, check):
    """``part``, once ``check`` (every bucket's findings) has passed."""
    return part


def read_trials(
    key,
    systems,
    *,
    missing: str = "error",
    pos_label=None,
    n_buckets=None,
    format=None,
    key_format=None,
):
    """Scores of several systems aligned with a key, as lazy dask arrays (files > memory).

    Parameters
    ----------
    key : path, glob pattern, or list of them, or None
        Key files (``model test target|nontarget`` lines); each file is one partition. None:
        the first system's score files carry the labels (``format="wespeaker"``, ...).
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
    format, key_format : str or Layout, optional
        Columns of the score files and of the key files (:func:`focal.io.read_scores`).

    Returns
    -------
    X : dask array, shape (n_trials, n_systems)
        Scores, one column per system; trials grouped by bucket (chunk sizes unknown until
        computed).
    y : dask array of bool, shape (n_trials,)
        True for target trials; partitions lined up with ``X``.

    Notes
    -----
    Computing ``X`` or ``y`` raises the errors of the single-process join (repeated trials
    within or across files, missing trials), whichever partition holds them.
    """
    import dask.array as da

    parts, check = aligned_parts(
        key,
        systems,
        missing=missing,
        pos_label=pos_label,
        n_buckets=n_buckets,
        format=format,
        key_format=key_format,
    )
    n_sys = len(systems)
    checked = delayed(_checked, pure=True)
    xs = [da.from_delayed(checked(X, check), (np.nan, n_sys), dtype=float) for X, _ in parts]
    ys = [da.from_delayed(checked(y, check), (np.nan,), dtype=bool) for _, y in parts]
    return da.concatenate(xs), da.concatenate(ys)


_EMPTY = (
    np.empty(0, dtype="S8"),
    np.empty(0, dtype="S8"),
    np.empty(0),
    np.empty(0, dtype=np.int32),
    np.empty(0, dtype=np.int64),
)
