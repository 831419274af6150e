"""Binary trial files that are not text: BOSARIS HDF5 Scores / Key / Ndx (optional ``h5py``,
extra ``hdf5``) and parquet tables (optional ``pyarrow``, extra ``fast``).

Both are recognised by their magic bytes, whatever the file is called. The BOSARIS toolkit
(Brümmer and de Villiers, "The BOSARIS Toolkit: Theory, Algorithms and Code for Surviving the
New DCF", 2011) saves a model-by-segment matrix with the ids in ``/ID/row_ids`` (models) and
``/ID/column_ids`` (segments): ``Scores.save_hdf5`` writes ``/scores`` and ``/score_mask``,
``Key.save_hdf5`` writes ``/trial_mask`` (+1 target, -1 non-target, 0 no trial; older files
``/tar`` and ``/non``), ``Ndx.save_hdf5`` writes ``/trial_mask``. The trials are the masked
cells, in row-major order; a matrix stored transposed (segments by models) is recognised by
its shape, and a square one is read as models by segments, the order h5py shows for files
written with ``V71Dimensions``. Parquet tables name their columns: the layout's header names, or
the role names (``model``/``enrol``, ``test``/``segment``, ``score``/``llr``,
``label``/``key``).
"""

from __future__ import annotations

import numpy as np

from ..exceptions import FileFormatError

__all__ = ["WordFields", "read_table", "table_kind"]

HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
PARQUET_MAGIC = b"PAR1"
_NAMES = {
    "model": ("model", "enrol", "enroll", "modelid", "model_id"),
    "test": ("test", "segment", "segmentid", "segment_id", "seg"),
    "score": ("score", "llr", "LLR"),
    "label": ("label", "key", "targettype"),
}


class WordFields:
    """The part of :class:`focal._text.fields.Fields` a label column reads, over a bytes array."""

    def __init__(self, words, lines):
        self._words, self.lines = words, lines

    def ids(self, column):
        return self._words


def table_kind(path):
    """``"hdf5"``, ``"parquet"`` or None (text) from the first bytes of a regular file."""
    if path == "-":
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return None  # the text reader reports it
    if head == HDF5_MAGIC:
        return "hdf5"
    if head[:4] == PARQUET_MAGIC:
        return "parquet"
    return None


def _optional(module, extra, path):
    try:
        return __import__(module)
    except ImportError:
        raise ValueError(
            f'{path}: reading this file needs {module} (the "{extra}" extra): pip install {module}'
        ) from None


def read_table(path, kind, layout, want, label_value):
    """``(models, tests, {role: values})`` of an HDF5 or parquet trial file.

    ``label_value(words, path)`` turns a parquet label column (bytes array) into booleans.
    """
    if kind == "hdf5":
        return _read_hdf5(path, want)
    return _read_parquet(path, layout, want, label_value)


def _ids(dataset):
    values = dataset[()]
    values = np.asarray(values).ravel()
    if values.dtype.kind == "O":
        values = np.array([v if isinstance(v, bytes) else str(v).encode() for v in values])
    elif values.dtype.kind == "U":
        values = np.char.encode(values, "utf-8")
    from ._ids import as_id_array

    return as_id_array(values)


def _read_hdf5(path, want):
    h5py = _optional("h5py", "hdf5", path)
    try:
        with h5py.File(path, "r") as f:
            return _read_bosaris(f, path, want)
    except (OSError, KeyError, TypeError) as err:
        # the file was opened and read as bytes already (table_kind), so this is h5py failing
        # on a damaged or foreign file, a format error rather than the system's
        raise FileFormatError(path, None, f"not a readable HDF5 file ({err})") from None


def _read_bosaris(f, path, want):
    """The trials of an open BOSARIS HDF5 file ``f`` (see :func:`read_table`)."""
    if "ID" not in f or "row_ids" not in f["ID"] or "column_ids" not in f["ID"]:
        raise ValueError(f"{path}: not a BOSARIS HDF5 file (no /ID/row_ids, /ID/column_ids)")
    models, segments = _ids(f["ID/row_ids"]), _ids(f["ID/column_ids"])
    shape = (models.size, segments.size)

    def matrix(name):
        m = np.asarray(f[name][()])
        if m.shape == shape:
            return m
        if m.T.shape == shape:
            return m.T
        raise ValueError(
            f"{path}: /{name} has shape {m.shape}, not ({shape[0]} models, {shape[1]} segments)"
        )

    values = {}
    if "score" in want:
        if "scores" not in f:
            raise ValueError(f"{path}: no /scores: a BOSARIS Key or Ndx, not Scores")
        mask = (
            matrix("score_mask").astype(bool) if "score_mask" in f else np.ones(shape, dtype=bool)
        )
        scores = matrix("scores").astype(np.float64)
    if "label" in want:
        if "trial_mask" in f and "scores" not in f:
            trial = matrix("trial_mask").astype(np.int8)
            if not (trial < 0).any() and "file_format" not in f:
                raise ValueError(f"{path}: a BOSARIS Ndx (trials without labels), not a Key")
            tar, non = trial > 0, trial < 0
        elif "tar" in f and "non" in f:
            tar, non = matrix("tar").astype(bool), matrix("non").astype(bool)
        else:
            raise ValueError(f"{path}: no /trial_mask or /tar, /non: not a BOSARIS Key")
        if "score" in want and not np.array_equal(mask, tar | non):
            raise ValueError(f"{path}: the score mask and the key's trials differ")
        mask = tar | non
        values["label"] = tar[mask]
    if "score" in want:
        values["score"] = scores[mask]
        if np.isnan(values["score"]).any():
            raise ValueError(f"{path}: a masked-in score is NaN")
    rows, cols = np.nonzero(mask)
    return models[rows], segments[cols], values


def _column(table, layout, role, path):
    names = [layout.names[role]] if role in layout.names else list(_NAMES[role])
    for name in names:
        if name in table.column_names:
            return table.column(name)
    raise ValueError(
        f"{path}: no {role} column (looked for {', '.join(names)}; found "
        f"{', '.join(table.column_names)})"
    )


def _read_parquet(path, layout, want, label_value):
    _optional("pyarrow", "fast", path)
    import pyarrow.parquet as pq

    table = pq.read_table(path)

    def ids(role):
        return _arrow_ids(_column(table, layout, role, path), path, role)

    values = {}
    if "score" in want:
        scores = _column(table, layout, "score", path).to_numpy(zero_copy_only=False)
        values["score"] = np.asarray(scores, dtype=np.float64)
        if np.isnan(values["score"]).any():
            i = int(np.argmax(np.isnan(values["score"])))
            raise ValueError(f"{path}: row {i + 1}: score is NaN (or missing)")
    if "label" in want:
        column = _column(table, layout, "label", path).to_numpy(zero_copy_only=False)
        if column.dtype == bool:
            values["label"] = column
        else:
            values["label"] = label_value(ids("label"), path)
    return ids("model"), ids("test"), values


def _arrow_ids(column, path, role):
    """A string column as a fixed-width bytes array, from its offsets and data buffers (no
    Python object per value).
    """
    import pyarrow as pa

    from .._text.blocks import FRONT, PAD, gather_ids

    if column.null_count:
        raise ValueError(f"{path}: the {role} column has {column.null_count} missing value(s)")
    if not (
        pa.types.is_string(column.type)
        or pa.types.is_large_string(column.type)
        or pa.types.is_binary(column.type)
        or pa.types.is_large_binary(column.type)
    ):
        column = column.cast(pa.string())
    pieces = []
    for chunk in column.chunks:
        _, offsets, data = chunk.buffers()
        wide = pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type)
        offsets = np.frombuffer(offsets, dtype=np.int64 if wide else np.int32)
        offsets = offsets[chunk.offset : chunk.offset + len(chunk) + 1].astype(np.int64)
        raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
        text = np.zeros(FRONT + raw.size + PAD, dtype=np.uint8)
        text[FRONT : FRONT + raw.size] = raw
        lengths = np.diff(offsets)
        if (lengths == 0).any():
            raise ValueError(f"{path}: row {int(np.argmax(lengths == 0)) + 1}: empty {role} id")
        pieces.append(gather_ids(text, offsets[:-1] + FRONT, lengths))
    if not pieces:
        return np.zeros(0, dtype="S8")
    width = max(p.dtype.itemsize for p in pieces)
    return np.concatenate([p.astype(f"S{width}") for p in pieces])
