"""Writers of multiclass score files: the Albayzin 2012 system-output format (plan sec. 6.1.3)
and the generic format with a header of class names (see :mod:`focal.io.multiclass`). Numbers
are written so that they read back bit-identically.

Public through :mod:`focal.io.multiclass` and :mod:`focal.io`.

References
----------
.. [1] :cite:t:`albayzin2012plan` ("Albayzin plan").
"""

from __future__ import annotations

import numpy as np

from .._text.fields import check_id_column, format_lines
from .._text.numbers import format_numbers
from .._text.outputs import write_output
from .multiclass import _CONDITIONS, ALBAYZIN_CLASSES, _check_header

__all__ = ["write_albayzin_scores", "write_multiclass_scores"]


def _check_llh(segments, llh):
    llh = np.asarray(llh, dtype=np.float64)
    if llh.ndim != 2 or llh.shape[0] != np.asarray(segments).shape[0]:
        raise ValueError(
            f"llh must have shape (n_segments, n_classes) with n_segments = "
            f"{np.asarray(segments).shape[0]}, got {llh.shape}"
        )
    if np.isnan(llh).any():
        i, j = np.argwhere(np.isnan(llh))[0]
        raise ValueError(f"llh[{i}, {j}] is NaN")
    return llh


def _write_rows(path, prefix_columns, llh, header, chunk_size):
    with write_output(path) as out:
        if header is not None:
            out.write(header)
        for i in range(0, llh.shape[0], chunk_size):
            j = i + chunk_size
            cols = [c[i:j] for c in prefix_columns]
            cols += [format_numbers(llh[i:j, k]) for k in range(llh.shape[1])]
            out.write(format_lines(cols))


def _constant_column(word, n):
    return np.broadcast_to(np.frombuffer(word.encode(), dtype=np.uint8), (n, len(word)))


def write_albayzin_scores(
    path, segments, llh, task, condition, *, chunk_size: int = 1 << 15
) -> None:
    """Write an Albayzin 2012 system-output file (plan sec. 6.1.3).

    ``llh`` is (n_segments, n + 1) in the task's class order (:data:`ALBAYZIN_CLASSES`), natural
    log; numbers are written so that they read back bit-identically.

    Parameters
    ----------
    path : str or path-like
        The file to write.
    segments : array_like of str, shape (n_segments,)
        The segment names.
    llh : array_like, shape (n_segments, n + 1)
        Natural-log likelihoods in the task's class order.
    task : {"Plenty", "Empty"}
        The Albayzin task.
    condition : {"Closed", "Open"}
        The Albayzin condition.
    chunk_size : int, default 32768
        Lines formatted at a time.
    """
    if task not in ALBAYZIN_CLASSES:
        raise ValueError(f"task must be 'Plenty' or 'Empty', got {task!r}")
    if condition not in _CONDITIONS:
        raise ValueError(f"condition must be 'Closed' or 'Open', got {condition!r}")
    llh = _check_llh(segments, llh)
    m = len(ALBAYZIN_CLASSES[task])
    if llh.shape[1] != m:
        raise ValueError(
            f"the {task} task has {m} classes ({', '.join(ALBAYZIN_CLASSES[task])}), "
            f"llh has {llh.shape[1]} columns"
        )
    seg = check_id_column(segments, "segments")
    n = llh.shape[0]
    _write_rows(
        path,
        [_constant_column(task, n), _constant_column(condition, n), seg],
        llh,
        None,
        chunk_size,
    )


def write_multiclass_scores(path, segments, llh, classes, *, chunk_size: int = 1 << 15) -> None:
    """Write the generic format: a header ``segment class1 ... classN`` then one line per segment.

    Parameters
    ----------
    path : str or path-like
        The file to write.
    segments : array_like of str, shape (n_segments,)
        The segment names.
    llh : array_like, shape (n_segments, n_classes)
        Natural-log likelihoods.
    classes : sequence of str
        The class name of each column.
    chunk_size : int, default 32768
        Lines formatted at a time.
    """
    llh = _check_llh(segments, llh)
    classes = [str(c) for c in classes]
    if len(classes) != llh.shape[1]:
        raise ValueError(f"{len(classes)} class names for {llh.shape[1]} llh columns")
    check_id_column(np.array(classes), "classes")
    _check_header("classes", classes)  # what the reader would refuse
    seg = check_id_column(segments, "segments")
    header = ("segment " + " ".join(classes) + "\n").encode()
    _write_rows(path, [seg], llh, header, chunk_size)
