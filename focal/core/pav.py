"""PAV: the optimal monotone score -> LLR map, computed once and shared by every binary measure.

Pool-adjacent-violators (thesis sec. 7.7.3, appendix C). Given target and non-target scores,
PAV partitions the sorted scores into blocks; every trial of block k gets the LLR

    llr_k = log( (n_tar_k / N_tar) / (n_non_k / N_non) )                  (thesis eqs. 7.50-7.51)

which is ``logit`` of the block's target fraction minus ``logit`` of the overall target
proportion (eq. C.20). This solution is optimal for every proper scoring rule and every prior
simultaneously (theorem 5), so it is computed once, independently of any prior.

How it is computed (no argsort, no Python loop over trials):

1. sort the targets and the non-targets separately (two ``np.sort``, cheaper than one argsort);
2. cut the merged sequence into *elements* without building it. A run holding targets is
   always pooled with a run of non-targets right after it (a block boundary of the increasing
   solution is a vertex of the greatest convex minorant of the cumulative-sum diagram, never a
   point where the target fraction drops), so a block can only start before a target that
   follows a non-target (or, when the non-targets are fewer, mirrored). The positions of the
   smaller class among the larger come from ``searchsorted`` (sorted queries, by cache-sized
   chunks), and with targets the fewer, only where needed: the minorant lies on or below the
   convex minorant of any subset of the diagram's points, so a stride of 16 targets whose
   points all lie strictly above the convex minorant of the points before every 16th target
   (one exact integer test per stride) holds no block start and stays one element, its
   positions never searched. Element counts are differences of positions;
3. weighted isotonic regression of the elements' target fractions (scipy's C++ PAVA);
4. an exact integer certificate of the result (strictly increasing block fractions, and every
   prefix of a block at least as target-rich as the block: thesis theorem 3), with an exact
   integer PAV as fallback if floating-point rounding ever broke it.

The finer *runs* (maximal runs of one label, the points of the steppy ROC) are built only when
asked for (:attr:`PAVResult.runs_n_tar`).

The bounded PAV (:func:`bounded_pav_blocks`, used by :class:`focal.estimators.PAVCalibrator`)
is the PAV of the same blocks with a virtual trial of each class added at the ends, which keeps
every LLR finite.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy.optimize import isotonic_regression

from ._pav_kernel import (
    _first_of_runs,
    _highest,
    _lowest,
    _pav_starts,
    _sorted_positions,
    _target_points,
    _tie_runs,
)
from .maps import block_llr, step_index
from .scoring import cross_entropy_nats
from .sorted_trials import SortedTrials, sort_trials

__all__ = [
    "PAVResult",
    "pav",
    "pav_from_sorted",
    "pav_from_counts",
    "bounded_pav_blocks",
    "pav_from_weights",
]


@dataclass(frozen=True, eq=False, init=False)
class PAVResult:
    """The PAV solution as blocks of the sorted scores, lowest scores first.

    Parameters
    ----------
    score_lo, score_hi, n_tar, n_non : ndarray
        The blocks (see Attributes).
    runs_n_tar, runs_n_non, runs_score_lo : ndarray, optional
        The runs behind the blocks. Omitted: built on first use from ``trials`` when given,
        else the blocks stand for the runs (the ROC points are then the hull vertices).
    trials : SortedTrials, optional
        The sorted trials the blocks were computed from (keyword only).

    Attributes
    ----------
    score_lo, score_hi : ndarray of float, shape (K,)
        Lowest and highest score in each block (strictly increasing; a block never splits tied
        scores and ``score_hi[k] < score_lo[k + 1]``).
    n_tar, n_non : ndarray of int64, shape (K,)
        Target and non-target trials in each block.
    runs_n_tar, runs_n_non, runs_score_lo : ndarray
        The finer structure PAV pools: maximal runs of one label in the merged sorted scores
        (tied scores of both labels form one mixed run). Their boundaries are the points of the
        steppy empirical ROC / DET curve. Built on first access when the result was computed
        from trials (their number can approach the number of trials).
    runs_source : SortedTrials or tuple
        What the runs come from: the sorted trials, or the three run arrays themselves.
    has_runs : bool
        Whether the runs are those of the trials (given, or computed from ``trials``); without
        them the blocks stand for the runs, and the steppy ROC is the hull.
    """

    score_lo: np.ndarray
    score_hi: np.ndarray
    n_tar: np.ndarray
    n_non: np.ndarray
    runs_source: object = field(default=None, repr=False)
    has_runs: bool = field(default=False, repr=False)

    def __init__(
        self,
        score_lo,
        score_hi,
        n_tar,
        n_non,
        runs_n_tar=None,
        runs_n_non=None,
        runs_score_lo=None,
        *,
        trials: SortedTrials | None = None,
    ):
        source: tuple | SortedTrials
        if runs_n_tar is not None:
            source = (runs_n_tar, runs_n_non, runs_score_lo)
        else:
            source = (n_tar, n_non, score_lo) if trials is None else trials
        for name, value in (
            ("score_lo", score_lo),
            ("score_hi", score_hi),
            ("n_tar", n_tar),
            ("n_non", n_non),
            ("runs_source", source),
            ("has_runs", runs_n_tar is not None or trials is not None),
        ):
            object.__setattr__(self, name, value)

    @cached_property
    def _runs(self):
        if isinstance(self.runs_source, tuple):
            return self.runs_source
        tar, non = self.runs_source.tar, self.runs_source.non
        if tar.size <= non.size:
            n_t, n_n, lo, _ = _tie_runs(tar, non)
        else:
            n_n, n_t, lo, _ = _tie_runs(non, tar)
        return n_t, n_n, lo

    def check_runs(self, what: str) -> None:
        """Raise ``ValueError`` unless the runs of the trials are known (:attr:`has_runs`).

        Parameters
        ----------
        what : str
            What needs them, for the message (e.g. ``"the steppy DET curve"``).
        """
        if not self.has_runs:
            raise ValueError(
                f"{what} needs the runs of the empirical ROC, which these PAV blocks do not "
                "keep: pass the trials, or a summary made with keep_runs=True"
            )

    @property
    def runs_n_tar(self) -> np.ndarray:
        """Target trials in each run (int64)."""
        return self._runs[0]

    @property
    def runs_n_non(self) -> np.ndarray:
        """Non-target trials in each run (int64)."""
        return self._runs[1]

    @property
    def runs_score_lo(self) -> np.ndarray:
        """Lowest score of each run (increasing)."""
        return self._runs[2]

    @property
    def n_targets(self) -> int:
        """Total number of target trials N_tar (their total weight, a float, for the blocks of
        :func:`pav_from_weights`).
        """
        return _total(self.n_tar)

    @property
    def n_nontargets(self) -> int:
        """Total number of non-target trials N_non (their total weight, a float, for the blocks
        of :func:`pav_from_weights`).
        """
        return _total(self.n_non)

    @cached_property
    def llr(self) -> np.ndarray:
        """LLR (nats) of each block, ``log((n_tar/N_tar) / (n_non/N_non))`` (eqs. 7.50-7.51, C.20).

        Strictly increasing; ``-inf`` for a block of only non-targets, ``+inf`` for only targets.
        Independent of any prior (theorem 5).
        """
        return block_llr(self.n_tar, self.n_non)

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
        .. [1] :cite:t:`brummer2010thesis` ("thesis").
        """
        llr = self.llr
        return cross_entropy_nats(llr, llr, p_target, tar_weight=self.n_tar, non_weight=self.n_non)


def _total(counts):
    """The sum of block counts: an int, or a float for the weights of weighted trials."""
    return int(counts.sum()) if counts.dtype.kind in "iu" else float(counts.sum())


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
    .. [1] :cite:t:`brummer2010thesis` ("thesis").
    """
    tar, non = trials.tar, trials.non
    if tar.size <= non.size:
        # elements between consecutive points of the cumulative-sum diagram where a block may
        # start (before a target that follows a non-target), see _target_points
        t_pt, n_pt = _target_points(tar, non)
        n_t, n_n = np.diff(t_pt), np.diff(n_pt)
        keep = (n_t + n_n) > 0  # the first element may be empty
        if not keep.all():
            t_pt, n_pt, n_t, n_n = t_pt[1:], n_pt[1:], n_t[keep], n_n[keep]
        starts = _pav_starts(n_t, n_n)
        ends = np.append(starts[1:], n_t.size) - 1
        lo = _lowest(tar, non, t_pt[starts], n_pt[starts], n_t[starts], n_n[starts])
        hi = _highest(tar, non, t_pt[ends + 1], n_pt[ends + 1], n_t[ends], n_n[ends])
    else:
        # element g: the targets above one target-free stretch of non-targets up to the next
        # such stretch (ties to its first score included) and that stretch; a last element
        # (dropped if empty): the targets above every non-target
        right = _sorted_positions(tar, non, "right")
        g = _first_of_runs(right)
        n_t = np.diff(right[g], prepend=0, append=tar.size)
        n_n = np.empty_like(n_t)
        n_n[-1] = 0
        n_n[:-1] = np.diff(g, append=non.size)
        size = n_t.size if n_t[-1] else n_t.size - 1
        n_t, n_n = n_t[:size], n_n[:size]
        starts = _pav_starts(n_t, n_n)
        ends = np.append(starts[1:], size) - 1
        bottom = np.where(starts > 0, right[g[np.maximum(starts - 1, 0)]], 0)  # lowest target
        lo = np.where(n_t[starts] > 0, tar[np.minimum(bottom, tar.size - 1)], non[0])
        last = np.append(g[1:], non.size)[np.minimum(ends, g.size - 1)] - 1  # its last non
        hi = np.where(ends < g.size, non[last], tar[-1])
    return PAVResult(
        score_lo=lo,
        score_hi=hi,
        n_tar=np.add.reduceat(n_t, starts),
        n_non=np.add.reduceat(n_n, starts),
        trials=trials,
    )


def _pav_of_runs(n_t, n_n, lo, hi) -> PAVResult:
    """PAV blocks of runs of increasing scores ``[lo, hi]`` carrying integer class counts."""
    starts = _pav_starts(n_t, n_n)
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
    return _pav_of_runs(
        np.asarray(n_tar, dtype=np.int64),
        np.asarray(n_non, dtype=np.int64),
        np.asarray(score_lo, dtype=float),
        np.asarray(score_hi, dtype=float),
    )


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
        group_llr = np.log(np.add.reduceat(tar, group_starts) / (result.n_targets + a)) - np.log(
            np.add.reduceat(non, group_starts) / (result.n_nontargets + a)
        )
    # group of each real block (augmented positions 1..K); the virtual trials always pool with
    # the end blocks (fraction 1 below a block with non-targets, 0 above one with targets)
    group = np.repeat(np.arange(group_starts.size), np.diff(np.append(group_starts, k + 2)))[1:-1]
    new = np.ones(k, dtype=bool)
    new[1:] = group[1:] != group[:-1]
    starts = np.flatnonzero(new)
    # a rounding guard: pooled float fractions are non-decreasing, their logs must be too
    return starts, np.maximum.accumulate(group_llr[group[starts]])


def pav_from_weights(tar, non, tar_weight, non_weight) -> PAVResult:
    """PAV of weighted trials: a trial of weight w counts as w trials (w any real >= 0).

    The PAV of :func:`pav_from_counts` with real weights in place of counts (thesis app. C: the
    pooling argument holds for any positive masses): the trials are grouped by distinct score
    (ties share a block), each score carrying its target and non-target weight, and the
    weighted isotonic regression of the target fractions pools them; neighbouring blocks of
    equal fraction are pooled too, so the block fractions increase strictly. Trials of zero
    weight carry nothing and are dropped. Integer weights give the blocks (and LLRs, to
    rounding) of the trials repeated that many times.

    Parameters
    ----------
    tar, non : ndarray of float64, 1-D
        Validated target and non-target scores (no NaN).
    tar_weight, non_weight : ndarray of float64
        Their validated, finite, non-negative weights; each class needs a positive total.

    Returns
    -------
    PAVResult
        The blocks; ``n_tar`` and ``n_non`` hold the blocks' target and non-target weights
        (float64), ``n_targets`` / ``n_nontargets`` their totals, ``llr`` the weighted PAV-LLR
        ``log((w_tar_k / W_tar) / (w_non_k / W_non))`` (eq. C.20).
    """
    values, inverse = np.unique(np.concatenate([tar, non]), return_inverse=True)
    t = np.bincount(inverse[: tar.size], weights=tar_weight, minlength=values.size)
    n = np.bincount(inverse[tar.size :], weights=non_weight, minlength=values.size)
    keep = (t + n) > 0
    if not keep.all():
        values, t, n = values[keep], t[keep], n[keep]
    if not (t.sum() > 0 and n.sum() > 0):
        raise ValueError("the weighted PAV needs a positive total weight of each class")
    mass = t + n
    fit = isotonic_regression(t / mass, weights=mass, increasing=True)
    starts = np.asarray(fit.blocks[:-1], dtype=np.int64)
    block_t, block_m = np.add.reduceat(t, starts), np.add.reduceat(mass, starts)
    # pool neighbours whose fractions do not increase (equal, or equal but for rounding)
    new = np.ones(starts.size, dtype=bool)
    new[1:] = block_t[:-1] * block_m[1:] < block_t[1:] * block_m[:-1]
    starts = starts[new]
    ends = np.append(starts[1:], values.size) - 1
    return PAVResult(
        score_lo=values[starts],
        score_hi=values[ends],
        n_tar=np.add.reduceat(t, starts),
        n_non=np.add.reduceat(n, starts),
        runs_n_tar=t,
        runs_n_non=n,
        runs_score_lo=values,
    )
