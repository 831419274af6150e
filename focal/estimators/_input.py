"""The input of a fitted estimator at prediction time: its columns checked by name, then its
values as an array.

:func:`validate_input` is what every focal estimator runs on ``X`` after ``fit`` (scikit-learn's
``validate_data(reset=False)`` less its warning on arrays): a data frame's columns are checked
against ``feature_names_in_`` by :func:`focal.models.schema.check_input_names`, the check the
NumPy-only runtime runs too, so a saved model refuses (or takes) the same frames through
``focal.load`` and ``focal.runtime.load``; an array is taken by position, silently, since that
is how a model trained from files is applied in production (its systems' names are known, and
a warning on every call would say nothing the caller can act on).
"""

from __future__ import annotations

from sklearn.utils.validation import check_array

from ..models.schema import check_input_names

__all__ = ["validate_input"]


def validate_input(estimator, X, **check_params):
    """``X`` for a fitted ``estimator``: columns by name (a frame), then
    ``check_array(X, **check_params)`` and the number of columns the estimator was fitted on.

    Parameters
    ----------
    estimator : fitted estimator
        With ``n_features_in_`` (and ``feature_names_in_`` when fitted with names).
    X : array_like or data frame, 2-D
        The input.
    **check_params
        Passed to :func:`sklearn.utils.check_array` (``dtype``, ``ensure_all_finite``, ...).

    Returns
    -------
    ndarray or sparse matrix
        The validated input.
    """
    name = type(estimator).__name__
    check_input_names(X, getattr(estimator, "feature_names_in_", None), name)
    X = check_array(X, input_name="X", estimator=estimator, **check_params)
    n = estimator.n_features_in_
    if X.shape[1] != n:
        raise ValueError(
            f"X has {X.shape[1]} features, but {name} is expecting {n} features as input."
        )
    return X
