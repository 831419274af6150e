"""Calibrate any scikit-learn classifier into natural-log LLRs by cross-fitting.

:class:`CalibratedClassifier` is focal's counterpart of scikit-learn's ``CalibratedClassifierCV``
whose output is a calibrated likelihood-ratio rather than a posterior at the training class
proportions: the wrapped classifier's out-of-fold scores (so the calibrator never sees scores
of trials the classifier was trained on) are mapped to LLRs by prior-weighted logistic regression
(:class:`LogisticFusion`, thesis sec. 8.3) or by PAV (:class:`PAVCalibrator`, thesis 7.7.3), and
to multiclass log-likelihoods by :class:`MulticlassFusion` in ``"calibration"`` mode (Brümmer &
van Leeuwen eq. 18). The posterior is then a matter of the application's prior, chosen at
prediction time.

Which score is calibrated. A classifier with ``decision_function`` (SVMs, linear models,
gradient boosting, whose raw sums are log-odds) gives an unbounded score that is not saturated,
and that score is calibrated, as Platt [3]_ does. A classifier with only ``predict_proba``
(random forests, k-nearest neighbours, naive Bayes) gives probabilities that are often exactly
0 or 1: vote fractions of trees or neighbours (a resolution of 1/100 or 1/k), or naive Bayes
posteriors rounded to 0 and 1 in floating point. The logit of such a probability is infinite;
clipped at a tiny number it becomes -690, and one such trial of the wrong class dominates a
logistic fit and costs hundreds of bits on new data (a random forest gave held-out Cllr
2.8 bits, LLRs down to -670 nats). So the probability is treated as the estimate it is, at the
resolution it shows: an exact 0 or 1 is a count of zero, replaced by half the smallest step
seen in the out-of-fold probabilities (the smallest probability strictly between 0 and 1,
halved), as the empirical logit ``log((k + 1/2) / (n - k + 1/2))`` of Haldane [4]_ and
Anscombe [5]_ does for a count, and as Zadrozny and Elkan's smoothing of tree-leaf frequencies
[6]_ does for trees; and no probability is taken below ``1 / (2 N)`` (above ``1 - 1 / (2 N)``),
half a trial among the N out-of-fold trials the calibration is fitted on, which cannot
tell smaller posteriors apart. The logit of the probability clipped to that range (binary), or
the log of each class's probability clipped from below (multiclass), is then calibrated
(``proba_floor_`` is the bound). Measured on ``make_classification(6000, 20, n_informative=6,
weights=[0.8], random_state=0)``, half for training, ``p_target=0.01``: Cllr at 0.01 of the
held-out half, focal (scikit-learn's ``CalibratedClassifierCV(method="sigmoid")``, Platt's
sigmoid fitted to the probability itself, a bounded score): random forest 0.55 (0.54; 1.03 to
1.39 before this bound, 2.1 to 3.8 bits at 0.5), 15 nearest neighbours 0.57 (0.55; 0.87
before), naive Bayes 0.70 (0.73), histogram gradient boosting 0.44 (0.44), SVC 0.51 (0.47).

The calibration is also judged on held-out data: the calibrator is cross-fitted over the same
folds (fitted on the out-of-fold scores of the other folds, applied to each fold's), its
outputs are ``oof_llr_`` and their Cllr ``oof_cllr_``, and a Cllr above 1 bit (worse than no
information) raises a :class:`~focal.estimators.MiscalibrationWarning`.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`brummer2006calibration`.
.. [3] J. C. Platt, "Probabilistic outputs for support vector machines and comparisons to
   regularized likelihood methods", in Advances in Large Margin Classifiers, MIT Press, 1999.
.. [4] J. B. S. Haldane, "The estimation and significance of the logarithm of a ratio of
   frequencies", Annals of Human Genetics 20, pp. 309-311, 1956.
.. [5] F. J. Anscombe, "On estimating binomial response relations", Biometrika 43,
   pp. 461-464, 1956.
.. [6] B. Zadrozny and C. Elkan, "Obtaining calibrated probability estimates from decision
   trees and naive Bayesian classifiers", Proc. ICML, 2001.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import logit
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import check_cv, cross_val_predict
from sklearn.utils import get_tags
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core.multiclass import log_posteriors
from ..core.priors import bayes_threshold
from ..core.validation import check_prior, check_probability
from ..metrics.binary import cllr
from ..metrics.multiclass import multiclass_cllr
from ._fit_report import MiscalibrationWarning
from ._input import validate_input
from ._llr_output import BinaryLLROutputMixin
from .calibration import PAVCalibrator
from .fusion import LogisticFusion
from .multiclass import MulticlassFusion

__all__ = ["CalibratedClassifier"]

METHODS = ("logistic", "pav")


class CalibratedClassifier(BinaryLLROutputMixin, ClassifierMixin, BaseEstimator):
    """A classifier whose scores are cross-fitted into calibrated LLRs (or log-likelihoods).

    ``fit`` (1) gets out-of-fold scores of ``estimator`` by ``cross_val_predict`` over ``cv``:
    ``decision_function`` if it has one, else the log of ``predict_proba`` clipped away from 0
    and 1 at ``proba_floor_`` (the logit of the second column for two classes; the module
    docstring says why and where the bound comes from); (2) fits the calibrator on them, and
    cross-fits it over the same folds to judge it on held-out data (``oof_llr_``,
    ``oof_cllr_``; a :class:`~focal.estimators.MiscalibrationWarning` when that Cllr exceeds 1
    bit); (3) refits ``estimator`` on all the data, whose scores the calibrator maps at
    prediction time (scikit-learn's ``CalibratedClassifierCV(ensemble=False)`` scheme).

    Parameters
    ----------
    estimator : classifier, default ``LogisticRegression()``
        Any scikit-learn classifier.
    method : {"logistic", "pav"}, default "logistic"
        ``"logistic"``: affine map of the score by prior-weighted logistic regression at
        ``p_target`` (binary, :class:`LogisticFusion`), or ``alpha * scores + beta`` over the
        classes (multiclass, :class:`MulticlassFusion` mode ``"calibration"`` at ``prior``).
        ``"pav"``: the optimal monotone map (binary only, :class:`PAVCalibrator`, finite LLRs).
    p_target : float, default 0.5
        Binary: the prior at which the logistic calibration is trained and the default prior of
        ``predict_proba``, ``predict`` and ``score``.
    prior : array_like, optional
        Multiclass: the class prior of training and of ``predict_proba`` (default flat).
    cv : int, cross-validation generator or iterable, default 5
        Folds of the out-of-fold scores (stratified for an int, as in scikit-learn).
    pos_label : label, optional
        Binary: the target label (``classes_[1]``). Without it, ``classes_`` is the sorted
        labels and ``classes_[1]`` is the positive class whose LLR ``decision_function`` gives,
        as in scikit-learn's classifiers (for 0/1 and False/True labels: 1 / True = target,
        focal's rule). Other labels (e.g. ``"genuine"`` / ``"impostor"``) are then only used
        symmetrically: a ``p_target`` other than 0.5 or unequal costs, which favour one class,
        are refused until ``pos_label`` names the target, so a prior never lands on the wrong
        class because of the labels' sort order.

    Attributes
    ----------
    classes_ : ndarray
        Class labels; binary: ``[non-target label, target label]``.
    estimator_ : classifier
        ``estimator`` refitted on all the data.
    calibrator_ : LogisticFusion, PAVCalibrator or MulticlassFusion
        Fitted on the out-of-fold scores.
    oof_llr_ : ndarray
        Held-out calibrated LLRs (binary, shape (n,)) or log-likelihoods (multiclass, (n, N)):
        each fold's out-of-fold scores mapped by a calibrator fitted on the other folds'.
    oof_cllr_ : float
        Their Cllr at ``p_target`` (binary) or multiclass Cllr at ``prior``, in bits per bit
        (1 for an uninformative system; above 1 warns).
    proba_floor_ : float or None
        The bound of the probabilities (None when ``decision_function`` is calibrated).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from focal import CalibratedClassifier
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 400)
    >>> X = rng.normal(size=(400, 3)) + y[:, None]
    >>> clf = CalibratedClassifier(RandomForestClassifier(random_state=0), p_target=0.1)
    >>> llr = clf.fit(X, y).decision_function(X)    # natural-log LLRs
    >>> clf.predict_proba(X, p_target=0.01).shape   # posteriors at the user's prior
    (400, 2)
    """

    def __init__(
        self, estimator=None, method="logistic", p_target=0.5, prior=None, cv=5, pos_label=None
    ):
        self.estimator = estimator
        self.method = method
        self.p_target = p_target
        self.prior = prior
        self.cv = cv
        self.pos_label = pos_label

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        inner = get_tags(self._base()).input_tags  # what X may hold is the classifier's business
        tags.input_tags.sparse = inner.sparse
        tags.input_tags.allow_nan = inner.allow_nan
        tags.classifier_tags.multi_class = self.method != "pav"
        return tags

    def _base(self):
        if self.estimator is None:
            from sklearn.linear_model import LogisticRegression

            return LogisticRegression()
        return self.estimator

    def _scores(self, estimator, X, method):
        """The classifier's score of each trial: 1-D (binary) or (n, N) (multiclass)."""
        if method == "decision_function":
            return np.asarray(estimator.decision_function(X), dtype=float)
        proba = np.asarray(estimator.predict_proba(X), dtype=float)
        return _proba_scores(proba, self.proba_floor_)

    def _calibrator(self, prior):
        if self.classes_.size > 2:
            return MulticlassFusion(prior=prior, mode="calibration")
        if self.method == "logistic":
            return LogisticFusion(p_target=self.p_target)
        return PAVCalibrator()

    def _calibrator_input(self, scores):
        """The calibrator's input: the target's score as a column (binary), else as given."""
        return self._sign * scores.reshape(-1, 1) if self.classes_.size == 2 else scores

    @staticmethod
    def _calibrated(calibrator, X):
        if isinstance(calibrator, MulticlassFusion):
            return calibrator.transform(X)
        return calibrator.decision_function(X)

    def fit(self, X, y):
        """Cross-fit: out-of-fold scores, calibrator on them, then the classifier on all data.

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)
            Training data of the classifier.
        y : array_like, shape (n_samples,)
            Class labels (two or more classes).

        Returns
        -------
        self
            The fitted estimator.
        """
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        check_probability(self.p_target, "p_target")
        X, y = validate_data(
            self, X, y, accept_sparse=True, reset=True, dtype=None, ensure_all_finite=False
        )
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(
                f"y contains only one class ({classes[0]!r}): calibration needs at least two"
            )
        binary = classes.size == 2
        if binary:
            target = self._target_mask(y, classes)
            classes = np.array([y[~target][0], y[target][0]], dtype=classes.dtype)
            self._target_named = self.pos_label is not None or _zero_one(classes)
            self._check_symmetric(self.p_target, classes=classes)
        if not binary and self.method == "pav":
            raise ValueError(
                "Only binary classification is supported with method='pav' (it "
                f"calibrates two classes); use method='logistic' for {classes.size}"
            )
        prior = None if binary else check_prior(self.prior, classes.size)
        base = self._base()
        method = "decision_function" if hasattr(base, "decision_function") else "predict_proba"
        folds = list(check_cv(self.cv, y, classifier=True).split(X, y))  # one split, used twice
        raw = np.asarray(cross_val_predict(clone(base), X, y, cv=folds, method=method), dtype=float)
        # the classifier's binary score is for its classes_[1], the larger label: turn it round
        # when the target is the smaller one
        self._sign = -1.0 if binary and classes[1] == np.unique(y)[0] else 1.0
        self.classes_ = classes
        labels = target.astype(int) if binary else _class_index(classes, y)

        def scores(part):
            """Calibrator input of the out-of-fold scores ``raw[part]``, bounded by them."""
            if method == "decision_function":
                return self._calibrator_input(raw[part]), None
            floor = _probability_floor(raw[part])
            return self._calibrator_input(_proba_scores(raw[part], floor)), floor

        everything, self.proba_floor_ = scores(slice(None))
        self.calibrator_ = self._calibrator(prior).fit(everything, labels)
        held_out = np.empty((y.shape[0],) if binary else (y.shape[0], classes.size))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the fit on every trial above has warned already
            for train, test in folds:
                part, floor = scores(train)
                fold = self._calibrator(prior).fit(part, labels[train])
                unseen = raw[test] if floor is None else _proba_scores(raw[test], floor)
                held_out[test] = self._calibrated(fold, self._calibrator_input(unseen))
        self.oof_llr_ = held_out
        self.oof_cllr_ = _held_out_cllr(held_out, labels, binary, self.p_target, prior)
        if self.oof_cllr_ > 1.0:
            warnings.warn(
                f"the calibrated outputs of held-out folds have Cllr {self.oof_cllr_:.4g} bits "
                "per bit, more than the 1 bit of an uninformative system: the calibration "
                f"fitted on some folds of {type(base).__name__}'s scores does not carry over "
                "to the others (too few trials of a class, or scores that differ from fold to "
                "fold); do not trust its LLRs on new data: get more data, or try another "
                "classifier or method",
                MiscalibrationWarning,
                stacklevel=2,
            )
        self.estimator_ = clone(base).fit(X, y)
        self._score_method = method
        return self

    def _target_mask(self, y, classes):
        """Target trials of binary ``y``: ``y == pos_label``, else the larger label (1 / True
        for 0/1 labels).
        """
        if self.pos_label is not None:
            if not np.isin(self.pos_label, classes):
                raise ValueError(
                    f"pos_label={self.pos_label!r} is not a label of y ({classes.tolist()!r})"
                )
            return y == self.pos_label
        return y == classes[1]

    def _check_symmetric(self, p_target, c_miss=1.0, c_fa=1.0, classes=None):
        """Refuse a prior or costs that favour one class when no label names the target."""
        p = self.p_target if p_target is None else p_target
        if self._target_named or (p == 0.5 and c_miss == c_fa):
            return
        classes = self.classes_ if classes is None else classes
        raise ValueError(
            f"p_target={p!r}, c_miss={c_miss!r}, c_fa={c_fa!r} favour one class, "
            f"but the labels {classes.tolist()!r} do not say which is the target: "
            f"pass pos_label (labels 0/1 or False/True need none)"
        )

    def _output_prior(self, p_target):
        self._check_symmetric(p_target)
        return super()._output_prior(p_target)

    def _binary(self) -> bool:
        check_is_fitted(self, "calibrator_")
        return self.classes_.size == 2

    def _classifier_scores(self, X):
        check_is_fitted(self, "calibrator_")
        X = validate_input(self, X, accept_sparse=True, dtype=None, ensure_all_finite=False)
        return self._scores(self.estimator_, X, self._score_method)

    def decision_function(self, X):
        """Calibrated natural-log LLRs, shape (n,) (binary), or log-likelihoods (n, N).

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)
            Data of the classifier.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            LLRs (binary) or log-likelihoods (multiclass), natural log.
        """
        scores = self._calibrator_input(self._classifier_scores(X))
        return self._calibrated(self.calibrator_, scores)

    def predict_log_proba(self, X, p_target=None, prior=None):
        """Log posteriors at ``p_target`` (binary) or ``prior`` (multiclass; default the fitted).

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)
            Data of the classifier.
        p_target : float, optional
            Binary: effective target prior (default: the one of the fit).
        prior : array_like of shape (n_classes,), optional
            Multiclass: class prior (default: the fitted one).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Natural-log posteriors of ``classes_``.
        """
        if self._binary():
            return super().predict_log_proba(X, p_target)
        return log_posteriors(self.decision_function(X), self.calibrator_._prior_for(prior))

    def predict_proba(self, X, p_target=None, prior=None):
        """Posteriors at ``p_target`` (binary) or ``prior`` (multiclass; default the fitted).

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)
            Data of the classifier.
        p_target : float, optional
            Binary: effective target prior (default: the one of the fit).
        prior : array_like of shape (n_classes,), optional
            Multiclass: class prior (default: the fitted one).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Posteriors of ``classes_``.
        """
        if self._binary():
            return super().predict_proba(X, p_target)
        return np.exp(self.predict_log_proba(X, prior=prior))

    def predict(self, X, p_target=None, c_miss=1.0, c_fa=1.0, prior=None):
        """Bayes decisions: at ``(p_target, c_miss, c_fa)`` (binary: ``classes_[1]`` iff
        ``llr > -logit(P_eff)``, thesis eq. 7.13; a trial exactly at the threshold, where both
        decisions cost the same, goes to ``classes_[0]`` as scikit-learn's classifiers decide
        on ``decision_function > 0``: PAV's step LLRs reach it) or the MAP class at ``prior``
        (multiclass).

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)
            Data of the classifier.
        p_target : float, optional
            Binary: effective target prior (default: the one of the fit).
        c_miss, c_fa : float, default 1.0
            Binary: costs of a miss and of a false alarm.
        prior : array_like of shape (n_classes,), optional
            Multiclass: class prior (default: the fitted one).

        Returns
        -------
        ndarray of shape (n_samples,)
            The decided class of each sample.
        """
        if self._binary():
            self._check_symmetric(p_target, c_miss, c_fa)
            threshold = bayes_threshold(self._output_prior(p_target), c_miss, c_fa)
            return self.classes_[(self.decision_function(X) > threshold).astype(np.intp)]
        return self.classes_[np.argmax(self.predict_log_proba(X, prior=prior), axis=1)]

    def score(self, X, y, sample_weight=None, p_target=None):
        """Minus Cllr (binary, at ``p_target``) or minus multiclass Cllr (at the fitted prior, in
        bits per bit: :meth:`MulticlassFusion.score`): greater is better, 0 for perfect outputs.

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)
            Data of the classifier.
        y : array_like of shape (n_samples,)
            True classes.
        sample_weight : array_like of shape (n_samples,), optional
            Sample weights.
        p_target : float, optional
            Binary: the prior of Cllr (default: the one of the fit).

        Returns
        -------
        float
            Minus Cllr, bits per bit.
        """
        if self._binary():
            return super().score(X, y, sample_weight, p_target)
        return self.calibrator_.score(
            self._classifier_scores(X), _class_index(self.classes_, y), sample_weight
        )


def _zero_one(classes) -> bool:
    """Whether binary ``classes`` are 0/1 or False/True (focal's rule: 1 / True = target)."""
    if classes.dtype.kind == "b":
        return True
    return classes.dtype.kind in "iuf" and classes.tolist() == [0, 1]


def _class_index(classes, y):
    """Labels as indices into ``classes``; unknown labels are a ValueError."""
    y = np.asarray(y)
    unknown = ~np.isin(y, classes)
    if unknown.any():
        raise ValueError(f"y contains labels not seen in fit: {np.unique(y[unknown])!r}")
    return np.searchsorted(classes, y)


def _probability_floor(proba) -> float:
    """The bound of out-of-fold probabilities ``proba`` (n, N): half the smallest one strictly
    between 0 and 1 (half a step of their resolution: an exact 0 or 1 is a count of zero), and
    at least ``1 / (2 n)``, half a trial among the n trials (see the module docstring).
    """
    inner = proba[(proba > 0.0) & (proba < 1.0)]
    half_step = float(inner.min()) / 2.0 if inner.size else 0.0
    return max(half_step, 0.5 / proba.shape[0])


def _proba_scores(proba, floor):
    """The calibrated score of probabilities bounded by ``floor``: the logit of the second
    class's (two classes), else the log of each class's.
    """
    if proba.shape[1] == 2:
        return logit(np.clip(proba[:, 1], floor, 1.0 - floor))
    return np.log(np.clip(proba, floor, 1.0))


def _held_out_cllr(outputs, labels, binary, p_target, prior) -> float:
    """Cllr (binary, at ``p_target``) or normalized multiclass Cllr (at ``prior``) of the
    held-out outputs, in bits per bit.
    """
    if binary:
        return float(cllr(outputs[labels == 1], outputs[labels == 0], p_target))
    return float(multiclass_cllr(outputs, labels, prior, normalize=True))
