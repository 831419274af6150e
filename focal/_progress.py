"""Opt-in progress bars (tqdm, the optional ``progress`` extra) and the library's logger.

Long computations (bootstrap replicates, blocks of a file, subset analyses) take ``progress=``:
False (default) shows nothing, True shows a tqdm bar on stderr (an error naming the extra if
tqdm is missing), and any callable ``progress(n_done)`` is called after each step, for programs
that report elsewhere. Messages go to the ``"focal"`` logger (silent unless configured; the
command line sets it with ``-v`` / ``-q``). A step of a file workflow (read, fit, plots, write)
runs inside :func:`step`: its wall time is logged when it ends, and with ``progress=True`` a
line on stderr shows its name and the time it has taken so far.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time

__all__ = ["logger", "Progress", "step"]

logger = logging.getLogger("focal")


class Progress:
    """Context manager counting ``total`` steps of work called ``what``.

    ``update(n)`` adds ``n`` done steps; with ``progress=True`` a tqdm bar shows them.
    """

    def __init__(self, progress, total: int | None, what: str):
        self.callback = progress if callable(progress) else None
        self.bar = None
        self.done = 0
        if progress is True:
            self.bar = _tqdm()(total=total, desc=what, unit="", leave=False)
        elif not (progress is False or progress is None or self.callback is not None):
            raise ValueError(f"progress must be True, False or a callable, got {progress!r}")

    def __enter__(self):
        return self

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        if self.callback is not None:
            self.callback(self.done)

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()


def _tqdm():
    """``tqdm.auto.tqdm``, or a ValueError naming the extra that installs it."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        raise ValueError(
            'progress=True needs tqdm (the "progress" extra): pip install tqdm'
        ) from None
    return tqdm


_TICK = 0.5  # seconds between two refreshes of a step's elapsed time


class _Ticker:
    """A tqdm line showing a step's name and elapsed time, refreshed by a thread of its own."""

    def __init__(self, what: str):
        self.bar = _tqdm()(total=None, desc=what, bar_format="{desc}: {elapsed}", leave=False)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._tick, name="focal-step", daemon=True)
        self.thread.start()

    def _tick(self):
        while not self.stop.wait(_TICK):
            self.bar.refresh()

    def close(self):
        self.stop.set()
        self.thread.join()
        self.bar.close()


@contextlib.contextmanager
def step(what: str, progress=False):
    """Run a step of a workflow called ``what`` (e.g. ``"read eval.scores"``): its wall time is
    logged (INFO, ``-v``) when it ends without an error; with ``progress=True`` a tqdm line on
    stderr shows ``what`` and the seconds taken so far, refreshed every half second (a step
    whose amount of work is not known in advance: a read, a fit, a figure).
    """
    start = time.perf_counter()
    ticker = _Ticker(what) if progress is True else None
    try:
        yield
    finally:
        if ticker is not None:
            ticker.close()
    logger.info("%s: %.2f s", what, time.perf_counter() - start)
