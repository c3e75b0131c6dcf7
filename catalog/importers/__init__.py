"""Parse an existing build-repo checkout back into catalogue data (no database access here).

`nix.parse_recipe` reads one `.flox/pkgs/<pname>.nix`; `markdown.parse_branch_facts` reads the
branch facts table of BUILD_MATRIX.md. Both raise `ParseError` with the line and the reason.
"""

from .errors import ParseError  # noqa: F401
from .markdown import parse_branch_facts  # noqa: F401
from .nix import RecipeFacts, parse_recipe  # noqa: F401
