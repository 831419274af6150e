"""The saved-state protocol: how a focal estimator tells :mod:`focal.models.persistence` what to
write
of its fitted state and how to check and restore it on load.

An estimator that can be saved (a class of :mod:`focal.models.registry`) provides, besides its
scikit-learn interface:

``_state_fields``
    Class attribute: the saved fields, a tuple of :class:`focal.models.codec.Field` (plain
    data, from :mod:`focal.models.fitted_state`), in the order they are written. Types, shapes and
    bounds of the fields are checked by the generic reader before any hook runs.
``_check_params(self)``
    The validation of the constructor parameters that ``fit`` runs (raises ``ValueError``).
``_get_state(self) -> dict``
    The fitted values of a fitted estimator, keyed by field name (arrays, numbers, labels).
``_validate_state(self, state, version) -> dict``
    Called on an unfitted estimator whose parameters are set and passed ``_check_params``,
    with the values read from a file of schema ``version``: checks them against the
    estimator's invariants and parameters and returns the attributes to set (a version-1
    file may also complete a parameter it did not record, e.g. ``pos_label``). Raises
    :class:`focal.models.codec.StateError` (naming the field) or ``ValueError``; sets
    nothing of the fitted state.
``_set_state(self, state)``
    Sets the attributes returned by ``_validate_state`` and rebuilds what is derived from them
    (a hull and its measures, means and covariances, ``prior_``). Raises ``ValueError`` if
    they cannot be used (e.g. overflow).

:class:`SavedStateMixin` gives the defaults: every field is an attribute of the same name
(``feature_names_in_`` only when known), nothing else to check or rebuild.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["SavedStateMixin"]


class SavedStateMixin:
    """Defaults of the saved-state protocol (see the module docstring)."""

    _state_fields: tuple = ()

    def _get_state(self) -> dict:
        """The fitted values of the saved fields, by name."""
        return {f.name: getattr(self, f.name, None) for f in self._state_fields}

    def _validate_state(self, state: dict, version: int) -> dict:
        """Check the values read from a file; return the attributes to set."""
        return state

    def _set_state(self, state: dict) -> None:
        """Set the fitted attributes (and rebuild derived ones)."""
        for name, value in state.items():
            if value is not None or name != "feature_names_in_":
                setattr(self, name, value)


class MulticlassStateMixin(SavedStateMixin):
    """Estimators of class log-likelihoods: ``classes_`` follows the multiclass label rule
    (:func:`focal.models.fitted_state.check_multiclass_classes`); ``prior_`` and ``n_classes_`` are
    rebuilt from the parameters by the estimator's own code.
    """

    class_names: Any
    prior: Any
    _set_classes: Callable[..., None]

    def _validate_state(self, state: dict, version: int) -> dict:
        from ..models.fitted_state import check_multiclass_classes

        check_multiclass_classes(state["classes_"], self.class_names, self.prior, version)
        return state

    def _set_state(self, state: dict) -> None:
        from ..core.validation import check_prior

        state = dict(state)
        classes = state.pop("classes_")
        super()._set_state(state)
        self._set_classes(classes, check_prior(self.prior, classes.shape[0]))
