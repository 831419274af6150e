"""NIST LRE's CAVG and its operating-point sweep (every subset of the classes: lre_subsets).

CAVG (thesis sec. 8.1, eqs. 8.1-8.3) averages N detection applications: for target class k the
prior gives the target probability ``P_target`` (1/2 in NIST LREs) and the non-targets share
the rest equally; misses and false alarms cost 1::

    CAVG = 1/N sum_k [ P_target P_miss(k) + (1 - P_target)/(N-1) sum_{i != k} P_fa(k | i) ]

``P_miss(k)`` is the fraction of class-k trials that reject k and ``P_fa(k | i)`` the fraction of
class-i trials that accept k. From log-likelihoods, the Bayes decision of application k accepts
k iff its detection LLR (flat non-target prior, Brümmer & van Leeuwen eq. 9) is at least
``-logit(P_target)``; at ``P_target = 1/2`` that is "posterior of k at the flat prior >= 1/N"
(thesis sec. 8.1.1). CAVG is a fraction in [0, 1].

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`albayzin2012plan` ("Albayzin plan").
.. [3] :cite:t:`brummer2006calibration`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logit

from ..core.multiclass import MulticlassTrials, as_multiclass_trials
from ..core.validation import check_probability
from .multiclass import affine_calibration_of_trials
from .multiclass_detection import detection_llrs

__all__ = ["cavg", "cavg_sweep", "CavgSweep"]


def _flat_trials(trials, labels, who):
    """The active view of a :class:`MulticlassTrials` given to a measure defined at the flat
    prior (CAVG, thesis eq. 8.3): every class of non-zero prior must have the same prior.
    """
    t = as_multiclass_trials(trials, labels, who=who).active()
    if not (t.prior == t.prior[0]).all():
        raise ValueError(
            f"{who} is defined at the flat prior over the classes (thesis eq. 8.3), these "
            f"trials have prior {trials.prior.tolist()}; for another prior see "
            "focal.metrics.e_lre or cavg_sweep"
        )
    return t


def _check_trials(llh, labels, decisions=None, who="cavg"):
    """Validated ``(llh or None, labels, decisions or None, n_classes, class counts)``; every
    class needs trials (the flat prior of CAVG). A :class:`MulticlassTrials` gives its active
    view (:func:`_flat_trials`); decisions alone are validated as the trials' matrix.
    """
    if llh is None and decisions is None:
        raise ValueError("give llh (log-likelihoods) or decisions")
    if isinstance(llh, MulticlassTrials):
        t = _flat_trials(llh, labels, who)
    elif llh is not None:
        t = as_multiclass_trials(llh, labels)
    if decisions is None:
        return t.llh, t.labels, None, t.n_classes, t.counts
    D = np.asarray(decisions)
    if D.ndim != 2 or D.dtype.kind not in "biuf":
        raise ValueError(
            f"decisions must be a 2-D (n_trials, n_classes) array of accept (1 / True) and "
            f"reject (0 / False), got dtype {D.dtype} and shape {D.shape}"
        )
    if D.dtype.kind != "b":
        if not np.isin(D, (0, 1)).all():
            raise ValueError("decisions must contain only 0/1 or False/True")
    D = D.astype(bool)
    if llh is None:  # the decisions stand for the log-likelihoods: one validation of both
        t = as_multiclass_trials(D, labels, llh_name="decisions")
        return None, t.labels, D, t.n_classes, t.counts
    if D.shape != t.llh.shape:
        raise ValueError(f"decisions has shape {D.shape} but llh has shape {t.llh.shape}")
    return t.llh, t.labels, D, t.n_classes, t.counts


def _acceptance_rates(decisions, y, counts):
    """``A[i, k]``: fraction of class-i trials that accept class k."""
    N = counts.shape[0]
    A = np.empty((N, N))
    for k in range(N):
        A[:, k] = np.bincount(y, weights=decisions[:, k], minlength=N)
    return A / counts[:, None]


def _cavg_from_rates(A, p_target):
    """Eq. 8.3 from the acceptance-rate matrix (target prior ``p_target``)."""
    N = A.shape[0]
    p_miss = 1.0 - np.diag(A)
    p_fa = (A.sum(axis=0) - np.diag(A)) / (N - 1)  # mean over non-target classes i != k
    return float(np.mean(p_target * p_miss + (1.0 - p_target) * p_fa))


def cavg(llh, labels=None, decisions=None, p_target=0.5) -> float:
    """NIST LRE CAVG (thesis eq. 8.3): average detection cost over the N target languages.

    Parameters
    ----------
    llh : array_like of shape (n_trials, N), MulticlassTrials or None
        Natural-log likelihoods; the decisions are their Bayes decisions: accept target k iff
        its detection LLR (flat non-target prior) ``>= -logit(p_target)``, i.e. at
        ``p_target = 1/2`` iff its posterior at the flat prior is ``>= 1/N`` (thesis 8.1.1).
        May be None when ``decisions`` are given. Or a
        :class:`~focal.core.multiclass.MulticlassTrials` (``labels`` omitted): CAVG over its
        classes of non-zero prior, which must be equal, and their trials (e.g. the closed set
        of trials at the Albayzin prior).
    labels : array_like of int, shape (n_trials,), optional
        True class ``0..N-1``; every class needs trials.
    decisions : array_like of bool, shape (n_trials, N), optional
        Hard accept (True / 1) / reject decisions, one per trial and target, used instead of
        the Bayes decisions of ``llh`` (with a ``MulticlassTrials``: of its active view).
    p_target : float
        Target prior of each detection application (1/2 in NIST LREs; thesis eq. 8.28 sweeps it).

    Returns
    -------
    float
        Fraction in [0, 1] (multiply by 100 for NIST's percent).

    Notes
    -----
    CAVG is defined over target classes only (thesis sec. 8.1; NIST LRE). No paper defines an
    open-set CAVG: given an out-of-set class as one more column and class, this function treats
    it as one more *target* (N + 1 detection applications, its trials non-targets of the
    others). That open-set value is focal's own extension, not comparable with published
    CAVGs; Albayzin's open-set criterion is C_mce at the prior of its eq. 2
    (:func:`focal.metrics.albayzin_measures`). For other priors over the classes see
    :func:`focal.metrics.e_lre` (thesis eq. 8.11).

    Examples
    --------
    Uninformative log-likelihoods accept every target (posterior 1/N >= 1/N): no misses,
    every false alarm, CAVG = 1/2. Perfect hard decisions cost 0.

    >>> import numpy as np
    >>> from focal.metrics import cavg
    >>> cavg(np.zeros((4, 3)), [0, 1, 2, 2])
    0.5
    >>> cavg(None, [0, 1, 2, 2], decisions=np.eye(3, dtype=bool)[[0, 1, 2, 2]])
    0.0
    """
    L, y, D, N, counts = _check_trials(llh, labels, decisions)
    p = check_probability(p_target)
    if D is None:
        D = detection_llrs(L) >= -logit(p)
    return _cavg_from_rates(_acceptance_rates(D, y, counts), p)


@dataclass(frozen=True)
class CavgSweep:
    """CAVG as a function of the target prior (thesis sec. 8.5.1, eq. 8.28), for a plot.

    Attributes
    ----------
    p_target : ndarray
        Target priors alpha in (0, 1).
    actual : ndarray
        CAVG of the Bayes decisions of the log-likelihoods at each prior (fraction).
    p_miss, p_fa : ndarray
        Their averages over targets (and non-target classes).
    recalibrated : ndarray or None
        CAVG after the optimal affine recalibration at the flat prior, thesis eq. 8.24
        (E_lre^opt), a contrast that shows the calibration loss at every operating point.
    alpha, beta : float, ndarray or None
        That recalibration ``alpha * l + beta``, with ``alpha >= 0`` as the thesis defines
        E_lre^opt (sec. 8.4.2): a sign-inverted system gets the default system (alpha = 0).
    prior : ndarray or None
        The evaluation prior over the target classes when not flat (then ``actual`` is E_lre,
        thesis eq. 8.11, and ``p_miss`` / ``p_fa`` are prior-weighted averages); None: flat.
    """

    p_target: np.ndarray
    actual: np.ndarray
    p_miss: np.ndarray
    p_fa: np.ndarray
    recalibrated: np.ndarray | None
    alpha: float | None
    beta: np.ndarray | None
    prior: np.ndarray | None = None

    @property
    def default(self) -> np.ndarray:
        """CAVG of the best fixed decision (reject all or accept all): ``min(p, 1 - p)``; at a
        non-flat prior, each target accepted or rejected by the prior alone:
        ``sum_k min(pi_k p, (1 - pi_k)(1 - p)/(N - 1))``.
        """
        if self.prior is None:
            return np.minimum(self.p_target, 1.0 - self.p_target)
        p, pr = self.p_target[:, None], self.prior[None, :]
        return np.minimum(pr * p, (1.0 - pr) * (1.0 - p) / (pr.size - 1)).sum(axis=1)

    @property
    def actual_normalized(self) -> np.ndarray:
        """``actual / default``: 1 = no better than ignoring the scores."""
        return self.actual / self.default

    @property
    def recalibrated_normalized(self) -> np.ndarray | None:
        """``recalibrated / default`` (dimensionless), or None without a recalibration."""
        return None if self.recalibrated is None else self.recalibrated / self.default


def _sweep_rates(lam, y, counts, thresholds, shift=None, weights=None):
    """Miss / false-alarm rates of every target at every threshold on the detection LLRs.

    Returns ``P_miss`` (n_thr, N) and ``P_fa`` (n_thr, N): the latter averaged over the
    non-target classes (or, with ``weights``, summed with weight ``weights[i]`` for the trials
    of class i). Target k's threshold is ``thresholds + shift[k]``. One sort per (class,
    target) column, then binary search.
    """
    N = counts.shape[0]
    p_miss = np.empty((thresholds.size, N))
    p_fa = np.zeros((thresholds.size, N))
    for i in range(N):
        block = np.sort(lam[y == i], axis=0)
        for k in range(N):
            thr = thresholds if shift is None else thresholds + shift[k]
            rejected = np.searchsorted(block[:, k], thr, side="left") / counts[i]
            if i == k:
                p_miss[:, k] = rejected
            elif weights is None:
                p_fa[:, k] += (1.0 - rejected) / (N - 1)
            else:
                p_fa[:, k] += weights[i] * (1.0 - rejected) / (N - 1)
    return p_miss, p_fa


def _prior_sweep(trials, pt, recalibrated):
    """:func:`cavg_sweep` at a non-flat evaluation prior (E_lre, thesis eq. 8.11)."""
    t = trials.active()
    L, y, p = t.llh, t.labels, t.prior
    N = p.size
    if N < 2:
        raise ValueError("the prior must give non-zero probability to at least two classes")
    counts = np.bincount(y, minlength=N)
    # accept k iff P(k | l, pi) >= (1 - a)/((N - 1) a + 1 - a), i.e. iff the detection LLR
    # with the prior's non-target mixture (2006 paper eq. 9) >= -logit(a) + shift_k
    shift = -logit(p) - np.log(N - 1.0)
    thr = -logit(pt)

    def sweep(W):
        miss, fa = _sweep_rates(detection_llrs(W, p), y, counts, thr, shift, p)
        return miss @ p, fa.sum(axis=1)

    p_miss, p_fa = sweep(L)
    rec = alpha = beta = None
    if recalibrated:
        alpha, beta, _ = affine_calibration_of_trials(t, nonnegative_alpha=True)
        r_miss, r_fa = sweep(alpha * L + beta)
        rec = pt * r_miss + (1 - pt) * r_fa
    return CavgSweep(
        p_target=pt,
        actual=pt * p_miss + (1 - pt) * p_fa,
        p_miss=p_miss,
        p_fa=p_fa,
        recalibrated=rec,
        alpha=alpha,
        beta=beta,
        prior=p,
    )


def cavg_sweep(
    llh, labels=None, p_targets=None, recalibrated: bool = True, prior=None
) -> CavgSweep:
    """CAVG swept over the target prior alpha (thesis sec. 8.5.1, eq. 8.28), as plot data.

    Application k has target prior alpha and non-target priors ``(1 - alpha)/(N - 1)``; its
    Bayes decision accepts k iff the detection LLR ``>= -logit(alpha)``. All decisions are read
    off one sort of the detection LLRs per (class, target).

    Parameters
    ----------
    llh : array_like, shape (n_trials, N), or MulticlassTrials
        Natural-log likelihoods (finite); or a
        :class:`~focal.core.multiclass.MulticlassTrials` (``labels`` omitted), swept at its
        prior: CAVG when the prior is flat over every class, else E_lre as for ``prior``.
    labels : array_like of int, shape (n_trials,), optional
        True class ``0..N-1`` (with array ``llh``).
    p_targets : array_like, optional
        Target priors in (0, 1); default 201 points evenly spaced in logit from -7 to 7.
    recalibrated : bool, default True
        Also sweep the optimally affine-recalibrated log-likelihoods (thesis eqs. 8.22-8.24;
        calibration at the flat prior), as a contrast for calibration analysis.
    prior : array_like, shape (N,), optional
        A non-flat evaluation prior over the classes: the sweep is then of E_lre (thesis eq.
        8.11, :func:`focal.metrics.e_lre`), the posteriors and the class weights at that prior
        and the recalibration fitted at it. Zero entries drop a class (no target) and its
        trials.

    Returns
    -------
    CavgSweep
        CAVG (or E_lre) and its miss / false-alarm parts at each target prior.

    References
    ----------
    .. [1] :cite:t:`brummer2010thesis` ("thesis").
    """
    if p_targets is None:
        pt = 1.0 / (1.0 + np.exp(-np.linspace(-7.0, 7.0, 201)))
    else:
        pt = np.asarray(p_targets, dtype=float).ravel()
        if pt.size == 0 or not ((pt > 0) & (pt < 1)).all():
            raise ValueError("p_targets must be probabilities strictly between 0 and 1")
    given = isinstance(llh, MulticlassTrials)
    trials = as_multiclass_trials(llh, labels, prior, who="cavg_sweep")
    if (prior is not None and not given) or (given and (trials.prior != trials.prior[0]).any()):
        return _prior_sweep(trials, pt, recalibrated)
    L, y, counts = trials.llh, trials.labels, trials.counts
    thr = -logit(pt)
    p_miss, p_fa = _sweep_rates(detection_llrs(L), y, counts, thr)
    actual = (pt[:, None] * p_miss + (1 - pt[:, None]) * p_fa).mean(axis=1)
    rec = alpha = beta = None
    if recalibrated:
        alpha, beta, _ = affine_calibration_of_trials(trials, nonnegative_alpha=True)  # 8.4.2
        r_miss, r_fa = _sweep_rates(detection_llrs(alpha * L + beta), y, counts, thr)
        rec = (pt[:, None] * r_miss + (1 - pt[:, None]) * r_fa).mean(axis=1)
    return CavgSweep(
        p_target=pt,
        actual=actual,
        p_miss=p_miss.mean(axis=1),
        p_fa=p_fa.mean(axis=1),
        recalibrated=rec,
        alpha=alpha,
        beta=beta,
    )
