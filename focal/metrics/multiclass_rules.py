"""Multiclass proper scoring rules other than the logarithmic one, as evaluation measures.

* the quadratic (multiclass Brier) rule ``R_B(P, H_t) = 1 - 2 P_t + sum_i P_i^2`` (Brümmer &
  van Leeuwen, "On calibration of language recognition scores", Odyssey 2006, eq. 13);
* the weighted misclassification rules ``C*_eta`` (Brümmer, "Measuring, refining and calibrating
  speaker and language information extracted from speech", 2010, eqs. 8.12-8.13; Albayzin 2012
  LRE plan, appendix A, eqs. 17-21), whose average over ``eta`` uniform on the simplex is the
  logarithmic rule;
* the LRE criterion E_lre of CAVG's compound decisions at any prior (thesis eq. 8.11).

Each is averaged over supervised trials like C_mce (Albayzin eq. 6; thesis eq. 8.17): the
posterior ``P(i | l_t, pi)`` of Bayes' rule at the evaluation prior, and the weights
``pi_i / |T_i|``. Inputs as in :mod:`focal.metrics.multiclass` (log-likelihoods ``(n, N)``,
labels ``0..N-1``, a prior with possible zeros).

References
----------
.. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
   extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
.. [2] L. J. Rodríguez-Fuentes, N. Brümmer, M. Penagarikano, A. Varona, M. Diez and
   G. Bordel, "The Albayzin 2012 Language Recognition Evaluation Plan", evaluation plan,
   GTTS, UPV/EHU, 2012 ("Albayzin plan").
.. [3] N. Brümmer and D. A. van Leeuwen, "On calibration of language recognition scores",
   Proc. IEEE Odyssey 2006: The Speaker and Language Recognition Workshop, 2006.
.. [4] N. Brümmer, keynote talk on proper scoring rules, Odyssey 2012: The Speaker and
   Language Recognition Workshop, Singapore, 2012 ("the keynote").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import softmax

from ..core.affine import best_affine
from ..core.multiclass import MulticlassTrials, class_trial_weights, contrast_basis
from ..core.newton import dense_solver, minimize_newton
from ..core.validation import check_probability
from .bayes import BayesRisk, bayes_risk, bayes_risk_analysis
from .costs import misclassification_cost_matrix
from .multiclass import affine_calibration_of_trials

__all__ = [
    "multiclass_brier",
    "brier_analysis",
    "BrierAnalysis",
    "eta_risk",
    "eta_risk_analysis",
    "e_lre",
    "e_lre_default",
]


_BRIER_TOL = 1e-11  # gradient norm at the Brier minimum (the cost is O(1), f_scale 1)
_BRIER_MAX_STEP = 1.0  # longest Newton step, standardized units (the model is not convex)


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


def multiclass_brier(llh, labels, prior=None, normalize: bool = False) -> float:
    """Prior-weighted multiclass Brier (quadratic) cost of log-likelihoods.

    ``E_B = sum_i pi_i / |T_i| sum_{t in T_i} (1 - 2 P(i | l_t) + sum_j P(j | l_t)^2)`` with the
    quadratic rule of Brümmer & van Leeuwen (2006) eq. 13 and posteriors at ``prior`` (default
    flat). Values in [0, 2]; the default system (posterior = prior) scores ``1 - sum_i pi_i^2``
    (``1 - 1/N`` at the flat prior), which ``normalize=True`` divides by. For N = 2 it is 2/3
    of the binary Brier rule in the canonical units of thesis eq. 7.36 (``3 (1 - q)^2``).
    Dimensionless.

    Parameters
    ----------
    llh : array_like, shape (n_trials, N)
        Natural-log likelihoods (finite).
    labels : array_like of int, shape (n_trials,)
        True class ``0..N-1``.
    prior : array_like, shape (N,), optional
        Evaluation prior (default flat; zeros ignore a class and its trials).
    normalize : bool, default False
        Divide by the default system's cost ``1 - sum_i pi_i^2``.

    Returns
    -------
    float
        The Brier cost, in [0, 2] (dimensionless).

    References
    ----------
    .. [1] N. Brümmer and D. A. van Leeuwen, "On calibration of language recognition scores",
       Proc. IEEE Odyssey 2006: The Speaker and Language Recognition Workshop, 2006.
    .. [2] N. Brümmer, "Measuring, refining and calibrating speaker and language information
       extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").

    Examples
    --------
    A class-0 trial with posterior (3/4, 1/4) costs ``1 - 3/2 + 10/16 = 1/8``; an
    uninformative class-1 trial ``1 - 1 + 1/2 = 1/2``; flat prior: their mean 5/16.

    >>> import numpy as np
    >>> from focal.metrics import multiclass_brier
    >>> multiclass_brier([[np.log(3.0), 0.0], [0.0, 0.0]], [0, 1])
    0.3125
    """
    t = MulticlassTrials(llh, labels, prior).active()
    L, y, p = t.llh, t.labels, t.prior
    value = float(class_trial_weights(y, p) @ _brier_costs(_posteriors(L, p), y))
    return value / (1.0 - float(p @ p)) if normalize else value


@dataclass(frozen=True)
class BrierAnalysis:
    """Multiclass Brier cost before and after the optimal affine calibration.

    Attributes
    ----------
    actual, default, minimum : float
        Prior-weighted Brier cost of the log-likelihoods, of the default system, and after the
        affine recalibration ``alpha * l + beta`` that minimizes it (the analogue of Albayzin
        eq. 12 for the quadratic rule). ``minimum <= min(actual, default)``. Dimensionless.
    alpha, beta : float, ndarray
        That recalibration (``beta`` zero mean over the classes with non-zero prior).
    """

    actual: float
    default: float
    minimum: float
    alpha: float
    beta: np.ndarray

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

    def __init__(self, L, y, p):
        self.y, self.p = y, p
        self.c = class_trial_weights(y, p)
        self.V = contrast_basis(p.size)
        U = L - L.mean(axis=1, keepdims=True)
        s = float(np.sqrt(self.c @ (U * U).sum(axis=1)))
        self.scale = s if s > 0 else 1.0
        self.U = U / self.scale

    def _chunks(self, theta):
        a, b = theta[0], theta[1:]
        off = self.V @ b
        for lo in range(0, self.y.size, self._CHUNK):
            sl = slice(lo, lo + self._CHUNK)
            u, y, c = self.U[sl], self.y[sl], self.c[sl]
            Q = _posteriors(a * u + off, self.p)
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


def brier_analysis(llh, labels, prior=None) -> BrierAnalysis:
    """:func:`multiclass_brier` before and after the best affine calibration ``alpha l + beta``.

    The quadratic rule is smooth but, unlike the logarithmic one, not convex in the
    calibration parameters (thesis sec. 7.4.2 and 8.3; the keynote's remark that Brier gives a
    non-convex objective). The minimum over ``(alpha, beta)`` is found by focal's Newton solver
    (:func:`focal.core.newton.minimize_newton`) with the exact gradient and Hessian, modified
    where it is indefinite (Nocedal & Wright sec. 3.4) and with steps of at most 1 in
    standardized units, started from the logarithmic-cost optimal calibration (Albayzin eq.
    12), from the identity and from its negation; the best of those and of the identity and
    default systems is returned (:func:`focal.core.affine.best_affine`), so
    ``minimum <= min(actual, default)`` always. The gradient vanishes there to 1e-11; being a
    non-convex problem, a minimum that none of the starts reaches cannot be excluded in
    principle (tests compare with a generic optimizer from many starts). ``alpha`` is not
    constrained. On separable data the infimum 0 is approached as
    ``|alpha|`` grows; the (tiny) value where the gradient vanishes to 1e-11 is returned.
    Costs are computed as ``||q - e_y||^2`` without cancellation, so tiny values are accurate.

    Parameters
    ----------
    llh : array_like, shape (n_trials, N)
        Natural-log likelihoods (finite).
    labels : array_like of int, shape (n_trials,)
        True class ``0..N-1``.
    prior : array_like, shape (N,), optional
        Evaluation prior (default flat; zeros ignore a class and its trials).

    Returns
    -------
    BrierAnalysis
        Dimensionless Brier costs, ``alpha`` and ``beta``.
    """
    t = MulticlassTrials(llh, labels, prior).active()
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
    return BrierAnalysis(
        actual=actual,
        default=default,
        minimum=float(choice.value),
        alpha=float(choice.scale),
        beta=t.scatter(obj.V @ choice.offset),
    )


def eta_risk(llh, labels, eta=None, prior=None, normalize: bool = False) -> float:
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
    llh : array_like, shape (n_trials, N) or (n_trials,)
        Natural-log likelihoods (finite), or binary LLRs (classes (non-target, target)).
    labels : array_like of int, shape (n_trials,)
        True class ``0..N-1`` (binary: 1 = target).
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
    N = np.asarray(llh).shape[1] if np.ndim(llh) == 2 else 2  # 1-D: binary LLRs
    e = np.full(N, 1.0 / N) if eta is None else eta
    return bayes_risk(llh, labels, prior, misclassification_cost_matrix(e), normalize=normalize)


def _coordinate_offsets(S, y, w, miss, b, max_sweeps: int = 20):
    """Offsets ``b`` lowering ``sum_t w_t C(argmax_j (S_tj + b_j) | y_t)`` one class at a time,
    each step exact: with the other offsets fixed, trial t decides j iff ``b_j > theta_t`` (its
    margin to the best other class), so the risk is a step function of ``b_j`` read off one
    sort of the margins. ``C(j | i) = miss_i`` for ``j != i``. Returns ``(risk, b)``.
    """
    n, N = S.shape
    rows = np.arange(n)

    def risk_of(b):
        d = np.argmax(S + b, axis=1)
        return float(w @ np.where(d == y, 0.0, miss[y]))

    best = risk_of(b)
    for _ in range(max_sweeps):
        improved = False
        for j in range(N):
            T = S + b
            T[:, j] = -np.inf
            other = np.argmax(T, axis=1)
            theta = T[rows, other] - S[:, j]
            cost_j = np.where(y == j, 0.0, w * miss[y])
            cost_o = np.where(y == other, 0.0, w * miss[y])
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
                b = b.copy()
                b[j] = 0.5 * (lo + hi) if m not in (0, n) else (hi - 1.0 if m == 0 else lo + 1.0)
                best, improved = float(values[k]), True
        if not improved:
            break
    return min(risk_of(b), best), b


def _line_search(S, y, w, miss, b, d):
    """Exact minimum of the C_eta risk of ``argmax_j (S_tj + b_j + s d_j)`` over the step
    ``s``, for a direction ``d`` with entries -1, 0, 1: per trial the winner is on the upper
    envelope of three lines (the best class of each slope), so the risk is a step function of
    ``s`` with at most two breakpoints per trial, read off one sort. Returns ``(risk, s)``.
    """
    T = S + b
    n = T.shape[0]
    rows = np.arange(n)
    cost = w * miss[y]

    def best_of(mask):
        if not mask.any():
            return np.full(n, -np.inf), np.full(n, -1)
        sub = np.where(mask, T, -np.inf)
        c = np.argmax(sub, axis=1)
        return sub[rows, c], c

    (am, cm), (a0, c0), (ap, cp) = best_of(d < 0), best_of(d == 0), best_of(d > 0)
    with np.errstate(invalid="ignore"):
        lo, hi, mid = am - a0, a0 - ap, 0.5 * (am - ap)  # -/0, 0/+ and -/+ crossings
    middle = lo < hi  # the slope-0 class wins somewhere
    e1 = np.where(middle, lo, mid)
    e2 = np.where(middle, hi, mid)

    def wrong(c):
        return np.where(c == y, 0.0, cost)

    second = np.where(middle, c0, cp)
    pos = np.r_[e1, e2]
    delta = np.r_[wrong(second) - wrong(cm), np.where(middle, wrong(cp) - wrong(c0), 0.0)]
    start = float(wrong(cm).sum() + delta[pos == -np.inf].sum())
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
    another down) and every ``e_j``, until none lowers the risk. Returns ``(risk at b, b)``.
    """
    N = S.shape[1]
    eye = np.eye(N)
    directions = [eye[j] - eye[k] for j in range(N) for k in range(j + 1, N)] + list(eye)
    for _ in range(max_sweeps):
        improved = False
        for d in directions:
            value, step = _line_search(S, y, w, miss, b, d)
            if value < best - 1e-12 * max(best, 1e-300):
                b, best, improved = b + step * d, value, True
        if not improved:
            break
    d = np.argmax(S + b, axis=1)  # the risk attained at b (free of the sums' round-off)
    return float(w @ np.where(d == y, 0.0, miss[y])), b


def eta_risk_analysis(llh, labels, eta=None, prior=None, normalize: bool = False):
    """:func:`eta_risk` with its default, recalibrated and minimized values (thesis 8.12, 5.5).

    As :func:`focal.metrics.bayes_risk_analysis` with ``misclassification_cost_matrix(eta)``,
    and a ``minimum`` also for N > 2 classes. The Bayes decision of C_eta is
    ``argmax_j (l_j + b_j)`` with ``b = log pi - log eta`` (Albayzin eq. 19), so after any
    affine recalibration ``alpha l + beta`` with ``alpha > 0`` it is the same argmax with
    other offsets: the minimum over affine recalibrations is the minimum over the N offsets
    (plus ``alpha < 0``, the same on ``-l``, and ``alpha = 0``, the default). For two classes
    that is one threshold and the minimum is exact. For N > 2 the risk is a step function of
    N - 1 offsets, and its exact minimum is combinatorial: choosing the largest set of trials
    that some offsets classify correctly is a maximum feasible subsystem of difference
    constraints, which contains the maximum acyclic subgraph problem (NP-hard as N grows;
    polynomial, of degree N - 1 in the trials, for fixed N). The thesis calls such criteria
    optimization-unfriendly and defines E^opt instead (sec. 8.4.2, eq. 8.24:
    ``recalibrated``, the risk at the calibration that minimizes the logarithmic cost).
    ``minimum`` is therefore a *local* minimum, an upper bound of the affine minimum: from the
    identity of ``l`` and of ``-l`` and from the logarithmic-optimal calibration with a free
    ``alpha`` (Albayzin eq. 12), exact steps are taken along
    every single offset and every pair ``e_j - e_k`` (one class up, another down; each step
    minimizes the step function exactly along its line), until no such step lowers the risk.
    The identity, E^opt and the default system are candidates too, so it is never above
    ``actual``, ``recalibrated`` or ``default``. On small 3-class sets it usually equals the
    exhaustive minimum, but a global search can find lower values.

    Parameters
    ----------
    llh : array_like, shape (n_trials, N) or (n_trials,)
        Natural-log likelihoods, or binary LLRs, as in :func:`eta_risk`.
    labels : array_like of int, shape (n_trials,)
        True class ``0..N-1`` (binary: 1 = target).
    eta : array_like, shape (N,), optional
        The cost weights, strictly inside the simplex (default flat).
    prior : array_like, shape (N,), optional
        Evaluation prior (default flat; zeros ignore a class and its trials).
    normalize : bool, default False
        Divide every risk by the default system's.

    Returns
    -------
    focal.metrics.BayesRisk
        Actual, minimum (after affine recalibration) and default risks.
    """
    N = np.asarray(llh).shape[1] if np.ndim(llh) == 2 else 2
    e = np.full(N, 1.0 / N) if eta is None else np.asarray(eta, dtype=float)
    C = misclassification_cost_matrix(e)
    base = bayes_risk_analysis(llh, labels, prior, C, normalize=False)
    if base.minimum is None:
        t = MulticlassTrials(llh, labels, prior).active()
        L, y, p, active = t.llh, t.labels, t.prior, t.classes
        w = class_trial_weights(y, p)
        miss = 1.0 / ((N - 1) * e[active])  # C_eta(j | i), j != i (eq. 8.12)
        shift = np.log(p) - np.log(e[active])
        candidates = [base.default, base.actual, base.recalibrated]
        starts = [(L, shift), (-L, shift)]
        # the logarithmic-optimal calibration with a free alpha (Albayzin eq. 12), on l or -l
        alpha, beta, _ = affine_calibration_of_trials(t)
        if np.isfinite(alpha) and alpha != 0 and np.isfinite(beta).all():
            starts.append((np.sign(alpha) * L, (beta + shift) / abs(alpha)))
        for S, b0 in starts:
            risk, b = _coordinate_offsets(S, y, w, miss, b0.copy())
            candidates.append(_pairwise_moves(S, y, w, miss, b, risk)[0])
        minimum = float(min(candidates))
        base = BayesRisk(
            actual=base.actual,
            default=base.default,
            minimum=minimum,
            recalibrated=base.recalibrated,
            alpha=base.alpha,
            beta=base.beta,
            unit=base.unit,
        )
    if not normalize:
        return base
    d = base.default
    if d is None or d <= 0:
        raise ValueError("the default risk is 0: the normalized risk is undefined")
    scaled_min = None if base.minimum is None else base.minimum / d
    return BayesRisk(
        actual=base.actual / d,
        default=1.0,
        minimum=scaled_min,
        recalibrated=base.recalibrated / d,
        alpha=base.alpha,
        beta=base.beta,
        unit="normalized",
    )


def _lre_threshold(p_target: float, n_classes: int) -> float:
    """Posterior threshold of CAVG's compound Bayes decision: accept k iff
    ``P(k | l, pi) >= (1 - a) / ((N - 1) a + 1 - a)`` (``1/N`` at ``a = 1/2``).
    """
    a = p_target
    return (1.0 - a) / ((n_classes - 1) * a + 1.0 - a)


def e_lre(llh, labels, prior=None, p_target=0.5, normalize: bool = False) -> float:
    """E_lre: CAVG's criterion at any evaluation prior (thesis eq. 8.11, swept by eq. 8.28).

    The cost of the compound accept/reject decision ``a`` when class i is true is
    ``p_target (1 - a_i) + (1 - p_target)/(N - 1) sum_{k != i} a_k`` (thesis eq. 8.10 at
    ``p_target = 1/2``; :func:`focal.metrics.lre_cost_matrix`). Its Bayes decision accepts target k
    iff the posterior ``P(k | l_t, pi)`` at the evaluation prior reaches
    ``(1 - p_target) / ((N - 1) p_target + 1 - p_target)`` (``1/N`` at 1/2), and
    ``E_lre = sum_i pi_i / |T_i| sum_{t in T_i} C(a_t | i)``. At the flat prior this is
    :func:`focal.metrics.cavg` (thesis sec. 8.1.1); a non-flat ``prior`` weighs the classes'
    trials and moves the posteriors (the thesis' prior-space evaluation, sec. 8.3.3); classes
    of zero prior are ignored with their trials, so N counts the others. Per
    target separable, so computed without enumerating the 2^N decisions. A fraction in [0, 1];
    ``normalize`` divides by :func:`e_lre_default`. :func:`focal.metrics.cavg_sweep` with
    ``prior=`` sweeps it over ``p_target`` (thesis sec. 8.5.1).

    Parameters
    ----------
    llh : array_like, shape (n_trials, N)
        Natural-log likelihoods (finite).
    labels : array_like of int, shape (n_trials,)
        True class ``0..N-1``.
    prior : array_like, shape (N,), optional
        Evaluation prior (default flat, which gives CAVG).
    p_target : float
        Target prior alpha of each detection application (thesis eq. 8.28).
    normalize : bool, default False
        Divide by :func:`e_lre_default`.

    Returns
    -------
    float
        E_lre, a fraction in [0, 1] (CAVG at the flat prior).

    Examples
    --------
    Uninformative log-likelihoods at prior (1/2, 1/4, 1/4): the posterior is the prior; only
    class 0 reaches 1/3, so every trial accepts class 0 alone: class-0 trials cost 0, the
    others a miss (1/2) and one false alarm ``1/(2 * 2)``: ``E = 2 * 0.25 * 0.75 = 0.375``.

    >>> import numpy as np
    >>> from focal.metrics import e_lre
    >>> e_lre(np.zeros((3, 3)), [0, 1, 2], prior=[0.5, 0.25, 0.25])
    0.375
    """
    t = MulticlassTrials(llh, labels, prior).active()
    L, y, p = t.llh, t.labels, t.prior
    a = check_probability(p_target)
    N = p.size  # the classes of non-zero prior are the targets
    Q = _posteriors(L, p)
    accept = Q >= _lre_threshold(a, N)
    n = y.shape[0]
    own = accept[np.arange(n), y]
    cost = a * (~own) + (1.0 - a) / (N - 1) * (accept.sum(axis=1) - own)
    value = float(class_trial_weights(y, p) @ cost)
    return value / e_lre_default(p, a) if normalize else value


def e_lre_default(prior, p_target=0.5) -> float:
    """E_lre of the best decisions without the recognizer: ``sum_k min(pi_k p, (1 - pi_k)(1 -
    p)/(N - 1))`` (accept or reject each target by the prior alone); ``min(p, 1 - p)`` at the
    flat prior, the CAVG default of :class:`focal.metrics.CavgSweep`. Classes of zero prior
    are not targets (as in :func:`e_lre`).

    Parameters
    ----------
    prior : array_like, shape (N,)
        Evaluation prior over the classes.
    p_target : float, default 0.5
        Target prior alpha of each detection application.

    Returns
    -------
    float
        The default E_lre, a fraction.

    References
    ----------
    .. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
       extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
    """
    pr = np.asarray(prior, dtype=float)
    pr = pr[pr > 0]
    a = check_probability(p_target)
    N = pr.size
    return float(np.minimum(pr * a, (1.0 - pr) * (1.0 - a) / (N - 1)).sum())
