"""Package attributes imported on first use (PEP 562), so that importing a package stays light.

``focal``, ``focal.core``, ``focal.metrics`` and ``focal.io`` name their public functions and
classes in a table ``{submodule: names}`` instead of importing every submodule at once:
``focal.metrics.cllr`` and ``from focal.metrics import cllr`` import ``focal.metrics.binary``
(and what it needs) the first time, and the name is then an ordinary module attribute.
"""

from __future__ import annotations

import importlib
import sys
import types

__all__ = ["attach"]


def attach(package: str, table: dict, submodules=()):
    """``(__getattr__, __dir__, __all__)`` for a package whose names load on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    table : dict of str to tuple of str
        Submodule (relative, e.g. ``".binary"``, or absolute) -> the names it gives.
    submodules : iterable of str
        Subpackages or submodules also reachable as attributes (``focal.metrics``).

    Returns
    -------
    __getattr__, __dir__ : callables
    __all__ : list of str
        Every name of ``table``, in order.
    """
    where = {name: module for module, names in table.items() for name in names}
    submodules = tuple(submodules)
    shadowed = {name for name in where if f".{name}" in table}
    if shadowed:  # e.g. the function focal.core.pav and the module focal.core.pav
        module = sys.modules[package]
        module.__class__ = type(
            "LazyPackage",
            (types.ModuleType,),
            {"__setattr__": _function_wins, "_shadowed": frozenset(shadowed)},
        )

    def __getattr__(name):
        module = where.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module, package), name)
        elif name in submodules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(where) | set(submodules))

    return __getattr__, __dir__, list(where)


def _function_wins(self, name, value):
    """Importing a submodule sets it as an attribute of its package; where a function of the
    package has the submodule's name, the function keeps the name (as an eager ``from .pav
    import pav`` in ``__init__`` would have it).
    """
    if isinstance(value, types.ModuleType) and name in type(self)._shadowed:
        return
    types.ModuleType.__setattr__(self, name, value)
