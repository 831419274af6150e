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
import re
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
        from focal.cli.parser import build_parser
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
    from focal.cli.parser import CONDITIONS
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

ARCHITECTURE = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")


def _layer_table(text=ARCHITECTURE):
    """``({part: layer}, [siblings])`` from the table of ARCHITECTURE.md's "Layers" section: a
    row ``| N | `a` · `b`, `c` | ... |``; parts joined by `` · `` never import each other.
    """
    layers, siblings = {}, []
    for row in re.findall(r"^\| (\d+) \| (.+?) \|", text, flags=re.M):
        level, cell = int(row[0]), row[1]
        groups = [re.findall(r"`(focal[\w.]*)`", g) for g in cell.split(" · ")]
        for group in groups:
            layers.update(dict.fromkeys(group, level))
        siblings += [
            (a, b) for i, g in enumerate(groups) for h in groups[i + 1 :] for a in g for b in h
        ]
    return layers, siblings


#: Layer of each part of focal, and the parts of one layer that must not import each other
LAYERS, SIBLINGS = _layer_table()
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


def _part(module: str, layers=None) -> str:
    """The part of the layer table a module belongs to: a listed package holds its modules, a
    listed module (the root's) only itself; "" for none.
    """
    layers = LAYERS if layers is None else layers
    best = ""
    for part in layers:
        package = part != "focal" and (ROOT / part.replace(".", "/") / "__init__.py").exists()
        if module == part or (package and module.startswith(part + ".")):
            best = max(best, part, key=len)
    return best


def test_the_layer_table_is_read_from_the_document():
    layers, siblings = _layer_table()
    assert layers["focal.core"] < layers["focal.metrics"] < layers["focal.cli"]
    assert ("focal.estimators", "focal.std") in siblings
    made_up = "| 1 | `focal.a` · `focal.b`, `focal.c` | x |\n| 2 | `focal.d` | y |\n"
    assert _layer_table(made_up) == (
        {"focal.a": 1, "focal.b": 1, "focal.c": 1, "focal.d": 2},
        [("focal.a", "focal.b"), ("focal.a", "focal.c")],
    )


def test_the_layers_cover_every_part_of_focal():
    missing = sorted(_module_name(p) for p in PACKAGE.rglob("*.py") if not _part(_module_name(p)))
    assert missing == []


def test_the_document_names_every_package_and_module():
    """Each package has a section ``### `focal.x` `` (or one shared with others) that names
    each of its modules in backquotes; the root's modules are named in the root's section.
    """
    sections = re.split(r"^### ", ARCHITECTURE, flags=re.M)[1:]
    unnamed = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        heading = [s for s in sections if f"`{package}`" in s.splitlines()[0]]
        stem = path.stem
        if not heading or (stem != "__init__" and f"`{stem}`" not in heading[0]):
            unnamed.append(module)
    assert unnamed == []


def test_no_module_imports_upward():
    breaches = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _module_name(path)
        mine = _part(source)
        for target in _imports(path):
            theirs = _part(target)
            if (source, target) in KNOWN or theirs == mine:
                continue
            if LAYERS[theirs] > LAYERS[mine] or (mine, theirs) in SIBLINGS:
                breaches.append(f"{source} imports {target}")
            elif (theirs, mine) in SIBLINGS:
                breaches.append(f"{source} imports {target}")
    assert breaches == []


def _closure(modules) -> set:
    """Every focal module the given ones import, directly or through others (static)."""
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    seen, todo = set(), list(modules)
    while todo:
        name = todo.pop()
        if name in seen or name not in files:
            continue
        seen.add(name)
        todo.extend(_imports(files[name]))
    return seen


def test_std_and_model_files_read_files_without_io():
    """The text-reading stack std and the model files use is the file engine: no path leads into
    focal.io.
    """
    roots = [_module_name(p) for p in sorted(PACKAGE.glob("std/*.py"))]
    roots += [_module_name(p) for p in sorted(PACKAGE.glob("models/*.py"))]
    assert "focal.std.readers" in roots and "focal.models.persistence" in roots
    reached = _closure(roots)
    assert "focal._text.blocks" in reached and "focal._text.numbers" in reached
    assert sorted(m for m in reached if m == "focal.io" or m.startswith("focal.io.")) == []


def test_reading_a_term_detection_task_loads_no_io_module():
    modules = _loaded("""
        from focal import std
        d = "data_samples/term_detection/"
        xml = ("sws_sample.stdlist.xml", "sws_sample.rttm", "sws_sample.ecf.xml")
        tables = ("detections.txt", "reference.txt", "audio.txt", "queries.txt")
        for files in (xml + ("sws_sample.tlist.xml",), tables):
            std.term_detection_report(std.read_task(*(d + f for f in files)))
    """)
    assert "focal._text.blocks" in modules
    assert sorted(m for m in modules if m == "focal.io" or m.startswith("focal.io.")) == []


def test_the_contract_test_can_fail(tmp_path):
    bad = tmp_path / "focal" / "core" / "bad.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("def f():\n    from ..metrics import cllr\n    from focal.plots import x\n")
    found = list(_imports(bad, tmp_path))
    assert found == ["focal.metrics", "focal.plots"]
    assert all(LAYERS[_part(t)] > LAYERS["focal.core"] for t in found)


def test_the_numpy_only_modules_import_numpy_only():
    for name in (
        "core/maps.py",
        "models/registry.py",
        "models/nodes.py",
        "models/fitted_state.py",
        "models/codec.py",
        "models/persistence.py",
        "runtime/_models.py",
        "runtime/__init__.py",
        "runtime/_decode.py",
        "models/integrity.py",
        "models/schema.py",
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
