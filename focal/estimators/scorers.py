"""Ready-made scikit-learn scorers for LLR-producing estimators: Cllr, minCllr, DCF, minDCF, EER.

Each factory returns a callable ``scorer(estimator, X, y) -> float`` for the ``scoring=``
argument of :class:`~sklearn.model_selection.GridSearchCV`, :func:`cross_validate` and friends.
The estimator's output is read as natural-log LLRs from ``decision_function`` (focal's
classifiers, or a pipeline ending in one) or else from a one-column ``transform`` (calibrators).
Scorers follow sklearn's "greater is better" convention: they return the *negated* measure,
like sklearn's ``neg_log_loss``.

Labels follow focal's one rule (:func:`focal.core.validation.as_binary_labels`): for an
estimator with ``classes_``, ``classes_[1]`` is the target class (the ``pos_label`` it was
fitted with); otherwise ``y`` must be 0/1 or boolean (1 = target), or the scorer is given
``pos_label``. Every measure needs both classes in the scored fold.

>>> from sklearn.model_selection import GridSearchCV
>>> from focal import LogisticFusion, cllr_scorer
>>> search = GridSearchCV(LogisticFusion(), {"p_target": [0.01, 0.1, 0.5]},
...                       scoring=cllr_scorer(p_target=0.01))
"""

from __future__ import annotations

import numpy as np

from ..core.operating_point import OperatingPoint
from ..core.validation import as_binary_labels, check_pos_label, check_probability
from ..metrics.binary import cllr, dcf, eer, min_cllr, min_dcf
from ..metrics.binary_scores import labelled_pair

__all__ = [
    "LLRScorer",
    "cllr_scorer",
    "min_cllr_scorer",
    "dcf_scorer",
    "min_dcf_scorer",
    "eer_scorer",
    "LLHScorer",
    "cmce_scorer",
    "multiclass_cllr_scorer",
    "cavg_scorer",
]


class LLRScorer:
    """Scorer returning ``-measure(tar_llr, non_llr, **kwargs)`` of an estimator's LLRs.

    Parameters
    ----------
    measure : callable
        A binary measure of :mod:`focal.metrics` taking ``(tar, non, **kwargs)``; lower is better.
    name : str
        Name shown in the repr.
    **kwargs
        Operating-point arguments passed to ``measure`` (``p_target``, ``c_miss``, ``c_fa``).
    """

    def __init__(self, measure, name, **kwargs):
        self.measure = measure
        self.name = name
        self.kwargs = kwargs

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"{self.name}({args})"

    def __call__(self, estimator, X, y):
        """Minus the measure of ``estimator``'s outputs on ``X`` against ``y``."""
        llr = _llr_output(estimator, X)
        kwargs = dict(self.kwargs)
        pos_label = kwargs.pop("pos_label", None)
        is_target = _target_mask(estimator, y, llr.shape[0], pos_label)
        pair = labelled_pair(llr[is_target], llr[~is_target])  # split here: order is right
        return -float(self.measure(pair, **kwargs))


def _llr_output(estimator, X) -> np.ndarray:
    if hasattr(estimator, "decision_function"):
        out = np.asarray(estimator.decision_function(X), dtype=float)
    elif hasattr(estimator, "transform"):
        out = np.asarray(estimator.transform(X), dtype=float)
    else:
        raise ValueError(
            f"{type(estimator).__name__} has neither decision_function nor "
            "transform: a focal scorer needs an estimator that outputs LLRs"
        )
    if out.ndim == 2 and out.shape[1] == 1:
        out = out[:, 0]
    if out.ndim != 1:
        raise ValueError(
            f"a focal scorer needs one LLR per trial; {type(estimator).__name__} "
            f"gave an output of shape {out.shape}"
        )
    return out


def _target_mask(estimator, y, n, pos_label=None) -> np.ndarray:
    y = np.asarray(y)
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},) to match the estimator's output, got {y.shape}")
    classes = getattr(estimator, "classes_", None)
    if classes is not None and len(classes) == 2:
        unknown = ~np.isin(y, classes)
        if unknown.any():
            raise ValueError(f"y contains labels not seen in fit: {np.unique(y[unknown])!r}")
        if pos_label is not None and pos_label != classes[1]:
            raise ValueError(
                f"pos_label={pos_label!r} differs from the estimator's target "
                f"class {classes[1]!r} (classes_[1])"
            )
        pos_label = classes[1]
    return as_binary_labels(y, "y", pos_label)


def _label(pos_label) -> dict:
    """``{"pos_label": ...}`` when one is given (the target label of ``y``), else nothing."""
    return {} if pos_label is None else {"pos_label": check_pos_label(pos_label)}


def _operating_point(p_target, c_miss, c_fa):
    op = OperatingPoint(p_target, c_miss, c_fa)
    return {"p_target": op.p_target, "c_miss": op.c_miss, "c_fa": op.c_fa}


def cllr_scorer(p_target=0.5, *, pos_label=None) -> LLRScorer:
    """Minus Cllr (bits per bit) at ``p_target``: :func:`focal.metrics.cllr`.

    Parameters
    ----------
    p_target : float, default 0.5
        Target prior in (0, 1).
    pos_label : scalar, optional
        The target label of ``y`` (required for labels other than 0/1 and False/True).

    Returns
    -------
    LLRScorer
        A scorer ``scorer(estimator, X, y)`` for scikit-learn's model selection (greater is
        better).
    """
    return LLRScorer(cllr, "cllr_scorer", p_target=check_probability(p_target), **_label(pos_label))


def min_cllr_scorer(p_target=0.5, *, pos_label=None) -> LLRScorer:
    """Minus minCllr (the discrimination part of Cllr): :func:`focal.metrics.min_cllr`.

    Parameters
    ----------
    p_target : float, default 0.5
        Target prior in (0, 1).
    pos_label : scalar, optional
        The target label of ``y`` (required for labels other than 0/1 and False/True).

    Returns
    -------
    LLRScorer
        A scorer ``scorer(estimator, X, y)`` for scikit-learn's model selection (greater is
        better).
    """
    return LLRScorer(
        min_cllr, "min_cllr_scorer", p_target=check_probability(p_target), **_label(pos_label)
    )


def dcf_scorer(p_target, c_miss=1.0, c_fa=1.0, *, pos_label=None) -> LLRScorer:
    """Minus the normalized actual DCF of Bayes decisions on the LLRs: :func:`focal.metrics.dcf`.

    Parameters
    ----------
    p_target : float
        Target prior P_target in (0, 1).
    c_miss, c_fa : float, default 1.0
        Costs of a miss and of a false alarm (> 0).
    pos_label : scalar, optional
        The target label of ``y`` (required for labels other than 0/1 and False/True).

    Returns
    -------
    LLRScorer
        A scorer ``scorer(estimator, X, y)`` for scikit-learn's model selection (greater is
        better).
    """
    return LLRScorer(
        dcf, "dcf_scorer", **_operating_point(p_target, c_miss, c_fa), **_label(pos_label)
    )


def min_dcf_scorer(p_target, c_miss=1.0, c_fa=1.0, *, pos_label=None) -> LLRScorer:
    """Minus the normalized minimum DCF: :func:`focal.metrics.min_dcf`.

    Parameters
    ----------
    p_target : float
        Target prior P_target in (0, 1).
    c_miss, c_fa : float, default 1.0
        Costs of a miss and of a false alarm (> 0).
    pos_label : scalar, optional
        The target label of ``y`` (required for labels other than 0/1 and False/True).

    Returns
    -------
    LLRScorer
        A scorer ``scorer(estimator, X, y)`` for scikit-learn's model selection (greater is
        better).
    """
    return LLRScorer(
        min_dcf, "min_dcf_scorer", **_operating_point(p_target, c_miss, c_fa), **_label(pos_label)
    )


def eer_scorer(*, pos_label=None) -> LLRScorer:
    """Minus the ROCCH equal-error-rate (a fraction): :func:`focal.metrics.eer`.

    Parameters
    ----------
    pos_label : scalar, optional
        The target label of ``y`` (required for labels other than 0/1 and False/True).

    Returns
    -------
    LLRScorer
        A scorer ``scorer(estimator, X, y)`` for scikit-learn's model selection (greater is
        better).
    """
    return LLRScorer(eer, "eer_scorer", **_label(pos_label))


# -- multiclass: log-likelihood outputs -------------------------------------------------------


class LLHScorer(LLRScorer):
    """Scorer returning ``-measure(llh, labels, **kwargs)`` of an estimator's log-likelihoods.

    The log-likelihoods, shape (n_trials, n_classes), come from ``transform`` (focal's
    multiclass estimators) or else ``decision_function`` (e.g. a multiclass
    :class:`focal.CalibratedClassifier`); column j belongs to ``estimator.classes_[j]``, and
    ``y`` is mapped to column indices by name through ``classes_``.

    Parameters
    ----------
    measure : callable
        A multiclass measure of :mod:`focal.metrics` taking ``(llh, labels, **kwargs)``.
    name : str
        Name shown in the repr.
    **kwargs
        Passed to ``measure`` (``prior``, ``p_target``).
    """

    def __call__(self, estimator, X, y):
        """Minus the measure of ``estimator``'s outputs on ``X`` against ``y``."""
        method = "transform" if hasattr(estimator, "transform") else "decision_function"
        llh = np.asarray(getattr(estimator, method)(X), dtype=float)
        classes = getattr(estimator, "classes_", None)
        if classes is None:
            raise ValueError(
                f"{type(estimator).__name__} has no classes_: a multiclass scorer "
                "needs them to match y to the log-likelihood columns"
            )
        if llh.ndim != 2 or llh.shape[1] != len(classes):
            raise ValueError(
                f"a multiclass scorer needs one log-likelihood per class "
                f"({len(classes)}); {type(estimator).__name__}.{method} gave "
                f"shape {llh.shape}"
            )
        y = np.asarray(y)
        unknown = ~np.isin(y, classes)
        if unknown.any():
            raise ValueError(f"y contains labels not seen in fit: {np.unique(y[unknown])!r}")
        return -float(self.measure(llh, np.searchsorted(classes, y), **self.kwargs))


def cmce_scorer(prior=None) -> LLHScorer:
    """Minus C_mce in nats at ``prior`` (default flat):
    :func:`focal.metrics.multiclass_cross_entropy`.

    Parameters
    ----------
    prior : array_like of shape (n_classes,), optional
        Evaluation prior, default flat.

    Returns
    -------
    LLHScorer
        A scorer ``scorer(estimator, X, y)`` for scikit-learn's model selection (greater is
        better).
    """
    from ..metrics.multiclass import multiclass_cross_entropy

    return LLHScorer(multiclass_cross_entropy, "cmce_scorer", prior=prior)


def multiclass_cllr_scorer(prior=None, normalize=False) -> LLHScorer:
    """Minus multiclass Cllr in bits (or normalized): :func:`focal.metrics.multiclass_cllr`.

    Parameters
    ----------
    prior : array_like of shape (n_classes,), optional
        Evaluation prior, default flat.
    normalize : bool, default False
        Divide by the prior entropy (1 = uninformative).

    Returns
    -------
    LLHScorer
        A scorer ``scorer(estimator, X, y)`` for scikit-learn's model selection (greater is
        better).
    """
    from ..metrics.multiclass import multiclass_cllr

    return LLHScorer(
        multiclass_cllr, "multiclass_cllr_scorer", prior=prior, normalize=bool(normalize)
    )


def cavg_scorer(p_target=0.5) -> LLHScorer:
    """Minus NIST LRE CAVG of the Bayes decisions at ``p_target``: :func:`focal.metrics.cavg`.

    Parameters
    ----------
    p_target : float, default 0.5
        Target prior of each detection application, in (0, 1).

    Returns
    -------
    LLHScorer
        A scorer ``scorer(estimator, X, y)`` for scikit-learn's model selection (greater is
        better).
    """
    from ..metrics.lre import cavg

    return LLHScorer(cavg, "cavg_scorer", p_target=check_probability(p_target))
