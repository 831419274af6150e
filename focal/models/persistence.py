"""Save and load fitted focal estimators: versioned, human-readable JSON holding numbers only.

    focal.save(fuser, "fuser.json")       # a fitted estimator, or a Pipeline of them
    fuser = focal.load("fuser.json")      # the same model: bit-identical outputs

The model file format (its fields, how numbers are written, what loading checks, JSON or
pickle) is specified once, in the documentation: "File formats", section "Model files"
(``docs/reference/file_formats.rst``, :ref:`model-files`). This module reads and writes the
document: :mod:`focal.models.integrity` reads the bytes (bounded, checksums, strict JSON),
:mod:`focal.models.nodes` the nodes, :mod:`focal.models.codec` typed values, and
:mod:`focal.models.registry` lists the classes that may be loaded (:data:`LOADABLE`).
:func:`read_model` reads a file into the estimators, or into the NumPy-only models of
:mod:`focal.runtime` (the same checks, another list of classes).
"""

from __future__ import annotations

import hmac
import json
import os

from .._version import __version__
from .codec import Fields, invalid, kind_of
from .integrity import DEFAULT_MAX_BYTES, digest, parse, pretty
from .nodes import node_in, node_out
from .registry import loadable_classes

__all__ = [
    "save",
    "load",
    "SCHEMA_VERSION",
    "READABLE_VERSIONS",
    "FORMAT",
]

FORMAT = "focal-model"
SCHEMA_VERSION = 2
#: Versions this focal reads.
READABLE_VERSIONS = (2,)


# ---------------------------------------------------------------------------------------------
# documents


def _document(estimator) -> dict:
    """The model document of ``estimator``, checked by the loader's own decoding."""
    from .schema import input_schema

    classes = loadable_classes()
    model = node_out(estimator, classes, "model")
    payload = {
        "format": FORMAT,
        "version": SCHEMA_VERSION,
        "focal_version": __version__,
        "input": input_schema(estimator).to_dict(),
        "model": model,
    }
    # what load would refuse is refused now (e.g. a parameter changed to an invalid value)
    _schema_in(
        node_in(json.loads(json.dumps(model)), classes, "model", SCHEMA_VERSION),
        json.loads(json.dumps(payload["input"])),
    )
    return {**payload, "sha256": digest(payload)}


def save(estimator, file, *, key=None) -> None:
    """Save a fitted focal estimator, or a scikit-learn Pipeline of them, as a JSON model file.

    Parameters
    ----------
    estimator : estimator
        A fitted focal estimator of a class in :data:`LOADABLE` (LogisticFusion,
        LinearCalibrator, PAVCalibrator, ROCCH, MulticlassFusion, GaussianBackend,
        QualityFusion), or a ``sklearn.pipeline.Pipeline`` of them (steps may also be
        ``"passthrough"``; pipelines may be nested).
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
    from .integrity import seal

    data = seal((pretty(_document(estimator)) + "\n").encode("utf-8"), key)
    if hasattr(file, "write"):
        try:
            file.write(data.decode("utf-8"))
        except TypeError:  # a binary file object
            file.write(data)
        return
    from .._text.outputs import write_output

    with write_output(file) as out:  # its errors name the file
        out.write(data)


def _decode_document(doc, classes):
    top = Fields(doc, "the file")
    fmt, where = top.take("format")
    if fmt != FORMAT:
        raise invalid(
            where, f"not a focal model file (format {str(fmt)[:80]!r}, expected {FORMAT!r})"
        )
    version, where = top.take("version")
    if type(version) is not int:
        raise invalid(
            where,
            f"the schema version must be an integer, got {kind_of(version)} "
            f"{json.dumps(version)[:40]}: this focal ({__version__}) reads "
            f"versions {', '.join(map(str, READABLE_VERSIONS))}",
        )
    if version not in READABLE_VERSIONS:
        newer = type(version) is int and version > SCHEMA_VERSION
        raise invalid(
            where,
            f"schema version {str(version)[:40]} is not supported: this focal "
            f"({__version__}) reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}"
            + ("; upgrade focal to load it" if newer else ""),
        )
    top.str("focal_version")
    checksum = top.str("sha256")
    if len(checksum) != 64 or not set(checksum) <= set("0123456789abcdef"):
        raise invalid("sha256", "must be 64 lowercase hexadecimal digits")
    model, _ = top.take("model")
    schema, _ = top.take("input")
    top.done()
    payload = {k: v for k, v in doc.items() if k != "sha256"}
    if not hmac.compare_digest(checksum, digest(payload)):
        raise invalid(
            "sha256",
            "the checksum does not match the content: the file was "
            "modified or damaged after it was saved",
        )
    return _schema_in(node_in(model, classes, "model", version), schema)


def _schema_in(model, value):
    """Check the ``input`` schema of a document against its model and attach it."""
    from .schema import FORMATS, InputSchema, input_schema

    derived = input_schema(model)
    obj = Fields(value, "input")
    kind = obj.str("kind", ("binary", "multiclass"))
    n_systems = obj.int("n_systems", 1)
    lists = {}
    for name in ("systems", "classes"):
        items, where = obj.take(name)
        if items is not None and (
            type(items) is not list or not items or any(type(v) is not str for v in items)
        ):
            raise invalid(where, "must be null or a list of strings")
        lists[name] = None if items is None else tuple(items)
    fmt, where = obj.take("format")
    if fmt is not None and fmt not in FORMATS:
        raise invalid(where, f"must be null or one of {', '.join(map(repr, FORMATS))}")
    text = {}
    for name in ("task", "condition"):
        v, where = obj.take(name)
        if v is not None and type(v) is not str:
            raise invalid(where, "must be null or a string")
        text[name] = v
    obj.done()
    schema = InputSchema(
        kind, n_systems, lists["systems"], lists["classes"], fmt, text["task"], text["condition"]
    )
    for name in ("kind", "n_systems", "systems", "classes"):
        mine, theirs = getattr(derived, name), getattr(schema, name)
        if theirs != mine and not (mine is None and name in ("systems", "classes")):
            raise invalid(f"input.{name}", f"{theirs!r} does not match the model's {mine!r}")
    if schema.systems is not None and len(schema.systems) != schema.n_systems:
        raise invalid("input.systems", f"must name {schema.n_systems} system(s)")
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
    return read_model(file, key, max_bytes, loadable_classes())


def read_model(file, key, max_bytes, classes):
    """The model of a model file, every part checked (see :func:`load`), built of ``classes``
    (:func:`focal.models.registry.loadable_classes`: the estimators, or the NumPy-only models of
    :mod:`focal.runtime`).
    """
    from .integrity import check_depth, check_usable, read_model_bytes, unseal

    name = str(getattr(file, "name", "<stream>")) if hasattr(file, "read") else os.fspath(file)
    try:
        name, data = read_model_bytes(file, max_bytes)
        document, sealed = unseal(data, key)
        doc = parse(document)
        check_depth(doc)
        if not sealed and isinstance(doc, dict):
            doc.pop("integrity", None)  # re-formatted: the document's own checksum decides
        model = _decode_document(doc, classes)
        check_usable(model)
        return model
    except ValueError as exc:
        message = str(exc)
        raise ValueError(
            message if message.startswith(f"{name}: ") else f"{name}: {message}"
        ) from None
    except RecursionError:
        raise ValueError(f"{name}: JSON nested too deeply: not a focal model") from None
