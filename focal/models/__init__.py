"""Model files: fitted estimators saved as versioned JSON of numbers, and read back safely.

- :mod:`~focal.models.persistence`: :func:`save` and :func:`load` (also ``focal.save`` and
  ``focal.load``);
- :mod:`~focal.models.schema`: what a fitted model expects as input (systems, classes, kind,
  score-file format), carried from the training files into the model file and checked when it
  is applied;
- :mod:`~focal.models.integrity`: the front of loading (bounded reading, checksums, keyed
  signatures, strict JSON);
- :mod:`~focal.models.codec`, :mod:`~focal.models.fitted_state`: the typed fields each
  estimator saves and their invariants (NumPy only: the estimators' state hooks and the
  NumPy-only :mod:`focal.runtime` read them the same way);
- :mod:`~focal.models.registry`, :mod:`~focal.models.nodes`: the classes a file may name, and
  how an estimator or a Pipeline becomes a node of the document.

The package imports NumPy and the NumPy-only parts of :mod:`focal.core`; it knows the
estimators by the names in its registry and the state hooks they implement, so the estimators
(above it) import their field definitions from here.
"""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        ".persistence": ("save", "load"),
        ".schema": ("InputSchema", "input_schema", "set_input_schema"),
    },
)
