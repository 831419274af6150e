"""Binary proper scoring rules of the beta family, in LLR form, and their expected cost.

Every regular binary proper scoring rule in canonical form is an expectation of the normalized
Bayes decision cost over decision thresholds eta, weighted by a probability density rho
(thesis eq. 7.34), which gives the costs of a posterior q for the target (eq. 7.35)::

    C(q | target)     = int_q^1 rho(eta) / eta dη
    C(q | non-target) = int_0^q rho(eta) / (1 - eta) dη

The beta family takes ``rho = Beta(a, b)``, a, b > 0 (Buja, Stuetzle & Shen; thesis eq. 7.38 is
the symmetric case a = b = gamma + 1; the keynote uses it to aim a rule at part of the DET curve):

==========  ============  ==========================================================
a, b        name          costs
==========  ============  ==========================================================
1, 1        logarithmic   ``-log q``, ``-log(1 - q)`` (eq. 7.39: nats)
2, 2        Brier         3 x ``(1 - q)^2``, ``q^2`` (eq. 7.36)
1/2, 1/2    boosting      2/pi x ``sqrt((1 - q)/q)``, ``sqrt(q/(1 - q))`` (eq. 7.37)
10, 1       (keynote)     weight on high thresholds: the low false-alarm region
==========  ============  ==========================================================

Costs are in the canonical units of eq. 7.34 (rho integrates to 1 and each C*_eta is the
normalized Bayes cost of eq. 3.12), in which the logarithmic rule is in nats. The target cost
is unbounded (infinite at q = 0) iff a <= 1, the non-target cost iff b <= 1 (thesis sec. 7.4.2).

A recognizer's output is a natural-log LLR ``w``; at prior log-odds ``h = logit(p_target)`` the
posterior is ``q = sigmoid(w + h)`` (Bayes' rule), and everything below is a function of
``z = w + h``, computed from ``log q = -softplus(-z)`` and ``log(1 - q) = -softplus(z)`` so that
LLRs of any magnitude are exact.

Training with these rules (thesis eq. 8.15) is convex in an affine model's parameters iff
a <= 1 and b <= 1: the cost's second derivative in z is
``rho(q) (1 - q) (b q - (a - 1)(1 - q))`` for targets and ``rho(q) q (a (1 - q) - (b - 1) q)``
for non-targets. The logarithmic and boosting rules are convex; Brier and the keynote's rule
are not (thesis sec. 7.4.2 and 8.3).

The costs of a general (a, b) are the incomplete beta integral
``J(p, s; x) = int_x^1 t^(p-1) (1 - t)^(s-1) dt`` (target: p = a - 1, s = b, x = q; non-target:
p = b - 1, s = a, x = 1 - q) divided by the beta function B(a, b). For p >= 1 it is
``B(p, s) I_(1-x)(s, p)`` (regularized incomplete beta); for p < 1, where it may diverge at
x = 0, it is computed from ``log x`` with Gauss-Jacobi rules that carry the endpoint
singularities exactly, so it is accurate to a few ulps for LLRs of any size.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`sws2013measures` ("SWS plan").
.. [3] :cite:t:`brummer2012keynote` ("the keynote").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy.linalg import eigh_tridiagonal
from scipy.special import betainc, betaln, expit, xlog1py, xlogy

from .priors import logit as _logit
from .scoring import cross_entropy_nats
from .validation import as_score_array, check_probability, check_scoring_rule

__all__ = [
    "BetaRule",
    "LOGARITHMIC",
    "BRIER",
    "BOOSTING",
    "LOW_FALSE_ALARM",
    "scoring_rule",
    "expected_cost",
    "normalized_expected_cost",
    "default_expected_cost",
    "expected_cost_at_infinity",
]

_NAMED = {}


@dataclass(frozen=True)
class BetaRule:
    """The proper scoring rule induced by the weighting ``rho = Beta(a, b)`` (eqs. 7.34-7.38).

    Parameters
    ----------
    a, b : float
        Shape parameters in (0, 1000]. ``(1, 1)`` is the logarithmic rule; ``a > b`` moves the
        weight to high posterior thresholds (the low false-alarm region), ``a < b`` to low ones.
    """

    a: float
    b: float

    def __post_init__(self):
        a, b = check_scoring_rule((self.a, self.b), "BetaRule")
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)

    @property
    def name(self) -> str:
        """``'logarithmic'``, ``'brier'``, ``'boosting'``, ``'low_false_alarm'``, or
        ``'beta(a, b)'``.
        """
        return _NAMED.get((self.a, self.b), f"beta({self.a:g}, {self.b:g})")

    @property
    def is_logarithmic(self) -> bool:
        """Whether this is the logarithmic rule (a = b = 1)."""
        return self.a == 1.0 and self.b == 1.0

    @property
    def convex(self) -> bool:
        """Whether training an affine model with this rule is a convex problem (a, b <= 1)."""
        return self.a <= 1.0 and self.b <= 1.0

    def weight(self, eta):
        """Weighting density ``rho(eta) = Beta(eta | a, b)`` over Bayes thresholds (eq. 7.34)."""
        eta = np.asarray(eta, dtype=float)
        with np.errstate(divide="ignore"):
            log_rho = (
                xlogy(self.a - 1.0, eta) + xlog1py(self.b - 1.0, -eta) - betaln(self.a, self.b)
            )
        return np.exp(log_rho)

    def target_cost(self, llr, plo=0.0):
        """Cost of target trials with natural-log LLRs ``llr`` at prior log-odds ``plo``.

        Eq. 7.35 at the posterior ``q = sigmoid(llr + plo)``, in the rule's canonical units
        (nats for the logarithmic rule).
        """
        z = np.asarray(llr, dtype=float) + plo
        return self._cost(z, True)

    def nontarget_cost(self, llr, plo=0.0):
        """Cost of non-target trials with natural-log LLRs ``llr`` at prior log-odds ``plo``.

        Eq. 7.35 (the non-target integral) at ``q = sigmoid(llr + plo)``, in the rule's
        canonical units (nats for the logarithmic rule).
        """
        z = np.asarray(llr, dtype=float) + plo
        return self._cost(z, False)

    def _cost(self, z, target: bool):
        u = -z if target else z  # the cost grows with u
        a, b = (self.a, self.b) if target else (self.b, self.a)
        if self.is_logarithmic:
            return np.logaddexp(0.0, u)
        if (a, b) == (2.0, 2.0):
            return 3.0 * expit(u) ** 2
        if (a, b) == (0.5, 0.5):
            with np.errstate(over="ignore"):
                return (2.0 / np.pi) * np.exp(0.5 * u)
        # x = sigmoid(-u) is the posterior of the trial's own class
        log_x = -np.logaddexp(0.0, u)
        log_y = -np.logaddexp(0.0, -u)
        return _upper_beta_integral(a - 1.0, b, log_x, log_y) * np.exp(-betaln(self.a, self.b))

    def cost_and_derivatives(self, z, is_target):
        """Per-trial cost and its first two derivatives with respect to ``z = llr + plo``.

        Parameters
        ----------
        z : ndarray
            LLRs plus prior log-odds.
        is_target : ndarray of bool
            Class of each trial.

        Returns
        -------
        cost, d1, d2 : ndarray
            ``d1`` is ``-rho(q)(1 - q)`` (target) or ``rho(q) q`` (non-target); ``d2`` is given in
            the module docstring.
        """
        z = np.asarray(z, dtype=float)
        cost = np.empty_like(z)
        tar = np.asarray(is_target, dtype=bool)
        cost[tar] = self._cost(z[tar], True)
        cost[~tar] = self._cost(z[~tar], False)
        log_q = -np.logaddexp(0.0, -z)
        log_1mq = -np.logaddexp(0.0, z)
        q = np.exp(log_q)
        one_mq = np.exp(log_1mq)
        base = -betaln(self.a, self.b)
        a, b = self.a, self.b
        with np.errstate(over="ignore"):
            d1 = np.where(
                tar,
                -np.exp((a - 1.0) * log_q + b * log_1mq + base),
                np.exp(a * log_q + (b - 1.0) * log_1mq + base),
            )
        shape = np.where(tar, (a - 1.0) * one_mq - b * q, a * one_mq - (b - 1.0) * q)
        return cost, d1, d1 * shape


LOGARITHMIC = BetaRule(1.0, 1.0)
BRIER = BetaRule(2.0, 2.0)
BOOSTING = BetaRule(0.5, 0.5)
LOW_FALSE_ALARM = BetaRule(10.0, 1.0)
_NAMED.update(
    {
        (1.0, 1.0): "logarithmic",
        (2.0, 2.0): "brier",
        (0.5, 0.5): "boosting",
        (10.0, 1.0): "low_false_alarm",
    }
)
_NAMED_RULES = {(r.a, r.b): r for r in (LOGARITHMIC, BRIER, BOOSTING, LOW_FALSE_ALARM)}


def scoring_rule(spec) -> BetaRule:
    """The :class:`BetaRule` named by ``spec``.

    ``spec`` is a :class:`BetaRule`, one of the names ``'logarithmic'`` (or ``'log'``),
    ``'brier'``, ``'boosting'``, ``'low_false_alarm'`` (the keynote's Beta(10, 1)), or a pair
    ``(a, b)`` of beta parameters. Anything else raises ``ValueError``.
    """
    if isinstance(spec, BetaRule):
        return spec
    a, b = check_scoring_rule(spec)
    return _NAMED_RULES.get((a, b)) or BetaRule(a, b)


def expected_cost(tar, non, p_target=0.5, rule=LOGARITHMIC) -> float:
    """Prior-weighted empirical expected cost of natural-log LLRs under ``rule`` (eq. 8.15).

    ``p/|T_tar| sum C(q_t | target) + (1-p)/|T_non| sum C(q_t | non-target)`` with
    ``q_t = sigmoid(llr_t + logit p)``, in the rule's canonical units (nats for the logarithmic
    rule, where it equals :func:`focal.core.scoring.cross_entropy_nats`). +/-inf LLRs are legal.
    """
    t = as_score_array(tar, "tar")
    n = as_score_array(non, "non")
    p = check_probability(p_target)
    r = scoring_rule(rule)
    if r.is_logarithmic:
        return cross_entropy_nats(t, n, p)
    plo = float(_logit(p))
    return float(p * np.mean(r.target_cost(t, plo)) + (1.0 - p) * np.mean(r.nontarget_cost(n, plo)))


def normalized_expected_cost(tar, non, p_target=0.5, rule=LOGARITHMIC) -> float:
    """:func:`expected_cost` divided by that of the uninformative system (all LLRs 0).

    1 for the uninformative system, 0 for a perfect one; for the logarithmic rule this is
    Cllr at ``p_target`` (thesis eq. 7.41, SWS plan eq. 40). Dimensionless.
    """
    return expected_cost(tar, non, p_target, rule) / default_expected_cost(p_target, rule)


def default_expected_cost(p_target=0.5, rule=LOGARITHMIC) -> float:
    """Expected cost of the uninformative system (every LLR 0) under ``rule`` at ``p_target``.

    ``p C(p | target) + (1 - p) C(p | non-target)``: the normalizer of
    :func:`normalized_expected_cost`; for the logarithmic rule the prior entropy in nats.
    """
    r = scoring_rule(rule)
    p = check_probability(p_target)
    plo = float(_logit(p))
    zero = np.zeros(1)
    return float(p * r.target_cost(zero, plo)[0] + (1.0 - p) * r.nontarget_cost(zero, plo)[0])


def expected_cost_at_infinity(
    llr, is_target, p_target=0.5, rule=LOGARITHMIC, sample_weight=None
) -> float:
    """Lowest expected cost reachable by sharpening ``llr`` without bound (the rule's infimum along
    the ray of an affine model's weights).

    The LLRs ``w0 + t (llr - w0)`` send every trial above the pivot ``w0`` to +inf and every
    trial below it to -inf as ``t -> inf``. A target at -inf costs ``C(0 | target) =
    (a + b - 1) / (a - 1)`` (finite iff a > 1) and a non-target at +inf ``C(1 | non-target) =
    (a + b - 1) / (b - 1)`` (finite iff b > 1) in the canonical units of eq. 7.34 (the integral
    of ``rho(eta) / eta`` resp. ``rho(eta) / (1 - eta)`` over (0, 1), Beta(a, b) density
    ``rho``); the other two limits cost 0. This returns the prior-weighted limit cost (thesis
    eq. 8.15 with class totals of ``sample_weight``) minimized over the pivot, placed between
    distinct LLRs. If it is not above the cost at ``llr``, the training objective decreases
    without a finite minimum along that ray: a rule with a bounded side (e.g. the keynote's
    Beta(10, 1), whose target cost never exceeds 10/9) then trades a few misses at -inf for
    perfectly confident non-targets, and the weights run away.

    Parameters
    ----------
    llr : ndarray, shape (n,)
        Natural-log LLRs of the training trials (finite).
    is_target : ndarray of bool, shape (n,)
        Class of each trial.
    p_target : float
        Effective target prior of the training objective.
    rule : BetaRule or spec
        The scoring rule.
    sample_weight : ndarray, shape (n,), optional
        Non-negative trial weights.

    Returns
    -------
    float
        The limit cost (``inf`` when every pivot leaves a trial at an unbounded cost).
    """
    r = scoring_rule(rule)
    p = check_probability(p_target)
    llr = np.asarray(llr, dtype=float)
    tar = np.asarray(is_target, dtype=bool)
    v = np.ones(llr.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
    c = np.where(tar, p / v[tar].sum(), (1.0 - p) / v[~tar].sum()) * v
    miss = (r.a + r.b - 1.0) / (r.a - 1.0) if r.a > 1.0 else np.inf
    false_alarm = (r.a + r.b - 1.0) / (r.b - 1.0) if r.b > 1.0 else np.inf
    order = np.argsort(llr, kind="stable")
    w, ct, ca = llr[order], np.where(tar, c, 0.0)[order], np.where(tar, 0.0, c)[order]
    # pivot after position k (k = 0..n): targets in [0, k) are missed, non-targets in [k, n)
    # are false alarms; only k at a change of LLR (or an end) keeps tied trials together
    below_t = np.r_[0.0, np.cumsum(ct)]
    above_a = np.r_[np.cumsum(ca[::-1])[::-1], 0.0]
    ok = np.r_[True, w[1:] > w[:-1], True]
    with np.errstate(invalid="ignore"):
        cost = np.where(below_t > 0, miss * below_t, 0.0) + np.where(
            above_a > 0, false_alarm * above_a, 0.0
        )
    return float(cost[ok].min())


# --- the incomplete beta integral J(p, s; x) = int_x^1 t^(p-1) (1-t)^(s-1) dt -----------------

_NODES = 40  # Gauss-Jacobi nodes; with the split point below, errors are ~1e-14 relative


@functools.lru_cache(maxsize=64)
def _gauss_jacobi(gamma: float):
    """Nodes t and weights w with ``sum w f(t) = int_0^1 t^gamma f(t) dt`` for smooth f.

    Golub-Welsch on the recurrence of the shifted Jacobi polynomials (alpha = 0, beta = gamma),
    nodes polished by Newton steps on the orthonormal recurrence and weights from the
    Christoffel function ``1 / sum_k q_k(t)^2``, which stays accurate when the weight is
    singular (gamma near -1) or concentrated (large gamma).
    """
    n, g = _NODES, float(gamma)
    k = np.arange(n + 1, dtype=float)
    s = 2.0 * k + g
    with np.errstate(divide="ignore", invalid="ignore"):
        diag = np.where(s == 0.0, 0.0, g * g / (s * (s + 2.0)))
    diag[0] = g / (g + 2.0)
    k1 = k[1:]
    s1 = s[1:]
    off = np.sqrt(k1 * k1 * (k1 + g) ** 2 / (s1 * s1 * (s1 + 1.0) * (s1 - 1.0)))
    alpha = 0.5 * (1.0 + diag)  # recurrence coefficients in t = (1 + x) / 2
    t = eigh_tridiagonal(alpha[:n], off[: n - 1], eigvals_only=True)
    q0 = np.sqrt(g + 1.0)  # 1 / sqrt(int_0^1 t^gamma dt)

    def orthonormal(t, upto):
        q_prev, q = np.zeros_like(t), np.full_like(t, q0)
        dq_prev, dq = np.zeros_like(t), np.zeros_like(t)
        total = q * q
        for j in range(upto):
            b_j = off[j - 1] if j else 0.0
            q_next = ((t - alpha[j]) * q - b_j * q_prev) / off[j]
            dq_next = (q + (t - alpha[j]) * dq - b_j * dq_prev) / off[j]
            q_prev, q, dq_prev, dq = q, q_next, dq, dq_next
            if j < upto - 1:
                total += q * q
        return q, dq, total

    for _ in range(3):
        q, dq, _ = orthonormal(t, n)
        t = t - q / dq
    _, _, total = orthonormal(t, n)
    return t, 1.0 / total


def _split_point(s: float) -> float:
    # below it (1 - t)^(s-1) stays within e^-2 of 1; above it the upper rule's integrand is
    # smooth on the scale where its weight lives
    return min(0.5, 2.0 / s) if s > 1.0 else 0.5


def _upper_region(p, s, x, log_y):
    """J for x >= split point: ``y^s int_0^1 t^(s-1) (x + y (1-t))^(p-1) dt`` with y = 1 - x."""
    t, w = _gauss_jacobi(s - 1.0)
    y = np.exp(log_y)
    acc = np.zeros_like(x)
    for ti, wi in zip(t, w):
        acc += wi * np.exp((p - 1.0) * np.log(x + y * (1.0 - ti)))
    return np.exp(s * log_y) * acc


def _lower_g(p, s, log_w):
    """``G(w) = int_0^w t^(p-1) ((1-t)^(s-1) - 1) dt``, for w <= split point (bounded)."""
    if s == 1.0:
        return np.zeros_like(log_w)
    t, v = _gauss_jacobi(p)
    w = np.exp(log_w)
    acc = np.zeros_like(w)
    for ti, vi in zip(t, v):
        u = np.maximum(w * ti, 1e-300)
        acc += vi * (np.expm1((s - 1.0) * np.log1p(-u)) / u)
    return np.exp((p + 1.0) * log_w) * acc


@functools.lru_cache(maxsize=64)
def _at_split_point(p: float, s: float):
    """``log x0``, ``J(p, s; x0)`` and ``G(x0)`` at the split point x0."""
    x0 = _split_point(s)
    j0 = _upper_region(p, s, np.array([x0]), np.array([np.log1p(-x0)]))[0]
    g0 = _lower_g(p, s, np.array([np.log(x0)]))[0]
    return float(np.log(x0)), float(j0), float(g0)


def _upper_beta_integral(p, s, log_x, log_y):
    """``J(p, s; x)`` for p > -1, s > 0, from ``log x`` and ``log(1 - x)`` (exact logs).

    Infinite where it diverges (x = 0 with p <= 0, or beyond the float range).
    """
    log_x = np.asarray(log_x, dtype=float)
    log_y = np.asarray(log_y, dtype=float)
    if p >= 1.0:  # bounded, smooth integrand: the regularized incomplete beta is exact
        return np.exp(betaln(p, s)) * betainc(s, p, np.exp(log_y))
    x = np.exp(log_x)
    x0 = _split_point(s)
    out = np.empty_like(log_x)
    up = x >= x0
    if up.any():
        out[up] = _upper_region(p, s, x[up], log_y[up])
    lo = ~up
    if lo.any():
        log_x0, j0, g0 = _at_split_point(p, s)
        delta = np.maximum(log_x0 - log_x[lo], 0.0)  # log(x0 / x)
        # int_x^x0 t^(p-1) dt = x0^p (1 - (x/x0)^p) / p, without cancellation
        with np.errstate(over="ignore", invalid="ignore"):
            if p == 0.0:
                head = delta
            else:
                head = x0**p * (-np.expm1(-p * delta) / p)
        out[lo] = j0 + head + (g0 - _lower_g(p, s, log_x[lo]))
    return out
