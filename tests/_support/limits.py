"""Run a function in a forked child under CPU-time, memory and file-size limits
(resource.setrlimit) and a wall-clock deadline.

A reader that regresses to quadratic time or unbounded memory on hostile input then fails its
test (killed by the limit, or out of memory) instead of hanging the test suite; a writer that
grows a file without bound (an output appended to an input it is reading) stops at the file-size
limit. The limits are generous (seconds of CPU, a few hundred MB above what the process already
maps): they catch blow-ups, not ordinary slowness. The file-size limit also stands in for a
full disk: a write past it fails with ``EFBIG`` ("File too large"). The child's outcome comes
back through a pipe: the value returned, or the type and message of the exception raised.
"""

from __future__ import annotations

import os
import pickle
import resource
import signal
import sys
import time

import pytest

if sys.platform == "win32":  # pragma: no cover
    pytest.skip("needs fork and resource limits", allow_module_level=True)


def _mapped_bytes() -> int:
    """Virtual memory the process maps now (Linux), else 0."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run_limited(function, *args, cpu_seconds=10, memory_mb=300, wall_seconds=60, file_mb=64):
    """``function(*args)`` in a child process under limits (``file_mb``: the largest file it
    may write, in MB; a write past it raises ``OSError(EFBIG)``).

    Returns ``("ok", value)`` or ``("raised", type_name, message, names of its classes)``; a
    child killed by a limit (CPU time, memory, wall clock) fails the calling test with what
    happened.
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_end)
        try:
            try:
                mapped = _mapped_bytes()
                if mapped:  # Linux; elsewhere only the CPU and wall-clock limits apply
                    limit = mapped + memory_mb * 2**20
                    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
                resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a signal
                size = int(file_mb * 2**20)
                resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
                outcome = ("ok", function(*args))
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                outcome = (
                    "raised",
                    type(exc).__name__,
                    str(exc),
                    [c.__name__ for c in type(exc).__mro__],
                )
            try:
                data = pickle.dumps(outcome)
            except Exception:  # noqa: BLE001
                data = pickle.dumps(("ok", repr(outcome[1])))
            with os.fdopen(write_end, "wb") as out:
                out.write(data)
        finally:
            os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + wall_seconds
    with os.fdopen(read_end, "rb") as source:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                pytest.fail(f"still running after {wall_seconds} s of wall-clock time")
            time.sleep(0.01)
        data = source.read()
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        pytest.fail(f"killed by {name} (CPU limit {cpu_seconds} s, memory +{memory_mb} MB)")
    if not data:
        pytest.fail("the child died without a result")
    return pickle.loads(data)


def expect_error(outcome, match):
    """Assert the child raised a ValueError (or a subclass, such as focal's FileFormatError)
    whose message matches the regular expression.
    """
    import re

    assert outcome[0] == "raised", f"no error; the call returned {outcome[1]!r}"
    assert "ValueError" in outcome[3], f"{outcome[1]}: {outcome[2]}"
    assert re.search(match, outcome[2]), outcome[2]
    return outcome[2]
