"""The file engine: trial files read in blocks (:func:`pieces`), read whole and joined, the one
door every reader and workflow uses for them (:mod:`focal.io.stream` streams several files side
by side over the same :func:`pieces`). One module, for one concept: its two jobs share
:func:`pieces` and :class:`Trials`, and each is a few dozen lines over them.

- :func:`read_columns`: a score or key file read whole into columns (ids, scores, labels, the
  line of each trial), repeated trials refused;
- :func:`read_aligned` and :func:`iter_aligned` (the join): score files joined with a key on
  the (model, test) trial, the score files streamed against the key's hash table, the key's
  ids kept in a temporary file meanwhile (:mod:`focal.io._spill`); :func:`focal.io.align_trials`
  and ``focal apply --align`` use the same join (:func:`join`) with trials already in memory.

A file is read in blocks of whole lines (:mod:`focal._text.blocks`): the calling thread reads
them, the worker threads of one pool (:mod:`focal._text.pool`) split them into fields, parse
the numbers and hash or look up the ids, and the results are used in file order, so errors
come as a plain loop would raise them.

Ids are held by their own length (:class:`focal._text.fields.Ids`): a file read whole keeps
its ids' bytes one after the other with their offsets, so its memory is the ids' bytes, 8 bytes
of offsets per trial (4 per id while a column's bytes stay under 4 GiB) and 8 bytes of hash
table (:class:`focal.io._ids.HashTable`) per trial, whatever the lengths: one long id never
widens the others. Fixed-width arrays (the public :class:`focal.io.TrialScores`) are made only
when asked for (:meth:`Trials.arrays`).

The join holds the key's hashes, labels and lines (or, without a key, the first file's) and
streams every other file against them, block by block, one file after the other (each with
every core); a hash match is checked byte for byte against the key's ids, at once when they are
in memory, range by range once the files are read when they were spilled (the files of one
join together: the key's ids are read back once).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re

import numpy as np

from .._text.blocks import BLOCK_BYTES, iter_blocks
from .._text.fields import (
    Ids,
    LineMap,
    as_id_array,
    blank_line,
    concat_pieces,
    first_record,
    fixed_width,
    ids_text,
    release_memory,
    split_fields,
)
from .._text.pool import in_order, worker_pool
from .._text.source import display_name
from . import _ids
from ._ids import HashTable
from ._labels import NONTARGET, TARGET, label_column, namedlabel_column
from ._records import Records
from ._spill import Matches, SpilledIds
from ._tables import read_table, table_kind
from .formats import (
    HEADER_NAMES,
    default_key_format,
    is_number,
    key_layout,
    resolve_layout,
    score_layout,
)

__all__ = [
    "Trials",
    "check_missing",
    "iter_aligned",
    "join",
    "read_aligned",
    "read_columns",
]


# ---------------------------------------------------------------------------------------------
# a trial file, block by block


def _value_ok(pos_label):
    """Whether a word of a score or label column is a value (else the line may be a header)."""

    def ok(role, word):
        if role == "score":
            return is_number(word)
        if pos_label is not None:
            return word.decode("utf-8", "replace").lower() not in HEADER_NAMES["label"]
        return word.lower() in TARGET + NONTARGET

    return ok


class _TrialReader:
    """A trial file read block by block: :meth:`blocks` in the calling thread (the first line
    may be a header, :func:`focal.io.formats.resolve_layout`), :meth:`parse` of each block in
    any thread, :meth:`checked` of the parsed blocks in file order (the rule of a named target
    label spans blocks). ``want`` are the value roles read (``"score"``, ``"label"``). A
    block's ids come as a tuple (models, tests) of :class:`~focal._text.fields.Ids` (views of
    the block's text), or with ``text_ids`` as the block's :class:`~focal.io._records.Records`
    (compared as text when streamed); with ``records``, each piece has a fourth element, the
    block's :class:`~focal.io._records.Records`.
    """

    def __init__(
        self, path, layout, want, block_bytes, pos_label=None, text_ids=False, records=False
    ):
        self.path, self.layout, self.want, self.block_bytes = path, layout, want, block_bytes
        self.shown, self.pos_label, self.text_ids = display_name(path), pos_label, text_ids
        self.records = records
        self.named = None if pos_label is None else namedlabel_column(pos_label)

    def blocks(self):
        columns = None
        for block in iter_blocks(self.path, self.block_bytes):
            if columns is None:
                first = first_record(block)
                if first is None:
                    continue
                line, words, start, end = first
                columns, self.n_fields, header = resolve_layout(
                    self.layout,
                    words,
                    self.shown,
                    line,
                    _value_ok(self.pos_label),
                    functools.partial(_next_lines, block, end),
                )
                absent = [r for r in self.want if r not in columns]
                if absent:
                    raise ValueError(
                        f"{self.shown}:{line}: records of {self.n_fields} fields have no "
                        f"{absent[0]} column (the {self.layout.name} format's columns are "
                        f"{self.layout.describe()})"
                        + ("; give the key file (--key)" if absent[0] == "label" else "")
                    )
                self.kept = _kept_columns(self.layout, columns, words, header)
                self.header = bytes(block.body[start:end]).strip() if header else None
                if header:
                    blank_line(block, start, end)
                self.columns = columns
                self.described = _describe(self.layout, columns, self.n_fields)
            yield block

    def parse(self, block):
        """``(ids, {role: values}, lines[, records])`` of a block's records, or None when it
        has none.
        """
        fields = split_fields(block, self.n_fields, self.described)
        if not len(fields):
            return None
        columns = self.columns
        values = {}
        for role in self.want:
            if role == "score":
                values[role] = fields.numbers([columns[role]], self.shown)[:, 0]
            elif self.named is None:
                values[role] = label_column(fields.ids(columns[role]), fields.lines, self.shown)
            else:  # checked in file order by `checked`
                values[role] = fields.ids(columns[role]), fields.lines
        ids = fields.column(columns["model"]), fields.column(columns["test"])  # too long: refused
        if not (self.records or self.text_ids):
            return ids, values, fields.lines
        kept = Records([(fields.data, fields.starts, fields.lengths)], self.kept, self.header)
        ids = kept if self.text_ids else ids
        return (ids, values, fields.lines) + ((kept,) if self.records else ())

    def checked(self, pieces):
        """The parsed pieces, in file order, the blocks without records left out."""
        for piece in pieces:
            if piece is None:
                continue
            if self.named is not None and "label" in piece[1]:
                words, lines = piece[1]["label"]
                piece[1]["label"] = self.named(words, lines, self.shown)
            yield piece


def _kept_columns(layout, columns, words, header):
    """``{role: column}`` of the file's :class:`~focal.io._records.Records`: its id and score
    columns, and its label and NIST ``side`` columns where it has them (by header name, or by
    position in a NIST file without header), which an output in the file's layout reuses.
    """
    kept = {r: columns[r] for r in ("model", "test", "score", "label") if r in columns}
    names = [w.lower() for w in words] if header else []
    if "side" in names:
        kept["side"] = names.index("side")
    elif not header and layout.name == "nist-sre" and layout.roles and layout.roles[2] is None:
        kept["side"] = 2
    return kept


def _next_lines(block, end, count=64):
    """The fields of up to ``count`` lines of the block after byte ``end`` (for messages)."""
    body = block.body[end : end + (count << 8)].tobytes()
    return [re.split(rb"[\x00-\x20,]+", line.strip()) for line in body.splitlines()[1:count]]


def _describe(layout, columns, n_fields):
    if layout.roles is not None and len(layout.roles) - layout.optional <= n_fields <= len(
        layout.roles
    ):
        return layout.describe()
    roles = ["-"] * n_fields
    for r, i in columns.items():
        roles[i] = r
    return "'" + " ".join(roles) + "'"


def pieces(
    path,
    layout,
    want=("score",),
    *,
    pos_label=None,
    text_ids=False,
    records=False,
    executor=None,
    then=None,
    block_bytes=BLOCK_BYTES,
):
    """Yield ``((models, tests), {role: values}, lines[, records])`` per block of a trial file,
    parsed in ``executor`` (:func:`focal._text.pool.in_order`), each piece then handed to
    ``then`` there (its result is yielded).

    An HDF5 or parquet file (:mod:`focal.io._tables`) is one piece, its rows numbered from 1,
    its records None. See :class:`_TrialReader` for ``text_ids`` and ``records``.
    """
    path = os.fspath(path)
    kind = table_kind(path)
    if kind is not None:
        label = label_column if pos_label is None else namedlabel_column(pos_label)
        models, tests, values = read_table(path, kind, layout, want, label)
        piece = (Ids.of(models), Ids.of(tests)), values, np.arange(1, len(models) + 1)
        piece += (None,) if records else ()
        yield piece if then is None else then(piece)
        return
    reader = _TrialReader(path, layout, want, block_bytes, pos_label, text_ids, records)

    def parse(block):
        piece = reader.parse(block)
        return piece if piece is None or then is None else then(piece)

    yield from reader.checked(in_order(parse, reader.blocks(), executor))


# ---------------------------------------------------------------------------------------------
# a file read whole


class Trials:
    """The trials of a file read whole (:func:`read_columns`).

    Attributes
    ----------
    ids : tuple of Ids
        ``(models, tests)``, by their own length (:class:`focal._text.fields.Ids`).
    values : dict
        ``{role: ndarray}``: the ``score`` (float64) and ``label`` (bool) columns read.
    lines : LineMap
        The line of each trial.
    path : str
        The file, as messages name it.
    table : HashTable
        Of the trials (:class:`focal.io._ids.HashTable`), for joins.
    records : Records or None
        The records as read (``records=True`` and a text file), for an output in its layout.
    kind : str
        What they are in a join: ``"key"`` or ``"first score file"``.
    spilled : SpilledIds or None
        Where the ids are when they were written to disk as read (``ids`` is then None:
        :mod:`focal.io._spill`).
    """

    __slots__ = ("ids", "kind", "lines", "n", "path", "records", "spilled", "table", "values")

    def __init__(self, ids, values, lines, path, table, records=None, kind="key", spilled=None):
        self.ids, self.values, self.lines, self.path = ids, values, lines, path
        self.table, self.records, self.kind, self.spilled = table, records, kind, spilled
        self.n = len(ids[0]) if spilled is None else spilled.n

    @property
    def name(self):
        """What messages call the trials in a join: ``"key eval.key"``."""
        return f"{self.kind} {self.path}".rstrip()

    def __len__(self):
        return self.n

    def arrays(self, rows=None):
        """``(models, tests)`` of the trials ``rows`` (None: all) as fixed-width bytes arrays
        (:func:`focal._text.fields.fixed_width`: a file whose few long ids would widen every
        other id's storage many times is refused, naming the line of the longest).
        """
        ids = self.ids if self.spilled is None else self.spilled.rows(0, self.n)
        return tuple(fixed_width(c, rows, self.lines, self.path) for c in ids)

    def described(self, rows, k=3):
        """The first ``k`` trials ``rows``, as messages name them: ``"(m1, t1), (m2, t2)"``."""
        rows = np.asarray(rows)[:k]
        if self.spilled is None:
            models, tests = (c.take(rows) for c in self.ids)
        else:
            models, tests = self.spilled.take(rows)
        return ", ".join(f"({ids_text(m)}, {ids_text(t)})" for m, t in zip(models, tests))


def read_columns(
    path,
    layout,
    want=("score",),
    *,
    pos_label=None,
    records=False,
    block_bytes=BLOCK_BYTES,
    threads=None,
    pool=None,
    spill=False,
):
    """Read a trial file whole: its ids, its ``want`` columns and the line of each trial.

    Parameters
    ----------
    path : str or path-like
        A text file (``-``: standard input; gzip as it is), HDF5 or parquet.
    layout : Layout
        Its columns (:func:`focal.io.formats.score_layout`, :func:`~focal.io.formats.key_layout`).
    want : tuple of str
        The value columns read: ``"score"``, ``"label"``.
    pos_label : str, optional
        The label of the target trials (:func:`focal.io.read_key`).
    records : bool
        Keep the records as read (:attr:`Trials.records`).
    block_bytes : int
        Bytes read and parsed at a time.
    threads : int, optional
        Worker threads (:func:`focal._text.pool.worker_pool`; 0: none).
    pool : Executor, optional
        A pool already open, used instead of one of ``threads`` workers.
    spill : bool
        The ids written to a temporary file as read, not held (:mod:`focal.io._spill`).

    Returns
    -------
    Trials
        With a hash table of the trials (made from hashes the workers compute block by block).

    Raises
    ------
    ValueError
        Any reader error (``path:line:``), a repeated trial (``path:line:`` and the line first
        seen), no trials, or no target trial (``pos_label`` given).
    """
    path = os.fspath(path)
    shown = display_name(path)

    def held(piece):  # in a worker: the block's ids hashed, then copied out of the block
        (models, tests), values, where, *text = piece
        gathered = [_ids.gather_classes(models), _ids.gather_classes(tests)]
        hashes = _ids.hash_ids(models, tests, gathered=gathered)
        ids = _ids.compact_gathered(models, gathered[0]), _ids.compact_gathered(tests, gathered[1])
        return ids, values, where, hashes, *text

    models, tests, hashes, texts = [], [], [], []
    values = {r: [] for r in want}
    lines, n = LineMap(), 0
    spilled = SpilledIds() if spill else None
    with worker_pool(threads, pool) as executor:
        for (m, t), v, where, h, *text in pieces(
            path,
            layout,
            want,
            pos_label=pos_label,
            records=records,
            executor=executor,
            then=held,
            block_bytes=block_bytes,
        ):
            if spilled is None:
                models.append(m)
                tests.append(t)
            else:
                spilled.add(m, t)
            hashes.append(h)
            texts.extend(text)
            for r in want:
                values[r].append(v[r])
            lines.add(n, where)
            n += len(where)
    if n == 0:
        raise ValueError(f"{shown}: no trials found")
    if spilled is None:
        ids = Ids.concat(models), Ids.concat(tests)
        table = HashTable(ids, hashes=concat_pieces(hashes))
    else:
        spilled.finish()
        ids, table = None, HashTable(None, hashes=concat_pieces(hashes), fetch=spilled.take)
    kept = None if not records or texts[0] is None else Records.concat(texts)
    values = {r: concat_pieces(v) for r, v in values.items()}
    trials = Trials(ids, values, lines, shown, table, kept, spilled=spilled)
    dup = table.duplicate()
    if dup is not None:
        raise _ids.duplicate_error(shown, f"trial {trials.described([dup[1]])}", *dup, lines)
    if pos_label is not None and "label" in want and not values["label"].any():
        raise ValueError(f"{shown}: no trial has the target label {pos_label!r} (pos_label)")
    return trials


def in_memory(obj, values=(), kind="key"):
    """:class:`Trials` of in-memory trials (a :class:`focal.io.TrialScores` or
    :class:`~focal.io.TrialKey`, or any object with ``models``, ``tests`` and ``path``), with
    the columns ``values`` (attribute names); repeated trials refused.
    """
    ids = Ids.of(as_id_array(obj.models, "models")), Ids.of(as_id_array(obj.tests, "tests"))
    if len(ids[0]) != len(ids[1]):
        raise ValueError(
            f"models and tests must have one length, got {len(ids[0])} and {len(ids[1])}"
        )
    lines = obj.lines if getattr(obj, "lines", None) is not None else _row_numbers(len(ids[0]))
    table = HashTable(ids)
    dup = table.duplicate()
    if dup is not None:
        shown = obj.path or ("key" if kind == "key" else "scores")
        what = f"trial ({ids_text(ids[0][dup[1]])}, {ids_text(ids[1][dup[1]])})"
        raise _ids.duplicate_error(shown, what, *dup)
    values = {v: np.asarray(getattr(obj, v)) for v in values}
    return Trials(ids, values, lines, obj.path, table, kind=kind)


def _row_numbers(n):
    lines = LineMap()
    lines.add(0, np.arange(1, n + 1))
    return lines


# ---------------------------------------------------------------------------------------------
# the join


def check_missing(missing):
    """Refuse a ``missing`` policy other than ``"error"`` or ``"drop"``."""
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")


def _scores_against(reference, source, j, *, layout, missing, executor, out, matches, block_bytes):
    """Stream ``source`` (a score file, or in-memory :class:`focal.io.TrialScores`) against
    the reference: the score of each reference trial whose ids are in memory goes in
    ``out[:, j]`` (NaN where it has none), each hash match checked at once; with ids spilled
    (:attr:`Trials.spilled`), the matches go to ``matches`` (:class:`focal.io._spill.Matches`),
    checked later (:func:`_finish`).

    Returns
    -------
    fails : bool
        Whether the lookups already prove an error (``missing="error"``).
    streamed : tuple
        What :func:`_finish` needs: the source's name, and the scored trials not in the
        reference (:func:`_absent`) and their count.
    """
    values = out[:, j]  # filled in place
    values[:] = np.nan  # NaN: not scored yet (the readers refuse NaN scores)
    table = reference.table

    def look_up(piece):
        ids, columns, lines, *_ = piece
        scores = columns["score"]
        if matches is None:
            return ids, scores, lines, table.lookup(ids), None
        gathered = [_ids.gather_classes(c) for c in ids]
        where = table.lookup(ids, verify=False, gathered=gathered)
        return ids, scores, lines, where, matches.pack(where, lines, scores, gathered, j)

    if isinstance(source, (str, os.PathLike)):
        shown = display_name(source)
        parts = pieces(source, layout, executor=executor, then=look_up, block_bytes=block_bytes)
    else:  # in memory: one piece
        shown = source.path or "scores"
        scores = np.asarray(source.scores, dtype=np.float64)
        if np.isnan(scores).any():
            raise ValueError(f"{shown}: scores[{int(np.argmax(np.isnan(scores)))}] is NaN")
        ids = (
            Ids.of(as_id_array(source.models, "models")),
            Ids.of(as_id_array(source.tests, "tests")),
        )
        n = scores.shape[0]
        if not len(ids[0]) == len(ids[1]) == n:
            raise ValueError(f"{shown}: models, tests and scores must have one length")
        lines = np.arange(1, n + 1) if source.lines is None else source.lines.numbers(n)
        parts = [look_up((ids, {"score": scores}, lines))]
    absent, n_absent, n, hits = [], 0, 0, 0
    for (models, tests), scores, lines, where, packed in parts:
        n += len(lines)
        hit = where >= 0
        rows = where[hit]
        hits += rows.size
        if matches is None:
            before = ~np.isnan(values[rows])  # scored in an earlier block
            order = np.arange(rows.size, dtype=np.float64)
            values[rows] = order  # a row written twice keeps its last index only
            if before.any() or (values[rows] != order).any():
                _repeated(shown, models, tests, lines, where, before)
            values[rows] = scores[hit]
        else:  # the scores are put in place as the matches are checked
            matches.write(packed)
        if rows.size < hit.size:
            miss = np.flatnonzero(~hit)
            n_absent += miss.size
            absent = _absent(absent, missing, models.take(miss), tests.take(miss), lines[miss])
    if n == 0:
        raise ValueError(f"{shown}: no trials found")
    fails = missing == "error" and (n_absent > 0 or hits != len(reference))
    return fails, (shown, absent, n_absent)


def _finish(reference, values, missing, shown, absent, n_absent, wrong=None, repeat=None):
    """The errors of a source streamed by :func:`_scores_against` once its matches are
    checked (``wrong``, ``repeat``: what :meth:`focal.io._spill.Matches.check` found for it),
    in the order a plain loop would find them.
    """
    if repeat is not None:
        raise _twice(shown, *repeat)
    if wrong is not None:  # hash matches of other trials
        n_absent += wrong[2].size
        absent = _absent(absent, missing, Ids.of(wrong[0]), Ids.of(wrong[1]), wrong[2])
    if n_absent and missing == "error":
        raise ValueError(
            f"{shown}: {n_absent} scored trial(s) are not in the {reference.name}, "
            f"e.g. {', '.join(text for _, text in absent)}; use missing='drop' "
            f"(focal: --missing drop) to skip them"
        )
    if absent:
        _check_repeats(shown, absent)
    if missing == "error" and np.isnan(values).any():
        rows = np.flatnonzero(np.isnan(values))
        raise ValueError(
            f"{shown}: {rows.size} trial(s) of the {reference.name} have no score, e.g. "
            f"{reference.described(rows)}; use missing='drop' (focal: --missing drop) to "
            f"skip them"
        )


def _absent(absent, missing, models, tests, lines):
    """``absent`` with these scored trials that the reference does not hold: with ``missing``
    "error", the first three in file order (``(line, text)``), else all of them (to check them
    for repeats at the end).
    """
    if missing == "drop":
        return [*absent, (models.compact(), tests.compact(), lines)]
    first = np.argsort(lines, kind="stable")[:3]
    texts = [(int(lines[i]), f"({ids_text(models[i])}, {ids_text(tests[i])})") for i in first]
    return sorted(absent + texts)[:3]


def _repeated(shown, models, tests, lines, where, before):
    """Raise the error of a trial scored twice (in this block, or in this block and before:
    ``before`` marks the block's matched trials scored in an earlier block).
    """
    order = np.flatnonzero(where >= 0)
    rows = where[order]
    first = np.zeros(rows.size, dtype=bool)
    _, at = np.unique(rows, return_index=True)
    first[at] = True
    bad = before | ~first
    i = order[int(np.argmax(bad))]
    raise _twice(shown, int(lines[i]), models[i], tests[i])


def _twice(shown, line, model, test):
    """The error of a reference trial scored a second time, on ``line``."""
    return ValueError(
        f"{shown}:{line}: duplicate trial ({ids_text(model)}, {ids_text(test)}), scored "
        "before in the file"
    )


def _check_repeats(shown, absent):
    """A trial absent from the reference, scored twice: the error naming both lines."""
    models = [a[0].compact() for a in absent]
    tests = [a[1].compact() for a in absent]
    lines = np.concatenate([a[2] for a in absent])
    models, tests = Ids.concat(models), Ids.concat(tests)
    dup = _ids.find_duplicate((models, tests))
    if dup is not None:
        first, second = dup
        raise ValueError(
            f"{shown}:{int(lines[second])}: duplicate trial "
            f"({ids_text(models[second])}, {ids_text(tests[second])}), first seen "
            f"on line {int(lines[first])}"
        )


def join(
    reference,
    sources,
    *,
    format=None,
    missing="error",
    threads=None,
    pool=None,
    block_bytes=BLOCK_BYTES,
):
    """The scores of the reference's trials in each source, joined on the (model, test) trial.

    Parameters
    ----------
    reference : Trials
        The trials joined against (:func:`read_columns`, its ids in memory or spilled;
        :func:`in_memory`); its ``name`` attribute says what messages call it
        (``"key path"``).
    sources : sequence
        Score files (streamed, one after the other) or in-memory :class:`focal.io.TrialScores`.
    format : str or Layout, optional
        Columns of the score files.
    missing : {"error", "drop"}
        A scored trial absent from the reference, or a reference trial without a score in a
        source: an error (count and first trials), or skipped (its scores NaN).
    threads : int, optional
        Worker threads (:func:`focal._text.pool.worker_pool`; 0: none).
    pool : Executor, optional
        A pool already open, used instead of one of ``threads`` workers.
    block_bytes : int
        Bytes read and parsed at a time.

    Returns
    -------
    ndarray of float64, shape (len(reference), len(sources))
        NaN where a source has no score (``missing="drop"``).

    Raises
    ------
    ValueError
        A reader error (``path:line:``), a repeated trial (``path:line:``), scored trials not in
        the reference or reference trials without a score (``missing="error"``), or a source
        without trials; the first source's error first.
    """
    check_missing(missing)
    layout = score_layout(format)
    X = np.empty((len(reference), len(sources)))
    matches = None if reference.spilled is None else Matches(reference.spilled)
    streamed = []  # the sources streamed, their matches not checked yet
    with worker_pool(threads, pool) as executor, contextlib.ExitStack() as stack:
        if matches is not None:
            stack.callback(matches.close)
        for j, source in enumerate(sources):
            fails, state = _scores_against(
                reference,
                source,
                j,
                layout=layout,
                missing=missing,
                executor=executor,
                out=X,
                matches=matches,
                block_bytes=block_bytes,
            )
            streamed.append(state)
            # checked together (the key read back once), unless an error is already certain
            if matches is None or j == len(sources) - 1 or fails:
                found = {} if matches is None else matches.check(X, executor)
                for k, state in enumerate(streamed, start=j + 1 - len(streamed)):
                    _finish(reference, X[:, k], missing, *state, *found.get(k, ()))
                streamed = []
    return X


def kept_rows(X, reference, sources):
    """None when every reference trial has a score in every source (``X`` of :func:`join`),
    else the mask of those that have; none at all is an error naming the files.
    """
    if not np.isnan(X).any():  # the common case, in one pass (a row-wise any: 10x slower)
        return None
    keep = ~np.isnan(X).any(axis=1)
    if not keep.any():
        names = ", ".join(
            display_name(s) if isinstance(s, (str, os.PathLike)) else (s.path or "scores")
            for s in sources
        )
        if reference.kind != "key":
            raise ValueError(f"no trial is present in every score file ({names})")
        raise ValueError(
            f"no trial of the {reference.name} is in every score file ({names}): "
            "is it the key of these scores?"
        )
    return keep


def _reference(paths, key_path, format, key_format, pos_label):
    """The trials joined against: the key, else the first file (with its labels), their ids
    spilled to a temporary file (:mod:`focal.io._spill`).
    """
    if (paths + ([os.fspath(key_path)] if key_path is not None else [])).count("-") > 1:
        raise ValueError("standard input ('-') can be read once: give it for one file only")
    if key_path is None:
        layout = score_layout(format)
        if not layout.has("label"):
            raise ValueError(
                f"no key given, and the {layout.name} score files have no label "
                f"column: give the key file (--key)"
            )
        reference = read_columns(
            paths[0], layout, ("score", "label"), pos_label=pos_label, spill=True
        )
        reference.kind = "first score file"
    else:
        key_format = default_key_format(format) if key_format is None else key_format
        reference = read_columns(
            key_path, key_layout(key_format), ("label",), pos_label=pos_label, spill=True
        )
    return reference


def _labelled(reference, X, paths, ids):
    """``(X, y, models, tests)`` of the reference trials scored in every file ``paths``
    (:func:`kept_rows`), the ids None unless ``ids``.
    """
    keep = kept_rows(X, reference, paths)
    y = reference.values["label"]
    if keep is not None:
        X, y = X[keep], y[keep]
    return X, y, *(reference.arrays(keep) if ids else (None, None))


def read_aligned(
    score_paths,
    key_path=None,
    *,
    format=None,
    key_format=None,
    pos_label=None,
    missing="error",
    ids=True,
):
    """What ``focal train`` reads: the key, then each score file streamed and joined with it
    (:func:`join`); without a key, the first file's labels (its own scores the first column).
    The key's ids are kept in temporary files meanwhile (:mod:`focal.io._spill`).

    Returns
    -------
    X, y, models, tests, key_path
        As :func:`focal.io.align_trials` (ids None unless ``ids``), and the name of the file
        the labels came from.
    """
    paths = [os.fspath(p) for p in score_paths]
    reference = _reference(paths, key_path, format, key_format, pos_label)
    try:
        sources = paths if "score" not in reference.values else paths[1:]
        X = join(reference, sources, format=format, missing=missing)
        if "score" in reference.values:
            X = np.column_stack([reference.values["score"], X])
        reference.table = None  # the lookups are done: memory back
        return (*_labelled(reference, X, paths, ids), reference.path)
    finally:
        reference.spilled.close()


def iter_aligned(
    score_paths,
    key_path=None,
    *,
    format=None,
    key_format=None,
    pos_label=None,
    missing="error",
    ids=True,
):
    """Each score file joined with the key on its own (``missing="drop"`` drops per file):
    yields ``(path, scores, y, models, tests)`` (ids None unless ``ids``); the key is read
    once (as in :func:`read_aligned`).
    """
    paths = [os.fspath(p) for p in score_paths]
    reference = _reference(paths, key_path, format, key_format, pos_label)
    try:
        for k, path in enumerate(paths):
            if "score" in reference.values and k == 0:
                X = reference.values["score"][:, None]
            else:
                X = join(reference, [path], format=format, missing=missing)
            X, y, models, tests = _labelled(reference, X, [path], ids)
            if k == len(paths) - 1:  # the joins done: the key's table and files freed
                reference.table = None
                reference.spilled.close()
                release_memory()
            yield path, X[:, 0], y, models, tests
    finally:
        reference.spilled.close()
