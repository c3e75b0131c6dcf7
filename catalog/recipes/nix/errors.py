"""The two ways the Nix package refuses: a file that is not a recipe, a change it cannot make."""

from __future__ import annotations


class RecipeError(ValueError):
    """The text cannot be read as a recipe at all: a syntax error, no torch / torchvision /
    torchaudio derivation, no pname. `line` (and `column` where known) are 1-based."""

    def __init__(self, line: int, reason: str, column: int = 0) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.column = column
        self.reason = reason


class EditError(ValueError):
    """A field cannot be changed in place; `reason` is a sentence a command or page can show
    beside the field's name ("this recipe has no meta.platforms; edit it by hand")."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason
