"""Opt-in progress bars (tqdm, the optional ``progress`` extra) and the library's logger.

Long computations (bootstrap replicates, blocks of a file, subset analyses) take ``progress=``:
False (default) shows nothing, True shows a tqdm bar on stderr (an error naming the extra if
tqdm is missing), and any callable ``progress(n_done)`` is called after each step, for programs
that report elsewhere. Messages go to the ``"focal"`` logger (silent unless configured; the
command line sets it with ``-v`` / ``-q``).
"""

from __future__ import annotations

import logging

__all__ = ["logger", "Progress"]

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
            try:
                from tqdm.auto import tqdm
            except ImportError:
                raise ValueError(
                    'progress=True needs tqdm (the "progress" extra): pip install tqdm'
                ) from None
            self.bar = tqdm(total=total, desc=what, unit="", leave=False)
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
