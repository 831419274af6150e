"""Save and load fitted focal estimators: versioned, human-readable JSON holding numbers only.

    focal.save(fuser, "fuser.json")       # a fitted estimator, or a Pipeline of them
    fuser = focal.load("fuser.json")      # the same model: bit-identical outputs

A model file holds the constructor parameters and the fitted numbers of the estimator, nothing
else: no pickled objects, no code, no class paths. Loading instantiates only the classes of a
fixed list (:data:`LOADABLE`), through their constructors, and accepts a file only if every part
of it checks out:

- the file is UTF-8 JSON (duplicate keys, ``NaN`` / ``Infinity`` literals and numbers that
  overflow are refused), with exactly the fields below and nothing more;
- ``format`` is ``"focal-model"`` and ``version`` a schema version this focal reads
  (:data:`READABLE_VERSIONS`; it writes :data:`SCHEMA_VERSION`);
- ``sha256`` is the SHA-256 of the canonical form of the other fields (``json.dumps`` with
  sorted keys, no spaces, ASCII), so an edited, truncated or corrupted file is refused even
  where the edit would still parse and look plausible;
- every value has its type and shape (``coef_`` has ``n_features_in_`` entries, a covariance is
  ``d x d``, ...), the parameters pass the estimator's own checks, and the fitted numbers
  satisfy the estimator's invariants (finite weights; PAV block scores increasing, block LLRs
  non-decreasing and equal to the PAV-LLRs of the block counts when unbounded, finite when
  bounded; ROCCH block target fractions strictly increasing; lower-triangular Cholesky factors
  with a positive diagonal; ...).

Anything else raises a ``ValueError`` naming the file, the place in it (e.g.
``model.steps[1].estimator.fitted.llr_``) and the problem, before any estimator is returned.
:func:`save` runs the same checks on what it is about to write, so it never writes a file that
:func:`load` would refuse; it writes to a temporary file and renames it, so an interrupted save
leaves no truncated model behind.

Numbers are written so that they read back exactly: floats as the shortest decimal that
round-trips (``repr``), integers as integers, +/-inf inside arrays as the strings ``"inf"`` and
``"-inf"`` (NaN never occurs in a fitted focal model and is refused). A loaded model therefore
has the same numbers, bit for bit, as the saved one, and derived state (the ROCCH estimator's
``hull_`` and every measure read off it, a Gaussian back-end's ``means_`` and ``covariance_``,
a multiclass ``prior_``) is rebuilt from them by the estimators' own code. One note: a ROCCH
model keeps the PAV blocks (the hull), not the finer steps of the empirical ROC inside them, so
``hull_.pav.roc_points()`` of a loaded ROCCH gives the hull's vertices.

File layout (schema version 2)::

    {
      "format": "focal-model",
      "version": 2,
      "focal_version": "0.1.0",
      "input": {"kind": "multiclass", "n_systems": 2, "systems": ["sys1", "sys2"],
                "classes": ["Basque", ..., "OOS"], "format": "albayzin", "task": "Plenty",
                "condition": "Open"},
      "model": NODE,
      "sha256": "..."
    }

``input`` is the model's input schema (:class:`focal.schema.InputSchema`): binary or
multiclass, the number and names of the systems, the class names in column order, and the
score-file format (with the Albayzin task and condition) it was trained on; nulls where the
model was trained on arrays. :func:`load` checks it against the model (the system names are
also each estimator's ``feature_names_in_``, the classes its ``classes_``) and attaches it as
``model.input_schema_``, which :func:`focal.io.apply_model` uses. Files of version 1 (no
``input``) still load: the schema is derived from the model where it can be (system names from
``feature_names_in_``, class names from string ``classes_``), with a note in
``input_schema_.notes`` saying what is unknown; the parameters added since (``pos_label``,
``class_names``) take their defaults, except that a binary model trained on labels other than
0/1 gets ``pos_label`` = its target label (version 1 took the larger label as the target).

    NODE of an estimator:  {"class": "LogisticFusion", "params": {...}, "set_output": null,
                            "fitted": {...}}
    NODE of a Pipeline:    {"class": "Pipeline",
                            "params": {"memory": null, "transform_input": null, "verbose": false},
                            "steps": [{"name": "logisticfusion", "estimator": NODE}, ...]}

``params`` holds every constructor parameter (``get_params(deep=False)``): JSON values, with a
tuple written ``{"tuple": [...]}`` and a NumPy array ``{"ndarray": {"dtype": ..., "values":
[...]}}``. ``set_output`` is the container chosen with ``set_output(transform=...)`` (null:
never set). ``fitted`` holds the fitted attributes of each class (see ``_CODECS``); arrays are
nested lists whose shape the schema fixes; class labels are ``{"dtype": ..., "values": [...]}``;
``feature_names_in_`` is a list of strings or null. A pipeline step's ``estimator`` may also be
``"passthrough"`` or null.

:func:`save` appends a last line ``"integrity": {"sha256": ..., "hmac_sha256": ...}``: the
SHA-256 (and, with a ``key``, the HMAC-SHA256) of the file's bytes before that line, which
:func:`load` checks on the raw bytes before parsing (see :mod:`focal._model_integrity`; a
re-formatted file, whose line moved, is checked by the ``sha256`` of the canonical form only).
Loading is bounded: at most ``max_bytes`` bytes, JSON nesting at most 64 deep, and a model
whose outputs on ordinary scores are NaN or infinite is refused. Checksums detect damage, not
deliberate edits (anyone can recompute them); the keyed signature gives authenticity.

JSON or pickle / joblib? Both work for every focal estimator. Use :func:`save` / :func:`load`
for models that are shipped, stored or shared: loading is safe on files from untrusted sources
(no code runs), the file is version-checked and tamper-evident, diffable and readable, and it
does not depend on the versions of scikit-learn or NumPy that wrote it. Use pickle / joblib for
anything else (arbitrary scikit-learn objects, your own subclasses, scratch work within one
environment), and never load a pickle from a source you do not trust: unpickling runs code.

References
----------
.. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
   extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
.. [2] L. J. Rodríguez-Fuentes, N. Brümmer, M. Penagarikano, A. Varona, M. Diez and
   G. Bordel, "The Albayzin 2012 Language Recognition Evaluation Plan", evaluation plan,
   GTTS, UPV/EHU, 2012 ("Albayzin plan").
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
import json
import os

import numpy as np

from ._model_integrity import DEFAULT_MAX_BYTES
from ._version import __version__

__all__ = ["save", "load", "LOADABLE", "SCHEMA_VERSION", "READABLE_VERSIONS", "FORMAT"]

FORMAT = "focal-model"
SCHEMA_VERSION = 2
#: Versions this focal reads: 1 (no input schema; loaded with it derived where possible).
READABLE_VERSIONS = (1, 2)
_NEW_IN_VERSION_2 = ("pos_label", "class_names")   # parameters a version-1 file lacks
#: Version of the document being decoded (per thread / task: loads may run concurrently).
_VERSION = contextvars.ContextVar("focal_model_version", default=SCHEMA_VERSION)

#: Classes that a model file may name (nothing else is ever instantiated).
LOADABLE = ("LogisticFusion", "LinearCalibrator", "PAVCalibrator", "ROCCH", "MulticlassFusion",
            "GaussianBackend", "QualityFusion", "Pipeline")

_MAX_DEPTH = 8           # pipelines nested in pipelines
_MAX_PARAM_DEPTH = 8     # lists nested in parameter values
_INT64_MAX = 2 ** 63 - 1
_MAX_COUNT = 2 ** 53
_INF_TEXT = {"inf": np.inf, "-inf": -np.inf}
_LABEL_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float32", "float64", "str", "object")
_WIDTH = 100             # the writer's line width


# ---------------------------------------------------------------------------------------------
# reading typed values (every reader raises ValueError naming the place in the file)


def _kind(value) -> str:
    """JSON type name of a decoded value, for messages."""
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def _invalid(where: str, problem: str) -> ValueError:
    return ValueError(f"{where}: {problem}")


def _check_int(value, where, minimum=0, maximum=_INT64_MAX) -> int:
    if type(value) is not int:
        raise _invalid(where, f"must be an integer, got {_kind(value)}")
    if not minimum <= value <= maximum:
        raise _invalid(where, f"must be an integer in [{minimum}, {maximum}], got {value}")
    return value


def _check_float(value, where) -> float:
    if type(value) is not float:  # the writer writes every float with a point or an exponent
        raise _invalid(where, f"must be a finite number written as a float, got {_kind(value)}")
    if not np.isfinite(value):
        raise _invalid(where, f"must be finite, got {value!r}")
    return value


class _Object:
    """The fields of one JSON object, each read once; a missing or unread field is an error."""

    def __init__(self, value, where: str):
        if type(value) is not dict:
            raise _invalid(where, f"must be an object, got {_kind(value)}")
        self.value = value
        self.where = where
        self.unread = set(value)

    def take(self, name: str):
        if name not in self.value:
            raise _invalid(self.where, f"missing field {name!r}")
        self.unread.discard(name)
        return self.value[name], f"{self.where}.{name}"

    def done(self):
        if self.unread:
            extra = ", ".join(repr(k) for k in sorted(self.unread))
            raise _invalid(self.where, f"unexpected field(s) {extra}")

    # -- scalars --------------------------------------------------------------------------------
    def int(self, name, minimum=0, maximum=_INT64_MAX) -> int:
        value, where = self.take(name)
        return _check_int(value, where, minimum, maximum)

    def float(self, name, minimum=None) -> float:
        value, where = self.take(name)
        value = _check_float(value, where)
        if minimum is not None and not value >= minimum:
            raise _invalid(where, f"must be >= {minimum}, got {value!r}")
        return value

    def bool(self, name) -> bool:
        value, where = self.take(name)
        if type(value) is not bool:
            raise _invalid(where, f"must be true or false, got {_kind(value)}")
        return value

    def str(self, name, choices=None) -> str:
        value, where = self.take(name)
        if type(value) is not str:
            raise _invalid(where, f"must be a string, got {_kind(value)}")
        if choices is not None and value not in choices:
            raise _invalid(where, f"must be one of {', '.join(map(repr, choices))}, got "
                                  f"{value[:80]!r}")
        return value

    def object(self, name) -> _Object:
        return _Object(*self.take(name))

    # -- arrays ---------------------------------------------------------------------------------
    def floats(self, name, shape, allow_inf=False) -> np.ndarray:
        """A float64 array of ``shape`` (None: any length >= 1); finite unless ``allow_inf``
        (then +/-inf, written "inf" / "-inf", are accepted too; NaN never).
        """
        value, where = self.take(name)
        flat, shape = _nested(value, where, shape)
        for i, x in enumerate(flat):
            if type(x) is not float and not (allow_inf and type(x) is str and x in _INF_TEXT):
                allowed = 'a finite number, "inf" or "-inf"' if allow_inf else "a finite number"
                raise _invalid(f"{where} (item {i})", f"must be {allowed}, got {_kind(x)}")
        out = np.array([_INF_TEXT[x] if type(x) is str else x for x in flat],
                       dtype=np.float64).reshape(shape)
        if np.isnan(out).any() or not (allow_inf or np.isfinite(out).all()):
            raise _invalid(where, "must not contain NaN" + ("" if allow_inf else " or inf"))
        return out

    def counts(self, name, shape) -> np.ndarray:
        """An int64 array of trial counts of ``shape`` (None: any length >= 1); the counts and
        their sum are at most 2**53 (exact in float64).
        """
        value, where = self.take(name)
        flat, shape = _nested(value, where, shape)
        for i, x in enumerate(flat):
            _check_int(x, f"{where} (item {i})", 0, _MAX_COUNT)
        if sum(flat) > _MAX_COUNT:
            raise _invalid(where, f"the counts add up to more than {_MAX_COUNT}")
        return np.array(flat, dtype=np.int64).reshape(shape)

    def labels(self, name, n=None, ordered=True) -> np.ndarray:
        """Class labels ``{"dtype": ..., "values": [...]}``: distinct and, if ``ordered``, sorted
        (np.unique's order), ``n`` of them (None: at least 2).
        """
        obj = self.object(name)
        dtype = obj.str("dtype", _LABEL_DTYPES)
        values, where = obj.take("values")
        obj.done()
        if type(values) is not list or (n is not None and len(values) != n) or len(values) < 2:
            want = f"{n} labels" if n is not None else "at least 2 labels"
            raise _invalid(where, f"must be a list of {want}")
        labels = _label_array(values, dtype, where)
        if len(set(values)) != len(values):
            raise _invalid(where, "class labels must be distinct")
        if ordered and any(values[i] >= values[i + 1] for i in range(len(values) - 1)):
            raise _invalid(where, "class labels must be distinct and sorted")
        return labels

    def names(self, name, n) -> np.ndarray | None:
        """``feature_names_in_``: null, or a list of ``n`` strings (an object array)."""
        value, where = self.take(name)
        if value is None:
            return None
        if type(value) is not list or len(value) != n or any(type(v) is not str for v in value):
            raise _invalid(where, f"must be null or a list of {n} strings")
        return np.array(value, dtype=object)


def _nested(value, where, shape):
    """The leaves of nested lists of ``shape`` (``None`` entries: any length >= 1), row-major,
    and the actual shape.
    """
    shape = list(shape)
    flat = []

    def walk(v, depth, loc):
        want = shape[depth]
        if type(v) is not list or (want is not None and len(v) != want) or not v:
            size = "a non-empty list" if want is None else f"a list of {want} items"
            raise _invalid(loc, f"must be {size}, got {_kind(v)}"
                                + (f" of {len(v)} items" if type(v) is list else ""))
        if want is None:
            shape[depth] = len(v)
        if depth == len(shape) - 1:
            flat.extend(v)
        else:
            for i, item in enumerate(v):
                walk(item, depth + 1, f"{loc}[{i}]")

    walk(value, 0, where)
    return flat, tuple(shape)


def _label_array(values, dtype, where) -> np.ndarray:
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
        raise _invalid(where, f"every label must be a value of dtype {dtype}")
    if dtype == "str":
        return np.array(values, dtype=str)
    return np.array(values, dtype=object if dtype == "object" else dtype)


def _estimator_check(where, check, *args):
    """Run one of an estimator's own validators; its complaint becomes a ValueError here."""
    try:
        return check(*args)
    except (TypeError, ValueError, OverflowError) as exc:
        raise _invalid(where, str(exc)) from None


# ---------------------------------------------------------------------------------------------
# writing typed values


def _floats_out(a) -> list:
    """A float array as nested lists, +/-inf as "inf" / "-inf" (NaN refused)."""
    a = np.asarray(a, dtype=np.float64)
    if np.isnan(a).any():
        raise ValueError("a fitted array contains NaN: this model cannot be saved")
    out = a.tolist()
    if not np.isfinite(a).all():
        def text(v):
            return [text(x) for x in v] if type(v) is list else (
                v if np.isfinite(v) else ("inf" if v > 0 else "-inf"))
        out = text(out)
    return out


def _ints_out(a) -> list:
    return np.asarray(a, dtype=np.int64).tolist()


def _labels_out(classes) -> dict:
    a = np.asarray(classes)
    if a.dtype.kind == "U":
        dtype = "str"
    elif a.dtype.kind == "O" and all(type(v) is str for v in a.tolist()):
        dtype = "object"
    elif a.dtype.name in _LABEL_DTYPES:
        dtype = a.dtype.name
    else:
        raise ValueError(f"class labels of dtype {a.dtype} cannot be saved (use integers, "
                         f"booleans, floats or strings)")
    return {"dtype": dtype, "values": a.tolist()}


def _names_out(est):
    names = getattr(est, "feature_names_in_", None)
    return None if names is None else [str(n) for n in names]


def _classifier_out(est) -> dict:
    """The input width, feature names and class labels of an estimator."""
    return {"n_features_in_": int(est.n_features_in_), "feature_names_in_": _names_out(est),
            "classes_": _labels_out(est.classes_)}


def _param_out(value, name, depth=0):
    """A constructor parameter as a JSON value (see the module docstring)."""
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
        items = [_param_out(v, name, depth + 1) for v in value]
        return items if type(value) is list else {"tuple": items}
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        if not np.isfinite(value).all():
            raise ValueError(f"parameter {name!r} contains non-finite values: cannot be saved")
        return {"ndarray": {"dtype": value.dtype.name, "values": value.tolist()}}
    raise ValueError(f"parameter {name!r} of type {type(value).__name__} cannot be saved "
                     f"(numbers, strings, booleans, None, lists, tuples and numeric arrays can)")


def _param_in(value, where, depth=0):
    """Inverse of :func:`_param_out`."""
    if depth > _MAX_PARAM_DEPTH:
        raise _invalid(where, "nested too deeply")
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) is list:
        return [_param_in(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    obj = _Object(value, where)
    if set(value) not in ({"tuple"}, {"ndarray"}):
        raise _invalid(where, 'must be a JSON value, {"tuple": [...]} or {"ndarray": {...}}')
    if "tuple" in value:
        items, at = obj.take("tuple")
        obj.done()
        if type(items) is not list:
            raise _invalid(at, f"must be a list, got {_kind(items)}")
        return tuple(_param_in(v, f"{at}[{i}]", depth + 1) for i, v in enumerate(items))
    arr = obj.object("ndarray")
    obj.done()
    dtype = arr.str("dtype", [d for d in _LABEL_DTYPES if d not in ("str", "object")])
    values, at = arr.take("values")
    arr.done()
    try:
        out = np.array(values, dtype=dtype)
    except (TypeError, ValueError, OverflowError):
        raise _invalid(at, f"must be (nested lists of) values of dtype {dtype}") from None
    if out.tolist() != values or not np.isfinite(out).all():
        raise _invalid(at, f"must be (nested lists of) finite values of dtype {dtype}")
    return out


# ---------------------------------------------------------------------------------------------
# one codec per estimator class: ``encode(est) -> dict`` of fitted numbers, and
# ``decode(est, fields) -> dict`` of validated attributes (those named ``_...`` are not set but
# passed on), after which ``rebuild(est, attributes)`` derives the rest. Parameters are checked
# by the estimator's own ``_check_params``, the validation its ``fit`` runs.


def _check_non_decreasing(values, where, what):
    bad = ~(np.diff(values) >= 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise _invalid(where, f"{what} must be non-decreasing (items {i} and {i + 1}: "
                              f"{values[i]!r}, {values[i + 1]!r})")


def _check_blocks(lo, hi, n_tar, n_non, where):
    """Score ranges of PAV blocks: ``lo[k] <= hi[k] < lo[k + 1]``, finite; blocks not empty."""
    if (hi < lo).any():
        i = int(np.argmax(hi < lo))
        raise _invalid(where, f"block {i} ends (score_hi_) below its start (score_lo_)")
    if lo.size > 1 and not (hi[:-1] < lo[1:]).all():
        i = int(np.argmax(~(hi[:-1] < lo[1:])))
        raise _invalid(where, f"blocks {i} and {i + 1} overlap (score_hi_ >= next score_lo_)")
    empty = (n_tar + n_non) == 0
    if empty.any():
        raise _invalid(where, f"block {int(np.argmax(empty))} holds no trials")


def _fractions_increase(n_tar, n_non) -> bool:
    """Exact test that the blocks' target fractions n_tar / (n_tar + n_non) strictly increase."""
    t = n_tar.astype(object)
    w = (n_tar + n_non).astype(object)
    return bool((t[:-1] * w[1:] < t[1:] * w[:-1]).all())


def _blocks_out(est, lo, hi, n_tar, n_non) -> dict:
    """The fields that the PAV-block estimators share."""
    return {
        "n_features_in_": int(est.n_features_in_),
        "feature_names_in_": _names_out(est),
        "score_lo_": _floats_out(lo),
        "score_hi_": _floats_out(hi),
        "block_n_tar_": _ints_out(n_tar),
        "block_n_non_": _ints_out(n_non),
    }


def _blocks_in(f):
    """The fields of :func:`_blocks_out`, checked: (n_features, names, lo, hi, n_tar, n_non)."""
    n_features = f.int("n_features_in_", 1, 1)
    names = f.names("feature_names_in_", n_features)
    lo = f.floats("score_lo_", (None,))
    hi = f.floats("score_hi_", lo.shape)
    n_tar = f.counts("block_n_tar_", lo.shape)
    n_non = f.counts("block_n_non_", lo.shape)
    _check_blocks(lo, hi, n_tar, n_non, f.where)
    return n_features, names, lo, hi, n_tar, n_non


def _binary_labels(est, f):
    """``classes_`` of a binary estimator, ``[non-target, target]``: the target is pos_label
    when one is set, else 1 / True (focal's label rule). A version-1 file wrote them sorted,
    the target last.
    """
    classes = f.labels("classes_", 2, ordered=_VERSION.get() == 1)
    where = f"{f.where}.classes_"
    if _VERSION.get() == 1:
        if classes.tolist() not in ([0, 1], [False, True]) and est.pos_label is None:
            est.pos_label = classes.tolist()[1]   # the target of version 1: the larger label
        return classes
    target = 1 if est.pos_label is None else est.pos_label
    if classes.tolist()[1] != target or (est.pos_label is None
                                         and classes.tolist()[0] != 0):
        raise _invalid(where, f"must be [non-target, target] with target {target!r} "
                              "(pos_label)")
    return classes


class _LogisticCodec:
    """LogisticFusion and LinearCalibrator: ``llr = intercept_ + X @ coef_``."""

    @staticmethod
    def encode(est):
        return {
            **_classifier_out(est),
            "coef_": _floats_out(est.coef_),
            "intercept_": float(est.intercept_),
            "n_iter_": int(est.n_iter_),
            "n_passes_": int(est.n_passes_),
            "objective_": float(est.objective_),
            "rule_objective_": float(est.rule_objective_),
        }

    @staticmethod
    def decode(est, f):
        n = f.int("n_features_in_", 1)
        if type(est).__name__ == "LinearCalibrator" and n != 1:
            raise _invalid(f.where, f"a LinearCalibrator has one input column, got {n}")
        return {
            "n_features_in_": n,
            "feature_names_in_": f.names("feature_names_in_", n),
            "classes_": _binary_labels(est, f),
            "coef_": f.floats("coef_", (n,)),
            "intercept_": f.float("intercept_"),
            "n_iter_": f.int("n_iter_"),
            "n_passes_": f.int("n_passes_"),
            "objective_": f.float("objective_", minimum=0.0),
            "rule_objective_": f.float("rule_objective_", minimum=0.0),
        }

    @staticmethod
    def rebuild(est, extra):
        pass


class _PAVCodec:
    """PAVCalibrator: the (bounded) PAV blocks, their LLRs and training counts."""

    @staticmethod
    def encode(est):
        return {**_blocks_out(est, est.score_lo_, est.score_hi_, est.block_n_tar_,
                              est.block_n_non_),
                "llr_": _floats_out(est.llr_),
                "n_targets_": int(est.n_targets_),
                "n_nontargets_": int(est.n_nontargets_)}

    @staticmethod
    def decode(est, f):
        from .core.pav import PAVResult

        n_features, names, lo, hi, n_tar, n_non = _blocks_in(f)
        k = lo.size
        llr = f.floats("llr_", (k,), allow_inf=True)
        total_tar = f.int("n_targets_", 1, _MAX_COUNT)
        total_non = f.int("n_nontargets_", 1, _MAX_COUNT)
        where = f.where
        if int(n_tar.sum()) != total_tar or int(n_non.sum()) != total_non:
            raise _invalid(where, "the block counts do not add up to n_targets_ and "
                                  "n_nontargets_")
        a = est.pseudo_count
        if a > 0:
            # bounded PAV (focal.core.pav.bounded_pav_blocks): finite, non-decreasing, within
            # -log(1 + N_tar / a) < llr < log(1 + N_non / a)
            if not np.isfinite(llr).all():
                raise _invalid(where, "llr_ must be finite when pseudo_count > 0")
            _check_non_decreasing(llr, f"{where}.llr_", "block LLRs")
            if not (-np.log1p(total_tar / a) < llr[0] and llr[-1] < np.log1p(total_non / a)):
                raise _invalid(where, "llr_ exceeds the bounds set by pseudo_count and the "
                                      "training counts")
        else:
            # unbounded: the PAV-LLRs of the blocks themselves (thesis eq. C.20), exactly
            expected = PAVResult(lo, hi, n_tar, n_non, n_tar, n_non, lo).llr
            if not np.array_equal(llr, expected):
                raise _invalid(where, "llr_ is not the PAV-LLR of the block counts")
            if k > 1 and not _fractions_increase(n_tar, n_non):
                raise _invalid(where, "the blocks' target fractions must increase strictly")
        return {"n_features_in_": n_features, "feature_names_in_": names, "score_lo_": lo,
                "score_hi_": hi, "llr_": llr, "block_n_tar_": n_tar, "block_n_non_": n_non,
                "n_targets_": total_tar, "n_nontargets_": total_non}

    @staticmethod
    def rebuild(est, extra):
        pass


class _ROCCHCodec:
    """ROCCH: the PAV blocks; the hull and every measure are rebuilt by ``ROCCH._set_fitted``."""

    @staticmethod
    def encode(est):
        pav = est.hull_.pav
        return _blocks_out(est, pav.score_lo, pav.score_hi, pav.n_tar, pav.n_non)

    @staticmethod
    def decode(est, f):
        from .core.pav import PAVResult

        n_features, names, lo, hi, n_tar, n_non = _blocks_in(f)
        if n_tar.sum() == 0 or n_non.sum() == 0:
            raise _invalid(f.where, "the blocks must hold target and non-target trials")
        if lo.size > 1 and not _fractions_increase(n_tar, n_non):
            raise _invalid(f.where, "the blocks' target fractions must increase strictly "
                                    "(a convex hull)")
        # the steps of the empirical ROC inside the blocks are not kept: runs = blocks
        return {"n_features_in_": n_features, "feature_names_in_": names,
                "_pav": PAVResult(lo, hi, n_tar, n_non, n_tar, n_non, lo)}

    @staticmethod
    def rebuild(est, extra):
        est._set_fitted(extra["_pav"])


def _set_classes(est, classes):
    """The multiclass estimators' classes and prior, by their own code (prior_ from params)."""
    from .core.multiclass import check_prior

    est._set_classes(classes, check_prior(est.prior, classes.shape[0]))


def _multiclass_labels(est, f):
    """``classes_`` of a multiclass estimator: ``0..N-1`` when a prior fixes N."""
    from .core.multiclass import check_prior

    names = est.class_names
    classes = f.labels("classes_", ordered=names is None and _VERSION.get() == 1)
    if names is not None:
        if classes.tolist() != list(names):
            raise _invalid(f"{f.where}.classes_", "must be the class_names parameter")
        return classes
    if classes.dtype.kind in "OU" and _VERSION.get() > 1:
        return classes   # names in column order (from a DataFrame's columns)
    if any(a >= b for a, b in zip(classes.tolist(), classes.tolist()[1:])):
        raise _invalid(f"{f.where}.classes_", "class labels must be distinct and sorted")
    if est.prior is not None:
        n = classes.shape[0]
        _estimator_check(f"{f.where}.classes_", check_prior, est.prior, n)
        if classes.dtype.kind not in "iu" or not np.array_equal(classes, np.arange(n)):
            raise _invalid(f"{f.where}.classes_", "with a prior parameter, the classes must be "
                                                  "0 .. len(prior) - 1")
    return classes


class _MulticlassCodec:
    """MulticlassFusion: weights (per system, or a matrix per system) and the offset vector."""

    @staticmethod
    def encode(est):
        return {
            **_classifier_out(est),
            "n_systems_": int(est.n_systems_),
            "coef_": _floats_out(est.coef_),
            "intercept_": _floats_out(est.intercept_),
            "loss_": float(est.loss_),
            "n_iter_": int(est.n_iter_),
            "converged_": bool(est.converged_),
        }

    @staticmethod
    def decode(est, f):
        n_features = f.int("n_features_in_", 2)
        names = f.names("feature_names_in_", n_features)
        classes = _multiclass_labels(est, f)
        n = classes.shape[0]
        k = f.int("n_systems_", 1)
        if k * n != n_features:
            raise _invalid(f.where, f"n_features_in_ = {n_features} is not n_systems_ x "
                                    f"n_classes ({k} x {n})")
        coef_value = f.value.get("coef_")
        full = type(coef_value) is list and bool(coef_value) and type(coef_value[0]) is list
        coef = f.floats("coef_", (k, n, n) if full else (k,))
        return {"n_features_in_": n_features, "feature_names_in_": names, "_classes": classes,
                "n_systems_": k, "coef_": coef, "intercept_": f.floats("intercept_", (n,)),
                "loss_": f.float("loss_", minimum=0.0), "n_iter_": f.int("n_iter_"),
                "converged_": f.bool("converged_")}

    @staticmethod
    def rebuild(est, extra):
        _set_classes(est, extra["_classes"])


class _GaussianCodec:
    """GaussianBackend: the centred Gaussian class models (``model_``); ``means_`` and
    ``covariance_`` are derived from them.
    """

    @staticmethod
    def encode(est):
        m = est.model_
        return {
            **_classifier_out(est),
            "model_": {"covariance": m.covariance, "center": _floats_out(m.center),
                       "means": _floats_out(m.means), "cholesky": _floats_out(m.cholesky)},
        }

    @staticmethod
    def decode(est, f):
        from .core.gaussian import COVARIANCE_TYPES, GaussianClasses

        d = f.int("n_features_in_", 1)
        names = f.names("feature_names_in_", d)
        classes = _multiclass_labels(est, f)
        n = classes.shape[0]
        m = f.object("model_")
        covariance = m.str("covariance", COVARIANCE_TYPES)
        center = m.floats("center", (d,))
        means = m.floats("means", (n, d))
        chol = m.floats("cholesky", (d, d) if covariance == "shared" else (n, d, d))
        m.done()
        if np.triu(chol, 1).any():
            raise _invalid(f"{m.where}.cholesky", "must be lower triangular")
        if not (np.diagonal(chol, axis1=-2, axis2=-1) > 0).all():
            raise _invalid(f"{m.where}.cholesky", "must have a positive diagonal")
        return {"n_features_in_": d, "feature_names_in_": names, "_classes": classes,
                "model_": GaussianClasses(center=center, means=means, cholesky=chol,
                                          covariance=covariance)}

    @staticmethod
    def rebuild(est, extra):
        _set_classes(est, extra["_classes"])
        model = est.model_
        with np.errstate(over="ignore", invalid="ignore"):
            est.means_ = model.means + model.center
            L = model.cholesky
            est.covariance_ = L @ np.swapaxes(L, -1, -2)
        if not (np.isfinite(est.means_).all() and np.isfinite(est.covariance_).all()):
            raise ValueError("the class means or covariances overflow")


class _QualityCodec:
    """QualityFusion: the affine back-off, the quality weights and the measures' names."""

    @staticmethod
    def encode(est):
        return {
            **_classifier_out(est),
            "measures_": [str(m) for m in est.measures_],
            "quality_feature_names_": [str(m) for m in est.quality_feature_names_],
            "coef_": _floats_out(est.coef_),
            "intercept_": float(est.intercept_),
            "quality_coef_": _floats_out(est.quality_coef_),
            "scale_coef_": _floats_out(est.scale_coef_),
            "linear_coef_": _floats_out(est.linear_coef_),
            "linear_intercept_": float(est.linear_intercept_),
            "linear_objective_": float(est.linear_objective_),
            "n_quality_trials_": int(est.n_quality_trials_),
            "n_iter_": int(est.n_iter_),
            "n_passes_": int(est.n_passes_),
            "objective_": float(est.objective_),
        }

    @staticmethod
    def decode(est, f):
        from .core.quality import quality_features

        n = f.int("n_features_in_", 1)
        measures, where = f.take("measures_")
        if (type(measures) is not list or not measures or len(set(measures)) != len(measures)
                or any(type(m) is not str or not m for m in measures)):
            raise _invalid(where, "must be a list of distinct non-empty names")
        if est.measures is not None and list(est.measures) != measures:
            raise _invalid(where, f"must equal the parameter measures={est.measures!r}")
        _estimator_check(where, est._transforms, len(measures))
        empty = np.empty((0, len(measures)))
        names = quality_features(empty, empty, est.form, est.features)[1]
        P = len(names)
        value, where = f.take("quality_feature_names_")
        if value != names:
            raise _invalid(where, f"must be {names!r} for form={est.form!r}")
        scale = f.floats("scale_coef_", (n, P))
        if est.form != "scale" and scale.any():
            raise _invalid(f.where, "scale_coef_ must be zero unless form='scale'")
        return {
            "n_features_in_": n,
            "feature_names_in_": f.names("feature_names_in_", n),
            "classes_": f.labels("classes_", 2),
            "measures_": np.array(measures, dtype=object),
            "quality_feature_names_": np.array(names, dtype=object),
            "coef_": f.floats("coef_", (n,)),
            "intercept_": f.float("intercept_"),
            "quality_coef_": f.floats("quality_coef_", (P,)),
            "scale_coef_": scale,
            "linear_coef_": f.floats("linear_coef_", (n,)),
            "linear_intercept_": f.float("linear_intercept_"),
            "linear_objective_": f.float("linear_objective_", minimum=0.0),
            "n_quality_trials_": f.int("n_quality_trials_", 1),
            "n_iter_": f.int("n_iter_"),
            "n_passes_": f.int("n_passes_"),
            "objective_": f.float("objective_", minimum=0.0),
        }

    @staticmethod
    def rebuild(est, extra):
        est.rule_objective_ = est.objective_


_CODECS = {"LogisticFusion": _LogisticCodec, "LinearCalibrator": _LogisticCodec,
           "PAVCalibrator": _PAVCodec, "ROCCH": _ROCCHCodec,
           "MulticlassFusion": _MulticlassCodec, "GaussianBackend": _GaussianCodec}
_CODECS["QualityFusion"] = _QualityCodec


def _classes():
    """The loadable classes by name (imported on first use: ``import focal`` stays light)."""
    from sklearn.pipeline import Pipeline

    from . import estimators

    found = {name: getattr(estimators, name) for name in _CODECS}
    found["Pipeline"] = Pipeline
    return found


# ---------------------------------------------------------------------------------------------
# nodes


def _node_out(est, classes, where, depth=0):
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    if depth > _MAX_DEPTH:
        raise ValueError(f"{where}: pipelines nested too deeply to be saved")
    name = type(est).__name__
    if classes.get(name) is not type(est):
        raise ValueError(f"{where}: cannot save a {type(est).__module__}.{name}: only focal's "
                         f"estimators ({', '.join(LOADABLE[:-1])}) and scikit-learn Pipelines "
                         f"of them can be saved as JSON (use joblib for anything else)")
    if name == "Pipeline":
        return _pipeline_out(est, classes, where, depth)
    try:
        check_is_fitted(est)
    except NotFittedError:
        raise NotFittedError(f"{where}: cannot save an unfitted {name}: fit it first") from None
    params = {k: _param_out(v, k) for k, v in est.get_params(deep=False).items()}
    output = getattr(est, "_sklearn_output_config", {}).get("transform")  # set by set_output
    if output not in _OUTPUTS:
        raise ValueError(f"{where}: a {name} with set_output(transform={output!r}) cannot be "
                         f"saved")
    return {"class": name, "params": params, "set_output": output,
            "fitted": _CODECS[name].encode(est)}


_PIPELINE_PARAMS = ("memory", "transform_input", "verbose")
_OUTPUTS = (None, "default", "pandas", "polars")


def _pipeline_out(pipe, classes, where, depth):
    params = pipe.get_params(deep=False)
    for key, value in params.items():
        if key == "verbose" or key == "steps" or value is None:
            continue
        raise ValueError(f"{where}: a Pipeline with {key}={value!r} cannot be saved (only "
                         f"memory=None and transform_input=None)")
    steps = []
    for i, (name, step) in enumerate(pipe.steps):
        at = f"{where}.steps[{i}].estimator"
        if step is None or (isinstance(step, str) and step == "passthrough"):
            steps.append({"name": name, "estimator": step})
        else:
            steps.append({"name": name, "estimator": _node_out(step, classes, at, depth + 1)})
    if not any(isinstance(s["estimator"], dict) for s in steps):
        raise ValueError(f"{where}: a Pipeline without estimators cannot be saved")
    return {"class": "Pipeline",
            "params": {"memory": None, "transform_input": None, "verbose": bool(pipe.verbose)},
            "steps": steps}


def _node_in(value, classes, where, depth=0):
    if depth > _MAX_DEPTH:
        raise _invalid(where, "pipelines nested too deeply")
    obj = _Object(value, where)
    name = obj.str("class", LOADABLE)
    if name == "Pipeline":
        return _pipeline_in(obj, classes, depth)
    cls = classes[name]
    params_obj = obj.object("params")
    params = {p: _param_in(*params_obj.take(p)) for p in cls().get_params(deep=False)
              if not (_VERSION.get() == 1 and p in _NEW_IN_VERSION_2)}
    params_obj.done()
    est = cls(**params)
    codec = _CODECS[name]
    _estimator_check(params_obj.where, est._check_params)
    output, where = obj.take("set_output")
    if type(output) not in (str, type(None)) or output not in _OUTPUTS:
        raise _invalid(where, "must be null or one of 'default', 'pandas', 'polars'")
    if output is not None:
        try:
            est.set_output(transform=output)
        except (ImportError, ValueError) as exc:
            raise _invalid(where, str(exc)) from None
    fitted = obj.object("fitted")
    attrs = codec.decode(est, fitted)
    fitted.done()
    obj.done()
    for key, val in attrs.items():
        if not key.startswith("_") and (val is not None or key != "feature_names_in_"):
            setattr(est, key, val)
    _estimator_check(fitted.where, codec.rebuild, est, attrs)
    return est


def _pipeline_in(obj, classes, depth):
    params = obj.object("params")
    memory, at = params.take("memory")
    transform_input, at2 = params.take("transform_input")
    verbose = params.bool("verbose")
    params.done()
    for v, where in ((memory, at), (transform_input, at2)):
        if v is not None:
            raise _invalid(where, "must be null")
    value, where = obj.take("steps")
    obj.done()
    if type(value) is not list or not value:
        raise _invalid(where, "must be a non-empty list of steps")
    steps = []
    for i, item in enumerate(value):
        step = _Object(item, f"{where}[{i}]")
        name = step.str("name")
        if not name or "__" in name or name in _PIPELINE_PARAMS + ("steps",):
            raise _invalid(step.where, f"invalid step name {name[:80]!r}")
        est, at = step.take("estimator")
        step.done()
        if est is not None and est != "passthrough":
            est = _node_in(est, classes, at, depth + 1)
        steps.append((name, est))
    if len({n for n, _ in steps}) != len(steps):
        raise _invalid(where, "step names must be distinct")
    if all(e is None or isinstance(e, str) for _, e in steps):
        raise _invalid(where, "a pipeline needs at least one estimator")
    return classes["Pipeline"](steps, verbose=verbose)


# ---------------------------------------------------------------------------------------------
# documents


def _canonical(payload) -> bytes:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")


def _digest(payload) -> str:
    return hashlib.sha256(_canonical(payload)).hexdigest()


def _pretty(value, indent=0) -> str:
    """JSON text for people: short values on one line, long number lists wrapped at _WIDTH."""
    pad = "  " * indent
    compact = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))
    if len(compact) + len(pad) <= _WIDTH - 20 or not isinstance(value, (dict, list)):
        return compact
    inner = "  " * (indent + 1)
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_pretty(v, indent + 1)}"
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if any(isinstance(v, (dict, list)) for v in value):
        return "[\n" + ",\n".join(inner + _pretty(v, indent + 1) for v in value) + "\n" + pad + "]"
    lines, line = [], ""
    for v in value:
        text = json.dumps(v, ensure_ascii=False, allow_nan=False)
        if line and len(inner) + len(line) + len(text) + 2 > _WIDTH:
            lines.append(line + ",")
            line = text
        else:
            line = f"{line}, {text}" if line else text
    lines.append(line)
    return "[\n" + "\n".join(inner + ln for ln in lines) + "\n" + pad + "]"


def _document(estimator) -> dict:
    """The model document of ``estimator``, checked by the loader's own decoding."""
    classes = _classes()
    from .schema import input_schema

    model = _node_out(estimator, classes, "model")
    payload = {"format": FORMAT, "version": SCHEMA_VERSION, "focal_version": __version__,
               "input": input_schema(estimator).to_dict(), "model": model}
    # what load would refuse is refused now (e.g. a parameter changed to an invalid value)
    token = _VERSION.set(SCHEMA_VERSION)
    try:
        _schema_in(_node_in(json.loads(json.dumps(model)), classes, "model"),
                   json.loads(json.dumps(payload["input"])))
    finally:
        _VERSION.reset(token)
    return {**payload, "sha256": _digest(payload)}


def save(estimator, file, *, key=None) -> None:
    """Save a fitted focal estimator, or a scikit-learn Pipeline of them, as a JSON model file.

    Parameters
    ----------
    estimator : LogisticFusion, LinearCalibrator, PAVCalibrator, ROCCH, MulticlassFusion,
        GaussianBackend, or a ``sklearn.pipeline.Pipeline`` of these (steps may also be
        ``"passthrough"``; pipelines may be nested). Must be fitted.
    file : str, path-like, or a file object opened for writing
        A path is written atomically (a temporary file in the same folder, then renamed; an
        existing file keeps its permissions; a symbolic link is followed, not replaced); ``-``
        and devices or FIFOs are written to directly. The text is UTF-8.
    key : bytes or str, optional
        Secret key: the file is then signed with HMAC-SHA256 of its bytes, which
        :func:`load` checks when given the same key (authenticity). Without a key the file
        still carries a SHA-256 checksum of its bytes, which detects damage but not deliberate
        edits (anyone can recompute it).

    Raises
    ------
    ValueError
        The estimator is not fitted (``sklearn.exceptions.NotFittedError``, a ValueError), is of
        another class (subclasses included: their behaviour may differ), has a parameter that
        is not a plain value or fails its own checks, or ``file`` cannot be written.

    Examples
    --------
    >>> import numpy as np, focal, tempfile, os
    >>> cal = focal.LinearCalibrator().fit([-2.0, -1.0, 0.5, 1.0, 2.0], [0, 0, 1, 0, 1])
    >>> path = os.path.join(tempfile.mkdtemp(), "cal.json")
    >>> focal.save(cal, path)
    >>> loaded = focal.load(path)
    >>> bool((loaded.decision_function([0.3, 7.0]) == cal.decision_function([0.3, 7.0])).all())
    True
    """
    from ._model_integrity import seal

    data = seal((_pretty(_document(estimator)) + "\n").encode("utf-8"), key)
    if hasattr(file, "write"):
        try:
            file.write(data.decode("utf-8"))
        except TypeError:  # a binary file object
            file.write(data)
        return
    _write_atomically(os.fspath(file), data)


def _write_atomically(path: str, data: bytes) -> None:
    from ._files import write_output

    try:
        with write_output(path) as out:
            out.write(data)
    except OSError as exc:
        raise ValueError(f"{path}: cannot write: {exc.strerror}") from None


def _reject_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text):
    value = float(text)
    if not np.isfinite(value):
        raise ValueError(f"the number {text[:40]} overflows")
    return value


def _unique_keys(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        repeated = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"duplicate key {repeated[:80]!r}")
    return dict(pairs)


def _parse(data) -> dict:
    if isinstance(data, str):
        text = data
    else:
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_reject_constant,
                          parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a valid JSON document ({exc.msg} at line {exc.lineno} column "
                         f"{exc.colno}); a truncated or damaged file?") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _decode_document(doc):
    top = _Object(doc, "the file")
    fmt, where = top.take("format")
    if fmt != FORMAT:
        raise _invalid(where, f"not a focal model file (format {str(fmt)[:80]!r}, expected "
                              f"{FORMAT!r})")
    version, where = top.take("version")
    if type(version) is not int:
        raise _invalid(where, f"the schema version must be an integer, got {_kind(version)} "
                              f"{json.dumps(version)[:40]}: this focal ({__version__}) reads "
                              f"versions {', '.join(map(str, READABLE_VERSIONS))}")
    if version not in READABLE_VERSIONS:
        newer = type(version) is int and version > SCHEMA_VERSION
        raise _invalid(where, f"schema version {str(version)[:40]} is not supported: this focal "
                              f"({__version__}) reads versions "
                              f"{', '.join(map(str, READABLE_VERSIONS))}"
                              + ("; upgrade focal to load it" if newer else ""))
    top.str("focal_version")
    checksum = top.str("sha256")
    if len(checksum) != 64 or not set(checksum) <= set("0123456789abcdef"):
        raise _invalid("sha256", "must be 64 lowercase hexadecimal digits")
    model, _ = top.take("model")
    schema = top.take("input")[0] if version > 1 else None
    top.done()
    payload = {k: v for k, v in doc.items() if k != "sha256"}
    if not hmac.compare_digest(checksum, _digest(payload)):
        raise _invalid("sha256", "the checksum does not match the content: the file was "
                                 "modified or damaged after it was saved")
    token = _VERSION.set(version)
    try:
        return _schema_in(_node_in(model, _classes(), "model"), schema)
    finally:
        _VERSION.reset(token)


def _schema_in(model, value):
    """Check the ``input`` schema of a document against its model and attach it; a version-1
    document has none: the schema is derived from the model, with a note of what is missing.
    """
    from .schema import FORMATS, InputSchema, input_schema

    derived = input_schema(model)
    if value is None:
        missing = [what for what, v in (("system names", derived.systems),
                                       ("class names", derived.classes if
                                        derived.kind == "multiclass" else ()))
                   if v is None]
        note = ("a model file of version 1 does not record the score-file format"
                + (f" or the {' and '.join(missing)}" if missing else "")
                + ": focal apply checks the number of systems and classes only")
        model.input_schema_ = InputSchema(derived.kind, derived.n_systems, derived.systems,
                                          derived.classes, notes=(note,))
        return model
    obj = _Object(value, "input")
    kind = obj.str("kind", ("binary", "multiclass"))
    n_systems = obj.int("n_systems", 1)
    lists = {}
    for name in ("systems", "classes"):
        items, where = obj.take(name)
        if items is not None and (type(items) is not list or not items
                                  or any(type(v) is not str for v in items)):
            raise _invalid(where, "must be null or a list of strings")
        lists[name] = None if items is None else tuple(items)
    fmt, where = obj.take("format")
    if fmt is not None and fmt not in FORMATS:
        raise _invalid(where, f"must be null or one of {', '.join(map(repr, FORMATS))}")
    text = {}
    for name in ("task", "condition"):
        v, where = obj.take(name)
        if v is not None and type(v) is not str:
            raise _invalid(where, "must be null or a string")
        text[name] = v
    obj.done()
    schema = InputSchema(kind, n_systems, lists["systems"], lists["classes"], fmt,
                         text["task"], text["condition"])
    for name in ("kind", "n_systems", "systems", "classes"):
        mine, theirs = getattr(derived, name), getattr(schema, name)
        if theirs != mine and not (mine is None and name in ("systems", "classes")):
            raise _invalid(f"input.{name}", f"{theirs!r} does not match the model's {mine!r}")
    if schema.systems is not None and len(schema.systems) != schema.n_systems:
        raise _invalid("input.systems", f"must name {schema.n_systems} system(s)")
    model.input_schema_ = schema
    return model


def load(file, *, key=None, max_bytes: int = DEFAULT_MAX_BYTES):
    """Load a model saved by :func:`save`.

    Parameters
    ----------
    file : str, path-like, or a file object opened for reading (text or binary)
        The model file.
    key : bytes or str, optional
        The key the model was saved with: its HMAC-SHA256 signature must then match (a file
        saved without a key, or with another key, is refused).
    max_bytes : int
        Largest file accepted (default 256 MiB), checked before the file is read.

    Returns
    -------
    estimator
        A fitted focal estimator or Pipeline, equal in every parameter and fitted number to the
        one saved: its outputs are bit-identical.

    Raises
    ------
    ValueError
        Naming the file, the place in it and the problem: too large, binary, not JSON, nested
        too deeply, not a focal model, another schema version, a checksum or signature
        mismatch (edited, truncated or damaged; checked on the raw bytes before parsing), a
        class that is not in :data:`LOADABLE`, a missing or unexpected field, a value of the
        wrong type or shape, a parameter or fitted number that breaks the estimator's
        invariants, numbers that make the model give NaN or infinite outputs on ordinary
        scores, or a ``set_output`` container library that is not installed. Nothing in the
        file is ever executed.
    """
    from ._model_integrity import check_depth, check_usable, read_model_bytes, unseal

    name = str(getattr(file, "name", "<stream>")) if hasattr(file, "read") else os.fspath(file)
    try:
        name, data = read_model_bytes(file, max_bytes)
        document, sealed = unseal(data, key)
        doc = _parse(document)
        check_depth(doc)
        if not sealed and isinstance(doc, dict):
            doc.pop("integrity", None)  # re-formatted: the document's own checksum decides
        model = _decode_document(doc)
        check_usable(model)
        return model
    except ValueError as exc:
        message = str(exc)
        raise ValueError(message if message.startswith(f"{name}: ") else f"{name}: {message}") \
            from None
    except RecursionError:
        raise ValueError(f"{name}: JSON nested too deeply: not a focal model") from None
