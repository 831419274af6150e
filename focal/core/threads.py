"""One BLAS thread during the solvers' passes, process-wide and safe for concurrent fits.

A Newton pass makes many small matrix products on blocks of a few thousand trials; spreading
each over threads costs more than it gains, and on a busy machine it is many times slower
(measured on a loaded 2-core host: 2.6 s against 52 s for one multiclass 'full' fit of 200k
trials). scikit-learn's KMeans limits BLAS threads for the same reason. The limit is
process-wide, so concurrent fits share it: the first one in sets it, the last one out restores
the original setting.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from typing import Any

__all__ = ["single_threaded_blas"]

_lock = threading.Lock()
_state: dict[str, Any] = {"users": 0, "limiter": None}


@functools.lru_cache(maxsize=1)
def _controller():
    from threadpoolctl import ThreadpoolController  # a dependency of scikit-learn

    return ThreadpoolController()


@contextlib.contextmanager
def single_threaded_blas(active: bool = True):
    """Context keeping BLAS on one thread (a no-op when ``active`` is False, e.g. tiny data)."""
    if not active:
        yield
        return
    with _lock:
        if _state["users"] == 0:
            _state["limiter"] = _controller().limit(limits=1, user_api="blas")
        _state["users"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["users"] -= 1
            if _state["users"] == 0:
                _state["limiter"].restore_original_limits()
                _state["limiter"] = None
