"""Read ahead: the next items of a reader, made in worker threads while the caller works.

The readers parse a file block by block with NumPy, which releases the GIL, so a file's next
blocks can be parsed on the second core while the caller aligns, transforms or writes the
current ones. One item ahead is not enough: a caller that needs two blocks at once (a chunk
larger than a block) would then wait for each in turn. :func:`prefetch` keeps up to ``depth``
items ready, each made by one short task (one ``next`` call), so that any number of files can
share a pool of any size without a task ever waiting for the caller.
"""

from __future__ import annotations

import collections
import threading

from .._text import arrow

__all__ = ["prefetch"]

_DEPTH = 4


class _Ahead:
    """The state shared by the caller and the tasks: ready items, the error, the end."""

    def __init__(self, items, executor, depth):
        self.items, self.executor, self.depth = items, executor, depth
        self.ready = collections.deque()
        self.cond = threading.Condition()
        self.running = self.ended = self.closed = False
        self.error = None

    def schedule(self):
        """Start the next task unless one runs, enough items wait, or the reader ended (the
        caller holds ``cond``).
        """
        if self.running or self.ended or self.closed or len(self.ready) >= self.depth:
            return
        self.running = True
        try:
            future = self.executor.submit(self.make_one)
        except RuntimeError as exc:  # the pool was shut down
            self.running, self.ended, self.error = False, True, exc
        else:
            future.add_done_callback(self.cancelled)

    def cancelled(self, future):
        """A task cancelled before it ran (the pool was shut down): nothing more will come."""
        if future.cancelled():
            with self.cond:
                self.running, self.ended = False, True
                self.error = RuntimeError("reading ahead was cancelled (the pool was shut down)")
                self.cond.notify_all()

    def make_one(self):
        try:
            item = next(self.items, None)
            error = None
        except BaseException as exc:  # handed to the caller, in order
            item, error = None, exc
        with self.cond:
            self.running = False
            if error is not None:
                self.error, self.ended = error, True
            elif item is None:
                self.ended = True
            else:
                self.ready.append(item)
            self.schedule()
            self.cond.notify_all()


def prefetch(items, executor, depth=_DEPTH):
    """Yield the items of an iterator, up to ``depth`` of them made ahead in ``executor``.

    Parameters
    ----------
    items : iterator
        E.g. the pieces of a block reader; ``next`` is called on it by one task at a time.
    executor : concurrent.futures.Executor or None
        The worker pool (None: the items are made in the calling thread, when asked for).
    depth : int
        Items made ahead at most (their memory is the bound).

    Yields
    ------
    object
        The items, in order; an exception of the iterator is raised here, after the items
        made before it.
    """
    if executor is None:
        yield from items
        return
    state = _Ahead(items, executor, depth)
    with state.cond:
        state.schedule()
    try:
        while True:
            with state.cond:
                while not state.ready and not state.ended:
                    state.cond.wait()
                if state.ready:
                    item = state.ready.popleft()
                    state.schedule()
                    # the workers never import: pyarrow is loaded here once they asked for it
                    arrow.load()
                elif state.error is not None:
                    raise state.error
                else:
                    return
            yield item
    finally:
        with state.cond:  # no new task; one that runs finishes (the pool waits for it)
            state.closed = True
