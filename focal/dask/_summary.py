"""The distributed computation behind every binary measure of :mod:`focal.dask`.

One task graph, three stages, each a call into :mod:`focal.core.summary`:

1. per input partition: validate, split by class, sort each class (two ``np.sort``), add up the
   :class:`~focal.core.summary.TrialSums` and take a small quantile sketch of the scores;
2. cut the score axis at weighted quantiles of the pooled sketches (``cuts``; range ``j`` holds
   ``cuts[j-1] <= s < cuts[j]``, so tied scores always fall in one range) and send each sorted
   partition's slice of range ``j`` to the task of range ``j`` (a shuffle by value);
3. per range: one PAV (:func:`~focal.core.summary.summarize_sorted`), a few hundred blocks; the
   client merges the range summaries in order (:func:`~focal.core.summary.merge`).

Labels travel implicitly (each class is its own sorted array), so the shuffle moves 8 bytes a
trial. The sorted partitions wait in the workers until the cut points are known and the slices
until their range is summarized: together they are the size of the scores, spread over the
workers (and spilled to disk by dask past each worker's memory limit). Each task needs memory for
one partition or one range only; the client receives only the summaries.
"""

from __future__ import annotations

import numpy as np
from dask import delayed

from ..core.summary import (
    ScoreSummary,
    TrialSums,
    check_trials,
    distinct_counts,
    merge,
    summarize,
    summarize_sorted,
    trial_sums,
)
from ._partitions import aligned_blocks, compute

_SKETCH = 1024  # sketch points per class and partition
_MAX_DEFAULT_RANGES = 128


class _Part:
    """One validated partition, each class sorted (with multiplicities when weighted)."""

    __slots__ = ("tar", "non", "tw", "nw")

    def __init__(self, tar, non, tw=None, nw=None):
        self.tar, self.non, self.tw, self.nw = tar, non, tw, nw


def _prepare(index, s, y, w, p_targets, thresholds):
    try:
        s, y, w = check_trials(np.asarray(s), np.asarray(y), None if w is None else np.asarray(w))
    except ValueError as exc:
        raise ValueError(f"partition {index}: {exc}") from None
    if w is None:
        tar, non = s[y], s[~y]
        tar.sort()
        non.sort()
        part = _Part(tar, non)
        sums = trial_sums(
            None, None, p_targets=p_targets, thresholds=thresholds, sorted_tar=tar, sorted_non=non
        )
    else:
        keep = w > 0
        tar, tw = distinct_counts(s[y & keep], w[y & keep])
        non, nw = distinct_counts(s[~y & keep], w[~y & keep])
        part = _Part(tar, non, tw, nw)
        sums = trial_sums(s, y, w, p_targets=p_targets, thresholds=thresholds)
    return part, sums, _sketch(part)


def _sketch(part):
    """Evenly spaced order statistics of each class, each standing for its share of trials."""
    values, weights = [], []
    for x, cw in ((part.tar, part.tw), (part.non, part.nw)):
        if x.size == 0:
            continue
        k = min(x.size, _SKETCH)
        idx = np.linspace(0, x.size - 1, k).round().astype(np.int64)
        total = x.size if cw is None else float(cw.sum())
        values.append(x[idx])
        weights.append(np.full(k, total / k))
    if not values:
        return np.empty(0), np.empty(0)
    return np.concatenate(values), np.concatenate(weights)


def _cuts(n_ranges, *sketches):
    """Cut points at weighted quantiles of the pooled sketches: distinct and increasing."""
    values = np.concatenate([v for v, _ in sketches])
    weights = np.concatenate([w for _, w in sketches])
    if values.size == 0 or n_ranges <= 1:
        return np.empty(0)
    order = np.argsort(values, kind="stable")
    values, cum = values[order], np.cumsum(weights[order])
    levels = cum[-1] * np.arange(1, n_ranges) / n_ranges
    cuts = np.unique(values[np.minimum(np.searchsorted(cum, levels), values.size - 1)])
    return cuts[cuts > values[0]]  # a cut at the minimum would leave range 0 empty


def _split(part, cuts):
    """Slices of each sorted class falling in each range ``[cuts[j-1], cuts[j])``."""
    out = []
    bounds = [
        np.concatenate(([0], np.searchsorted(x, cuts, side="left"), [x.size]))
        for x in (part.tar, part.non)
    ]
    for j in range(cuts.size + 1):
        (a, b), (c, d) = bounds[0][j : j + 2], bounds[1][j : j + 2]
        if part.tw is None:
            out.append(_Part(part.tar[a:b], part.non[c:d]))
        else:
            out.append(_Part(part.tar[a:b], part.non[c:d], part.tw[a:b], part.nw[c:d]))
    return tuple(out)


def _range_summary(keep_runs, *pieces):
    """PAV summary of one score range from the slices of every partition."""
    if pieces[0].tw is None:
        tar = np.sort(np.concatenate([p.tar for p in pieces]), kind="stable")
        non = np.sort(np.concatenate([p.non for p in pieces]), kind="stable")
        return summarize_sorted(tar, non, keep_runs)
    n_tar = sum(p.tar.size for p in pieces)
    scores = np.concatenate([p.tar for p in pieces] + [p.non for p in pieces])
    labels = np.arange(scores.size) < n_tar
    weights = np.concatenate([p.tw for p in pieces] + [p.nw for p in pieces])
    return summarize(scores, labels, weights, keep_runs=keep_runs)


def _add_sums(*sums):
    total = sums[0]
    for s in sums[1:]:
        total = total + s
    return total


def summary_graph(
    scores,
    labels,
    sample_weight=None,
    *,
    p_targets=(),
    thresholds=(),
    keep_runs=False,
    n_ranges=None,
):
    """Delayed ``(ScoreSummary, TrialSums)`` of trials held in dask collections."""
    blocks = aligned_blocks(scores, labels, sample_weight)
    p_targets = np.atleast_1d(np.asarray(p_targets, dtype=float))
    thresholds = np.atleast_1d(np.asarray(thresholds, dtype=float))
    empty = TrialSums.empty(p_targets, thresholds)  # validates priors and thresholds up front
    if n_ranges is None:  # P x n_ranges small tasks move the slices: keep it in check
        n_ranges = max(1, min(len(blocks), _MAX_DEFAULT_RANGES))
    elif not (isinstance(n_ranges, (int, np.integer)) and n_ranges >= 1):
        raise ValueError(f"n_ranges must be a positive integer, got {n_ranges!r}")
    prepare = delayed(_prepare, nout=3, pure=True)
    prepared = [
        prepare(i, s, y, w, empty.p_targets, empty.thresholds) for i, (s, y, w) in enumerate(blocks)
    ]
    cuts = delayed(_cuts, pure=True)(int(n_ranges), *[sk for _, _, sk in prepared])
    n_out = int(n_ranges)  # the most ranges the cuts can make; extra ones are empty
    split = delayed(_split_padded, nout=n_out, pure=True)
    pieces = [split(part, cuts, n_out) for part, _, _ in prepared]
    ranges = [
        delayed(_range_summary, pure=True)(keep_runs, *[p[j] for p in pieces]) for j in range(n_out)
    ]
    summary = delayed(merge, pure=True)(ranges, keep_runs)
    sums = delayed(_add_sums, pure=True)(empty, *[s for _, s, _ in prepared])
    return summary, sums


def _split_padded(part, cuts, n_out):
    out = _split(part, cuts)
    pad = _Part(
        part.tar[:0], part.non[:0], *(() if part.tw is None else (part.tw[:0], part.nw[:0]))
    )
    return out + (pad,) * (n_out - len(out))


def summarize_dask(scores, labels, sample_weight=None, **kwargs) -> tuple[ScoreSummary, TrialSums]:
    """Compute :func:`summary_graph` now (on the active scheduler)."""
    return compute(*summary_graph(scores, labels, sample_weight, **kwargs))
