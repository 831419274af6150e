"""The import contract of ARCHITECTURE.md: what each entry point loads, and which layer may
import which.

Dynamic part (each in a fresh interpreter): ``import focal``, ``focal --help`` (and every
command's ``--help``), and applying a saved model with :mod:`focal.runtime` or ``focal apply``
must not import the heavy dependencies (scikit-learn, SciPy's optimizers, matplotlib) nor, for
``import focal``, focal's own io / std / plots / measures. Static part: an AST walk over
``focal/`` checks that no module imports a module of a higher layer (function-level imports
included), so the picture in ARCHITECTURE.md and the code cannot drift apart.
"""

import ast
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import focal
from tests._support.cli import EVAL, LID, ROOT, SPK

PACKAGE = ROOT / "focal"
HEAVY = ("sklearn", "scipy", "matplotlib")


def _loaded(code: str) -> set:
    """Top-level and focal modules in ``sys.modules`` after running ``code`` in a new process."""
    script = textwrap.dedent(code) + textwrap.dedent("""
        import json, sys
        sys.stdout = sys.__stdout__
        print("\\nMODULES=" + json.dumps(sorted(sys.modules)))
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    line = done.stdout.rsplit("MODULES=", 1)[1]
    return set(json.loads(line))


def _heavy(modules) -> list:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_import_focal_loads_no_dependency_and_no_subpackage():
    modules = _loaded("import focal")
    assert _heavy(modules) == []
    assert "numpy" not in modules  # nothing numerical yet
    assert sorted(m for m in modules if m.startswith("focal.")) == ["focal._lazy", "focal._version"]


def test_names_still_resolve_on_first_use():
    modules = _loaded("""
        import focal
        assert focal.__version__
        focal.effective_prior(0.01, 1, 10)
        from focal.metrics import cllr, multiclass_report
        from focal.core import pav
        import focal.core.pav
        import focal.metrics.multiclass_report
        assert callable(multiclass_report) and callable(focal.metrics.multiclass_report)
        assert callable(focal.core.pav) and callable(pav)
    """)
    assert "scipy" in modules and "sklearn" not in modules  # the measures need SciPy only
    for name in focal.__all__:
        assert getattr(focal, name) is not None
    assert set(focal.__all__) <= set(dir(focal))


def test_cli_help_loads_no_heavy_dependency():
    modules = _loaded("""
        import contextlib, io
        from focal.cli import main
        from focal._cli_parser import build_parser
        commands = build_parser()._subparsers._group_actions[0].choices
        for argv in [["--help"]] + [[c, "--help"] for c in commands]:
            with contextlib.redirect_stdout(io.StringIO()):
                try:
                    main(argv)
                except SystemExit as exc:
                    assert exc.code == 0, argv
    """)
    assert _heavy(modules) == []
    assert not any(
        m.startswith(("focal.metrics", "focal.estimators", "focal.plots", "focal.std", "focal.io"))
        for m in modules
    )


def test_cli_condition_names_are_the_measures():
    from focal._cli_parser import CONDITIONS
    from focal.metrics.multiclass_report import CONDITIONS as MEASURED

    assert CONDITIONS == MEASURED


def _train(tmp_path):
    """Binary fusion + PAV and a multiclass fusion, saved (trained here, in this process)."""
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(3)
    y = np.r_[np.ones(200), np.zeros(300)].astype(int)
    X = rng.normal(size=(500, 3)) + y[:, None]
    pipe = make_pipeline(focal.LogisticFusion(), focal.PAVCalibrator())
    focal.save(pipe.fit(X, y), tmp_path / "binary.json")
    yc = rng.integers(0, 3, 300)
    L = rng.normal(size=(300, 6)) + 2.0 * np.tile(np.eye(3)[yc], 2)
    focal.save(focal.MulticlassFusion().fit(L, yc), tmp_path / "multiclass.json")
    return X, L


def test_runtime_applies_without_sklearn_or_scipy(tmp_path):
    X, L = _train(tmp_path)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "L.npy", L)
    modules = _loaded(f"""
        import numpy as np
        import focal.runtime
        for name, data in (("binary", "X"), ("multiclass", "L")):
            model = focal.runtime.load({str(tmp_path)!r} + f"/{{name}}.json")
            out = model.transform(np.load({str(tmp_path)!r} + f"/{{data}}.npy"))
            assert np.isfinite(out).all()
    """)
    assert _heavy(modules) == []


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_focal_apply_loads_no_heavy_dependency(tmp_path, kind):
    from tests._support.cli import DEV

    key = SPK / "dev.key" if kind == "binary" else LID / "dev.key"
    if kind == "binary":
        args = ["train", "--scores", *DEV, "--key", key, "--pav"]
        inputs = [*EVAL, "--align"]
    else:
        dev = [LID / f"dev_sys{k}_open.txt" for k in (1, 2)]
        args = ["train-multiclass", "--scores", *dev, "--key", key]
        inputs = [LID / f"eval_sys{k}_open.txt" for k in (1, 2)]
    from focal.cli import main

    assert main([str(a) for a in (*args, "-o", tmp_path / "model.json")]) == 0
    argv = [str(a) for a in ("apply", tmp_path / "model.json", *inputs, "-o", tmp_path / "o")]
    modules = _loaded(f"""
        from focal.cli import main
        assert main({argv!r}) == 0
    """)
    assert _heavy(modules) == []
    assert (tmp_path / "o").stat().st_size > 0


# -- static layering ---------------------------------------------------------------------------

#: Layer of each part of focal (ARCHITECTURE.md): a module may import its own layer and below.
LAYERS = {
    "core": 0,
    "metrics": 1,
    "estimators": 2,
    "std": 2,
    "plots": 3,
    "persistence": 3,
    "io": 3,
    "runtime": 3,
    "schema": 3,
    "_model_integrity": 3,
    "dask": 3,
    "_model_nodes": 3,
    "_registry": 3,
    "_fitted_state": 1,  # each estimator's saved fields and invariants (imports core only)
    "cli": 4,
    "_cli_parser": 4,
    "_cli_extras": 4,
    "_cli_args": 4,
    "__main__": 4,
    "demo": 4,
    "": 4,
}
#: Helpers with no place in the picture: any module may import them, they import none of focal's
#: layers.
#: The modules of the neutral helpers: version, lazy names, exceptions, file and text helpers,
#: and the byte-block reader of text files that io and std share.
NEUTRAL_MODULES = tuple(
    f"focal.{m}"
    for m in (
        "_version",
        "_lazy",
        "_files",
        "_progress",
        "_textfiles",
        "_deprecation",
        "exceptions",
        "_model_codec",
        "io._text",
        "io._source",
        "io._numbers",
        "io._arrow",
    )
)
#: Parts of one layer that must not import each other.
SIBLINGS = [("estimators", "std")]
#: Known breaches (source, target), to be removed as they are fixed: none today.
KNOWN: set = set()


def _module_name(path: pathlib.Path, root=ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: pathlib.Path, root=ROOT):
    """Every focal module a file imports, at any depth (function bodies included)."""
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.split(".")[0] == "focal")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "focal":
                continue
            for alias in node.names:  # from .io import _text: the submodule, if it is one
                sub = f"{target}.{alias.name}"
                parts = sub.split(".")[1:]
                is_module = (root / "focal" / pathlib.Path(*parts)).with_suffix(".py").exists() or (
                    root / "focal" / pathlib.Path(*parts) / "__init__.py"
                ).exists()
                yield sub if node.module is None or is_module else target


def _part(module: str) -> str:
    """The part of focal a module belongs to (a key of LAYERS, or "neutral")."""
    if any(module == m or module.startswith(f"{m}.") for m in NEUTRAL_MODULES):
        return "neutral"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_the_layers_cover_every_part_of_focal():
    parts = {_part(_module_name(p)) for p in PACKAGE.rglob("*.py")}
    assert parts <= set(LAYERS) | {"neutral"}


def test_no_module_imports_upward():
    breaches = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _module_name(path)
        mine = _part(source)
        for target in _imports(path):
            theirs = _part(target)
            if (source, target) in KNOWN or theirs == mine == "neutral":
                continue
            if mine == "neutral":
                ok = theirs == "neutral"
            elif theirs == "neutral" or theirs == mine:
                ok = True
            else:
                ok = LAYERS[theirs] <= LAYERS[mine] and {mine, theirs} not in map(set, SIBLINGS)
            if not ok:
                breaches.append(f"{source} imports {target}")
    assert breaches == []


def test_the_contract_test_can_fail(tmp_path):
    bad = tmp_path / "focal" / "core" / "bad.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("def f():\n    from ..metrics import cllr\n    from focal.plots import x\n")
    found = list(_imports(bad, tmp_path))
    assert found == ["focal.metrics", "focal.plots"]
    assert all(LAYERS[_part(t)] > LAYERS["core"] for t in found)


def test_the_numpy_only_modules_import_numpy_only():
    for name in (
        "core/maps.py",
        "_registry.py",
        "_model_nodes.py",
        "_fitted_state.py",
        "persistence.py",
        "runtime/_models.py",
        "runtime/__init__.py",
        "runtime/_decode.py",
        "_model_integrity.py",
        "schema.py",
        "_lazy.py",
    ):
        tree = ast.parse((PACKAGE / name).read_text(encoding="utf-8"))
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        roots = {
            (a.name if isinstance(n, ast.Import) else (n.module or "")).split(".")[0]
            for n in top
            for a in n.names
            if not getattr(n, "level", 0)
        }
        assert not roots & set(HEAVY), name
