"""The runtime's models read by the loader's own node reader (:func:`focal.models.nodes.node_in`).

Each loadable class of :mod:`focal.models.registry` gets a runtime class (:func:`runtime_class`):
the map of :mod:`focal.runtime._models` that applies it, with the saved-state protocol of
:mod:`focal.estimators._state` (the constructor parameters the registry lists, the saved
fields of :mod:`focal.models.fitted_state`, and that module's checks of them and of the constructor
parameters, :func:`focal.models.fitted_state.check_params`, which the estimators' ``_check_params``
call too).
"""

from __future__ import annotations

from functools import cache
from types import SimpleNamespace

import numpy as np

from ..core import maps
from ..models import fitted_state as fs
from ..models.codec import StateError
from . import _models

__all__ = ["runtime_class"]


class _Saved:
    """The saved-state protocol of :mod:`focal.estimators._state` for a runtime map."""

    _param_names: tuple = ()
    _state_fields: tuple = ()
    params: dict

    def __init__(self, **params):
        # a version-1 file lacks the parameters added since: they take their default, None
        super().__init__(**{p: params.get(p) for p in self._param_names})

    def get_params(self, deep=False) -> dict:
        """The parameters by name, sorted (as scikit-learn's ``get_params`` lists them)."""
        return {p: self.params[p] for p in sorted(self._param_names)}

    def _check_params(self):
        fs.check_params(self.params)

    def set_output(self, transform=None):
        """The container of ``focal.load``'s estimator; the runtime returns NumPy arrays."""
        return self

    def _validate_state(self, state, version):
        return state

    def _set_state(self, state):
        for name, value in state.items():
            setattr(self, name, value)


def _binary_classes(self, state, version):
    pos_label = fs.check_binary_classes(state["classes_"], self.params["pos_label"], version)
    self.params["pos_label"] = pos_label


class _Affine(_Saved, _models.AffineMap):
    def _validate_state(self, state, version):
        if self.estimator == "LinearCalibrator" and state["n_features_in_"] != 1:
            raise StateError(
                f"a LinearCalibrator has one input column, got {state['n_features_in_']}"
            )
        fs.check_fitted_bounds(state)
        _binary_classes(self, state, version)
        return state


class _PAV(_Saved, _models.BlockMap):
    def _validate_state(self, state, version):
        _binary_classes(self, state, version)
        fs.check_pav_llr(state, self.params["pseudo_count"])
        return {**state, "interpolation": self.params["interpolation"]}


class _Hull(_Saved, _models.BlockMap):
    def _validate_state(self, state, version):
        _binary_classes(self, state, version)
        fs.check_hull(state)
        n_tar, n_non = state["block_n_tar_"], state["block_n_non_"]
        return {
            **state,
            "llr_": maps.block_llr(n_tar, n_non),
            "interpolation": "step",
            "n_targets_": int(n_tar.sum()),
            "n_nontargets_": int(n_non.sum()),
        }


class _KDE(_Saved, _models.KDEMap):
    def _validate_state(self, state, version):
        _binary_classes(self, state, version)
        fs.check_kde(state)
        return state


def _multiclass_classes(self, state, version):
    p = self.params
    fs.check_multiclass_classes(state["classes_"], p["class_names"], p["prior"], version)
    return {**state, "n_classes_": state["classes_"].shape[0]}


class _Multiclass(_Saved, _models.MulticlassMap):
    def _validate_state(self, state, version):
        state = _multiclass_classes(self, state, version)
        fs.check_multiclass_weights(state)
        return state


class _Gaussian(_Saved, _models.GaussianMap):
    def _validate_state(self, state, version):
        state = _multiclass_classes(self, state, version)
        fs.check_cholesky(state["model_"]["cholesky"])
        return {**state, "model_": SimpleNamespace(**state["model_"])}

    def _set_state(self, state):
        super()._set_state(state)
        m = self.model_
        with np.errstate(over="ignore", invalid="ignore"):
            finite = (
                np.isfinite(m.means + m.center).all()
                and np.isfinite(m.cholesky @ np.swapaxes(m.cholesky, -1, -2)).all()
            )
        if not finite:
            raise ValueError("the class means or covariances overflow")


class _Quality(_Saved, _models.QualityMap):
    def _validate_state(self, state, version):
        p = self.params
        fs.check_quality_measures(
            state, p["measures"], p["form"], p["features"], p["quality_transform"]
        )
        fs.check_fitted_bounds(state)
        _binary_classes(self, state, version)
        return {
            **state,
            "measures_": np.array(state["measures_"], dtype=object),
            "quality_feature_names_": np.array(state["quality_feature_names_"], dtype=object),
        }


_MAPS = {
    "AffineMap": _Affine,
    "BlockMap": _PAV,
    "HullMap": _Hull,
    "KDEMap": _KDE,
    "MulticlassMap": _Multiclass,
    "GaussianMap": _Gaussian,
    "QualityMap": _Quality,
}


@cache
def runtime_class(entry):
    """The runtime class of a :class:`focal.models.registry.Entry`: its map, named after the class
    it applies, with the entry's parameters and saved fields.
    """
    if entry.node != "state":
        return getattr(_models, entry.runtime)
    return type(
        entry.name,
        (_MAPS[entry.runtime],),
        {
            "estimator": entry.name,
            "_param_names": entry.params,
            "_state_fields": getattr(fs, entry.fields),
        },
    )
