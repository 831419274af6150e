"""The weighted misclassification rules C_eta as evaluation measures, with their minimum over the
affine calibration.

``C_eta(j | i) = 1/((N - 1) eta_i)`` for ``j != i`` (:cite:t:`brummer2010thesis`, eq. 8.12; Albayzin
2012 LRE plan, appendix A, eq. 17), evaluated at the Bayes decisions
``argmax_j P(j | l_t, pi) / eta_j`` (Albayzin eq. 19) and averaged over supervised trials with
the weights ``pi_i / |T_i|`` (thesis eq. 8.11): the proper scoring rule ``C*_eta`` of Albayzin
eq. 18 as a criterion; averaged over ``eta`` uniform on the simplex it is the logarithmic rule
(thesis eq. 8.13, Albayzin eqs. 20-21).

Its minimum over the affine calibration (:func:`eta_risk_analysis`) is the least risk over the
offsets of ``argmax_j (S_tj + b_j)`` on ``S = l`` and ``S = -l``: the exact enumeration and
the local search used beyond its budget are in this module too, below the measures (one
concept: the C_eta risk and its minimum; the enumeration is most of the code).

With weights ``w_t`` and miss costs ``miss_i`` (thesis eq. 8.12: ``1 / ((N - 1) eta_i)``), the
risk ``sum_t w_t miss_{y_t} [argmax_j (S_tj + b_j) != y_t]`` is a step function of the offsets
``b`` (defined up to a common shift). Trial t is correct iff ``b_{y_t} - b_j > C_tj`` for every
``j != y_t``, with ``C_tj = S_tj - S_{t y_t}``: one difference constraint per class pair, and the
least risk is a maximum-weight feasible subsystem of difference constraints (each trial brings
N - 1 of them, all or none).

Exact enumeration (:func:`exact_offset_minimum`). Strict constraints ``x > c`` are handled as
``x >= c + eps`` with a symbolic ``eps > 0`` (numbers are pairs ``(value, eps coefficient)``
compared lexicographically), which is exact with tied scores too. For the best set S of correct
trials the feasible offsets form a polyhedron; its constraint graph is connected (each trial's
constraints join its class to every other), so it has a vertex where N - 1 constraints of S are
tight and form a spanning tree of the classes. Removing a leaf r of that tree leaves a spanning
tree of the other classes, which fixes their offsets and leaves ``b_r`` free on a line through
the vertex. Along that line each trial is correct on a ray (``b_r >= lo`` for class r, ``b_r <=
hi`` for the others if their fixed constraints hold), and the best point is found exactly by one
sort. Enumerating every leaf r, every spanning tree of the other classes (Prüfer sequences) and
every choice of one constraint value per tree edge visits that vertex's line, so the largest
line maximum is the global one. Work: about ``sum_r sum_trees prod_edges (#values per edge) * n``
elements, ``O(n^(N-1) log n)`` for fixed N (``O(n^2 log n)`` for N = 3), exponential in N: the
problem contains the maximum acyclic subgraph problem, NP-hard as N grows.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`albayzin2012plan` ("Albayzin plan").
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np

from ..core.multiclass import MulticlassTrials, as_multiclass_trials, class_trial_weights
from .bayes import BayesRisk, bayes_risk, bayes_risk_analysis
from .costs import misclassification_cost_matrix
from .multiclass import affine_calibration_of_trials

__all__ = ["eta_risk", "eta_risk_analysis"]

EXACT_WORK = 10_000_000  # lines x trials (l and -l) of the exact minimum for exact=None (~5 s)


def eta_risk(llh, labels=None, eta=None, prior=None, normalize: bool = False) -> float:
    """Empirical risk of the weighted misclassification cost C_eta (thesis eqs. 8.12, 8.11).

    Bayes decisions ``argmax_j P(j | l_t, pi) / eta_j`` (Albayzin eq. 19) evaluated with
    ``C_eta(j | i) = 1/((N - 1) eta_i)`` for ``j != i`` (eq. 17) and averaged with weights
    ``pi_i / |T_i|``: the proper scoring rule ``C*_eta`` of Albayzin eq. 18 as a criterion.
    ``eta`` defaults to flat (then ``(N-1)/N`` times the cost is the prior-weighted error rate).
    Averaged over ``eta`` uniform on the simplex it is C_mce (thesis eq. 8.13). In units of the
    cost; with ``normalize`` divided by the default system's risk. Its analysis (minimum over
    recalibrations, calibration loss) is :func:`eta_risk_analysis`.

    Parameters
    ----------
    llh : array_like, shape (n_trials, N) or (n_trials,), or MulticlassTrials
        Natural-log likelihoods (finite), or binary LLRs (classes (non-target, target)), or
        multiclass trials holding log-likelihoods, labels and prior.
    labels : array_like of int, shape (n_trials,), optional
        True class ``0..N-1`` (binary: 1 = target); with array ``llh`` only.
    eta : array_like, shape (N,), optional
        The cost weights, strictly inside the simplex (default flat).
    prior : array_like, shape (N,), optional
        Evaluation prior (default flat; zeros ignore a class and its trials).
    normalize : bool, default False
        Divide by the default system's risk.

    Returns
    -------
    float
        The empirical Bayes risk of the weighted misclassification cost.

    Examples
    --------
    Flat eta over 3 classes: a miss costs ``1/((N - 1) eta_i) = 3/2``; one of the two class-0
    trials is misrecognized, nothing else: ``E = 1/3 * 1/2 * 3/2 = 1/4``.

    >>> from focal.metrics import eta_risk
    >>> eta_risk([[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 2, 0], [0, 0, 1], [0, 0, 2]],
    ...          [0, 0, 1, 1, 2, 2])
    0.25
    """
    N = _n_classes(llh)
    e = np.full(N, 1.0 / N) if eta is None else eta
    return bayes_risk(llh, labels, prior, misclassification_cost_matrix(e), normalize=normalize)


def _n_classes(llh) -> int:
    """N of a ``MulticlassTrials`` or of (n, N) log-likelihoods; 2 for 1-D binary LLRs."""
    if isinstance(llh, MulticlassTrials):
        return llh.n_classes
    return np.asarray(llh).shape[1] if np.ndim(llh) == 2 else 2


def least_offset_risk(t, w, miss, shift, exact=None):
    """``(value, exact)``: the least strict risk ``sum_t w_t miss_{y_t} [argmax_j (S_tj + b_j)
    != y_t]`` over the offsets ``b`` on ``S = l`` and ``S = -l`` of the active trials ``t``
    (a trial that ties is an error): the global minimum by :func:`exact_offset_minimum` when
    ``exact`` (None: within :data:`EXACT_WORK`), else the local search's upper bound from the
    offsets ``shift`` (the identity's) and the log-optimal calibration's. Shared with the
    hard-decision limits of :func:`focal.metrics.brier_analysis`.
    """
    L, y = t.llh, t.labels
    if exact is None:
        exact = 2 * exact_offset_work(L, y) <= EXACT_WORK  # l and -l; no tree is enumerated
    if exact:
        return float(min(exact_offset_minimum(S, y, w, miss) for S in (L, -L))), True
    return float(_local_offset_minimum(t, w, miss, shift)), False


def _local_offset_minimum(t, w, miss, shift):
    """Local minimum of the offsets' risk (the search of :func:`eta_risk_analysis`'s docstring)
    from the identity of ``l`` and ``-l`` and from the free-alpha log-optimal calibration.
    """
    L, y = t.llh, t.labels
    starts = [(L, shift), (-L, shift)]
    alpha, beta, _ = affine_calibration_of_trials(t)
    if np.isfinite(alpha) and alpha != 0 and np.isfinite(beta).all():
        starts.append((np.sign(alpha) * L, (beta + shift) / abs(alpha)))
    values = []
    for S, b0 in starts:
        risk, b = _coordinate_offsets(S, y, w, miss, b0.copy())
        values.append(_pairwise_moves(S, y, w, miss, b, risk)[0])
    return min(values)


def eta_risk_analysis(
    llh, labels=None, eta=None, prior=None, normalize: bool = False, exact: bool | None = None
) -> BayesRisk:
    """:func:`eta_risk` with its default, recalibrated and minimized values (thesis 8.12, 5.5).

    As :func:`focal.metrics.bayes_risk_analysis` with ``misclassification_cost_matrix(eta)``,
    and a ``minimum`` also for N > 2 classes: the least risk over the affine recalibrations
    ``alpha l + beta`` with ``alpha`` free (as the Albayzin plan's C_min, eqs. 11-12). The
    Bayes decision of C_eta is ``argmax_j (l_j + b_j)`` with ``b = log pi - log eta`` (Albayzin
    eq. 19), so after a recalibration with ``alpha > 0`` it is the same argmax with other
    offsets; ``alpha < 0`` is the same on ``-l`` and ``alpha = 0`` the default system. The
    minimum is thus the least risk over the N - 1 free offsets on ``l`` and on ``-l`` (risks of
    offsets where no trial ties), and the default.

    For two classes (binary LLRs or ``(n, 2)`` log-likelihoods) ``minimum`` is
    :func:`focal.metrics.bayes_risk_analysis`'s: every threshold on the LLR, exact, with
    ``alpha >= 0`` as :func:`focal.metrics.min_dcf`. For N > 2 the risk is a step function of
    the offsets and choosing the largest set of trials that some offsets classify correctly is
    a maximum feasible subsystem of difference constraints (NP-hard as N grows; the thesis
    defines E^opt, ``recalibrated``, for such criteria, sec. 8.4.2, eq. 8.24).

    * ``exact=True`` (and ``exact=None`` when the work is at most :data:`EXACT_WORK` elements,
      e.g. 3 classes and ~1500 trials, 4 classes and ~120, 5 classes and ~35): the **global**
      minimum, by enumerating the lines through every vertex of the arrangement of the
      trials' constraints and minimizing exactly along each
      (:func:`exact_offset_minimum`; ``O(n^2 log n)`` for N = 3, ``O(n^(N-1) log n)`` in
      general). ``exact_minimum`` is True. Ties in the scores are resolved exactly, up to the
      rounding of sums of score differences.
    * ``exact=False`` (and ``None`` beyond the budget): an **upper bound** of the global
      minimum, the least risk a local search reaches: from the identity of ``l`` and ``-l``
      and from the logarithmic-optimal calibration with a free ``alpha`` (Albayzin eq. 12),
      exact steps along every single offset and every pair ``e_j - e_k`` until none lowers the
      risk. Risks are counted as the exact minimum counts them (a trial whose true class ties
      with another is an error), so the value is the risk of offsets where no trial ties, or
      above it: never below the global minimum. ``exact_minimum`` is False.

    Either way the identity, E^opt and the default system are candidates, so ``minimum`` is
    never above ``actual``, ``recalibrated`` or ``default``.

    Parameters
    ----------
    llh : array_like, shape (n_trials, N) or (n_trials,), or MulticlassTrials
        Natural-log likelihoods, binary LLRs or multiclass trials, as in :func:`eta_risk`.
    labels : array_like of int, shape (n_trials,), optional
        True class ``0..N-1`` (binary: 1 = target); with array ``llh`` only.
    eta : array_like, shape (N,), optional
        The cost weights, strictly inside the simplex (default flat).
    prior : array_like, shape (N,), optional
        Evaluation prior (default flat; zeros ignore a class and its trials).
    normalize : bool, default False
        Divide every risk by the default system's.
    exact : bool or None, default None
        N > 2: True for the global minimum at any cost, False for the local search, None for
        the global minimum within :data:`EXACT_WORK` and the local search beyond it.

    Returns
    -------
    focal.metrics.BayesRisk
        Actual, minimum (after affine recalibration) and default risks; ``exact_minimum``
        says whether ``minimum`` is the global minimum.
    """
    N = _n_classes(llh)
    e = np.full(N, 1.0 / N) if eta is None else np.asarray(eta, dtype=float)
    C = misclassification_cost_matrix(e)
    base = bayes_risk_analysis(llh, labels, prior, C, normalize=False)
    if base.minimum is None:
        t = as_multiclass_trials(llh, labels, prior, who="eta_risk_analysis").active()
        y, p, active = t.labels, t.prior, t.classes
        w = class_trial_weights(y, p)
        miss = 1.0 / ((N - 1) * e[active])  # C_eta(j | i), j != i (eq. 8.12)
        shift = np.log(p) - np.log(e[active])
        least, exact = least_offset_risk(t, w, miss, shift, exact)
        candidates = [base.default, base.actual, base.recalibrated, least]
        base = replace(base, minimum=float(min(candidates)), exact_minimum=exact)
    if not normalize:
        return base
    d = base.default
    if d is None or d <= 0:
        raise ValueError("the default risk is 0: the normalized risk is undefined")
    scaled_min = None if base.minimum is None else base.minimum / d
    return replace(
        base,
        actual=base.actual / d,
        default=1.0,
        minimum=scaled_min,
        recalibrated=base.recalibrated / d,
        unit="normalized",
    )


# ---------------------------------------------------------------------------------------------
# the minimum over the offsets

_CHUNK = 1 << 19  # elements (lines x trials) of one block of the exact enumeration


# ---------------------------------------------------------------------------------------------
# exact enumeration


def _lex_gt(av, ak, bv, bk):
    """``(av, ak) > (bv, bk)`` lexicographically: ``av + ak eps > bv + bk eps`` for tiny eps."""
    return (av > bv) | ((av == bv) & (ak > bk))


def _spanning_trees(nodes):
    """Edge lists ``(a, b)``, ``a < b``, of every spanning tree on ``nodes`` (Prüfer decoding)."""
    k = len(nodes)
    if k == 1:
        return [[]]
    trees = []
    for seq in itertools.product(range(k), repeat=k - 2):
        degree = [1] * k
        for s in seq:
            degree[s] += 1
        edges = []
        for s in seq:
            leaf = min(i for i in range(k) if degree[i] == 1)
            edges.append((leaf, s))
            degree[leaf] -= 1
            degree[s] -= 1
        edges.append(tuple(i for i in range(k) if degree[i] == 1))
        trees.append([tuple(sorted((nodes[a], nodes[b]))) for a, b in edges])
    return trees


def _potentials(N, edges, root):
    """``(N, E)`` matrix P of -1/0/1 with ``x = P @ d`` for tree-edge differences
    ``d_e = x_a - x_b`` and ``x_root = 0`` (rows of nodes off the tree are 0).
    """
    P = np.zeros((N, len(edges)))
    adj: dict[int, list] = {i: [] for i in range(N)}
    for e, (a, b) in enumerate(edges):
        adj[a].append((b, e, -1.0))  # x_b = x_a - d_e
        adj[b].append((a, e, 1.0))  # x_a = x_b + d_e
    seen, stack = {root}, [root]
    while stack:
        u = stack.pop()
        for v, e, sign in adj[u]:
            if v not in seen:
                seen.add(v)
                P[v] = P[u]
                P[v, e] += sign
                stack.append(v)
    return P


def _edge_values(C, y, N):
    """Per class pair ``(a, b)``: the distinct tight values ``x_a - x_b = (value, eps coef)`` of
    the constraints on that pair (class-a trials: ``(C_tb, 1)``; class-b: ``(-C_ta, -1)``).
    """
    values = {}
    for a, b in itertools.combinations(range(N), 2):
        ia, ib = y == a, y == b
        v = np.r_[C[ia, b], -C[ib, a]]
        k = np.r_[np.ones(int(ia.sum())), -np.ones(int(ib.sum()))]
        u = np.unique(np.column_stack([v, k]), axis=0)
        values[a, b] = (u[:, 0], u[:, 1].astype(np.int64))
    return values


def _plans(N, values):
    """``(r, root, edges, sizes)`` per leaf class r and spanning tree of the other classes."""
    plans = []
    for r in range(N):
        others = [i for i in range(N) if i != r]
        for edges in _spanning_trees(others):
            plans.append((r, others[0], edges, [values[e][0].size for e in edges]))
    return plans


def exact_offset_work(S, y) -> float:
    """Elements (lines x trials) :func:`exact_offset_minimum` visits for scores ``S``.

    The lines of leaf r are the spanning trees of the other classes weighted by the number of
    constraint values per edge; their sum is the weighted tree count of the matrix-tree theorem
    (a minor of the weighted Laplacian), so the work is known without enumerating the trees.
    """
    n, N = S.shape
    C = S - S[np.arange(n), y][:, None]
    values = _edge_values(C, y, N)
    W = np.zeros((N, N))
    for (a, b), (v, _) in values.items():
        W[a, b] = W[b, a] = v.size
    lines = 0.0
    for r in range(N):
        keep = np.arange(N) != r
        Wr = W[np.ix_(keep, keep)]
        laplacian = np.diag(Wr.sum(axis=1)) - Wr
        lines += float(np.linalg.det(laplacian[1:, 1:])) if N > 2 else 1.0
    return lines * n


def _sweep_order(value, tie):
    """Per row, the order of ``(value, tie)`` lexicographically: one sort by ``value``, and a
    lexicographic sort only for the rows where some values are equal.
    """
    order = np.argsort(value, axis=1)
    v = np.take_along_axis(value, order, axis=1)
    tied = np.flatnonzero((v[:, 1:] == v[:, :-1]).any(axis=1))
    if tied.size:
        order[tied] = np.lexsort((tie[tied], value[tied]), axis=1)
    return order


def _line_maxima(C, y, cost, r, Xv, Xk):
    """Best correct weight along the lines ``b_r = s`` (other offsets ``Xv + Xk eps``, shape
    ``(m, N)``): ``(weights (m,), best point (value, coef) per line, ray bounds, feasible)``.
    """
    m, n, N = Xv.shape[0], y.size, C.shape[1]
    own = y == r  # correct iff s >= lo (a right ray); the others iff s <= hi (a left ray)
    Yv, Yk = Xv[:, y[~own]], Xk[:, y[~own]]
    ev = np.empty((m, n))
    ek = np.empty((m, n), dtype=np.int64)
    ok = np.ones((m, n), dtype=bool)
    # others: x_y - s >= C_tr + eps  <=>  s <= (X_y - C_tr, X_y^k - 1)
    ev[:, ~own] = Yv - C[~own, r]
    ek[:, ~own] = Yk - 1
    lov = np.full((m, int(own.sum())), -np.inf)
    lok = np.zeros(lov.shape, dtype=np.int64)
    yo = y[~own]
    for j in range(N):
        if j == r:
            continue
        # class r: s - x_j >= C_tj + eps  <=>  s >= (C_tj + X_j, 1 + X_j^k)
        cv = C[own, j] + Xv[:, j : j + 1]
        ck = np.broadcast_to(1 + Xk[:, j : j + 1], cv.shape)
        up = _lex_gt(cv, ck, lov, lok)
        lov, lok = np.where(up, cv, lov), np.where(up, ck, lok)
        # others, j not in {y, r}: the fixed constraint x_y - x_j >= C_tj + eps
        fixed = yo != j
        sub = ok[:, ~own]
        sub[:, fixed] &= _lex_gt(
            Yv[:, fixed] - Xv[:, j : j + 1], Yk[:, fixed] - Xk[:, j : j + 1], C[~own, j][fixed], 0
        )
        ok[:, ~own] = sub
    ev[:, own], ek[:, own] = lov, lok
    cw = np.where(ok, cost, 0.0)
    left = cw[:, ~own].sum(axis=1)  # the weight at s -> -inf
    # sweep s upwards: a right ray starts (+w) at lo, a left ray ends (-w) just after hi; at one
    # (value, coef) the starts come first (both rays are closed)
    step = np.where(own, cw, -cw)
    order = _sweep_order(ev, 2 * ek + (~own))
    depth = left[:, None] + np.cumsum(np.take_along_axis(step, order, axis=1), axis=1)
    pos = np.argmax(depth, axis=1)
    rows = np.arange(m)
    best = np.maximum(depth[rows, pos], left)
    at = order[rows, pos]
    sv = np.where(depth[rows, pos] >= left, ev[rows, at], -np.inf)
    sk = np.where(depth[rows, pos] >= left, ek[rows, at], 0)
    return best, sv, sk, ev, ek, ok


def exact_offset_minimum(S, y, w, miss) -> float:
    """Exact ``min_b sum_t w_t miss_{y_t} [argmax_j (S_tj + b_j) != y_t]`` (module docstring).

    The minimum is over offsets where no trial ties (the risk of an open cell of the
    arrangement); ties are resolved exactly (symbolic eps), up to the rounding of sums of score
    differences. Vectorized over the lines of one spanning tree (loops over classes and trees
    only).

    Parameters
    ----------
    S : ndarray, shape (n, N)
        Scores (finite); the decision is ``argmax_j (S_tj + b_j)``.
    y : ndarray of int, shape (n,)
        True classes ``0..N-1``.
    w : ndarray, shape (n,)
        Trial weights (``pi_i / |T_i|``).
    miss : ndarray, shape (N,)
        Cost of a wrong decision per true class.

    Returns
    -------
    float
        The least risk, in the units of ``w * miss``.
    """
    n, N = S.shape
    cost = w * miss[y]
    C = S - S[np.arange(n), y][:, None]
    values = _edge_values(C, y, N)
    best, best_correct = -1.0, np.zeros(n, dtype=bool)
    for r, root, edges, sizes in _plans(N, values):
        P = _potentials(N, edges, root)
        M = int(np.prod(sizes))
        step = max(1, _CHUNK // n)
        for lo in range(0, M, step):
            if edges:
                idx = np.unravel_index(np.arange(lo, min(M, lo + step)), sizes)
                Xv = np.column_stack([values[e][0][i] for e, i in zip(edges, idx)]) @ P.T
                Ek = np.column_stack([values[e][1][i] for e, i in zip(edges, idx)])
                Xk = Ek @ P.T.astype(np.int64)
            else:  # two classes: one line
                Xv, Xk = np.zeros((1, N)), np.zeros((1, N), dtype=np.int64)
            weight, sv, sk, ev, ek, ok = _line_maxima(C, y, cost, r, Xv, Xk)
            q = int(np.argmax(weight))
            if weight[q] > best:
                best = float(weight[q])
                own = y == r
                after = ~_lex_gt(ev[q], ek[q], sv[q], sk[q])  # lo <= s
                before = ~_lex_gt(sv[q], sk[q], ev[q], ek[q])  # s <= hi
                best_correct = ok[q] & np.where(own, after, before)
    # the risk of the best point, summed directly (not as total - weight)
    return float(cost[~best_correct].sum())


# ---------------------------------------------------------------------------------------------
# local search (beyond the exact budget)
#
# The risk the search reports is *strict*, like the exact minimum's: a trial is correct only when
# its true class alone attains ``max_j (S_tj + b_j)``; a trial that ties counts as wrong. At any
# offsets ``b`` that risk is at least the risk of every open cell of the arrangement next to
# ``b`` (trials correct at ``b`` stay correct nearby), so a value the search reports is the risk
# of some tie-free offsets or above it: an upper bound of the exact minimum, never below it.
# (With argmax's first-index rule instead, tied integer scores could count a tie as correct and
# report less than the global minimum.)


def _strict_risk(S, y, w, miss, b) -> float:
    """``sum_t w_t miss_{y_t} [y_t is not the only argmax of S_t + b]`` (ties are errors)."""
    T = S + b
    rows = np.arange(T.shape[0])
    own = T[rows, y].copy()
    T[rows, y] = -np.inf
    return float(w @ np.where(own > T.max(axis=1), 0.0, miss[y]))


def _top_two(T):
    """Per row: the largest value, its column and whether no other column attains it."""
    rows = np.arange(T.shape[0])
    c = np.argmax(T, axis=1)
    top = T[rows, c]
    rest = T.copy()
    rest[rows, c] = -np.inf
    return top, c, top > rest.max(axis=1)


def _coordinate_offsets(S, y, w, miss, b, max_sweeps: int = 20):
    """Offsets ``b`` lowering the strict risk one class at a time, each step exact: with the
    other offsets fixed, trial t decides j iff ``b_j > theta_t`` (its margin to the best other
    class; at equality it ties), so the risk is a step function of ``b_j`` read off one sort of
    the margins, and ``b_j`` is placed strictly inside the best step. ``C(j | i) = miss_i`` for
    ``j != i``. Returns ``(strict risk at b, b)``.
    """
    n, N = S.shape
    best = _strict_risk(S, y, w, miss, b)
    for _ in range(max_sweeps):
        improved = False
        for j in range(N):
            T = S + b
            T[:, j] = -np.inf
            top, other, unique = _top_two(T)
            theta = top - S[:, j]
            cost_j = np.where(y == j, 0.0, w * miss[y])  # b_j > theta: j alone wins
            cost_o = np.where((y == other) & unique, 0.0, w * miss[y])  # b_j < theta
            order = np.argsort(theta, kind="stable")
            th = theta[order]
            # risk when the first m trials (smallest margins) decide j, m = 0..n; tied margins
            # cannot be split
            steps = np.concatenate([[0.0], np.cumsum((cost_j - cost_o)[order])])
            ends = np.r_[0, np.flatnonzero(th[1:] > th[:-1]) + 1, n]
            values = cost_o.sum() + steps[ends]
            k = int(np.argmin(values))
            m = ends[k]
            lo = th[m - 1] if m > 0 else th[0] - 2.0
            hi = th[m] if m < n else th[-1] + 2.0
            if values[k] < best - 1e-12 * max(best, 1e-300):
                trial = b.copy()
                trial[j] = (
                    0.5 * (lo + hi) if m not in (0, n) else (hi - 1.0 if m == 0 else lo + 1.0)
                )
                value = _strict_risk(S, y, w, miss, trial)  # what the step reached, exactly
                if value < best - 1e-12 * max(best, 1e-300):
                    b, best, improved = trial, value, True
        if not improved:
            break
    return best, b


def _line_search(S, y, w, miss, b, d):
    """Exact minimum of the strict C_eta risk of ``argmax_j (S_tj + b_j + s d_j)`` over the step
    ``s``, for a direction ``d`` with entries -1, 0, 1: per trial the winner is on the upper
    envelope of three lines (the best class of each slope), so the risk is a step function of
    ``s`` with at most two breakpoints per trial, read off one sort; the step returned lies
    strictly between breakpoints. A trial whose slope group has two best classes ties wherever
    that group wins (wrong there). Returns ``(risk, s)``.
    """
    T = S + b
    n = T.shape[0]
    cost = w * miss[y]

    def best_of(mask):
        if not mask.any():
            return np.full(n, -np.inf), np.full(n, -1), np.zeros(n, dtype=bool)
        return _top_two(np.where(mask, T, -np.inf))

    (am, cm, um), (a0, c0, u0), (ap, cp, up) = best_of(d < 0), best_of(d == 0), best_of(d > 0)
    with np.errstate(invalid="ignore"):
        lo, hi, mid = am - a0, a0 - ap, 0.5 * (am - ap)  # -/0, 0/+ and -/+ crossings
    middle = lo < hi  # the slope-0 class wins somewhere
    e1 = np.where(middle, lo, mid)
    e2 = np.where(middle, hi, mid)

    def wrong(c, unique):
        return np.where((c == y) & unique, 0.0, cost)

    second = np.where(middle, c0, cp)
    second_unique = np.where(middle, u0, up)
    pos = np.r_[e1, e2]
    delta = np.r_[
        wrong(second, second_unique) - wrong(cm, um),
        np.where(middle, wrong(cp, up) - wrong(c0, u0), 0.0),
    ]
    start = float(wrong(cm, um).sum() + delta[pos == -np.inf].sum())
    keep = np.isfinite(pos)
    pos, delta = pos[keep], delta[keep]
    order = np.argsort(pos, kind="stable")
    pos, steps = pos[order], np.cumsum(delta[order])
    if pos.size == 0:
        return start, 0.0
    ends = np.r_[np.flatnonzero(pos[1:] > pos[:-1]), pos.size - 1]  # last event of each spot
    values = np.r_[start, start + steps[ends]]
    k = int(np.argmin(values))
    spots = pos[ends]
    if k == 0:
        return float(values[0]), float(spots[0] - 1.0)
    if k == spots.size:
        return float(values[k]), float(spots[-1] + 1.0)
    return float(values[k]), float(0.5 * (spots[k - 1] + spots[k]))


def _pairwise_moves(S, y, w, miss, b, best, max_sweeps: int = 20):
    """After :func:`_coordinate_offsets`: exact steps along every ``e_j - e_k`` (one class up,
    another down) and every ``e_j``, until none lowers the strict risk. Returns ``(strict risk
    at b, b)``.
    """
    N = S.shape[1]
    eye = np.eye(N)
    directions = [eye[j] - eye[k] for j in range(N) for k in range(j + 1, N)] + list(eye)
    for _ in range(max_sweeps):
        improved = False
        for d in directions:
            value, step = _line_search(S, y, w, miss, b, d)
            if value < best - 1e-12 * max(best, 1e-300):
                trial = b + step * d
                value = _strict_risk(S, y, w, miss, trial)  # what the step reached, exactly
                if value < best - 1e-12 * max(best, 1e-300):
                    b, best, improved = trial, value, True
        if not improved:
            break
    return _strict_risk(S, y, w, miss, b), b
