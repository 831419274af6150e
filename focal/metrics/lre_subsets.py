"""A multiclass measure over every subset of the classes (Brümmer 2010, sec. 8.3.3, fig. 8.3).

Each subset of two or more classes is a language-recognition evaluation of its own: the prior
is flat over its classes (zero elsewhere) and only the trials of those classes count. The
built-in measures (CAVG, thesis eq. 8.3; C_mce, Albayzin eq. 6; multiclass Cllr) are read, for
all subsets at once, off per-(subset, class) decision and cost sums; any other measure is
called once per subset.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`albayzin2012plan` ("Albayzin plan").
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from .lre import _check_trials

__all__ = ["subset_analysis", "SubsetAnalysis"]

_SUBSET_MEASURES = ("cavg", "multiclass_cross_entropy", "multiclass_cllr")
_WIDE = 600.0  # rows whose log-likelihoods span more than this many nats take the exact path
_MAX_SUBSET_CLASSES = 20


@dataclass(frozen=True)
class SubsetAnalysis:
    """A measure evaluated on every subset of at least two classes (thesis fig. 8.3).

    Subset ``s`` is the LRE restricted to the classes in ``masks[s]`` with a flat prior over
    them (the other prior components zeroed and the rest renormalized), using only the trials
    of those classes.

    Attributes
    ----------
    masks : ndarray of bool, shape (n_subsets, N)
    sizes : ndarray of int, shape (n_subsets,)
    values : ndarray, shape (n_subsets,)
    measure : str
    """

    masks: np.ndarray
    sizes: np.ndarray
    values: np.ndarray
    measure: str


def _count_rows(flags: np.ndarray) -> np.ndarray:
    """Column counts of a 2-D boolean array (fast: byte view, int32 accumulator)."""
    return np.add.reduce(flags.view(np.uint8), axis=0, dtype=np.int32)


def _subset_stats(L, y, want_xe):
    """Sufficient statistics of every subset (bitmask ``g`` over the N classes) and class i:
    ``miss[g, i]`` trials of i rejecting i, ``fa[g, i]`` false accepts of other classes of g by
    trials of i, ``xe[g, i]`` sum of -log posterior of i (flat prior over g), nats.
    """
    n, N = L.shape
    size = 1 << N
    miss = np.zeros((size, N))
    fa = np.zeros((size, N))
    xe = np.zeros((size, N)) if want_xe else None
    top = L.max(axis=1)
    wide = (top - L.min(axis=1)) > _WIDE
    E = np.exp(L - top[:, None])  # in [e^-600, 1] on the fast rows: no underflow
    per_chunk = max(1, (1 << 21) >> (N - 1))
    for i in range(N):
        others = np.delete(np.arange(N), i)
        n_local = 1 << (N - 1)
        # local subset s (all contain i) has bit p set when it contains others[p]
        bits = (np.arange(n_local)[None, :] >> np.arange(N - 1)[:, None]) & 1  # (N-1, n_local)
        glob = (1 << i) | ((1 << others) @ bits)
        m = 1.0 + bits.sum(axis=0)
        rows = np.flatnonzero((y == i) & ~wide)
        miss_i = np.zeros(n_local)
        fa_i = np.zeros(n_local)
        xe_i = np.zeros(n_local)
        for lo in range(0, rows.size, per_chunk):
            Ec = E[rows[lo : lo + per_chunk]]
            # sum of E over every subset, by doubling: subsets with bit p = those without + E_p
            sums = np.empty((Ec.shape[0], n_local))
            sums[:, 0] = Ec[:, i]
            for p, k in enumerate(others):
                h = 1 << p
                np.add(sums[:, :h], Ec[:, k : k + 1], out=sums[:, h : 2 * h])
            R = sums / m  # accept k iff E_k >= mean of E over the subset
            miss_i += _count_rows(Ec[:, i : i + 1] < R)
            for p, k in enumerate(others):
                fa_i += _count_rows(Ec[:, k : k + 1] >= R) * bits[p]
            if want_xe:
                xe_i += np.log(sums).sum(axis=0) - np.log(Ec[:, i]).sum()
        miss[glob, i] += miss_i
        fa[glob, i] += fa_i
        if want_xe:
            xe[glob, i] += xe_i
    if wide.any():
        _subset_stats_exact(L[wide], y[wide], miss, fa, xe)
    return miss, fa, xe


def _subset_stats_exact(L, y, miss, fa, xe):
    """The same statistics for rows of very wide dynamic range, one subset at a time, each
    shifted by its own maximum (exact for log-likelihoods of any magnitude).
    """
    N = L.shape[1]
    for size in range(2, N + 1):
        for combo in combinations(range(N), size):
            cols = np.array(combo)
            rows = np.isin(y, cols)
            if not rows.any():
                continue
            g = int(np.sum(1 << cols))
            sub = L[rows][:, cols]
            own = np.searchsorted(cols, y[rows])
            shift = sub.max(axis=1)
            E = np.exp(sub - shift[:, None])
            total = E.sum(axis=1)
            accept = size * E >= total[:, None]
            r = np.arange(own.size)
            own_acc = accept[r, own]
            miss[g, cols] += np.bincount(own, weights=~own_acc, minlength=size)
            fa[g, cols] += np.bincount(own, weights=accept.sum(axis=1) - own_acc, minlength=size)
            if xe is not None:
                cost = np.log(total) + shift - sub[r, own]
                xe[g, cols] += np.bincount(own, weights=cost, minlength=size)


def subset_analysis(llh, labels=None, measure="cavg", progress=False) -> SubsetAnalysis:
    """Evaluate ``measure`` on every subset of two or more classes (thesis sec. 8.3.3, fig. 8.3).

    Each subset defines an LRE of its own: the prior is flat over its classes (zero elsewhere)
    and only the trials of those classes count. For N = 14 there are 16369 such subsets
    (``2^N - N - 1``; one class alone is no recognition problem).

    Parameters
    ----------
    llh : array_like, shape (n_trials, N), or MulticlassTrials
        Natural-log likelihoods; N at most 20. Or a
        :class:`~focal.core.multiclass.MulticlassTrials` (``labels`` omitted) whose classes of
        non-zero prior have equal prior: the subsets are then of those classes (the columns of
        its :meth:`~focal.core.multiclass.MulticlassTrials.active` view).
    labels : array_like of int, shape (n_trials,), optional
        True class ``0..N-1``; every class needs trials.
    measure : {"cavg", "multiclass_cross_entropy", "multiclass_cllr"} or callable
        ``"cavg"``: CAVG of the Bayes decisions at P_target = 1/2 (thesis eqs. 8.3, 8.11);
        ``"multiclass_cross_entropy"``: C_mce in nats; ``"multiclass_cllr"``: the same in bits.
        The built-in measures are computed for all subsets at once from per-(subset, class)
        decision counts (one matrix product per class and chunk of trials). A callable
        ``measure(llh_subset, labels_subset) -> float`` is called once per subset, with the
        columns of the subset and labels renumbered ``0..m-1`` (slow for large N).
    progress : bool or callable, default False
        With a callable ``measure``: a tqdm bar over the subsets (the ``progress`` extra), or a
        callable given the number of subsets done.

    Returns
    -------
    SubsetAnalysis
        The measure of every subset of two or more classes.

    Examples
    --------
    >>> import numpy as np
    >>> from focal.metrics import subset_analysis
    >>> res = subset_analysis(np.zeros((6, 3)), [0, 1, 2, 0, 1, 2])
    >>> res.sizes, res.values        # 3 pairs and the triple; useless scores: CAVG 1/2
    (array([2, 2, 2, 3]), array([0.5, 0.5, 0.5, 0.5]))
    """
    L, y, _, N, counts = _check_trials(llh, labels, who="subset_analysis")
    if N > _MAX_SUBSET_CLASSES:
        raise ValueError(
            f"subset_analysis enumerates 2^N subsets; N = {N} is more than {_MAX_SUBSET_CLASSES}"
        )
    g = np.arange(1 << N)
    member = ((g[:, None] >> np.arange(N)) & 1).astype(bool)
    sizes = member.sum(axis=1)
    keep = sizes >= 2
    masks, sizes, g = member[keep], sizes[keep], g[keep]
    if callable(measure):
        from .._progress import Progress

        values = np.empty(g.size)
        with Progress(progress, g.size, "subsets") as bar:
            for s, mask in enumerate(masks):
                cols = np.flatnonzero(mask)
                rows = mask[y]
                values[s] = measure(L[rows][:, cols], np.searchsorted(cols, y[rows]))
                bar.update()
        name = getattr(measure, "__name__", "callable")
        return SubsetAnalysis(masks=masks, sizes=sizes, values=values, measure=name)
    if measure not in _SUBSET_MEASURES:
        raise ValueError(
            f"measure must be one of {_SUBSET_MEASURES} or a callable, got {measure!r}"
        )
    miss, fa, xe = _subset_stats(L, y, want_xe=measure != "cavg")
    miss, fa = miss[g], fa[g]
    m = sizes.astype(float)
    if measure == "cavg":
        per_class = 0.5 * miss / counts + 0.5 * fa / counts / np.maximum(m - 1, 1)[:, None]
    else:
        per_class = xe[g] / counts
    values = np.where(masks, per_class, 0.0).sum(axis=1) / m
    if measure == "multiclass_cllr":
        values = values / np.log(2.0)
    return SubsetAnalysis(masks=masks, sizes=sizes, values=values, measure=measure)
