"""Sphinx configuration (myst Markdown pages + numpydoc API)."""

project = "eadct"
extensions = ["myst_parser", "numpydoc", "sphinx.ext.autodoc", "sphinx.ext.autosummary"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
html_theme = "pydata_sphinx_theme"
numpydoc_show_class_members = False
exclude_patterns = ["_build"]
