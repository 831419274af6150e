"""Binary fusion and affine calibration by prior-weighted logistic regression (thesis sec. 8.3.1).

:class:`LogisticFusion` learns ``llr = intercept_ + X @ coef_`` from the scores of K recognizers
(thesis eq. 8.16) by minimizing the prior-weighted logarithmic cost at ``p_target`` (eq. 8.17),
so its output is a calibrated natural-log likelihood-ratio. :class:`LinearCalibrator` is the
K = 1 case: affine calibration of one system's scores (Brümmer & van Leeuwen eq. 18).

Both are scikit-learn classifiers and transformers: ``decision_function`` and ``transform`` give
the LLRs (1-D and (n, 1)), ``predict_proba`` / ``predict`` the Bayes posteriors and decisions at a
chosen prior, ``score`` minus Cllr, so they compose in pipelines and model selection. With
``bounds``, every output is that of the LLRs clipped to ``bounds_`` (the ELUB limits of
:cite:t:`vergeer2016elub`, or given ones).

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`brummer2006calibration`.
.. [3] :cite:t:`brummer2012keynote` ("the keynote").
.. [4] :cite:t:`vergeer2016elub`.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core.logistic import DEFAULT_REG, fit_logistic, fit_scoring_rule
from ..core.logistic_objective import class_relative_weights
from ..core.maps import affine_llr, clip_llr
from ..core.maps import check_finite_llr as _check_finite_llr
from ..core.scoring_rules import scoring_rule
from ..core.validation import (
    as_binary_labels,
    as_sample_weight,
    binary_classes,
)
from ..models.codec import Field
from ..models.fitted_state import (
    LINEAR_FIELDS,
    LOGISTIC_FIELDS,
    check_binary_classes,
    check_fitted_bounds,
    check_params,
)
from ._fit_report import (
    report_fit,
    warn_not_converged,
)
from ._input import validate_input
from ._llr_output import BinaryLLROutputMixin, fitted_bounds, refuse_elub_weights
from ._state import SavedStateMixin

__all__ = [
    "LogisticFusion",
    "LinearCalibrator",
]


def _by_class(llr, is_target):
    """``(target LLRs, non-target LLRs)``."""
    return llr[is_target], llr[~is_target]


def _target_labels(y, pos_label):
    """Target mask of training labels by focal's label rule (:func:`as_binary_labels`);
    continuous or multiclass y get scikit-learn's error message.
    """
    try:
        return as_binary_labels(y, "y", pos_label)
    except ValueError:
        check_classification_targets(y)
        if pos_label is None and np.unique(y).size > 2:
            raise ValueError(
                "Only binary classification is supported: y contains more than two "
                "labels; use a multiclass fusion"
            ) from None
        raise


class LogisticFusion(
    BinaryLLROutputMixin, ClassifierMixin, TransformerMixin, SavedStateMixin, BaseEstimator
):
    """Fuse the scores of several recognizers into one calibrated natural-log LLR.

    Learns ``llr = intercept_ + sum_k coef_[k] * X[:, k]`` (thesis eq. 8.16) by minimizing the
    prior-weighted logarithmic cost at ``p_target`` (eq. 8.17), i.e. Cllr at that prior: a
    logistic regression whose classes are weighted by prior / count, so class proportions in the
    training data do not matter and the output is a log-likelihood-ratio, not a log posterior
    odds. Newton's method with the exact gradient and Hessian, one pass over the data per
    iteration (:func:`focal.core.logistic.fit_logistic`).

    Labels: 0/1 or False/True (1 / True = target); any other two labels need ``pos_label``,
    the target label (focal's label rule, :func:`focal.core.validation.as_binary_labels`). The
    target is never guessed from the labels' sort order. ``classes_`` is ``[non-target label,
    target label]``: ``classes_[1]`` is the target class.

    Parameters
    ----------
    p_target : float, default 0.5
        Effective target prior in (0, 1) at which the training cost is weighted (thesis 8.3.2:
        e.g. the operating point of the evaluation). It is also the default prior of
        ``predict``, ``predict_proba`` and ``score``.
    reg : float, default 1e-9
        L2 penalty on the weights measured in standardized units and relative to the size of the
        objective, ``reg/2 * H_2(p_target) * sum (coef_k sd_k)^2`` with ``sd_k`` the
        (prior-weighted) standard deviation of system k and ``H_2`` the prior entropy in bits, so
        it depends neither on the scale of the scores nor on the prior
        (:mod:`focal.core.logistic`). The default moves real fits by a relative 1e-7 to 1e-6
        (measured against ``reg=0``: 1e-6 in the weights and 2e-5 nats in the LLRs on VoxCeleb1-O
        cosine scores at p = 0.5), far below their sampling error, but keeps them finite when
        the training scores separate the classes perfectly (then the LLRs' size is set by
        ``reg``, growing like ``log(1/reg)``, and a :class:`PerfectSeparationWarning` is issued;
        a ``reg`` large enough to dominate ordinary data triggers it too). ``reg=0`` is plain
        (unpenalized) logistic regression, which has no solution on perfectly separable data.
    tol : float, default 1e-10
        Convergence threshold on the gradient norm of the objective (nats, standardized
        parameters) relative to its natural size: the threshold is ``tol * H_2(p_target)``, so
        extreme priors (objectives of size 1e-11 at p = 1e-12) converge as fully as p = 0.5.
    max_iter : int, default 100
        Maximum number of Newton iterations; a :class:`~sklearn.exceptions.ConvergenceWarning`
        is issued if they do not reach ``tol``.
    scoring_rule : str or (a, b), default "logarithmic"
        Proper scoring rule of the training objective (thesis eq. 8.15 and sec. 7.4):
        ``"logarithmic"`` (logistic regression), ``"brier"``, ``"boosting"``,
        ``"low_false_alarm"`` (the keynote's Beta(10, 1)), or a pair ``(a, b)`` of beta-family
        parameters (:mod:`focal.core.scoring_rules`). The other rules give non-convex objectives
        in general (convex only when a, b <= 1): the fit starts from the logistic solution and
        refines it to the nearest minimum of the chosen rule. A rule may have no finite minimum
        on the training scores (the low false-alarm rule bounds the cost of a missed target by
        10/9, so sharpening the LLRs can lower its cost without end): the fit then warns with
        :class:`UnboundedObjectiveWarning`, naming the rule, and its LLRs are set by ``reg``.
    bounds : "elub", (float, float) or None, default None
        Clip the output LLRs: to the ELUB limits (:func:`focal.metrics.elub_bounds`,
        :cite:t:`vergeer2016elub`) of the training trials' fitted LLRs, the forensic rule for
        how strong an LR the calibration data support (as NFI lir's ``ELUBbounder`` bounds the
        calibrator it wraps, here with the exact limits); to given ``(lower, upper)`` LLRs
        (nats); or not at all (None). The affine map is fitted as without a clip (``coef_``,
        ``intercept_``, ``objective_`` are its own) and its LLRs are then clipped, so the map
        stays monotone in each score. ``"elub"`` counts trials, so it is refused with
        ``sample_weight``.
    pos_label : int, float, bool or str, optional
        The label of the target class in ``y``. Required for labels other than 0/1 and
        False/True (e.g. ``pos_label="genuine"``); the fit then equals the 0/1 fit exactly.

    Attributes
    ----------
    coef_ : ndarray of shape ``(n_features_in_,)``
        Weight of each system (LLR per unit of score).
    intercept_ : float
        LLR offset (nats), with ``logit(p_target)`` already removed: the output is an LLR.
    bounds_ : ndarray of shape (2,)
        The clip ``(lower, upper)`` of the LLRs, nats (``(-inf, inf)`` without ``bounds``).
    n_iter_ : int
        Newton iterations taken (on large data, including those of the warm start on a
        subsample; with another scoring rule, including those of the logistic start).
    n_passes_ : int
        Passes over the training data.
    objective_ : float
        Cllr at ``p_target`` of the fitted LLRs on the training data, in bits per bit,
        normalized as :func:`focal.metrics.cllr` (without the penalty).
    rule_objective_ : float
        The training rule's expected cost normalized by that of the uninformative system
        (:func:`focal.core.scoring_rules.normalized_expected_cost`); equals ``objective_`` for
        the logarithmic rule.
    classes_ : ndarray of shape (2,)
        ``[non-target label, target label]``: ``classes_[1]`` is the target class.
    n_features_in_ : int
        Number of systems seen in ``fit``.
    feature_names_in_ : ndarray of str
        System names, when ``X`` is a DataFrame with string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from focal import LogisticFusion
    >>> rng = np.random.default_rng(0)
    >>> y = np.r_[np.ones(500), np.zeros(500)]
    >>> X = rng.normal(size=(1000, 2)) + 2.0 * y[:, None]
    >>> fuser = LogisticFusion(p_target=0.5).fit(X, y)
    >>> fuser.transform(X).shape           # natural-log LLRs, a column for pipelines
    (1000, 1)
    >>> decisions = fuser.predict(X, p_target=0.01)   # Bayes decisions at another prior
    >>> bool(decisions.mean() < fuser.predict(X).mean())
    True
    """

    def __init__(
        self,
        p_target=0.5,
        reg=DEFAULT_REG,
        tol=1e-10,
        max_iter=100,
        scoring_rule="logarithmic",
        bounds=None,
        pos_label=None,
    ):
        self.p_target = p_target
        self.reg = reg
        self.tol = tol
        self.max_iter = max_iter
        self.scoring_rule = scoring_rule
        self.bounds = bounds
        self.pos_label = pos_label

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    # -- fitting --------------------------------------------------------------------------------

    def _check_params(self):
        """Validated (p_target, reg, tol, max_iter, rule); a ValueError names a bad one."""
        v = check_params(vars(self))
        rule = scoring_rule(v["scoring_rule"])
        return v["p_target"], v["reg"], v["tol"], v["max_iter"], rule

    def _as_2d(self, X):
        """Hook for subclasses that also take 1-D input."""
        return X

    def _check_width(self, X):
        """Hook for subclasses that need a given number of systems."""

    def _validate_X(self, X):
        X = self._as_2d(X)
        if (
            type(X) is np.ndarray
            and X.dtype == np.float64
            and X.ndim == 2
            and X.shape[0]
            and X.shape[1] == self.n_features_in_
        ):
            # the production case (a float array, taken by position): what validate_input
            # would check is checked here, without its per-call cost on small batches
            return X
        # finiteness is checked on the (n_features times smaller) output instead
        return validate_input(self, X, dtype=np.float64, ensure_all_finite=False)

    def fit(self, X, y, sample_weight=None):
        """Train the fusion on development scores.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_systems)
            Scores of each system for each trial (finite).
        y : array-like of shape (n_trials,)
            Two class labels: 0/1 or False/True (1 = target), or any two with ``pos_label``.
        sample_weight : array-like of shape (n_trials,), optional
            Non-negative trial weights: a trial of weight k counts as k trials (not with
            ``bounds="elub"``).

        Returns
        -------
        self
            The fitted estimator.
        """
        p, reg, tol, max_iter, rule = self._check_params()
        refuse_elub_weights(self.bounds, sample_weight)
        X, y = validate_data(self, self._as_2d(X), y, dtype=np.float64)
        self._check_width(X)
        is_target = _target_labels(y, self.pos_label)
        if is_target.all() or not is_target.any():
            raise ValueError(
                f"y contains only one class ({y[0]!r}): training needs both "
                "target and non-target trials"
            )
        classes = binary_classes(y, is_target)
        weights = None
        if sample_weight is not None:
            # only ratios within a class matter: scaled exactly, so 1e300 neither overflows a
            # class total nor underflows a trial's factor
            weights = class_relative_weights(as_sample_weight(sample_weight, X.shape[0]), is_target)
            for mask, label in ((is_target, classes[1]), (~is_target, classes[0])):
                if not weights[mask].sum() > 0:
                    raise ValueError(
                        f"sample_weight gives class {label!r} zero total weight: "
                        "training needs both classes"
                    )
        if rule.is_logarithmic:
            sol = fit_logistic(X, is_target, p, weights, reg, tol, max_iter)
        else:
            sol = fit_scoring_rule(X, is_target, rule, p, weights, reg, tol, max_iter)
        self.classes_ = classes
        self.coef_ = sol.coef
        self.intercept_ = float(sol.intercept)
        self.n_iter_ = int(sol.n_iter)
        self.n_passes_ = int(sol.n_passes)
        self.bounds_ = fitted_bounds(  # "elub": the limits of the training trials' LLRs
            self.bounds, lambda: _by_class(self._llr(X), is_target)
        )
        report_fit(self, X, is_target, weights, p, rule, sol)
        if not sol.converged:
            warn_not_converged(self, max_iter, sol.grad_norm, tol)
        return self

    # -- outputs --------------------------------------------------------------------------------

    def _llr(self, X):
        return affine_llr(X, self.coef_, self.intercept_)

    def decision_function(self, X):
        """Calibrated natural-log LLRs of the trials, shape (n_trials,).

        Not a log posterior odds: add ``logit(p)`` for the log posterior odds at prior p. Its
        sign is the Bayes decision only where the effective prior is 0.5; use :meth:`predict`.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_systems)
            Scores of each system for each trial.

        Returns
        -------
        ndarray of shape (n_trials,)
            The fused LLRs in nats, clipped to ``bounds_``.
        """
        check_is_fitted(self)
        X = self._validate_X(X)
        with np.errstate(over="ignore", invalid="ignore"):  # non-finite LLRs are checked here
            llr = self._llr(X)
            finite = np.isfinite(llr.sum())  # a cheap test first; the sum can overflow by itself
        if not finite:
            _check_finite_llr(X, llr)
        return clip_llr(llr, self.bounds_)

    def transform(self, X):
        """Calibrated natural-log LLRs as a column, shape (n_trials, 1), for pipelines.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_systems)
            Scores of each system for each trial.

        Returns
        -------
        ndarray of shape (n_trials, 1)
            The fused LLRs in nats, clipped to ``bounds_``.
        """
        return self.decision_function(X)[:, None]

    def get_feature_names_out(self, input_features=None):
        """The one output feature: ``["llr"]``.

        Parameters
        ----------
        input_features : array-like of str, optional
            If given, must be the names of the systems seen in ``fit``.

        Returns
        -------
        ndarray of str
            ``["llr"]``.
        """
        check_is_fitted(self)
        if input_features is not None:
            names = np.asarray(input_features, dtype=object)
            seen = getattr(self, "feature_names_in_", None)
            if names.shape != (self.n_features_in_,) or (
                seen is not None and not np.array_equal(names, seen)
            ):
                raise ValueError(
                    f"input_features must be the {self.n_features_in_} system "
                    f"names seen in fit, got {list(names)!r}"
                )
        return np.asarray(["llr"], dtype=object)

    # -- saved state (focal.estimators._state) --------------------------------------------------

    _state_fields: tuple[Field, ...] = LOGISTIC_FIELDS

    def _validate_state(self, state, version):
        """``classes_`` is ``[non-target, target]`` (a version-1 file: sorted, which may set
        ``pos_label``); ``bounds_`` a clip (:func:`check_fitted_bounds`).
        """
        check_fitted_bounds(state)
        pos_label = check_binary_classes(state["classes_"], self.pos_label, version)
        return state if pos_label is self.pos_label else {**state, "pos_label": pos_label}


class LinearCalibrator(LogisticFusion):
    """Affine calibration of one system's scores to natural-log LLRs, ``scale_ * s + offset_``.

    :class:`LogisticFusion` with K = 1 (thesis sec. 8.3.1: "just an affine log-likelihood
    calibration"; Brümmer & van Leeuwen eq. 18). Takes the scores as a 1-D array or a single
    column. Parameters, attributes and methods are those of :class:`LogisticFusion`, plus
    ``scale_`` and ``offset_`` (``coef_[0]`` and ``intercept_``).

    Parameters
    ----------
    p_target : float, default 0.5
        Effective target prior of the training cost, as in :class:`LogisticFusion`.
    reg : float, default 1e-9
        Relative L2 penalty on the scale, as in :class:`LogisticFusion`.
    tol : float, default 1e-10
        Relative convergence threshold, as in :class:`LogisticFusion`.
    max_iter : int, default 100
        Maximum number of Newton iterations.
    scoring_rule : str or (a, b), default "logarithmic"
        Proper scoring rule of the training objective, as in :class:`LogisticFusion`.
    bounds : "elub", (float, float) or None, default None
        Clip the output LLRs to the ELUB limits of the training trials' calibrated LLRs
        (:cite:t:`vergeer2016elub`), to given ``(lower, upper)`` LLRs (nats), or not at all,
        as in :class:`LogisticFusion`.
    pos_label : int, float, bool or str, optional
        The label of the target class in ``y`` (required for labels other than 0/1 and
        False/True).

    Examples
    --------
    >>> import numpy as np
    >>> from focal import LinearCalibrator
    >>> scores = np.r_[np.linspace(1, 5, 50), np.linspace(-3, 2, 50)]
    >>> labels = np.r_[np.ones(50), np.zeros(50)]
    >>> cal = LinearCalibrator().fit(scores, labels)
    >>> llr = cal.decision_function(scores)

    Clipped to the ELUB limits of the training LLRs (forensic practice):

    >>> elub = LinearCalibrator(bounds="elub").fit(scores, labels)
    >>> bool(elub.bounds_[0] < 0 < elub.bounds_[1])
    True
    >>> bool((elub.decision_function([-50.0, 50.0]) == elub.bounds_).all())
    True
    """

    def _as_2d(self, X):
        if not hasattr(X, "shape"):  # lists and other array-likes (DataFrames keep their names)
            X = np.asarray(X)
        if len(X.shape) == 1:
            X = np.asarray(X)
            if X.dtype.kind not in "biuf":
                raise ValueError(f"scores must be real numbers, got dtype {X.dtype}")
            return X.reshape(-1, 1)
        return X

    def _check_width(self, X):
        if X.shape[1] != 1:
            raise ValueError(
                f"{type(self).__name__} calibrates the scores of one system: X must be 1-D or "
                f"have one column, got {X.shape[1]} columns (use LogisticFusion to fuse systems)"
            )

    _state_fields = LINEAR_FIELDS

    def _validate_state(self, state, version):
        """One input column, then as :class:`LogisticFusion`."""
        from ..models.codec import StateError

        if state["n_features_in_"] != 1:
            raise StateError(
                f"a LinearCalibrator has one input column, got {state['n_features_in_']}"
            )
        return super()._validate_state(state, version)

    @property
    def scale_(self) -> float:
        """LLR per unit of score (the calibration's slope)."""
        check_is_fitted(self)
        return float(self.coef_[0])

    @property
    def offset_(self) -> float:
        """LLR of a zero score (nats): ``intercept_``."""
        check_is_fitted(self)
        return self.intercept_
