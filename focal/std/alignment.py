"""Alignment of system detections with reference occurrences (SWS plan sec. 2.1; NIST STD 2006).

The rule
--------
1. *Candidates.* A detection of query q may be aligned with an occurrence of q in the same file
   (and channel) when its mid point ``m = tbeg + dur / 2`` is at most ``tolerance`` seconds
   (0.5 s) from the occurrence's time span: ``o.tbeg - tol <= m <= o.tbeg + o.dur + tol``. A
   slack of :data:`TIME_SLACK` (1 ns) absorbs the rounding of decimal times, so a mid point
   written exactly 0.5 s from the span is always aligned.
2. *One-to-one.* Each detection is aligned with at most one occurrence and vice versa.
3. *Maximum.* The number of alignments is as large as possible.
4. *Higher scores first* (``prefer="score"``, the default). Among the maximum alignments we take
   one whose set of aligned detections
   is the greedy basis, by decreasing score, of the transversal matroid of the candidate graph
   (the matchable sets of detections). By Gale's theorem (1968) this set is *optimal at every
   threshold*: for every theta, the number of aligned detections with ``score >= theta`` is the
   largest that any one-to-one alignment achieves. So hits are maximal, and false alarms minimal,
   at every operating point at once; one threshold-independent alignment serves ATWV, MTWV and
   every DET point, and the hit / false-alarm counts are unique even when scores tie (which of
   two tied detections is aligned is arbitrary but deterministic).

   The plan (sec. 2.1) leaves open which of two competing detections is aligned, which matters
   when YES/NO decisions are not monotone in score: a NO at a higher score then takes the
   occurrence, so ATWV counts a miss and the lower-scored YES as a false alarm.
   ``prefer="decision"`` ranks by (decision, score) instead: the same argument then aligns as
   many YES detections as any alignment can (best ATWV), but the one alignment shared with
   MTWV, the DET curve and C_nxe is no longer optimal at every threshold. Both rules agree
   when decisions are monotone in score.

The algorithm (exact, no loop over detections)
-----------------------------------------------
Detections are sorted once by (query, file, channel, mid point); each occurrence's candidates are
then one contiguous slice ``[lo, hi)`` of that order, found by binary search on integer time ranks
(exact comparisons). Slices that share a detection are merged into connected components by one
sweep. Nearly all components are trivial and are solved in bulk: a single detection is aligned
with one of its occurrences; a single occurrence takes its highest-scoring candidate. Each of the
others (several detections competing for several occurrences) is solved exactly as a
maximum-weight bipartite matching with detection weights strictly increasing in score (scipy's
Hungarian method, or LAPJVsp for very large components): in a matroid, any strictly increasing
positive weights make the maximum-weight independent set the greedy basis, so this is exactly
rule 4. Only these few components are visited by a Python loop.

References
----------
.. [1] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
   Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.sparse import csr_array
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

from .model import STDTask, codes_over

__all__ = ["TIME_SLACK", "AlignedTrials", "Sweep", "QueryCounts", "align", "match_candidates"]

TIME_SLACK = 1e-9
"""Seconds added to the tolerance so that decimal times exactly ``tolerance`` apart still align."""


# ---------------------------------------------------------------------------------------------
# pure helpers on arrays


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
        Matched pairs: sorted detection position and occurrence index (rule 4 of the module
        docstring: maximum cardinality, and as many high scores as possible at every threshold).
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


# ---------------------------------------------------------------------------------------------
# the aligned trial set


@dataclass(frozen=True)
class QueryCounts:
    """Hits and false alarms of each evaluated query for one set of accepted detections.

    ``n_misses = n_act - n_hits``; ``p_miss = n_misses / n_act`` (plan eq. 1) and
    ``p_fa = n_false_alarms / n_nontarget`` (eq. 3), one entry per query.

    Attributes
    ----------
    n_hits, n_false_alarms : ndarray of int
        Accepted aligned and accepted unaligned detections of each query.
    n_act : ndarray of int
        Reference occurrences of each query.
    n_nontarget : ndarray
        Non-target trials of each query (plan eq. 3).
    """

    n_hits: np.ndarray
    n_false_alarms: np.ndarray
    n_act: np.ndarray
    n_nontarget: np.ndarray

    @property
    def n_misses(self) -> np.ndarray:
        """Missed occurrences of each query."""
        return self.n_act - self.n_hits

    @property
    def p_miss(self) -> np.ndarray:
        """Miss rate of each query (plan eq. 1)."""
        return self.n_misses / self.n_act

    @property
    def p_fa(self) -> np.ndarray:
        """False-alarm rate of each query (plan eq. 3)."""
        return self.n_false_alarms / self.n_nontarget


@dataclass(frozen=True, eq=False)
class Sweep:
    """Error rates at every distinct score threshold, from one descending sort of the scores.

    Point ``k`` accepts the detections with ``score >= thresholds[k]``; ``thresholds`` decrease.
    ``p_miss`` and ``p_fa`` are the averages over queries (plan eqs. 4-5); ``n_hits`` and
    ``n_false_alarms`` the totals. The all-reject point (theta = +inf: P_miss = 1, P_fa = 0) is
    not included.

    Attributes
    ----------
    thresholds : ndarray
        The distinct scores, decreasing.
    p_miss, p_fa : ndarray
        Miss and false-alarm rates averaged over queries at each threshold.
    n_hits, n_false_alarms : ndarray of int
        Total hits and false alarms at each threshold.
    """

    thresholds: np.ndarray
    p_miss: np.ndarray
    p_fa: np.ndarray
    n_hits: np.ndarray
    n_false_alarms: np.ndarray


@dataclass(frozen=True, eq=False)
class AlignedTrials:
    """The detections of the evaluated queries after alignment: what every measure is computed from.

    Evaluated queries are those with at least one reference occurrence (plan footnote 1); the
    other queries, and their detections, are listed in ``excluded_queries`` /
    ``excluded_detections``.

    Attributes
    ----------
    queries : tuple
        Ids of the evaluated queries Q.
    n_act : ndarray of int64
        N_act(q): reference occurrences (target trials) of each evaluated query.
    n_trials : float
        N = n_tps * T_audio trials per query (plan eq. 2).
    query : ndarray of int64
        For each detection of an evaluated query: its index into ``queries``.
    score : ndarray of float
    decision : ndarray of bool or None
    hit : ndarray of bool
        Whether the detection is aligned with an occurrence (a hit when accepted).
    detection_occurrence : ndarray of int64
        For every input detection (task order): index of its aligned occurrence in
        ``task.reference``, or -1.
    excluded_queries : tuple
        Query ids with no reference occurrence.
    excluded_detections : ndarray of int64
        Number of detections of each excluded query.
    excluded_score : ndarray of float
        Scores of those detections (all non-target trials; used by the C_nxe variant that
        keeps every query, :func:`focal.std.cnxe` with ``queries="all"``).
    tolerance, t_audio, n_tps : float
    """

    queries: tuple
    n_act: np.ndarray
    n_trials: float
    query: np.ndarray
    score: np.ndarray
    decision: np.ndarray | None
    hit: np.ndarray
    detection_occurrence: np.ndarray
    excluded_queries: tuple
    excluded_detections: np.ndarray
    excluded_score: np.ndarray
    tolerance: float
    t_audio: float
    n_tps: float

    @property
    def n_queries(self) -> int:
        """|Q|, the number of evaluated queries."""
        return len(self.queries)

    @property
    def n_true(self) -> int:
        """N_true: reference occurrences of all evaluated queries (plan eq. 17)."""
        return int(self.n_act.sum())

    @property
    def n_nontarget(self) -> np.ndarray:
        """N_nt(q) = n_tps T_audio - N_act(q), non-target trials of each query (plan eq. 2)."""
        return self.n_trials - self.n_act

    @property
    def n_detections(self) -> int:
        """Detections of the evaluated queries."""
        return int(self.score.size)

    @property
    def n_aligned(self) -> int:
        """Number of detections aligned with an occurrence."""
        return int(np.count_nonzero(self.hit))

    def occurrence_detection(self, n_occurrences: int) -> np.ndarray:
        """For each reference occurrence: index of its aligned detection (task order), or -1.

        Parameters
        ----------
        n_occurrences : int
            Number of reference occurrences of the task.

        Returns
        -------
        ndarray of int64, shape (n_occurrences,)
            The detection index of each occurrence, -1 when none is aligned.
        """
        out = np.full(n_occurrences, -1, dtype=np.int64)
        det = np.flatnonzero(self.detection_occurrence >= 0)
        out[self.detection_occurrence[det]] = det
        return out

    def counts(self, accept) -> QueryCounts:
        """Per-query hits and false alarms when the detections where ``accept`` is True say YES.

        The plan's three rules (sec. 2.1): an accepted aligned detection is a hit, an accepted
        unaligned one a false alarm, everything else of the reference a miss.

        Parameters
        ----------
        accept : array_like of bool, shape (n_detections,)
            The YES decisions.

        Returns
        -------
        QueryCounts
            Hits and false alarms of each query.
        """
        accept = np.asarray(accept, dtype=bool)
        if accept.shape != self.score.shape:
            raise ValueError(
                f"accept must have one entry per evaluated detection "
                f"({self.score.size}), got shape {accept.shape}"
            )
        q = self.n_queries
        hits = np.bincount(self.query[accept & self.hit], minlength=q)
        fas = np.bincount(self.query[accept & ~self.hit], minlength=q)
        return QueryCounts(hits, fas, self.n_act, self.n_nontarget)

    @cached_property
    def sweep(self) -> Sweep:
        """Error rates at every distinct score, from one sort (shared by MTWV and the DET curve)."""
        q = self.n_queries
        order = np.argsort(-self.score, kind="stable")
        s = self.score[order]
        hit = self.hit[order]
        qi = self.query[order]
        ends = (
            np.append(np.flatnonzero(s[1:] != s[:-1]), s.size - 1)
            if s.size
            else np.zeros(0, dtype=np.int64)
        )
        hit_w = np.where(hit, 1.0 / (q * self.n_act[qi]), 0.0)
        fa_w = np.where(hit, 0.0, 1.0 / (q * self.n_nontarget[qi]))
        return Sweep(
            thresholds=s[ends],
            p_miss=np.maximum(1.0 - np.cumsum(hit_w)[ends], 0.0),
            p_fa=np.cumsum(fa_w)[ends],
            n_hits=np.cumsum(hit)[ends],
            n_false_alarms=np.cumsum(~hit)[ends],
        )


ALIGNMENT_PREFERENCES = ("score", "decision")


def align(task: STDTask, tolerance: float = 0.5, prefer: str = "score") -> AlignedTrials:
    """Align the detections of ``task`` with its reference occurrences (plan sec. 2.1).

    Parameters
    ----------
    task : STDTask
        The detections, the reference and the evaluated queries.
    tolerance : float
        Largest distance, in seconds, between a detection's mid point and an occurrence's time
        span for the two to be aligned (0.5 s in NIST STD 2006 and SWS 2013).
    prefer : {"score", "decision"}
        Which of competing detections to align (module docstring, rule 4): higher scores
        first (default), or YES decisions first and then higher scores (needs decisions).

    Returns
    -------
    AlignedTrials
        Computed once, independent of any threshold (see the module docstring for the rule).

    Raises
    ------
    ValueError
        Bad tolerance; channels given for only one of detections / reference; a query with
        ``N_act(q) >= n_tps T_audio``; or a query with more unaligned detections than non-target
        trials ``N_nt(q)`` (the trial model of plan eq. 2 then breaks: raise ``n_tps``).
    """
    tol = float(tolerance)
    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tolerance must be a finite number of seconds >= 0, got {tolerance!r}")
    det, ref = task.detections, task.reference
    if (det.channel is None) != (ref.channel is None):
        raise ValueError("give channels for both the detections and the reference, or for neither")
    if prefer not in ALIGNMENT_PREFERENCES:
        raise ValueError(f"prefer must be one of {ALIGNMENT_PREFERENCES}, got {prefer!r}")
    priority = det.score
    if prefer == "decision":
        if det.decision is None:
            raise ValueError('prefer="decision" needs YES/NO decisions in the detections')
        rank = np.unique(det.score, return_inverse=True)[1].ravel()  # every YES above any NO
        priority = (rank + det.decision.astype(np.int64) * (rank.size + 1)).astype(float)

    (dq, rq), queries = codes_over(det.query, ref.query, order=task.queries)
    (df, rf), files = codes_over(det.file, ref.file)
    n_files = max(len(files), 1)
    d_key = dq * n_files + df
    r_key = rq * n_files + rf
    if det.channel is not None:
        (dc, rc), channels = codes_over(det.channel, ref.channel)
        d_key = d_key * len(channels) + dc
        r_key = r_key * len(channels) + rc
    _, group = np.unique(np.concatenate([d_key, r_key]), return_inverse=True)
    d_group, r_group = group[: len(det)], group[len(det) :]

    slack = tol + TIME_SLACK
    order, lo, hi = candidate_ranges(
        d_group, det.mid, r_group, ref.tbeg - slack, ref.tbeg + ref.dur + slack
    )
    pos, occ = match_candidates(priority[order], lo, hi)
    detection_occurrence = np.full(len(det), -1, dtype=np.int64)
    detection_occurrence[order[pos]] = occ

    n_act_all = np.bincount(rq, minlength=len(queries))
    det_per_query = np.bincount(dq, minlength=len(queries))
    evaluated = n_act_all > 0
    new_index = np.cumsum(evaluated) - 1
    keep = evaluated[dq]
    trials = AlignedTrials(
        queries=tuple(q for q, e in zip(queries, evaluated.tolist()) if e),
        n_act=n_act_all[evaluated],
        n_trials=task.n_trials,
        query=new_index[dq[keep]],
        score=det.score[keep],
        decision=None if det.decision is None else det.decision[keep],
        hit=detection_occurrence[keep] >= 0,
        detection_occurrence=detection_occurrence,
        excluded_queries=tuple(q for q, e in zip(queries, evaluated.tolist()) if not e),
        excluded_detections=det_per_query[~evaluated],
        excluded_score=det.score[~keep],
        tolerance=tol,
        t_audio=task.t_audio,
        n_tps=task.n_tps,
    )
    _check_trial_model(trials)
    return trials


def _check_trial_model(trials: AlignedTrials):
    n_nt = trials.n_nontarget
    if (n_nt <= 0).any():
        i = int(np.flatnonzero(n_nt <= 0)[0])
        raise ValueError(
            f"query {trials.queries[i]!r} has N_act={int(trials.n_act[i])} occurrences but only "
            f"n_tps*T_audio={trials.n_trials:g} trials; check t_audio and n_tps"
        )
    unaligned = np.bincount(trials.query[~trials.hit], minlength=trials.n_queries)
    over = unaligned > n_nt
    if over.any():
        i = int(np.flatnonzero(over)[0])
        raise ValueError(
            f"query {trials.queries[i]!r} has {int(unaligned[i])} unaligned detections but only "
            f"N_nt={n_nt[i]:g} non-target trials (n_tps*T_audio - N_act, plan eq. 2); "
            f"increase n_tps"
        )
