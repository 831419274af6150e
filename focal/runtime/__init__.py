"""Apply saved models with NumPy alone: the way to embed focal in a production scoring back-end.

:func:`load` reads a model file written by :func:`focal.save` (or ``focal train``) and returns
a small object whose ``transform`` applies the fitted map: the affine fusion of
``LogisticFusion`` / ``LinearCalibrator``, the PAV map of ``PAVCalibrator`` / ``ROCCH``,
``MulticlassFusion``, ``GaussianBackend``, ``QualityFusion``, and Pipelines of them. It imports
NumPy and the standard library only (never scikit-learn or SciPy), so a process that applies
models starts in the time of a NumPy import. The arithmetic is the same function
(:mod:`focal.core.maps`) that the estimators' ``transform`` calls: outputs are bit-identical to
``focal.load(path).transform(X)``.

The file is checked as :func:`focal.load` checks it, before anything is returned: size cap,
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

import os

from .._model_integrity import DEFAULT_MAX_BYTES
from ._decode import PARAMS, decode
from ._document import Fields, invalid, read_document
from ._models import Chain, RuntimeModel

__all__ = ["load", "RuntimeModel", "LOADABLE"]

#: The estimators whose model files the runtime applies (and Pipelines of them).
LOADABLE = (*PARAMS, "Pipeline")
_MAX_DEPTH = 8
_PIPELINE_PARAMS = ("memory", "transform_input", "verbose")


def load(file, *, key=None, max_bytes: int = DEFAULT_MAX_BYTES) -> RuntimeModel:
    """Load a model file for applying it, with NumPy alone.

    Parameters
    ----------
    file : str, path-like, or a file object opened for reading (text or binary)
        A model file written by :func:`focal.save`, of schema version 1 or 2.
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
    from .._model_integrity import check_usable

    name = str(getattr(file, "name", "<stream>")) if hasattr(file, "read") else os.fspath(file)
    try:
        name, version, node, schema = read_document(file, key, max_bytes)
        model = _node(node, "model", version, 0)
        _attach_schema(model, schema)
        check_usable(model)
        return model
    except ValueError as exc:
        message = str(exc)
        raise ValueError(
            message if message.startswith(f"{name}: ") else f"{name}: {message}"
        ) from None
    except RecursionError:
        raise ValueError(f"{name}: JSON nested too deeply: not a focal model") from None


def _node(value, where, version, depth):
    if depth > _MAX_DEPTH:
        raise invalid(where, "pipelines nested too deeply")
    obj = Fields(value, where)
    name = obj.str("class", LOADABLE)
    if name != "Pipeline":
        return decode(name, obj, version)
    params = obj.object("params")
    for key in ("memory", "transform_input"):
        v, at = params.take(key)
        if v is not None:
            raise invalid(at, "must be null")
    params.bool("verbose")
    params.done()
    steps_value, at = obj.take("steps")
    obj.done()
    if type(steps_value) is not list or not steps_value:
        raise invalid(at, "must be a non-empty list of steps")
    steps = []
    for i, item in enumerate(steps_value):
        step = Fields(item, f"{at}[{i}]")
        step_name = step.str("name")
        if not step_name or "__" in step_name or step_name in _PIPELINE_PARAMS + ("steps",):
            raise invalid(step.where, f"invalid step name {step_name[:80]!r}")
        est, est_at = step.take("estimator")
        step.done()
        if est is not None and est != "passthrough":
            est = _node(est, est_at, version, depth + 1)
        steps.append((step_name, est))
    if len({n for n, _ in steps}) != len(steps):
        raise invalid(at, "step names must be distinct")
    if not any(isinstance(e, RuntimeModel) for _, e in steps):
        raise invalid(at, "a pipeline needs at least one estimator")
    return Chain(steps)


def _attach_schema(model, value):
    """The ``input`` field checked against the model (as :func:`focal.load` does); a version-1
    file has none: derived from the model, with a note of what is unknown.
    """
    from ..schema import FORMATS, InputSchema, input_schema

    derived = input_schema(model)
    if value is None:
        missing = [
            what
            for what, v in (
                ("system names", derived.systems),
                ("class names", derived.classes if derived.kind == "multiclass" else ()),
            )
            if v is None
        ]
        note = (
            "a model file of version 1 does not record the score-file format"
            + (f" or the {' and '.join(missing)}" if missing else "")
            + ": focal apply checks the number of systems and classes only"
        )
        model.input_schema_ = InputSchema(
            derived.kind, derived.n_systems, derived.systems, derived.classes, notes=(note,)
        )
        return
    obj = Fields(value, "input")
    kind = obj.str("kind", ("binary", "multiclass"))
    n_systems = obj.int("n_systems", 1)
    lists = {}
    for field in ("systems", "classes"):
        items, where = obj.take(field)
        if items is not None and (
            type(items) is not list or not items or any(type(v) is not str for v in items)
        ):
            raise invalid(where, "must be null or a list of strings")
        lists[field] = None if items is None else tuple(items)
    fmt, where = obj.take("format")
    if fmt is not None and fmt not in FORMATS:
        raise invalid(where, f"must be null or one of {', '.join(map(repr, FORMATS))}")
    text = {}
    for field in ("task", "condition"):
        v, where = obj.take(field)
        if v is not None and type(v) is not str:
            raise invalid(where, "must be null or a string")
        text[field] = v
    obj.done()
    schema = InputSchema(
        kind, n_systems, lists["systems"], lists["classes"], fmt, text["task"], text["condition"]
    )
    for field in ("kind", "n_systems", "systems", "classes"):
        mine, theirs = getattr(derived, field), getattr(schema, field)
        if theirs != mine and not (mine is None and field in ("systems", "classes")):
            raise invalid(f"input.{field}", f"{theirs!r} does not match the model's {mine!r}")
    if schema.systems is not None and len(schema.systems) != schema.n_systems:
        raise invalid("input.systems", f"must name {schema.n_systems} system(s)")
    model.input_schema_ = schema
