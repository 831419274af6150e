"""Validate the numpydoc docstrings of focal's public API; exit 1 listing every finding.

The public API is every function and class named in the ``__all__`` of the packages below (the
estimators' public methods included). Each must have a docstring whose Parameters section
documents exactly the parameters of its signature, in order and with a type, and whose Returns
(or Yields) section exists when it returns a value. A result class (built by focal rather than
by its users) may document its constructor's parameters under Attributes instead.

Run from the repository root: ``python .ci/numpydoc_check.py``.
"""

from __future__ import annotations

import importlib
import inspect
import sys

from numpydoc.docscrape import ClassDoc
from numpydoc.validate import validate

PACKAGES = (
    "focal",
    "focal.core",
    "focal.metrics",
    "focal.estimators",
    "focal.io",
    "focal.std",
    "focal.plots",
    "focal.dask",
)

# numpydoc's codes (https://numpydoc.readthedocs.io/en/latest/validation.html) checked here:
CHECKS = {
    "GL06",  # unknown section
    "GL07",  # sections in the wrong order
    "GL08",  # no docstring
    "SS01",  # no summary
    "PR01",  # a parameter of the signature is not documented
    "PR02",  # a documented parameter is not in the signature
    "PR03",  # parameters documented in another order than the signature's
    "PR04",  # a parameter has no type
    "PR07",  # a parameter has no description
    "PR10",  # "name: type" instead of "name : type"
    "RT01",  # returns a value but has no Returns section
    "RT03",  # a return value has no description
    "YD01",  # a generator without a Yields section
}


def _public_objects():
    """Yield ``(import path, object)`` for every public function, class and method."""
    seen = set()
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not callable(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            yield f"{package}.{name}", obj
            if inspect.isclass(obj) and not issubclass(obj, BaseException):
                yield from _public_methods(f"{package}.{name}", obj)


def _public_methods(path, cls):
    """The public methods defined by focal on ``cls`` (not those inherited from elsewhere)."""
    for name, member in vars(cls).items():
        if name.startswith("_") or not inspect.isfunction(member):
            continue
        yield f"{path}.{name}", member


def _attributes_document_fields(obj, errors):
    """Accept a result class without Parameters whose Attributes document its constructor.

    Result objects (dataclasses and the like) are built by focal, not by its users: their
    fields are documented as Attributes. Such a class passes PR01 / PR02 / PR03 when every
    parameter of its constructor is documented there.
    """
    if not inspect.isclass(obj):
        return errors
    doc = ClassDoc(obj, config={"show_class_members": False})
    if doc["Parameters"] or not doc["Attributes"]:
        return errors
    documented = set()
    for item in doc["Attributes"]:
        documented.update(n.strip() for n in item.name.split(","))
    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return errors
    names = {p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    missing = sorted(names - documented)
    kept = [(c, m) for c, m in errors if c not in {"PR01", "PR02", "PR03"}]
    if missing:
        kept.append(("PR01", f"parameters {missing} not documented (Parameters or Attributes)"))
    return kept


def main():
    """Validate every public object; print the findings and return the exit status."""
    findings = []
    n_checked = 0
    for path, obj in _public_objects():
        n_checked += 1
        result = validate(path)
        errors = [(c, m) for c, m in result["errors"] if c in CHECKS]
        errors = _attributes_document_fields(obj, errors)
        findings.extend(f"{path}: {code} {message}" for code, message in errors)
    print("\n".join(findings))
    print(f"numpydoc: {n_checked} public objects checked, {len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
