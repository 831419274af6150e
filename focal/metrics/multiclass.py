"""Multiclass (language-recognition) measures of log-likelihood vectors.

Inputs: ``llh`` of shape ``(n_trials, n_classes)``, natural-log likelihoods defined up to a
per-trial constant (Albayzin plan eq. 1), finite; ``labels`` the true class index ``0..N-1`` of
every trial; ``prior`` a probability vector over the classes that may contain zeros (a class
with zero prior is ignored, and so are its trials: Albayzin footnote 8). Bad input raises
``ValueError`` before any work. Every measure also takes a
:class:`~focal.core.multiclass.MulticlassTrials` in place of ``(llh, labels[, prior])``
(:func:`~focal.core.multiclass.as_multiclass_trials`): validated once, for several measures.

This module holds the cross-entropy measures and the Albayzin criteria; the one-vs-rest
detection and pairwise analyses are in :mod:`focal.metrics.multiclass_detection`.

Units: cross-entropies ``C_mce`` are in nats (Albayzin eq. 6); ``multiclass_cllr`` is in bits
(Brümmer & van Leeuwen eq. 17); binary measures follow :mod:`focal.metrics.binary`.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`albayzin2012plan` ("Albayzin plan").
.. [3] :cite:t:`brummer2006calibration`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..core.affine import best_affine
from ..core.multiclass import (
    MulticlassTrials,
    _llh_columns,
    as_multiclass_trials,
    cross_entropy_nats,
    prior_entropy_nats,
)
from ..core.multiclass_logistic import fit_multiclass

__all__ = [
    "multiclass_cross_entropy",
    "multiclass_cllr",
    "albayzin_prior",
    "albayzin_measures",
    "AlbayzinMeasures",
    "affine_calibration",
]

_LOG2 = float(np.log(2.0))


def multiclass_cross_entropy(llh, labels=None, prior=None) -> float:
    """Multiclass cross-entropy C_mce in nats (Albayzin eq. 6; thesis eq. 8.14).

    ``C_mce = sum_i pi_i / |T_i| sum_{t in T_i} -log P(i | l_t, pi)`` with the posterior of
    Bayes' rule (eq. 3). The default system (every row constant) scores exactly the prior
    entropy ``C_def`` (eq. 7); a perfect one scores 0; values above ``C_def`` mean the
    log-likelihoods do harm.

    Parameters
    ----------
    llh : array_like, shape (n_trials, N), or MulticlassTrials
        Natural-log likelihoods (finite); or a
        :class:`~focal.core.multiclass.MulticlassTrials`, with ``labels`` omitted.
    labels : array_like of int, shape (n_trials,), optional
        True class ``0..N-1`` (with array ``llh``).
    prior : array_like, shape (N,), optional
        Default flat (or the trials' prior). Zero entries ignore that class and its trials.

    Returns
    -------
    float
        C_mce in nats, >= 0.

    References
    ----------
    .. [1] :cite:t:`albayzin2012plan` ("Albayzin plan").
    .. [2] :cite:t:`brummer2010thesis` ("thesis").

    Examples
    --------
    A class-0 trial with likelihoods (3, 1) costs log(4/3), an uninformative class-1 trial
    log 2; at the flat prior C_mce is their mean:

    >>> import numpy as np
    >>> from focal.metrics import multiclass_cross_entropy
    >>> round(multiclass_cross_entropy([[np.log(3.0), 0.0], [0.0, 0.0]], [0, 1]), 6)
    0.490415
    """
    t = as_multiclass_trials(llh, labels, prior, who="multiclass_cross_entropy").active()
    return cross_entropy_nats(t.llh, t.labels, t.prior)


def multiclass_cllr(llh, labels=None, prior=None, normalize: bool = False) -> float:
    """Multiclass Cllr in bits: C_mce / log 2 (Brümmer & van Leeuwen eq. 17, flat prior).

    The reference value of an uninformative system is ``log2 N`` at the flat prior (the prior
    entropy in bits in general). With ``normalize=True`` the result is divided by that
    reference, so an uninformative system scores 1 at every prior, as binary
    :func:`focal.metrics.cllr` does. For N = 2 this equals binary ``cllr`` of ``l_1 - l_2``.

    Parameters
    ----------
    llh : array_like, shape (n_trials, N), or MulticlassTrials
        Natural-log likelihoods (finite), one row per trial; or a
        :class:`~focal.core.multiclass.MulticlassTrials`, with ``labels`` omitted.
    labels : array_like of int, shape (n_trials,), optional
        True class ``0..N-1`` of each trial (with array ``llh``).
    prior : array_like, shape (N,), optional
        Class prior, default flat (or the trials'). Zero entries ignore that class and its
        trials.
    normalize : bool, default False
        Divide by the prior entropy, so an uninformative system scores 1.

    Returns
    -------
    float
        Bits (or bits per bit when normalized), >= 0.

    References
    ----------
    .. [1] :cite:t:`brummer2006calibration`.

    Examples
    --------
    >>> import numpy as np
    >>> from focal.metrics import multiclass_cllr
    >>> float(multiclass_cllr(np.zeros((4, 4)), [0, 1, 2, 3]))   # useless: log2 4 bits
    2.0
    """
    t = as_multiclass_trials(llh, labels, prior, who="multiclass_cllr").active()
    xe = cross_entropy_nats(t.llh, t.labels, t.prior)
    return xe / prior_entropy_nats(t.prior) if normalize else xe / _LOG2


def albayzin_prior(n_columns: int, open_set: bool = False) -> np.ndarray:
    """The evaluation prior of Albayzin eq. 2 over ``m = n + 1`` columns (n targets + OOS).

    Closed set: ``pi_m = 0`` (the last column, out-of-set, and its trials are ignored), the n
    targets share 1 equally. Open set: ``pi_m = 1/m``, which makes the prior flat over all m.

    Parameters
    ----------
    n_columns : int
        m = n + 1 >= 3: the n target languages and the out-of-set class (last).
    open_set : bool, default False
        The open-set condition (out-of-set trials count) instead of the closed set.

    Returns
    -------
    ndarray of shape (m,)
        The prior.

    References
    ----------
    .. [1] :cite:t:`albayzin2012plan` ("Albayzin plan").
    """
    m = int(n_columns)
    if m < 3:
        raise ValueError(
            f"Albayzin log-likelihoods have n + 1 >= 3 columns (n >= 2 targets plus the "
            f"out-of-set class), got {m}"
        )
    if open_set:
        return np.full(m, 1.0 / m)
    return np.append(np.full(m - 1, 1.0 / (m - 1)), 0.0)


@dataclass(frozen=True)
class AlbayzinMeasures:
    """The criteria of the Albayzin 2012 plan (sec. 4), all from one set of log-likelihoods.

    Attributes
    ----------
    prior : ndarray
        The evaluation prior (eq. 2, or the one given).
    c_mce, c_def, c_min : float
        Cross-entropy of the submission (eq. 6), of the default system (prior entropy, eq. 7)
        and after the optimal affine recalibration (eq. 12), nats. ``c_min <= min(c_mce,
        c_def)``.
    f_mce, f_def, f_min : float
        Confusions ``exp(C) - 1`` (eqs. 8, 9 and sec. 4.3.1).
    f_act, f_dis, f_cal : float
        Actual and discrimination relative confusions (eqs. 10, 13) and the calibration loss
        (eq. 14); ``f_act = (1 + f_cal) f_dis`` (eq. 15). Dimensionless (x 100 for %).
    alpha : float
        Scale of the optimal recalibration ``alpha * l + beta`` (eq. 11); negative for a
        sign-inverted submission unless ``alpha >= 0`` was asked for.
    beta : ndarray
        Its offset vector (zero mean over the classes with non-zero prior, 0 elsewhere).
    """

    prior: np.ndarray
    c_mce: float
    c_def: float
    c_min: float
    f_mce: float
    f_def: float
    f_min: float
    f_act: float
    f_dis: float
    f_cal: float
    alpha: float
    beta: np.ndarray

    def to_dict(self) -> dict:
        """Plain-Python dictionary of every number (for JSON or programs).

        Returns
        -------
        dict
            The fields as plain Python values (JSON-ready).
        """
        d = asdict(self)
        d["prior"] = self.prior.tolist()
        d["beta"] = self.beta.tolist()
        return d


def affine_calibration(llh, labels=None, prior=None, nonnegative_alpha: bool = False):
    """The best affine recalibration ``alpha * l + beta`` (Albayzin eqs. 11-12; Brümmer & van
    Leeuwen eq. 18; thesis eqs. 8.21-8.23).

    Minimizes the multiclass cross-entropy at ``prior`` exactly (multiclass logistic regression
    by Newton's method, no regularization). By default ``alpha`` is free, as in the Albayzin
    plan's eqs. 11-12 ("an unconstrained, convex minimization problem"): a system whose
    log-likelihoods point the wrong way (a sign-inverted submission) gets ``alpha < 0`` and a
    ``C_min`` that credits the information it carries. With ``nonnegative_alpha=True``,
    ``alpha >= 0`` as in the thesis (sec. 8.4.2, where a recalibration must not reverse the
    recognizer's opinions): when the unconstrained optimum has ``alpha < 0`` the constrained one
    is the default system (``alpha = 0``, ``beta = 0``): the objective is convex, so its minimum
    over ``alpha >= 0`` lies on the face ``alpha = 0``, where the best offset reproduces the
    prior. The returned parameters are never worse than the identity (``alpha = 1, beta = 0``)
    or the default system: the best of the candidates is returned, so
    ``c_min <= min(C_mce, C_def)`` holds exactly even when the data are separable (then the
    infimum 0 is approached, not reached).

    Parameters
    ----------
    llh : array_like, shape (n_trials, N), or MulticlassTrials
        Natural-log likelihoods (finite), one row per trial; or a
        :class:`~focal.core.multiclass.MulticlassTrials`, with ``labels`` omitted.
    labels : array_like of int, shape (n_trials,), optional
        True class ``0..N-1`` of each trial (with array ``llh``).
    prior : array_like, shape (N,), optional
        Class prior, default flat (or the trials'). Zero entries ignore that class and its
        trials.
    nonnegative_alpha : bool, default False
        Constrain ``alpha >= 0`` (the thesis' E_lre^opt) instead of a free ``alpha``.

    Returns
    -------
    alpha : float
        The scale.
    beta : ndarray, shape (N,)
        Zero mean over the classes with non-zero prior, 0 for the others (over the columns of
        ``llh``, or of the trials given).
    c_min : float
        Cross-entropy after recalibration, nats.
    """
    trials = as_multiclass_trials(llh, labels, prior, who="affine_calibration")
    alpha, beta, c_min = affine_calibration_of_trials(trials.active(), nonnegative_alpha)
    return alpha, _in_columns(trials, beta), c_min


def _in_columns(trials: MulticlassTrials, values) -> np.ndarray:
    """Per-class values of ``trials.active()`` placed in the columns of ``trials`` (0 for the
    classes of zero prior): :meth:`MulticlassTrials.scatter` relative to the trials given,
    which may themselves be a view.
    """
    out = np.zeros(trials.n_classes)
    out[trials.active_mask] = values
    return out


def affine_calibration_of_trials(trials, nonnegative_alpha: bool = False):
    """alpha, beta and C_min (nats) of the affine recalibration alpha*l + beta (Albayzin eqs.
    11-12; ``alpha >= 0`` only with ``nonnegative_alpha``, thesis 8.4.2) of the active view of
    a :class:`focal.core.multiclass.MulticlassTrials` (every prior entry positive); ``beta`` is
    over the view's columns (``trials.scatter`` places it in the original ones). Shared by
    :func:`affine_calibration`, :func:`albayzin_measures`, the CAVG sweep and the other
    multiclass minima (not in ``__all__``).
    """
    L, y, p = trials.llh, trials.labels, trials.prior
    sol = fit_multiclass(L[:, None, :], y, p, "calibration", reg=0.0)
    choice = best_affine(
        lambda alpha, beta: cross_entropy_nats(alpha * L + beta, y, p),
        [(float(sol.coef[0]), sol.offset)],
        zero_offset=np.zeros(p.size),
        nonnegative_scale=nonnegative_alpha,
    )
    return choice.scale, choice.offset, choice.value


def albayzin_measures(
    llh,
    labels=None,
    open_set: bool | None = None,
    prior=None,
    nonnegative_alpha: bool = False,
) -> AlbayzinMeasures:
    """C_mce, C_def, C_min, F_act, F_dis and F_cal of the Albayzin 2012 plan (sec. 4).

    Parameters
    ----------
    llh : array_like, shape (n_trials, m), or MulticlassTrials
        Log-likelihoods of the n = m - 1 target languages and, in the last column, the
        out-of-set class (a fake column in closed-set submissions); or a
        :class:`~focal.core.multiclass.MulticlassTrials`, with ``labels`` omitted, whose prior
        is then the evaluation prior (e.g. built with :func:`albayzin_prior`).
    labels : array_like of int, shape (n_trials,), optional
        True class ``0..m-1`` (``m - 1`` = out-of-set), with array ``llh``.
    open_set : bool, optional
        The prior of eq. 2: closed set (``pi_m = 0``: out-of-set trials and column ignored,
        the default for arrays) or open set (``pi_m = 1/m``). With a ``MulticlassTrials`` it
        may only confirm the trials' prior.
    prior : array_like, shape (m,), optional
        Any other evaluation prior (overrides eq. 2), e.g. the flat prior of thesis sec. 8.4;
        with a ``MulticlassTrials``, only its own.
    nonnegative_alpha : bool
        False (default): C_min minimizes over an unconstrained ``alpha`` (the plan's eqs. 11-12,
        the official criterion), so a sign-inverted submission keeps the discrimination it
        has (F_dis < 1) and shows it all as calibration loss. True: ``alpha >= 0`` as in the
        thesis (sec. 8.4.2): a recalibration may not reverse the recognizer, so such a
        submission gets C_min = C_def and F_dis = 1. The two agree whenever the best
        unconstrained ``alpha`` is positive. See :func:`affine_calibration`.

    Returns
    -------
    AlbayzinMeasures
        ``C`` values in nats (eqs. 6, 7, 12); ``F`` values dimensionless (eqs. 8-14).
        ``f_cal`` is ``inf`` when ``f_dis`` is 0 (separable data) but ``f_act`` is not.

    Raises
    ------
    ValueError
        Bad input (:class:`~focal.core.multiclass.MulticlassTrials`), or a ``MulticlassTrials``
        with ``labels``, or with an ``open_set`` or ``prior`` other than its own prior.

    Examples
    --------
    The default system of a closed-set task with 6 targets (the 7th column is the fake
    out-of-set score): C_mce = C_def = log 6, relative confusion 1.

    >>> import numpy as np
    >>> from focal.metrics import albayzin_measures
    >>> m = albayzin_measures(np.zeros((7, 7)), [0, 1, 2, 3, 4, 5, 6])
    >>> round(m.c_mce, 6), round(m.f_def, 6), m.f_act, m.f_cal
    (1.791759, 5.0, 1.0, 0.0)
    """
    if isinstance(llh, MulticlassTrials):
        if prior is None and open_set is not None:
            prior = albayzin_prior(llh.n_classes, open_set)
    elif prior is None:
        llh, m = _llh_columns(llh)
        prior = albayzin_prior(m, bool(open_set))
    trials = as_multiclass_trials(llh, labels, prior, who="albayzin_measures")
    t = trials.active()
    c_mce = cross_entropy_nats(t.llh, t.labels, t.prior)
    c_def = prior_entropy_nats(t.prior)
    alpha, beta, c_min = affine_calibration_of_trials(t, nonnegative_alpha)
    beta = _in_columns(trials, beta)
    f_mce, f_def, f_min = np.expm1(c_mce), np.expm1(c_def), np.expm1(c_min)
    f_act = f_mce / f_def
    f_dis = f_min / f_def
    if f_dis > 0:
        f_cal = (f_act - f_dis) / f_dis
    else:
        f_cal = 0.0 if f_act == 0 else np.inf
    return AlbayzinMeasures(
        prior=trials.prior,
        c_mce=c_mce,
        c_def=c_def,
        c_min=c_min,
        f_mce=float(f_mce),
        f_def=float(f_def),
        f_min=float(f_min),
        f_act=float(f_act),
        f_dis=float(f_dis),
        f_cal=float(f_cal),
        alpha=alpha,
        beta=beta,
    )
