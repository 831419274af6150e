"""The errors focal raises, so that callers can catch them by kind.

- :class:`InvalidParameterError`: a bad argument (a prior outside (0, 1), a negative cost, a
  string where a number belongs). It is both a ``ValueError`` and a ``TypeError``, like
  scikit-learn's ``InvalidParameterError``, so ``except ValueError`` and ``except TypeError``
  both catch it, whichever of the two the problem resembles.
- :class:`FileFormatError`: the content of a file is not what its format says (a missing
  field, a word where a number belongs, a NUL byte). A ``ValueError`` whose message starts
  ``path:line:`` (or ``path:`` when no line applies, as in an XML element or a whole-file
  problem) and which carries the :attr:`~FileFormatError.path` and
  :attr:`~FileFormatError.line` for programs.
- A file that cannot be opened, read or written raises the ``OSError`` of the operating system
  (``FileNotFoundError``, ``PermissionError``, ...) with a message ``path: cannot open: reason``
  (:func:`file_access_error`). For code written when these were ``ValueError``, it is a
  ``ValueError`` too; ``except OSError`` is the way to catch it.

Bad data given as arrays (NaN scores, mismatched lengths, unknown labels) raise ``ValueError``.
"""

from __future__ import annotations

import os

__all__ = ["InvalidParameterError", "FileFormatError", "file_access_error"]


class InvalidParameterError(ValueError, TypeError):
    """A function or estimator argument has a wrong value or type.

    Subclasses both ``ValueError`` and ``TypeError`` (as scikit-learn's
    ``sklearn.utils._param_validation.InvalidParameterError`` does), so code written against
    either keeps working.
    """


class FileFormatError(ValueError):
    """The content of a file does not follow its format.

    Parameters
    ----------
    path : str or path-like
        The file.
    line : int or None
        1-based line number of the problem, or None when no single line is at fault (an XML
        element, an empty file).
    message : str
        What is wrong, without the location.

    Attributes
    ----------
    path : str
    line : int or None
    message : str

    Examples
    --------
    >>> err = FileFormatError("scores.txt", 3, "expected 3 fields, got 2")
    >>> str(err)
    'scores.txt:3: expected 3 fields, got 2'
    >>> (err.path, err.line, isinstance(err, ValueError))
    ('scores.txt', 3, True)
    """

    def __init__(self, path, line, message: str):
        self.path = os.fspath(path)
        self.line = None if line is None else int(line)
        self.message = str(message)
        super().__init__(self.path, self.line, self.message)

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.path}: {self.message}"
        return f"{self.path}:{self.line}: {self.message}"

    def __reduce__(self):
        return type(self), (self.path, self.line, self.message)


_FILE_ACCESS_TYPES: dict = {}


def _file_access_type(base: type) -> type:
    """``base`` (an OSError subclass) that is also a ValueError, printed ``path: reason``."""
    cls = _FILE_ACCESS_TYPES.get(base)
    if cls is None:

        def __str__(self):
            return f"{self.filename}: {self.strerror}"

        def __reduce__(self):
            return _rebuild_file_access_error, (base, self.errno, self.strerror, self.filename)

        cls = type(
            base.__name__,
            (base, ValueError),
            {
                "__str__": __str__,
                "__reduce__": __reduce__,
                "__module__": __name__,
                "__doc__": f"{base.__name__} naming the file; also a ValueError.",
            },
        )
        _FILE_ACCESS_TYPES[base] = cls
    return cls


def _rebuild_file_access_error(base, errno, strerror, filename):
    return _file_access_type(base)(errno, strerror, filename)


def file_access_error(exc: OSError, path, action: str = "cannot open") -> OSError:
    """The ``OSError`` ``exc`` of an operation on ``path``, with the message ``path: action:
    reason``.

    Parameters
    ----------
    exc : OSError
        What the operating system raised.
    path : str or path-like
        The file.
    action : str
        What failed (``"cannot open"``, ``"cannot write"``).

    Returns
    -------
    OSError
        Of the same class as ``exc`` (``FileNotFoundError`` stays ``FileNotFoundError``) and
        also a ``ValueError``, with ``errno``, ``filename`` and ``strerror`` set.

    Examples
    --------
    >>> try:
    ...     open("/nonexistent/scores.txt")
    ... except OSError as exc:
    ...     err = file_access_error(exc, "/nonexistent/scores.txt")
    >>> str(err), isinstance(err, FileNotFoundError), isinstance(err, ValueError)
    ('/nonexistent/scores.txt: cannot open: No such file or directory', True, True)
    """
    base = type(exc) if isinstance(exc, OSError) else OSError
    errno = getattr(exc, "errno", None)
    reason = getattr(exc, "strerror", None) or str(exc)
    return _file_access_type(base)(errno, f"{action}: {reason}", os.fspath(path))
