"""Read the branch facts table that export writes into BUILD_MATRIX.md."""

from __future__ import annotations

import re

from catalog.recipes.exporting.readme import FACTS, uncell

from .errors import ParseError

_ROW = re.compile(r"^\|\s(.*?)\s\|\s?(.*?)\s?\|$")


def _split_row(line: str) -> tuple[str, str] | None:
    # Cells are separated by unescaped pipes.
    parts = re.split(r"(?<!\\)\|", line.strip())
    if len(parts) != 4 or parts[0] or parts[3]:
        return None
    return parts[1].strip(), parts[2].strip()


def _value(kind: str, label: str, value: str, number: int):
    """One cell as its field's type; ParseError with the line where it is not one."""
    if kind == "list":
        return [v.strip() for v in value.split(",") if v.strip()]
    if kind == "int":
        if value and not value.isdigit():
            raise ParseError(number, f"{label} must be a whole number, not {value!r}")
        return int(value) if value else None
    if kind == "bool":
        if value not in ("yes", "no"):
            raise ParseError(number, f"{label} must be yes or no, not {value!r}")
        return value == "yes"
    return value


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
            raise ParseError(number, f"unknown branch fact {label!r}")
        name, kind = by_label[label]
        values[name] = _value(kind, label, uncell(raw), number)
    missing = [label for label, name, _ in FACTS if name not in values]
    if missing:
        raise ParseError(start + 1, f"the facts table lacks {', '.join(missing)}")
    return values
