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
from .multiclass import affine_calibration_of_trials

__all__ = ["multiclass_brier", "brier_analysis", "BrierAnalysis"]


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
