"""Reading a focal model file for the runtime: bytes -> checked JSON document -> typed fields.

The same front as :func:`focal.load` (:mod:`focal._model_integrity`: size cap, NUL bytes,
SHA-256 of the raw bytes, HMAC-SHA256 signature, nesting depth), then the document's own
fields: ``format``, ``version`` (1 or 2), the ``sha256`` of the canonical form, and a typed,
exhaustive reader of every object (a missing, unexpected or ill-typed field is an error naming
its place, e.g. ``model.steps[1].estimator.fitted.llr_``). NumPy and the standard library only.
"""

from __future__ import annotations

import hashlib
import hmac
import json

import numpy as np

__all__ = ["read_document", "Fields", "invalid", "FORMAT", "READABLE_VERSIONS", "MAX_COUNT"]

FORMAT = "focal-model"
READABLE_VERSIONS = (1, 2)
MAX_COUNT = 2**53
_INT64_MAX = 2**63 - 1
_INF_TEXT = {"inf": np.inf, "-inf": -np.inf}
_LABEL_DTYPES = (
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
_MAX_PARAM_DEPTH = 8


def invalid(where: str, problem: str) -> ValueError:
    """The error of a bad field: ``where: problem``."""
    return ValueError(f"{where}: {problem}")


def _kind(value) -> str:
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


def _unique_keys(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        repeated = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"duplicate key {repeated[:80]!r}")
    return dict(pairs)


def _reject_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text):
    value = float(text)
    if not np.isfinite(value):
        raise ValueError(f"the number {text[:40]} overflows")
    return value


def _parse(data: bytes):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(
            text,
            object_pairs_hook=_unique_keys,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
        )
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"not a valid JSON document ({exc.msg} at line {exc.lineno} column "
            f"{exc.colno}); a truncated or damaged file?"
        ) from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _digest(payload) -> str:
    canonical = json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    ).encode("ascii")
    return hashlib.sha256(canonical).hexdigest()


def read_document(file, key, max_bytes):
    """``(name, version, model node, input schema or None)`` of a model file, checked.

    Raises ValueError without the file name (the caller adds it), except for reading errors
    that already carry it.
    """
    from .._model_integrity import check_depth, read_model_bytes, unseal

    name, data = read_model_bytes(file, max_bytes)
    document, sealed = unseal(data, key)
    doc = _parse(document)
    check_depth(doc)
    if not sealed and isinstance(doc, dict):
        doc.pop("integrity", None)  # re-formatted: the document's own checksum decides
    top = Fields(doc, "the file")
    fmt, where = top.take("format")
    if fmt != FORMAT:
        raise invalid(
            where, f"not a focal model file (format {str(fmt)[:80]!r}, expected {FORMAT!r})"
        )
    version, where = top.take("version")
    if type(version) is not int or version not in READABLE_VERSIONS:
        raise invalid(
            where,
            f"schema version {json.dumps(version)[:40]} is not supported: "
            f"this runtime reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}",
        )
    top.str("focal_version")
    checksum = top.str("sha256")
    if len(checksum) != 64 or not set(checksum) <= set("0123456789abcdef"):
        raise invalid("sha256", "must be 64 lowercase hexadecimal digits")
    model, _ = top.take("model")
    schema = top.take("input")[0] if version > 1 else None
    top.done()
    payload = {k: v for k, v in doc.items() if k != "sha256"}
    if not hmac.compare_digest(checksum, _digest(payload)):
        raise invalid(
            "sha256",
            "the checksum does not match the content: the file was "
            "modified or damaged after it was saved",
        )
    return name, version, model, schema


def _check_int(value, where, minimum=0, maximum=_INT64_MAX) -> int:
    if type(value) is not int:
        raise invalid(where, f"must be an integer, got {_kind(value)}")
    if not minimum <= value <= maximum:
        raise invalid(where, f"must be an integer in [{minimum}, {maximum}], got {value}")
    return value


def _nested(value, where, shape):
    """Leaves of nested lists of ``shape`` (None entries: any length >= 1), row-major, and the
    actual shape (at most three levels: the recursion is bounded by ``shape``).
    """
    shape = list(shape)
    flat = []

    def walk(v, depth, loc):
        want = shape[depth]
        if type(v) is not list or (want is not None and len(v) != want) or not v:
            size = "a non-empty list" if want is None else f"a list of {want} items"
            raise invalid(
                loc,
                f"must be {size}, got {_kind(v)}"
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


class Fields:
    """The fields of one JSON object, each read once; a missing or unread field is an error."""

    def __init__(self, value, where: str):
        if type(value) is not dict:
            raise invalid(where, f"must be an object, got {_kind(value)}")
        self.value = value
        self.where = where
        self.unread = set(value)

    def take(self, name: str):
        if name not in self.value:
            raise invalid(self.where, f"missing field {name!r}")
        self.unread.discard(name)
        return self.value[name], f"{self.where}.{name}"

    def done(self):
        if self.unread:
            extra = ", ".join(repr(k) for k in sorted(self.unread))
            raise invalid(self.where, f"unexpected field(s) {extra}")

    def int(self, name, minimum=0, maximum=_INT64_MAX) -> int:
        value, where = self.take(name)
        return _check_int(value, where, minimum, maximum)

    def float(self, name, minimum=None) -> float:
        value, where = self.take(name)
        if type(value) is not float:
            raise invalid(where, f"must be a finite number written as a float, got {_kind(value)}")
        if minimum is not None and not value >= minimum:
            raise invalid(where, f"must be >= {minimum}, got {value!r}")
        return value

    def bool(self, name) -> bool:
        value, where = self.take(name)
        if type(value) is not bool:
            raise invalid(where, f"must be true or false, got {_kind(value)}")
        return value

    def str(self, name, choices=None) -> str:
        value, where = self.take(name)
        if type(value) is not str:
            raise invalid(where, f"must be a string, got {_kind(value)}")
        if choices is not None and value not in choices:
            raise invalid(
                where, f"must be one of {', '.join(map(repr, choices))}, got {value[:80]!r}"
            )
        return value

    def object(self, name) -> Fields:
        return Fields(*self.take(name))

    def floats(self, name, shape, allow_inf=False) -> np.ndarray:
        """A float64 array of ``shape`` (None: any length >= 1); finite unless ``allow_inf``
        (then "inf" / "-inf" too); NaN never.
        """
        value, where = self.take(name)
        flat, shape = _nested(value, where, shape)
        for i, x in enumerate(flat):
            if type(x) is not float and not (allow_inf and type(x) is str and x in _INF_TEXT):
                allowed = 'a finite number, "inf" or "-inf"' if allow_inf else "a finite number"
                raise invalid(f"{where} (item {i})", f"must be {allowed}, got {_kind(x)}")
        out = np.array(
            [_INF_TEXT[x] if type(x) is str else x for x in flat], dtype=np.float64
        ).reshape(shape)
        if np.isnan(out).any() or not (allow_inf or np.isfinite(out).all()):
            raise invalid(where, "must not contain NaN" + ("" if allow_inf else " or inf"))
        return out

    def counts(self, name, shape) -> np.ndarray:
        """Trial counts (int64) of ``shape``; each and their sum at most 2**53."""
        value, where = self.take(name)
        flat, shape = _nested(value, where, shape)
        for i, x in enumerate(flat):
            _check_int(x, f"{where} (item {i})", 0, MAX_COUNT)
        if sum(flat) > MAX_COUNT:
            raise invalid(where, f"the counts add up to more than {MAX_COUNT}")
        return np.array(flat, dtype=np.int64).reshape(shape)

    def labels(self, name, n=None, ordered=True) -> np.ndarray:
        """Class labels ``{"dtype": ..., "values": [...]}``: distinct, sorted if ``ordered``,
        ``n`` of them (None: at least 2).
        """
        obj = self.object(name)
        dtype = obj.str("dtype", _LABEL_DTYPES)
        values, where = obj.take("values")
        obj.done()
        if type(values) is not list or (n is not None and len(values) != n) or len(values) < 2:
            want = f"{n} labels" if n is not None else "at least 2 labels"
            raise invalid(where, f"must be a list of {want}")
        labels = _label_array(values, dtype, where)
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


def _label_array(values, dtype, where) -> np.ndarray:
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


def param(value, where, depth=0):
    """A constructor parameter: a JSON value, ``{"tuple": [...]}`` or ``{"ndarray": {...}}``."""
    if depth > _MAX_PARAM_DEPTH:
        raise invalid(where, "nested too deeply")
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) is list:
        return [param(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    obj = Fields(value, where)
    if set(value) not in ({"tuple"}, {"ndarray"}):
        raise invalid(where, 'must be a JSON value, {"tuple": [...]} or {"ndarray": {...}}')
    if "tuple" in value:
        items, at = obj.take("tuple")
        obj.done()
        if type(items) is not list:
            raise invalid(at, f"must be a list, got {_kind(items)}")
        return tuple(param(v, f"{at}[{i}]", depth + 1) for i, v in enumerate(items))
    arr = obj.object("ndarray")
    obj.done()
    dtype = arr.str("dtype", [d for d in _LABEL_DTYPES if d not in ("str", "object")])
    values, at = arr.take("values")
    arr.done()
    try:
        out = np.array(values, dtype=dtype)
    except (TypeError, ValueError, OverflowError):
        raise invalid(at, f"must be (nested lists of) values of dtype {dtype}") from None
    if out.tolist() != values or not np.isfinite(out).all():
        raise invalid(at, f"must be (nested lists of) finite values of dtype {dtype}")
    return out
