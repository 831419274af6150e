"""Gaussian back-end: score vectors in, class log-likelihoods out (a scikit-learn transformer).

References
----------
.. [1] :cite:t:`brummer2006calibration`.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core.gaussian import fit_gaussian_classes
from ..core.maps import gaussian_loglikelihoods
from ..models.fitted_state import GAUSSIAN_FIELDS, check_cholesky, check_params
from ._input import validate_input
from ._llh_output import LogLikelihoodOutputMixin
from ._state import MulticlassStateMixin

__all__ = ["GaussianBackend"]


class GaussianBackend(
    ClassNamePrefixFeaturesOutMixin,
    LogLikelihoodOutputMixin,
    TransformerMixin,
    MulticlassStateMixin,
    BaseEstimator,
):
    """Gaussian class models of score vectors, producing class log-likelihoods.

    The back-end of Brümmer & van Leeuwen sec. 5 (149-dimensional score vectors -> 7 language
    log-likelihoods): each class is a Gaussian with its own mean and either one covariance
    shared by all classes (linear back-end) or one per class (quadratic back-end), estimated by
    maximum likelihood (:mod:`focal.core.gaussian`). The output is log-likelihoods, not
    posteriors (priors are application parameters): calibrate them, e.g.
    ``make_pipeline(GaussianBackend(), MulticlassFusion(mode="calibration"))``.

    Parameters
    ----------
    covariance : {"shared", "per_class"}, default "shared"
        With ``"shared"`` the log-likelihoods are exact up to a per-trial constant (linear
        form); with ``"per_class"`` they are the full Gaussian log-densities.
    prior : array_like of shape (n_classes,), optional
        Default prior of ``predict_proba`` / ``predict`` (flat if None). It does not affect the
        fitted models. When given, it also fixes ``n_classes``.
    reg : float, default 1e-6
        Scale-free ridge: ``reg`` times the average variance v of the training vectors (trace
        of their covariance / d) is added to each covariance diagonal. It keeps degenerate
        models finite (a score column constant within every class, collinear columns, fewer
        trials than dimensions, a class with one trial) and moves the others by about
        ``reg * v / lambda_min`` relative, ``lambda_min`` the smallest eigenvalue of the
        (within-class) covariance: each precision eigenvalue ``1/lambda`` becomes
        ``1/(lambda + reg v)``. Measured against ``reg=0`` (the largest change of a
        log-likelihood difference over the largest difference): 1.7e-6 shared and 2.5e-6 per
        class on the example below (independent columns, v / lambda_min 1.9 and 2.6), but 8 %
        shared and 14 % per class on the language sample's three systems side by side, whose 18
        columns are nearly collinear (v / lambda_min about 1e11): there the ridge decides the
        poorly determined directions, so choose it (or fewer, less redundant columns)
        deliberately.
    class_names : sequence of str, optional
        The classes in output-column order; labels may then be these names (``classes_`` holds
        them). Class-name labels without it are refused: a later step (e.g. a
        ``MulticlassFusion(class_names=...)``) must get the columns in the order it is told.

    Attributes
    ----------
    n_classes_ : int
    prior_ : ndarray
    means_ : ndarray, shape (n_classes, n_features)
        Class means (in the input units).
    covariance_ : ndarray, shape (n_features, n_features) or (n_classes, n_features, n_features)
    n_features_in_, feature_names_in_

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.pipeline import make_pipeline
    >>> from focal import GaussianBackend, MulticlassFusion
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 3, 300)
    >>> X = rng.normal(size=(300, 5)) + 2.0 * np.eye(3, 5)[y]      # 5-dim score vectors
    >>> pipe = make_pipeline(GaussianBackend(), MulticlassFusion(mode="calibration")).fit(X, y)
    >>> pipe.transform(X).shape, bool((pipe.predict(X) == y).mean() > 0.8)
    ((300, 3), True)
    """

    def __init__(self, covariance="shared", prior=None, reg=1e-6, class_names=None):
        self.covariance = covariance
        self.prior = prior
        self.reg = reg
        self.class_names = class_names

    def _check_params(self) -> float:
        """Validate ``covariance`` and ``reg``; returns ``reg`` as a float."""
        return check_params(vars(self))["reg"]

    def fit(self, X, y, sample_weight=None):
        """Estimate the class models from score vectors ``X`` (n_trials, d) and labels ``y``
        (class indices; every class needs trials, per-class covariances need more than d).

        Parameters
        ----------
        X : array-like of shape (n_trials, d)
            Score vectors (finite).
        y : array-like of shape (n_trials,)
            Class labels (indices ``0..N-1``, or names with ``class_names``; see
            :class:`focal.estimators._llh_output.LogLikelihoodOutputMixin`).
        sample_weight : array-like of shape (n_trials,), optional
            Non-negative trial weights: a trial of weight k counts as k trials.

        Returns
        -------
        self
            The fitted estimator.
        """
        reg = self._check_params()
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=1)
        classes, labels, prior, w = self._validate_targets(X, y, sample_weight)
        model = fit_gaussian_classes(
            X, labels, classes.shape[0], self.covariance, w, reg, classes.tolist()
        )
        self._set_classes(classes, prior)
        self.model_ = model
        self.means_ = model.means + model.center
        L = model.cholesky
        self.covariance_ = L @ np.swapaxes(L, -1, -2)
        return self

    def transform(self, X):
        """Class log-likelihoods ``(n_trials, n_classes)``, natural log.

        Parameters
        ----------
        X : array-like of shape (n_trials, d)
            Score vectors.

        Returns
        -------
        ndarray of shape (n_trials, n_classes)
            Natural-log likelihood of each class for each trial.
        """
        check_is_fitted(self)
        X = validate_input(self, X, dtype=np.float64)
        return gaussian_loglikelihoods(X, self.model_)

    # -- saved state (focal.estimators._state): the centred class models; ``means_`` and
    # ``covariance_`` are derived from them

    _state_fields = GAUSSIAN_FIELDS

    def _get_state(self):
        m = self.model_
        return {
            "n_features_in_": self.n_features_in_,
            "feature_names_in_": getattr(self, "feature_names_in_", None),
            "classes_": self.classes_,
            "model_": {
                "covariance": m.covariance,
                "center": m.center,
                "means": m.means,
                "cholesky": m.cholesky,
            },
        }

    def _validate_state(self, state, version):
        """The class labels, and lower-triangular Cholesky factors with a positive diagonal."""
        from ..core.gaussian import GaussianClasses

        state = super()._validate_state(state, version)
        check_cholesky(state["model_"]["cholesky"])
        return {**state, "model_": GaussianClasses(**state["model_"])}

    def _set_state(self, state):
        super()._set_state(state)
        model = self.model_
        with np.errstate(over="ignore", invalid="ignore"):
            self.means_ = model.means + model.center
            L = model.cholesky
            self.covariance_ = L @ np.swapaxes(L, -1, -2)
        if not (np.isfinite(self.means_).all() and np.isfinite(self.covariance_).all()):
            raise ValueError("the class means or covariances overflow")
