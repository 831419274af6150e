"""Every recipe runs end to end on the sample data."""

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
RECIPES = sorted((ROOT / "recipes").glob("*.py"))


@pytest.mark.parametrize("recipe", RECIPES, ids=[r.stem for r in RECIPES])
def test_recipe_runs_on_data_samples(recipe, tmp_path):
    result = subprocess.run([sys.executable, str(recipe)], capture_output=True, text=True,
                            cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip()
