"""Sphinx configuration of focal's documentation site.

Build it (``pip install ".[docs]"`` first) from the repository's root with

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Warnings are errors. The API reference is written from the packages' ``__all__``
(``_ext/api_pages.py``), the command line's reference from its argparse parser
(sphinx-argparse), the gallery by running ``recipes/`` (sphinx-gallery), the bibliography from
``references.bib`` (sphinxcontrib-bibtex).
"""

from __future__ import annotations

import os
import pathlib
import sys

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # this checkout's focal, not another installed one
sys.path.insert(0, str(DOCS / "_ext"))
os.environ.setdefault("MPLBACKEND", "Agg")

import api_pages  # noqa: E402

import focal  # noqa: E402

project = "focal"
author = "The focal developers"
copyright = "The focal developers"  # noqa: A001 (Sphinx's name)
release = version = focal.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "matplotlib.sphinxext.plot_directive",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinxarg.ext",
    "sphinxcontrib.bibtex",
]

exclude_patterns = ["_build", "gallery/*.ipynb", "gallery/*.py", "gallery/*.zip"]
root_doc = "index"
language = "en"
# the site is built offline (CI reaches package registries only): no intersphinx inventories

# -- the API reference ---------------------------------------------------------------------------
api_pages.write_pages(DOCS / "reference" / "api")
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc sections say the types
numpydoc_show_class_members = False  # methods come from autodoc's :members:
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False  # no intersphinx offline: types stay text


def _skip_foreign_member(app, what, name, obj, skip, options):
    """Document the members focal defines, not those scikit-learn adds to every estimator.

    ``set_fit_request`` and the like cite scikit-learn's own glossary, unknown here.
    """
    function = getattr(obj, "fget", None) or getattr(obj, "__func__", None) or obj
    module = getattr(function, "__module__", None) or ""
    if what == "class" and not module.startswith("focal"):
        return True
    return None


def setup(app):
    """Connect the handlers above."""
    app.connect("autodoc-skip-member", _skip_foreign_member)


# -- the bibliography ------------------------------------------------------------------------------
bibtex_bibfiles = ["references.bib"]
bibtex_default_style = "plain"
bibtex_reference_style = "author_year"

# -- the gallery -----------------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "recipes"),
    "gallery_dirs": "gallery",
    "filename_pattern": r".*\.py$",  # run every recipe
    "ignore_pattern": r"__init__\.py",
    "reset_argv": "recipe_figures.reset_argv",
    "image_scrapers": ("recipe_figures.recipe_figures",),
    "abort_on_example_error": True,
    "download_all_examples": False,
    "capture_repr": (),
    "remove_config_comments": True,
    "show_memory": False,
    "plot_gallery": "True",
}

# -- figures of the user guide (the plot directive runs their code at build time) -----------------
plot_working_directory = str(ROOT)  # the examples read data_samples/
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 110)]
plot_rcparams = {"figure.autolayout": True}

# -- the site --------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"focal {release}"
html_static_path = ["_static"]
html_favicon = "_static/focal.svg"
html_logo = "_static/focal.svg"
# the theme's script reports an error on a first visit unless a mode is given
html_context = {"default_mode": "light"}
html_show_sourcelink = False
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "getting_started": [], "bibliography": []}
