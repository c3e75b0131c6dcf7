"""Pure functions from catalogue data to file contents: Nix recipes and Markdown docs.

No file I/O here; `catalog.recipes.exporting.sync` decides where the contents go.
"""

from .nix import render_recipe  # noqa: F401
from .readme import build_matrix, merge_sections, readme_sections  # noqa: F401,E402
