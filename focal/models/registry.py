"""The classes a model file may name: the one list of them, and nothing else is ever loaded.

Each entry says where the class lives, the name a model file stores, how its node is written
(``"state"``: an estimator that saves its fitted state by the hooks of
:mod:`focal.estimators._state`; ``"steps"``: a scikit-learn Pipeline of such nodes), its
constructor parameters (``get_params()``, in order; a test keeps them equal), the fields it
saves (a name in :mod:`focal.models.fitted_state`), the class of :mod:`focal.runtime._models`
that applies it with NumPy alone, and the parameters added since files of the current schema
version were first written (a file without one was written before: it takes its default).
Importing this module imports nothing: the classes are imported on first use, so ``import
focal`` stays light and a NumPy-only reader can read the names.
"""

from __future__ import annotations

import importlib
from typing import NamedTuple

__all__ = ["REGISTRY", "LOADABLE", "Entry", "loadable_classes"]


class Entry(NamedTuple):
    """One loadable class (see the module docstring)."""

    module: str
    name: str
    node: str
    params: tuple
    fields: str | None
    runtime: str
    added: tuple = ()


_LOGISTIC_PARAMS = ("p_target", "reg", "tol", "max_iter", "scoring_rule", "bounds", "pos_label")
_MULTICLASS_PARAMS = ("prior", "mode", "reg", "tol", "max_iter", "class_names")
_QUALITY_PARAMS = (
    "form",
    "measures",
    "quality_transform",
    "features",
    "p_target",
    "reg",
    "tol",
    "max_iter",
    "bounds",
    "pos_label",
)

#: Every loadable class
REGISTRY = (
    Entry(
        "focal.estimators",
        "LogisticFusion",
        "state",
        _LOGISTIC_PARAMS,
        "LOGISTIC_FIELDS",
        "AffineMap",
        ("bounds",),
    ),
    Entry(
        "focal.estimators",
        "LinearCalibrator",
        "state",
        _LOGISTIC_PARAMS,
        "LINEAR_FIELDS",
        "AffineMap",
        ("bounds",),
    ),
    Entry(
        "focal.estimators",
        "PAVCalibrator",
        "state",
        ("pseudo_count", "interpolation", "bounds", "pos_label"),
        "PAV_FIELDS",
        "BlockMap",
        ("bounds",),
    ),
    Entry("focal.estimators", "ROCCH", "state", ("pos_label",), "BLOCK_FIELDS", "HullMap"),
    Entry(
        "focal.estimators",
        "KDECalibrator",
        "state",
        ("bandwidth", "bounds", "pos_label"),
        "KDE_FIELDS",
        "KDEMap",
    ),
    Entry(
        "focal.estimators",
        "MulticlassFusion",
        "state",
        _MULTICLASS_PARAMS,
        "MULTICLASS_FIELDS",
        "MulticlassMap",
    ),
    Entry(
        "focal.estimators",
        "GaussianBackend",
        "state",
        ("covariance", "prior", "reg", "class_names"),
        "GAUSSIAN_FIELDS",
        "GaussianMap",
    ),
    Entry(
        "focal.estimators",
        "QualityFusion",
        "state",
        _QUALITY_PARAMS,
        "QUALITY_FIELDS",
        "QualityMap",
        ("bounds",),
    ),
    Entry(
        "sklearn.pipeline",
        "Pipeline",
        "steps",
        ("memory", "steps", "transform_input", "verbose"),
        None,
        "Chain",
    ),
)

#: Names of the classes that a model file may name
LOADABLE = tuple(entry.name for entry in REGISTRY)


def loadable_classes() -> dict:
    """``{name: (class, node kind)}`` of the loadable classes (imported here). The NumPy-only
    runtime maps the same entries to its own classes (:func:`focal.runtime.load`).
    """
    return {
        entry.name: (
            getattr(importlib.import_module(entry.module), entry.name),
            entry.node,
        )
        for entry in REGISTRY
    }
