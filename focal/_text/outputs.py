"""Safe outputs: decided by what the file is, never over an input, whole or not at all.

One door to the file system for writing, so one module: what an output is, its check against
the inputs, the atomic write and the report folder share one notion of "the same file" and one
clean-up on failure.

Every file focal writes (models, score files, calibrated outputs, the figures and page of a
report) goes through :func:`write_output` or :class:`FolderWriter`. What is done depends on
what the output *is* (``stat``, links followed), never on how its path is spelled:

- ``-`` is standard output;
- a character device, a FIFO or a socket (``/dev/null``, a terminal, a named pipe, a pipe
  reached through ``/dev/stdout``) is a stream: written to directly;
- a descriptor of this process that the shell opened on a regular file (``/dev/stdout``,
  ``/dev/fd/1``, ``/proc/self/fd/1`` with ``> log`` or ``>> log``) is appended to, as the
  shell asked: replacing the file would throw away what ``>> log`` keeps. A descriptor open
  for reading only (``-o /dev/stdin < file``) is refused;
- everything else, whatever its path (``/dev/shm/x``, ``/proc/self/cwd/x``, a symbolic link),
  is a regular file, written atomically: to a temporary file ``.focal-*.tmp`` in the folder
  of the *resolved* target (a symbolic link is followed, never replaced), renamed over the
  target at the end, with the mode an existing target had. A failed or interrupted write (an
  exception, KeyboardInterrupt, SIGTERM) removes the temporary file and leaves the old file,
  or no file, behind: never an empty or partial one. After SIGKILL only a stray temporary
  file may remain.

Before anything is written (before any work when the caller checks first: :func:`check_output`,
:func:`check_folder`, :func:`check_command`), an output is refused for the reasons
:func:`check_output` lists. "The same file" as an input is the same device and inode: through
any spelling of the path, ``/proc/self/...``, standard input (``fstat(0)``) when an input is
``-``, and the file standard output is redirected to when the output is ``-``. Character
devices are not compared (a terminal can be read and written at once).

Errors name the file (``path: cannot write: No space left on device``): ``ValueError``, or the
system's ``OSError`` that is also a ``ValueError`` (:func:`focal.exceptions.file_access_error`).

Inputs are opened with :func:`open_input`. A FIFO input blocks until a writer opens it, as
``cat`` does (no portable way to time this out exists).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import stat
import sys
import tempfile
import threading

from ..exceptions import file_access_error

__all__ = [
    "open_input",
    "check_output",
    "check_folder",
    "check_command",
    "write_output",
    "FolderWriter",
    "is_stream",
    "read_secret",
    "MAX_SECRET_BYTES",
    "REPORT_SUFFIXES",
]

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

#: the largest signing-key file read (bytes): a key is a few dozen bytes of secret
MAX_SECRET_BYTES = 1 << 16

#: the files of an HTML report (:mod:`focal.plots`): its page and its figures
REPORT_SUFFIXES = (".html", ".png", ".pdf", ".svg")


def open_input(path):
    """Open ``path`` for binary reading; an OS error names the path (``path: cannot open:
    reason``) and stays an ``OSError`` (see :func:`focal.exceptions.file_access_error`).
    """
    path = os.fspath(path)
    try:
        return open(path, "rb")
    except OSError as exc:
        raise file_access_error(exc, path, "cannot open") from None


def read_secret(path) -> bytes:
    """The secret key held in the file ``path``: all its bytes, without a final line break.

    The whole file is the key (so two keys that differ anywhere are two keys); a file larger
    than :data:`MAX_SECRET_BYTES` (64 KiB) is not a key file and is refused, as is an empty key.
    """
    with open_input(path) as handle:
        key = handle.read(MAX_SECRET_BYTES + 1)
    if len(key) > MAX_SECRET_BYTES:
        raise ValueError(
            f"{os.fspath(path)}: the signing key file is larger than {MAX_SECRET_BYTES} bytes: "
            "not a key file"
        )
    key = key.rstrip(b"\r\n")
    if not key:
        raise ValueError(f"{os.fspath(path)}: the signing key file is empty")
    return key


# ---------------------------------------------------------------------------------------------
# what a path is


def _stat(path, follow=True):
    """``os.stat`` of a path or a descriptor (links followed by default); None if it fails."""
    try:
        return os.stat(path, follow_symlinks=follow)
    except (OSError, ValueError):
        return None


#: the folder of a process's descriptors, once links are resolved: /proc/PID[/task/TID]/fd
_FD_FOLDER = re.compile(r"/proc/(\d+)(?:/task/\d+)?/fd")


def _descriptor(path) -> int | None:
    """The descriptor number when ``path`` names one of this process's open descriptors
    (``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``, through any links), else None.
    """
    if not sys.platform.startswith("linux"):
        return None
    p = os.path.abspath(path)
    for _ in range(40):  # as many links as the system follows
        head, name = os.path.split(p)
        head = os.path.realpath(head)
        found = _FD_FOLDER.fullmatch(head)
        if found and name.isdigit():
            return int(name) if int(found.group(1)) == os.getpid() else None
        try:
            target = os.readlink(os.path.join(head, name))
        except (OSError, ValueError):
            return None  # not a link
        p = os.path.normpath(os.path.join(head, target))
    return None


def _target(path):
    """``(kind, stat)`` of an output: kind ``"stdout"``, ``"stream"`` (written to directly,
    a regular file behind one of our descriptors included) or ``"file"``.
    """
    if path == "-":
        return "stdout", _stat(1)
    st = _stat(path)
    fd = _descriptor(path)
    if fd is not None:
        if st is None:
            raise ValueError(f"{path}: cannot write: no open descriptor {fd}")
        import fcntl  # POSIX; _descriptor finds descriptors on Linux only

        with contextlib.suppress(OSError):
            if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY:
                what = " (standard input)" if fd == 0 else ""
                raise ValueError(
                    f"{path}: descriptor {fd}{what} is open for reading only: not an output; "
                    "nothing was written"
                )
    if st is not None and (
        stat.S_IFMT(st.st_mode) in (stat.S_IFCHR, stat.S_IFIFO, stat.S_IFSOCK)
        or (fd is not None and stat.S_ISREG(st.st_mode))
    ):
        return "stream", st
    return "file", st


def is_stream(path) -> bool:
    """True for outputs written to directly, never replaced: ``-``, character devices, FIFOs,
    sockets, and descriptors of this process (``/dev/stdout`` redirected to a file).
    """
    path = os.fspath(path)
    try:
        return _target(path)[0] != "file"
    except ValueError:
        return False


# ---------------------------------------------------------------------------------------------
# checks, before any work


def _name(path, what="output") -> str:
    """``path`` as text, refused when empty or not UTF-8 (it could not be printed)."""
    path = os.fsdecode(path)
    if not path:
        raise ValueError(f"the {what} name is empty")
    if "\0" in path:
        raise ValueError(f"the {what} name {path!r} holds a NUL character")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            f"the {what} name {os.fsencode(path)!r} is not UTF-8 text: give a UTF-8 name; "
            "nothing was written"
        ) from None
    return path


def _input_files(inputs):
    """``[(name, stat)]`` of the inputs that exist (``-``: standard input, ``fstat(0)``)."""
    out = []
    for name in inputs:
        if name is None:
            continue
        name = os.fsdecode(name)
        st = _stat(0 if name == "-" else name)
        if st is not None:
            out.append(("standard input" if name == "-" else name, st))
    return out


def _refuse_inputs(output, st, inputs, what="the output") -> None:
    """Refuse ``output`` (of stat ``st``) when it is one of ``inputs`` (from _input_files)."""
    if st is None or stat.S_ISCHR(st.st_mode):
        return
    for name, input_st in inputs:
        if os.path.samestat(input_st, st):
            raise ValueError(
                f"{output}: {what} would overwrite an input file ({name} is the same "
                "file); nothing was written"
            )


def _probe(path, folder) -> None:
    """Refuse ``path`` unless a file can be created in ``folder`` (permissions, read-only
    file systems, ``/proc``): a temporary file, removed at once (SIGTERM included).
    """
    with _temporary(path, folder) as (fd, _):
        os.close(fd)


def check_output(output, inputs=()) -> None:
    """Refuse an output that cannot be written safely, before any work is done.

    Parameters
    ----------
    output : path-like
        The file to be written (``-`` is standard output).
    inputs : iterable of path-like
        Files that must never be overwritten: the inputs, a model, a key (``-``: standard
        input).

    Raises
    ------
    ValueError
        The name is empty, not UTF-8 or ends with ``/``; ``output`` is a directory, its folder
        does not exist or cannot be written; it is a descriptor open for reading only; or it is
        the same file as one of ``inputs`` (by device and inode: through symbolic links, hard
        links and any spelling of the path).
    """
    _checked(_name(output), inputs)


def _checked(path, inputs):
    """:func:`check_output` of a checked name; the output's kind (:func:`_target`)."""
    kind, st = _target(path)
    inputs = _input_files(inputs)
    if kind != "file":
        _refuse_inputs("standard output" if path == "-" else path, st, inputs)
        return kind
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise ValueError(f"{path}: the output is a directory")
    if path.endswith(("/", os.sep)) or os.path.basename(path) in (".", ".."):
        raise ValueError(f"{path}: the output names a folder (it ends with '/'): give a file name")
    _refuse_inputs(path, st, inputs)
    folder = os.path.dirname(os.path.realpath(path))
    if not os.path.isdir(folder):
        shown = folder if os.path.islink(path) else (os.path.dirname(path) or ".")
        problem = "is not a folder" if os.path.exists(folder) else "does not exist"
        raise ValueError(f"{path}: cannot write: the folder {shown} {problem}")
    _probe(path, folder)
    return kind


def check_folder(folder, inputs=()) -> None:
    """Refuse, before any work, a folder that a report (:class:`FolderWriter`) cannot fill.

    Parameters
    ----------
    folder : path-like
        The folder, created with its parents if missing.
    inputs : iterable of path-like
        Files that must never be overwritten: none of them may be (or be linked from) a file of
        the folder named like a report's (:data:`REPORT_SUFFIXES`).

    Raises
    ------
    ValueError
        The name is empty or not UTF-8; ``folder`` is not a folder, cannot be created or written
        into; or it holds, under a report file's name, one of ``inputs`` or a link to one.
    """
    folder = _name(folder, "output folder")
    st = _stat(folder)
    if st is None:
        if os.path.lexists(folder):
            raise ValueError(f"{folder}: the output folder is a broken symbolic link")
        parent = os.path.dirname(os.path.abspath(folder))
        while not os.path.lexists(parent):
            parent = os.path.dirname(parent)
        if not os.path.isdir(parent):
            raise ValueError(f"{folder}: cannot create the folder: {parent} is not a folder")
        _probe(folder, parent)
        return
    if not stat.S_ISDIR(st.st_mode):
        raise ValueError(f"{folder}: not a folder (a report is a folder of files)")
    _probe(folder, folder)
    inputs = _input_files(inputs)
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.endswith(REPORT_SUFFIXES):
                _refuse_inputs(
                    os.path.join(folder, entry.name), _stat(entry.path), inputs, "the report"
                )


def _named_files(value):
    """The file names an option value may hold: a string (and the FILE of ``NAME=FILE``), or
    the strings of a list.
    """
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _named_files(item)
    elif isinstance(value, (str, os.PathLike)):
        yield value
        if isinstance(value, str) and "=" in value:
            yield value.partition("=")[2]


def check_command(options) -> None:
    """Check the outputs of a command before it does any work (what ``focal COMMAND`` runs
    first): ``output`` with :func:`check_output`, ``plot`` with :func:`check_folder`, against
    every file the other options name.

    Parameters
    ----------
    options : mapping
        The command's options by name (``vars(args)`` of its argparse namespace). ``output``
        (``-o FILE``) and ``plot`` (``--plot DIR``) are the outputs; every other value that
        names an existing file is an input (the scores, ``--key``, the model, ``--quality``,
        the FILE of ``--trial-quality NAME=FILE``, ``--signing-key``, the cohorts, ...), and
        ``-`` is standard input.

    Raises
    ------
    ValueError
        See :func:`check_output` and :func:`check_folder`.
    """
    inputs = [
        name
        for option, value in options.items()
        if option not in ("output", "plot", "command")
        for name in _named_files(value)
    ]
    if options.get("output") is not None:
        check_output(options["output"], inputs)
    if options.get("plot") is not None:
        check_folder(options["plot"], inputs)


# ---------------------------------------------------------------------------------------------
# writing


class _SigtermState:
    """What our SIGTERM handler needs: while :func:`_sigterm_deferred` runs, it only records
    the signal.
    """

    deferring = 0
    pending: int | None = None


def _on_sigterm(signum, frame):
    if _SigtermState.deferring:
        _SigtermState.pending = signum
        return
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def _sigterm_deferred():
    """Run a block that creates a temporary file and notes its name, with a SIGTERM (when
    :func:`_sigterm_cleans_up` handles it) raised only at the block's end: never between the
    creation and the note, which would leave the file behind (a loaded machine hits that
    window: the test of SIGTERM while writing failed now and then).
    """
    _SigtermState.deferring += 1
    try:
        yield
    finally:
        _SigtermState.deferring -= 1
    if not _SigtermState.deferring and _SigtermState.pending is not None:
        signum, _SigtermState.pending = _SigtermState.pending, None
        raise SystemExit(128 + signum)


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


def _new_file_mode(st) -> int:
    """The mode of the regular file of stat ``st``, else what ``open`` gives a new file
    (0666 - umask).
    """
    if st is not None and stat.S_ISREG(st.st_mode):
        return st.st_mode & 0o7777
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def _temporary(path, folder):
    """A new ``.focal-*.tmp`` file in ``folder`` for the ``with`` block: ``(descriptor, name)``,
    removed at the block's end unless renamed away; an error creating it names ``path``.

    SIGTERM turns into an exception (:func:`_sigterm_cleans_up`) from before the file exists,
    and is held back (:func:`_sigterm_deferred`) until its name is noted for the removal.
    """
    tmp = None
    with _sigterm_cleans_up():
        try:
            with _sigterm_deferred():
                try:
                    fd, tmp = tempfile.mkstemp(prefix=".focal-", suffix=".tmp", dir=folder)
                except OSError as exc:
                    raise file_access_error(exc, path, "cannot write") from None
            yield fd, tmp
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


@contextlib.contextmanager
def _write_errors(path, own=None):
    """Name ``path`` in an ``OSError`` of writing it (a full disk, a quota, a permission) or of
    the file ``own`` (our temporary file, or the stream we open); an error of the caller's own
    code propagates unchanged.
    """
    try:
        yield
    except OSError as exc:
        if exc.errno not in _WRITE_ERRORS and (own is None or exc.filename != own):
            raise
        raise file_access_error(exc, path, "cannot write") from None


@contextlib.contextmanager
def write_output(path, inputs=()):
    """Write ``path`` safely; yields a binary file object.

    Parameters
    ----------
    path : path-like
        The output. ``-`` (standard output), character devices, FIFOs, sockets and descriptors
        of this process are written to directly; anything else atomically (see the module
        notes). A symbolic link is followed: its target is replaced, the link stays.
    inputs : iterable of path-like
        Files that must not be overwritten (see :func:`check_output`).

    Raises
    ------
    ValueError
        Before writing: see :func:`check_output`. While writing: the disk is full, a quota is
        exceeded, ... (naming ``path``). Other errors raised by the caller's writing code
        propagate unchanged; in every case nothing of the new content is left behind.
    """
    path = _name(path)
    kind = _checked(path, inputs)  # what is opened below is what was checked
    if kind == "stdout":
        with _write_errors(path):
            out = sys.stdout.buffer
            yield out
            out.flush()
    elif kind == "stream":  # appending: the shell may have opened the file with >>
        with _write_errors(path, own=path), open(path, "ab") as out:
            yield out
    else:
        target = os.path.realpath(path)
        with _temporary(path, os.path.dirname(target)) as (fd, tmp), _write_errors(path, tmp):
            with os.fdopen(fd, "wb") as out:
                yield out
            os.chmod(tmp, _new_file_mode(_stat(target)))  # mkstemp made it private (0600)
            os.replace(tmp, target)


class FolderWriter:
    """Files written into a folder as one output: all of them, or none (a report's figures and
    page, :mod:`focal.plots`).

    The folder is checked when the writer is made (:func:`check_folder`), so before the figures
    are drawn. Used as a context manager: the folder is created (with its parents) on entry;
    each file is written with :meth:`open` or :meth:`write` to a temporary file in the folder;
    on a normal exit every file is renamed into place, replacing the folder's entry of that name
    (a symbolic or hard link there is replaced, never written through); on an error (a full
    disk, an exception of the drawing code, KeyboardInterrupt, SIGTERM) the temporary files and
    the folders this writer created are removed and the folder's old files stay as they were.

    Parameters
    ----------
    folder : path-like
        The folder.
    inputs : iterable of path-like
        Files that must never be overwritten: refused as a file of the folder.

    Attributes
    ----------
    path : str
        The folder, as given.
    """

    def __init__(self, folder, inputs=()):
        check_folder(folder, inputs)
        self.path = _name(folder, "output folder")
        self._inputs = _input_files(inputs)
        self._staged: dict[str, str] = {}  # entry -> temporary file, removed on leaving
        self._created: list[str] = []  # folders made, removed (if empty) unless committed
        self._stack: contextlib.ExitStack | None = None

    def __enter__(self) -> FolderWriter:
        missing = []
        folder = os.path.abspath(self.path)
        while not os.path.lexists(folder):
            missing.append(folder)
            folder = os.path.dirname(folder)
        with contextlib.ExitStack() as stack:
            stack.enter_context(_sigterm_cleans_up())
            stack.callback(self._remove_created)
            for level in reversed(missing):
                try:
                    os.mkdir(level)
                except OSError as exc:
                    raise file_access_error(exc, self.path, "cannot create the folder") from None
                self._created.append(level)
            self._stack = stack.pop_all()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        assert self._stack is not None
        with self._stack:  # on leaving: the temporary files left, the new folders if empty
            if exc_type is None:
                for entry, tmp in self._staged.items():
                    with _write_errors(entry, tmp):
                        os.chmod(tmp, _new_file_mode(_stat(entry, follow=False)))
                        os.replace(tmp, entry)
                self._created = []  # the folder is complete: keep it

    @contextlib.contextmanager
    def open(self, name: str):
        """Write the file ``name`` of the folder: yields a binary file object (its content is
        renamed into place when the writer's context ends without an error); refused when
        ``name`` is not a file name, or the folder's entry of that name is a folder or an input.
        """
        if self._stack is None:
            raise RuntimeError("use the FolderWriter as a context manager")
        if os.path.basename(name) != name or name in ("", ".", ".."):
            raise ValueError(f"{name!r} is not a file name")
        entry = os.path.join(self.path, name)
        here = _stat(entry, follow=False)
        if here is not None and stat.S_ISDIR(here.st_mode):
            raise ValueError(f"{entry}: the output is a directory")
        _refuse_inputs(entry, _stat(entry), self._inputs)
        with _sigterm_deferred():  # on the stack (so removed) before a SIGTERM is raised
            fd, tmp = self._stack.enter_context(_temporary(entry, self.path))
        self._staged[entry] = tmp
        with _write_errors(entry, tmp), os.fdopen(fd, "wb") as out:
            yield out

    def write(self, name: str, data: bytes) -> None:
        """Write ``data`` as the file ``name`` of the folder (see :meth:`open`)."""
        with self.open(name) as out:
            out.write(data)

    def _remove_created(self) -> None:
        for level in reversed(self._created):
            with contextlib.suppress(OSError):  # only if empty: nothing of anyone else is lost
                os.rmdir(level)
