"""Binary trial files that are not text: BOSARIS and sidekit HDF5 Scores / Key / Ndx (optional
``h5py``, extra ``hdf5``) and parquet tables (optional ``pyarrow``, extra ``fast``).

Both are recognised by their magic bytes, whatever the file is called.

HDF5 layouts
------------
The BOSARIS toolkit (Brümmer and de Villiers, "The BOSARIS Toolkit: Theory, Algorithms and Code
for Surviving the New DCF", 2011) saves a model-by-segment matrix with the ids in
``/ID/row_ids`` (models) and ``/ID/column_ids`` (segments): ``Scores.save_hdf5`` writes
``/scores`` and ``/score_mask``, ``Key.save_hdf5`` writes ``/trial_mask`` (+1 target, -1
non-target, 0 no trial; older files ``/tar`` and ``/non``), ``Ndx.save_hdf5`` writes
``/trial_mask``. sidekit's ``Scores.write`` (A. Larcher, sidekit ``bosaris/scores.py``) keeps the
same matrices (``/scores`` float64, ``/score_mask`` int8) with the ids in ``/modelset`` and
``/segset`` (fixed-length byte strings), and its ``Key.write`` / ``Ndx.write`` the int8
``/trial_mask``. The trials are the masked cells, in row-major order; a matrix stored transposed
(segments by models) is recognised by its shape, and a square one is read as models by
segments, the order h5py shows for files written with ``V71Dimensions``. Parquet tables name
their columns: the layout's header names, or the role names (``model``/``enrol``,
``test``/``segment``, ``score``/``llr``, ``label``/``key``).

What reading such a file can do
-------------------------------
A score file is data from elsewhere, so reading one must never read another file, nor take
memory out of proportion to it. An HDF5 file is read through the few objects its layout names,
each reached through hard links only, and each dataset is checked before a byte of it is read:

- its data lies inside the named file: *external storage* (raw data in other files), *virtual
  datasets* (data mapped from other datasets, in this or other files), *external links* and
  *soft links* are refused, and so is any filter but deflate (gzip), shuffle, Fletcher-32 and
  LZF (a filter plugin is code loaded from elsewhere);
- its values are numbers (matrices) or strings (ids): no object or region references;
- its size is bounded: at most :data:`MAX_TABLE_BYTES` decoded, a chunk no larger, no more
  stored bytes than the file holds, and no more values than its stored bytes can hold (times
  1032, deflate's largest expansion, when compressed): a small file declaring a huge matrix of
  unwritten chunks (fill values) or of improbably compressible data is refused before anything
  is allocated.

A parquet file is opened as the named file (no dataset discovery, no file system guessed from
the name), a column chunk stored in another file (``file_path``) is refused, and so is a table
of more rows than :data:`MAX_TABLE_BYTES` allows. Ids from either format are checked as a text
id is: not empty, no white space, control character or comma, not starting with ``#``, at most
:data:`focal._text.blocks.MAX_ID_LENGTH` characters of UTF-8; so an id can never write a line
(or a field) of its own into a text output.
"""

from __future__ import annotations

import math
import os
import stat

import numpy as np

from .._text import blocks as _blocks
from .._text.fields import Ids, LineMap, fixed_width, ids_text
from ..exceptions import FileFormatError

__all__ = ["MAX_TABLE_BYTES", "read_table", "table_kind"]

HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
PARQUET_MAGIC = b"PAR1"
#: Largest array read from an HDF5 or parquet trial file, in bytes once decoded (2 GiB): an
#: HDF5 dataset (and one of its chunks), or the columns read from a parquet table
MAX_TABLE_BYTES = 2 << 30
_DEFLATE_RATIO = 1032  # deflate's largest expansion: 258 bytes per (at least) 2 bits
_FILTERS = {1: "deflate", 2: "shuffle", 3: "fletcher32", 32000: "lzf"}
_COMPRESSING = {1, 32000}
#: the id datasets of each HDF5 layout: (models, segments)
_HDF5_IDS = {"BOSARIS": ("ID/row_ids", "ID/column_ids"), "sidekit": ("modelset", "segset")}
_NAMES = {
    "model": ("model", "enrol", "enroll", "modelid", "model_id"),
    "test": ("test", "segment", "segmentid", "segment_id", "seg"),
    "score": ("score", "llr", "LLR"),
    "label": ("label", "key", "targettype"),
}


def table_kind(path):
    """``"hdf5"``, ``"parquet"`` or None (text) from the first bytes of a regular file.

    Anything else (standard input, a pipe, a FIFO, a device) is text, and is not opened here:
    its bytes can be read once, by the text reader.
    """
    if path == "-":
        return None
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
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
    """``(models, tests, {role: values})`` of an HDF5 or parquet trial file, the ids as
    :class:`~focal._text.fields.Ids` (by their own length, one long id widens no other).

    ``label_value(words, lines, path)`` turns a parquet label column (a bytes array, its rows
    numbered from 1) into booleans.
    Every check of the module notes is made before the data it guards is read.
    """
    if kind == "hdf5":
        return _read_hdf5(path, want)
    return _read_parquet(path, layout, want, label_value)


def _checked_ids(data, offsets, path, where):
    """:class:`~focal._text.fields.Ids` of the ids ``data[offsets[i] : offsets[i + 1]]``
    (uint8), each refused unless a text file could hold it as one field (see the module notes);
    ``where(i)`` names the i-th id's place in the file (a dataset and index, or a row).
    """
    lengths = np.diff(offsets)
    starts = offsets[:-1]
    problem = lengths == 0
    some = np.flatnonzero(~problem)
    problem[some] = data[starts[some]] == 35
    bad = np.flatnonzero((data < 33) | (data == 44) | (data == 127))[:1]
    if bad.size:
        problem[np.searchsorted(offsets, bad[0], side="right") - 1] = True
    if problem.any():
        i = int(np.argmax(problem))
        raise FileFormatError(
            path,
            None,
            f"{where(i)}: id {ids_text(data[offsets[i] : offsets[i + 1]].tobytes())!r} is not "
            f"a valid id: ids are non-empty, without white space, control characters or "
            f"commas, and do not start with '#'",
        )
    _check_text(data, offsets, path, where)
    return Ids(data, offsets=offsets)


def _check_text(data, offsets, path, where):
    """Ids are UTF-8 of at most MAX_ID_LENGTH characters.

    The buffer is decoded whole: every id is UTF-8 exactly when the buffer is and no id starts
    with a continuation byte (an id cut inside a character, which the whole decode misses, is
    followed by one that does), so only the first suspect and the one before it are decoded.
    """

    def text(i):
        try:
            return data[offsets[i] : offsets[i + 1]].tobytes().decode("utf-8")
        except UnicodeDecodeError:
            raise FileFormatError(path, None, f"{where(i)}: id is not UTF-8 text") from None

    if (data >= 128).any():
        some = np.flatnonzero(np.diff(offsets))
        suspects = list(some[(data[offsets[some]] & 0xC0) == 0x80][:1])
        try:
            str(data, "utf-8")
        except UnicodeDecodeError as err:
            suspects.append(int(np.searchsorted(offsets, err.start, side="right")) - 1)
        if suspects:
            first = min(suspects)
            for i in range(max(first - 1, 0), first + 1):
                text(i)
    limit = _blocks.MAX_ID_LENGTH
    for i in np.flatnonzero(np.diff(offsets) > limit):  # bytes >= characters: check those
        if len(text(i)) > limit:
            raise FileFormatError(path, None, f"{where(i)}: id longer than {limit} characters")


# ---------------------------------------------------------------------------------------------
# HDF5


def _read_hdf5(path, want):
    h5py = _optional("h5py", "hdf5", path)
    try:
        with h5py.File(path, "r") as f:
            return _Hdf5(h5py, f, path).trials(want)
    except (OSError, KeyError, TypeError, RuntimeError) as err:
        # the file was opened and read as bytes already (table_kind), so this is h5py failing
        # on a damaged or foreign file, a format error rather than the system's
        raise FileFormatError(path, None, f"not a readable HDF5 file ({err})") from None


class _Hdf5:
    """An open HDF5 trial file, read through checked datasets only (see the module notes)."""

    def __init__(self, h5py, f, path):
        self.h5py, self.f, self.path = h5py, f, path
        self.size = os.path.getsize(path)

    def fail(self, message):
        raise FileFormatError(self.path, None, message)

    def find(self, name):
        """The dataset ``name`` (``"a/b"``), reached through hard links only, or None."""
        h5py = self.h5py
        node = self.f
        parts = name.split("/")
        for depth, part in enumerate(parts):
            link = node.get(part, getlink=True)
            if link is None:
                return None
            where = "/" + "/".join(parts[: depth + 1])
            if isinstance(link, h5py.ExternalLink):
                self.fail(
                    f"{where} is an external link (to {link.filename}:{link.path}): focal "
                    f"reads only data stored in the file it is given"
                )
            if not isinstance(link, h5py.HardLink):
                path = getattr(link, "path", "?")
                self.fail(
                    f"{where} is a soft link (to {path}): focal reads the objects of the "
                    f"layout themselves, not links to them"
                )
            node = node[part]
            if depth < len(parts) - 1 and not isinstance(node, h5py.Group):
                return None
        if not isinstance(node, h5py.Dataset):
            self.fail(f"/{name} is not a dataset")
        return node

    def has(self, name):
        """Whether the root holds an object called ``name`` (its link is not followed)."""
        return self.f.get(name, getlink=True) is not None

    def dataset(self, name, kinds):
        """The dataset ``name``, checked (module notes) before anything of it is read."""
        ds = self.find(name)
        if ds is None:
            return None
        where = f"/{name}"
        h5py = self.h5py
        plist = ds.id.get_create_plist()
        if ds.is_virtual or plist.get_layout() == h5py.h5d.VIRTUAL:
            self.fail(f"{where} is a virtual dataset (data mapped from other datasets or files)")
        if plist.get_external_count():
            name, _, _ = plist.get_external(0)
            self.fail(
                f"{where} keeps its data in external storage ({name.decode(errors='replace')}): "
                f"focal reads only data stored in the file it is given"
            )
        codes = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
        unknown = [c for c in codes if c not in _FILTERS]
        if unknown:
            self.fail(
                f"{where} uses HDF5 filter {unknown[0]} ({', '.join(sorted(_FILTERS.values()))} "
                f"only: another filter is a plugin, code loaded from elsewhere)"
            )
        dtype = ds.dtype
        string = h5py.check_string_dtype(dtype) is not None
        if not (dtype.kind in kinds or (string and "S" in kinds)):
            what = "strings" if "S" in kinds else "numbers"
            self.fail(f"{where} holds {dtype} values, not {what}")
        self._check_size(ds, where, plist, codes)
        return ds

    def _check_size(self, ds, where, plist, codes):
        count = math.prod(ds.shape)
        declared = count * max(ds.dtype.itemsize, 1)
        shape = " x ".join(map(str, ds.shape))
        if declared > MAX_TABLE_BYTES:
            self.fail(
                f"{where} declares {shape} values ({declared / 2**30:.1f} GiB), more than the "
                f"{MAX_TABLE_BYTES / 2**30:.0f} GiB focal reads from a table file"
            )
        if plist.get_layout() == self.h5py.h5d.CHUNKED:
            chunk = math.prod(plist.get_chunk()) * max(ds.dtype.itemsize, 1)
            if chunk > max(declared, 1 << 22):
                self.fail(f"{where} declares chunks of {chunk:,} bytes for {declared:,} bytes")
        stored = ds.id.get_storage_size()
        if stored > self.size:
            self.fail(f"{where} declares {stored:,} stored bytes, the file has {self.size:,}")
        ratio = _DEFLATE_RATIO if _COMPRESSING & set(codes) else 1
        if declared > stored * ratio:
            self.fail(
                f"{where} declares {shape} values ({declared:,} bytes) but stores {stored:,} "
                f"bytes: values not written in the file (unallocated chunks, fill values)"
            )

    def ids(self, name):
        ds = self.dataset(name, "S")
        if ds is None:
            return None
        values = np.asarray(ds[()]).ravel()
        if values.dtype.kind == "U":
            values = np.char.encode(values, "utf-8")
        if values.dtype.kind == "O":  # variable-length strings: joined once
            items = [v if isinstance(v, bytes) else str(v).encode() for v in values]
            lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
            data = np.frombuffer(b"".join(items), dtype=np.uint8)
        else:  # fixed-length strings, zero padded (numpy's length: up to the last non-zero)
            lengths = np.char.str_len(values).astype(np.int64)
            width = values.dtype.itemsize
            data = np.ascontiguousarray(values).view(np.uint8)
            data = Ids(data, np.arange(lengths.size) * width, lengths).compact().data
        offsets = np.zeros(lengths.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return _checked_ids(data, offsets, self.path, lambda i: f"/{name}[{i}]")

    def trials(self, want):
        """The trials of the file (see :func:`read_table`)."""
        found = (k for k, ids in _HDF5_IDS.items() if all(self.find(n) is not None for n in ids))
        kind = next(found, None)  # the layout: the first whose id datasets the file has
        if kind is None:
            self.fail(
                "not a BOSARIS or sidekit HDF5 trial file (no /ID/row_ids and /ID/column_ids, "
                "nor /modelset and /segset)"
            )
        models, segments = (self.ids(name) for name in _HDF5_IDS[kind])
        shape = (len(models), len(segments))

        def matrix(name, kinds="biuf"):
            ds = self.dataset(name, kinds)
            if ds is None:
                return None
            if ds.shape == shape:
                return np.asarray(ds[()])
            if ds.shape[::-1] == shape:
                return np.asarray(ds[()]).T
            self.fail(f"/{name} has shape {ds.shape}, not ({shape[0]} models, {shape[1]} segments)")

        values = {}
        mask = None
        if "score" in want:
            scores = matrix("scores")
            if scores is None:
                self.fail(f"no /scores: a {kind} Key or Ndx, not Scores")
            mask = matrix("score_mask")
            mask = np.ones(shape, dtype=bool) if mask is None else mask.astype(bool)
            scores = scores.astype(np.float64)
        if "label" in want:
            trial = None if self.has("scores") else matrix("trial_mask")
            if trial is not None:
                trial = trial.astype(np.int8)
                if not (trial < 0).any() and not self.has("file_format"):
                    self.fail(f"a {kind} Ndx (trials without labels), not a Key")
                tar, non = trial > 0, trial < 0
            else:
                tar, non = matrix("tar"), matrix("non")
                if tar is None or non is None:
                    self.fail(f"no /trial_mask or /tar, /non: not a {kind} Key")
                tar, non = tar.astype(bool), non.astype(bool)
            if mask is not None and not np.array_equal(mask, tar | non):
                self.fail("the score mask and the key's trials differ")
            mask = tar | non
            values["label"] = tar[mask]
        if "score" in want:
            values["score"] = scores[mask]
            if np.isnan(values["score"]).any():
                self.fail("a masked-in score is NaN")
        rows, cols = np.nonzero(mask)
        return models.take(rows), segments.take(cols), values


# ---------------------------------------------------------------------------------------------
# parquet


def _column(found, layout, role, path):
    """The name of the ``role`` column among the table's column names ``found``."""
    names = [layout.names[role]] if role in layout.names else list(_NAMES[role])
    for name in names:
        if name in found:
            return name
    raise ValueError(
        f"{path}: no {role} column (looked for {', '.join(names)}; found {', '.join(found)})"
    )


def _read_parquet(path, layout, want, label_value):
    _optional("pyarrow", "fast", path)
    import pyarrow as pa
    import pyarrow.parquet as pq

    with open(path, "rb") as handle:  # the named file itself: no dataset, no file system
        try:
            parquet = pq.ParquetFile(handle)
            meta = parquet.metadata
            schema = parquet.schema_arrow
            for g in range(meta.num_row_groups):
                group = meta.row_group(g)
                for c in range(group.num_columns):
                    if group.column(c).file_path:
                        raise FileFormatError(
                            path,
                            None,
                            f"column chunk stored in another file ({group.column(c).file_path}): "
                            f"focal reads only data stored in the file it is given",
                        )
            roles = ["model", "test"] + [r for r in ("score", "label") if r in want]
            names = {r: _column(schema.names, layout, r, path) for r in roles}
            if meta.num_rows * 8 * len(roles) > MAX_TABLE_BYTES:
                raise FileFormatError(
                    path,
                    None,
                    f"{meta.num_rows:,} rows, more than focal reads from a table file "
                    f"({MAX_TABLE_BYTES / 2**30:.0f} GiB)",
                )
            table = parquet.read(columns=sorted(set(names.values())))
        except pa.ArrowException as err:
            raise FileFormatError(path, None, f"not a readable parquet file ({err})") from None

    def ids(role):
        return _arrow_ids(table.column(names[role]), path, f"{role} column {names[role]!r}")

    values = {}
    if "score" in want:
        column = table.column(names["score"])
        if not (pa.types.is_floating(column.type) or pa.types.is_integer(column.type)):
            raise FileFormatError(
                path, None, f"the score column {names['score']!r} holds {column.type}, not numbers"
            )
        values["score"] = np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)
        if np.isnan(values["score"]).any():
            i = int(np.argmax(np.isnan(values["score"])))
            raise ValueError(f"{path}: row {i + 1}: score is NaN (or missing)")
    if "label" in want:
        column = table.column(names["label"])
        if pa.types.is_boolean(column.type) and not column.null_count:
            values["label"] = column.to_numpy(zero_copy_only=False)
        else:
            rows = LineMap()
            rows.add(0, np.arange(1, meta.num_rows + 1))
            words = fixed_width(ids("label"), None, rows, path)
            values["label"] = label_value(words, rows.numbers(len(words)), path)
    return ids("model"), ids("test"), values


def _arrow_ids(column, path, what):
    """A string column as :class:`~focal._text.fields.Ids`, from its offsets and data buffers (no
    Python object per value), every id checked (:func:`_checked_ids`).
    """
    import pyarrow as pa

    if column.null_count:
        raise FileFormatError(path, None, f"the {what} has {column.null_count} missing value(s)")
    kind = column.type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    strings = (pa.string(), pa.large_string(), pa.binary(), pa.large_binary())
    if not (kind in strings or pa.types.is_integer(kind)):
        raise FileFormatError(
            path, None, f"the {what} holds {column.type}: ids are strings (or integers)"
        )
    try:
        column = column.cast(pa.large_string()).combine_chunks()  # checks UTF-8
    except pa.ArrowException as err:
        raise FileFormatError(path, None, f"the {what}: {err}") from None
    _, offsets, data = column.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64)[
        column.offset : column.offset + len(column) + 1
    ]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    data = data[offsets[0] : offsets[-1]]
    return _checked_ids(data, offsets - offsets[0], path, lambda i: f"row {i + 1}: {what}")
