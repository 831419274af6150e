"""Block summaries of score ranges: exact binary evaluation of score sets of any size, any engine.

Every threshold measure of focal (minCllr, ROCCH, EER, minDCF, PRBEP, AUC, the minimum Bayes
error-rates, the DET points of the hull) is read off the PAV blocks of the pooled scores (thesis
sec. 7.3.6 and 7.7.3). PAV is exactly decomposable: if the scores are cut into *contiguous score
ranges* (every score of range ``j`` below every score of range ``j + 1``, so tied scores are
never split), then the PAV of all the trials equals the PAV of the concatenated per-range PAV
blocks, because pooling adjacent violators in any order reaches the same solution (thesis
app. C, theorem 4) and a group pooled inside a range stays pooled in the whole. Only the blocks
travel: a range of millions of trials typically summarizes to a few hundred blocks.

The actual-decision measures (Cllr, actual DCF, actual Bayes error-rates) are plain sums over
trials, at priors and thresholds fixed in advance (:class:`TrialSums`, added with ``+``).

Nothing here depends on an engine. With Spark, Ray or a plain process pool, a user

1. cuts the score axis at a few cut points (e.g. quantiles of a sample of the scores): range
   ``j`` holds the scores ``cuts[j-1] <= s < cuts[j]``, i.e. ``np.searchsorted(cuts, s,
   side="right") == j``;
2. sends each range's trials to one task and calls :func:`summarize` there, and calls
   :func:`trial_sums` on any chunks of trials (they add up with ``+``);
3. collects the small summaries in range order and calls :func:`merge`;
4. gives :class:`focal.metrics.SummarizedScores` of the merged summary and the added sums to
   the measures of :mod:`focal.metrics`, as it would give them ``(tar, non)``::

    import numpy as np
    from focal import bayes_threshold
    from focal.core.summary import merge, summarize, trial_sums
    from focal.metrics import SummarizedScores, cllr, dcf, eer, min_cllr, min_dcf

    cuts = np.unique(np.quantile(sample_of_scores, np.linspace(0, 1, 65)[1:-1]))
    # Spark: rdd.keyBy(lambda t: int(np.searchsorted(cuts, t[0], "right"))).groupByKey()
    #        .mapValues(lambda ts: summarize(*zip(*ts))).sortByKey().values().collect()
    # Ray:   ray.get([summarize_remote.remote(s_j, y_j) for s_j, y_j in ranges])
    parts = [summarize(s_j, y_j) for s_j, y_j in ranges]             # in range order
    thr = [bayes_threshold(0.01)]                # accept iff llr >= -logit(0.01), for dcf(0.01)
    sums = [trial_sums(s_c, y_c, p_targets=[0.5], thresholds=thr) for s_c, y_c in chunks]
    scores = SummarizedScores(merge(parts), sum(sums[1:], sums[0]))
    eer(scores), min_dcf(scores, p_target=0.01), min_cllr(scores), cllr(scores)
    dcf(scores, p_target=0.01)                  # the threshold of dcf(0.01) was summed

Counts are exact integers; trial weights are integer multiplicities (a trial of weight k counts
as k trials, e.g. pre-aggregated duplicate trials), so every count stays exact and the PAV keeps
its exact integer certificate (:func:`focal.core.pav.pav_of_runs`).

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logit

from .pav import PAVResult, pav_from_sorted, pav_of_runs
from .rocch import RocHull
from .scoring import nontarget_cost, target_cost
from .sorted_trials import SortedTrials
from .validation import as_binary_labels, as_score_array, check_probability

__all__ = [
    "ScoreSummary",
    "summarize",
    "summarize_sorted",
    "merge",
    "TrialSums",
    "trial_sums",
    "as_count_weights",
    "check_trials",
    "distinct_counts",
]


@dataclass(frozen=True, eq=False)
class ScoreSummary:
    """PAV blocks of the trials of one contiguous score range (or of several merged ranges).

    Attributes
    ----------
    score_lo, score_hi : ndarray of float, shape (K,)
        Lowest and highest score of each block, strictly increasing.
    n_tar, n_non : ndarray of int64, shape (K,)
        Target and non-target trials (weighted counts) in each block.
    runs_n_tar, runs_n_non, runs_score_lo : ndarray or None
        The maximal runs of one label (tied scores of both labels: one run) behind the blocks,
        kept only when asked for (the steppy DET curve needs them; their number can approach the
        number of trials).
    """

    score_lo: np.ndarray
    score_hi: np.ndarray
    n_tar: np.ndarray
    n_non: np.ndarray
    runs_n_tar: np.ndarray | None = None
    runs_n_non: np.ndarray | None = None
    runs_score_lo: np.ndarray | None = None

    @classmethod
    def empty(cls, keep_runs: bool = False) -> ScoreSummary:
        """The summary of no trials (the neutral element of :func:`merge`)."""
        f, i = np.empty(0), np.empty(0, dtype=np.int64)
        return cls(f, f, i, i, *((i, i, f) if keep_runs else (None, None, None)))

    @property
    def n_blocks(self) -> int:
        """Number of PAV blocks."""
        return int(self.n_tar.size)

    @property
    def n_targets(self) -> int:
        """Number of target trials."""
        return int(self.n_tar.sum())

    @property
    def n_nontargets(self) -> int:
        """Number of non-target trials."""
        return int(self.n_non.sum())

    @property
    def has_runs(self) -> bool:
        """Whether the runs of the steppy DET curve are kept."""
        return self.runs_n_tar is not None

    def to_pav(self) -> PAVResult:
        """The :class:`focal.core.PAVResult` of the summarized trials (needs both classes).

        Without kept runs, the runs of the result are the blocks (its ROC points are then the
        hull vertices).
        """
        if self.n_targets == 0 or self.n_nontargets == 0:
            raise ValueError(
                f"the summarized trials hold {self.n_targets} target and "
                f"{self.n_nontargets} non-target trials: measures need both classes"
            )
        # without kept runs the blocks stand for them (PAVResult.has_runs is then False)
        return PAVResult(
            self.score_lo,
            self.score_hi,
            self.n_tar,
            self.n_non,
            self.runs_n_tar,
            self.runs_n_non,
            self.runs_score_lo,
        )

    def hull(self) -> RocHull:
        """The ROC convex hull of the summarized trials (thesis 7.3.6)."""
        return RocHull(self.to_pav())


def _join_runs(n_t, n_n, lo):
    """Join neighbouring runs of one and the same label (ranges cut inside such a run)."""
    kind = np.where(n_n == 0, 1, np.where(n_t == 0, 2, 0))  # 1 target, 2 non-target, 0 mixed
    new = np.ones(kind.size, dtype=bool)
    new[1:] = (kind[1:] == 0) | (kind[1:] != kind[:-1])
    starts = np.flatnonzero(new)
    if starts.size == kind.size:
        return n_t, n_n, lo
    return np.add.reduceat(n_t, starts), np.add.reduceat(n_n, starts), lo[starts]


def _from_runs(n_t, n_n, lo, hi, keep_runs) -> ScoreSummary:
    """Pool runs (both classes allowed to be absent) into a summary."""
    if n_t.size == 0:
        return ScoreSummary.empty(keep_runs)
    r = pav_of_runs(n_t, n_n, lo, hi)
    runs = _join_runs(n_t, n_n, lo) if keep_runs else (None, None, None)
    return ScoreSummary(r.score_lo, r.score_hi, r.n_tar, r.n_non, *runs)


def summarize_sorted(tar, non, keep_runs: bool = False) -> ScoreSummary:
    """Summary of unweighted trials given as two ascending, NaN-free float arrays (either empty).

    The engine-side fast path: :func:`focal.core.pav.pav_from_sorted` when both classes are
    present, one block otherwise (trials of one label never violate monotonicity).
    """
    tar = np.asarray(tar, dtype=float)
    non = np.asarray(non, dtype=float)
    if tar.size and non.size:
        r = pav_from_sorted(SortedTrials(tar, non))
        runs = (r.runs_n_tar, r.runs_n_non, r.runs_score_lo) if keep_runs else (None, None, None)
        return ScoreSummary(r.score_lo, r.score_hi, r.n_tar, r.n_non, *runs)
    one = tar if tar.size else non
    if one.size == 0:
        return ScoreSummary.empty(keep_runs)
    counts = (np.array([tar.size]), np.array([non.size]))
    lo, hi = np.array([one[0]]), np.array([one[-1]])
    return ScoreSummary(lo, hi, *counts, *(counts + (lo,) if keep_runs else (None, None, None)))


def as_count_weights(sample_weight, n: int, name: str = "sample_weight") -> np.ndarray:
    """Trial weights as int64 multiplicities: finite, non-negative whole numbers, length ``n``."""
    w = np.asarray(sample_weight)
    if w.ndim != 1 or w.shape[0] != n:
        raise ValueError(f"{name} must be 1-D with one weight per trial ({n}), got shape {w.shape}")
    if w.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold numbers, got dtype {w.dtype}")
    if w.dtype.kind == "f":
        bad = ~(np.isfinite(w) & (w >= 0) & (w == np.floor(w)))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{name} must hold non-negative whole numbers (trial "
                f"multiplicities), got {w[i]!r} at index {i}"
            )
    elif w.size and w.min() < 0:
        i = int(np.argmin(w))
        raise ValueError(f"{name} must be non-negative, got {w[i]!r} at index {i}")
    return w.astype(np.int64)


def distinct_counts(x, w):
    """Distinct values of the scores ``x`` and the summed integer weights ``w`` of each,
    ascending (one stable sort).
    """
    if x.size == 0:
        return x, np.empty(0, dtype=np.int64)
    order = np.argsort(x, kind="stable")
    xs, ws = x[order], w[order]
    first = np.ones(xs.size, dtype=bool)
    np.not_equal(xs[1:], xs[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    return xs[starts], np.add.reduceat(ws, starts)


def check_trials(scores, labels, sample_weight):
    """``(scores, labels, weights)`` validated: float64 scores (NaN refused, +/-inf allowed,
    empty allowed), bool labels (1 / True = target), int64 multiplicities or None.
    """
    s = as_score_array(scores, "scores", allow_empty=True)
    y = as_binary_labels(labels, "labels") if s.size else np.zeros(0, dtype=bool)
    if y.shape != s.shape:
        raise ValueError(f"scores and labels have different lengths ({s.size} and {y.size})")
    w = None if sample_weight is None else as_count_weights(sample_weight, s.size)
    return s, y, w


def summarize(scores, labels, sample_weight=None, *, keep_runs: bool = False) -> ScoreSummary:
    """PAV block summary of a set of binary trials (typically one contiguous score range).

    Parameters
    ----------
    scores : array_like, shape (n,)
        Scores or natural-log LLRs (+/-inf allowed, NaN not); may be empty.
    labels : array_like, shape (n,)
        1 / True for target trials, 0 / False for non-targets; one class may be absent.
    sample_weight : array_like of non-negative whole numbers, shape (n,), optional
        Trial multiplicities (a trial of weight k counts as k trials; weight 0 drops it).
    keep_runs : bool, default False
        Also keep the runs of one label (for the steppy DET curve).

    Returns
    -------
    ScoreSummary
        Merge summaries of contiguous, increasing score ranges with :func:`merge`.
    """
    s, y, w = check_trials(scores, labels, sample_weight)
    if w is None:
        tar, non = s[y], s[~y]
        tar.sort()
        non.sort()
        return summarize_sorted(tar, non, keep_runs)
    keep = w > 0
    ut, ct = distinct_counts(s[y & keep], w[y & keep])
    un, cn = distinct_counts(s[~y & keep], w[~y & keep])
    values = np.union1d(ut, un)
    n_t = np.zeros(values.size, dtype=np.int64)
    n_n = np.zeros(values.size, dtype=np.int64)
    n_t[np.searchsorted(values, ut)] = ct
    n_n[np.searchsorted(values, un)] = cn
    return _from_runs(n_t, n_n, values, values, keep_runs)


def merge(summaries, keep_runs: bool | None = None) -> ScoreSummary:
    """Summary of the union of trials summarized by parts of disjoint, increasing score ranges.

    Parameters
    ----------
    summaries : iterable of ScoreSummary
        In score order; every score of part ``j`` below every score of part ``j + 1`` (ties not
        split across parts). Empty parts are allowed.
    keep_runs : bool, optional
        Keep the runs (default: when every part has them).

    Returns
    -------
    ScoreSummary
        Identical (blocks, counts, score ranges) to :func:`summarize` of all the trials at once.
    """
    parts = list(summaries)
    if keep_runs is None:
        keep_runs = bool(parts) and all(p.has_runs for p in parts)
    elif keep_runs and not all(p.has_runs for p in parts):
        raise ValueError("keep_runs=True needs summaries made with keep_runs=True")
    parts = [p for p in parts if p.n_blocks]
    for j in range(1, len(parts)):
        if not parts[j - 1].score_hi[-1] < parts[j].score_lo[0]:
            raise ValueError(
                f"summaries must cover disjoint, increasing score ranges: part {j - 1} ends at "
                f"{parts[j - 1].score_hi[-1]!r}, part {j} starts at {parts[j].score_lo[0]!r}"
            )
    if not parts:
        return ScoreSummary.empty(keep_runs)
    cat = [
        np.concatenate([getattr(p, f) for p in parts])
        for f in ("n_tar", "n_non", "score_lo", "score_hi")
    ]
    n_t, n_n, lo, hi = cat
    merged = _from_runs(n_t, n_n, lo, hi, keep_runs=False)
    if not keep_runs:
        return merged
    runs = _join_runs(
        *(
            np.concatenate([getattr(p, f) for p in parts])
            for f in ("runs_n_tar", "runs_n_non", "runs_score_lo")
        )
    )
    return ScoreSummary(merged.score_lo, merged.score_hi, merged.n_tar, merged.n_non, *runs)


@dataclass(frozen=True, eq=False)
class TrialSums:
    """Per-class sums behind the actual-decision measures, additive over any split of the trials.

    Attributes
    ----------
    n_targets, n_nontargets : int
        (Weighted) numbers of target and non-target trials.
    p_targets : ndarray, shape (P,)
        Priors at which the logarithmic costs were summed.
    tar_cost, non_cost : ndarray, shape (P,)
        Sum over target (non-target) trials of the logarithmic cost at each prior, in nats
        (thesis eq. 7.39); ``+inf`` when a trial has an infinitely wrong LLR.
    thresholds : ndarray, shape (T,)
        Distinct, increasing decision thresholds (accept iff score >= threshold).
    n_misses, n_false_alarms : ndarray of int64, shape (T,)
        ``#(tar < threshold)`` and ``#(non >= threshold)`` (thesis eqs. 7.16-7.19).
    """

    n_targets: int
    n_nontargets: int
    p_targets: np.ndarray
    tar_cost: np.ndarray
    non_cost: np.ndarray
    thresholds: np.ndarray
    n_misses: np.ndarray
    n_false_alarms: np.ndarray

    @classmethod
    def empty(cls, p_targets=(), thresholds=()) -> TrialSums:
        """Sums of no trials at the given priors and thresholds (the neutral element of ``+``)."""
        p, t = _priors(p_targets), _thresholds(thresholds)
        return cls(
            0,
            0,
            p,
            np.zeros(p.size),
            np.zeros(p.size),
            t,
            np.zeros(t.size, dtype=np.int64),
            np.zeros(t.size, dtype=np.int64),
        )

    def __add__(self, other: TrialSums) -> TrialSums:
        if not (
            np.array_equal(self.p_targets, other.p_targets)
            and np.array_equal(self.thresholds, other.thresholds)
        ):
            raise ValueError("TrialSums added together must use the same p_targets and thresholds")
        return TrialSums(
            self.n_targets + other.n_targets,
            self.n_nontargets + other.n_nontargets,
            self.p_targets,
            self.tar_cost + other.tar_cost,
            self.non_cost + other.non_cost,
            self.thresholds,
            self.n_misses + other.n_misses,
            self.n_false_alarms + other.n_false_alarms,
        )

    def error_counts(self, thresholds):
        """``(n_misses, n_false_alarms)`` at some of the summed thresholds.

        Parameters
        ----------
        thresholds : float or array_like
            Decision thresholds, each among :attr:`thresholds`.

        Returns
        -------
        n_misses, n_false_alarms : ndarray of int64
            The counts at each threshold.
        """
        t = np.atleast_1d(np.asarray(thresholds, dtype=float))
        i = np.searchsorted(self.thresholds, t)
        ok = i < self.thresholds.size
        ok[ok] = self.thresholds[i[ok]] == t[ok]
        if not ok.all():
            raise ValueError(
                f"threshold {t[~ok][0]!r} was not among the thresholds of these sums: sum the "
                "trials at it (thresholds=[...]; the actual DCF at an operating point needs "
                "focal.bayes_threshold(p_target, c_miss, c_fa), a Bayes error-rate at prior "
                "log-odds h the threshold -h)"
            )
        return self.n_misses[i], self.n_false_alarms[i]

    def mean_costs(self, p_target: float):
        """Mean logarithmic cost of the targets and of the non-targets at ``p_target`` (nats).

        Parameters
        ----------
        p_target : float
            One of :attr:`p_targets`.

        Returns
        -------
        c_tar, c_non : float
            The two class means, in nats (thesis eq. 7.39).
        """
        i = np.flatnonzero(self.p_targets == float(p_target))
        if i.size == 0:
            raise ValueError(
                f"p_target {p_target!r} was not among the priors of these sums: sum the "
                "trials' costs at it (p_targets=[...])"
            )
        return (
            float(self.tar_cost[i[0]] / self.n_targets),
            float(self.non_cost[i[0]] / self.n_nontargets),
        )


def _priors(p_targets) -> np.ndarray:
    return np.unique(
        np.array(
            [
                check_probability(p, "p_targets")
                for p in np.atleast_1d(np.asarray(p_targets, dtype=float))
            ]
        )
    )


def _thresholds(thresholds) -> np.ndarray:
    t = as_score_array(
        np.atleast_1d(np.asarray(thresholds, dtype=float)), "thresholds", allow_empty=True
    )
    return np.unique(t)


def _cost_sums(scores, weights, p, cost) -> np.ndarray:
    out = np.empty(p.size)
    for i, plo in enumerate(logit(p)):  # a loop over the few priors, not over trials
        c = cost(scores, plo)
        out[i] = c.sum() if weights is None else float(np.dot(weights, c))
    return out


def trial_sums(
    scores,
    labels,
    sample_weight=None,
    *,
    p_targets=(),
    thresholds=(),
    sorted_tar=None,
    sorted_non=None,
) -> TrialSums:
    """:class:`TrialSums` of a set of binary trials (any subset: sums add up with ``+``).

    Parameters
    ----------
    scores, labels, sample_weight
        As in :func:`summarize` (``scores`` are read as natural-log LLRs for the costs).
    p_targets : array_like of float in (0, 1)
        Priors for Cllr / cross-entropy.
    thresholds : array_like of float
        Decision thresholds for actual DCF and Bayes error-rates, e.g. ``-logit(p)``.
    sorted_tar, sorted_non : ndarray, optional
        Already sorted, validated target and non-target scores of unweighted trials (an
        engine's fast path); ``scores`` and ``labels`` are then ignored (pass None).
    """
    p, t = _priors(p_targets), _thresholds(thresholds)
    if sorted_tar is not None:
        tar, non, tw, nw = np.asarray(sorted_tar), np.asarray(sorted_non), None, None
    else:
        s, y, w = check_trials(scores, labels, sample_weight)
        tar, non = s[y], s[~y]
        tw = nw = None
        if w is not None:
            tw, nw = w[y], w[~y]
            tar, non = tar[tw > 0], non[nw > 0]
            tw, nw = tw[tw > 0], nw[nw > 0]
            o_t, o_n = np.argsort(tar, kind="stable"), np.argsort(non, kind="stable")
            tar, tw, non, nw = tar[o_t], tw[o_t], non[o_n], nw[o_n]
        else:
            tar.sort()
            non.sort()
    mis = np.searchsorted(tar, t, side="left")
    fa = np.searchsorted(non, t, side="left")
    if tw is None:
        n_tar, n_non = tar.size, non.size
        n_mis, n_fa = mis, n_non - fa
    else:
        ct = np.concatenate(([0], np.cumsum(tw)))
        cn = np.concatenate(([0], np.cumsum(np.asarray(nw))))
        n_tar, n_non = int(ct[-1]), int(cn[-1])
        n_mis, n_fa = ct[mis], n_non - cn[fa]
    return TrialSums(
        int(n_tar),
        int(n_non),
        p,
        _cost_sums(tar, tw, p, target_cost),
        _cost_sums(non, nw, p, nontarget_cost),
        t,
        np.asarray(n_mis, dtype=np.int64),
        np.asarray(n_fa, dtype=np.int64),
    )
