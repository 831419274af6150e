"""The runtime's models: the fitted numbers of each saved estimator, checked, and its map.

One class per kind of map (read by :func:`focal.load`'s own reader, with the invariants it
checks: :mod:`focal.runtime._decode`), applying it with the same function of
:mod:`focal.core.maps` as the estimator's ``transform``. Attribute names are those of the
estimators (``coef_``, ``llr_``, ``classes_``, ``n_features_in_`` ...), so
:mod:`focal.models.schema` and :mod:`focal.models.integrity` read both alike.
"""

from __future__ import annotations

import numpy as np

from ..core import maps
from ..models.fitted_state import quality_transforms
from ..models.schema import check_input_names

__all__ = [
    "RuntimeModel",
    "AffineMap",
    "BlockMap",
    "KDEMap",
    "QualityMap",
    "MulticlassMap",
    "GaussianMap",
    "Chain",
]


def _as_float_matrix(model, X, one_column=False, finite=False):
    """X as a 2-D float64 array of the model's ``n_features_in_`` columns (a 1-D array: one
    column), a data frame's columns checked by name first as the estimators check them
    (:func:`focal.models.schema.check_input_names`).
    """
    check_input_names(X, getattr(model, "feature_names_in_", None), model.estimator)
    n_features = model.n_features_in_
    X = np.asarray(X, dtype=np.float64)
    if one_column and X.ndim == 1:
        X = X.reshape(-1, 1)
    if X.ndim != 2 or X.shape[1] != n_features or not X.shape[0]:
        raise ValueError(
            f"X must have shape (n_trials, {n_features}) with n_trials >= 1, got shape {X.shape}"
        )
    if finite and not np.isfinite(X).all():
        raise ValueError(f"Input X contains {'NaN' if np.isnan(X).any() else 'infinity'}")
    return X


class RuntimeModel:
    """A fitted map read from a model file (base class; see :func:`focal.runtime.load`).

    Attributes
    ----------
    estimator : str
        The class of the saved estimator (``"LogisticFusion"``, ..., ``"Pipeline"``).
    params : dict
        Its constructor parameters, as saved.
    input_schema_ : focal.models.schema.InputSchema
        Systems and classes the model takes (set by :func:`focal.runtime.load`).
    output_kind : {"binary", "multiclass"}
        LLRs or class log-likelihoods.

    The fitted attributes of the estimator that the map needs keep their names (``coef_``,
    ``intercept_``, ``llr_``, ``classes_``, ``n_features_in_``, ``feature_names_in_`` ...).
    """

    #: "binary" (LLRs) or "multiclass" (class log-likelihoods)
    output_kind = "binary"

    #: the class of the saved estimator (set by :func:`focal.runtime._decode.runtime_class`)
    estimator = "RuntimeModel"

    def __init__(self, **params):
        self.params = params

    def __repr__(self):
        return f"<focal.runtime model of a fitted {self.estimator}>"


class _BinaryOutput(RuntimeModel):
    def transform(self, X):
        """Natural-log LLRs as a column, for pipelines.

        Parameters
        ----------
        X : array_like of float, shape (n_trials, n_features_in_)
            Scores (a 1-D array for one-column models).

        Returns
        -------
        ndarray of float, shape (n_trials, 1)
        """
        return self.decision_function(X)[:, None]


class AffineMap(_BinaryOutput):
    """LogisticFusion, LinearCalibrator: ``llr = X @ coef_ + intercept_``, clipped to
    ``bounds_``.
    """

    def decision_function(self, X):
        """Calibrated natural-log LLRs (thesis eq. 8.16).

        Parameters
        ----------
        X : array_like of float, shape (n_trials, n_features_in_)
            Scores of the systems (LinearCalibrator: also 1-D).

        Returns
        -------
        ndarray of float, shape (n_trials,)
        """
        X = _as_float_matrix(self, X, self.estimator == "LinearCalibrator")
        with np.errstate(over="ignore", invalid="ignore"):
            llr = maps.affine_llr(X, self.coef_, self.intercept_)
            finite = np.isfinite(llr.sum())
        if not finite:
            maps.check_finite_llr(X, llr)
        return maps.clip_llr(llr, self.bounds_)


class BlockMap(_BinaryOutput):
    """PAVCalibrator and ROCCH: the monotone map of PAV blocks to LLRs."""

    def decision_function(self, X):
        """Natural-log LLRs of the PAV blocks the scores fall into (thesis eq. C.20).

        Parameters
        ----------
        X : array_like of float, shape (n_trials,) or (n_trials, 1)
            Finite scores.

        Returns
        -------
        ndarray of float, shape (n_trials,)
        """
        X = _as_float_matrix(self, X, one_column=True, finite=True)
        return maps.block_llr_map(
            self.score_lo_, self.score_hi_, self.llr_, X[:, 0], self.interpolation
        )


class KDEMap(_BinaryOutput):
    """KDECalibrator: the log ratio of the two classes' Gaussian kernel density estimates."""

    def decision_function(self, X):
        """Natural-log LLRs ``log f_tar(s) - log f_non(s)``, clipped to ``bounds_``.

        Parameters
        ----------
        X : array_like of float, shape (n_trials,) or (n_trials, 1)
            Finite scores.

        Returns
        -------
        ndarray of float, shape (n_trials,)
        """
        X = _as_float_matrix(self, X, one_column=True, finite=True)
        return maps.kde_llr(
            X[:, 0], self.tar_scores_, self.non_scores_, self.bandwidth_, *self.bounds_
        )


class QualityMap(_BinaryOutput):
    """QualityFusion: the affine back-off, and the quality fusion where quality is complete,
    clipped to ``bounds_``.
    """

    def _transforms(self, M):
        """The transform of each of M measures (as the estimator's ``_transforms``)."""
        return quality_transforms(self.params["quality_transform"], M)

    def decision_function(self, X, quality=None):
        """Natural-log LLRs of trials with quality measures.

        Parameters
        ----------
        X : array_like of float, shape (n_trials, n_features_in_)
            Scores of the systems.
        quality : array_like of float, shape (n_trials, 2 M)
            Model-side then test-side values of the M ``measures_``; NaN marks a missing value
            (the trial then gets the affine back-off's LLR).

        Returns
        -------
        ndarray of float, shape (n_trials,)
            Clipped to ``bounds_``.
        """
        X = _as_float_matrix(self, X)
        M = len(self.measures_)
        if quality is None:
            raise ValueError(
                "QualityFusion needs quality measures: pass quality= (an array of "
                "model-side then test-side measures)"
            )
        Q = np.asarray(quality, dtype=np.float64)
        if Q.shape != (X.shape[0], 2 * M):
            raise ValueError(
                f"quality must have shape {(X.shape[0], 2 * M)}: model-side then "
                f"test-side values of {list(self.measures_)!r}; got {Q.shape}"
            )
        qm, qt = maps.quality_sides(Q, self._transforms(M), list(self.measures_))
        with np.errstate(over="ignore", invalid="ignore"):
            llr = maps.llr_with_quality(
                X, qm, qt, self.params["form"], self.params["features"], self
            )
            finite = np.isfinite(llr.sum())
        if not finite:
            maps.check_finite_llr(X, llr)
        return maps.clip_llr(llr, self.bounds_)

    def transform(self, X, quality=None):
        """Natural-log LLRs as a column, shape (n_trials, 1) (see :meth:`decision_function`).

        Parameters
        ----------
        X : array_like of float, shape (n_trials, n_features_in_)
        quality : array_like of float, shape (n_trials, 2 M)

        Returns
        -------
        ndarray of float, shape (n_trials, 1)
        """
        return self.decision_function(X, quality)[:, None]


class MulticlassMap(RuntimeModel):
    """MulticlassFusion: weights per system (or a matrix per system) and an offset vector."""

    output_kind = "multiclass"

    def transform(self, X):
        """Fused, calibrated class log-likelihoods, natural log.

        Parameters
        ----------
        X : array_like of float, shape (n_trials, n_systems_ * n_classes_)
            Each system's class log-likelihoods side by side.

        Returns
        -------
        ndarray of float, shape (n_trials, n_classes_)
        """
        X = _as_float_matrix(self, X, finite=True)
        L = X.reshape(X.shape[0], self.n_systems_, self.n_classes_)
        mode = "full" if self.coef_.ndim == 3 else "scalar"
        return maps.apply_multiclass(L, mode, self.coef_, self.intercept_)


class GaussianMap(RuntimeModel):
    """GaussianBackend: class log-likelihoods under Gaussian class models."""

    output_kind = "multiclass"

    def transform(self, X):
        """Class log-likelihoods under the Gaussian class models, natural log.

        Parameters
        ----------
        X : array_like of float, shape (n_trials, n_features_in_)
            Score vectors.

        Returns
        -------
        ndarray of float, shape (n_trials, n_classes_)
        """
        X = _as_float_matrix(self, X, finite=True)
        return maps.gaussian_loglikelihoods(X, self.model_)


class Chain(RuntimeModel):
    """A Pipeline: each step's output is the next step's input."""

    estimator = "Pipeline"

    def __init__(self, steps, verbose=False):
        self.steps = steps
        self.output_kind = self._models()[-1].output_kind

    def _models(self):
        return [m for _, m in self.steps if isinstance(m, RuntimeModel)]

    def __getitem__(self, index):
        if isinstance(index, slice):
            return Chain(self.steps[index])
        return self.steps[index][1]

    def __len__(self):
        return len(self.steps)

    def transform(self, X, **kwargs):
        """Apply the steps in turn.

        Parameters
        ----------
        X : array_like of float
            The first step's input.
        **kwargs
            Passed to the first step (``quality=`` of a quality fusion).

        Returns
        -------
        ndarray of float
            The last step's output.
        """
        for model in self._models():
            X = model.transform(X, **kwargs)
            kwargs = {}
        return X
