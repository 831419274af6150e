"""Where text inputs come from: ``-`` is standard input, and gzip streams are read as they are
(recognised by their magic bytes, whatever the file is called). A neutral helper of the block
reader (:mod:`focal._text.blocks`), which io and std share.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import sys

from .outputs import open_input

__all__ = ["display_name", "open_source"]

_GZIP_MAGIC = b"\x1f\x8b"


def display_name(path) -> str:
    """How messages name an input: ``<stdin>`` for ``-``."""
    path = os.fspath(path)
    return "<stdin>" if path == "-" else path


@contextlib.contextmanager
def open_source(path):
    """Open an input for binary reading: ``-`` is standard input (not closed afterwards), and a
    gzip stream (recognised by its magic bytes ``1f 8b``, whatever the file is called) is
    decompressed on the fly.
    """
    path = os.fspath(path)
    raw = contextlib.nullcontext(sys.stdin.buffer) if path == "-" else open_input(path)
    with raw as handle:
        if hasattr(handle, "peek") and handle.peek(2)[:2] == _GZIP_MAGIC:
            with gzip.GzipFile(fileobj=handle, mode="rb") as unzipped:
                try:
                    yield unzipped
                except (OSError, EOFError) as exc:
                    raise ValueError(f"{display_name(path)}: broken gzip stream ({exc})") from None
        else:
            yield handle
