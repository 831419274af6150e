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
- A file that cannot be opened or read at all is the operating system's business and raises
  ``OSError`` (or the ``ValueError`` naming the path raised where focal opens its inputs).

Bad data given as arrays (NaN scores, mismatched lengths, unknown labels) raise ``ValueError``.
"""

from __future__ import annotations

import os

__all__ = ["InvalidParameterError", "FileFormatError"]


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
