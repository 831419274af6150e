"""Dask collections in, per-partition NumPy blocks out (one delayed object per partition)."""

from __future__ import annotations

import numpy as np


def _is_dask(x) -> bool:
    return hasattr(x, "__dask_graph__") and x.__dask_graph__() is not None


def _is_frame(x) -> bool:
    return hasattr(x, "npartitions") and hasattr(x, "map_partitions")


def _same_chunks(a, b) -> bool:
    """Equal chunk tuples, unknown (NaN) sizes matching unknown ones (same producer's layout)."""
    return len(a) == len(b) and all(x == y or (np.isnan(x) and np.isnan(y)) for x, y in zip(a, b))


def column_blocks(x, name: str, chunks=None):
    """One delayed NumPy-able block per partition of a 1-D dask array / Series (or array_like).

    Returns ``(blocks, chunks)``: ``chunks`` are the partition lengths when known (dask arrays),
    else None. ``chunks`` given: a dask array is rechunked to them, so partitions line up.
    """
    if x is None:
        return None, chunks
    if not _is_dask(x):
        import dask.array as da

        arr = np.asarray(x)
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
        x = da.from_array(arr, chunks=chunks if chunks is not None else max(arr.size, 1))
    if _is_frame(x):
        if getattr(x, "ndim", 1) != 1:
            raise ValueError(
                f"{name} must be one column (a dask Series or 1-D dask array), "
                f"got a DataFrame with columns {list(x.columns)!r}"
            )
        return list(x.to_delayed()), None
    if x.ndim != 1:
        raise ValueError(f"{name} must be a 1-D dask array, got shape {x.shape}")
    if chunks is not None and not _same_chunks(x.chunks[0], chunks):
        if any(np.isnan(c) for c in x.chunks[0] + tuple(chunks)):
            raise ValueError(
                f"{name} has unknown chunk sizes that differ from the scores'; "
                "call compute_chunk_sizes() first"
            )
        x = x.rechunk({0: chunks})
    return list(x.to_delayed().ravel()), x.chunks[0]


def aligned_blocks(scores, labels, sample_weight=None, names=("scores", "labels")):
    """Per-partition delayed ``(scores, labels[, weights])`` blocks, partitions lined up."""
    s_blocks, chunks = column_blocks(scores, names[0])
    y_blocks, _ = column_blocks(labels, names[1], chunks)
    w_blocks, _ = column_blocks(sample_weight, "sample_weight", chunks)
    for other, name in ((y_blocks, names[1]), (w_blocks, "sample_weight")):
        if other is not None and len(other) != len(s_blocks):
            raise ValueError(
                f"{names[0]} has {len(s_blocks)} partitions but {name} has "
                f"{len(other)}: they must come from the same collection"
            )
    if w_blocks is None:
        w_blocks = [None] * len(s_blocks)
    return list(zip(s_blocks, y_blocks, w_blocks))


def compute(*objects):
    """``dask.compute`` on the active scheduler (a ``distributed.Client`` when one is open)."""
    import dask

    return dask.compute(*objects)


__all__ = [
    "column_blocks",
    "aligned_blocks",
    "compute",
]
