"""Partition files: the metadata of each trial (gender, language, source type, ...) that
partitioned scoring groups the trials by (:func:`focal.metrics.partition_report`).

A partition file is a table with a header; its first two columns are the trial (model and test
ids, named as one likes), the others partition columns, one label per trial::

    modelid  segmentid  gender  phone_num_match
    spk0001  seg0001    female  Y
    spk0001  seg0002    female  N

White space or commas separate the fields (labels hold neither); blank lines and lines starting
with ``#`` are skipped. A NIST SRE18/19 trial key is such a file (``modelid segmentid side
targettype num_enroll_segs phone_num_match gender source_type data_source``): name the columns
to use. Each evaluated trial must have a line; lines of other trials are ignored.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from .._text.fields import as_id_array, concat_pieces, iter_lines
from ..exceptions import FileFormatError
from ._ids import find_duplicate, match_ids

__all__ = ["PartitionTable", "read_partitions", "trial_partitions"]


class PartitionTable(NamedTuple):
    """The partition labels of the trials of a partition file.

    Attributes
    ----------
    path : str
    columns : tuple of str
        The partition columns read, in the order asked for.
    models, tests : ndarray of bytes
        The trial ids of each line.
    labels : ndarray of str, shape (n_lines, n_columns)
        The label of each line in each column.
    lines : ndarray of int
        The file line of each row (for messages).
    """

    path: str
    columns: tuple
    models: np.ndarray
    tests: np.ndarray
    labels: np.ndarray
    lines: np.ndarray


def read_partitions(path, columns=None) -> PartitionTable:
    """Read a partition file (see the module docstring).

    Parameters
    ----------
    path : path-like
        The file.
    columns : sequence of str, optional
        The partition columns to read, by header name (default: every column after the first
        two).

    Returns
    -------
    PartitionTable
        One row per trial line.

    Raises
    ------
    ValueError
        ``path:line:`` for a line of another number of fields than the header, a repeated
        trial, a missing header; an unknown column name, naming the header's.
    """
    name = os.fspath(path)
    header: list = []
    header_line = 0
    pieces: dict = {"models": [], "tests": [], "labels": [], "lines": []}
    take: list = []
    for block in iter_lines(name):
        rows = np.flatnonzero(block.counts > 0)
        rows = rows[~block.first_field_starts_with(b"#")[rows]]
        if not header and rows.size:
            header_line = block.line(rows[0])
            header = [block.text(rows[0], k) for k in range(int(block.counts[rows[0]]))]
            take = _columns(header, columns, name, header_line)
            rows = rows[1:]
        if not rows.size:
            continue
        wrong = np.flatnonzero(block.counts[rows] != len(header))
        if wrong.size:
            i = rows[wrong[0]]
            block.fail(
                i,
                f"{int(block.counts[i])} fields where the header (line {header_line}) names "
                f"{len(header)}",
            )
        fields = block.fields(rows, len(header))
        pieces["models"].append(fields.ids(0))
        pieces["tests"].append(fields.ids(1))
        pieces["labels"].append(
            np.column_stack([np.char.decode(fields.ids(j), "utf-8") for j in take])
        )
        pieces["lines"].append(fields.lines)
    if not header:
        raise FileFormatError(name, 1, "no header: expected 'model test column...'")
    if not pieces["models"]:
        raise FileFormatError(name, header_line, "no trial under the header")
    models, tests = concat_pieces(pieces["models"]), concat_pieces(pieces["tests"])
    labels = np.concatenate([p.astype(str) for p in pieces["labels"]])
    lines = np.concatenate(pieces["lines"])
    twice = find_duplicate((models, tests))
    if twice is not None:
        first, second = twice
        raise FileFormatError(
            name, int(lines[second]), f"trial repeated (first at line {int(lines[first])})"
        )
    return PartitionTable(name, tuple(header[j] for j in take), models, tests, labels, lines)


def _columns(header, wanted, path, line):
    """Indices of the partition columns asked for (default: every column after the trial's)."""
    if len(header) < 3:
        raise FileFormatError(
            path, line, f"the header names {len(header)} column(s): expected 'model test "
            "column...', a trial and at least one partition column"
        )  # fmt: skip
    if wanted is None:
        return list(range(2, len(header)))
    wanted = [str(c) for c in wanted]
    unknown = [c for c in wanted if c not in header[2:]]
    if unknown or not wanted or len(set(wanted)) != len(wanted):
        raise ValueError(
            f"{path}: partition columns {wanted} must be distinct names of its header's "
            f"partition columns {header[2:]}"
        )
    return [header.index(c) for c in wanted]


def trial_partitions(table: PartitionTable, models, tests, label: str = "scores"):
    """The partition labels of trials ``(models, tests)``: an (n, n_columns) array of str.

    Parameters
    ----------
    table : PartitionTable
        From :func:`read_partitions`.
    models, tests : array_like of bytes or str
        The evaluated trials' ids.
    label : str, default "scores"
        The trials' source, named in the error.

    Returns
    -------
    ndarray of str, shape (n_trials, n_columns)
        Row i: the labels of trial i, one per column of ``table.columns``.

    Raises
    ------
    ValueError
        Naming a trial without a line in the partition file.
    """
    query = as_id_array(np.asarray(models), "models"), as_id_array(np.asarray(tests), "tests")
    index = match_ids(query, (table.models, table.tests))
    absent = np.flatnonzero(index < 0)
    if absent.size:
        i = int(absent[0])
        raise ValueError(
            f"{table.path}: {absent.size} trial(s) of {label} have no partition labels, e.g. "
            f"{query[0][i].decode()} {query[1][i].decode()}"
        )
    return table.labels[index]
