"""Change named fields of a recipe in place: `edit_recipe(text, changes) -> str`.

Each change splices new bytes over the value's own bytes (found by `read.analyse`); every
other byte is kept, so a one-value change is a one-line diff. List elements are edited one by
one: a changed element keeps its line, indentation and comment; an added one gets a line of
its own in the list's style; a removed one takes its line with it. A field with no place in
the source is inserted where that is natural (a metadata-rev postInstall, a passthru field,
meta.platforms or meta.description in an existing meta, the outer derivation's added
cmakeFlags); otherwise `EditError` says why, in a sentence a command or page can show.

The result is read back before it is returned: every changed field must read as the value
asked for, or the edit is refused (EditError) rather than returned half-right.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher

from tree_sitter import Node

from . import syntax as S
from .errors import EditError, RecipeError
from .read import CUDA_SET, Recipe, analyse
from .syntax import Binding

PIN = re.compile(r"^[0-9a-fA-F]{7,40}$")
PYTHON_SET = re.compile(r"^python\d*Packages$")
PASSTHRU_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_'-]*$")
SHELL_TARGET = re.compile(r"^[A-Za-z0-9._+]+$")  # safe inside a shell "…" in a '' string
# Element-by-element matching costs len(old) * len(new); past this many elements in all, a
# list is written anew in its own layout instead.
MAX_MATCHED_ELEMENTS = 400
COMMENT_GAP = re.compile(rb"^(;?)([ \t]+)#")


@dataclass(frozen=True)
class Splice:
    start: int
    end: int
    text: bytes
    field: str


def edit_recipe(text: str, changes: Mapping[str, object]) -> str:
    """`text` with the named fields changed in place (see EDITORS for the names; also
    "passthru.<key>" for one passthru field). Raises EditError for a change it cannot make,
    RecipeError when `text` is not a readable recipe."""
    if not changes:
        return text
    recipe = analyse(text)
    splices: list[Splice] = []
    expected: dict[str, object] = {}
    for name, value in changes.items():
        if name.startswith("passthru."):
            key = name.removeprefix("passthru.")
            value = _optional_text(name, value)
            splices += _passthru(recipe, {key: value}, name, remove_missing=False)
            expected[name] = value
            continue
        editor = EDITORS.get(name)
        if editor is None and name in READ_ONLY:
            raise EditError(name, f"{name} is read from the recipe's structure; change it by hand")
        if editor is None:
            known = ", ".join([*EDITORS, "passthru.<key>"])
            raise EditError(
                name, f"{name} is not a field recipes can be edited in; choose from {known}"
            )
        normalise, change = editor
        current = getattr(recipe.facts, name)
        if type(value) is type(current) and value == current:
            continue  # what the recipe already says, even where it could not be written anew
        value = normalise(name, value)
        expected[name] = value
        if value != current:
            splices += change(recipe, value, name)
    if not splices:
        return text
    result = _apply(recipe.src.data, splices).decode("utf-8", "surrogatepass")
    _verify(result, expected)
    return result


# ---------------------------------------------------------------- values


def _text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise EditError(name, f"{name} must be text, not {type(value).__name__}")
    return value


def _optional_text(name: str, value: object) -> str | None:
    return None if value is None else _text(name, value)


def _nonempty(name: str, value: object) -> str:
    value = _text(name, value)
    if not value:
        raise EditError(name, f"{name} cannot be emptied in place; edit the recipe by hand")
    return value


def _matching(pattern: re.Pattern, example: str) -> Callable[[str, object], str]:
    def check(name: str, value: object) -> str:
        value = _nonempty(name, value)
        if not pattern.match(value):
            raise EditError(name, f"{value!r} is not a valid {name} (e.g. {example})")
        return value

    return check


def _texts(name: str, value: object) -> list[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise EditError(name, f"{name} must be a list of text")
    for item in value:
        _text(name, item)
    return list(value)


def _revision(name: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise EditError(name, f"{name} must be a whole number of 0 or more")
    return value


def _passthru_map(name: str, value: object) -> dict[str, str | None]:
    if not isinstance(value, Mapping):
        raise EditError(name, "passthru must be a mapping of field names to text or None")
    result = {}
    for key, item in value.items():
        if not isinstance(key, str) or not PASSTHRU_KEY.match(key):
            raise EditError(name, f"{key!r} is not a Nix attribute name")
        result[key] = _optional_text(f"passthru.{key}", item)
    return result


def literal(value: str | None) -> str:
    return "null" if value is None else S.quote(value)


# ---------------------------------------------------------------- single values


def _replace(node: Node, text: str, name: str) -> Splice:
    return Splice(node.start_byte, node.end_byte, text.encode("utf-8", "surrogatepass"), name)


def _rewrite_list(
    src: S.Source, node: Node, elements: list[Node], new: list[str], name: str
) -> Splice:
    """The whole list anew: one element a line at the first element's indentation where the
    list is laid out so, else on one line."""
    items = [S.quote(v) for v in new]
    if node.start_point.row != node.end_point.row and items:
        indent = (
            src.indent_of(elements[0].start_byte)
            if elements
            else src.indent_of(node.start_byte) + "  "
        )
        closing = src.indent_of(node.children[-1].start_byte)
        return _replace(
            node, "[\n" + "".join(f"{indent}{i}\n" for i in items) + f"{closing}]", name
        )
    return _replace(node, f"[ {' '.join(items)} ]" if items else "[ ]", name)


def _replace_literal(src: S.Source, node: Node, text: str, name: str) -> Splice:
    """A new literal in the old one's place; a trailing comment aligned with others
    (`"-mfma"    # Fused multiply-add`, `x = "9.0";  # …`) keeps its column."""
    data = text.encode("utf-8", "surrogatepass")
    end = node.end_byte
    gap = COMMENT_GAP.match(src.data[end : src.line_end(end)])
    if gap is None or len(gap.group(2)) < 2:  # a single space is not alignment
        return Splice(node.start_byte, end, data, name)
    semicolon, spaces = gap.group(1), gap.group(2)
    width = end - node.start_byte + len(spaces)
    padding = b" " * max(1, width - len(data))
    return Splice(
        node.start_byte, end + len(semicolon) + len(spaces), data + semicolon + padding, name
    )


def _string_field(attr: str, missing: str) -> Callable[[Recipe, str, str], list[Splice]]:
    def change(recipe: Recipe, value: str, name: str) -> list[Splice]:
        node = getattr(recipe, attr)
        if node is None:
            raise EditError(name, missing)
        return [_replace_literal(recipe.src, node, S.quote(value), name)]

    return change


def _pname(recipe: Recipe, value: str, name: str) -> list[Splice]:
    return [_replace_literal(recipe.src, recipe.pname_node, S.quote(value), name)]


def _pin(recipe: Recipe, value: str, name: str) -> list[Splice]:
    if recipe.pin_range is None:
        if recipe.facts.nixpkgs_pin:
            raise EditError(name, "the nixpkgs URL is written with escapes; edit it by hand")
        raise EditError(
            name,
            "this recipe imports no pinned nixpkgs (a NixOS/nixpkgs archive URL); edit it by hand",
        )
    start, end = recipe.pin_range
    return [Splice(start, end, value.encode(), name)]


def _cuda(recipe: Recipe, value: str, name: str) -> list[Splice]:
    if recipe.cuda_attr_node is None:
        raise EditError(
            name,
            "this recipe has no `cudaPackages = final.cudaPackages_…;` overlay; edit it by hand",
        )
    return [_replace(recipe.cuda_attr_node, value, name)]


def _python(recipe: Recipe, value: str, name: str) -> list[Splice]:
    if not recipe.python_nodes:
        raise EditError(name, "this recipe names no Python package set; edit it by hand")
    places = {node.start_byte: node for node in recipe.python_nodes}
    return [_replace(node, value, name) for node in places.values()]


def _metadata(recipe: Recipe, value: int | None, name: str) -> list[Splice]:
    if value is None:
        raise EditError(
            name, "a metadata-rev postInstall cannot be removed in place; edit it by hand"
        )
    if recipe.metadata_range is not None:
        start, end = recipe.metadata_range
        return [Splice(start, end, str(value).encode(), name)]
    line = f"echo {value} > $out/.metadata-rev"
    if recipe.post_install is not None:
        return [_append_script_line(recipe, recipe.post_install, line, name)]
    param = _old_attrs(recipe, name, "a postInstall")
    block = [f"postInstall = ({param}.postInstall or \"\") + ''", f"  {line}", "'';"]
    return [
        _insert_binding(recipe, recipe.outer_attrs, block, name, before=_meta(recipe), group=True)
    ]


def _append_script_line(recipe: Recipe, binding: Binding, line: str, name: str) -> Splice:
    """A new last line in the '' script of an existing `postInstall = … + '' … '';`."""
    src = recipe.src
    scripts = [n for n in src.nodes(binding.value) if n.type == "indented_string_expression"]
    closing = scripts[-1].children[-1] if scripts else None
    if closing is None or src.data[src.line_start(closing.start_byte) : closing.start_byte].strip():
        raise EditError(
            name, "the postInstall script has no '' block to add a line to; edit it by hand"
        )
    indent = src.indent_of(closing.start_byte) + "  "
    at = src.line_start(closing.start_byte)
    return Splice(at, at, f"{indent}{S.indented(line)}\n".encode(), name)


# ---------------------------------------------------------------- lists


def _list_field(attr: str, missing: str) -> Callable[[Recipe, list[str], str], list[Splice]]:
    def change(recipe: Recipe, value: list[str], name: str) -> list[Splice]:
        node = getattr(recipe, attr)
        if node is None:
            raise EditError(name, missing)
        return list_splices(recipe.src, node, value, name)

    return change


def list_splices(src: S.Source, node: Node, new: list[str], name: str) -> list[Splice]:
    """Turn the list literal `node` (of plain strings) into `new`, element by element."""
    elements = S.list_elements(node)
    old = _plain_strings(src, elements, name)
    if len(old) + len(new) > MAX_MATCHED_ELEMENTS:
        return [_rewrite_list(src, node, elements, new, name)]
    replaced, deleted, added = _list_diff(old, new)
    multiline = node.start_point.row != node.end_point.row
    survivors = [i for i in range(len(old)) if i not in deleted]
    if not survivors and not multiline:  # `[ ]`, or every element goes: write it anew
        items = " ".join(S.quote(v) for v in new)
        return [_replace(node, f"[ {items} ]" if items else "[ ]", name)]
    own_lines = multiline and all(src.alone_on_line(e.start_byte, e.end_byte) for e in elements)
    splices = [_replace_literal(src, elements[i], S.quote(v), name) for i, v in replaced.items()]
    for i in sorted(deleted):
        splices.append(_delete(src, elements[i], own_lines, name))
    for after, values in added:
        splices.append(_add(src, node, elements, survivors, after, values, own_lines, name))
    return splices


def _plain_strings(src: S.Source, elements: list[Node], name: str) -> list[str]:
    """The values of a list's elements, refusing any that is not a plain string."""
    values: list[str] = []
    for element in elements:
        value = S.string_value(src, element) if element.type == "string_expression" else None
        if value is None:
            raise EditError(
                name,
                f"the list holds {src.text_of(element)[:40]}, not a plain string; edit it by hand",
            )
        values.append(value)
    return values


def _list_diff(
    old: list[str], new: list[str]
) -> tuple[dict[int, str], set[int], list[tuple[int, list[str]]]]:
    """The fewest element edits from `old` to `new`: old index -> its new value, the old indexes
    that go, and (after which old index, values) for the ones added."""
    replaced: dict[int, str] = {}
    deleted: set[int] = set()
    added: list[tuple[int, list[str]]] = []
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        pairs = min(i2 - i1, j2 - j1)
        for k in range(pairs):
            replaced[i1 + k] = new[j1 + k]
        deleted.update(range(i1 + pairs, i2))
        extra = new[j1 + pairs : j2]
        if extra:
            added.append((i1 + pairs - 1, extra))
    return replaced, deleted, added


def _delete(src: S.Source, element: Node, own_lines: bool, name: str) -> Splice:
    if own_lines:
        return Splice(src.line_start(element.start_byte), src.line_end(element.end_byte), b"", name)
    start = element.start_byte
    while start > 0 and src.data[start - 1 : start] in (b" ", b"\t"):
        start -= 1
    return Splice(start, element.end_byte, b"", name)


def _add(
    src: S.Source,
    node: Node,
    elements: list[Node],
    survivors: list[int],
    after: int,
    values: list[str],
    own_lines: bool,
    name: str,
) -> Splice:
    before = [i for i in survivors if i <= after]
    later = [i for i in survivors if i > after]
    # An empty laid-out list counts as own_lines (it has no element that shares a line); a
    # non-empty list keeps a survivor beside any addition (the diff pairs what it replaces).
    if own_lines:
        if before:
            anchor = elements[before[-1]]
            at, indent = src.line_end(anchor.end_byte), src.indent_of(anchor.start_byte)
        elif later:
            anchor = elements[later[0]]
            at, indent = src.line_start(anchor.start_byte), src.indent_of(anchor.start_byte)
        else:
            closing = node.children[-1]
            if src.data[src.line_start(closing.start_byte) : closing.start_byte].strip():
                raise EditError(name, "the list's layout leaves no line to add to; edit it by hand")
            at = src.line_start(closing.start_byte)
            indent = src.indent_of(closing.start_byte) + "  "  # the list is empty
        text = "".join(f"{indent}{S.quote(v)}\n" for v in values)
        return Splice(at, at, text.encode(), name)
    if before:
        at = elements[before[-1]].end_byte
        return Splice(at, at, "".join(f" {S.quote(v)}" for v in values).encode(), name)
    at = elements[later[0]].start_byte
    return Splice(at, at, "".join(f"{S.quote(v)} " for v in values).encode(), name)


def _gpu_targets(recipe: Recipe, value: list[str], name: str) -> list[Splice]:
    targets = recipe.targets
    if targets is None:
        raise EditError(
            name,
            "this recipe names no GPU targets (gpuTargets, TORCH_CUDA_ARCH_LIST or "
            "passthru.gpuArch); edit it by hand",
        )
    if targets.shell is not None:
        bad = [v for v in value if not SHELL_TARGET.match(v)]
        if bad or not value:
            raise EditError(
                name, f"{bad[0] if bad else 'an empty list'!r} cannot go in TORCH_CUDA_ARCH_LIST"
            )
        start, end = targets.shell
        separator = " " if b" " in recipe.src.data[start:end] else ";"
        return [Splice(start, end, separator.join(value).encode(), name)]
    if targets.direct and targets.list_node is not None:
        return list_splices(recipe.src, targets.list_node, value, name)
    if len(value) != len(targets.values):
        names = ", ".join(sorted({_bound_name(recipe, n) for n in targets.literals}))
        raise EditError(
            name,
            f"this recipe's GPU targets come from {names}, one value each; "
            f"{len(value)} targets must be written by hand",
        )
    wanted: dict[int, tuple[Node, str]] = {}
    for node, target in zip(targets.literals, value, strict=True):
        if wanted.get(node.start_byte, (node, target))[1] != target:
            raise EditError(name, "two targets share one binding and cannot differ")
        wanted[node.start_byte] = (node, target)
    return [_replace_literal(recipe.src, n, S.quote(t), name) for n, t in wanted.values()]


def _bound_name(recipe: Recipe, node: Node) -> str:
    parent = node.parent
    while parent is not None and parent.type != "binding":
        parent = parent.parent
    path = parent.child_by_field_name("attrpath") if parent is not None else None
    return recipe.src.text_of(path) if path is not None else "a literal"


# ---------------------------------------------------------------- meta, cmakeFlags, passthru


def _platforms(recipe: Recipe, value: list[str], name: str) -> list[Splice]:
    if recipe.platforms_node is not None:
        return list_splices(recipe.src, recipe.platforms_node, value, name)
    if recipe.meta_attrs is None:
        raise EditError(name, "this recipe has no meta.platforms; edit it by hand")
    items = " ".join(S.quote(v) for v in value)
    line = f"platforms = [ {items} ];" if items else "platforms = [ ];"
    return [_insert_binding(recipe, recipe.meta_attrs, [line], name)]


def _description(recipe: Recipe, value: str, name: str) -> list[Splice]:
    if recipe.description_node is not None:
        return [_replace_literal(recipe.src, recipe.description_node, S.quote(value), name)]
    if recipe.meta_attrs is None:
        raise EditError(name, "this recipe has no meta attribute set; edit it by hand")
    line = f"description = {S.quote(value)};"
    return [_insert_binding(recipe, recipe.meta_attrs, [line], name, at_start=True)]


def _cmake(recipe: Recipe, value: list[str], name: str) -> list[Splice]:
    if recipe.cmake_node is not None:
        return list_splices(recipe.src, recipe.cmake_node, value, name)
    if recipe.cmake_binding is not None:
        raise EditError(name, "this recipe's cmakeFlags are not one added list; edit them by hand")
    param = _old_attrs(recipe, name, "cmakeFlags")
    head = f"cmakeFlags = ({param}.cmakeFlags or []) ++ ["
    items = " ".join(S.quote(v) for v in value)
    if len(head) + len(items) < 80:
        block = [f"{head} {items} ];"]
    else:
        block = [head, *(f"  {S.quote(v)}" for v in value), "];"]
    return [
        _insert_binding(recipe, recipe.outer_attrs, block, name, before=_meta(recipe), group=True)
    ]


def _passthru(
    recipe: Recipe, value: dict[str, str | None], name: str, remove_missing: bool = True
) -> list[Splice]:
    current = recipe.facts.passthru
    splices: list[Splice] = []
    missing: list[str] = []
    for key, wanted in value.items():
        if not PASSTHRU_KEY.match(key):
            raise EditError(f"passthru.{key}", f"{key!r} is not a Nix attribute name")
        if key in current:
            if current[key] != wanted:
                node = recipe.passthru_values[key]
                splices.append(_replace_literal(recipe.src, node, literal(wanted), name))
        else:
            _check_new_passthru_key(recipe, key)
            missing.append(f"{key} = {literal(wanted)};")
    if remove_missing:
        for key in current:
            if key not in value:
                splices.append(_remove_binding(recipe.src, recipe.passthru_bindings[key], name))
    if missing:
        splices.extend(_add_passthru(recipe, missing, name))
    return splices


def _check_new_passthru_key(recipe: Recipe, key: str) -> None:
    """A key the recipe's literal passthru lacks can be added unless the recipe sets it through
    an expression."""
    value = recipe.passthru_values.get(key)
    if value is not None:
        shown = recipe.src.text_of(value)[:40]
        raise EditError(
            f"passthru.{key}",
            f"it is written as an expression ({shown}), not a literal; edit it by hand",
        )


def _add_passthru(recipe: Recipe, lines: list[str], name: str) -> list[Splice]:
    """Bindings added to the recipe's passthru, or a passthru that extends the old one."""
    if recipe.passthru_attrs is not None:
        return [_insert_binding(recipe, recipe.passthru_attrs, [line], name) for line in lines]
    param = _old_attrs(recipe, name, "a passthru")
    block = [
        f"passthru = ({param}.passthru or {{ }}) // {{",
        *(f"  {line}" for line in lines),
        "};",
    ]
    return [
        _insert_binding(recipe, recipe.outer_attrs, block, name, before=_meta(recipe), group=True)
    ]


# ---------------------------------------------------------------- inserting and removing


def _meta(recipe: Recipe) -> Binding | None:
    return S.lookup(recipe.src, recipe.outer_attrs, ("meta",))


def _old_attrs(recipe: Recipe, name: str, what: str) -> str:
    if not recipe.outer_param:
        raise EditError(
            name,
            f"the outer overrideAttrs takes no old attributes, so {what} would replace "
            "nixpkgs' own; edit it by hand",
        )
    return recipe.outer_param


def _insert_binding(
    recipe: Recipe,
    attrs: Node,
    block: list[str],
    name: str,
    before: Binding | None = None,
    at_start: bool = False,
    group: bool = False,
) -> Splice:
    """New binding lines in an attrset, in its style: on their own lines at its indentation
    (before `before` and the comments above it, first, or last); a `group` (an attribute of
    the outer derivation) is set off by a blank line where the attrset separates its
    bindings so. Inside a one-line attrset, inline."""
    src = recipe.src
    opening = next(c for c in attrs.children if c.type == "{")
    closing = attrs.children[-1]
    if opening.start_point.row == closing.start_point.row:
        if len(block) > 1:
            raise EditError(name, "the attribute set is written on one line; edit it by hand")
        at = closing.start_byte
        while src.data[at - 1 : at] in (b" ", b"\t"):
            at -= 1
        text = f" {block[0]}" + (" " if at == closing.start_byte else "")
        return Splice(at, at, text.encode(), name)
    starts = [
        b.node.start_byte
        for b in S.bindings(src, attrs)
        if not src.data[src.line_start(b.node.start_byte) : b.node.start_byte].strip()
    ]
    indent = src.indent_of(starts[0]) if starts else src.indent_of(closing.start_byte) + "  "
    spaced = group and b"\n\n" in src.data[opening.end_byte : closing.start_byte]
    if before is not None:
        at = src.line_start(before.node.start_byte)
        while at > 0:
            previous = src.line_start(at - 1)
            if not src.data[previous:at].strip().startswith(b"#"):
                break
            at = previous
        blank_above = not src.data[src.line_start(at - 1) : at].strip()
        lead, tail = "", "\n" if spaced and blank_above else ""
    elif at_start:
        at, lead, tail = src.line_end(opening.end_byte), "", ""
    else:
        if src.data[src.line_start(closing.start_byte) : closing.start_byte].strip():
            raise EditError(
                name, "the attribute set's closing brace shares a line; edit it by hand"
            )
        at, lead, tail = src.line_start(closing.start_byte), "\n" if spaced else "", ""
    text = lead + "".join(f"{indent}{line}\n" for line in block) + tail
    return Splice(at, at, text.encode(), name)


def _remove_binding(src: S.Source, binding: Binding, name: str) -> Splice:
    start, end = binding.node.start_byte, binding.node.end_byte
    if src.alone_on_line(start, end):
        return Splice(src.line_start(start), src.line_end(end), b"", name)
    while start > 0 and src.data[start - 1 : start] in (b" ", b"\t"):
        start -= 1
    return Splice(start, end, b"", name)


# ---------------------------------------------------------------- applying and checking


def _apply(data: bytes, splices: list[Splice]) -> bytes:
    ordered = sorted(enumerate(splices), key=lambda item: (item[1].start, item[1].end, item[0]))
    pieces, at, last = [], 0, None
    for _, splice in ordered:
        if last is not None and splice.start < last.end:
            fields = sorted({last.field, splice.field})
            raise EditError(
                splice.field, f"{' and '.join(fields)} change the same text; change one"
            )
        pieces += [data[at : splice.start], splice.text]
        at, last = max(at, splice.end), splice
    pieces.append(data[at:])
    return b"".join(pieces)


def _verify(result: str, expected: dict[str, object]) -> None:
    try:
        facts = analyse(result).facts
    except RecipeError as error:
        field = next(iter(expected))
        raise EditError(
            field, f"the edited recipe would not read ({error}); edit it by hand"
        ) from error
    for name, value in expected.items():
        if name.startswith("passthru."):
            key = name.removeprefix("passthru.")
            got = facts.passthru.get(key, "<absent>")
        else:
            got = getattr(facts, name)
        if got != value:
            raise EditError(
                name, f"the edited recipe would read {got!r}, not {value!r}; edit it by hand"
            )


# Facts read from a recipe's structure or scripts, with no single value to change.
READ_ONLY = frozenset(
    {
        "form",
        "library",
        "backend",
        "pytorch_source",
        "disabled_features",
        "platforms_fallback",
        "header",
    }
)

# Field name -> (check the value, make the splices).
EDITORS: dict[str, tuple[Callable, Callable]] = {
    "pname": (_nonempty, _pname),
    "nixpkgs_pin": (_matching(PIN, "a 40-digit nixpkgs commit"), _pin),
    "cuda_packages_attr": (_matching(CUDA_SET, "cudaPackages_12_8"), _cuda),
    "python_attr": (_matching(PYTHON_SET, "python312Packages"), _python),
    "gpu_targets": (_texts, _gpu_targets),
    "gpu_arch_num": (
        _nonempty,
        _string_field("gpu_arch_num_node", "this recipe sets no gpuArchNum; edit it by hand"),
    ),
    "cpu_flags": (
        _texts,
        _list_field(
            "cpu_flags_node", "this recipe has no `cpuFlags = [ … ];` list; edit it by hand"
        ),
    ),
    "platforms": (_texts, _platforms),
    "torch_version_override": (
        _nonempty,
        _string_field(
            "version_node",
            "this recipe has no torch source override (an overlay setting version and src); "
            "edit it by hand",
        ),
    ),
    "metadata_rev": (_revision, _metadata),
    "description": (_text, _description),
    "extra_cmake_flags": (_texts, _cmake),
    "passthru": (_passthru_map, _passthru),
}
