"""The file engine's one thread pool: blocks parsed (and looked up, and formatted) by worker
threads while the calling thread reads the next blocks and uses the results in order.

NumPy and pyarrow release the GIL in their kernels, so a block parsed in a worker runs on
another core. :func:`worker_pool` makes the pool (``threads=0``: none, everything runs in the
calling thread); :func:`in_order` is its one use. A task never waits for another task, so any
number of readers can share a pool of any size.

What keeps it (:func:`focal.workflows.apply_to_files` on the ``bench_apply`` files, 10^7
VoxCeleb-style trials x 3 systems, 2 cores, 3 runs each): 7.2-8.5 s wall for 12.4-13.3 s of CPU
with the pool, 10.0-12.4 s wall for 9.5-11.8 s of CPU with ``threads=0``; the pool buys about
30 % of the wall time for about 20 % more CPU.
"""

from __future__ import annotations

import collections
import contextlib
import os
from concurrent.futures import ThreadPoolExecutor

from ..exceptions import InvalidParameterError
from . import arrow

__all__ = ["in_order", "worker_pool"]

#: Items computed ahead of their use (their memory is the bound: a few blocks per reader)
DEPTH = 4


def worker_threads(threads=None) -> int:
    """Worker threads for ``threads``: None is one per CPU this process may run on (its
    affinity mask where the OS has one); 0 is none.
    """
    if threads is None:
        try:
            return len(os.sched_getaffinity(0))
        except AttributeError:  # pragma: no cover - macOS, Windows
            return os.cpu_count() or 1
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise InvalidParameterError(f"threads must be a non-negative integer, got {threads!r}")
    return threads


@contextlib.contextmanager
def worker_pool(threads=None, pool=None):
    """A pool of :func:`worker_threads` workers for the ``with`` block, or None (``threads=0``);
    ``pool``, a pool the caller opened already, is used as it is (and left open).

    On exit, tasks not started are cancelled and running ones are waited for.
    """
    if pool is not None:
        yield pool
        return
    n = worker_threads(threads)
    if n == 0:
        yield None
        return
    executor = ThreadPoolExecutor(max_workers=n, thread_name_prefix="focal")
    try:
        yield executor
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def in_order(fn, items, executor, depth=DEPTH):
    """Yield ``fn(item)`` for each item, in order, up to ``depth`` of them computed ahead in
    ``executor`` (None: each computed here when asked for).

    The items are drawn in the calling thread. An error of ``fn`` or of the items is raised
    after the results of the items before it, as a loop over the items would raise it.
    """
    if executor is None:
        yield from map(fn, items)
        return
    pending: collections.deque = collections.deque()
    items = iter(items)
    try:
        while True:
            try:
                item = next(items, _END)
            except BaseException:  # the items' error comes after the results before it
                while pending:
                    yield pending.popleft().result()
                raise
            if item is _END:
                break
            arrow.load()  # the workers never import: pyarrow is loaded here once they ask
            pending.append(executor.submit(fn, item))
            if len(pending) >= depth:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:  # the caller stopped early, or an error: drop the rest
            future.cancel()


_END = object()
