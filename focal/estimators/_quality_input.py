"""The quality measures of :class:`focal.estimators.QualityFusion`'s trials, read by name.

Quality comes as ``quality=`` (an array of the M model-side then the M test-side measures, or a
DataFrame with columns ``model_<m>`` and ``test_<m>``) or as such columns of a DataFrame of
scores; :func:`split_quality` separates scores and quality and checks them before any work.
"""

from __future__ import annotations

import numpy as np

from ..core.maps import quality_sides

__all__ = [
    "SIDES",
    "Trials",
    "is_frame",
    "measures_from_columns",
    "quality_columns",
    "split_quality",
]

SIDES = ("model_", "test_")


class Trials:
    """Scores and quality travelling together through LogisticFusion's output methods."""

    def __init__(self, X, quality):
        self.X = X
        self.quality = quality


def is_frame(X):
    """Whether X is a DataFrame (pandas-like: columns and iloc)."""
    return hasattr(X, "columns") and hasattr(X, "iloc")


def measures_from_columns(columns):
    """Measure names m of the ``model_m`` columns that have a ``test_m`` partner."""
    names = [str(c) for c in columns]
    found = [c[len("model_") :] for c in names if c.startswith("model_") and len(c) > 6]
    missing = [m for m in found if f"test_{m}" not in names]
    if missing:
        raise ValueError(
            f"quality column 'model_{missing[0]}' has no 'test_{missing[0]}' "
            "partner: name both sides of every measure"
        )
    return found


def split_quality(name, X, quality, measures, transforms):
    """``(scores, q_model, q_test, measure names)`` of the trials ``X`` and ``quality``.

    ``name`` is the estimator's class (for messages), ``measures`` the measures' names (None:
    from the columns, or ``q0, q1, ...`` for an array) and ``transforms(M)`` the transform of
    each of M measures (:func:`focal.models.fitted_state.quality_transforms`).
    """
    if isinstance(X, Trials):
        X, quality = X.X, X.quality
    if quality is None:
        if not is_frame(X):
            raise ValueError(
                f"{name} needs quality measures: pass quality= (an array of "
                "model-side then test-side measures, or a DataFrame with columns "
                "model_<name> and test_<name>) or give them as such columns of a "
                "DataFrame X"
            )
        if measures is None:
            measures = measures_from_columns(X.columns)
            if not measures:
                raise ValueError(
                    f"{name} needs quality measures: X has no "
                    "quality columns (model_<name> and test_<name>); pass "
                    "quality= or add them"
                )
        cols = quality_columns(X, measures, "X")
        Q = X[cols].to_numpy(dtype=np.float64)
        X = X.drop(columns=cols)
    elif is_frame(quality):
        if measures is None:
            measures = measures_from_columns(quality.columns)
            if not measures:
                raise ValueError("quality has no columns model_<name> and test_<name>")
        Q = quality[quality_columns(quality, measures, "quality")].to_numpy(dtype=np.float64)
    else:
        Q = np.asarray(quality)
        if Q.dtype.kind not in "biuf":
            raise ValueError(f"quality must hold numbers, got dtype {Q.dtype}")
        Q = Q.astype(np.float64, copy=False)
        if Q.ndim != 2 or Q.shape[1] % 2 or not Q.shape[1]:
            raise ValueError(
                f"quality must have shape (n_trials, 2 M): M model-side then M "
                f"test-side measures; got shape {Q.shape}"
            )
        if measures is None:
            measures = [f"q{i}" for i in range(Q.shape[1] // 2)]
        if Q.shape[1] != 2 * len(measures):
            raise ValueError(
                f"quality has {Q.shape[1]} columns for {len(measures)} measures "
                f"{measures!r}: it needs the model-side then the test-side "
                "value of each"
            )
    qm, qt = quality_sides(Q, transforms(len(measures)), measures)
    return X, qm, qt, measures


def quality_columns(frame, measures, what):
    """The columns ``model_<m>`` then ``test_<m>`` of ``frame`` for the ``measures``."""
    cols = [f"{side}{m}" for side in SIDES for m in measures]
    names = {str(c): c for c in frame.columns}
    missing = [c for c in cols if c not in names]
    if missing:
        raise ValueError(
            f"QualityFusion needs quality measures: {what} has no quality column(s) {missing!r}"
        )
    return [names[c] for c in cols]
