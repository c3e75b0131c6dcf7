"""Read a build repository back into catalogue data (no database access here).

`recipes.interpret` turns one recipe's facts (`catalog.recipes.nix.read`) into field values;
`build_matrix.parse_branch_facts` reads the branch facts table the catalogue's own export
writes into BUILD_MATRIX.md. The database side is `catalog.recipes.importing.store`.
"""

from .build_matrix import parse_branch_facts  # noqa: F401
from .errors import ParseError  # noqa: F401
