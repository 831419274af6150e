"""Multiclass proper scoring rules other than the logarithmic one, as evaluation measures.

* the quadratic (multiclass Brier) rule ``R_B(P, H_t) = 1 - 2 P_t + sum_i P_i^2`` (Brümmer &
  van Leeuwen, "On calibration of language recognition scores", Odyssey 2006, eq. 13);
* the weighted misclassification rules ``C*_eta`` (:cite:t:`brummer2010thesis`, eqs. 8.12-8.13;
Albayzin 2012
  LRE plan, appendix A, eqs. 17-21), whose average over ``eta`` uniform on the simplex is the
  logarithmic rule;
* the LRE criterion E_lre of CAVG's compound decisions at any prior (thesis eq. 8.11).

Each is averaged over supervised trials like C_mce (Albayzin eq. 6; thesis eq. 8.17): the
posterior ``P(i | l_t, pi)`` of Bayes' rule at the evaluation prior, and the weights
``pi_i / |T_i|``. Inputs as in :mod:`focal.metrics.multiclass` (log-likelihoods ``(n, N)``,
labels ``0..N-1``, a prior with possible zeros).

The Brier rule lives in :mod:`focal.metrics.brier`, C_eta (with its minimum over the affine
calibration) in :mod:`focal.metrics.c_eta`, E_lre here.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`albayzin2012plan` ("Albayzin plan").
.. [3] :cite:t:`brummer2006calibration`.
.. [4] :cite:t:`brummer2012keynote` ("the keynote").
"""

from __future__ import annotations

import numpy as np

from ..core.multiclass import as_multiclass_trials, class_trial_weights
from ..core.validation import check_probability
from .brier import _posteriors

__all__ = [
    "e_lre",
    "e_lre_default",
]


def _lre_threshold(p_target: float, n_classes: int) -> float:
    """Posterior threshold of CAVG's compound Bayes decision: accept k iff
    ``P(k | l, pi) >= (1 - a) / ((N - 1) a + 1 - a)`` (``1/N`` at ``a = 1/2``).
    """
    a = p_target
    return (1.0 - a) / ((n_classes - 1) * a + 1.0 - a)


def e_lre(llh, labels=None, prior=None, p_target=0.5, normalize: bool = False) -> float:
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
    llh : array_like, shape (n_trials, N), or MulticlassTrials
        Natural-log likelihoods (finite), or trials holding them with labels and prior.
    labels : array_like of int, shape (n_trials,), optional
        True class ``0..N-1`` (with array ``llh`` only).
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
    t = as_multiclass_trials(llh, labels, prior, who="e_lre").active()
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
    .. [1] :cite:t:`brummer2010thesis` ("thesis").
    """
    pr = np.asarray(prior, dtype=float)
    pr = pr[pr > 0]
    a = check_probability(p_target)
    N = pr.size
    return float(np.minimum(pr * a, (1.0 - pr) * (1.0 - a) / (N - 1)).sum())
