"""What a fitted model expects as input: its systems, classes, kind and score-file format.

A model trained on score files must be applied to files of the same systems, in the same
order, with the same classes. :class:`InputSchema` records that identity; :func:`input_schema`
reads it off a fitted model (from ``model.input_schema_`` when training from files set it,
else from the estimators' own ``feature_names_in_`` and ``classes_``), :func:`set_input_schema`
attaches it (and the system names as ``feature_names_in_``), :func:`focal.save` writes it into
the model file and :func:`focal.load` checks it against the model and attaches it again.

System names of a multiclass model are written into ``feature_names_in_`` as
``"system:class"``, one per input column, as a DataFrame with such columns would give them.

References
----------
.. [1] :cite:t:`albayzin2012plan` ("Albayzin plan").
"""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "InputSchema",
    "input_schema",
    "set_input_schema",
    "system_names",
    "model_kind",
    "model_steps",
    "input_names",
    "check_input_names",
    "FORMATS",
]

#: Score-file formats: BOSARIS ``model test score`` lines, Albayzin 2012 system outputs and the
#: generic multiclass format with a header of class names.
FORMATS = ("bosaris", "albayzin", "multiclass")
KINDS = ("binary", "multiclass")
_SEPARATORS = re.compile(r"[_\-.\s]+")


@dataclass(frozen=True)
class InputSchema:
    """The input identity of a fitted model.

    Attributes
    ----------
    kind : {"binary", "multiclass"}
        Fused detection scores (one column per system) or class log-likelihoods (a block of
        columns per system).
    n_systems : int
    systems : tuple of str or None
        System names in input order, when known.
    classes : tuple of str or None
        Class names in column order (multiclass), when known.
    format : {"bosaris", "albayzin", "multiclass"} or None
        Score-file format trained on (None: trained on arrays).
    task, condition : str or None
        Albayzin task and condition trained on.
    notes : tuple of str
        What could not be recorded; not saved.
    """

    kind: str
    n_systems: int
    systems: tuple | None = None
    classes: tuple | None = None
    format: str | None = None
    task: str | None = None
    condition: str | None = None
    notes: tuple = field(default=(), compare=False)

    def to_dict(self) -> dict:
        """Plain-Python values for JSON."""
        return {
            "kind": self.kind,
            "n_systems": self.n_systems,
            "systems": None if self.systems is None else list(self.systems),
            "classes": None if self.classes is None else list(self.classes),
            "format": self.format,
            "task": self.task,
            "condition": self.condition,
        }


def model_steps(model):
    """The estimators of a (nested) Pipeline in order, or ``[model]``."""
    steps = getattr(model, "steps", None)
    if steps is None:
        return [model]
    out = []
    for _, est in steps:
        if est is not None and not (isinstance(est, str) and est == "passthrough"):
            out.extend(model_steps(est))
    return out


def model_kind(model) -> str:
    """``"multiclass"`` when the model's last step outputs class log-likelihoods, else
    ``"binary"``: what its ``output_kind`` says (the multiclass estimators and the runtime's
    models say it; binary ones need not).
    """
    kind = getattr(model_steps(model)[-1], "output_kind", "binary")
    return kind if kind in KINDS else "binary"


def _derived(model) -> InputSchema:
    """The schema the fitted estimators themselves tell (no file format)."""
    from ..core.validation import classes_of_feature_names

    steps = model_steps(model)
    first, last = steps[0], steps[-1]
    kind = model_kind(model)
    names = getattr(first, "feature_names_in_", None)
    n_in = int(first.n_features_in_)
    classes = None
    if kind == "multiclass":
        found = np.asarray(last.classes_)
        if found.dtype.kind in "OUS":
            classes = tuple(str(c) for c in found)
        n_classes = int(last.n_classes_)
        n_systems = getattr(last, "n_systems_", None)
        if n_systems is None or first is not last:
            n_systems = 1  # a back-end takes one system's score vector
        systems = None
        if names is not None and all(":" in str(n) for n in names):
            try:
                order = classes_of_feature_names(names)
            except ValueError:
                order = None
            if order is not None and len(order) == n_classes and first is last:
                systems = tuple(dict.fromkeys(str(n).rsplit(":", 1)[0] for n in names))
                classes = classes or tuple(order)
        return InputSchema("multiclass", int(n_systems), systems, classes)
    systems = None if names is None else tuple(str(n) for n in names)
    return InputSchema("binary", n_in, systems)


def input_schema(model) -> InputSchema:
    """The input schema of a fitted model: the one attached by :func:`set_input_schema` (or
    :func:`focal.load`) while it still agrees with the estimators (a model fitted again has
    other inputs), else what the estimators tell.
    """
    schema = getattr(model, "input_schema_", None)
    derived = _derived(model)
    if isinstance(schema, InputSchema) and all(
        getattr(derived, name) in (None, getattr(schema, name))
        for name in ("kind", "n_systems", "systems", "classes")
    ):
        return schema
    return derived


def system_names(paths) -> tuple:
    """System names of score files: their file names without the extension, less the words
    (split at ``_ - .``; and folders, when the names alone are not distinct) that all of them
    share at the start or the end, e.g.
    ``dev_sys1.scores, dev_sys2.scores -> sys1, sys2`` and ``dev/a/scores.txt, dev/b/scores.txt
    -> a, b``, so that ``eval_sys1.scores, eval_sys2.scores`` name the same systems. One file
    keeps its whole name (without the extension).
    """
    paths = [pathlib.PurePath(p) for p in paths]
    if len(paths) == 1:
        return (paths[0].stem or paths[0].name,)
    stems = [[w for w in _SEPARATORS.split(p.stem) if w] for p in paths]
    for words in (stems, [[*p.parent.parts, *w] for p, w in zip(paths, stems)]):
        while all(len(w) > 1 for w in words) and len({w[0] for w in words}) == 1:
            words = [w[1:] for w in words]
        while all(len(w) > 1 for w in words) and len({w[-1] for w in words}) == 1:
            words = [w[:-1] for w in words]
        names = tuple("_".join(w) for w in words)
        if len(set(names)) == len(names):
            return names  # the file names tell the systems apart, else their folders do
    return tuple(str(p) for p in paths)


def set_input_schema(model, *, systems=None, classes=None, format=None, task=None, condition=None):
    """Attach an input schema to a fitted model (``model.input_schema_``) and write the system
    names into the first step's ``feature_names_in_`` (``"system:class"`` for multiclass).

    Parameters
    ----------
    model : fitted focal estimator or Pipeline
    systems : sequence of str, optional
        One name per system, in input order (e.g. :func:`system_names` of the training files).
    classes : sequence of str, optional
        Class names in column order; must equal the model's ``classes_`` when those are names.
    format : {"bosaris", "albayzin", "multiclass"}, optional
        Score-file format trained on.
    task, condition : str, optional
        Albayzin task and condition trained on.

    Returns
    -------
    model
        The same model.

    Raises
    ------
    ValueError
        Names that do not fit the model (number of systems or classes, other class names), or
        an unknown format.
    """
    derived = _derived(model)
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    if classes is not None:
        classes = tuple(str(c) for c in classes)
        if derived.classes is not None and derived.classes != classes:
            raise ValueError(
                f"the model's classes {', '.join(derived.classes)} differ from {', '.join(classes)}"
            )
        last = model_steps(model)[-1]
        if derived.kind == "multiclass" and len(classes) != int(last.n_classes_):
            raise ValueError(f"{len(classes)} class names for a model of {last.n_classes_} classes")
    classes = classes or derived.classes
    if systems is not None:
        systems = tuple(str(s) for s in systems)
        if len(systems) != derived.n_systems:
            raise ValueError(
                f"{len(systems)} system names for a model of {derived.n_systems} system(s)"
            )
        first = model_steps(model)[0]
        if derived.kind == "binary":
            first.feature_names_in_ = np.asarray(systems, dtype=object)
        elif classes is not None and first is model_steps(model)[-1]:
            first.feature_names_in_ = np.asarray(
                [f"{s}:{c}" for s in systems for c in classes], dtype=object
            )
    model.input_schema_ = InputSchema(
        derived.kind,
        derived.n_systems,
        systems or derived.systems,
        classes,
        format,
        task,
        condition,
    )
    return model


# -- the columns of an input, checked by name ---------------------------------------------------


def input_names(X):
    """The column names of a data frame ``X`` (pandas, polars: anything with ``columns``) when
    they are all strings, else None (an array, or columns without names: taken by position).
    """
    if isinstance(X, np.ndarray):
        return None
    columns = getattr(X, "columns", None)
    if columns is None:
        return None
    names = list(columns)
    if not names or not all(isinstance(n, str) for n in names):
        return None
    return names


def _listed(names) -> str:
    """scikit-learn's list of names in its messages: five at most, one per line."""
    shown = [f"- {n}\n" for n in names[:5]]
    return "".join(shown) + ("- ...\n" if len(names) > 5 else "")


def check_input_names(X, feature_names_in, owner: str) -> None:
    """The one check of an input's columns, by name, for the estimators and the NumPy-only
    runtime alike: a data frame ``X`` must have exactly the columns the model was fitted on
    (``feature_names_in``), in the same order; else a ValueError names what is missing, what
    is unknown, or both orders (which column is which system is never guessed from position
    when names say otherwise). Arrays, and frames whose columns are not all named by strings,
    are taken by position, like a model fitted without names (no warning).

    The message begins with scikit-learn's own words, so the estimators keep passing its
    column-name checks.

    Parameters
    ----------
    X : array_like or data frame
        The input.
    feature_names_in : ndarray of str or None
        The model's column names (``feature_names_in_``), if it was fitted with names.
    owner : str
        The model's class, for the message.

    Raises
    ------
    ValueError
        The frame's columns differ from the model's, or are in another order.
    """
    if feature_names_in is None:
        return
    names = input_names(X)
    if names is None:
        return
    fitted = [str(n) for n in feature_names_in]
    if names == fitted:
        return
    message = "The feature names should match those that were passed during fit.\n"
    unseen = sorted(set(names) - set(fitted))
    missing = sorted(set(fitted) - set(names))
    if unseen:
        message += "Feature names unseen at fit time:\n" + _listed(unseen)
    if missing:
        message += "Feature names seen at fit time, yet now missing:\n" + _listed(missing)
    if not unseen and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
    raise ValueError(
        f"{message}X has the columns {names!r}; the {owner} takes {fitted!r}, in this order: "
        f"pass X[{fitted!r}]"
    )
