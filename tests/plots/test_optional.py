"""matplotlib is optional: focal works without it, and focal.plots says how to install it.

Each test runs Python in a subprocess where importing matplotlib fails (a finder at the front of
``sys.meta_path`` refuses it), so these tests hold whether or not matplotlib is installed here.
"""

import os
import pathlib
import subprocess
import sys
import textwrap

from tests._support.cli import BLOCK_MATPLOTLIB

ROOT = pathlib.Path(__file__).resolve().parents[2]

SPEAKER = ROOT / "data_samples" / "speaker_detection"


def run_python(code: str, *args, block: bool = True):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    source = (BLOCK_MATPLOTLIB if block else "") + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", source, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )


def test_blocker_really_blocks_matplotlib():
    result = run_python("""
        try:
            import matplotlib
        except ImportError:
            print("blocked")
    """)
    assert result.stdout.strip() == "blocked", result.stderr


def test_focal_never_imports_matplotlib():
    # runs unblocked: importing focal, its measures, estimators, readers and CLI leaves
    # matplotlib unimported even when it is installed
    result = run_python(
        """
        import sys
        import focal, focal.metrics, focal.std, focal.io, focal.cli
        focal.LogisticFusion, focal.PAVCalibrator
        print("matplotlib" in sys.modules)
    """,
        block=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_import_focal_plots_tells_how_to_install():
    result = run_python("""
        import focal, focal.metrics
        try:
            import focal.plots
        except ImportError as exc:
            print(exc)
    """)
    assert result.returncode == 0, result.stderr
    assert "pip install matplotlib" in result.stdout


def test_cli_plot_without_matplotlib_fails_with_the_install_hint(tmp_path):
    result = run_python(
        """
        import sys
        from focal.cli import main
        sys.exit(main(sys.argv[1:]))
    """,
        "evaluate",
        str(SPEAKER / "eval_sys1.scores"),
        "--key",
        str(SPEAKER / "eval.key"),
        "--plot",
        str(tmp_path / "out"),
    )
    assert result.returncode == 1
    assert "pip install matplotlib" in result.stderr
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()
    # without --plot the same command works
    result = run_python(
        """
        import sys
        from focal.cli import main
        sys.exit(main(sys.argv[1:]))
    """,
        "evaluate",
        str(SPEAKER / "eval_sys1.scores"),
        "--key",
        str(SPEAKER / "eval.key"),
    )
    assert result.returncode == 0, result.stderr
    assert "Cllr" in result.stdout


def test_plot_tests_are_skipped_not_errored_without_matplotlib():
    modules = ["tests/plots/test_plots.py", "tests/plots/test_multiclass.py"]
    result = run_python(
        """
        import sys
        import pytest
        sys.exit(pytest.main(["-q", "-rs", "-n", "0", "-p", "no:cacheprovider", *sys.argv[1:]]))
    """,
        *modules,
    )
    out = result.stdout
    # modules skipped as a whole leave no test collected: pytest's exit status 5, not 1 or 2
    assert result.returncode == 5, out + result.stderr
    assert f"{len(modules)} skipped" in out and "error" not in out.lower()
    assert "passed" not in out and "failed" not in out
    assert out.count("matplotlib is not installed: pip install matplotlib") == 2
