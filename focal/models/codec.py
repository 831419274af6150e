"""Typed values of model files: the generic, estimator-independent part of
:mod:`focal.models.persistence`.

NumPy only (no scikit-learn, no estimator): a reader of a model file, e.g. a NumPy-only runtime,
can use it as it is. It knows how to write and read JSON values of a few kinds, each checked for
type, shape and range, and nothing about any estimator class:

- :class:`Fields`, one JSON object whose fields are read once each (a missing or unread field
  is an error);
- :class:`Field`, the description of one saved field (name, kind, shape, bounds) as plain data,
  and :func:`write_fields` / :func:`read_fields`, which write and read a tuple of them.

The document as text (strict parsing, checksums, layout) is :mod:`focal.models.integrity`;
constructor parameters as JSON values are :mod:`focal.models.nodes`.

Every reader raises ``ValueError("<place in the file>: <problem>")``; the place is a path such as
``model.steps[1].estimator.fitted.llr_``. An estimator's own checks of its fitted state raise
:class:`StateError`, which names the field; the loader adds the place.

Kinds of :class:`Field` (what is written; what is read back):

========  ==============================================  =====================================
kind      JSON                                            value read
========  ==============================================  =====================================
int       an integer in ``[minimum, maximum]``            int
float     a finite number written as a float, ``>=``      float
          ``minimum`` if given
bool      true / false                                    bool
str       a string, one of ``choices`` if given           str
floats    nested lists of ``shape``; +/-inf as "inf" /    float64 ndarray (NaN refused; inf only
          "-inf" when ``allow_inf``                       with ``allow_inf``)
counts    nested lists of ``shape`` of integers in        int64 ndarray
          ``[0, 2**53]`` whose sum is at most 2**53
labels    ``{"dtype": ..., "values": [...]}``: at least   ndarray of that dtype
          2 distinct class labels
names     null, or a list of strings                      None or an object ndarray
strings   a list of strings                               list of str
object    an object holding ``fields``                    dict
========  ==============================================  =====================================

A shape is a tuple whose entries are integers or dimension names. A name already bound (by an
earlier field of that name, e.g. ``"n_features_in_"``, or by an earlier shape) must match; an
unbound name binds to the length found (at least 1). ``shape`` may also be a mapping from the
value of an earlier field or of a constructor parameter (named by ``shape_by``) to a shape,
``"*"`` standing for any other value, or a list of shapes of increasing rank: the one of the
value's rank (the depth of its nested lists).

A field added to a class after files of the current schema version were written has a
``default``: the value of a file that lacks it (written before), so that such files still
load and give the same outputs. Every other field must be there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "Field",
    "Fields",
    "StateError",
    "invalid",
    "read_fields",
    "write_fields",
    "MAX_COUNT",
]

INT64_MAX = 2**63 - 1
#: Largest trial count (and sum of counts) a model file may hold: exact in float64
MAX_COUNT = 2**53
_INF_TEXT = {"inf": np.inf, "-inf": -np.inf}
LABEL_DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "str",
    "object",
)


class StateError(ValueError):
    """A fitted state that breaks an estimator's invariants; ``field`` names the field (or
    None: the state as a whole).
    """

    def __init__(self, problem: str, field: str | None = None):
        super().__init__(problem)
        self.field = field


class Field(NamedTuple):
    """One saved field: plain data, read by :func:`read_fields` (see the module docstring)."""

    name: str
    kind: str
    shape: Any = ()
    minimum: Any = None
    maximum: Any = None
    allow_inf: bool = False
    choices: tuple | None = None
    fields: tuple = ()
    shape_by: str | None = None
    default: Any = None


# ---------------------------------------------------------------------------------------------
# reading typed values


def kind_of(value) -> str:
    """JSON type name of a decoded value, for messages."""
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def invalid(where: str, problem: str) -> ValueError:
    """The ValueError of a bad part of a model file: ``"where: problem"``."""
    return ValueError(f"{where}: {problem}")


def check_int(value, where, minimum=0, maximum=INT64_MAX) -> int:
    """``value`` if it is a JSON integer in ``[minimum, maximum]``."""
    if type(value) is not int:
        raise invalid(where, f"must be an integer, got {kind_of(value)}")
    if not minimum <= value <= maximum:
        raise invalid(where, f"must be an integer in [{minimum}, {maximum}], got {value}")
    return value


def check_float(value, where) -> float:
    """``value`` if it is a finite JSON number written as a float."""
    if type(value) is not float:  # the writer writes every float with a point or an exponent
        raise invalid(where, f"must be a finite number written as a float, got {kind_of(value)}")
    if not np.isfinite(value):
        raise invalid(where, f"must be finite, got {value!r}")
    return value


class Fields:
    """The fields of one JSON object, each read once; a missing or unread field is an error."""

    def __init__(self, value, where: str):
        if type(value) is not dict:
            raise invalid(where, f"must be an object, got {kind_of(value)}")
        self.value = value
        self.where = where
        self.unread = set(value)

    def take(self, name: str):
        """``(value, where)`` of a field that must be there, marked read."""
        if name not in self.value:
            raise invalid(self.where, f"missing field {name!r}")
        self.unread.discard(name)
        return self.value[name], f"{self.where}.{name}"

    def done(self):
        """Refuse the fields that were never read."""
        if self.unread:
            extra = ", ".join(repr(k) for k in sorted(self.unread))
            raise invalid(self.where, f"unexpected field(s) {extra}")

    # -- scalars --------------------------------------------------------------------------------
    def int(self, name, minimum=0, maximum=INT64_MAX) -> int:
        """An integer field (:func:`check_int`)."""
        value, where = self.take(name)
        return check_int(value, where, minimum, maximum)

    def float(self, name, minimum=None) -> float:
        """A finite float field, at least ``minimum`` when given."""
        value, where = self.take(name)
        value = check_float(value, where)
        if minimum is not None and not value >= minimum:
            raise invalid(where, f"must be >= {minimum}, got {value!r}")
        return value

    def bool(self, name) -> bool:
        """A true / false field."""
        value, where = self.take(name)
        if type(value) is not bool:
            raise invalid(where, f"must be true or false, got {kind_of(value)}")
        return value

    def str(self, name, choices=None) -> str:
        """A string field, one of ``choices`` when given."""
        value, where = self.take(name)
        if type(value) is not str:
            raise invalid(where, f"must be a string, got {kind_of(value)}")
        if choices is not None and value not in choices:
            raise invalid(
                where, f"must be one of {', '.join(map(repr, choices))}, got {value[:80]!r}"
            )
        return value

    def object(self, name) -> Fields:
        """An object field, as :class:`Fields` of its own."""
        return Fields(*self.take(name))

    # -- arrays ---------------------------------------------------------------------------------
    def floats(self, name, shape, allow_inf=False) -> np.ndarray:
        """A float64 array of ``shape`` (None: any length >= 1); finite unless ``allow_inf``
        (then +/-inf, written "inf" / "-inf", are accepted too; NaN never).
        """
        value, where = self.take(name)
        flat, shape = nested(value, where, shape)
        for i, x in enumerate(flat):
            if type(x) is not float and not (allow_inf and type(x) is str and x in _INF_TEXT):
                allowed = 'a finite number, "inf" or "-inf"' if allow_inf else "a finite number"
                raise invalid(f"{where} (item {i})", f"must be {allowed}, got {kind_of(x)}")
        out = np.array(
            [_INF_TEXT[x] if type(x) is str else x for x in flat], dtype=np.float64
        ).reshape(shape)
        if np.isnan(out).any() or not (allow_inf or np.isfinite(out).all()):
            raise invalid(where, "must not contain NaN" + ("" if allow_inf else " or inf"))
        return out

    def counts(self, name, shape) -> np.ndarray:
        """An int64 array of trial counts of ``shape`` (None: any length >= 1); the counts and
        their sum are at most 2**53 (exact in float64).
        """
        value, where = self.take(name)
        flat, shape = nested(value, where, shape)
        for i, x in enumerate(flat):
            check_int(x, f"{where} (item {i})", 0, MAX_COUNT)
        if sum(flat) > MAX_COUNT:
            raise invalid(where, f"the counts add up to more than {MAX_COUNT}")
        return np.array(flat, dtype=np.int64).reshape(shape)

    def labels(self, name, n=None, ordered=False) -> np.ndarray:
        """Class labels ``{"dtype": ..., "values": [...]}``: distinct and, if ``ordered``, sorted
        (np.unique's order), ``n`` of them (None: at least 2).
        """
        obj = self.object(name)
        dtype = obj.str("dtype", LABEL_DTYPES)
        values, where = obj.take("values")
        obj.done()
        if type(values) is not list or (n is not None and len(values) != n) or len(values) < 2:
            want = f"{n} labels" if n is not None else "at least 2 labels"
            raise invalid(where, f"must be a list of {want}")
        labels = label_array(values, dtype, where)
        if len(set(values)) != len(values):
            raise invalid(where, "class labels must be distinct")
        if ordered and any(values[i] >= values[i + 1] for i in range(len(values) - 1)):
            raise invalid(where, "class labels must be distinct and sorted")
        return labels

    def names(self, name, n) -> np.ndarray | None:
        """``feature_names_in_``: null, or a list of ``n`` strings (an object array)."""
        value, where = self.take(name)
        if value is None:
            return None
        if type(value) is not list or len(value) != n or any(type(v) is not str for v in value):
            raise invalid(where, f"must be null or a list of {n} strings")
        return np.array(value, dtype=object)

    def strings(self, name, n=None) -> list:
        """A non-empty list of strings (``n`` of them if given)."""
        value, where = self.take(name)
        if (
            type(value) is not list
            or not value
            or (n is not None and len(value) != n)
            or any(type(v) is not str for v in value)
        ):
            size = "a non-empty list of" if n is None else f"a list of {n}"
            raise invalid(where, f"must be {size} strings")
        return value


def nested(value, where, shape):
    """The leaves of nested lists of ``shape`` (``None`` entries: any length >= 1), row-major,
    and the actual shape.
    """
    shape = list(shape)
    flat = []

    def walk(v, depth, loc):
        want = shape[depth]
        if type(v) is not list or (want is not None and len(v) != want) or not v:
            size = "a non-empty list" if want is None else f"a list of {want} items"
            raise invalid(
                loc,
                f"must be {size}, got {kind_of(v)}"
                + (f" of {len(v)} items" if type(v) is list else ""),
            )
        if want is None:
            shape[depth] = len(v)
        if depth == len(shape) - 1:
            flat.extend(v)
        else:
            for i, item in enumerate(v):
                walk(item, depth + 1, f"{loc}[{i}]")

    walk(value, 0, where)
    return flat, tuple(shape)


def label_array(values, dtype, where) -> np.ndarray:
    """``values`` (JSON scalars) as an array of ``dtype``, each checked to be of that kind."""
    if dtype == "bool":
        ok = all(type(v) is bool for v in values)
    elif dtype in ("str", "object"):
        ok = all(type(v) is str for v in values)
    elif dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        ok = all(type(v) is int and info.min <= v <= info.max for v in values)
    else:
        ok = all(type(v) is float for v in values)
        ok = ok and all(float(np.array(v, dtype=dtype)) == v for v in values)
    if not ok:
        raise invalid(where, f"every label must be a value of dtype {dtype}")
    if dtype == "str":
        return np.array(values, dtype=str)
    return np.array(values, dtype=object if dtype == "object" else dtype)


# ---------------------------------------------------------------------------------------------
# writing typed values


def floats_out(a) -> list:
    """A float array as nested lists, +/-inf as "inf" / "-inf" (NaN refused)."""
    a = np.asarray(a, dtype=np.float64)
    if np.isnan(a).any():
        raise ValueError("a fitted array contains NaN: this model cannot be saved")
    out = a.tolist()
    if not np.isfinite(a).all():

        def text(v):
            return (
                [text(x) for x in v]
                if type(v) is list
                else (v if np.isfinite(v) else ("inf" if v > 0 else "-inf"))
            )

        out = text(out)
    return out


def labels_out(classes) -> dict:
    a = np.asarray(classes)
    if a.dtype.kind == "U":
        dtype = "str"
    elif a.dtype.kind == "O" and all(type(v) is str for v in a.tolist()):
        dtype = "object"
    elif a.dtype.name in LABEL_DTYPES:
        dtype = a.dtype.name
    else:
        raise ValueError(
            f"class labels of dtype {a.dtype} cannot be saved (use integers, "
            f"booleans, floats or strings)"
        )
    return {"dtype": dtype, "values": a.tolist()}


_WRITERS: dict[str, Callable[[Any], Any]] = {
    "int": int,
    "float": float,
    "bool": bool,
    "str": str,
    "floats": floats_out,
    "counts": lambda a: np.asarray(a, dtype=np.int64).tolist(),
    "labels": labels_out,
    "names": lambda v: None if v is None else [str(n) for n in v],
    "strings": lambda v: [str(m) for m in v],
}


def write_fields(fields, state: dict) -> dict:
    """The JSON object of ``state`` (values keyed by field name) described by ``fields``."""
    return {
        f.name: (
            write_fields(f.fields, state[f.name])
            if f.kind == "object"
            else _WRITERS[f.kind](state[f.name])
        )
        for f in fields
    }


# ---------------------------------------------------------------------------------------------
# reading described fields


def _declared_shape(field, context, value):
    """The shape of ``field`` as declared (numbers and dimension names)."""
    if field.shape_by is not None:
        key = context[field.shape_by]
        return field.shape[key] if key in field.shape else field.shape["*"]
    if type(field.shape) is list:  # alternatives: the one of the value's rank
        rank = 0
        while type(value) is list and value:
            rank, value = rank + 1, value[0]
        fitting = [shape for shape in field.shape if len(shape) <= max(rank, 1)]
        return fitting[-1] if fitting else field.shape[0]
    return field.shape


_READERS = {
    "int": lambda obj, f, shape: obj.int(
        f.name, 0 if f.minimum is None else f.minimum, INT64_MAX if f.maximum is None else f.maximum
    ),
    "float": lambda obj, f, shape: obj.float(f.name, f.minimum),
    "bool": lambda obj, f, shape: obj.bool(f.name),
    "str": lambda obj, f, shape: obj.str(f.name, f.choices),
    "floats": lambda obj, f, shape: obj.floats(f.name, shape, f.allow_inf),
    "counts": lambda obj, f, shape: obj.counts(f.name, shape),
    "labels": lambda obj, f, shape: obj.labels(f.name, shape[0]),
    "names": lambda obj, f, shape: obj.names(f.name, shape[0]),
    "strings": lambda obj, f, shape: obj.strings(f.name, shape[0]),
}


def read_fields(fields, obj: Fields, context: dict | None = None, dims: dict | None = None):
    """The values of ``fields`` read from ``obj`` in order, each checked for kind, shape and
    bounds; then ``obj`` must have no other field. ``context`` holds the constructor
    parameters a ``shape_by`` may name; ``dims`` the dimensions bound so far (integer fields
    bind their name; shapes bind their unbound names).
    """
    context = dict(context or {})
    dims = {} if dims is None else dims
    out = {}
    for f in fields:
        declared = _declared_shape(f, context, obj.value.get(f.name))
        shape = tuple(dims.get(d) if type(d) is str else d for d in declared)
        if f.default is not None and f.name not in obj.value:  # written before it was added
            value = np.array(f.default, dtype=np.float64) if f.kind == "floats" else f.default
        elif f.kind == "object":
            value = read_fields(f.fields, obj.object(f.name), context, dims)
        else:
            value = _READERS[f.kind](obj, f, shape)
        if f.kind == "int":
            dims[f.name] = value
        found = (
            value.shape
            if isinstance(value, np.ndarray)
            else ((len(value),) if isinstance(value, list) else ())
        )
        for d, n in zip(declared, found, strict=False):
            if type(d) is str:
                dims.setdefault(d, n)
        out[f.name] = context[f.name] = value
    obj.done()
    return out
