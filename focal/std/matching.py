"""Which detections align with which occurrences: candidate slices and the matching (SWS plan
sec. 2.1; the rule is stated in :mod:`focal.std.alignment`).

Detections are sorted once by (query, file, channel, mid point); each occurrence's candidates are
then one contiguous slice ``[lo, hi)`` of that order, found by binary search on integer time ranks
(exact comparisons). Slices that share a detection are merged into connected components by one
sweep. Nearly all components are trivial and are solved in bulk: a single detection is aligned
with one of its occurrences; a single occurrence takes its highest-scoring candidate. Each of the
others (several detections competing for several occurrences) is solved exactly as a
maximum-weight bipartite matching with detection weights strictly increasing in score (scipy's
Hungarian method, or LAPJVsp for very large components): in a matroid, any strictly increasing
positive weights make the maximum-weight independent set the greedy basis, so this is exactly
rule 4 of :mod:`focal.std.alignment`. Only these few components are visited by a Python loop.

References
----------
.. [1] :cite:t:`sws2013measures` ("SWS plan").
.. [2] D. Gale, "Optimal assignments in an ordered set: an application of matroid theory",
   Journal of Combinatorial Theory 4(2), 176-178, 1968.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.sparse import csr_array
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

__all__ = ["candidate_ranges", "match_candidates"]


def _concat_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + n) for s, n in zip(starts, lengths)])`` without a loop."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(np.asarray(starts, dtype=np.int64) - offsets, lengths) + np.arange(total)


def candidate_ranges(det_group, det_mid, occ_group, occ_lo, occ_hi):
    """Sort the detections once and find each occurrence's candidates as a slice of that order.

    Parameters
    ----------
    det_group, occ_group : ndarray of int64
        Group code (query, file, channel) of each detection / occurrence.
    det_mid : ndarray of float
        Mid point of each detection, seconds.
    occ_lo, occ_hi : ndarray of float
        Window of each occurrence, seconds: candidates have ``occ_lo <= mid <= occ_hi``.

    Returns
    -------
    order : ndarray of int64
        Permutation sorting the detections by (group, mid).
    lo, hi : ndarray of int64
        Occurrence k's candidates are ``order[lo[k]:hi[k]]``.

    Times are replaced by their rank among the distinct mid points, so the composite
    (group, time) keys are exact integers and every comparison is the exact float comparison.
    """
    mids = np.unique(det_mid)
    n_ranks = np.int64(mids.size + 1)
    key = det_group * n_ranks + np.searchsorted(mids, det_mid)
    order = np.argsort(key, kind="stable")
    key = key[order]
    base = occ_group * n_ranks
    lo = np.searchsorted(key, base + np.searchsorted(mids, occ_lo, side="left"), side="left")
    hi = np.searchsorted(key, base + np.searchsorted(mids, occ_hi, side="right"), side="left")
    return order, lo.astype(np.int64), hi.astype(np.int64)


def _segment_argmax(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """First position of the maximum of ``values[lo[k]:hi[k]]`` for each non-empty segment k."""
    lengths = hi - lo
    pos = _concat_ranges(lo, lengths)
    v = values[pos]
    seg_start = np.cumsum(lengths) - lengths
    top = np.maximum.reduceat(v, seg_start)
    is_top = np.flatnonzero(v == np.repeat(top, lengths))
    seg = np.repeat(np.arange(lo.size), lengths)[is_top]
    first = np.ones(is_top.size, dtype=bool)
    first[1:] = seg[1:] != seg[:-1]
    return pos[is_top[first]]


_DENSE_LIMIT = 1 << 22
"""Largest component (detections x occurrences) solved as a dense assignment problem."""


def _match_component(weight, lo, hi):
    """Maximum-weight matching of one component: ``len(weight)`` detections, occurrence j
    adjacent to detections ``lo[j] <= r < hi[j]``; all weights > 0 (see the module docstring).

    Returns matched (row, occurrence) pairs. Dense components use the Hungarian method
    (``linear_sum_assignment``; non-edges weigh 0, so an assignment restricted to real edges is
    a matching of the same weight); larger ones the sparse LAPJVsp with one private zero-value
    partner per detection (``min_weight_full_bipartite_matching`` needs a full matching).
    """
    n_det, n_occ = weight.size, lo.size
    if n_det * n_occ <= _DENSE_LIMIT:
        r = np.arange(n_det)[:, None]
        adjacent = (r >= lo) & (r < hi)
        rows, cols = linear_sum_assignment(np.where(adjacent, weight[:, None], 0.0), maximize=True)
        real = adjacent[rows, cols]
        return rows[real], cols[real]
    n_cand = hi - lo
    rows = _concat_ranges(lo, n_cand)
    cols = np.repeat(np.arange(n_occ), n_cand)
    graph = csr_array(
        (
            np.concatenate([weight[rows] + 1.0, np.ones(n_det)]),
            (
                np.concatenate([rows, np.arange(n_det)]),
                np.concatenate([cols, n_occ + np.arange(n_det)]),
            ),
        ),
        shape=(n_det, n_occ + n_det),
    )
    # scipy < 1.15 accepts only 32-bit sparse indices here ("Buffer dtype mismatch, expected
    # 'ITYPE_t'"); a component that fits in memory has far fewer than 2**31 edges
    graph.indices = graph.indices.astype(np.int32, copy=False)
    graph.indptr = graph.indptr.astype(np.int32, copy=False)
    rows, cols = min_weight_full_bipartite_matching(graph, maximize=True)
    real = cols < n_occ
    return rows[real], cols[real]


def _match_general(score_sorted, lo, hi, occ_ids, comp_lo, comp_hi, comp_first, comp_nocc):
    """Maximum-weight matching of each non-trivial component (a loop over components only)."""
    pos, occ = [], []
    for c_lo, c_hi, first, n in zip(
        comp_lo.tolist(), comp_hi.tolist(), comp_first.tolist(), comp_nocc.tolist()
    ):
        # weights: dense rank of the score within the component, from 1 (ties share a weight)
        _, rank = np.unique(score_sorted[c_lo:c_hi], return_inverse=True)
        rows, cols = _match_component(
            rank + 1.0, lo[first : first + n] - c_lo, hi[first : first + n] - c_lo
        )
        pos.append(rows + c_lo)
        occ.append(occ_ids[first + cols])
    return np.concatenate(pos), np.concatenate(occ)


def match_candidates(score_sorted, lo, hi):
    """Greedy-optimal maximum one-to-one matching of detections (sorted) with occurrences.

    Parameters
    ----------
    score_sorted : ndarray of float
        Scores of the detections in the sorted order of :func:`candidate_ranges`.
    lo, hi : ndarray of int64
        Candidate slice of each occurrence.

    Returns
    -------
    pos, occ : ndarray of int64
        Matched pairs: sorted detection position and occurrence index (rule 4 of
        :mod:`focal.std.alignment`: maximum cardinality, and as many high scores as possible
        at every threshold).
    """
    occ_ids = np.flatnonzero(hi > lo)
    empty = np.zeros(0, dtype=np.int64)
    if occ_ids.size == 0:
        return empty, empty
    order = np.lexsort((hi[occ_ids], lo[occ_ids]))
    occ_ids = occ_ids[order]
    lo, hi = lo[occ_ids], hi[occ_ids]
    reach = np.maximum.accumulate(hi)
    first = np.ones(lo.size, dtype=bool)
    first[1:] = lo[1:] >= reach[:-1]  # shares no detection with what came before
    comp_first = np.flatnonzero(first)
    comp_last = np.append(comp_first[1:], lo.size) - 1
    comp_lo = lo[comp_first]
    comp_hi = reach[comp_last]
    comp_nocc = comp_last - comp_first + 1
    comp_ndet = comp_hi - comp_lo

    one_det = comp_ndet == 1
    one_occ = (comp_nocc == 1) & ~one_det
    general = ~(one_det | one_occ)
    pos = [comp_lo[one_det], _segment_argmax(score_sorted, comp_lo[one_occ], comp_hi[one_occ])]
    occ = [occ_ids[comp_first[one_det]], occ_ids[comp_first[one_occ]]]
    if general.any():
        g_pos, g_occ = _match_general(
            score_sorted,
            lo,
            hi,
            occ_ids,
            comp_lo[general],
            comp_hi[general],
            comp_first[general],
            comp_nocc[general],
        )
        pos.append(g_pos)
        occ.append(g_occ)
    return np.concatenate(pos).astype(np.int64), np.concatenate(occ).astype(np.int64)
