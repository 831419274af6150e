"""The classes a model file may name: the one list of them, and nothing else is ever loaded.

Each entry is ``(module, class name, node)``: where the class lives, the name a model file
stores, and how its node is written (``"state"``: an estimator that saves its fitted state by
the hooks of :mod:`focal.estimators._state`; ``"steps"``: a scikit-learn Pipeline of such
nodes). Importing this module imports nothing: the classes are imported on first use, so
``import focal`` stays light and a NumPy-only reader can read the names.
"""

from __future__ import annotations

import importlib

__all__ = ["REGISTRY", "LOADABLE", "loadable_classes"]

#: (module, class name, node kind) of every loadable class
REGISTRY = (
    ("focal.estimators", "LogisticFusion", "state"),
    ("focal.estimators", "LinearCalibrator", "state"),
    ("focal.estimators", "PAVCalibrator", "state"),
    ("focal.estimators", "ROCCH", "state"),
    ("focal.estimators", "MulticlassFusion", "state"),
    ("focal.estimators", "GaussianBackend", "state"),
    ("focal.estimators", "QualityFusion", "state"),
    ("sklearn.pipeline", "Pipeline", "steps"),
)

#: Names of the classes that a model file may name
LOADABLE = tuple(name for _, name, _ in REGISTRY)


def loadable_classes() -> dict:
    """``{name: (class, node kind)}`` of the loadable classes (imported here)."""
    return {
        name: (getattr(importlib.import_module(module), name), node)
        for module, name, node in REGISTRY
    }
