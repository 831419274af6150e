"""The multiclass Brier (quadratic) scoring rule as an evaluation measure, with its minimum over
the affine calibration.

The quadratic rule ``R_B(P, H_t) = 1 - 2 P_t + sum_i P_i^2`` (Brümmer & van Leeuwen, "On
calibration of language recognition scores", Odyssey 2006, eq. 13), averaged over supervised
trials like C_mce (Albayzin eq. 6; thesis eq. 8.17): the posterior ``P(i | l_t, pi)`` of Bayes'
rule at the evaluation prior, and the weights ``pi_i / |T_i|``. Inputs as in
:mod:`focal.metrics.multiclass` (log-likelihoods ``(n, N)``, labels ``0..N-1``, a prior with
possible zeros).

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`albayzin2012plan` ("Albayzin plan").
.. [3] :cite:t:`brummer2006calibration`.
.. [4] :cite:t:`brummer2012keynote` ("the keynote").
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import softmax

from ..core.affine import best_affine
from ..core.multiclass import as_multiclass_trials, class_trial_weights, contrast_basis
from ..core.newton import dense_solver, minimize_newton
from .c_eta import least_offset_risk
from .multiclass import affine_calibration_of_trials

__all__ = ["multiclass_brier", "brier_analysis", "BrierAnalysis"]


_BRIER_TOL = 1e-11  # gradient norm at the Brier minimum (the cost is O(1), f_scale 1)
_BRIER_MAX_STEP = 1.0  # longest Newton step, standardized units (the model is not convex)
LIMIT_WORK = 20_000_000  # elements (rays x trials x classes) of the enumeration of the limits
_TIE_RTOL = 1e-9  # directional logits this close (relative) tie in a limit


def _posteriors(L, p):
    """Posteriors (n, N) at the prior ``p`` of validated active-class log-likelihoods."""
    return softmax(L + np.log(p), axis=1)


def _minus_truth(Q, y):
    """``Q - e_y`` per row, its ``y`` entry computed as minus the sum of the others (no
    cancellation when the true class's posterior is near 1).
    """
    rows = np.arange(y.shape[0])
    G = Q.copy()
    G[rows, y] = 0.0
    G[rows, y] = -G.sum(axis=1)
    return G


def _brier_costs(Q, y):
    """``1 - 2 q_y + sum_i q_i^2 = ||q - e_y||^2`` per trial (2006 paper eq. 13)."""
    G = _minus_truth(Q, y)
    return np.einsum("ij,ij->i", G, G)


def multiclass_brier(llh, labels=None, prior=None, normalize: bool = False) -> float:
    """Prior-weighted multiclass Brier (quadratic) cost of log-likelihoods.

    ``E_B = sum_i pi_i / |T_i| sum_{t in T_i} (1 - 2 P(i | l_t) + sum_j P(j | l_t)^2)`` with the
    quadratic rule of Brümmer & van Leeuwen (2006) eq. 13 and posteriors at ``prior`` (default
    flat). Values in [0, 2]; the default system (posterior = prior) scores ``1 - sum_i pi_i^2``
    (``1 - 1/N`` at the flat prior), which ``normalize=True`` divides by. For N = 2 it is 2/3
    of the binary Brier rule in the canonical units of thesis eq. 7.36 (``3 (1 - q)^2``).
    Dimensionless.

    Parameters
    ----------
    llh : array_like, shape (n_trials, N), or MulticlassTrials
        Natural-log likelihoods (finite), or trials holding them with labels and prior.
    labels : array_like of int, shape (n_trials,), optional
        True class ``0..N-1`` (with array ``llh`` only).
    prior : array_like, shape (N,), optional
        Evaluation prior (default flat; zeros ignore a class and its trials); with a
        ``MulticlassTrials``, omit it or give the trials' own.
    normalize : bool, default False
        Divide by the default system's cost ``1 - sum_i pi_i^2``.

    Returns
    -------
    float
        The Brier cost, in [0, 2] (dimensionless).

    References
    ----------
    .. [1] :cite:t:`brummer2006calibration`.
    .. [2] :cite:t:`brummer2010thesis` ("thesis").

    Examples
    --------
    A class-0 trial with posterior (3/4, 1/4) costs ``1 - 3/2 + 10/16 = 1/8``; an
    uninformative class-1 trial ``1 - 1 + 1/2 = 1/2``; flat prior: their mean 5/16.

    >>> import numpy as np
    >>> from focal.metrics import multiclass_brier
    >>> multiclass_brier([[np.log(3.0), 0.0], [0.0, 0.0]], [0, 1])
    0.3125
    """
    t = as_multiclass_trials(llh, labels, prior, who="multiclass_brier").active()
    L, y, p = t.llh, t.labels, t.prior
    value = float(class_trial_weights(y, p) @ _brier_costs(_posteriors(L, p), y))
    return value / (1.0 - float(p @ p)) if normalize else value


@dataclass(frozen=True)
class BrierAnalysis:
    """Multiclass Brier cost before and after the optimal affine calibration.

    Attributes
    ----------
    actual, default, minimum : float
        Prior-weighted Brier cost of the log-likelihoods, of the default system, and the least
        cost over the affine recalibrations ``alpha * l + beta`` (the analogue of Albayzin
        eq. 12 for the quadratic rule), an infimum that may be reached only as the scale grows
        without bound (``limit``). ``minimum <= min(actual, default)``. Dimensionless.
    alpha, beta : float, ndarray
        The recalibration attaining ``minimum`` (``beta`` zero mean over the classes with
        non-zero prior). With ``limit``, the direction along which the cost tends to it:
        ``s (alpha l + beta)`` plus bounded terms as ``s -> inf``; ``|alpha| = 1``, or
        ``alpha = 0`` when only the offsets grow.
    limit : bool
        Whether ``minimum`` is a limit that no finite recalibration attains (some posteriors
        tend to 0 or 1: a bounded rule can gain from hard decisions).
    exhaustive : bool
        Whether every limit at infinite scale was enumerated (within :data:`LIMIT_WORK`);
        False: only the limits where every decision is hard, and ``minimum`` is an upper
        bound of the infimum (see :func:`brier_analysis`).
    """

    actual: float
    default: float
    minimum: float
    alpha: float
    beta: np.ndarray
    limit: bool = False
    exhaustive: bool = True

    @property
    def calibration_loss(self) -> float:
        """``actual - minimum``: what the affine recalibration removes."""
        return self.actual - self.minimum


class _BrierObjective:
    """Brier cost of the logits ``a * u + V b + log pi`` (``u`` the row-centred log-likelihoods
    divided by their weighted spread, so ``a`` is scale-free), with its exact gradient and
    Hessian in ``theta = (a, b)``, in chunks of trials.

    Per trial, with ``q = softmax(z)``, ``g = q - e_y``, ``s = q . g`` and the softmax Jacobian
    ``J = diag(q) - q q^T``: ``dR/dz = 2 J g`` and
    ``d2R/dz2 = 2 (J J + diag(g - s) J - q (J g)^T)`` (symmetric).
    """

    _CHUNK = 4096

    def __init__(self, L, y, p, c=None, support=None):
        self.y, self.p = y, p
        self.c = class_trial_weights(y, p) if c is None else c
        self.V = contrast_basis(p.size)
        U = L - L.mean(axis=1, keepdims=True)
        s = float(np.sqrt(self.c @ (U * U).sum(axis=1)))
        self.scale = s if s > 0 else 1.0
        self.U = U / self.scale
        # a limit's sub-problem: each trial's posterior lives on its support (-inf elsewhere)
        self.outside = None if support is None else np.where(support, 0.0, -np.inf)

    def _chunks(self, theta):
        a, b = theta[0], theta[1:]
        off = self.V @ b
        for lo in range(0, self.y.size, self._CHUNK):
            sl = slice(lo, lo + self._CHUNK)
            u, y, c = self.U[sl], self.y[sl], self.c[sl]
            z = a * u + off
            Q = _posteriors(z if self.outside is None else z + self.outside[sl], self.p)
            yield u, y, c, Q, _minus_truth(Q, y)  # g = q - e_y

    def value(self, theta) -> float:
        return float(sum(c @ _brier_costs(Q, y) for _, y, c, Q, _ in self._chunks(theta)))

    def value_and_grad(self, theta):
        N = self.p.size
        value, ga, gz = 0.0, 0.0, np.zeros(N)
        for u, y, c, Q, G in self._chunks(theta):
            value += float(c @ _brier_costs(Q, y))
            qg = np.einsum("ij,ij->i", Q, G)
            dz = 2.0 * (Q * G - Q * qg[:, None]) * c[:, None]
            ga += float(np.einsum("ij,ij->", dz, u))
            gz += dz.sum(axis=0)
        return value, np.concatenate([[ga], self.V.T @ gz])

    def evaluate(self, theta):
        """``(value, grad, solve, None)`` for :func:`focal.core.newton.minimize_newton`; the
        solve uses the modified Hessian where it is indefinite (:func:`dense_solver`).
        """
        value, grad = self.value_and_grad(theta)
        return value, grad, dense_solver(self.hessian(theta)), None

    def hessian(self, theta):
        N = self.p.size
        Hzz, Hza, Haa = np.zeros((N, N)), np.zeros(N), 0.0
        for u, _y, c, Q, G in self._chunks(theta):
            s = np.einsum("ij,ij->i", Q, G)
            J = -Q[:, :, None] * Q[:, None, :]
            idx = np.arange(N)
            J[:, idx, idx] += Q
            Jg = Q * G - Q * s[:, None]
            H = J @ J + (G - s[:, None])[:, :, None] * J - Q[:, :, None] * Jg[:, None, :]
            H = (H + H.transpose(0, 2, 1)) * c[:, None, None]  # 2 * symmetric part
            Hzz += H.sum(axis=0)
            Hu = np.einsum("tij,tj->ti", H, u)
            Hza += Hu.sum(axis=0)
            Haa += float(np.einsum("ti,ti->", Hu, u))
        V = self.V
        out = np.empty((N, N))
        out[0, 0] = Haa
        out[0, 1:] = out[1:, 0] = V.T @ Hza
        out[1:, 1:] = V.T @ Hzz @ V
        return out


# ---------------------------------------------------------------------------------------------
# limits at infinite scale
#
# Along theta(s) = s v + theta0 (theta = (alpha, b), logits alpha l + V b + log pi), s -> inf,
# each trial's posterior tends to the softmax of theta0's logits over its *support* S_t(v), the
# classes of largest directional logit; a class outside it gets 0. The limit cost is a Brier
# problem of the same kind on the supports (a class with support {j} costs 0 if j is its class,
# else 2), whose own infimum may again be a limit (v, then w, ...). The supports are constant on
# the faces of the central arrangement of the hyperplanes {v : directional logits i and j of
# trial t tie}, and a ray in a face's closure has supports containing the face's, so the least
# limit is found on the rays (1-dimensional faces). At a ray whose tie equations are linearly
# independent, the limit problem separates: a trial whose support holds its class tends to 0
# (a further direction breaks its tie its way), any other to ``1 + 1/|S_t|`` (its posterior
# spread evenly over the support); that value bounds the limit problem from below in every
# case, and a ray with dependent ties (tied scores) is solved as a problem of its own.


class _OverBudget(Exception):
    """The enumeration of the limits would exceed :data:`LIMIT_WORK`."""


def _tie_normals(L, S, V):
    """Distinct normals ``(l_ti - l_tj, V_i - V_j)`` of the tie hyperplanes of classes i < j
    both in the support of trial t, each scaled to max-abs 1 with a positive first non-zero.
    """
    rows = []
    for i, j in itertools.combinations(range(L.shape[1]), 2):
        both = S[:, i] & S[:, j]
        if both.any():
            d = L[both, i] - L[both, j]
            rows.append(np.column_stack([d, np.broadcast_to(V[i] - V[j], (d.size, V.shape[1]))]))
    if not rows:
        return np.empty((0, V.shape[1] + 1))
    n = np.concatenate(rows)
    n = n / np.abs(n).max(axis=1, keepdims=True)
    first = n[np.arange(n.shape[0]), np.argmax(n != 0, axis=1)]
    return np.unique(n * np.sign(first)[:, None], axis=0)


class _Work:
    """The budget left (elements) and the limit problems already solved (by their supports)."""

    def __init__(self, budget):
        self.left = budget
        self.solved: dict = {}

    def spend(self, amount):
        self.left -= amount
        if self.left < 0:
            raise _OverBudget


def _rays(normals, cost_per_ray, work):
    """Unit directions of the rays of the arrangement ``{v : n . v = 0}``, both signs, within
    its row space (the lineality space moves no posterior), and the rank of the normals.
    """
    _, sv, vt = np.linalg.svd(normals, full_matrices=False)
    r = int(np.sum(sv > 1e-10 * sv[0]))
    Q = vt[:r].T
    P = normals @ Q
    work.spend(2 * math.comb(P.shape[0], r - 1) * cost_per_ray)
    if r == 1:
        Z = np.ones((1, 1))
    else:  # the null vector of r - 1 normals: the generalized cross product (cofactors)
        idx = np.array(list(itertools.combinations(range(P.shape[0]), r - 1)))
        M = P[idx]  # (m, r - 1, r)
        Z = np.stack([(-1) ** k * np.linalg.det(np.delete(M, k, axis=2)) for k in range(r)], axis=1)
        size = np.linalg.norm(Z, axis=1)
        Z = Z[size > 1e-12] / size[size > 1e-12, None]
        Z *= np.sign(Z[np.arange(Z.shape[0]), np.argmax(np.abs(Z) > 1e-9, axis=1)])[:, None]
        Z = np.unique(np.round(Z, 12), axis=0)  # a ray met by several sets of normals, once
    dirs = Z @ Q.T
    return np.concatenate([dirs, -dirs]), r


def _limit_problem_value(L, y, c, p, S, V, best, work):
    """``(least limit value, direction)`` of the Brier problem of trials with supports ``S``,
    each value a limit the cost reaches; ``(inf, None)`` when no ray beats ``best``.
    """
    n, N = L.shape
    normals = _tie_normals(L, S, V)
    if normals.shape[0] == 0:
        return np.inf, None
    dirs, _ = _rays(normals, n * N, work)
    rows = np.arange(n)
    supports, lowers = [], []
    step = max(1, (1 << 20) // (n * N))
    for lo in range(0, dirs.shape[0], step):
        v = dirs[lo : lo + step]
        D = v[:, :1, None] * L[None] + (v[:, 1:] @ V.T)[:, None, :]
        D = np.where(S[None], D, -np.inf)
        top = D.max(axis=2, keepdims=True)
        scale = np.abs(np.where(S[None], D, 0.0)).max(axis=(1, 2))[:, None, None]
        T = S[None] & (D >= top - _TIE_RTOL * scale)  # the supports in the limit
        k = T.sum(axis=2)
        phi = np.where(T[:, rows, y], 0.0, 1.0 + 1.0 / k)  # the separated value of each trial
        supports.append(T)
        lowers.append(phi @ c)
    T, lower = np.concatenate(supports), np.concatenate(lowers)
    found, direction = np.inf, None
    for m in np.argsort(lower, kind="stable"):  # best bounds first: the rest is pruned
        bound = min(best, found)
        if not lower[m] < bound - 1e-12 * bound:
            break
        k = T[m].sum(axis=1)
        tied = k >= 2
        pairs = []  # one tie equation per class of a support but its first
        for t in np.flatnonzero(tied):
            a, *others = np.flatnonzero(T[m, t])
            pairs += [np.r_[L[t, a] - L[t, b], V[a] - V[b]] for b in others]
        value = lower[m]
        if pairs and np.linalg.matrix_rank(np.array(pairs)) < len(pairs):  # dependent ties
            phi = np.where(T[m, rows, y], 0.0, 1.0 + 1.0 / k)
            const = float(phi[~tied] @ c[~tied])
            key = (L[tied].tobytes(), y[tied].tobytes(), T[m, tied].tobytes())
            if key not in work.solved:
                work.solved[key] = _problem_infimum(
                    L[tied], y[tied], c[tied], p, T[m, tied], V, min(best, found) - const, work
                )
            value = const + work.solved[key]
        if value < min(best, found):
            found, direction = float(value), dirs[m]
    return found, direction


def _problem_infimum(L, y, c, p, S, V, best, work) -> float:
    """Infimum of the Brier problem of trials with supports ``S``: its finite minimum (Newton
    from the origin) and its limits.
    """
    obj = _BrierObjective(L, y, p, c=c, support=S)
    res = minimize_newton(
        obj.evaluate, np.zeros(p.size), tol=_BRIER_TOL, max_iter=200, max_step=_BRIER_MAX_STEP
    )
    finite = min(obj.value(res.x), obj.value(np.zeros(p.size)))
    limit, _ = _limit_problem_value(L, y, c, p, S, V, min(best, finite), work)
    return min(finite, limit)


def _limits(t, best):
    """``(value, direction, exhaustive)``: the least limit of the Brier cost at infinite scale
    of the active trials ``t`` (every ray, within :data:`LIMIT_WORK`), or beyond the budget the
    least limit where every decision is hard: 2 x the least weighted error of ``argmax_j
    (+-l_tj + b_j)`` over the offsets (:func:`focal.metrics.c_eta.least_offset_risk`, exact
    within its budget, an upper bound beyond) and of deciding one class for every trial.
    """
    L, y, p = t.llh, t.labels, t.prior
    c = class_trial_weights(y, p)
    V = contrast_basis(p.size)
    S = np.ones(L.shape, dtype=bool)
    try:
        value, direction = _limit_problem_value(L, y, c, p, S, V, best, _Work(LIMIT_WORK))
        return value, direction, True
    except _OverBudget:
        pass
    errors, _ = least_offset_risk(t, c, np.ones(p.size), np.log(p))
    return min(2.0 * errors, 2.0 * (1.0 - float(p.max()))), None, False


def brier_analysis(llh, labels=None, prior=None) -> BrierAnalysis:
    """:func:`multiclass_brier` before and after the best affine calibration ``alpha l + beta``.

    The quadratic rule is smooth but, unlike the logarithmic one, not convex in the
    calibration parameters (thesis sec. 7.4.2 and 8.3; the keynote's remark that Brier gives a
    non-convex objective), and bounded: a trial costs at most 2, so hard decisions (posteriors
    0 and 1, reached only as the scale grows without bound) can cost less than any finite
    recalibration, on small or well-separated sets. ``minimum`` is the least of

    * the finite recalibrations: focal's Newton solver (:func:`focal.core.newton.minimize_newton`)
      with the exact gradient and Hessian, modified where it is indefinite (Nocedal & Wright
      sec. 3.4) and with steps of at most 1 in standardized units, started from the
      logarithmic-cost optimal calibration (Albayzin eq. 12), from the identity and from its
      negation, and the identity and default systems themselves
      (:func:`focal.core.affine.best_affine`); the gradient vanishes there to 1e-11, and being
      a non-convex problem, a finite minimum that none of the starts reaches cannot be excluded
      in principle (tests compare with a generic global search);
    * the limits at infinite scale: along ``s v + theta0``, ``s -> inf``, each posterior tends
      to a softmax over the classes of largest directional logit; every such limit is
      enumerated, on the rays of the arrangement of the trials' tie hyperplanes (the comment
      above :func:`_limits` says why rays suffice), within :data:`LIMIT_WORK` elements
      (``exhaustive``). Beyond it, only the limits where every decision is hard: twice the
      least prior-weighted error rate of ``argmax_j (alpha l_j + beta_j)`` over the offsets
      (exact within the budget of :func:`focal.metrics.eta_risk_analysis`, an upper bound
      beyond), so ``minimum`` is then an upper bound of the infimum.

    A minimum reached only as a limit is reported as one (``limit``, with the direction in
    ``alpha`` and ``beta``). ``alpha`` is not constrained. Costs are computed as
    ``||q - e_y||^2`` without cancellation, so tiny values are accurate.

    Parameters
    ----------
    llh : array_like, shape (n_trials, N), or MulticlassTrials
        Natural-log likelihoods (finite), or trials holding them with labels and prior.
    labels : array_like of int, shape (n_trials,), optional
        True class ``0..N-1`` (with array ``llh`` only).
    prior : array_like, shape (N,), optional
        Evaluation prior (default flat; zeros ignore a class and its trials); with a
        ``MulticlassTrials``, omit it or give the trials' own.

    Returns
    -------
    BrierAnalysis
        Dimensionless Brier costs, ``alpha`` and ``beta`` (or the limit's direction).
    """
    t = as_multiclass_trials(llh, labels, prior, who="brier_analysis").active()
    L, y, p = t.llh, t.labels, t.prior
    obj = _BrierObjective(L, y, p)
    default = 1.0 - float(p @ p)
    actual = obj.value(np.concatenate([[obj.scale], np.zeros(p.size - 1)]))
    alpha0, beta0, _ = affine_calibration_of_trials(t)
    starts = [(1.0, np.zeros(p.size - 1)), (-1.0, np.zeros(p.size - 1))]
    if np.isfinite(alpha0) and np.isfinite(beta0).all():
        starts.insert(0, (alpha0, obj.V.T @ beta0))
    fitted = []
    for alpha, b in starts:  # the objective is not convex: several starts (docstring)
        res = minimize_newton(
            obj.evaluate,
            np.concatenate([[alpha * obj.scale], b]),
            tol=_BRIER_TOL,
            max_iter=200,
            max_step=_BRIER_MAX_STEP,
        )
        fitted.append((res.x[0] / obj.scale, res.x[1:]))
    choice = best_affine(
        lambda a, b: obj.value(np.concatenate([[a * obj.scale], b])),
        fitted,
        zero_offset=np.zeros(p.size - 1),
        identity_value=actual,
        default_value=default,
    )
    finite = BrierAnalysis(
        actual=actual,
        default=default,
        minimum=float(choice.value),
        alpha=float(choice.scale),
        beta=t.scatter(obj.V @ choice.offset),
    )
    value, direction, exhaustive = _limits(t, finite.minimum)
    if value < finite.minimum and direction is not None:
        # a finite minimum may lie on the way to the limit, where none of the starts led: start
        # there too (theta = s v in the objective's standardized coordinates)
        for s in (2.0, 8.0, 32.0):
            x0 = s * np.r_[direction[0] * obj.scale, direction[1:]]
            res = minimize_newton(
                obj.evaluate, x0, tol=_BRIER_TOL, max_iter=200, max_step=_BRIER_MAX_STEP
            )
            if obj.value(res.x) < finite.minimum:
                finite = replace(
                    finite,
                    minimum=obj.value(res.x),
                    alpha=float(res.x[0] / obj.scale),
                    beta=t.scatter(obj.V @ res.x[1:]),
                )
    if not value < finite.minimum:
        return replace(finite, exhaustive=exhaustive)
    if direction is None:  # a hard-decision limit found beyond the budget: no direction kept
        alpha, beta = np.nan, t.scatter(np.full(p.size, np.nan), fill=np.nan)
    else:
        a, b = direction[0], contrast_basis(p.size) @ direction[1:]
        if abs(a) > 1e-12:
            a, b = np.sign(a), b / abs(a)
        else:
            a, b = 0.0, b / np.linalg.norm(b)
        alpha, beta = float(a), t.scatter(b)
    return replace(
        finite, minimum=float(value), alpha=alpha, beta=beta, limit=True, exhaustive=exhaustive
    )
