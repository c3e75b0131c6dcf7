"""Pure functions from catalogue data to file contents: Nix recipes and Markdown docs.

No file I/O here; `catalog.recipe_sync` decides where the contents go.
"""

from .markdown import build_matrix, merge_sections, readme_sections  # noqa: F401,E402
from .nix import render_recipe  # noqa: F401
