"""The recipes of ``recipes/`` as a sphinx-gallery: their arguments and their figures.

The recipes are scripts for users: they write their figures as PNG files into ``--out`` (with
matplotlib's object API, not pyplot, so the gallery's own scraper sees none). The gallery runs
each one with ``--out`` set to a folder of the build, and :class:`RecipeFigures` embeds the PNGs
the recipe wrote there, in the order of their names.
"""

from __future__ import annotations

import pathlib
import shutil

from sphinx_gallery.scrapers import figure_rst


def _figures_folder(gallery_conf, src_file) -> pathlib.Path:
    return pathlib.Path(gallery_conf["src_dir"]) / "_build" / "recipe_figures" / src_file.stem


def reset_argv(gallery_conf, script_vars):
    """The command-line arguments of a recipe in the gallery: ``--out`` a folder of the build."""
    src_file = pathlib.Path(script_vars["src_file"])
    if '"--out"' not in src_file.read_text(encoding="utf-8"):
        return []
    folder = _figures_folder(gallery_conf, src_file)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return ["--out", str(folder)]


def recipe_figures(block, block_vars, gallery_conf):
    """The reST of the PNGs a recipe's code block wrote (an image scraper of sphinx-gallery)."""
    folder = _figures_folder(gallery_conf, pathlib.Path(block_vars["src_file"]))
    if not folder.is_dir():
        return ""
    shown = block_vars.setdefault("recipe_figures_shown", set())
    new = [p for p in sorted(folder.glob("*.png")) if p.name not in shown]
    image_paths = []
    for png, destination in zip(new, block_vars["image_path_iterator"]):
        shutil.copyfile(png, destination)
        shown.add(png.name)
        image_paths.append(destination)
    return figure_rst(image_paths, gallery_conf["src_dir"])
