"""Safe output files: never lose a user's data, never leave a partial file behind.

Every file focal writes (models, score files, calibrated outputs) goes through
:func:`write_output`, which

- refuses, before anything is written, an output that is a directory or the same file as one
  of the inputs (compared by device and inode, so ``./x``, ``/abs/x``, ``a/../x``, symbolic and
  hard links are all recognised);
- writes a regular file atomically: to a temporary file ``.focal-*.tmp`` in the folder of the
  *resolved* target (a symbolic link is followed, never replaced), renamed over the target at
  the end, with the mode an existing target had. A failed or interrupted write (an exception,
  KeyboardInterrupt, SIGTERM) removes the temporary file and leaves the old file untouched;
  after SIGKILL or a power cut the target is still the complete old or the complete new file
  (only a stray temporary file may remain);
- streams straight to a character device, a FIFO or a socket (``/dev/stdout``, ``/dev/null``,
  a named pipe), to anything under ``/dev`` or ``/proc`` (``/dev/stdout`` redirected to a
  file with ``>> log`` is appended to, not replaced) and to ``-`` (standard output): these
  cannot be replaced atomically and must never be replaced by a regular file;
- names the file in every error (``path: cannot write: No space left on device``): the
  ``OSError`` of the system (also a ``ValueError``, :func:`focal.exceptions.file_access_error`).

Inputs are opened with :func:`open_input`. A FIFO input blocks until a writer opens it, as
``cat`` does (no portable way to time this out exists).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import sys
import tempfile
import threading

__all__ = ["open_input", "check_output", "write_output", "is_stream", "same_file"]

#: errno values of a write that fails for lack of room or permission: reported with the path
_WRITE_ERRORS = {
    errno.ENOSPC,
    errno.EDQUOT,
    errno.EFBIG,
    errno.EROFS,
    errno.EIO,
    errno.EACCES,
    errno.EPERM,
}


def _fail(path, action, exc) -> OSError:
    from ..exceptions import file_access_error

    return file_access_error(exc, path, action)


def open_input(path):
    """Open ``path`` for binary reading; an OS error names the path (``path: cannot open:
    reason``) and stays an ``OSError`` (see :func:`focal.exceptions.file_access_error`).
    """
    path = os.fspath(path)
    try:
        return open(path, "rb")
    except OSError as exc:
        raise _fail(path, "cannot open", exc) from None


def _stat(path):
    try:
        return os.stat(path)
    except OSError:
        return None


def same_file(a, b) -> bool:
    """True when ``a`` and ``b`` name one existing file (device and inode, links followed)."""
    sa, sb = _stat(a), _stat(b)
    return sa is not None and sb is not None and (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


_STREAM_FOLDERS = ("/dev/", "/proc/")  # /dev/stdout, /dev/fd/1: the caller's open file


def is_stream(path) -> bool:
    """True for ``-``, for paths that are character devices, FIFOs or sockets, and for paths
    under ``/dev`` or ``/proc`` (``/dev/stdout`` redirected to a regular file, ``>> log``,
    must be appended to through the open descriptor, never replaced).
    """
    path = os.fspath(path)
    if path == "-" or (os.name == "posix" and os.path.abspath(path).startswith(_STREAM_FOLDERS)):
        return True
    st = _stat(path)
    return st is not None and (
        stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode)
    )


def check_output(output, inputs=()) -> None:
    """Refuse an output that cannot be written safely, before any work is done.

    Parameters
    ----------
    output : path-like
        The file to be written (``-`` is standard output).
    inputs : iterable of path-like
        Files that must never be overwritten: the inputs, a model, a key.

    Raises
    ------
    ValueError
        ``output`` is a directory, or the same file as one of ``inputs`` (by device and inode:
        through symbolic links, hard links and any spelling of the path).
    """
    output = os.fspath(output)
    if output == "-" or is_stream(output):
        return
    if os.path.isdir(output):
        raise ValueError(f"{output}: the output is a directory")
    for name in inputs:
        if name is not None and same_file(output, name):
            raise ValueError(
                f"{output}: the output would overwrite an input file "
                f"({os.fspath(name)} is the same file); nothing was written"
            )


class _Terminated(SystemExit):
    """Raised in the main thread on SIGTERM while an output is being written."""


def _on_sigterm(signum, frame):
    raise _Terminated(128 + signum)


@contextlib.contextmanager
def _sigterm_cleans_up():
    """While writing, turn SIGTERM into an exception (so the temporary file is removed), when
    SIGTERM has its default action and we are in the main thread; else change nothing.
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _new_file_mode(path) -> int:
    """The mode of an existing ``path``, else what ``open`` gives a new file (0666 - umask)."""
    st = _stat(path)
    if st is not None:
        return st.st_mode & 0o7777
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def _stream(path):
    if path == "-":
        out = sys.stdout.buffer
        yield out
        out.flush()
        return
    try:  # appending: /dev/stdout may be a regular file opened by the shell with >>
        handle = open(path, "ab")
    except OSError as exc:
        raise _fail(path, "cannot write", exc) from None
    with handle:
        yield handle


@contextlib.contextmanager
def write_output(path, inputs=()):
    """Write ``path`` safely; yields a binary file object.

    Parameters
    ----------
    path : path-like
        The output. ``-`` (standard output), character devices, FIFOs and sockets are written
        to directly; anything else atomically (see the module notes). A symbolic link is
        followed: its target is replaced, the link stays.
    inputs : iterable of path-like
        Files that must not be overwritten (see :func:`check_output`).

    Raises
    ------
    ValueError
        Before writing: see :func:`check_output`; the temporary file cannot be created. While
        writing: the disk is full, a quota is exceeded, ... (naming ``path``). Other errors
        raised by the caller's writing code propagate unchanged; in every case nothing of the
        new content is left behind.
    """
    path = os.fspath(path)
    check_output(path, inputs)
    if is_stream(path):
        try:
            with _stream(path) as out:
                yield out
        except OSError as exc:
            if exc.errno in _WRITE_ERRORS:
                raise _fail(path, "cannot write", exc) from None
            raise
        return
    target = os.path.realpath(path)
    # SIGTERM removes the temporary file from the moment it exists (handler installed first)
    with _sigterm_cleans_up():
        try:
            fd, tmp = tempfile.mkstemp(prefix=".focal-", suffix=".tmp", dir=os.path.dirname(target))
        except OSError as exc:
            raise _fail(path, "cannot write", exc) from None
        try:
            with os.fdopen(fd, "wb") as out:
                yield out
            os.chmod(tmp, _new_file_mode(target))  # mkstemp made it private (0600)
            os.replace(tmp, target)
        except OSError as exc:
            if exc.errno in _WRITE_ERRORS or exc.filename in (tmp, target):
                raise _fail(path, "cannot write", exc) from None
            raise
        finally:
            with contextlib.suppress(OSError):
                if os.path.lexists(tmp):
                    os.unlink(tmp)


def read_secret(path) -> bytes:
    """The secret key held in the file ``path``: its bytes (at most 64 KiB), without a final
    line break. Raises ``ValueError`` for an empty key.
    """
    with open_input(path) as handle:
        key = handle.read(1 << 16).rstrip(b"\r\n")
    if not key:
        raise ValueError(f"{os.fspath(path)}: the signing key file is empty")
    return key
