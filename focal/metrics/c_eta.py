"""The weighted misclassification rules C_eta as evaluation measures, with their minimum over the
affine calibration.

``C_eta(j | i) = 1/((N - 1) eta_i)`` for ``j != i`` (Brümmer, "Measuring, refining and
calibrating speaker and language information extracted from speech", 2010, eq. 8.12; Albayzin
2012 LRE plan, appendix A, eq. 17), evaluated at the Bayes decisions
``argmax_j P(j | l_t, pi) / eta_j`` (Albayzin eq. 19) and averaged over supervised trials with
the weights ``pi_i / |T_i|`` (thesis eq. 8.11): the proper scoring rule ``C*_eta`` of Albayzin
eq. 18 as a criterion; averaged over ``eta`` uniform on the simplex it is the logarithmic rule
(thesis eq. 8.13, Albayzin eqs. 20-21).

References
----------
.. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
   extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
.. [2] L. J. Rodríguez-Fuentes, N. Brümmer, M. Penagarikano, A. Varona, M. Diez and
   G. Bordel, "The Albayzin 2012 Language Recognition Evaluation Plan", evaluation plan,
   GTTS, UPV/EHU, 2012 ("Albayzin plan").
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..core.multiclass import MulticlassTrials, class_trial_weights
from ._eta_offsets import (
    _coordinate_offsets,
    _pairwise_moves,
    exact_offset_minimum,
    exact_offset_work,
)
from .bayes import BayesRisk, bayes_risk, bayes_risk_analysis
from .costs import misclassification_cost_matrix
from .multiclass import affine_calibration_of_trials

__all__ = ["eta_risk", "eta_risk_analysis"]

EXACT_WORK = 10_000_000  # lines x trials (l and -l) of the exact minimum for exact=None (~5 s)


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
    llh, labels, eta=None, prior=None, normalize: bool = False, exact: bool | None = None
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
      (:mod:`focal.metrics._eta_offsets`; ``O(n^2 log n)`` for N = 3, ``O(n^(N-1) log n)`` in
      general). ``exact_minimum`` is True. Ties in the scores are resolved exactly, up to the
      rounding of sums of score differences.
    * ``exact=False`` (and ``None`` beyond the budget): a *local* minimum, an upper bound of
      the global one: from the identity of ``l`` and ``-l`` and from the logarithmic-optimal
      calibration with a free ``alpha`` (Albayzin eq. 12), exact steps along every single
      offset and every pair ``e_j - e_k`` until none lowers the risk. ``exact_minimum`` is
      False.

    Either way the identity, E^opt and the default system are candidates, so ``minimum`` is
    never above ``actual``, ``recalibrated`` or ``default``.

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
    exact : bool or None, default None
        N > 2: True for the global minimum at any cost, False for the local search, None for
        the global minimum within :data:`EXACT_WORK` and the local search beyond it.

    Returns
    -------
    focal.metrics.BayesRisk
        Actual, minimum (after affine recalibration) and default risks; ``exact_minimum``
        says whether ``minimum`` is the global minimum.
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
        candidates = [base.default, base.actual, base.recalibrated]
        if exact is None:
            exact = 2 * exact_offset_work(L, y) <= EXACT_WORK  # l and -l; no tree is enumerated
        if exact:
            candidates += [exact_offset_minimum(S, y, w, miss) for S in (L, -L)]
        else:
            shift = np.log(p) - np.log(e[active])
            candidates.append(_local_offset_minimum(t, w, miss, shift))
        base = replace(base, minimum=float(min(candidates)), exact_minimum=bool(exact))
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
