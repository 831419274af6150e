"""The API reference, written from the packages' ``__all__`` at every build.

Each public package gets a page: its docstring, then a table of the names it exports with the
first paragraph of each docstring, each name linked to a page of its own (autodoc). A name that
several packages export (``focal.LogisticFusion`` is ``focal.estimators.LogisticFusion``) is
documented once, in the package that defines it (the first of :data:`HOMES` exporting it), and
the other pages link there. So a function added to a package's ``__all__`` appears in the
reference with no edit here.
"""

from __future__ import annotations

import importlib
import inspect
import pathlib

#: The packages of the reference, in the order of the index, with what each holds.
PACKAGES = (
    ("focal", "The package's face: the estimators, priors and model files most users need."),
    ("focal.metrics", "One function per measure."),
    ("focal.estimators", "scikit-learn estimators: fusion, calibration, scorers."),
    ("focal.core", "Priors, operating points, scoring rules, PAV, ROCCH."),
    ("focal.io", "Score and key files."),
    ("focal.models", "Model files: save, load, input schemas."),
    ("focal.runtime", "Saved models applied with NumPy alone."),
    ("focal.std", "Spoken term detection."),
    ("focal.plots", "Figures, Display objects and HTML reports."),
    ("focal.dask", "Evaluation and fusion on Dask."),
    ("focal.workflows", "The jobs on files that the command line runs."),
    ("focal.exceptions", "The errors focal raises."),
)

#: Where an object exported by several packages is documented: the first of these exporting it
#: (the lower layers first, where it is defined).
HOMES = (
    "focal.core",
    "focal.metrics",
    "focal.estimators",
    "focal.models",
    "focal.io",
    "focal.runtime",
    "focal.std",
    "focal.plots",
    "focal.dask",
    "focal.workflows",
    "focal.exceptions",
    "focal",
)


def _exports(package):
    """``(name, object)`` of the documented names of ``package.__all__`` (no modules)."""
    module = importlib.import_module(package)
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name)
        if name.startswith("__") or inspect.ismodule(obj):
            continue
        yield name, obj


def _documented_by_identity(obj) -> bool:
    """Functions and classes are found again by identity; data (a dict, a tuple) is not."""
    return inspect.isclass(obj) or inspect.isroutine(obj)


def _homes():
    """``{id(object): "package.name"}`` for every exported function and class."""
    homes = {}
    for package in HOMES:
        for name, obj in _exports(package):
            if _documented_by_identity(obj):
                homes.setdefault(id(obj), f"{package}.{name}")
    return homes


def _directive(obj) -> tuple[str, str]:
    """The autodoc directive and the cross-reference role of an object."""
    if inspect.isclass(obj):
        return "autoclass", "class"
    if inspect.isroutine(obj):
        return "autofunction", "func"
    return "autodata", "data"


def _summary(obj) -> str:
    """The first paragraph of the docstring, on one line (data: none, its type's would show)."""
    if not _documented_by_identity(obj):
        return ""
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.split("\n\n")[0].split())


def _write(path: pathlib.Path, text: str) -> None:
    """Write a page unless it holds that text already (unchanged pages are not rebuilt)."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _object_page(full_name: str, obj) -> str:
    directive, _ = _directive(obj)
    package, name = full_name.rsplit(".", 1)
    lines = [full_name, "=" * len(full_name), "", f".. currentmodule:: {package}", ""]
    lines.append(f".. {directive}:: {name}")
    if directive == "autoclass":
        lines.append("   :members:")
    return "\n".join(lines) + "\n"


def write_pages(out: pathlib.Path) -> None:
    """Write the package pages into ``out`` and every object's page into ``out/generated``."""
    generated = out / "generated"
    generated.mkdir(parents=True, exist_ok=True)
    homes = _homes()
    pages = set()
    for package, summary in PACKAGES:
        rows, children = [], []
        for name, obj in _exports(package):
            full_name = f"{package}.{name}"
            home = homes.get(id(obj), full_name)
            _, role = _directive(obj)
            rows.append((f":{role}:`~{home}`", _summary(obj)))
            if home == full_name:
                _write(generated / f"{full_name}.rst", _object_page(full_name, obj))
                children.append(f"generated/{full_name}")
                pages.add(f"{full_name}.rst")
        title = f"``{package}``"
        lines = [title, "=" * len(title), "", summary, "", f".. automodule:: {package}", ""]
        lines += [".. toctree::", "   :hidden:", ""] + [f"   {c}" for c in children] + [""]
        if rows:
            lines += [".. list-table::", "   :widths: 30 70", "   :class: api-summary", ""]
            for reference, text in rows:
                lines += [f"   * - {reference}", f"     - {text}"]
        _write(out / f"{package}.rst", "\n".join(lines) + "\n")
    for stale in set(p.name for p in generated.glob("*.rst")) - pages:
        (generated / stale).unlink()
