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

The algorithm
-------------
Exact, with no Python loop over detections: candidate slices of the detections sorted by
(query, file, channel, mid point), and a maximum-weight bipartite matching of the few
components where several detections compete for several occurrences
(:mod:`focal.std.matching`).

References
----------
.. [1] :cite:t:`sws2013measures` ("SWS plan").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..core.operating_point import OperatingPoint
from .matching import candidate_ranges, match_candidates
from .model import STDTask, codes_over

__all__ = [
    "TIME_SLACK",
    "AlignedTrials",
    "Sweep",
    "QueryCounts",
    "align",
    "resolve_operating_point",
]

TIME_SLACK = 1e-9
"""Seconds added to the tolerance so that decimal times exactly ``tolerance`` apart still align."""


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
        """``|Q|``, the number of evaluated queries."""
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


def resolve_operating_point(operating_point, trials: AlignedTrials) -> OperatingPoint:
    """An :class:`~focal.core.operating_point.OperatingPoint` from what the caller gave.

    Accepts an ``OperatingPoint``, a tuple ``(P_target, C_miss, C_fa)``, a bare prior (unit
    costs), or a name of :data:`OperatingPoint.NAMES`; ``"sws2012"`` is the data-dependent
    point ``OperatingPoint.sws2012(trials.n_true, trials.n_trials)``: ``P_target = N_true /
    (n_tps T_audio)``, ``C_miss = C_fa = 1`` (plan eqs. 17-18).
    """
    if isinstance(operating_point, str):
        return OperatingPoint.named(operating_point, trials.n_true, trials.n_trials)
    return OperatingPoint.coerce(operating_point)
