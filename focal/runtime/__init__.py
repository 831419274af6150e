"""Apply saved models with NumPy alone: the way to embed focal in a production scoring back-end.

:func:`load` reads a model file written by :func:`focal.save` (or ``focal train``) and returns
a small object whose ``transform`` applies the fitted map: the affine fusion of
``LogisticFusion`` / ``LinearCalibrator``, the PAV map of ``PAVCalibrator`` / ``ROCCH``,
``MulticlassFusion``, ``GaussianBackend``, ``QualityFusion``, and Pipelines of them. It imports
NumPy and the standard library only (never scikit-learn or SciPy), so a process that applies
models starts in the time of a NumPy import. The arithmetic is the same function
(:mod:`focal.core.maps`) that the estimators' ``transform`` calls: outputs are bit-identical to
``focal.load(path).transform(X)``.

The file is checked by :func:`focal.load`'s own reader (:func:`focal.models.persistence.read_model`
with the classes of :mod:`focal.models.registry`), before anything is returned: size cap,
checksum of the raw bytes, keyed signature (``key``), the document's own checksum, every field's
type and shape, the estimators' invariants (finite weights; PAV blocks ordered, their LLRs
non-decreasing and bounded, or exactly the PAV-LLRs of their counts; lower-triangular Cholesky
factors with a positive diagonal; ...), and a model whose outputs on ordinary scores are NaN or
infinite is refused. Only the numbers a model applies are kept: for training, evaluation and
everything else (``predict_proba``, ``score``, refitting), use :func:`focal.load`, which returns
the full scikit-learn estimator.

    import focal.runtime

    model = focal.runtime.load("fuser.json")      # once, at start-up
    llr = model.transform(X)                      # per request: X of shape (n_trials, n_systems)

``transform`` gives what the estimator's ``transform`` gives: LLRs as a column (binary) or class
log-likelihoods ``(n_trials, n_classes)`` (multiclass), always NumPy arrays (a ``set_output``
container is ignored). Binary models also have ``decision_function`` (1-D LLRs); a quality
fusion takes ``quality=`` as :meth:`focal.QualityFusion.transform` does (an array). The model's
input schema (system names, classes in column order) is ``model.input_schema_``, as for
:func:`focal.load`.
"""

from __future__ import annotations

from ..models.integrity import DEFAULT_MAX_BYTES
from ..models.registry import LOADABLE
from ._models import RuntimeModel

__all__ = ["load", "RuntimeModel", "LOADABLE"]


def load(file, *, key=None, max_bytes: int = DEFAULT_MAX_BYTES) -> RuntimeModel:
    """Load a model file for applying it, with NumPy alone.

    Parameters
    ----------
    file : str, path-like, or a file object opened for reading (text or binary)
        A model file written by :func:`focal.save` (schema version 2).
    key : bytes or str, optional
        The key the model was saved with: its HMAC-SHA256 signature must then match.
    max_bytes : int
        Largest file accepted (default 256 MiB), checked before the file is read.

    Returns
    -------
    RuntimeModel
        With ``transform(X)`` (and ``decision_function(X)`` for binary models), the fitted
        attributes of the estimator that apply it (``coef_``, ``llr_``, ``classes_``,
        ``n_features_in_``, ``feature_names_in_`` ...), ``input_schema_``, and ``steps`` for a
        Pipeline.

    Raises
    ------
    ValueError
        Whatever :func:`focal.load` refuses, naming the file, the place in it and the problem.
    """
    from ..models.persistence import read_model
    from ..models.registry import REGISTRY
    from ._decode import runtime_class

    classes = {entry.name: (runtime_class(entry), entry.node) for entry in REGISTRY}
    return read_model(file, key, max_bytes, classes)
