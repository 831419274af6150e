"""Bayes decisions and empirical Bayes risk for any cost function (thesis ch. 2-3, 5.4, 6.1).

An *application* is a prior ``pi`` over the N classes and a cost matrix ``C[d, i]``: the cost of
decision ``d`` when class ``i`` is true (:cite:t:`brummer2010thesis`, sec. 2.1 and eq. 6.1).
Decisions need not be classes: a detector has (reject, accept); an LRE evaluation has one
accept/reject per target (compound decisions, 2^N of them, thesis sec. 3.5.1 and 8.1); a forensic
examiner may *refer* a trial to a human at a fixed cost. Costs are non-negative and finite, in any
unit.

Given log-likelihoods ``l_t`` (natural log, any per-trial constant), the Bayes decision minimizes
the posterior expected cost (thesis eqs. 2.4-2.8)::

    d*(l_t) = argmin_d  sum_i C[d, i] P(i | l_t, pi),    P(i | l, pi) ~ pi_i exp(l_i)

and the *empirical Bayes risk* of a recognizer is the prior-weighted average cost of its Bayes
decisions on supervised trials (thesis eqs. 5.4 and 6.1, the form of eqs. 7.11 and 8.11)::

    E(C, pi) = sum_i pi_i / |T_i| sum_{t in T_i} C[d*(l_t), i]

Normalized, it is divided by the risk of the best decision made without the recognizer,
``min_d sum_i pi_i C[d, i]`` (thesis eq. 7.20; SWS plan eqs. 9-10), so 1 means "no better than
ignoring the scores". Binary detection cost (P_target, C_miss, C_fa) is the case
``C = [[0, C_miss], [C_fa, 0]]`` over the classes (non-target, target): :func:`bayes_risk` then
equals :func:`focal.metrics.dcf`; NIST's CAVG is the compound application of
:func:`lre_cost_matrix` at the flat prior (thesis eqs. 8.6-8.10).

Binary inputs are 1-D natural-log LLRs ``log p(x|target) - log p(x|non-target)`` with labels 1 =
target, 0 = non-target (class order (non-target, target), so ``C`` has two columns); the prior
is then ``p_target`` or the pair ``(1 - p_target, p_target)``. Multiclass inputs are
``(n_trials, N)`` log-likelihoods with labels ``0..N-1`` and a prior vector (zeros allowed: that
class and its trials are ignored, Albayzin plan footnote 8).

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`sws2013measures` ("SWS plan").
.. [3] :cite:t:`albayzin2012plan` ("Albayzin plan").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.multiclass import MulticlassTrials
from ..core.validation import check_prior
from .costs import as_cost_matrix
from .decisions import (  # the inputs and the decisions
    _decide,
    _labels,
    _Problem,
    _problem,
    binary_envelope,
    binary_prior,
)
from .multiclass import affine_calibration_of_trials

__all__ = [
    "bayes_risk",
    "bayes_risk_analysis",
    "BayesRisk",
    "default_bayes_risk",
]


# ---------------------------------------------------------------------------------------------
# risk


def _risk_of(decisions, y, prior, cost) -> float:
    """``sum_i pi_i / |T_i| sum_t C[d_t, i]`` from a confusion count matrix (no trial loop)."""
    D, N = cost.shape
    counts = np.bincount(decisions * N + y, minlength=D * N).reshape(D, N)
    per_class = np.bincount(y, minlength=N)
    rates = np.divide(counts, per_class, out=np.zeros(counts.shape), where=per_class > 0)
    # summed as (pi_i C[d, i]) * rate[d, i], the order of focal.core.priors.detection_cost
    return float(np.sum((cost * prior) * rates))


def default_bayes_risk(prior, cost) -> float:
    """Risk of the best decision made without the recognizer: ``min_d sum_i pi_i C[d, i]``.

    The normalizer of :func:`bayes_risk` (thesis eq. 7.20 for detection; the default system of
    Albayzin eq. 7 for the logarithmic cost). ``prior`` as in :func:`bayes_decisions` (a scalar
    is a binary ``p_target``).

    Parameters
    ----------
    prior : float, array_like of shape (N,), or None
        Binary: ``p_target`` or ``(1 - p_target, p_target)``. Multiclass: prior vector (zeros
        allowed). None: flat.
    cost : array_like, shape (n_decisions, N)
        ``cost[d, i]``: cost of decision d when class i is true (binary: classes (non-target,
        target)). Finite and non-negative.

    Returns
    -------
    float
        The default risk, in the units of ``cost``.

    References
    ----------
    .. [1] :cite:t:`brummer2010thesis` ("thesis").
    """
    C = np.asarray(cost)
    C = as_cost_matrix(C, C.shape[1] if C.ndim == 2 else -1)
    if np.ndim(prior) == 0 and C.shape[1] == 2:
        pv, _ = binary_prior(prior)
    else:
        pv = check_prior(prior, C.shape[1])
    return float(np.min(C @ pv))


def _normalized(risk: float, default: float) -> float:
    if default <= 0:
        raise ValueError(
            "the best decision without the recognizer costs 0 for this (prior, cost): the "
            "normalized risk is undefined; use normalize=False"
        )
    return risk / default


def bayes_risk(llh, labels, prior, cost, normalize: bool = True) -> float:
    """Empirical Bayes risk of the Bayes decisions of ``llh`` (thesis eqs. 5.4, 6.1; 7.11, 8.11).

    ``E = sum_i pi_i / |T_i| sum_{t in T_i} C[d*(l_t), i]``: trials are weighted by prior over
    class count, so class proportions in the data do not matter. With ``normalize`` divided by
    :func:`default_bayes_risk` (1 = no better than ignoring the scores; thesis eq. 7.20).

    Special cases: ``cost = detection_cost_matrix(C_miss, C_fa)`` on binary LLRs at prior
    ``P_target`` is :func:`focal.metrics.dcf` (normalized like it); ``cost = lre_cost_matrix(N)[1]``
    at the flat prior is :func:`focal.metrics.cavg` (use ``normalize=False``: CAVG is not
    normalized); ``misclassification_cost_matrix(eta)`` gives the C_eta criterion of thesis eq.
    8.12 (:func:`focal.metrics.eta_risk`).

    Parameters
    ----------
    llh : array_like, shape (n_trials,) or (n_trials, N)
        Binary natural-log LLRs (1-D; +/-inf allowed) or multiclass natural-log likelihoods.
    labels : array_like, shape (n_trials,)
        Binary: 1 = target, 0 = non-target. Multiclass: class indices ``0..N-1``; every class of
        non-zero prior needs trials; trials of zero-prior classes are ignored.
    prior : float, array_like of shape (N,), or None
        Binary: ``p_target`` or ``(1 - p_target, p_target)``. Multiclass: prior vector (zeros
        allowed). None: flat.
    cost : array_like, shape (n_decisions, N)
        ``cost[d, i]``: cost of decision d when class i is true (binary: classes (non-target,
        target)). Finite and non-negative.
    normalize : bool, default True
        Divide by :func:`default_bayes_risk`.

    Returns
    -------
    float
        In the units of ``cost`` (dimensionless when normalized).

    Examples
    --------
    Refer at cost 0.3 (flat prior, unit error costs): of two targets (LLRs 2, 0) and two
    non-targets (-2, 1), one target is accepted, one target referred, one non-target rejected
    and one falsely accepted: ``1/2 (0 + 0.3)/2... `` by hand ``0.5 * 0.3/2 + 0.5 * 1/2 = 0.325``;
    the best decision without scores (refer everything) costs 0.3.

    >>> from focal.metrics import bayes_risk, detection_cost_matrix
    >>> C = detection_cost_matrix(1.0, 1.0, c_refer=0.3)
    >>> round(bayes_risk([2.0, 0.0, -2.0, 1.0], [1, 1, 0, 0], 0.5, C, normalize=False), 12)
    0.325
    """
    problem = _problem(llh, prior, cost, labels)
    y = _labels(problem, labels)
    risk = _risk_of(_decide(problem), y, problem.prior, problem.cost)
    if normalize:
        return _normalized(risk, float(np.min(problem.cost @ problem.prior)))
    return risk


@dataclass(frozen=True)
class BayesRisk:
    """Actual, default, minimum and recalibrated Bayes risk of one application.

    The thesis' calibration analysis (eq. 5.5): ``L_tot`` is the actual risk and ``L_min`` the
    least risk over a family Phi of allowed recalibrations, which must contain the null and the
    identity calibrators (so ``L_min <= min(L_tot, L_def)``); ``L_cal = L_tot - L_min``.

    Attributes
    ----------
    actual : float
        Empirical Bayes risk of the recognizer's Bayes decisions (:func:`bayes_risk`).
    default : float
        Risk of the best decision without the recognizer.
    minimum : float or None
        ``L_min`` with Phi the monotone (increasing) recalibrations, for binary inputs: the
        least risk of any decision rule that is monotone in the LLR (the envelope decisions in
        their order, thresholds anywhere), exact. That is what
        :func:`focal.metrics.min_dcf` minimizes for reject/accept (every threshold on the
        ROC, thesis eq. 7.21), and what PAV or any increasing recalibration can reach. With at
        most three decisions on the envelope (reject / refer / accept) it is also the infimum
        over affine recalibrations ``alpha * llr + beta`` with ``alpha > 0``: two thresholds
        are two free parameters. With more decisions it can be lower than the affine
        minimum. Also computed for two-class (n, 2) log-likelihoods (the same problem on
        ``l_1 - l_0``). None for N > 2 classes, where the risk is a step function of the N
        calibration parameters and its exact minimum is a combinatorial problem
        (NP-hard as N grows; the thesis defines E^opt, ``recalibrated``, for such criteria,
        sec. 8.4.2). :func:`focal.metrics.eta_risk_analysis` gives the exact minimum for C_eta
        (within a work budget).
    recalibrated : float
        Risk after the affine calibration ``alpha * l + beta`` (``alpha >= 0``) that minimizes
        the logarithmic cost (multiclass cross-entropy) at the same prior: the thesis' E^opt
        (eqs. 8.22-8.24, sec. 8.4.2), a calibration-insensitive contrast that is an upper bound
        of the affine minimum.
    alpha, beta : float, ndarray
        That calibration (``beta`` per class; binary: ``beta[1] - beta[0]`` is the LLR offset).
    unit : str
        ``"normalized"`` (divided by ``default``) or ``"cost"``.
    exact_minimum : bool
        False when ``minimum`` is only a local minimum, an upper bound of the least risk over
        its family (:func:`focal.metrics.eta_risk_analysis` beyond its exact budget); True
        otherwise.
    """

    actual: float
    default: float
    minimum: float | None
    recalibrated: float
    alpha: float
    beta: np.ndarray
    unit: str
    exact_minimum: bool = True

    @property
    def calibration_loss(self) -> float:
        """``actual - minimum`` (binary) or ``actual - recalibrated`` (multiclass)."""
        ref = self.minimum if self.minimum is not None else self.recalibrated
        return self.actual - ref


def _monotone_minimum(llr, y, prior, cost, log_odds) -> float:
    """Least risk over decision rules monotone in the LLR (envelope order, free thresholds).

    Tied LLRs get one decision. With block costs ``S_k(b)`` (decision k on block b), the
    optimum over thresholds ``t_1 <= ... <= t_{m-1}`` is a running-minimum recursion over the
    m envelope decisions, vectorized over the blocks (O(m n) after one sort).
    """
    dec, _ = binary_envelope(cost, log_odds)
    values, inverse = np.unique(llr, return_inverse=True)
    nb, N = values.size, prior.size
    # exact integer running counts of each class over the sorted blocks, then per decision
    # P[k, j] = cost of giving envelope decision k to blocks 0..j-1
    cum = np.zeros((N, nb + 1))
    for i in range(N):
        cum[i, 1:] = np.cumsum(np.bincount(inverse[y == i], minlength=nb))
    per_class = cum[:, -1]
    scale = np.divide(prior, per_class, out=np.zeros(N), where=per_class > 0)
    P = (cost[dec] * scale) @ cum
    # g_k(j) = least cost of blocks 0..j-1 using decisions 0..k monotonically
    g = P[0].copy()
    for k in range(1, dec.size):
        g = np.minimum.accumulate(g - P[k]) + P[k]
    return float(g[-1])


def _affine_log_optimal(problem: _Problem, y):
    """The affine calibration ``W*`` minimizing the logarithmic cost at the problem's prior with
    ``alpha >= 0`` (thesis eqs. 8.21-8.22, sec. 8.4.2): ``(alpha, beta (N,), calibrated input)``.
    Infinite binary LLRs are left out of the fit (and stay infinite unless ``alpha = 0``).
    """
    if problem.llr is not None:
        finite = np.isfinite(problem.llr)
        yy = y[finite]
        if np.bincount(yy, minlength=2).min() == 0:  # nothing finite to fit on
            return 1.0, np.zeros(2), problem.llr
        Lf = np.column_stack([np.zeros(yy.size), problem.llr[finite]])
        alpha, beta, _ = affine_calibration_of_trials(
            MulticlassTrials(Lf, yy, problem.prior), nonnegative_alpha=True
        )
        offset = beta[1] - beta[0]
        W = np.full(problem.llr.size, offset) if alpha == 0 else alpha * problem.llr + offset
        return alpha, beta, W
    assert problem.trials is not None  # a multiclass problem (no llr) carries its trials
    t = problem.trials.active()
    alpha, beta, _ = affine_calibration_of_trials(t, nonnegative_alpha=True)
    beta = t.scatter(beta)
    return alpha, beta, alpha * problem.llh + beta


def bayes_risk_analysis(llh, labels, prior, cost, normalize: bool = True) -> BayesRisk:
    """Actual, default, minimum and recalibrated empirical Bayes risk (thesis 6.1, 7.3, 8.4).

    See :class:`BayesRisk` for what each number means, in particular how the binary
    ``minimum`` (every monotone decision rule, like :func:`focal.metrics.min_dcf`) relates to
    the minimum over affine recalibrations.

    Parameters
    ----------
    llh : array_like, shape (n_trials,) or (n_trials, N)
        Binary natural-log LLRs (1-D; +/-inf allowed) or multiclass natural-log likelihoods.
    labels : array_like, shape (n_trials,)
        Binary: 1 = target, 0 = non-target. Multiclass: class indices ``0..N-1``; every class of
        non-zero prior needs trials; trials of zero-prior classes are ignored.
    prior : float, array_like of shape (N,), or None
        Binary: ``p_target`` or ``(1 - p_target, p_target)``. Multiclass: prior vector (zeros
        allowed). None: flat.
    cost : array_like, shape (n_decisions, N)
        ``cost[d, i]``: cost of decision d when class i is true (binary: classes (non-target,
        target)). Finite and non-negative.
    normalize : bool, default True
        Divide every risk by :func:`default_bayes_risk`.

    Returns
    -------
    BayesRisk
        Normalized (``unit == "normalized"``, ``default == 1``) or in the units of ``cost``.

    Examples
    --------
    Detection with a refer option: the monotone minimum places both thresholds freely.

    >>> from focal.metrics import bayes_risk_analysis, detection_cost_matrix
    >>> C = detection_cost_matrix(1.0, 1.0, c_refer=0.3)
    >>> a = bayes_risk_analysis([2.0, 0.0, -2.0, 1.0], [1, 1, 0, 0], 0.5, C, normalize=False)
    >>> round(a.actual, 12), round(a.minimum, 12)     # refer the two trials in the middle
    (0.325, 0.15)
    """
    problem = _problem(llh, prior, cost, labels)
    y = _labels(problem, labels)
    p, C = problem.prior, problem.cost
    default = float(np.min(C @ p))
    actual = _risk_of(_decide(problem), y, p, C)
    minimum = None
    if problem.llr is not None:
        minimum = min(_monotone_minimum(problem.llr, y, p, C, problem.log_odds), actual)
    elif problem.llh is not None and problem.llh.shape[1] == 2 and (p > 0).all():  # 2 classes
        llr = problem.llh[:, 1] - problem.llh[:, 0]
        minimum = min(_monotone_minimum(llr, y, p, C, float(np.log(p[1]) - np.log(p[0]))), actual)
    alpha, beta, W = _affine_log_optimal(problem, y)
    rec_problem = _Problem(
        cost=C,
        prior=p,
        llr=W if problem.llr is not None else None,
        log_odds=problem.log_odds,
        llh=W if problem.llr is None else None,
    )
    recalibrated = _risk_of(_decide(rec_problem), y, p, C)
    unit = "cost"
    if normalize:
        actual, recalibrated = _normalized(actual, default), recalibrated / default
        minimum = None if minimum is None else minimum / default
        default, unit = 1.0, "normalized"
    return BayesRisk(
        actual=actual,
        default=default,
        minimum=minimum,
        recalibrated=recalibrated,
        alpha=alpha,
        beta=beta,
        unit=unit,
    )
