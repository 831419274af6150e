"""Apply a fitted model to score files: :func:`apply_model`, what ``focal apply`` runs.

The model's input schema (:mod:`focal.schema`) says what it takes: binary or multiclass, how
many systems and which, and the classes in column order. The files are opened once each; what
their first records say (format, header, Albayzin task and condition) is checked against the
schema before any trial is transformed, class columns are reordered by name, and the output
is streamed a chunk at a time.

References
----------
.. [1] L. J. Rodríguez-Fuentes, N. Brümmer, M. Penagarikano, A. Varona, M. Diez and
   G. Bordel, "The Albayzin 2012 Language Recognition Evaluation Plan", evaluation plan,
   GTTS, UPV/EHU, 2012 ("Albayzin plan").
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from .._files import check_output
from .._model_integrity import allows_infinite
from ._text import BLOCK_BYTES
from .stream import open_inputs, output_format, write_applied
from .workflows import check_one_task

__all__ = ["apply_model"]


def _check_systems(schema, paths):
    """The number and (when the model knows them) the names of the systems."""
    from ..schema import system_names

    if len(paths) != schema.n_systems:
        names = f" ({', '.join(schema.systems)})" if schema.systems else ""
        raise ValueError(
            f"the model takes {schema.n_systems} system(s){names}, {len(paths)} score file(s) given"
        )
    if schema.systems is None or len(paths) == 1:
        return  # one system: there is no order to get wrong, and dev / eval names differ
    given = system_names(paths)
    if given == tuple(schema.systems):
        return
    expected = list(schema.systems)
    extra = [f"{n!r} ({p})" for n, p in zip(given, paths) if n not in expected]
    missing = [n for n in expected if n not in given]
    if not extra and not missing:
        raise ValueError(
            f"the score files give the systems in the order {', '.join(given)}; "
            f"the model takes them in the order {', '.join(expected)}"
        )
    parts = []
    if extra:
        parts.append(f"system(s) {', '.join(extra)} not in the model")
    if missing:
        parts.append(f"the model's system(s) {', '.join(map(repr, missing))} missing")
    raise ValueError(
        f"{'; '.join(parts)}: the model takes {', '.join(expected)} (from the "
        f"names of its training files), the files name {', '.join(given)}"
    )


def _class_columns(schema, n_classes, layouts):
    """Column index, into the files' side-by-side blocks, of each input the model takes: the
    files' classes reordered by name to the model's order (or, for a model that does not know
    its class names, to the first file's). Also returns the class names.
    """
    order = []
    expected, whose = schema.classes, "the model's"
    if expected is None:  # a model that does not know its class names: the first file's order
        expected, whose = tuple(layouts[0].classes), f"{layouts[0].path}'s"
        if len(expected) != n_classes:
            raise ValueError(
                f"{layouts[0].path}: {len(expected)} classes "
                f"({', '.join(expected)}); the model takes {n_classes}"
            )
    for k, layout in enumerate(layouts):
        found = list(layout.classes)
        if sorted(found) != sorted(expected) or len(found) != len(expected):
            extra = [c for c in found if c not in expected]
            missing = [c for c in expected if c not in found]
            detail = "; ".join(
                filter(
                    None,
                    [
                        f"{', '.join(map(repr, extra))} not among them" if extra else "",
                        f"{', '.join(map(repr, missing))} missing" if missing else "",
                    ],
                )
            )
            raise ValueError(
                f"{layout.path}: classes {', '.join(found)} differ from "
                f"{whose} {', '.join(expected)} ({detail})"
            )
        order.extend(k * len(found) + np.array([found.index(c) for c in expected]))
    return np.asarray(order, dtype=np.intp), tuple(expected)


def apply_model(
    model,
    paths,
    output,
    *,
    align: bool = False,
    missing: str = "error",
    condition: str | None = None,
    chunk_size: int = 1 << 16,
    block_bytes: int = BLOCK_BYTES,
    threads: int | None = None,
    allow_infinite: bool | None = None,
    format=None,
) -> int:
    """Apply a fitted model to the systems' score files and write its output.

    Parameters
    ----------
    model : fitted focal estimator or Pipeline, or a model of :func:`focal.runtime.load`
        E.g. from :func:`focal.load`, or (NumPy alone) :func:`focal.runtime.load`. Its input
        schema (:func:`focal.schema.input_schema`) gives the number and names of its systems
        and its classes in column order.
    paths : sequence of path-like
        One score file per system, in the model's order. Binary models take ``model test
        score`` files; multiclass models Albayzin 2012 or generic files (with a header), of one
        task and condition. The class columns of each file are matched to the model's classes
        by name, in whatever order its header lists them.
    output : path-like
        Written in the input format (binary: ``model test llr``; Albayzin: the task and the
        condition of the inputs, or ``condition``; generic: a header with the model's class
        order). Never over an input (by any path or link); atomically, or streamed to ``-``
        and pipes (``focal._files.write_output``).
    align : bool
        The files list the trials in different orders: read them whole and align them on the
        trial ids (memory grows with the files); ``missing`` then says what to do with trials
        absent from some file (``"error"`` or ``"drop"``).
    missing : {"error", "drop"}, default "error"
        With ``align``: a trial absent from some file is an error, or is dropped.
    condition : {"Closed", "Open"}, optional
        Condition written to an Albayzin output.
    chunk_size : int, default 65536
        Streaming: trials per chunk.
    block_bytes : int
        Streaming: bytes read per block.
    threads : int, optional
        Streaming: reader threads.
    allow_infinite : bool, optional
        Accept +/-inf outputs. Default: only from a model that stores infinite LLRs by design
        (an unbounded ``PAVCalibrator(pseudo_count=0)`` or a ``ROCCH`` whose end blocks hold one
        class). A NaN is always refused.
    format : str or Layout, optional
        Columns of binary score files (:func:`focal.io.read_scores`; default ``bosaris``); the
        output is written as ``model test llr`` lines.

    Returns
    -------
    int
        The number of trials (segments) written.

    Raises
    ------
    ValueError
        Before any output is written: a wrong number of files, system names that differ from
        the model's (renamed, missing, extra or reordered systems; one-system models are not
        checked by name), a file whose classes differ from the model's (naming both lists), a
        multiclass file of another task or condition than the others, or any reader error
        (``path:line``). While writing (the output is then not created): a non-finite output,
        ``path:line`` of the first file.

    Each input file is parsed once.
    """
    from ..schema import input_schema, model_steps

    schema = input_schema(model)
    paths = [os.fspath(p) for p in paths]
    output = os.fspath(output)
    check_output(output, paths)
    if len(paths) != schema.n_systems:
        _check_systems(schema, paths)
    if allow_infinite is None:  # as the model asks: it stores infinite LLRs (unbounded PAV)
        allow_infinite = allows_infinite(model)
    kind = "binary" if schema.kind == "binary" else "auto"
    with open_inputs(
        paths,
        kind=kind,
        on_mismatch="align" if align else "error",
        missing=missing,
        block_bytes=block_bytes,
        threads=threads,
        format=format,
    ) as files:
        layouts = files.layouts
        columns = None
        classes = None
        if schema.kind == "multiclass":
            check_one_task(layouts)
            if schema.task is not None and layouts[0].task not in (None, schema.task):
                raise ValueError(
                    f"{paths[0]}: the {layouts[0].task} task; the model was "
                    f"trained on the {schema.task} task"
                )
            n_classes = int(model_steps(model)[-1].n_classes_)
            columns, classes = _class_columns(schema, n_classes, layouts)
            if np.array_equal(columns, np.arange(columns.size)):
                columns = None
        _check_systems(schema, paths)  # after what the files say of themselves
        fmt = output_format(layouts[0], condition, classes)

        def transform(X):
            with warnings.catch_warnings(), np.errstate(over="ignore", invalid="ignore"):
                # the names were checked above, against the files' names; an overflow is
                # refused below, with the file and line
                warnings.filterwarnings("ignore", message="X does not have valid feature names")
                return model.transform(X if columns is None else X[:, columns])

        return write_applied(
            transform,
            files.chunks(chunk_size),
            output,
            fmt,
            inputs=paths,
            allow_infinite=allow_infinite,
            path=paths[0],
        )
