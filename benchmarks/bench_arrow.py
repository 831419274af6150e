"""The pyarrow text kernels of the streaming path (focal._text.arrow, extra ``fast``) against their
NumPy counterparts, on the 1 MiB blocks of a score file of lines ``spk12345 seg00000001 -2.345678``.

- parse: the scores of a block to float64 (NumPy's exact cast of the gathered tokens);
- equal: whether the ids of two files' blocks are equal line by line (a gather of both);
- join: lines ``ids + repr(score) + newline`` (the gathered ids and format_numbers' text).

CPU seconds per 10^6 lines (``time.thread_time``, rounds interleaved, min and median). Target:
each kernel at least twice as fast as its NumPy counterpart.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import skipped

from focal._text import arrow as _arrow
from focal._text.blocks import FRONT, iter_blocks
from focal._text.fields import format_lines
from focal._text.numbers import byte_masks, format_numbers, parse_numbers
from focal.io import write_scores


def _blocks(path):
    """(data, line starts, ends of the two ids, ends of the scores) of each block."""
    out = []
    for block in iter_blocks(path, 1 << 20):
        spaces = np.flatnonzero(block.body <= 32).reshape(-1, 3) + FRONT
        starts = np.concatenate([[FRONT], spaces[:-1, 2] + 1])
        out.append((block.data, starts, spaces[:, 1], spaces[:, 2]))
    return out


def _gather(data, starts, lengths):
    """The segments as a zero-padded byte matrix (the NumPy path's gather)."""
    width = max(8, -(-int(lengths.max()) // 8) * 8)
    windows = np.lib.stride_tricks.sliding_window_view(data, width)
    words = np.ascontiguousarray(windows[starts]).view(np.uint64)
    words &= np.take(byte_masks(width // 8), lengths, axis=0)
    return words.view(np.uint8)


def _fail(i, message):
    raise ValueError(f"token {i}: {message}")


def run(quick: bool = False) -> None:
    """Print the CPU time of each kernel per 10^6 lines, NumPy and pyarrow."""
    if not _arrow.enabled():
        skipped("focal._text.arrow", "pyarrow is not installed")
        return
    n = 50_000 if quick else 1_000_000
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sys1.scores"
        models = np.char.add(b"spk", np.char.zfill(rng.integers(0, 50_000, n).astype("S5"), 5))
        tests = np.char.add(b"seg", np.char.zfill(np.arange(n).astype("S8"), 8))
        write_scores(path, models, tests, np.round(rng.normal(size=n) * 3.0, 6))
        blocks = _blocks(path)
    copies = [data.copy() for data, *_ in blocks]
    fused = [rng.normal(size=starts.size) * 3.0 for _, starts, _, _ in blocks]
    _arrow._IMPORT_AFTER = 0

    def parse():
        for data, _, ids_end, end in blocks:
            parse_numbers(data, ids_end + 1, end - ids_end - 1, _fail)

    def equal():
        for (data, starts, ids_end, _), other in zip(blocks, copies):
            fast = _arrow.equal_segments(data, starts, ids_end, other, starts, ids_end)
            if fast is None:
                a = _gather(data, starts, ids_end - starts)
                np.array_equal(a, _gather(other, starts, ids_end - starts))

    def join():
        for (data, starts, ids_end, _), y in zip(blocks, fused):
            fast = _arrow.join_lines(data, starts, ids_end + 1, y)
            if fast is None:
                ids = _gather(data, starts, ids_end + 1 - starts)
                format_lines([ids, format_numbers(y)], sep=b"")

    kernels = {"parse": parse, "equal": equal, "join": join}
    times = {(k, off): [] for k in kernels for off in (True, False)}
    for _ in range(3 if quick else 5):
        for name, kernel in kernels.items():
            for off in (True, False):  # NumPy, then pyarrow
                _arrow._DISABLED = off
                t0 = time.thread_time()
                kernel()
                times[name, off].append((time.thread_time() - t0) * 1e6 / n)
    _arrow._DISABLED = False
    print(f"\n== CPU s per 10^6 lines ({n:,} lines, 1 MiB blocks): min / median")
    for name in kernels:
        slow, fast = times[name, True], times[name, False]
        print(
            f"{name:6s} numpy {min(slow):.3f} / {statistics.median(slow):.3f}   "
            f"pyarrow {min(fast):.3f} / {statistics.median(fast):.3f}   "
            f"ratio {min(slow) / min(fast):.1f}x"
        )
