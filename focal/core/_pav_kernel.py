"""The integer-exact kernel of :mod:`focal.core.pav`: elements of the sorted trials, the PAVA and
its certificate (see that module's docstring for the method, thesis sec. 7.7.3 and app. C).

Nothing here is public; :mod:`focal.core.pav` builds its results from these arrays.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy.optimize import isotonic_regression

_CHUNK = 1024  # queries per chunk of _sorted_positions
_STRIDE = 16  # targets per stride of _target_points
_INT64_SAFE = 2**31  # totals below this keep every product of two of them inside int64


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
    u = a[group_start]  # distinct a values
    count_a = np.diff(np.append(group_start, a.size))
    left = np.searchsorted(b, u, side="left")
    right = left.copy()  # b scores tied to u: rare, fix up
    maybe_tied = b[np.minimum(left, b.size - 1)] == u
    if maybe_tied.any():
        right[maybe_tied] = np.searchsorted(b, u[maybe_tied], side="right")
    tied = right - left
    gap = left - np.concatenate(([0], right[:-1]))  # b scores strictly before group j
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
    nb[pos_run] = tied[run_first]  # only single-group runs have ties
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
    return np.array(
        [
            x * w < y * v
            for x, v, y, w in zip(a_num.tolist(), a_den.tolist(), b_num.tolist(), b_den.tolist())
        ],
        dtype=bool,
    )


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
    sizes = np.diff(starts, append=nt_runs.size)
    cnt = np.cumsum(nt_runs)
    cw = np.cumsum(w_runs)
    if int(cw[-1]) < _INT64_SAFE:
        # prefix of item i in block b: (cnt_i - T_b) / (cw_i - W_b), with T_b, W_b the sums
        # before the block; prefix >= block  <=>  cnt_i w_b - cw_i nt_b >= T_b w_b - W_b nt_b
        # (every term below 2**62: no overflow)
        lhs = cnt * np.repeat(w_b, sizes)
        lhs -= cw * np.repeat(nt_b, sizes)
        before_t = cnt[starts] - nt_runs[starts]
        before_w = cw[starts] - w_runs[starts]
        return bool(np.all(np.minimum.reduceat(lhs, starts) >= before_t * w_b - before_w * nt_b))
    block_of_run = np.repeat(np.arange(starts.size), sizes)
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


def _first_of_runs(x: np.ndarray) -> np.ndarray:
    """Index of the first item of each run of equal neighbours in ``x`` (not empty)."""
    new = np.empty(x.size, dtype=bool)
    new[0] = True
    np.not_equal(x[1:], x[:-1], out=new[1:])
    return np.flatnonzero(new)


def _sorted_positions(
    haystack: np.ndarray, queries: np.ndarray, side: Literal["left", "right"]
) -> np.ndarray:
    """``np.searchsorted(haystack, queries, side)`` for ascending ``queries``, cache friendly.

    A chunk of consecutive queries can only land between the positions of its first query and
    of the next chunk's first query, so each chunk searches that slice of ``haystack`` (a few
    thousand scores, cache resident) instead of the whole array: fewer and cheaper probes per
    query. A loop over chunks of about a thousand queries, not over trials.
    """
    chunk = _CHUNK
    if queries.size <= 4 * chunk:
        return np.searchsorted(haystack, queries, side=side)
    out = np.empty(queries.size, dtype=np.intp)
    bounds = np.searchsorted(haystack, queries[::chunk], side=side).tolist()
    bounds.append(haystack.size)
    for k in range(len(bounds) - 1):
        lo, q = bounds[k], slice(k * chunk, (k + 1) * chunk)
        np.add(np.searchsorted(haystack[lo : bounds[k + 1]], queries[q], side=side), lo, out=out[q])
    return out


def _lowest(tar, non, t0, n0, n_t, n_n):
    """Lowest score of the elements holding targets ``t0 .. t0 + n_t - 1`` and non-targets
    ``n0 .. n0 + n_n - 1`` (each element holds at least one trial).
    """
    low_t = np.where(n_t > 0, tar[np.minimum(t0, tar.size - 1)], np.inf)
    low_n = np.where(n_n > 0, non[np.minimum(n0, non.size - 1)], np.inf)
    return np.minimum(low_t, low_n)


def _highest(tar, non, t1, n1, n_t, n_n):
    """Highest score of the elements holding targets ``t1 - n_t .. t1 - 1`` and non-targets
    ``n1 - n_n .. n1 - 1`` (each element holds at least one trial).
    """
    high_t = np.where(n_t > 0, tar[np.maximum(t1 - 1, 0)], -np.inf)
    high_n = np.where(n_n > 0, non[np.maximum(n1 - 1, 0)], -np.inf)
    return np.maximum(high_t, high_n)


def _target_points(tar, non):
    """Points of the cumulative-sum diagram where a PAV block may start, targets the fewer.

    Returns ``(t_pt, n_pt)``: the numbers of targets and of non-targets below each point,
    increasing, from ``(0, 0)`` to ``(tar.size, non.size)``. A block boundary is a vertex of
    the greatest convex minorant of the diagram, so it sits before a target that follows a
    non-target (``_first_of_runs`` of the targets' positions among the non-targets).

    Most such points lie strictly above the minorant, and are found so without their positions:
    the minorant lies on or below the convex minorant of any subset of the points, here the
    points before every ``_STRIDE``-th target (whose positions one ``searchsorted`` gives). A
    stride of targets ``j0 .. j1 - 1`` has its points at ``(j + left_j, j)`` (trials below,
    targets below) with ``left_j <= left_{j1}``; as the minorant's slopes (target fractions) lie
    in [0, 1], all of them lie strictly above it when the corner ``(j0 + left_{j1}, j0)`` does
    (exact integer test). Such a stride keeps only its first point; the positions of the
    targets of the other strides are searched exactly.
    """
    n_tar, n_non = tar.size, non.size
    stride = _STRIDE
    first = np.arange(0, n_tar, stride)
    sample = tar[first]
    if (
        n_tar < 64 * stride
        or n_tar + n_non >= _INT64_SAFE
        or 2 * np.count_nonzero(sample[1:] != sample[:-1]) < first.size
    ):  # heavy ties
        below = _first_of_runs(tar)  # first target of each score
        left = _sorted_positions(non, tar[below], "left")
        g = _first_of_runs(left)
        return (np.concatenate(([0], below[g], [n_tar])), np.concatenate(([0], left[g], [n_non])))
    left_first = np.searchsorted(non, sample, side="left")
    # convex minorant of the subset: the origin, the stride points and the end
    w = np.concatenate(([0], first + left_first, [n_tar + n_non]))
    t = np.concatenate(([0], first, [n_tar]))
    d_w, d_t = np.diff(w), np.diff(t)
    step = np.flatnonzero(d_w > 0)
    vertex = np.append(step[_pav_starts(d_t[step], (d_w - d_t)[step])], w.size - 1)
    vw, vt = w[vertex], t[vertex]
    # the corner of each stride against the minorant segment below it
    corner_w = first + np.append(left_first[1:], n_non)
    seg = np.minimum(np.searchsorted(vw, corner_w, side="right") - 1, vw.size - 2)
    seg_w, seg_t = vw[seg], vt[seg]
    above = (first - seg_t) * (vw[seg + 1] - seg_w) > (vt[seg + 1] - seg_t) * (corner_w - seg_w)
    # points packed as (targets below) * 2**32 + (non-targets below): one sort orders them
    key = first[above] << 32 | left_first[above]  # a skipped stride: its first point
    searched = np.flatnonzero(~above)
    if searched.size:
        idx = (searched[:, None] * stride + np.arange(stride)).ravel()
        idx = idx[: np.searchsorted(idx, n_tar)]  # the last stride may be short
        left = _sorted_positions(non, tar[idx], "left")
        new = np.empty(idx.size, dtype=bool)
        new[0] = True
        np.not_equal(left[1:], left[:-1], out=new[1:])
        new[::stride] = True  # every stride's first target
        key = np.concatenate((key, idx[new] << 32 | left[new]))
    key.sort()
    return (
        np.concatenate(([0], key >> 32, [n_tar])),
        np.concatenate(([0], key & 0xFFFFFFFF, [n_non])),
    )


def _pav_starts(n_t, n_n) -> np.ndarray:
    """First index of each PAV block of consecutive items carrying integer class counts
    (a positive total each), certified exactly.
    """
    w = n_t + n_n
    fit = isotonic_regression(n_t / w, weights=w.astype(float), increasing=True)
    starts = np.asarray(fit.blocks[:-1], dtype=np.int64)
    # merge neighbouring blocks whose fractions are exactly equal (no collinear ROCCH vertices)
    if starts.size > 1:
        nt_b = np.add.reduceat(n_t, starts)
        w_b = np.add.reduceat(w, starts)
        equal = ~_exact_less(nt_b[:-1], w_b[:-1], nt_b[1:], w_b[1:]) & ~_exact_less(
            nt_b[1:], w_b[1:], nt_b[:-1], w_b[:-1]
        )
        if equal.any():
            starts = starts[np.concatenate(([True], ~equal))]
    if not _certified(n_t, w, starts):
        starts = _exact_pav_starts(n_t, w)
    return starts
