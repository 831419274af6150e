"""The front of model loading: bounded reading, a checksum of the raw bytes, keyed signatures,
strict JSON parsing, nesting depth, the document's canonical checksum and layout, and a last
check that a loaded model gives usable numbers.

A model file written by :func:`focal.save` ends with an ``integrity`` field, on a line of its
own, after every other field::

    {
      ...,
      "sha256": "...",
      "integrity": {"sha256": "<64 hex>", "hmac_sha256": "<64 hex>"}
    }

Both digests cover the file's bytes before that line (up to the comma that precedes it; CRLF
line ends read as LF, so a checkout that converts line ends does not break the check):
``sha256`` always, ``hmac_sha256`` (HMAC-SHA256, RFC 2104, with the user's key) when the model
was saved with a key. They are checked on the raw bytes, in one linear pass, *before* the JSON
is parsed, so a damaged or edited file is refused at the speed of SHA-256 whatever its content.
The document without that line is the model document proper (its own ``sha256`` of the canonical
form is checked as before).

What the checksums are for: ``sha256`` detects damage (truncation, a flipped bit, an edit that
forgot to update it); anyone can recompute it, so it proves nothing about who wrote the file.
``hmac_sha256`` can only be computed with the key: a file that passes it was written by someone
holding the key (authenticity), as long as the key stays secret.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from .schema import model_steps

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_JSON_DEPTH",
    "read_model_bytes",
    "seal",
    "unseal",
    "check_depth",
    "check_usable",
    "canonical",
    "digest",
    "pretty",
    "parse",
]

#: Largest model file :func:`focal.load` reads by default (bytes)
DEFAULT_MAX_BYTES = 256 * 2**20
#: Deepest nesting of JSON arrays / objects accepted in a model file
MAX_JSON_DEPTH = 64
_READ = 1 << 20
_SEAL = re.compile(
    rb',\r?\n[ \t]*"integrity": \{"sha256": "([0-9a-f]{64})"'
    rb'(?:, "hmac_sha256": "([0-9a-f]{64})")?\}\r?\n\}\s*\Z'
)
_TAIL = 300  # the seal line is shorter than this
_WIDTH = 100  # the writer's line width


def read_model_bytes(file, max_bytes=DEFAULT_MAX_BYTES):
    """(name, bytes) of a model file or file object, read in blocks and refused early.

    Refused with a ``ValueError`` (without the file name: the caller adds it): more than
    ``max_bytes`` bytes (checked on the size of a regular file before reading), a NUL byte
    (a binary file, ``/dev/zero``, ``/dev/urandom``: found in the first block), or a first
    non-blank byte other than ``{``.
    """
    max_bytes = _check_max_bytes(max_bytes)
    if hasattr(file, "read"):
        name = str(getattr(file, "name", "<stream>"))
        return name, _read_blocks(file, max_bytes, name)
    from .._text.outputs import open_input

    name = os.fspath(file)
    with open_input(name) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > max_bytes:
            raise ValueError(
                f"{name}: {size:,} bytes, larger than the {max_bytes:,} bytes a "
                f"model file may have (max_bytes)"
            )
        return name, _read_blocks(handle, max_bytes, name)


def _check_max_bytes(max_bytes):
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, np.integer)) or max_bytes < 1:
        raise ValueError(f"max_bytes must be a positive integer, got {max_bytes!r}")
    return int(max_bytes)


def _read_blocks(handle, max_bytes, name):
    parts, total = [], 0
    while True:
        chunk = handle.read(min(_READ, max_bytes + 1 - total))
        if not chunk:
            break
        if isinstance(chunk, str):
            try:
                chunk = chunk.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(f"{name}: not UTF-8 text ({exc.reason})") from None
        nul = chunk.find(b"\x00")
        if nul >= 0:
            raise ValueError(
                f"{name}: NUL byte at byte {total + nul}: not a focal model file (JSON text)"
            )
        if not total:
            head = chunk.lstrip(b" \t\r\n")
            if head and not head.startswith((b"{", b"\xef\xbb\xbf{")):
                raise ValueError(f"{name}: not a focal model file (JSON text starting with '{{')")
        parts.append(chunk)
        total += len(chunk)
        if total > max_bytes:
            raise ValueError(
                f"{name}: larger than the {max_bytes:,} bytes a model file may have (max_bytes)"
            )
    return b"".join(parts)


def _as_key(key):
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not isinstance(key, (bytes, bytearray)) or not key:
        raise ValueError("key must be non-empty bytes or str")
    return bytes(key)


def seal(text: bytes, key=None) -> bytes:
    r"""Append the ``integrity`` line to the JSON text of a model document (ending ``\n}\n``)."""
    body = text.rstrip()
    if not body.endswith(b"}"):
        raise ValueError("a model document must be a JSON object")
    body = body[:-1].rstrip()
    fields = f'"sha256": "{hashlib.sha256(body).hexdigest()}"'
    if key is not None:
        fields += f', "hmac_sha256": "{hmac.new(_as_key(key), body, "sha256").hexdigest()}"'
    return body + b',\n  "integrity": {' + fields.encode("ascii") + b"}\n}\n"


def unseal(data: bytes, key=None) -> tuple[bytes, bool]:
    """The model document of a file's bytes, its ``integrity`` line checked and removed.

    Returns ``(document, sealed)``. A file without the line where :func:`seal` puts it
    (saved by a focal before it existed, or re-formatted since) is returned as it is with
    ``sealed`` False: only the document's own checksum then protects it, after parsing.
    With ``key`` given, a valid signature is required. Raises ``ValueError`` (without the
    file name) on a mismatch.
    """
    match = _SEAL.search(data, max(0, len(data) - _TAIL))
    if match is None:
        if key is not None:
            raise ValueError(
                "the file has no signature (hmac_sha256) where focal.save writes "
                "it, but a key was given: it was saved without a key, or was "
                "modified since"
            )
        return data, False
    body = data[: match.start()].replace(b"\r\n", b"\n")  # a CRLF checkout is no damage
    if not hmac.compare_digest(hashlib.sha256(body).hexdigest().encode(), match.group(1)):
        raise ValueError(
            "integrity.sha256: the checksum of the file's bytes does not match: "
            "the file was damaged or modified after it was saved"
        )
    if key is not None:
        if match.group(2) is None:
            raise ValueError(
                "the file has no signature (hmac_sha256), but a key was given: it "
                "was saved without a key"
            )
        expected = hmac.new(_as_key(key), body, "sha256").hexdigest().encode()
        if not hmac.compare_digest(expected, match.group(2)):
            raise ValueError(
                "integrity.hmac_sha256: the signature does not match: the file "
                "was not saved with this key, or was modified since"
            )
    return body + b"\n}\n", True


def check_depth(doc, limit=MAX_JSON_DEPTH) -> None:
    """Refuse JSON nested deeper than ``limit`` (an iterative walk: no recursion)."""
    stack = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            raise ValueError(f"JSON nested more than {limit} levels deep: not a focal model")
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))


_PROBE = (0.0, 1.0, -1.0, 10.0, -10.0, 100.0, -100.0)


def allows_infinite(model) -> bool:
    """True when a step stores infinite fitted numbers (an unbounded PAV or ROCCH: +/-inf
    log-likelihood ratios are part of the model, outside the range of the training scores).
    """
    for step in model_steps(model):
        for name, value in vars(step).items():
            if (
                name.endswith("_")
                and isinstance(value, np.ndarray)
                and value.dtype.kind == "f"
                and np.isinf(value).any()
            ):
                return True
    return False


def check_usable(model) -> None:
    """Refuse a model whose output on ordinary scores is not usable.

    The model is applied to scores 0, +/-1, +/-10, +/-100 (every input equal, and alternating
    signs). NaN is refused; so is +/-inf, unless the model itself stores infinite numbers (an
    unbounded PAV calibration). A container library chosen with ``set_output`` that cannot be
    imported here is refused too. Raises ``ValueError`` (without the file name).
    """
    steps = model_steps(model)
    first = steps[0] if steps else model
    n = getattr(first, "n_features_in_", None)
    if not isinstance(n, (int, np.integer)) or not 1 <= n <= 100_000:
        return
    rows = [np.full(n, v) for v in _PROBE]
    rows += [np.where(np.arange(n) % 2 == 0, v, -v) for v in _PROBE[1::2]]
    X = np.array(rows, dtype=np.float64)
    apply = getattr(model, "transform", None) or getattr(model, "decision_function", None)
    if apply is None:
        return
    if hasattr(first, "measures_"):
        apply = _with_quality(model, first)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            Y = np.asarray(apply(X), dtype=np.float64)
    except ImportError as exc:
        raise ValueError(
            f"the model was saved with set_output for a library that cannot be "
            f"imported here ({exc}); install it, or call set_output(transform="
            f"'default') on a model saved without it"
        ) from None
    except (ValueError, FloatingPointError, OverflowError, ZeroDivisionError) as exc:
        raise ValueError(
            f"numerically unusable parameters: the model fails on ordinary "
            f"scores (|score| <= 100): {exc}"
        ) from None
    bad = np.isnan(Y) | (np.isinf(Y) & (not allows_infinite(model)))
    if bad.any():
        row = int(np.flatnonzero(bad.reshape(len(X), -1).any(axis=1))[0])
        what = "NaN" if np.isnan(Y).any() else "infinite output"
        raise ValueError(
            f"numerically unusable parameters: the model gives {what} for the "
            f"ordinary scores {_show_row(X[row])} (e.g. coefficients or means "
            f"near the float64 limit)"
        )


def _with_quality(model, first):
    """``apply(X)`` of a quality fusion (alone or first in a pipeline): the outputs with every
    quality measure missing (the affine back-off) and with every measure 0.5 (inside the domain
    of every transform) side by side.
    """
    rest = model[1:] if getattr(model, "steps", None) and len(model.steps) > 1 else None

    def apply(X):
        out = []
        for value in (np.nan, 0.5):
            Q = np.full((X.shape[0], 2 * len(first.measures_)), value)
            Y = first.transform(X, quality=Q)
            out.append(Y if rest is None else rest.transform(Y))
        return np.column_stack(out)

    return apply


def _show_row(x):
    shown = ", ".join(f"{v:g}" for v in x[:4])
    return f"[{shown}{', ...' if x.size > 4 else ''}]"


# ---------------------------------------------------------------------------------------------
# the document as text


def canonical(payload) -> bytes:
    """The canonical form of a document (sorted keys, no spaces, ASCII) that ``sha256``
    covers.
    """
    return json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    ).encode("ascii")


def digest(payload) -> str:
    """SHA-256 (hex) of the document's :func:`canonical` form."""
    return hashlib.sha256(canonical(payload)).hexdigest()


def pretty(value, indent=0) -> str:
    """JSON text for people: short values on one line, long number lists wrapped at _WIDTH."""
    pad = "  " * indent
    compact = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))
    if len(compact) + len(pad) <= _WIDTH - 20 or not isinstance(value, (dict, list)):
        return compact
    inner = "  " * (indent + 1)
    if isinstance(value, dict):
        items = [
            f"{inner}{json.dumps(k, ensure_ascii=False)}: {pretty(v, indent + 1)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if any(isinstance(v, (dict, list)) for v in value):
        return "[\n" + ",\n".join(inner + pretty(v, indent + 1) for v in value) + "\n" + pad + "]"
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


def _reject_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text):
    value = float(text)
    if not np.isfinite(value):
        raise ValueError(f"the number {text[:40]} overflows")
    return value


def _unique_keys(pairs):
    """The JSON object of ``pairs``; a key given twice (the first one repeated, found in one
    pass: linear time, however many keys) is a ValueError.
    """
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key[:80]!r}")
            seen.add(key)
    return obj


def parse(data) -> dict:
    """Strict JSON: UTF-8, no duplicate keys, no NaN / Infinity, no overflowing numbers."""
    if isinstance(data, str):
        text = data
    else:
        try:
            text = bytes(data).decode("utf-8")
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
