"""The ``focal`` command line (also ``python -m focal``): argparse and printing over the library.

- :mod:`focal.cli.parser` (with :mod:`focal.cli.args` and :mod:`focal.cli.options`): the
  commands' arguments, argparse only, so ``focal --help`` loads nothing else;
- :mod:`focal.cli.commands`: one function per command, each one call of a workflow of
  :mod:`focal.workflows` (or of :mod:`focal.std`, :func:`focal.save`), and the printing of
  what it returns;
- :mod:`focal.cli.demo`: ``focal demo``, the main job on the sample data as a walkthrough.
"""

from .commands import main

__all__ = ["main"]
