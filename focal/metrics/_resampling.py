"""Bootstrap resampling as integer weights over trials: per class, by clusters, or two-way.

See :mod:`focal.metrics.bootstrap` for the schemes and references.
"""

from __future__ import annotations

import numpy as np

__all__ = []


class _Resampler:
    """Draws blocks of replicate weights over the trials.

    Without clusters, the trials of each stratum (class) are resampled alone, keeping its size;
    with one or two label arrays, clusters are drawn (two-way: independently, weights multiply).
    """

    def __init__(self, strata, ways):
        self.n = strata.size
        if ways is None:
            self.kind = "trial"
            self.strata = [np.flatnonzero(strata == c) for c in np.unique(strata)]
            self.ways = None
            return
        self.kind = "cluster" if len(ways) == 1 else "two-way"
        self.ways = [np.unique(w, return_inverse=True)[1].ravel() for w in ways]

    def draw(self, rng, size):
        if self.ways is None:
            w = np.zeros((size, self.n), dtype=np.int64)
            for idx in self.strata:
                w[:, idx] = _draw_counts(rng, idx.size, size)
            return w
        w = np.ones((size, self.n), dtype=np.int64)
        for codes in self.ways:
            w *= _draw_counts(rng, int(codes.max()) + 1, size)[:, codes]
        return w


def _draw_counts(rng, n, size):
    """``size`` rows of how often each of ``n`` units is drawn in ``n`` draws with replacement
    (multinomial counts), from uniform indices and one bincount: much faster than
    ``rng.multinomial`` over many categories.
    """
    idx = rng.integers(0, n, size=(size, n))
    idx += (np.arange(size) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=size * n).reshape(size, n)


def _as_ways(clusters, n, where):
    """Cluster labels as a list of one or two label arrays of length ``n``."""
    if isinstance(clusters, tuple) and len(clusters) == 2:
        ways = [np.asarray(c) for c in clusters]
    else:
        arr = np.asarray(clusters)
        ways = (
            [arr]
            if arr.ndim == 1
            else [arr[:, j] for j in range(arr.shape[1])]
            if arr.ndim == 2 and arr.shape[1] == 2
            else None
        )
        if ways is None:
            raise ValueError(
                f"{where} must be one label per trial, or two (model, test) label "
                f"arrays for two-way resampling, got shape {arr.shape}"
            )
    for w in ways:
        if w.ndim != 1 or w.shape[0] != n:
            raise ValueError(f"{where} needs one label per trial ({n}), got shape {w.shape}")
    return ways


def _joined_clusters(tar_clusters, non_clusters, n_tar, n_non):
    """The cluster labels of targets and non-targets concatenated (or None for trial-level)."""
    if (tar_clusters is None) != (non_clusters is None):
        raise ValueError("give both tar_clusters and non_clusters, or neither")
    if tar_clusters is None:
        return None
    t = _as_ways(tar_clusters, n_tar, "tar_clusters")
    n = _as_ways(non_clusters, n_non, "non_clusters")
    if len(t) != len(n):
        raise ValueError("tar_clusters and non_clusters must both be one-way or both two-way")
    return [np.concatenate((a, b)) for a, b in zip(t, n)]
