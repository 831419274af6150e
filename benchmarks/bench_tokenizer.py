"""The text reader's steps on a score file: CPU seconds per 10^6 lines of each.

Steps of reading ``model test score`` lines: the block reader
(:func:`focal._text.blocks.iter_blocks`: reads, NUL / UTF-8 / line-length checks, line feeds), the
tokenizer (:func:`focal._text.fields.split_fields`), the two id columns
(:meth:`focal._text.fields.Fields.ids`) and the scores (:meth:`focal._text.fields.Fields.numbers`).
Each is timed in CPU time of this thread (``time.thread_time``: on a shared machine, wall time also
counts the other programs' turns), summed over the blocks of the file, ``repeat`` times: min and
median are reported, with the floor of reading the file's bytes into memory (``readinto``, no
parsing) as the ratio's base. A file of another shape (two spaces after the model id) shows what the
tokenizer's fast path costs when it declines: :func:`~focal._text.fields.split_fields` against its
general path alone. Then :func:`focal.io.read_scores` whole: CPU time and peak memory (tracemalloc)
for block sizes of 1, 2 and 4 MiB.
"""

from __future__ import annotations

import gc
import pathlib
import statistics
import tempfile
import time

import numpy as np
from _common import peak_memory

from focal._text import blocks as _blocks
from focal._text.blocks import iter_blocks
from focal._text.fields import _split_general, split_fields
from focal.io import read_scores, write_scores

STEPS = ("read bytes (floor)", "iter_blocks", "split_fields", "ids x2", "numbers")


def _make_file(folder, n):
    """A score file of n lines ``spk12345 seg00000001 -2.345678`` (as benchmarks/bench_io)."""
    rng = np.random.default_rng(0)
    models = np.char.add(
        b"spk", np.char.zfill(np.char.encode(rng.integers(0, 50_000, n).astype("U5")), 5)
    )
    tests = np.char.add(b"seg", np.char.zfill(np.char.encode(np.arange(n).astype("U8")), 8))
    path = pathlib.Path(folder) / "sys1.scores"
    write_scores(path, models, tests, np.round(rng.normal(size=n) * 3.0, 6))
    return path


def _floor(path, block_bytes):
    """CPU seconds of reading the bytes alone, block by block."""
    buffer = np.empty(block_bytes, dtype=np.uint8)
    t0 = time.thread_time()
    with open(path, "rb", buffering=0) as handle:
        while handle.readinto(memoryview(buffer)):
            pass
    return time.thread_time() - t0


def _steps(path, block_bytes):
    """CPU seconds of each step, summed over the blocks of the file."""
    times = dict.fromkeys(STEPS[1:], 0.0)
    blocks = iter_blocks(path, block_bytes)
    while True:
        t0 = time.thread_time()
        block = next(blocks, None)
        t1 = time.thread_time()
        times["iter_blocks"] += t1 - t0
        if block is None:
            break
        fields = split_fields(block, 3, "'model test score'")
        t2 = time.thread_time()
        fields.ids(0)
        fields.ids(1)
        t3 = time.thread_time()
        fields.numbers([2], path)
        times["split_fields"] += t2 - t1
        times["ids x2"] += t3 - t2
        times["numbers"] += time.thread_time() - t3
    return times


def _other_shape(path, folder):
    """The file with two spaces after the model id (a shape the fast path declines)."""
    other = pathlib.Path(folder) / "two_spaces.scores"
    other.write_bytes(path.read_bytes().replace(b" seg", b"  seg"))
    return other


def _split_times(path):
    """CPU seconds of split_fields and of the general path alone, over the file's blocks."""
    times = {"split_fields": 0.0, "general path alone": 0.0}
    contenders = [("split_fields", split_fields), ("general path alone", _split_general)]
    for block in iter_blocks(path):
        _ = block.newlines  # found once, for both
        contenders.reverse()  # each goes first (cold caches) every other block
        for name, split in contenders:
            t0 = time.thread_time()
            split(block, 3, "'model test score'")
            times[name] += time.thread_time() - t0
    return times


def _read_cpu(path, block_bytes):
    t0 = time.thread_time()
    read_scores(path, block_bytes=block_bytes)
    return time.thread_time() - t0


def run(quick: bool = False):
    n = 1_000_000
    repeat = 3 if quick else 7
    with tempfile.TemporaryDirectory(prefix="focal-bench-tok-") as folder:
        path = _make_file(folder, n)
        size = path.stat().st_size
        print(f"{n:,} lines, {size / 2**20:.0f} MiB; CPU s (thread_time) per 10^6 lines")
        for block_bytes in (_blocks.BLOCK_BYTES,):
            samples = {k: [] for k in STEPS}
            for _ in range(repeat):
                gc.collect()
                samples[STEPS[0]].append(_floor(path, block_bytes))
                for k, v in _steps(path, block_bytes).items():
                    samples[k].append(v)
            base = min(samples[STEPS[0]])
            print(f"\n== steps, blocks of {block_bytes >> 20} MiB (repeat {repeat})")
            for k in STEPS:
                lo, med = min(samples[k]), statistics.median(samples[k])
                scale = 1e6 / n
                print(
                    f"  {k:<20} min {lo * scale:6.3f}  median {med * scale:6.3f}"
                    f"   {lo / base if base > 0 else float('nan'):6.1f}x floor"
                )
            total = sum(min(samples[k]) for k in STEPS[1:])
            print(f"  {'sum of mins':<20}     {total * 1e6 / n:6.3f}")
        other = _other_shape(path, folder)
        samples = {"split_fields": [], "general path alone": []}
        for _ in range(repeat):
            for k, v in _split_times(other).items():
                samples[k].append(v)
        print(f"\n== a file the fast path declines (two spaces after the model; repeat {repeat})")
        for k, v in samples.items():
            print(f"  {k:<20} min {min(v):6.3f}  median {statistics.median(v):6.3f}")
        print(f"\n== read_scores whole (repeat {repeat}): CPU s min / median, peak MiB")
        for mib in (1, 2, 4):
            cpu = [_read_cpu(path, mib << 20) for _ in range(repeat)]
            peak, _ = peak_memory(read_scores, path, block_bytes=mib << 20)
            print(
                f"  blocks of {mib} MiB   {min(cpu):6.3f} / {statistics.median(cpu):6.3f} s"
                f"   peak {peak / 2**20:6.1f} MiB"
            )


if __name__ == "__main__":
    import sys

    run("--quick" in sys.argv)
