"""Running the focal command in tests: sample paths, in-process and subprocess runners."""

import os
import pathlib
import subprocess
import sys
import textwrap

from focal.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
SPK = ROOT / "data_samples" / "speaker_detection"
LID = ROOT / "data_samples" / "language_recognition"
STD = ROOT / "data_samples" / "term_detection"
DEV = [SPK / f"dev_sys{k}.scores" for k in (1, 2, 3)]
EVAL = [SPK / f"eval_sys{k}.scores" for k in (1, 2, 3)]

# Python source that makes importing matplotlib fail in a subprocess (a finder at the front of
# ``sys.meta_path`` refuses it), so tests of "without matplotlib" hold whether or not it is here.
BLOCK_MATPLOTLIB = textwrap.dedent("""
    import importlib.abc, sys

    class _NoMatplotlib(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("matplotlib", "mpl_toolkits", "pylab"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, _NoMatplotlib())
    sys.modules.pop("matplotlib", None)
""")


def run_focal(*args, cwd=ROOT, pythonpath=ROOT, stdin=None):
    """``python -m focal ARGS`` as a user runs it (a subprocess; figures drawn off-screen),
    ``stdin`` (text) on its standard input.
    """
    env = dict(os.environ, PYTHONPATH=str(pythonpath), MPLBACKEND="Agg")
    return subprocess.run(
        [sys.executable, "-m", "focal", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
        input=stdin,
    )


def run_main(capsys, *args):
    """(exit status, stdout, stderr) of ``focal.cli.main`` in this process."""
    try:
        status = main([str(a) for a in args])
    except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err
