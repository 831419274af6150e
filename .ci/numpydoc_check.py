"""Validate the numpydoc docstrings of focal's public API; exit 1 listing every finding.

The public API is every function and class named in the ``__all__`` of the packages below (the
estimators' public methods included). Each must have a docstring whose Parameters section
documents exactly the parameters of its signature, in order and with a type, and whose Returns
(or Yields) section exists when it returns a value. For a dataclass (a result object, built by
focal rather than by its users) the fields may be documented under Attributes instead.

Run from the repository root: ``python .ci/numpydoc_check.py``.
"""

from __future__ import annotations

import dataclasses
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


def _dataclass_fields_documented(obj, errors):
    """Drop PR01 / PR02 / PR03 for a dataclass whose fields are documented as Attributes."""
    if not (inspect.isclass(obj) and dataclasses.is_dataclass(obj)):
        return errors
    doc = ClassDoc(obj, config={"show_class_members": False})
    documented = set()
    for section in ("Parameters", "Attributes"):
        for item in doc[section]:
            documented.update(n.strip() for n in item.name.split(","))
    fields = {f.name for f in dataclasses.fields(obj) if f.init}
    missing = sorted(fields - documented)
    kept = [(c, m) for c, m in errors if c not in {"PR01", "PR02", "PR03"}]
    if missing:
        kept.append(("PR01", f"fields {missing} not documented (Parameters or Attributes)"))
    return kept


def main():
    """Validate every public object; print the findings and return the exit status."""
    findings = []
    n_checked = 0
    for path, obj in _public_objects():
        n_checked += 1
        result = validate(path)
        errors = [(c, m) for c, m in result["errors"] if c in CHECKS]
        errors = _dataclass_fields_documented(obj, errors)
        findings.extend(f"{path}: {code} {message}" for code, message in errors)
    print("\n".join(findings))
    print(f"numpydoc: {n_checked} public objects checked, {len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
