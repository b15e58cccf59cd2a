"""Sphinx configuration of beyondauc's documentation.

Build (from the repository's top folder; warnings are errors)::

    .venv/bin/sphinx-build -W -b html docs docs/_build/html

The site documents the checkout it is built from (``toolkit/`` comes first on the path, for
the build and for the kernels of the gallery's report) and works offline: no intersphinx, no
CDN, no analytics, no icon links.  ``-D beyondauc_gallery=0`` skips the gallery's demo report
for a quick build while writing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
TOOLKIT = str(ROOT / "toolkit")
sys.path[:0] = [TOOLKIT, str(DOCS / "_ext")]
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (TOOLKIT, os.environ.get("PYTHONPATH")) if p)

import beyondauc  # after sys.path is set: the checkout's package, documented as it is

project = "beyondauc"
author = "the beyondauc authors"
copyright = "the beyondauc authors, BSD-3-Clause"
release = version = beyondauc.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_nb",
    "beyondauc_docs",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "_ext", "_templates"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"

# API reference: autosummary stubs from the layers' __all__ (docs/_ext/beyondauc_docs.py writes the pages).
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# MyST and the gallery's notebooks: executed once by the report runner, rendered as they are.
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "off"
nb_merge_streams = True

# HTML: pydata-sphinx-theme with nothing fetched from elsewhere.
html_theme = "pydata_sphinx_theme"
html_title = f"beyondauc {release}"
html_static_path = []
html_show_sourcelink = False
# The site is read from disk: a browser refuses the fetch() behind search-result summaries over
# file://, so results show their titles only (and no request fails).
html_show_search_summary = False
html_theme_options = {
    "icon_links": [],
    "analytics": {},
    "navbar_end": ["theme-switcher"],
    "use_edit_page_button": False,
    "show_version_warning_banner": False,
    "header_links_before_dropdown": 6,
    "navbar_align": "left",
    "navigation_depth": 2,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_sidebars = {
    page: [] for page in ("index", "getting_started", "reports", "evaluation", "cli", "performance", "changelog")
}
