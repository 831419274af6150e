"""PAV: the optimal monotone score -> LLR map, computed once and shared by every binary measure.

Pool-adjacent-violators (thesis sec. 7.7.3, appendix C). Given target and non-target scores,
PAV partitions the sorted scores into blocks; every trial of block k gets the LLR

    llr_k = log( (n_tar_k / N_tar) / (n_non_k / N_non) )                  (thesis eqs. 7.50-7.51)

which is ``logit`` of the block's target fraction minus ``logit`` of the overall target
proportion (eq. C.20). This solution is optimal for every proper scoring rule and every prior
simultaneously (theorem 5), so it is computed once, independently of any prior.

How it is computed (no argsort, no Python loop over trials):

1. sort the targets and the non-targets separately (two ``np.sort``, cheaper than one argsort);
2. place the tied groups of the smaller class inside the larger one with ``searchsorted``: the
   merged sequence is then a list of *runs*: runs of one label never violate monotonicity, and
   tied scores of both labels form one mixed run, so tied scores always get the same LLR;
3. weighted isotonic regression of the runs' target fractions (scipy's C++ PAVA);
4. an exact integer certificate of the result (strictly increasing block fractions, and every
   prefix of a block at least as target-rich as the block: thesis theorem 3), with an exact
   integer PAV as fallback if floating-point rounding ever broke it.

References
----------
.. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
   extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.optimize import isotonic_regression

from .scoring import cross_entropy_nats
from .validation import check_binary_trials

__all__ = [
    "SortedTrials", "PAVResult", "sort_trials", "pav", "pav_from_sorted",
    "step_index", "block_llr_map", "bounded_pav_blocks", "INTERPOLATIONS", "pav_from_counts",
]

INTERPOLATIONS = ("step", "linear")


@dataclass(frozen=True, eq=False)
class SortedTrials:
    """Target and non-target scores, each sorted ascending (validated, float64 copies).

    Attributes
    ----------
    tar, non : ndarray of float64
        The target and the non-target scores, ascending.
    """

    tar: np.ndarray
    non: np.ndarray

    @property
    def n_tar(self) -> int:
        """Number of target trials."""
        return int(self.tar.size)

    @property
    def n_non(self) -> int:
        """Number of non-target trials."""
        return int(self.non.size)

    def error_rates(self, thresholds):
        """Miss and false-alarm rates when accepting every score ``>= threshold``.

        ``P_miss = #(tar < thr) / N_tar``, ``P_fa = #(non >= thr) / N_non`` (thesis eqs.
        7.16-7.19), for any number of thresholds at once by binary search in the sorted scores
        (the joint-sort computation of thesis sec. 7.6.1). Returns two float arrays.

        Parameters
        ----------
        thresholds : float or array_like
            Score thresholds.

        Returns
        -------
        p_miss, p_fa : ndarray
            Miss and false-alarm rate (fractions) at each threshold.

        References
        ----------
        .. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
           extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
        """
        thr = np.asarray(thresholds, dtype=float)
        misses = np.searchsorted(self.tar, thr, side="left")
        false_alarms = self.n_non - np.searchsorted(self.non, thr, side="left")
        return misses / self.n_tar, false_alarms / self.n_non


def sort_trials(tar, non) -> SortedTrials:
    """Validate ``(tar, non)`` and sort each once. NaN, empty sets or wrong shapes -> ValueError.

    Parameters
    ----------
    tar, non : array_like of shape (n_tar,) and (n_non,)
        Scores of the target and of the non-target trials.

    Returns
    -------
    SortedTrials
        Sorted float64 copies.
    """
    t, n = check_binary_trials(tar, non)
    t.sort()
    n.sort()
    return SortedTrials(t, n)


@dataclass(frozen=True, eq=False)
class PAVResult:
    """The PAV solution as blocks of the sorted scores, lowest scores first.

    Attributes
    ----------
    score_lo, score_hi : ndarray of float, shape (K,)
        Lowest and highest score in each block (strictly increasing; a block never splits tied
        scores and ``score_hi[k] < score_lo[k + 1]``).
    n_tar, n_non : ndarray of int64, shape (K,)
        Target and non-target trials in each block.
    runs_n_tar, runs_n_non, runs_score_lo : ndarray
        The finer structure PAV started from: maximal runs of one label in the merged sorted
        scores (tied scores of both labels form one mixed run). Their boundaries are the
        points of the steppy empirical ROC / DET curve.
    """

    score_lo: np.ndarray
    score_hi: np.ndarray
    n_tar: np.ndarray
    n_non: np.ndarray
    runs_n_tar: np.ndarray
    runs_n_non: np.ndarray
    runs_score_lo: np.ndarray

    @property
    def n_targets(self) -> int:
        """Total number of target trials N_tar."""
        return int(self.n_tar.sum())

    @property
    def n_nontargets(self) -> int:
        """Total number of non-target trials N_non."""
        return int(self.n_non.sum())

    @cached_property
    def llr(self) -> np.ndarray:
        """LLR (nats) of each block, ``log((n_tar/N_tar) / (n_non/N_non))`` (eqs. 7.50-7.51, C.20).

        Strictly increasing; ``-inf`` for a block of only non-targets, ``+inf`` for only targets.
        Independent of any prior (theorem 5).
        """
        num = self.n_tar.astype(float) * float(self.n_nontargets)
        den = self.n_non.astype(float) * float(self.n_targets)
        with np.errstate(divide="ignore"):
            return np.log(num / den)

    def roc_points(self):
        """Steppy empirical ROC: ``(pfa, pmiss, thresholds)`` at every run boundary (thesis 7.3.4).

        Point ``j`` is "accept iff score >= thresholds[j]"; the last threshold is +inf. Points
        strictly inside a run of one label are collinear with its ends and omitted; a run of tied
        target and non-target scores gives a diagonal step, because no threshold can split it.

        Returns
        -------
        pfa, pmiss, thresholds : ndarray
            False-alarm and miss rates (fractions) and the threshold of each point.
        """
        n_t, n_n = self.n_targets, self.n_nontargets
        pmiss = np.concatenate(([0], np.cumsum(self.runs_n_tar))) / n_t
        pfa = (n_n - np.concatenate(([0], np.cumsum(self.runs_n_non)))) / n_n
        return pfa, pmiss, np.append(self.runs_score_lo, np.inf)

    def block_index(self, scores) -> np.ndarray:
        """Index of the block whose score range a score falls into (step map; clipped at the ends).

        For the training scores this is exact; for unseen scores between blocks it returns the
        block below.

        Parameters
        ----------
        scores : array_like
            Scores to look up.

        Returns
        -------
        ndarray of int
            Block index of each score, in ``0..K-1``.
        """
        return step_index(self.score_lo, scores)

    def cross_entropy(self, p_target: float) -> float:
        """E_log after PAV: the minimum prior-weighted logarithmic cost, in nats (eq. 7.46).

        Each block contributes its LLR weighted by its target / non-target counts.

        Parameters
        ----------
        p_target : float
            Target prior in (0, 1).

        Returns
        -------
        float
            The minimum cross-entropy in nats.

        References
        ----------
        .. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
           extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
        """
        llr = self.llr
        return cross_entropy_nats(llr, llr, p_target, tar_weight=self.n_tar, non_weight=self.n_non)


def _tie_runs(a: np.ndarray, b: np.ndarray):
    """Runs of the merged sorted sequence of ``a`` (the smaller class) and ``b``.

    Returns ``(na, nb, lo, hi)`` per run: counts of each class and the score range. A run is
    either the ``b`` scores strictly between two consecutive distinct ``a`` values (a *gap*), or
    one distinct ``a`` value together with the ``b`` scores tied to it. Consecutive ``a`` values
    with neither a gap nor ties between them form one run (they never violate monotonicity and
    add no ROC point). All work is on arrays of the size of ``a``'s distinct values.
    """
    first = np.empty(a.size, dtype=bool)
    first[0] = True
    np.not_equal(a[1:], a[:-1], out=first[1:])
    group_start = np.flatnonzero(first)
    u = a[group_start]                                   # distinct a values
    count_a = np.diff(np.append(group_start, a.size))
    left = np.searchsorted(b, u, side="left")
    right = left.copy()                                  # b scores tied to u: rare, fix up
    maybe_tied = b[np.minimum(left, b.size - 1)] == u
    if maybe_tied.any():
        right[maybe_tied] = np.searchsorted(b, u[maybe_tied], side="right")
    tied = right - left
    gap = left - np.concatenate(([0], right[:-1]))       # b scores strictly before group j
    final_gap = b.size - right[-1]

    # group j opens a new a-run unless it follows group j-1 with no gap and no ties on either
    opens = np.ones(u.size, dtype=bool)
    opens[1:] = (gap[1:] > 0) | (tied[1:] > 0) | (tied[:-1] > 0)
    run_first = np.flatnonzero(opens)
    run_last = np.append(run_first[1:], u.size) - 1
    has_gap = gap[run_first] > 0
    pos_run = np.arange(run_first.size) + np.cumsum(has_gap)  # output slot of each a-run
    pos_gap = pos_run[has_gap] - 1
    size = run_first.size + int(has_gap.sum()) + int(final_gap > 0)

    na = np.zeros(size, dtype=np.int64)
    nb = np.empty(size, dtype=np.int64)
    lo = np.empty(size)
    hi = np.empty(size)
    na[pos_run] = np.add.reduceat(count_a, run_first)
    nb[pos_run] = tied[run_first]                        # only single-group runs have ties
    lo[pos_run] = u[run_first]
    hi[pos_run] = u[run_last]
    gap_groups = run_first[has_gap]
    nb[pos_gap] = gap[gap_groups]
    lo[pos_gap] = b[left[gap_groups] - gap[gap_groups]]
    hi[pos_gap] = b[left[gap_groups] - 1]
    if final_gap > 0:
        nb[-1] = final_gap
        lo[-1] = b[right[-1]]
        hi[-1] = b[-1]
    return na, nb, lo, hi


def _exact_less(a_num, a_den, b_num, b_den):
    """Exact ``a_num/a_den < b_num/b_den`` for non-negative integer arrays (positive dens)."""
    if max(int(a_den.max(initial=0)), int(b_den.max(initial=0))) < 2**31:
        return a_num * b_den < b_num * a_den
    return np.array([x * w < y * v for x, v, y, w in zip(a_num.tolist(), a_den.tolist(),
                                                        b_num.tolist(), b_den.tolist())], dtype=bool)


def _certified(nt_runs, w_runs, starts) -> bool:
    """Exact check that the blocks ``starts`` are the PAV solution of the runs.

    PAV blocks are correct iff their target fractions increase strictly from block to block and,
    within each block, every prefix is at least as target-rich as the whole block (then the
    block's optimal solution is constant: thesis theorem 3 / Ayer et al. closed form).
    """
    nt_b = np.add.reduceat(nt_runs, starts)
    w_b = np.add.reduceat(w_runs, starts)
    if nt_b.size > 1 and not _exact_less(nt_b[:-1], w_b[:-1], nt_b[1:], w_b[1:]).all():
        return False
    block_of_run = np.repeat(np.arange(starts.size), np.diff(np.append(starts, nt_runs.size)))
    cnt = np.cumsum(nt_runs)
    cw = np.cumsum(w_runs)
    base_t = (cnt - nt_runs)[starts][block_of_run]
    base_w = (cw - w_runs)[starts][block_of_run]
    prefix_t = cnt - base_t
    prefix_w = cw - base_w
    # prefix fraction >= block fraction  <=>  not (prefix < block)
    return not _exact_less(prefix_t, prefix_w, nt_b[block_of_run], w_b[block_of_run]).any()


def _exact_pav_starts(nt_runs, w_runs) -> np.ndarray:
    """Reference PAV with exact integer comparisons (fallback; a Python loop over runs).

    Used only if the floating-point isotonic regression fails the exact certificate: its pooled
    means carry rounding errors, so two neighbouring blocks whose target fractions differ by less
    than that error (possible only for pools of millions of trials) could be pooled wrongly.
    """
    stack_t: list[int] = []
    stack_w: list[int] = []
    stack_s: list[int] = []
    for i, (t, w) in enumerate(zip(nt_runs.tolist(), w_runs.tolist())):
        stack_t.append(t)
        stack_w.append(w)
        stack_s.append(i)
        # pool while the previous block's fraction >= the last block's fraction
        while len(stack_t) > 1 and stack_t[-2] * stack_w[-1] >= stack_t[-1] * stack_w[-2]:
            t_last, w_last = stack_t.pop(), stack_w.pop()
            stack_s.pop()
            stack_t[-1] += t_last
            stack_w[-1] += w_last
    return np.asarray(stack_s, dtype=np.int64)


def pav_from_sorted(trials: SortedTrials) -> PAVResult:
    """PAV blocks of already sorted and validated trials (see the module docstring).

    Parameters
    ----------
    trials : SortedTrials
        Validated trials, each class sorted ascending (:func:`sort_trials`).

    Returns
    -------
    PAVResult
        The PAV blocks, lowest scores first.

    References
    ----------
    .. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
       extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
    """
    tar, non = trials.tar, trials.non
    if tar.size <= non.size:
        n_t, n_n, lo, hi = _tie_runs(tar, non)
    else:
        n_n, n_t, lo, hi = _tie_runs(non, tar)
    return _pav_of_runs(n_t, n_n, lo, hi)


def _pav_of_runs(n_t, n_n, lo, hi) -> PAVResult:
    """PAV blocks of runs of increasing scores ``[lo, hi]`` carrying integer class counts."""
    w = n_t + n_n

    fit = isotonic_regression(n_t / w, weights=w.astype(float), increasing=True)
    starts = np.asarray(fit.blocks[:-1], dtype=np.int64)
    # merge neighbouring blocks whose fractions are exactly equal (no collinear ROCCH vertices)
    if starts.size > 1:
        nt_b = np.add.reduceat(n_t, starts)
        w_b = np.add.reduceat(w, starts)
        equal = ~_exact_less(nt_b[:-1], w_b[:-1], nt_b[1:], w_b[1:]) & ~_exact_less(
            nt_b[1:], w_b[1:], nt_b[:-1], w_b[:-1])
        if equal.any():
            starts = starts[np.concatenate(([True], ~equal))]
    if not _certified(n_t, w, starts):
        starts = _exact_pav_starts(n_t, w)

    ends = np.append(starts[1:], n_t.size) - 1
    return PAVResult(
        score_lo=lo[starts],
        score_hi=hi[ends],
        n_tar=np.add.reduceat(n_t, starts),
        n_non=np.add.reduceat(n_n, starts),
        runs_n_tar=n_t,
        runs_n_non=n_n,
        runs_score_lo=lo,
    )


def pav_from_counts(scores, n_tar, n_non) -> PAVResult:
    """PAV of distinct, increasing ``scores`` carrying integer target / non-target counts.

    The weighted PAV: a score with counts ``(a, b)`` counts as ``a`` target and ``b`` non-target
    trials tied at that score, so a bootstrap replicate (integer trial weights, summed per
    distinct score) gets exactly the PAV, hull and measures of the resampled trials. Scores
    whose counts are both zero are dropped; each class needs a positive total.

    Parameters
    ----------
    scores : ndarray of float, shape (G,)
        Strictly increasing scores (e.g. ``np.unique`` of the trials).
    n_tar, n_non : ndarray of int, shape (G,)
        Non-negative counts of each class at each score.
    """
    n_t = np.asarray(n_tar, dtype=np.int64)
    n_n = np.asarray(n_non, dtype=np.int64)
    keep = (n_t + n_n) > 0
    if not keep.all():
        scores, n_t, n_n = scores[keep], n_t[keep], n_n[keep]
    if n_t.sum() == 0 or n_n.sum() == 0:
        raise ValueError("pav_from_counts needs trials of both classes")
    return _pav_of_runs(n_t, n_n, scores, scores)


def pav(tar, non) -> PAVResult:
    """PAV solution of target scores ``tar`` and non-target scores ``non`` (thesis 7.7.3, app. C).

    Scores of any kind (raw scores, LLRs, probabilities): only their order matters. Returns a
    :class:`PAVResult` whose blocks every binary measure reuses.
    """
    return pav_from_sorted(sort_trials(tar, non))


def pav_of_runs(n_tar, n_non, score_lo, score_hi) -> PAVResult:
    """PAV of consecutive runs of trials given by their class counts and score ranges.

    Run ``i`` holds ``n_tar[i]`` target and ``n_non[i]`` non-target trials (integers, a positive
    total in every run) with scores in ``[score_lo[i], score_hi[i]]``, the runs in increasing
    score order. The result's blocks are the PAV solution of those trials, with the exact integer
    certificate of :func:`pav_from_sorted`. Runs may themselves be the PAV blocks of contiguous
    score ranges: pooling adjacent violators in any order reaches the same solution (thesis app. C,
    theorem 4), so this merges the PAV summaries of the parts of a larger score set exactly
    (:mod:`focal.core.summary`). One class may be absent (then one block).
    """
    return _pav_of_runs(np.asarray(n_tar, dtype=np.int64), np.asarray(n_non, dtype=np.int64),
                        np.asarray(score_lo, dtype=float), np.asarray(score_hi, dtype=float))


# -- applying a fitted PAV map to new scores -------------------------------------------------

def step_index(score_lo, scores) -> np.ndarray:
    """Index of the block each score falls into: the last block with ``score_lo <= score``.

    ``score_lo`` holds the (strictly increasing) lowest score of each block. A score between two
    blocks goes to the block below, one below the first block to block 0: exactly the grouping
    that the accept-threshold rule "score >= score_lo[k]" of the ROC makes (thesis 7.3.4), so new
    scores get the decisions the training thresholds would give them. One binary search per score.
    """
    lo = np.asarray(score_lo, dtype=float)
    return np.searchsorted(lo[1:], np.asarray(scores, dtype=float), side="right")


def block_llr_map(score_lo, score_hi, llr, scores, interpolation: str = "step") -> np.ndarray:
    """Apply a monotone block map (score ranges -> LLRs) to any scores, in natural-log LLRs.

    Parameters
    ----------
    score_lo, score_hi : array_like, shape (K,)
        Lowest and highest training score of each block, ``score_lo[k] <= score_hi[k] <
        score_lo[k + 1]``.
    llr : array_like, shape (K,)
        Non-decreasing LLR of each block (a PAV solution: only ``llr[0]`` may be -inf and only
        ``llr[-1]`` +inf).
    scores : array_like
        Scores to map (any shape); must not contain NaN.
    interpolation : {"step", "linear"}
        ``"step"``: every score gets the LLR of its block (:func:`step_index`), so training
        scores get exactly their PAV-LLR and a score between two blocks gets the lower block's.
        ``"linear"``: piecewise-linear interpolation between the block centres
        ``(score_lo + score_hi) / 2``, constant beyond the first and last centre; a continuous,
        non-decreasing map. Blocks with an infinite LLR (only possible without bounding) keep
        the step rule, since no line joins a finite and an infinite LLR.

    Returns
    -------
    ndarray of float, the shape of ``scores``. Non-decreasing in the score for both rules.
    """
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"interpolation must be one of {INTERPOLATIONS}, got {interpolation!r}")
    lo = np.asarray(score_lo, dtype=float)
    hi = np.asarray(score_hi, dtype=float)
    values = np.asarray(llr, dtype=float)
    s = np.asarray(scores, dtype=float)
    finite = np.isfinite(values)
    if interpolation == "step" or not finite.any():
        return values.take(step_index(lo, s))
    # 0.5 lo + 0.5 hi cannot overflow, and (rounding is monotone) lies in [lo, hi]; the clip only
    # guards subnormal rounding. Centres therefore increase strictly, like the blocks.
    centres = np.clip(0.5 * lo + 0.5 * hi, lo, hi)
    if finite.all():
        return np.interp(s, centres, values)
    out = values.take(step_index(lo, s))
    return np.where(np.isfinite(out), np.interp(s, centres[finite], values[finite]), out)


# -- bounded PAV: finite LLRs at the extremes -------------------------------------------------

def bounded_pav_blocks(result: PAVResult, pseudo_count: float):
    """PAV-LLR of the trials plus ``pseudo_count`` virtual trials of the opposite class at each end.

    The unbounded PAV gives -inf to a lowest block of only non-targets and +inf to a highest block
    of only targets: it claims no target can ever score that low. Bounding adds ``a =
    pseudo_count`` virtual *target* trials below every score and ``a`` virtual *non-target* trials
    above every score (weights may be fractional) and takes the PAV-LLR (eq. C.20) of that
    augmented set, normalized by the augmented class totals ``N_tar + a`` and ``N_non + a``.
    The result is still the optimal monotone map of (augmented) data, so it is non-decreasing,
    and every LLR is finite, with

        -log(1 + N_tar / a)  <  llr  <  log(1 + N_non / a),

    a bound that grows only logarithmically with the amount of training data. Interior blocks
    move by ``log((N_non + a) N_tar / ((N_tar + a) N_non))`` (tiny); the end blocks absorb their
    virtual trial and may pool with their neighbours.

    The augmented PAV is computed on the K blocks of ``result`` (two end points added), not on
    the trials: pooling adjacent violators in any order reaches the same solution (thesis app. C,
    theorem 4), and the blocks of ``result`` are already pooled, so nothing is sorted or pooled
    twice. O(K).

    Parameters
    ----------
    result : PAVResult
        The unbounded PAV solution.
    pseudo_count : float
        Weight ``a > 0`` of the virtual trial at each end.

    Returns
    -------
    starts : ndarray of int64, shape (G,)
        Index of the first block of ``result`` in each bounded block (``starts[0] == 0``); the
        bounded blocks are unions of consecutive blocks of ``result``.
    llr : ndarray of float, shape (G,)
        Finite, non-decreasing natural-log LLR of each bounded block.
    """
    a = float(pseudo_count)
    if not (np.isfinite(a) and a > 0.0):
        raise ValueError(f"pseudo_count must be a finite number > 0, got {pseudo_count!r}")
    k = result.n_tar.size
    tar = np.concatenate(([a], result.n_tar.astype(float), [0.0]))
    non = np.concatenate(([0.0], result.n_non.astype(float), [a]))
    weight = tar + non
    fit = isotonic_regression(tar / weight, weights=weight, increasing=True)
    group_starts = np.asarray(fit.blocks[:-1], dtype=np.int64)
    with np.errstate(divide="ignore"):
        group_llr = (np.log(np.add.reduceat(tar, group_starts) / (result.n_targets + a))
                     - np.log(np.add.reduceat(non, group_starts) / (result.n_nontargets + a)))
    # group of each real block (augmented positions 1..K); the virtual trials always pool with
    # the end blocks (fraction 1 below a block with non-targets, 0 above one with targets)
    group = np.repeat(np.arange(group_starts.size), np.diff(np.append(group_starts, k + 2)))[1:-1]
    new = np.ones(k, dtype=bool)
    new[1:] = group[1:] != group[:-1]
    starts = np.flatnonzero(new)
    # a rounding guard: pooled float fractions are non-decreasing, their logs must be too
    return starts, np.maximum.accumulate(group_llr[group[starts]])
