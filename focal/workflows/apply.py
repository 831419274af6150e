"""Apply a fitted model to score files: :func:`apply_model`, what ``focal apply`` runs, and
:func:`apply_to_files`, any per-trial transform streamed over the systems' files.

The model's input schema (:mod:`focal.models.schema`) says what it takes: binary or multiclass, how
many systems and which, and the classes in column order. The files are opened once each; what
their first records say (format, header, Albayzin task and condition) is checked against the
schema before any trial is transformed, class columns are reordered by name, and the output
is streamed a chunk at a time: the files are read side by side (:mod:`focal.io.stream`), the
transform runs in the calling thread, and the output is formatted and written in a thread of its
own, one chunk behind.

References
----------
.. [1] :cite:t:`albayzin2012plan` ("Albayzin plan").
"""

from __future__ import annotations

import gzip
import os
import warnings
from typing import NamedTuple

import numpy as np

from .._text.blocks import BLOCK_BYTES
from .._text.fields import format_lines
from .._text.numbers import format_numbers
from .._text.outputs import check_output, write_output
from .._text.pool import in_order
from ..io.multiclass import ALBAYZIN_CLASSES, check_one_task
from ..io.stream import _check_kind, _check_same_classes, _describe, stream
from ..models.integrity import allows_infinite

__all__ = ["apply_model", "apply_to_files", "apply_quality_model", "quality_step"]


def _check_systems(schema, paths, names=None):
    """The number and (when the model knows them) the names of the systems: ``names`` given,
    else the files' (:func:`focal.models.schema.system_names`).
    """
    from ..models.schema import system_names

    if names is not None and len(names) != len(paths):
        raise ValueError(f"systems: {len(names)} name(s) for {len(paths)} score file(s)")
    if len(paths) != schema.n_systems:
        names = f" ({', '.join(schema.systems)})" if schema.systems else ""
        raise ValueError(
            f"the model takes {schema.n_systems} system(s){names}, {len(paths)} score file(s) given"
        )
    if schema.systems is None or (len(paths) == 1 and names is None):
        return  # one system: there is no order to get wrong, and dev / eval names differ
    given = tuple(names) if names is not None else system_names(paths)
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
    named = "are named" if names is not None else "name"
    raise ValueError(
        f"{'; '.join(parts)}: the model takes {', '.join(expected)} (from the "
        f"names of its training files), the files {named} {', '.join(given)}"
        + ("" if names is not None else " (name them with systems=, focal: --systems)")
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
    output_format: str | None = None,
    systems=None,
    scores_are: str = "llr",
    log10: bool = False,
) -> int:
    """Apply a fitted model to the systems' score files and write its output.

    Parameters
    ----------
    model : fitted focal estimator or Pipeline, or a model of :func:`focal.runtime.load`
        E.g. from :func:`focal.load`, or (NumPy alone) :func:`focal.runtime.load`. Its input
        schema (:func:`focal.models.schema.input_schema`) gives the number and names of its systems
        and its classes in column order.
    paths : sequence of path-like
        One score file per system, in the model's order. Binary models take ``model test
        score`` files; multiclass models Albayzin 2012 or generic files (with a header), of one
        task and condition. The class columns of each file are matched to the model's classes
        by name, in whatever order its header lists them.
    output : path-like
        Written in the layout of the first input (binary: each of its records as read, its
        header line, label and other columns kept, the score replaced by the LLR; an HDF5 or
        parquet input gives ``model test llr`` lines; Albayzin: the task and the condition of
        the inputs, or ``condition``; generic: a header with the model's class order);
        gzip-compressed when its name ends in ``.gz``. Never over an input (by any path or
        link); atomically, or streamed to ``-`` and pipes
        (``focal._text.outputs.write_output``).
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
        Columns of binary score files (:func:`focal.io.read_scores`; default ``bosaris``).
    output_format : str, optional
        Binary output in another layout than the input's: a preset of
        :data:`focal.io.formats.PRESETS` (its score file's columns: ``nist-sre`` with its header
        and tab-separated, its ``side`` column taken from the input or ``a`` as the NIST SRE
        plans use it; ``wespeaker`` and ``speechbrain`` with the input's labels in their words,
        target/nontarget and 1/0; the others ``model test llr``).
    systems : sequence of str, optional
        The system of each file, checked against the model's systems instead of the names
        the files' names give (e.g. a renamed eval file).
    scores_are : {"llr", "distance"}, default "llr"
        ``"distance"``: the files hold distances (lower = target); refused unless the model's
        fusion gives every system a negative weight (a model trained on distances).
    log10 : bool, default False
        Write log10 likelihood-ratios (the natural-log LLRs divided by ``ln 10``), binary
        models only. The inputs are read as they are: a calibrator's map absorbs their scale.

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
    from ..models.schema import input_schema, model_steps
    from .train import check_score_direction

    schema = input_schema(model)
    paths = [os.fspath(p) for p in paths]
    output = os.fspath(output)
    check_output(output, paths)
    _check_output_format(output_format, schema.kind, format)
    if log10 and schema.kind != "binary":
        raise ValueError("log10 is for binary models (likelihood-ratios), not log-likelihoods")
    scale = 1.0 / np.log(10.0) if log10 else None
    if len(paths) != schema.n_systems or systems is not None:
        _check_systems(schema, paths, systems)
    check_score_direction(model, schema.systems or paths, scores_are, refuse=True)
    if allow_infinite is None:  # as the model asks: it stores infinite LLRs (unbounded PAV)
        allow_infinite = allows_infinite(model)
    kind = "binary" if schema.kind == "binary" else "auto"
    with stream(
        paths,
        kind=kind,
        on_mismatch="align" if align else "error",
        missing=missing,
        block_bytes=block_bytes,
        threads=threads,
        format=format,
        records=True,
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
        _check_systems(schema, paths, systems)  # after what the files say of themselves
        fmt = output_layout(layouts[0], condition, classes, output_format)

        def transform(X):
            with warnings.catch_warnings(), np.errstate(over="ignore", invalid="ignore"):
                # the names were checked above, against the files' names; an overflow is
                # refused below, with the file and line
                warnings.filterwarnings("ignore", message="X does not have valid feature names")
                Y = model.transform(X if columns is None else X[:, columns])
                return Y if scale is None else Y * scale

        return write_applied(
            transform,
            files.chunks(chunk_size),
            output,
            fmt,
            inputs=paths,
            allow_infinite=allow_infinite,
            path=paths[0],
            executor=files.executor,
        )


def _check_output_format(preset, kind, format):
    """Refuse, before any work, an ``output_format`` that cannot be written."""
    if preset is None:
        return
    from ..io.formats import PRESETS, score_layout

    if preset not in PRESETS:
        raise ValueError(f"output_format must be one of {', '.join(PRESETS)}, got {preset!r}")
    if kind != "binary":
        raise ValueError("output_format is for binary score files (multiclass files keep theirs)")
    if PRESETS[preset][0].has("label") and not score_layout(format).has("label"):
        raise ValueError(
            f"output format {preset} has a label column, and the input's layout "
            f"({score_layout(format).name}) has none: there is no label to write"
        )


def _check_output(Y, chunk, n_out, kind, allow_infinite=True, path=None):
    Y = np.asarray(Y, dtype=np.float64)
    n = len(chunk)
    if kind == "binary" and Y.ndim == 2 and Y.shape[1] == 1:
        Y = Y[:, 0]
    expected = (n,) if kind == "binary" else (n, n_out)
    if Y.shape != expected:
        raise ValueError(
            f"transform returned shape {Y.shape} for a chunk of shape "
            f"{chunk.X.shape}; expected {expected}"
        )
    bad = np.isnan(Y) if allow_infinite else ~np.isfinite(Y)
    if bad.any():
        i = int(np.flatnonzero(bad.reshape(n, -1).any(axis=1))[0])
        value = Y.reshape(n, -1)[i][bad.reshape(n, -1)[i]][0]
        where = f"{path}:{int(chunk.lines[i])}: " if path and chunk.lines is not None else ""
        raise ValueError(
            f"{where}transform returned {'NaN' if np.isnan(value) else value} "
            f"for trial {_describe(chunk.ids, i)}"
            + (
                ""
                if np.isnan(value)
                else " (infinite LLRs were not asked for: check the scores, or train "
                "the model to give them, e.g. PAVCalibrator(pseudo_count=0))"
            )
        )
    return Y


def apply_to_files(
    transform,
    inputs,
    output,
    *,
    kind: str = "binary",
    chunk_size: int = 1 << 16,
    block_bytes: int = BLOCK_BYTES,
    on_mismatch: str = "error",
    missing: str = "error",
    condition: str | None = None,
    threads: int | None = None,
) -> int:
    """Apply ``transform`` to the systems' scores, chunk by chunk, and write the result.

    Parameters
    ----------
    transform : callable
        ``transform(X)`` with ``X`` of shape (n, n_systems) (binary) or
        (n, n_systems * n_classes) (multiclass, blocks side by side) returns the calibrated
        output: (n,) natural-log LLRs, or (n, n_classes) log-likelihoods. For a fitted fusion,
        pass its ``transform`` method.
    inputs : sequence of path-like
        One score file per system.
    output : path-like
        Written in the first input's layout (its records as read with the score replaced;
        Albayzin lines with the first input's task and condition, or ``condition`` if given;
        the generic format with the first input's class names); gzip-compressed when its name
        ends in ``.gz``. Refused when it is the same file as an input (through links).
        Written to a temporary file next to its resolved target and renamed on success, so a
        failure or an interruption never leaves a truncated output behind; ``-`` and devices
        or FIFOs (``/dev/stdout``) are streamed to.
    kind : {"binary", "albayzin", "multiclass"}
    chunk_size, block_bytes : int
        Trials per chunk and bytes read per block: the memory bound.
    on_mismatch : {"error", "align"}
        Files not listing the same trials in the same order: ``"error"`` (default) raises a
        ``ValueError`` naming the files, lines and trials; ``"align"`` reads the files whole and
        aligns them on the trial ids (memory grows with the files) in the first file's order.
    missing : {"error", "drop"}
        With ``on_mismatch="align"``: a trial missing from some file is an error, or dropped.
    condition : {"Closed", "Open"}, optional
        Albayzin output: the condition written (default: the first input's).
    threads : int, optional
        Reader threads, see :func:`iter_score_chunks`.

    Returns
    -------
    int
        Number of trials written.

    Notes
    -----
    The output equals what the whole-file path writes (read, align, transform, write) whenever
    the transform treats rows independently and deterministically. Matrix products through BLAS
    may round differently for different chunk shapes (in the last bit), so a fusion that must be
    bit-identical between the two paths should compute row-wise sums element-wise.
    """
    _check_kind(kind)
    if not callable(transform):
        raise ValueError("transform must be callable, e.g. a fitted fusion's transform method")
    inputs = [os.fspath(p) for p in inputs]
    output = os.fspath(output)
    check_output(output, inputs)
    with stream(
        inputs,
        kind=kind,
        on_mismatch=on_mismatch,
        missing=missing,
        block_bytes=block_bytes,
        threads=threads,
        records=True,
    ) as files:
        _check_same_classes(files.layouts)
        return write_applied(
            transform,
            files.chunks(chunk_size),
            output,
            output_layout(files.layouts[0], condition),
            inputs=inputs,
            executor=files.executor,
        )


class OutputLayout(NamedTuple):
    """How :func:`write_applied` writes a file (see :func:`output_layout`)."""

    kind: str  #: "binary", "albayzin" or "multiclass"
    header: bytes  #: the first line (binary: the first input's header, from its records)
    prefix: list  #: constant fields before the ids of each line (Albayzin: task, condition)
    n_out: int  #: output values per line
    preset: str | None = None  #: binary: a preset's layout, else the first input's


def output_layout(layout, condition=None, classes=None, preset=None) -> OutputLayout:
    """How a file is written in the format of ``layout`` (the first input's): binary files in
    its own layout (its records as read, the score replaced) or, given ``preset``, in that
    preset's; Albayzin lines with its task and ``condition`` (default: its own); the generic
    format with ``classes`` (default: its own) in the header.
    """
    if layout.kind == "binary":
        header = _NIST_HEADER if preset == "nist-sre" else b""
        return OutputLayout("binary", header, [], 1, preset)
    if layout.kind == "albayzin":
        if condition is None:
            condition = layout.condition
        elif condition not in ("Closed", "Open"):
            raise ValueError(f"condition must be 'Closed' or 'Open', got {condition!r}")
        return OutputLayout(
            "albayzin",
            b"",
            [layout.task.encode(), condition.encode()],
            len(ALBAYZIN_CLASSES[layout.task]),
        )
    classes = layout.classes if classes is None else classes
    header = ("segment " + " ".join(classes) + "\n").encode()
    return OutputLayout("multiclass", header, [], len(classes))


_NIST_HEADER = b"modelid\tsegmentid\tside\tLLR\n"
_PLAIN = OutputLayout("binary", b"", [], 1)
_FORMATTED_AHEAD = 3  # chunks being formatted at most (their memory is the bound)
# gzip level 1: on 1M fused trials (40 MB of text) 0.55 s of CPU for 17.0 MB, where gzip's
# default level 6 takes 3.8 s for 15.7 MB: 7x the time for 8 % less
_GZIP_LEVEL = 1


def write_applied(
    transform,
    chunks,
    output,
    fmt,
    *,
    inputs=(),
    allow_infinite=True,
    path=None,
    with_ids=False,
    executor=None,
) -> int:
    """Write ``transform(chunk.X)`` of every chunk to ``output`` in the layout ``fmt`` of
    :func:`output_layout`, safely (``focal._text.outputs.write_output``: never over one of
    ``inputs``, atomically or streamed); non-finite outputs are refused unless
    ``allow_infinite`` (NaN always), naming ``path`` and the line. Returns the trial count.
    With ``with_ids``, ``transform(chunk.X, chunk.ids)`` gets the trial ids too (e.g. to look
    up per-segment quality measures). The chunks are formatted in ``executor`` (the readers'
    pool), if given. An output whose name ends in ``.gz`` is gzip: each chunk a gzip member of
    its own, compressed where it is formatted (RFC 1952 files may hold several members; gzip,
    zcat and focal's readers read them as one stream).
    """
    compress = os.fspath(output).lower().endswith(".gz")
    written = 0

    def _outputs():
        nonlocal written
        header = fmt.header
        for chunk in chunks:
            try:
                Y = transform(chunk.X, chunk.ids) if with_ids else transform(chunk.X)
            except ValueError as exc:  # e.g. an LLR that overflows: say where
                if path is None or chunk.lines is None:
                    raise
                raise ValueError(
                    f"{path}:{int(chunk.lines[0])}-{int(chunk.lines[-1])}: {exc}"
                ) from None
            Y = _check_output(
                Y, chunk, n_out=fmt.n_out, kind=fmt.kind, allow_infinite=allow_infinite, path=path
            )
            if written == 0:  # the header, before the first chunk's text
                if not header and fmt.preset is None and chunk.records is not None:
                    header = chunk.records.header + b"\n" if chunk.records.header else b""
                if header:
                    out.write(gzip.compress(header, _GZIP_LEVEL, mtime=0) if compress else header)
            yield chunk, Y
            written += len(chunk)

    def _texts(item):
        return _chunk_texts(*item, fmt, path, compress)

    with write_output(output, inputs) as out:
        # chunks are formatted in the readers' worker threads (focal._text.pool), a few
        # chunks ahead, and their text is written here, in order
        for texts in in_order(_texts, _outputs(), executor, _FORMATTED_AHEAD):
            _write_texts(out, texts)
    return written


def _write_texts(out, texts):
    for text in texts:
        out.write(text)


def _write_chunk(out, chunk, Y, fmt=_PLAIN):
    _write_texts(out, _chunk_texts(chunk, Y, fmt))


def _chunk_texts(chunk, Y, fmt, path=None, compress=False):
    """The output lines of a chunk, as a list of bytes-like pieces (one gzip member)."""
    texts = _chunk_lines(chunk, Y, fmt, path)
    if compress:
        return [gzip.compress(b"".join(texts), _GZIP_LEVEL, mtime=0)]
    return texts


def _chunk_lines(chunk, Y, fmt, path):
    if fmt.kind != "binary":
        return [_lines_of(fmt.prefix, chunk.ids, Y)]
    if fmt.preset is not None:
        return [_preset_lines(fmt.preset, chunk, Y, path)]
    if chunk.records is not None:  # the first input's records, the score replaced
        return chunk.records.texts(Y)
    return [_lines_of([], chunk.ids, Y)]


_LABEL_WORDS = {"wespeaker": (b"target", b"nontarget"), "speechbrain": (b"1", b"0")}


def _preset_lines(preset, chunk, Y, path):
    """Lines in the columns of ``preset``'s score files (see :func:`apply_model`)."""
    from ..io._labels import label_column
    from ..io.formats import PRESETS

    records = chunk.records
    models, tests = chunk.ids
    n = Y.shape[0]
    columns = []
    for role in PRESETS[preset][0].roles:
        if role in ("model", "test"):
            ids = models if role == "model" else tests
            columns.append(np.ascontiguousarray(ids).view(np.uint8).reshape(n, ids.dtype.itemsize))
        elif role == "score":
            columns.append(format_numbers(Y))
        elif role == "label":
            words = None if records is None else records.field("label")
            if words is None:
                raise ValueError(
                    f"{path}: no label column, and output format {preset} has one: there "
                    f"is no label to write"
                )
            lines = chunk.lines if chunk.lines is not None else np.arange(1, n + 1)
            target = label_column(words, lines, path)
            yes, no = _LABEL_WORDS[preset]
            words = np.where(target, yes, no).astype(f"S{len(no)}")
            columns.append(words.view(np.uint8).reshape(n, len(no)))
        else:  # NIST's side: the input's, else "a" (the NIST SRE plans' single side)
            side = None if records is None else records.field("side")
            if side is None:
                side = np.full(n, b"a", dtype="S1")
            columns.append(
                np.ascontiguousarray(side).view(np.uint8).reshape(n, side.dtype.itemsize)
            )
    return format_lines(columns, sep=b"\t" if preset == "nist-sre" else b" ")


def _lines_of(prefix, ids, Y):
    """Lines of constant fields, ids and values (NumPy: fixed-width columns)."""
    n = Y.shape[0]
    cols = [np.broadcast_to(np.frombuffer(p, dtype=np.uint8), (n, len(p))) for p in prefix]
    for c in ids:
        cols.append(np.ascontiguousarray(c).view(np.uint8).reshape(n, c.dtype.itemsize))
    if Y.ndim == 1:
        cols.append(format_numbers(Y))
    else:
        cols.extend(format_numbers(Y[:, k]) for k in range(Y.shape[1]))
    return format_lines(cols)


def quality_step(model):
    """The :class:`focal.QualityFusion` a model starts with (itself, or a Pipeline's first
    step), or None.
    """
    first = model.steps[0][1] if hasattr(model, "steps") else model
    return first if hasattr(first, "measures_") else None


def apply_quality_model(
    model,
    inputs,
    output,
    quality_paths=(),
    trial_paths=None,
    output_format=None,
    log10=False,
    **options,
):
    """Apply a quality fusion (or a Pipeline that starts with one) to score files, streamed.

    Parameters
    ----------
    model : QualityFusion or Pipeline
        Fitted; its first step's ``measures_`` name the measures looked up in the files.
    inputs : sequence of path-like
        One score file per system (``model test score``), in the training order.
    output : path-like
        Written as ``model test llr`` (see :func:`focal.workflows.apply_to_files`).
    quality_paths : sequence of path-like
        Quality files (header ``segment name ...``) covering the model's measures. A segment
        without a line gets NaN: its trials are given the affine back-off fusion.
    trial_paths : mapping of str to path-like, optional
        Per-trial quality files ``{"model_<m>": path, "test_<m>": path}`` (lines ``model test
        value``, :func:`read_trial_quality`), for sides not in ``quality_paths``.
    output_format : str, optional
        The output's layout, as in :func:`apply_model` (default: the first input's).
    log10 : bool, default False
        Write log10 likelihood-ratios, as in :func:`apply_model`.
    **options
        ``chunk_size``, and ``on_mismatch`` / ``missing`` / ``threads`` as in
        :func:`focal.workflows.apply_to_files`.

    Returns
    -------
    n_trials : int
        Number of trials written.
    n_backoff : int
        How many of them had a missing measure (and got the affine back-off fusion's LLR).
    """
    from ..io.quality import (
        _locate,
        check_transformable,
        read_quality,
        read_trial_quality,
        trial_quality,
    )

    scale = 1.0 / np.log(10.0) if log10 else None
    fusion = quality_step(model)
    if fusion is None:
        raise ValueError(
            "quality files were given but the model does not use quality measures "
            "(it does not start with a QualityFusion)"
        )
    if fusion.n_features_in_ != len(inputs):
        raise ValueError(
            f"the model fuses {fusion.n_features_in_} system(s), {len(inputs)} score file(s) given"
        )
    tables = read_quality(*quality_paths)
    trials = read_trial_quality(trial_paths or {})
    measures = list(fusion.measures_)
    _locate(tables, measures, trials)  # every measure is in the files, before any work
    check_transformable(tables, trials, measures, fusion._transforms(len(measures)))
    rest = model[1:] if hasattr(model, "steps") and len(model.steps) > 1 else None

    n_backoff = 0

    def transform(X, ids):
        nonlocal n_backoff
        Q, _ = trial_quality(ids[0], ids[1], tables, measures, trials)
        n_backoff += int(np.isnan(Q).any(axis=1).sum())
        llr = fusion.transform(X, quality=Q)
        llr = llr if rest is None else rest.transform(llr)
        return llr if scale is None else llr * scale

    chunk_size = options.pop("chunk_size", 1 << 16)
    inputs = [os.fspath(p) for p in inputs]
    check_output(os.fspath(output), inputs)
    _check_output_format(output_format, "binary", None)
    with stream(inputs, kind="binary", records=True, **options) as files:
        n = write_applied(
            transform,
            files.chunks(chunk_size),
            os.fspath(output),
            output_layout(files.layouts[0], preset=output_format),
            inputs=inputs,
            with_ids=True,
            allow_infinite=False,
            path=inputs[0],
            executor=files.executor,
        )
    return n, n_backoff
