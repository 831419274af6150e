"""One-vs-rest detection LLRs of multiclass log-likelihoods, and the detection and pairwise
analyses of Brümmer & van Leeuwen (2006, secs. 4.2 and 4.3).

Inputs as in :mod:`focal.metrics.multiclass`: ``llh`` of shape ``(n_trials, N)`` (finite
natural-log likelihoods), ``labels`` the true class ``0..N-1``, ``prior`` over the classes (zeros
ignore a class and its trials), or a :class:`~focal.core.multiclass.MulticlassTrials` in place
of them. The binary measures of each detector come from :mod:`focal.metrics.binary` (bits at
the flat prior unless said otherwise).

References
----------
.. [1] :cite:t:`brummer2006calibration`.
.. [2] :cite:t:`albayzin2012plan` ("Albayzin plan").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.multiclass import (
    MulticlassTrials,
    _llh_columns,
    as_class_labels,
    as_llh_matrix,
    as_multiclass_trials,
    class_totals,
)
from ..core.validation import check_prior, check_probability
from .binary import cllr as _binary_cllr
from .binary import eer, min_cllr
from .binary_scores import labelled_pair

__all__ = [
    "detection_llrs",
    "detection_analysis",
    "DetectionAnalysis",
    "pairwise_analysis",
    "PairwiseAnalysis",
]


def detection_llrs(llh, prior=None) -> np.ndarray:
    """Detection LLR of every class against the rest (Brümmer & van Leeuwen eq. 9), natural log.

    Column t is ``lambda_t = -log sum_{i != t} pi_i / (1 - pi_t) exp(-(l_t - l_i))``: the LLR of
    "class t" against "not t" when the non-targets are weighted by their share of the prior
    (flat by default: NIST LRE's non-target prior). Any binary measure then applies per target,
    with the target prior of the application (Bayes threshold ``-logit(pi_t)``, eq. 10).
    Zero-prior classes are left out of every non-target mixture (their own column is still
    computed). Exact for log-likelihoods of any magnitude: the sum is shifted by the largest
    non-target log-likelihood, and an uninformative (constant) row gives exactly 0. O(n N).

    Parameters
    ----------
    llh : array_like, shape (n_trials, N), or MulticlassTrials
        Natural-log likelihoods (finite), one row per trial; or a
        :class:`~focal.core.multiclass.MulticlassTrials` (its log-likelihoods and prior).
    prior : array_like, shape (N,), optional
        Class prior weighting the non-target mixture, default flat (or the trials'); zero
        entries are left out.

    Returns
    -------
    ndarray, shape (n_trials, N)
        Natural-log detection LLR of every class against the rest, per trial.

    Examples
    --------
    Class 0 twice as likely as each of the others: LLR log 2 against their mean; class 1
    against the mean of (2, 1): log(1/1.5).

    >>> import numpy as np
    >>> from focal.metrics import detection_llrs
    >>> detection_llrs([[np.log(2.0), 0.0, 0.0]]).round(6)
    array([[ 0.693147, -0.405465, -0.405465]])
    """
    if isinstance(llh, MulticlassTrials):
        trials = as_multiclass_trials(llh, prior=prior, weighted=True)  # weights are moot
        L, p = trials.llh, trials.prior
    else:
        L = as_llh_matrix(llh)
        p = check_prior(prior, L.shape[1])
    n, N = L.shape
    act = np.flatnonzero(p > 0)
    La, pa = L[:, act], p[act]
    rows = np.arange(n)
    # lambda_t = (l_t - M) - log1p(sum_{i != t} w_i expm1(l_i - M)), w = normalized non-target
    # prior, M the largest non-target log-likelihood: the top active one, or for the column
    # holding it, the second. All expm1 arguments are <= 0 (no overflow) and a constant row
    # gives exactly 0.
    order = np.argsort(-La, axis=1, kind="stable")[:, :2]
    top, second = La[rows, order[:, 0]], La[rows, order[:, 1]]
    D1 = np.expm1(La - top[:, None])
    A1 = D1 @ pa
    D2 = La - second[:, None]
    D2[rows, order[:, 0]] = 0.0
    A2 = np.expm1(D2) @ pa
    p_total = float(pa.sum())
    out = np.empty((n, N))
    for t in range(N):
        j = int(np.searchsorted(act, t))
        if j < act.size and act[j] == t:
            rest = p_total - pa[j]
            hold = order[:, 0] == j
            free = ~hold
            x = (A1[free] - pa[j] * D1[free, j]) / rest
            out[free, t] = (L[free, t] - top[free]) - np.log1p(x)
            out[hold, t] = (L[hold, t] - second[hold]) - np.log1p(A2[hold] / rest)
        else:
            out[:, t] = (L[:, t] - top) - np.log1p(A1 / p_total)
    return out


def detection_trials(lam, y, p, t):
    """Target and non-target detection LLRs of class ``t`` (2006 paper sec. 4.3): the trials
    of class t, and those of the other classes of non-zero prior ``p`` (validated ``lam``
    of :func:`detection_llrs`, labels ``y``). Shared by :func:`detection_analysis` and the
    detection plots (not in ``__all__``).
    """
    counted = p[y] > 0
    return lam[y == t, t], lam[counted & (y != t), t]


@dataclass(frozen=True)
class DetectionAnalysis:
    """Binary analysis of every one-vs-rest detection LLR (Brümmer & van Leeuwen sec. 4.3).

    Attributes
    ----------
    classes : ndarray of int
        The target classes analysed.
    cllr, min_cllr : ndarray
        Binary Cllr and minCllr (PAV) of each target's detection LLRs at ``p_target``, bits
        normalized by the prior entropy (:func:`focal.metrics.cllr`).
    eer : ndarray
        ROCCH-EER of each target (fraction).
    p_target : float
    """

    classes: np.ndarray
    cllr: np.ndarray
    min_cllr: np.ndarray
    eer: np.ndarray
    p_target: float


def detection_analysis(llh, labels=None, prior=None, p_target=0.5) -> DetectionAnalysis:
    """Cllr, minCllr and EER of the detection LLRs of every active class (2006 paper sec. 4.3).

    Target trials of class t are those labelled t; non-targets are the trials of the other
    classes with non-zero prior. The detection LLRs use ``prior`` for the non-target mixture
    (eq. 9); the binary measures are evaluated at ``p_target`` (0.5: classical Cllr).

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
    p_target : float, default 0.5
        Target prior of the binary measures.

    Returns
    -------
    DetectionAnalysis
        Cllr and minCllr (bits per bit) and EER (fraction) of each active class.

    References
    ----------
    .. [1] :cite:t:`brummer2006calibration`.
    """
    trials = as_multiclass_trials(llh, labels, prior, who="detection_analysis")
    L, y, p = trials.llh, trials.labels, trials.prior
    pt = check_probability(p_target)
    lam = detection_llrs(L, p)
    act = np.flatnonzero(p > 0)
    c, mc, e = [], [], []
    for t in act:
        pair = labelled_pair(*detection_trials(lam, y, p, t))
        c.append(_binary_cllr(pair, p_target=pt))
        mc.append(min_cllr(pair, p_target=pt))
        e.append(eer(pair))
    return DetectionAnalysis(
        classes=act, cllr=np.array(c), min_cllr=np.array(mc), eer=np.array(e), p_target=pt
    )


@dataclass(frozen=True)
class PairwiseAnalysis:
    """Pairwise calibration analysis (Brümmer & van Leeuwen sec. 4.2; Albayzin sec. 4.4).

    Attributes
    ----------
    pairs : ndarray of int, shape (P, 2)
        Class pairs ``(i, j)``, ``i < j``.
    cllr, min_cllr : ndarray, shape (P,)
        Binary Cllr and minCllr (PAV) of the pairwise LLR ``l_i - l_j`` on the trials of
        classes i and j, at the flat pair prior (1/2, 1/2), bits (1 = uninformative). Symmetric
        in i and j. ``cllr - min_cllr`` is the pair's calibration loss.
    n_trials : ndarray of int, shape (P,)
        Trials of the two classes.
    n_classes : int
    """

    pairs: np.ndarray
    cllr: np.ndarray
    min_cllr: np.ndarray
    n_trials: np.ndarray
    n_classes: int

    def matrix(self, measure: str = "cllr") -> np.ndarray:
        """``(N, N)`` symmetric matrix of ``measure`` (``"cllr"`` or ``"min_cllr"``); NaN on
        the diagonal and for pairs not analysed.

        Parameters
        ----------
        measure : {"cllr", "min_cllr"}, default "cllr"
            The measure to arrange.

        Returns
        -------
        ndarray of shape (N, N)
            The measure of pair (i, j) at ``[i, j]`` and ``[j, i]``, bits per bit.
        """
        if measure not in ("cllr", "min_cllr"):
            raise ValueError(f"measure must be 'cllr' or 'min_cllr', got {measure!r}")
        out = np.full((self.n_classes, self.n_classes), np.nan)
        vals = getattr(self, measure)
        out[self.pairs[:, 0], self.pairs[:, 1]] = vals
        out[self.pairs[:, 1], self.pairs[:, 0]] = vals
        return out


def pairwise_analysis(llh, labels=None, classes=None) -> PairwiseAnalysis:
    """Cllr and minCllr of every pair of classes (2006 paper sec. 4.2, Albayzin sec. 4.4).

    For each pair ``i < j`` the pairwise LLR ``l_i - l_j`` is evaluated as a binary detector
    (targets: trials of class i; non-targets: trials of class j) with the binary Cllr and the
    PAV minCllr at the flat prior. An affine recalibration ``alpha l + beta`` with ``alpha > 0``
    leaves every minCllr unchanged (it maps each pairwise LLR monotonically).

    Parameters
    ----------
    llh : array_like, shape (n_trials, N), or MulticlassTrials
        Natural-log likelihoods (finite), one row per trial; or a
        :class:`~focal.core.multiclass.MulticlassTrials`, with ``labels`` omitted.
    labels : array_like of int, shape (n_trials,), optional
        True class ``0..N-1`` of each trial (with array ``llh``).
    classes : sequence of int, optional
        The classes to pair (default all; for a ``MulticlassTrials``, those of non-zero
        prior); each needs trials.

    Returns
    -------
    PairwiseAnalysis
        Cllr and minCllr of every pair.

    References
    ----------
    .. [1] :cite:t:`brummer2006calibration`.
    .. [2] :cite:t:`albayzin2012plan` ("Albayzin plan").
    """
    given = isinstance(llh, MulticlassTrials)
    if given:
        trials = as_multiclass_trials(llh, labels, who="pairwise_analysis")
        L, N = trials.llh, trials.n_classes
        default = np.flatnonzero(trials.active_mask)
    else:
        L, N = _llh_columns(llh)
        default = np.arange(N)
    cls = default if classes is None else np.unique(as_class_labels(classes, N, "classes"))
    if cls.size < 2:
        raise ValueError(f"classes must name at least two classes, got {cls.tolist()}")
    pair_prior = np.zeros(N)
    pair_prior[cls] = 1.0 / cls.size  # the classes analysed must have trials
    if given:
        y = trials.labels
        class_totals(y, pair_prior)
    else:
        trials = as_multiclass_trials(L, labels, pair_prior)
        L, y = trials.llh, trials.labels
    by_class = {int(i): np.flatnonzero(y == i) for i in cls}
    pairs, c, mc, nt = [], [], [], []
    for a in range(cls.size):
        for b in range(a + 1, cls.size):
            i, j = int(cls[a]), int(cls[b])
            tar = L[by_class[i], i] - L[by_class[i], j]
            non = L[by_class[j], i] - L[by_class[j], j]
            pairs.append((i, j))
            pair = labelled_pair(tar, non)
            c.append(_binary_cllr(pair))
            mc.append(min_cllr(pair))
            nt.append(tar.size + non.size)
    return PairwiseAnalysis(
        pairs=np.array(pairs, dtype=np.int64),
        cllr=np.array(c),
        min_cllr=np.array(mc),
        n_trials=np.array(nt, dtype=np.int64),
        n_classes=N,
    )
