"""Read the branch facts table that export writes into BUILD_MATRIX.md."""

from __future__ import annotations

import re

from catalog.recipes.exporting.readme import FACTS, uncell

from .errors import ParseError

_ROW = re.compile(r"^\|\s(.*?)\s\|\s?(.*?)\s?\|$")
# A facts cell is a short value or a sentence or two; the export writes it back into a Markdown
# table, where markup would render, so a cell holding any is refused rather than copied.
MAX_CELL_CHARS = 1000
MAX_INT_DIGITS = 9  # the model's integer fields hold up to 2,147,483,647
_MARKUP = re.compile(r"[<>`]|[^\S\n ]|[\x00-\x09\x0b-\x1f\x7f]")
_PIN = re.compile(r"[0-9a-f]{7,40}")  # a nixpkgs commit, abbreviated or full


def _split_row(line: str) -> tuple[str, str] | None:
    # Cells are separated by unescaped pipes.
    parts = re.split(r"(?<!\\)\|", line.strip())
    if len(parts) != 4 or parts[0] or parts[3]:
        return None
    return parts[1].strip(), parts[2].strip()


def _checked(label: str, value: str, number: int) -> str:
    """The cell's text, or ParseError when it is too long or holds markup or control
    characters."""
    if len(value) > MAX_CELL_CHARS:
        raise ParseError(number, f"{label} is over {MAX_CELL_CHARS} characters")
    if _MARKUP.search(value):
        raise ParseError(number, f"{label} holds markup or control characters, which a fact cannot")
    return value


def _value(kind: str, label: str, value: str, number: int):
    """One cell as its field's type; ParseError with the line where it is not one."""
    value = _checked(label, value, number)
    if kind == "list":
        return [v.strip() for v in value.split(",") if v.strip()]
    if kind == "int":
        if value and not (value.isascii() and value.isdigit()):
            raise ParseError(number, f"{label} must be a whole number, not {_shown(value)}")
        if len(value) > MAX_INT_DIGITS:
            raise ParseError(number, f"{label} {value[:20]}… is too large")
        return int(value) if value else None
    if kind == "bool":
        if value not in ("yes", "no"):
            raise ParseError(number, f"{label} must be yes or no, not {_shown(value)}")
        return value == "yes"
    return value


def _shown(value: str) -> str:
    return ascii(value if len(value) <= 40 else value[:40] + "…")


def parse_branch_facts(text: str) -> dict:
    """The Branch field values the facts table states; raises ParseError where it is malformed."""
    lines = text.splitlines()
    try:
        start = lines.index("## Branch facts")
    except ValueError as exc:
        raise ParseError(1, "no '## Branch facts' section") from exc
    by_label = {label: (name, kind) for label, name, kind in FACTS}
    values: dict = {}
    for number, line in enumerate(lines[start + 1 :], start=start + 2):
        if line.startswith("## "):
            break
        if not line.startswith("|") or line.startswith("|---") or line.startswith("| Field |"):
            continue
        row = _split_row(line)
        if row is None:
            raise ParseError(number, "a facts row must have exactly two cells")
        label, raw = row
        if label not in by_label:
            raise ParseError(number, f"unknown branch fact {_shown(label)}")
        name, kind = by_label[label]
        values[name] = _value(kind, label, uncell(raw), number)
        if name == "nixpkgs_pin" and values[name] and not _PIN.fullmatch(values[name]):
            raise ParseError(number, f"{label} must be a nixpkgs commit (hex digits)")
    missing = [label for label, name, _ in FACTS if name not in values]
    if missing:
        raise ParseError(start + 1, f"the facts table lacks {', '.join(missing)}")
    return values
