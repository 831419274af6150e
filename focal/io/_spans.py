"""Trial ids kept as the text they were read from, for streaming score files.

A streaming back-end reads the systems' files side by side, checks that they list the same trials
in the same order and writes one line per trial (:mod:`focal.io.stream`,
:mod:`focal.workflows.apply`). When a block's records are ``model test score`` with single spaces
between the fields (what :func:`focal.io.write_scores` writes, and nearly every score file), the ids
of record ``i`` are the bytes ``data[starts[i]:stops[i]]`` of the block: ``model``, one space,
``test``. Kept that way (:class:`TrialSpans`), they need no fixed-width id arrays: two files' trials
are compared as byte runs, and the output line is that run, a space and the output value. The
fixed-width ids (:meth:`TrialSpans.ids`) are made only when something asks for them.

What keeps them (the ``bench_apply`` files, a 3-system fusion applied to 10^6 trials by
:func:`focal.workflows.apply_to_files` with ``threads=0``, CPU time, min of 2 runs in turn): with
VoxCeleb-style ids 1.27 s with byte runs against 3.38 s with id arrays (62 % less), with short
ids 1.25 s against 2.01 s (38 % less); outputs identical.
"""

from __future__ import annotations

import numpy as np

from .._text import arrow as _arrow
from .._text import blocks as _blocks
from .._text.fields import Ids, concat_pieces, gather_ids
from ._records import slice_parts

__all__ = ["TrialSpans", "concat_ids", "equal_ids", "ids_tuple", "slice_ids", "trial_spans"]

_SPACE = 32


class TrialSpans:
    """The trial ids of some records, as runs of text buffers.

    ``parts`` is a list of ``(data, starts, splits, stops)``: in each part, record ``i``'s model
    is ``data[starts[i]:splits[i]]``, then one space, then its test up to ``stops[i]``
    (exclusive), then a space; the runs lie in increasing order in ``data``. Slicing and
    concatenating move no text: parts are sliced, listed one after the other.
    """

    __slots__ = ("parts",)

    def __init__(self, parts):
        self.parts = parts

    def __len__(self):
        return sum(p[1].shape[0] for p in self.parts)

    def __getitem__(self, where):
        """The records of a slice (views of the same buffers)."""
        return TrialSpans(slice_parts(self.parts, where, "TrialSpans"))

    def ids(self):
        """``(models, tests)`` as fixed-width bytes arrays
        (:func:`focal._text.fields.gather_ids`).
        """
        models, tests = [], []
        for data, starts, splits, stops in self.parts:
            models.append(gather_ids(data, starts, splits - starts))
            tests.append(gather_ids(data, splits + 1, stops - splits - 1))
        return concat_pieces(models), concat_pieces(tests)


def trial_spans(fields, model, test):
    """The ids of a block's records as :class:`TrialSpans`, or None.

    Parameters
    ----------
    fields : focal._text.fields.Fields
        The block's records.
    model, test : int
        Field columns of the model and test ids.

    Returns
    -------
    TrialSpans or None
        None unless the test field follows the model field after exactly one space and is
        followed by a space, and every id is within
        :data:`focal._text.blocks.MAX_ID_LENGTH` bytes (a longer one is refused with its line by
        :meth:`focal._text.fields.Fields.ids`, which the caller then uses).
    """
    if test != model + 1 or len(fields) == 0:
        return None
    starts, lengths = fields.starts, fields.lengths
    first, second = starts[:, model], starts[:, test]
    splits = first + lengths[:, model]
    stops = second + lengths[:, test]
    if not np.array_equal(second, splits + 1) or (fields.data[splits] != _SPACE).any():
        return None
    if (fields.data[stops] != _SPACE).any():  # the writer copies "model test " as it is
        return None
    if int(max(lengths[:, model].max(), lengths[:, test].max())) > _blocks.MAX_ID_LENGTH:
        return None
    return TrialSpans([(fields.data, first, splits, stops)])


def ids_tuple(ids):
    """Ids as a tuple of fixed-width bytes arrays, whether given so, as :class:`TrialSpans` or
    as a tuple of :class:`~focal._text.fields.Ids`.
    """
    if isinstance(ids, TrialSpans):
        return ids.ids()
    return tuple(c.array() if isinstance(c, Ids) else c for c in ids)


def slice_ids(ids, where):
    """The records ``where`` (a slice) of ids given either way."""
    if isinstance(ids, TrialSpans):
        return ids[where]
    return tuple(c.take(where) if isinstance(c, Ids) else c[where] for c in ids)


def concat_ids(parts):
    """Ids of consecutive pieces, one after the other: :class:`TrialSpans` when every part is,
    a tuple of arrays otherwise.
    """
    if all(isinstance(p, TrialSpans) for p in parts):
        return TrialSpans([q for p in parts for q in p.parts])
    if all(not isinstance(p, TrialSpans) and isinstance(p[0], Ids) for p in parts):
        return tuple(Ids.concat([p[j].compact() for p in parts]) for j in range(len(parts[0])))
    tuples = [ids_tuple(p) for p in parts]
    return tuple(concat_pieces([t[j] for t in tuples]) for j in range(len(tuples[0])))


def _aligned_parts(a, b):
    """Pairs of parts of ``a`` and ``b`` (two :class:`TrialSpans` of the same length) over the
    same records: each part cut where either has a part boundary.
    """
    cuts = np.unique(
        np.concatenate([np.cumsum([0] + [p[1].shape[0] for p in s.parts]) for s in (a, b)])
    )
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        yield a[int(lo) : int(hi)].parts[0], b[int(lo) : int(hi)].parts[0]


def equal_ids(a, b):
    """Whether two pieces' ids are the same trials, record by record."""
    if not (isinstance(a, TrialSpans) and isinstance(b, TrialSpans)):
        return _equal_arrays(ids_tuple(a), ids_tuple(b))
    for part_a, part_b in _aligned_parts(a, b):
        (da, sa, _, ea), (db, sb, _, eb) = part_a, part_b
        same = _arrow.equal_segments(da, sa, ea, db, sb, eb)
        if same is None:  # no pyarrow, or a part too small for it: compare the id arrays
            same = _equal_arrays(TrialSpans([part_a]).ids(), TrialSpans([part_b]).ids())
        if not same:
            return False
    return True


def _equal_arrays(a, b):
    return all(_equal_column(x, y) for x, y in zip(a, b))


def _equal_column(a, b):
    """Whether two id arrays hold the same ids (as raw words when their widths agree)."""
    if a.dtype == b.dtype and a.dtype.itemsize % 8 == 0:
        return np.array_equal(
            np.ascontiguousarray(a).view(np.uint64), np.ascontiguousarray(b).view(np.uint64)
        )
    return bool((a == b).all())
