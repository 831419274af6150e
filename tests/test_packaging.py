"""What a user and a packager meet: the distribution's packages and data, extras, install hints,
citation and changelog (pyproject.toml, MANIFEST.in, CITATION.cff, CHANGELOG.md).

The wheel and the sdist themselves are built and used by ``.ci/run`` (``focal demo`` from the
installed wheel outside the checkout; the whole suite from the unpacked sdist).
"""

from __future__ import annotations

import pathlib
import re

import pytest

import focal

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11; the checks are the same on 3.10

ROOT = pathlib.Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]
EXTRAS = PROJECT["optional-dependencies"]
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
# the files of the sample set `focal demo` runs on (focal.cli.demo)
DEMO_FILES = {"dev.key", "eval.key"} | {
    f"{part}_sys{i}.scores" for part in ("dev", "eval") for i in (1, 2, 3)
}


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.\-]+", requirement)[0].lower()


def test_every_package_of_focal_is_in_the_distribution():
    on_disk = {
        ".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "focal").rglob("__init__.py")
    }
    listed = set(SETUPTOOLS["packages"])
    assert listed - {"focal.cli.samples"} == on_disk, "pyproject.toml [tool.setuptools] packages"


def test_the_wheel_ships_the_sample_set_of_the_demo():
    folder = ROOT / SETUPTOOLS["package-dir"]["focal.cli.samples"]
    patterns = SETUPTOOLS["package-data"]["focal.cli.samples"]
    shipped = {p.name for pattern in patterns for p in folder.glob(pattern)}
    assert DEMO_FILES <= shipped
    assert shipped - DEMO_FILES == {"README.md"}  # no more than the demo needs


def test_extras_state_ranges_and_ci_gates_are_pinned_apart():
    for extra, requirements in EXTRAS.items():
        for requirement in requirements:
            if extra == "dev":
                assert "==" in requirement, requirement
            else:
                assert ">=" in requirement and "==" not in requirement, (extra, requirement)
    gates = {_name(r) for r in EXTRAS["dev"]}
    assert {"ruff", "mypy", "numpydoc", "coverage"} <= gates
    assert not gates & {_name(r) for r in EXTRAS["test"]}
    # the suite exercises every optional feature instead of skipping it
    optional = {_name(r) for e in ("plot", "dask", "progress", "fast", "hdf5") for r in EXTRAS[e]}
    assert optional <= {_name(r) for r in EXTRAS["test"]}


def _hints():
    """``(where, text)`` of every ``pip install`` hint in the code, recipes and documentation."""
    paths = [*(ROOT / "focal").rglob("*.py"), *(ROOT / "recipes").glob("*.py"), ROOT / "README.md"]
    generated = {"_build", "gallery", "api"}  # pages the docs build writes
    paths += [p for p in (ROOT / "docs").rglob("*.rst") if not generated & set(p.parts)]
    for path in paths:
        for line_number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "pip install" in line:
                yield f"{path.relative_to(ROOT)}:{line_number}", line


def test_install_hints_name_what_exists():
    """A hint installs a requirement of an extra of pyproject.toml (focal-calibration is not on
    the package index: ``pip install "focal-calibration[plot]"`` cannot be installed), and the
    extra it names exists and holds it.
    """
    by_extra = {extra: {_name(r) for r in reqs} for extra, reqs in EXTRAS.items()}
    installable = set().union(*by_extra.values())
    hints = list(_hints())
    assert len(hints) > 5
    for where, line in hints:
        assert "focal-calibration[" not in line, where
        for argument in re.findall(r"pip install ([^\s`]+(?: [a-z][^\s`]*)*)", line):
            for requirement in argument.split():
                requirement = requirement.strip("'\"),;:")
                if "{" in requirement:  # an f-string's placeholder: the extra named is checked
                    continue
                if requirement.startswith((".", "-")) or requirement.startswith('".'):
                    extras = re.findall(r"\[([^\]]+)\]", requirement)
                    for extra in ",".join(extras).split(",") if extras else ():
                        assert extra in EXTRAS, f"{where}: no extra {extra!r}"
                    continue
                assert _name(requirement) in installable, f"{where}: {requirement} is in no extra"
        for extra in re.findall(r'the [`"\\]*(\w+)[`"\\]* extra', line):
            assert extra in EXTRAS, f"{where}: no extra {extra!r}"


def test_citation_and_changelog_name_this_version():
    citation = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(rf"^version: \"?{re.escape(focal.__version__)}\"?$", citation, re.M)
    # no project address until the project has one: an address that does not exist is worse
    assert "http" not in citation and "urls" not in PROJECT
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[?{re.escape(focal.__version__)}\]?", changelog, re.M)


def test_the_sdist_holds_the_tests_docs_and_data():
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8")
    for folder in ("tests", "docs", "data_samples", "recipes", "benchmarks", ".ci"):
        assert re.search(rf"^graft {re.escape(folder)}$", manifest, re.M), folder
    for name in ("ARCHITECTURE.md", "CHANGELOG.md", "CITATION.cff", "setup.cfg"):
        assert re.search(rf"^include .*\b{re.escape(name)}\b", manifest, re.M), name
