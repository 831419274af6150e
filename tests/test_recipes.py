"""Every recipe runs end to end on the sample data, and writes its figures outside the repo."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
RECIPES = sorted((ROOT / "recipes").glob("*.py"))


@pytest.mark.parametrize("recipe", RECIPES, ids=[r.stem for r in RECIPES])
def test_recipe_runs_on_data_samples(recipe, tmp_path):
    # default output folders are temporary ones: TMPDIR keeps them inside tmp_path
    env = dict(os.environ, TMPDIR=str(tmp_path))
    result = subprocess.run(
        [sys.executable, str(recipe)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip()
    for line in result.stdout.splitlines():
        if line.startswith(("figure: ", "figures: ")):
            where = pathlib.Path(line.split(": ", 1)[1])
            assert where.is_relative_to(tmp_path)
            pngs = [where] if where.suffix == ".png" else list(where.glob("*.png"))
            assert pngs and all(p.stat().st_size > 0 for p in pngs)
