"""Every example of the README and of the site's pages runs as a reader would run it.

Python examples are doctests (``>>>`` with the output shown), run page by page in a fresh
folder holding the sample data (``data_samples/``); shell examples (README ``sh`` blocks, the
pages' ``console`` blocks, lines starting with ``$``) run there too, after the page's Python
examples, with ``focal`` the command of this checkout. The quick start's two commands install
packages: CI runs them for real (``.ci/run``); here they are checked against that script.
"""

from __future__ import annotations

import doctest
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
GENERATED = ("_build", "gallery", "reference/api")
PAGES = sorted(
    p
    for p in DOCS.rglob("*.rst")
    if not any(p.relative_to(DOCS).as_posix().startswith(g) for g in GENERATED)
)
QUICK_START = (
    "python -m pip install . && python -m focal demo",
    'python -m pip install ".[test]" && python -m pytest',
)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _page_id(path):
    return path.relative_to(DOCS).with_suffix("").as_posix()


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """A fresh folder with the sample data, as the current directory (examples write files)."""
    (tmp_path / "data_samples").symlink_to(ROOT / "data_samples", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    return tmp_path


def _run_doctests(text, name):
    """Run the ``>>>`` examples of ``text`` in one namespace; return the failure reports."""
    test = doctest.DocTestParser().get_doctest(text, {"__name__": "__main__"}, name, name, 0)
    report = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=report.append)
    test.globs.clear()
    return test, "".join(report)


def _run_shell(commands, cwd):
    """Run shell commands with ``focal`` this checkout's command; return the result."""
    script = (
        "set -euo pipefail\n"
        f'focal() {{ "{sys.executable}" -m focal "$@"; }}\n' + "\n".join(commands) + "\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    return subprocess.run(
        ["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def _console_commands(text):
    """The commands of the ``.. code-block:: console`` blocks of a reST page, in order."""
    commands = []
    for block in re.finditer(r"^\.\. code-block:: console\n\n((?:[ \t]+.*\n|\n)+)", text, re.M):
        lines = [line.strip() for line in block.group(1).splitlines()]
        command = []
        for line in lines:
            if line.startswith("$ ") and not command:
                command.append(line[2:])
            elif command:
                command.append(line)
            if command and not line.endswith("\\"):
                commands.append("\n".join(command))
                command = []
    return commands


def _readme_blocks():
    """``(language, code)`` of every fenced block of the README."""
    text = README.read_text(encoding="utf-8")
    return re.findall(r"^```(\w*)\n(.*?)^```", text, re.M | re.S)


# -- the site's pages --------------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_page_examples_run(page, workspace):
    text = page.read_text(encoding="utf-8")
    test, failures = _run_doctests(text, _page_id(page))
    assert not failures, failures
    commands = _console_commands(text)
    if commands:
        result = _run_shell(commands, workspace)
        assert result.returncode == 0, result.stderr[-3000:]
    if not test.examples and not commands:
        pytest.skip("no examples on this page")


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_page_python_is_executed(page):
    # a Python example is a doctest (run above) or a plot directive (run by the docs build):
    # no code block that nothing runs
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"^\s*\.\. (code-block|code|sourcecode):: (python|pycon|py)\b", text, re.M)
    # every console block has commands, so none is silently skipped
    blocks = re.findall(r"^\.\. code-block:: console\n\n((?:[ \t]+.*\n|\n)+)", text, re.M)
    assert all("$ " in block for block in blocks)


def test_console_commands_are_parsed():
    text = ".. code-block:: console\n\n   $ focal a \\\n       b\n   $ focal c\n\nafter\n"
    assert _console_commands(text) == ["focal a \\\nb", "focal c"]


# -- the README --------------------------------------------------------------------------------


def test_readme_is_a_front_page():
    text = README.read_text(encoding="utf-8")
    assert len(text) <= 7500, f"README.md has {len(text)} characters (at most 7,500)"
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if not re.match(r"[a-z]+://", target):
            assert (ROOT / target).exists(), f"README links to {target}, which does not exist"


def test_readme_python_examples_run(workspace):
    blocks = _readme_blocks()
    assert {lang for lang, _ in blocks} <= {"sh", "pycon", "text"}, "a README block nothing runs"
    code = [body for lang, body in blocks if lang == "pycon"]
    assert code
    test, failures = _run_doctests("\n".join(code), "README.md")
    assert not failures, failures
    assert test.examples


def test_readme_shell_examples_run(workspace):
    commands = []
    for lang, body in _readme_blocks():
        if lang == "sh" and "pip install" not in body:
            commands += [line for line in body.splitlines() if line and not line.startswith("#")]
    assert commands
    result = _run_shell(commands, workspace)
    assert result.returncode == 0, result.stderr[-3000:]


def test_readme_quick_start_is_what_ci_runs():
    shell = [body.strip() for lang, body in _readme_blocks() if lang == "sh"]
    installs = [body for body in shell if "pip install" in body]
    assert tuple(installs) == QUICK_START
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "focal demo" in ci and "python -m pytest" in ci
