"""Multiclass log-likelihoods, priors with zeros, Bayes' rule and the logarithmic cost.

A recognizer of N classes outputs, per trial, a vector of natural-log likelihoods
``llh[t] = (l_1, ..., l_N)`` defined up to a per-trial constant (Albayzin plan eq. 1; Brümmer &
van Leeuwen eq. 3). Given a prior ``pi`` over the classes, Bayes' rule gives the posterior
``P(i | l, pi) = pi_i exp(l_i) / sum_j pi_j exp(l_j)`` (Albayzin eq. 3), which the logarithmic
cost ``-log P(true class | l, pi)`` evaluates (eq. 5); the prior-weighted average over trials is
the multiclass cross-entropy (Albayzin eq. 6, thesis eqs. 8.14 and 8.17), in nats.

A prior may contain zeros: such a class is ignored, and so are its trials and its likelihood
column (Albayzin footnote 8, using ``lim pi log pi = 0``). Every function here therefore works on
the *active* classes (non-zero prior) only.

Log-likelihoods must be finite (Albayzin sec. 4.1). Labels are class indices ``0..N-1``.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`albayzin2012plan` ("Albayzin plan").
.. [3] :cite:t:`brummer2006calibration`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_softmax

from .validation import _describe_bad, as_sample_weight, check_prior

__all__ = [
    "as_llh_matrix",
    "as_class_labels",
    "check_multiclass_trials",
    "MulticlassTrials",
    "active_classes",
    "class_totals",
    "class_trial_weights",
    "log_posteriors",
    "log_costs",
    "cross_entropy_nats",
    "prior_entropy_nats",
    "contrast_basis",
    "as_multiclass_trials",
]


def as_llh_matrix(llh, name: str = "llh", n_classes: int | None = None) -> np.ndarray:
    """Return ``llh`` as a new finite float64 array of shape ``(n_trials, n_classes)``.

    Raises ``ValueError`` (naming ``name``) for a wrong shape, fewer than 2 classes, no trials,
    a non-numeric dtype or a NaN / infinite value (Albayzin sec. 4.1 requires finite
    log-likelihoods).
    """
    arr = np.asarray(llh)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (n_trials, n_classes), got an array of shape {arr.shape}"
        )
    if arr.shape[0] == 0:
        raise ValueError(f"{name} has no trials (0 rows)")
    if arr.shape[1] < 2:
        raise ValueError(f"{name} must have at least 2 class columns, got {arr.shape[1]}")
    if n_classes is not None and arr.shape[1] != n_classes:
        raise ValueError(f"{name} must have {n_classes} columns, got {arr.shape[1]}")
    out = np.array(arr, dtype=np.float64, copy=True)
    bad = ~np.isfinite(out)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(
            f"{name} contains {int(bad.sum())} non-finite (NaN or inf) value(s), first at "
            f"row {r}, column {c}; log-likelihoods must be finite"
        )
    return out


def as_class_labels(labels, n_classes: int, name: str = "labels") -> np.ndarray:
    """Return class labels as a new int64 array with values in ``0..n_classes-1``.

    Accepts integer (or integer-valued float, or boolean) arrays; anything else, or a value out of
    range, raises ``ValueError`` listing the offending values.
    """
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be class indices 0..{n_classes - 1}, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        ok = np.isfinite(arr) & (arr == np.round(arr))
        if not ok.all():
            raise ValueError(
                f"{name} must be whole numbers (class indices 0..{n_classes - 1}); "
                f"found {_describe_bad(np.unique(arr[~ok]))}"
            )
    out = arr.astype(np.int64)
    bad = (out < 0) | (out >= n_classes)
    if bad.any():
        raise ValueError(
            f"{name} must be class indices 0..{n_classes - 1}; found "
            f"{_describe_bad(np.unique(arr[bad]))}"
        )
    return out


def active_classes(prior: np.ndarray, labels: np.ndarray):
    """The restriction to the classes of non-zero prior (Albayzin footnote 8), as indices.

    Returns ``(active, keep, labels_active)``: the original indices of the active classes, the
    mask of the trials whose class is active, and those trials' labels renumbered
    ``0..N_active-1``. The one place where classes are remapped; ``labels`` must be validated.
    """
    active = np.flatnonzero(prior > 0)
    keep = prior[labels] > 0
    remap = np.full(prior.shape[0], -1, dtype=np.int64)
    remap[active] = np.arange(active.size)
    return active, keep, remap[labels[keep]]


def class_totals(labels, prior, sample_weight=None, *, labels_name="labels", class_names=None):
    """Total trial weight of each class, after checking every class of non-zero prior has some.

    ``labels`` (validated class indices), ``prior`` (validated) and ``sample_weight`` (validated
    or None). Raises ``ValueError`` naming the classes (by ``class_names`` when given) that have
    non-zero prior but no trials (of positive weight) in ``labels_name``.
    """
    N = prior.shape[0]
    totals = np.bincount(labels, weights=sample_weight, minlength=N)
    empty = np.flatnonzero((prior > 0) & (totals <= 0))
    if empty.size:
        what = "trials" if sample_weight is None else "trials of positive weight"
        shown = empty.tolist() if class_names is None else np.asarray(class_names)[empty].tolist()
        raise ValueError(
            f"class(es) {shown} have non-zero prior but no {what} in {labels_name} (a prior "
            "of 0 leaves a class out)"
        )
    return totals


class MulticlassTrials:
    """Supervised multiclass trials validated once: log-likelihoods, labels, prior and weights.

    The multiclass twin of :class:`focal.metrics.BinaryScores`. Every multiclass measure, plot
    and estimator builds one (or is given one) instead of validating ``(llh, labels, prior)``
    itself, so every check, and every error message, lives here.

    Parameters
    ----------
    llh : array_like, shape (n_trials, N)
        Natural-log likelihoods (finite; :func:`as_llh_matrix`).
    labels : array_like, shape (n_trials,)
        True class of each trial, ``0..N-1`` (:func:`as_class_labels`).
    prior : array_like of shape (N,), optional
        Default flat (:func:`check_prior`). Zero entries mark classes that are ignored with
        their trials (Albayzin footnote 8): see :meth:`active`.
    sample_weight : array_like of shape (n_trials,), optional
        Non-negative trial weights (a trial of weight k counts as k trials).
    llh_name, labels_name : str
        How the arguments are named in error messages.

    Attributes
    ----------
    llh : ndarray, shape (n_trials, N)
    labels : ndarray of int64, shape (n_trials,)
    prior : ndarray, shape (N,)
        Sums to 1.
    sample_weight : ndarray or None
    active_mask : ndarray of bool, shape (N,)
        ``prior > 0``.
    counts : ndarray, shape (N,)
        Trials (total weight) of each class; positive for every active class.
    classes : ndarray of int64, shape (N,)
        Index of each column in the columns of the original log-likelihoods (``arange(N)``,
        or the active classes for a view made by :meth:`active`).
    n_columns : int
        Number of columns of the original log-likelihoods.

    Raises
    ------
    ValueError
        Bad log-likelihoods, labels, prior or weights, mismatched lengths, or a class of
        non-zero prior without trials (of positive weight).
    """

    def __init__(
        self, llh, labels, prior=None, sample_weight=None, *, llh_name="llh", labels_name="labels"
    ):
        L = as_llh_matrix(llh, llh_name)
        N = L.shape[1]
        y = as_class_labels(labels, N, labels_name)
        if y.shape[0] != L.shape[0]:
            raise ValueError(
                f"{llh_name} and {labels_name} have different numbers of trials "
                f"({L.shape[0]} and {y.shape[0]})"
            )
        p = check_prior(prior, N)
        w = None if sample_weight is None else as_sample_weight(sample_weight, L.shape[0])
        counts = class_totals(y, p, w, labels_name=labels_name)
        self._set(L, y, p, w, counts, np.arange(N), N)

    def _set(self, L, y, p, w, counts, classes, n_columns):
        self.llh, self.labels, self.prior, self.sample_weight = L, y, p, w
        self.counts, self.classes, self.n_columns = counts, classes, n_columns
        self.active_mask = p > 0

    @classmethod
    def _view(cls, L, y, p, w, counts, classes, n_columns) -> MulticlassTrials:
        view = cls.__new__(cls)
        view._set(L, y, p, w, counts, classes, n_columns)
        return view

    @property
    def n_trials(self) -> int:
        """The number of trials (rows of :attr:`llh`)."""
        return int(self.labels.shape[0])

    @property
    def n_classes(self) -> int:
        """The number of classes (entries of :attr:`prior`)."""
        return int(self.prior.shape[0])

    def active(self) -> MulticlassTrials:
        """The trials restricted to the classes of non-zero prior (Albayzin footnote 8).

        Columns and trials of zero-prior classes are dropped and labels renumbered
        ``0..N_active-1``; :attr:`classes` keeps the original column of each class. Every
        prior entry of the view is positive, as the math of this module requires.

        Returns
        -------
        MulticlassTrials
            The view of the active classes (``self`` when every prior entry is positive).
        """
        if self.active_mask.all():
            return self
        act, keep, y = active_classes(self.prior, self.labels)
        L = self.llh[keep][:, act]
        w = None if self.sample_weight is None else self.sample_weight[keep]
        return self._view(
            L, y, self.prior[act], w, self.counts[act], self.classes[act], self.n_columns
        )

    def with_prior(self, prior) -> MulticlassTrials:
        """The same trials at another prior (validated, and its classes checked for trials).

        Parameters
        ----------
        prior : array_like of shape (N,)
            The new prior over the same classes (:func:`check_prior`); zero entries allowed.

        Returns
        -------
        MulticlassTrials
            The same log-likelihoods, labels and weights at ``prior``.
        """
        p = check_prior(prior, self.n_classes)
        counts = class_totals(self.labels, p, self.sample_weight)
        return self._view(
            self.llh, self.labels, p, self.sample_weight, counts, self.classes, self.n_columns
        )

    def scatter(self, values, fill=0.0) -> np.ndarray:
        """A per-class vector of this view placed in the original columns (``fill`` elsewhere),
        e.g. calibration offsets fitted on :meth:`active` trials.

        Parameters
        ----------
        values : array_like of shape (n_classes,)
            One value per class (column) of this view.
        fill : float, default 0.0
            The value of the original columns not in this view.

        Returns
        -------
        ndarray of shape (n_columns,)
            ``values`` in the original columns, ``fill`` elsewhere.
        """
        out = np.full(self.n_columns, fill, dtype=float)
        out[self.classes] = values
        return out


def check_multiclass_trials(
    llh, labels, prior=None, sample_weight=None, *, llh_name="llh", labels_name="labels"
):
    """Validate a supervised multiclass trial set and drop what the prior ignores.

    The tuple form of ``MulticlassTrials(...).active()`` (see :class:`MulticlassTrials`).

    Returns
    -------
    llh_active : ndarray, shape (n_kept, N_active)
        Columns of the active classes, rows of the trials whose class is active.
    labels_active : ndarray of int64, shape (n_kept,)
        Labels renumbered ``0..N_active-1``.
    prior_active : ndarray, shape (N_active,)
        The non-zero prior entries (sum to 1).
    weight_active : ndarray or None
        Sample weights of the kept trials.
    active : ndarray of int64
        Original indices of the active classes.
    """
    t = MulticlassTrials(
        llh, labels, prior, sample_weight, llh_name=llh_name, labels_name=labels_name
    ).active()
    return t.llh, t.labels, t.prior, t.sample_weight, t.classes


def class_trial_weights(labels, prior, sample_weight=None) -> np.ndarray:
    """Per-trial weight ``pi_i / |T_i|`` of the prior-weighted averages (thesis eq. 8.17).

    With ``sample_weight`` v, ``pi_i v_t / sum_{s in T_i} v_s``. The weights sum to 1. ``labels``
    must index ``prior`` and every class must have positive total weight (already checked).
    """
    v = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    totals = np.bincount(labels, weights=v, minlength=prior.shape[0])
    per_class = np.divide(prior, totals, out=np.zeros_like(prior), where=totals > 0)
    c = per_class[labels]
    return c if v is None else c * v


def log_posteriors(llh: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Log posteriors ``log P(i | l_t, pi)`` by Bayes' rule (Albayzin eq. 3), shape ``(n, N)``.

    ``llh`` and ``prior`` must be validated. Zero-prior classes get ``-inf`` (posterior 0); the
    per-trial constant of ``llh`` cancels. Computed by ``log_softmax``, exact for any magnitude.
    """
    out = np.full(llh.shape, -np.inf)
    act = prior > 0
    out[:, act] = log_softmax(llh[:, act] + np.log(prior[act]), axis=1)
    return out


def log_costs(llh: np.ndarray, labels: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Logarithmic cost ``-log P(true class | l_t, pi)`` of every trial, nats (Albayzin eq. 5).

    All classes must have non-zero prior (call on the active classes). Computed as
    ``-log pi_i + log sum_j pi_j exp(l_j - l_i)``: with ``log1p`` of ``sum_j pi_j expm1(d_j)``
    where every difference ``d_j = l_j - l_i`` is small, so an uninformative trial (constant row)
    costs exactly ``-log pi_i``, and by the max-shifted log-sum-exp otherwise, so differences of
    any magnitude are exact (no overflow).
    """
    n = llh.shape[0]
    d = llh - llh[np.arange(n), labels][:, None]
    small = np.abs(d).max(axis=1) <= 1.0
    out = np.empty(n)
    if small.any():
        out[small] = np.log1p(np.expm1(d[small]) @ prior)
    big = ~small
    if big.any():
        db = d[big]
        m = db.max(axis=1)
        out[big] = m + np.log(np.exp(db - m[:, None]) @ prior)
    return out - np.log(prior)[labels]


def cross_entropy_nats(llh, labels, prior, sample_weight=None) -> float:
    """Prior-weighted multiclass cross-entropy in nats (Albayzin eq. 6; thesis eqs. 8.14, 8.17).

    ``sum_i pi_i / |T_i| sum_{t in T_i} -log P(i | l_t, pi)`` on validated active-class inputs
    (every class has non-zero prior and trials). The default system (constant rows) scores
    exactly the prior entropy of :func:`prior_entropy_nats` (Albayzin eq. 7).
    """
    N = prior.shape[0]
    ref = -np.log(prior)
    # deviations from the default cost -log pi_i: exactly 0 for constant rows
    dev = log_costs(llh, labels, prior) - ref[labels]
    v = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if v is not None:
        keep = v > 0  # a zero-weight trial is absent, even when its cost is large
        dev, v, labels = dev[keep] * v[keep], v[keep], labels[keep]
    sums = np.bincount(labels, weights=dev, minlength=N)
    totals = np.bincount(labels, weights=v, minlength=N)
    return float(prior @ (ref + sums / totals))


def prior_entropy_nats(prior) -> float:
    """Shannon entropy of the prior in nats, ``-sum pi_i log pi_i`` (Albayzin eq. 7).

    The cross-entropy of the default system; zero entries contribute 0 (footnote 9).
    """
    p = np.asarray(prior, dtype=float)
    p = p[p > 0]
    return float(p @ -np.log(p))


def contrast_basis(n_classes: int) -> np.ndarray:
    """Orthonormal basis ``V`` (N x (N-1)) of the vectors that sum to zero (Helmert contrasts).

    ``V.T @ V = I`` and ``V.T @ 1 = 0``: the coordinates ``V.T @ l`` of a log-likelihood vector
    do not depend on its per-trial constant (the log-likelihood *line* of thesis sec. 4.2.1),
    and ``V @ u`` is a log-likelihood vector with zero mean. Used to parametrize offsets and
    fusion matrices without the redundant direction, isotropically in the classes.
    """
    N = int(n_classes)
    V = np.zeros((N, N - 1))
    for k in range(1, N):
        V[:k, k - 1] = 1.0
        V[k, k - 1] = -float(k)
        V[:, k - 1] /= np.sqrt(k * (k + 1.0))
    return V


def as_multiclass_trials(
    llh,
    labels=None,
    prior=None,
    *,
    llh_name: str = "llh",
    labels_name: str = "labels",
    who: str = "this measure",
    weighted: bool = False,
) -> MulticlassTrials:
    """The ``(llh, labels[, prior])`` of every multiclass measure and plot as one
    :class:`MulticlassTrials` (the twin of :func:`focal.metrics.as_binary_scores`).

    Parameters
    ----------
    llh : array_like of shape (n_trials, N), or MulticlassTrials
        Natural-log likelihoods, or a ``MulticlassTrials`` (returned as it is; omit ``labels``).
    labels : array_like of int, shape (n_trials,), optional
        True class ``0..N-1`` of each trial, with array ``llh`` only.
    prior : array_like of shape (N,), optional
        Class prior, default flat (zeros ignore a class and its trials). With a
        ``MulticlassTrials``: omit it, or give the same one (the trials' prior is used).
    llh_name, labels_name, who : str
        The arguments and the caller, as error messages name them.
    weighted : bool, default False
        Whether the caller honours sample weights; if not, trials with weights are refused.

    Returns
    -------
    MulticlassTrials
        Validated once: pass it to any number of measures.
    """
    if not isinstance(llh, MulticlassTrials):
        if labels is None:
            raise ValueError(
                f"{labels_name} are missing: give the ({llh_name}, {labels_name}) arrays or a "
                "MulticlassTrials"
            )
        return MulticlassTrials(llh, labels, prior, llh_name=llh_name, labels_name=labels_name)
    if labels is not None:
        raise ValueError(
            f"give either a MulticlassTrials or the ({llh_name}, {labels_name}) arrays, not both "
            "(with a MulticlassTrials, pass the other arguments by keyword, e.g. "
            "multiclass_cllr(trials, normalize=True))"
        )
    if prior is not None:
        p = check_prior(prior, llh.n_classes)
        if not np.allclose(p, llh.prior, rtol=1e-12, atol=0.0):  # the same, to rounding
            raise ValueError(
                f"prior {p.tolist()} conflicts with the prior of the MulticlassTrials given, "
                f"{llh.prior.tolist()}; omit prior, or pass trials.with_prior(prior)"
            )
    if llh.sample_weight is not None and not weighted:
        raise ValueError(
            f"{who} does not take sample weights: build the MulticlassTrials without sample_weight"
        )
    return llh


def _llh_columns(llh):
    """``(array, n_columns)`` of array-like log-likelihoods, without a copy, for callers whose
    default prior depends on the number of columns; what cannot be a log-likelihood matrix
    raises the error of :func:`as_llh_matrix` (the values are validated by
    :class:`MulticlassTrials`, once).
    """
    arr = np.asarray(llh)
    if arr.ndim != 2 or arr.dtype.kind not in "biuf" or 0 in arr.shape or arr.shape[1] < 2:
        as_llh_matrix(arr)  # raises
    return arr, int(arr.shape[1])
