"""The nodes of a model document: an estimator (its parameters and its fitted state) or a
scikit-learn Pipeline of nodes, written and read by :mod:`focal.models.persistence`; constructor
parameters as JSON values (:func:`param_out`, :func:`param_in`).

Which node a class has comes from :mod:`focal.models.registry`; what an estimator saves and how it
is checked and restored comes from the estimator itself, through the saved-state protocol of
:mod:`focal.estimators._state`. Nothing here names an estimator class.
"""

from __future__ import annotations

import numpy as np

from .codec import (
    LABEL_DTYPES,
    Fields,
    StateError,
    invalid,
    kind_of,
    read_fields,
    write_fields,
)
from .registry import LOADABLE, REGISTRY

__all__ = ["node_out", "node_in", "param_out", "param_in"]

_MAX_DEPTH = 8  # pipelines nested in pipelines
_PIPELINE_PARAMS = ("memory", "transform_input", "verbose")
_OUTPUTS = (None, "default", "pandas", "polars")
_MAX_PARAM_DEPTH = 8  # lists nested in parameter values
#: each class's parameters that a file written before they were added lacks
_ADDED = {entry.name: entry.added for entry in REGISTRY}


def _checked(where, hook, *args):
    """Run one of an estimator's own checks (its ``_check_params`` or a state hook of
    :mod:`focal.estimators._state`); its complaint becomes a ValueError naming the place.
    """
    try:
        return hook(*args)
    except StateError as exc:
        raise invalid(where if exc.field is None else f"{where}.{exc.field}", str(exc)) from None
    except (TypeError, ValueError, OverflowError) as exc:
        raise invalid(where, str(exc)) from None


# ---------------------------------------------------------------------------------------------
# nodes: an estimator writes its parameters and its fitted state (by the hooks of the saved-state
# protocol); a pipeline writes its steps. Which node a class has comes from the registry.


def node_out(est, classes, where, depth=0):
    """The JSON node of ``est`` (at place ``where`` of the document); ``classes`` is
    :func:`focal.models.registry.loadable_classes`. Raises ValueError for anything that cannot be
    saved faithfully.
    """
    if depth > _MAX_DEPTH:
        raise ValueError(f"{where}: pipelines nested too deeply to be saved")
    name = type(est).__name__
    cls, node = classes.get(name, (None, None))
    if cls is not type(est):
        savable = ", ".join(n for n, (_, kind) in classes.items() if kind == "state")
        raise ValueError(
            f"{where}: cannot save a {type(est).__module__}.{name}: only focal's "
            f"estimators ({savable}) and scikit-learn Pipelines of them can be "
            f"saved as JSON (use joblib for anything else)"
        )
    return _NODES[node][0](est, classes, where, depth)


def node_in(value, classes, where, version, depth=0):
    """The estimator or Pipeline of the JSON node ``value`` of a document of schema
    ``version``, every part checked; ValueError naming the place otherwise.
    """
    if depth > _MAX_DEPTH:
        raise invalid(where, "pipelines nested too deeply")
    obj = Fields(value, where)
    cls, node = classes[obj.str("class", LOADABLE)]
    return _NODES[node][1](obj, cls, classes, version, depth)


def _estimator_out(est, classes, where, depth):
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    name = type(est).__name__
    try:
        check_is_fitted(est)
    except NotFittedError:
        raise NotFittedError(f"{where}: cannot save an unfitted {name}: fit it first") from None
    params = {k: param_out(v, k) for k, v in est.get_params(deep=False).items()}
    output = getattr(est, "_sklearn_output_config", {}).get("transform")  # set by set_output
    if output not in _OUTPUTS:
        raise ValueError(f"{where}: a {name} with set_output(transform={output!r}) cannot be saved")
    return {
        "class": name,
        "params": params,
        "set_output": output,
        "fitted": write_fields(est._state_fields, est._get_state()),
    }


def _estimator_in(obj, cls, classes, version, depth):
    params_obj = obj.object("params")
    added = _ADDED[cls.__name__]
    params = {
        p: default if p in added and p not in params_obj.value else param_in(*params_obj.take(p))
        for p, default in cls().get_params(deep=False).items()
    }
    params_obj.done()
    est = cls(**params)
    _checked(params_obj.where, est._check_params)
    output, where = obj.take("set_output")
    if type(output) not in (str, type(None)) or output not in _OUTPUTS:
        raise invalid(where, "must be null or one of 'default', 'pandas', 'polars'")
    if output is not None:
        try:
            est.set_output(transform=output)
        except (ImportError, ValueError) as exc:
            raise invalid(where, str(exc)) from None
    fitted = obj.object("fitted")
    state = read_fields(est._state_fields, fitted, est.get_params(deep=False))
    obj.done()
    attributes = _checked(fitted.where, est._validate_state, state, version)
    _checked(fitted.where, est._set_state, attributes)
    return est


def _pipeline_out(pipe, classes, where, depth):
    params = pipe.get_params(deep=False)
    for key, value in params.items():
        if key == "verbose" or key == "steps" or value is None:
            continue
        raise ValueError(
            f"{where}: a Pipeline with {key}={value!r} cannot be saved (only "
            f"memory=None and transform_input=None)"
        )
    steps = []
    for i, (name, step) in enumerate(pipe.steps):
        at = f"{where}.steps[{i}].estimator"
        if step is None or (isinstance(step, str) and step == "passthrough"):
            steps.append({"name": name, "estimator": step})
        else:
            steps.append({"name": name, "estimator": node_out(step, classes, at, depth + 1)})
    if not any(isinstance(s["estimator"], dict) for s in steps):
        raise ValueError(f"{where}: a Pipeline without estimators cannot be saved")
    return {
        "class": type(pipe).__name__,
        "params": {"memory": None, "transform_input": None, "verbose": bool(pipe.verbose)},
        "steps": steps,
    }


def _pipeline_in(obj, cls, classes, version, depth):
    params = obj.object("params")
    memory, at = params.take("memory")
    transform_input, at2 = params.take("transform_input")
    verbose = params.bool("verbose")
    params.done()
    for v, where in ((memory, at), (transform_input, at2)):
        if v is not None:
            raise invalid(where, "must be null")
    value, where = obj.take("steps")
    obj.done()
    if type(value) is not list or not value:
        raise invalid(where, "must be a non-empty list of steps")
    steps = []
    for i, item in enumerate(value):
        step = Fields(item, f"{where}[{i}]")
        name = step.str("name")
        if not name or "__" in name or name in _PIPELINE_PARAMS + ("steps",):
            raise invalid(step.where, f"invalid step name {name[:80]!r}")
        est, at = step.take("estimator")
        step.done()
        if est is not None and est != "passthrough":
            est = node_in(est, classes, at, version, depth + 1)
        steps.append((name, est))
    if len({n for n, _ in steps}) != len(steps):
        raise invalid(where, "step names must be distinct")
    if all(e is None or isinstance(e, str) for _, e in steps):
        raise invalid(where, "a pipeline needs at least one estimator")
    return cls(steps, verbose=verbose)


#: how each kind of node of :mod:`focal.models.registry` is written and read
_NODES = {"state": (_estimator_out, _estimator_in), "steps": (_pipeline_out, _pipeline_in)}


# ---------------------------------------------------------------------------------------------
# constructor parameters


def param_out(value, name, depth=0):
    """A constructor parameter as a JSON value: JSON scalars as they are, a tuple as
    ``{"tuple": [...]}``, a numeric NumPy array as ``{"ndarray": {"dtype": ..., "values":
    [...]}}``; anything else (and non-finite numbers) is refused.
    """
    if depth > _MAX_PARAM_DEPTH:
        raise ValueError(f"parameter {name!r} is nested too deeply to be saved")
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        if not np.isfinite(value):
            raise ValueError(f"parameter {name!r} = {value!r} cannot be saved (not finite)")
        return value
    if type(value) in (list, tuple):
        items = [param_out(v, name, depth + 1) for v in value]
        return items if type(value) is list else {"tuple": items}
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        if not np.isfinite(value).all():
            raise ValueError(f"parameter {name!r} contains non-finite values: cannot be saved")
        return {"ndarray": {"dtype": value.dtype.name, "values": value.tolist()}}
    raise ValueError(
        f"parameter {name!r} of type {type(value).__name__} cannot be saved "
        f"(numbers, strings, booleans, None, lists, tuples and numeric arrays can)"
    )


def param_in(value, where, depth=0):
    """Inverse of :func:`param_out`."""
    if depth > _MAX_PARAM_DEPTH:
        raise invalid(where, "nested too deeply")
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) is list:
        return [param_in(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    obj = Fields(value, where)
    if set(value) not in ({"tuple"}, {"ndarray"}):
        raise invalid(where, 'must be a JSON value, {"tuple": [...]} or {"ndarray": {...}}')
    if "tuple" in value:
        items, at = obj.take("tuple")
        obj.done()
        if type(items) is not list:
            raise invalid(at, f"must be a list, got {kind_of(items)}")
        return tuple(param_in(v, f"{at}[{i}]", depth + 1) for i, v in enumerate(items))
    arr = obj.object("ndarray")
    obj.done()
    dtype = arr.str("dtype", [d for d in LABEL_DTYPES if d not in ("str", "object")])
    values, at = arr.take("values")
    arr.done()
    try:
        out = np.array(values, dtype=dtype)
    except (TypeError, ValueError, OverflowError):
        raise invalid(at, f"must be (nested lists of) values of dtype {dtype}") from None
    if out.tolist() != values or not np.isfinite(out).all():
        raise invalid(at, f"must be (nested lists of) finite values of dtype {dtype}")
    return out
