"""Nix text as a concrete syntax tree that keeps every byte, and the helpers recipes need.

The tree comes from tree-sitter with the Nix grammar (`tree-sitter-nix`); the Parser and the
Language are built once per process. Offsets are into the UTF-8 bytes of the text
(`Source.data`), as tree-sitter counts them; lines are 1-based. Everything here is plain
syntax: no evaluation, no Django, and no recursion that a deeply nested file could exhaust.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

import tree_sitter_nix
from tree_sitter import Language, Node, Parser, Query, QueryCursor

from .facts import Span

LANGUAGE = Language(tree_sitter_nix.language())
_PARSER = Parser(LANGUAGE)
_PARSE_LOCK = threading.Lock()  # one Parser object; it must not parse two texts at once
_queries: dict[tuple[str, ...], Query] = {}

# How far a name is followed through `let` bindings, and how deep lookups descend: real
# recipes need 2 or 3; the bound keeps a hostile file's cost small.
MAX_DEPTH = 16

ATTRSET_TYPES = frozenset(
    {"attrset_expression", "rec_attrset_expression", "let_expression", "let_attrset_expression"}
)
STRING_TYPES = frozenset({"string_expression", "indented_string_expression"})
OVERRIDE_METHODS = frozenset(
    {"override", "overrideAttrs", "overridePythonAttrs", "overrideDerivation"}
)


# ---------------------------------------------------------------- the parsed text


@dataclass(frozen=True)
class SyntaxProblem:
    """The first place tree-sitter could not parse: 1-based line and column (characters)."""

    line: int
    column: int
    reason: str


class Source:
    """One parsed text: `text`, its UTF-8 `data`, the tree-sitter `tree` and its `root`."""

    def __init__(self, text: str) -> None:
        self.text = text
        # surrogatepass: a lone surrogate survives the round trip through bytes unchanged.
        self.data = text.encode("utf-8", "surrogatepass")
        with _PARSE_LOCK:
            self.tree = _PARSER.parse(self.data)
        self.root = self.tree.root_node
        self.binding_cache: dict[tuple[int, str], list[Binding]] = {}

    # -- text and positions

    def raw(self, node: Node) -> bytes:
        return self.data[node.start_byte : node.end_byte]

    def text_of(self, node: Node) -> str:
        return self.decode(node.start_byte, node.end_byte)

    def decode(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", "surrogatepass")

    def line_of(self, offset: int) -> int:
        return self.data.count(b"\n", 0, offset) + 1

    def span(self, node: Node) -> Span:
        return Span(node.start_byte, node.end_byte, node.start_point.row + 1)

    def span_at(self, start: int, end: int) -> Span:
        return Span(start, end, self.line_of(start))

    def line_start(self, offset: int) -> int:
        """Offset of the first byte of the line holding `offset`."""
        return self.data.rfind(b"\n", 0, offset) + 1

    def line_end(self, offset: int) -> int:
        """Offset just past the newline ending the line holding `offset` (or the end)."""
        at = self.data.find(b"\n", offset)
        return len(self.data) if at < 0 else at + 1

    def indent_of(self, offset: int) -> str:
        """The whitespace that starts the line holding `offset`."""
        start = self.line_start(offset)
        line = self.data[start : self.line_end(offset)]
        return line[: len(line) - len(line.lstrip(b" \t"))].decode()

    def alone_on_line(self, start: int, end: int) -> bool:
        """Only whitespace before `start` on its line, and only whitespace or a comment after
        `end` on its line: the value owns its line."""
        before = self.data[self.line_start(start) : start]
        after = self.data[end : self.line_end(end)].strip()
        return not before.strip() and (not after or after.startswith(b"#"))

    # -- errors

    def problem(self) -> SyntaxProblem | None:
        """The first syntax error as a person would report it: a missing token where the parser
        names one; else an unmatched bracket (tree-sitter's recovery may wrap the whole file
        in one ERROR node); else the innermost first ERROR."""
        first = _first_error(self.root)
        if first is None:
            return None
        if first.is_missing:
            return self._describe(first)
        unmatched = self._unmatched_bracket()
        if unmatched is not None:
            return unmatched
        inner = _first_error(first, inside=True) or first
        return self._describe(inner)

    def _unmatched_bracket(self) -> SyntaxProblem | None:
        pairs = {")": "(", "]": "[", "}": ("{", "${")}
        stack: list[Node] = []
        for node in self.nodes():
            if node.child_count or node.is_missing or node.is_named:
                continue
            kind = node.type
            if kind in ("(", "[", "{", "${"):
                stack.append(node)
            elif kind in pairs:
                if not stack or stack[-1].type not in pairs[kind]:
                    return self._at(node, f"`{kind}` closes nothing opened before it")
                stack.pop()
        if stack:
            return self._at(stack[-1], f"`{stack[-1].type}` opened here is never closed")
        return None

    def _at(self, node: Node, reason: str) -> SyntaxProblem:
        row, col = node.start_point
        start = self.line_start(node.start_byte)
        return SyntaxProblem(row + 1, len(self.decode(start, start + col)) + 1, reason)

    def _describe(self, node: Node) -> SyntaxProblem:
        if node.is_missing:
            kind = node.type
            wanted = "an identifier" if kind == "identifier" else f"`{kind}`"
            return self._at(node, f"expected {wanted} here")
        leaf = node
        while leaf.child_count:
            leaf = leaf.children[0]
        token = self.text_of(leaf).split("\n", 1)[0][:30]
        if not token:
            reason = "unexpected end of the file"
        elif token in ('"', "''"):
            reason = f"unexpected {token}: a string that is never closed, or one out of place"
        else:
            reason = f"unexpected `{token}`"
        return self._at(node, reason)

    # -- traversal

    def find(self, *types: str) -> list[Node]:
        """Every node of these types, in document order (a tree-sitter query: no Python
        work per node of other types)."""
        query = _queries.get(types)
        if query is None:
            query = _queries[types] = Query(LANGUAGE, " ".join(f"({t}) @n" for t in types))
        found = QueryCursor(query).captures(self.root).get("n", [])
        return sorted(found, key=lambda node: node.start_byte)

    def nodes(self, node: Node | None = None) -> Iterator[Node]:
        """Every node under `node` (default: the whole file), in document order."""
        cursor = (node or self.root).walk()
        while True:
            yield cast(Node, cursor.node)  # a cursor always stands on a node
            if cursor.goto_first_child():
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    return


def _first_error(node: Node, inside: bool = False) -> Node | None:
    """The first ERROR or MISSING node under `node` in document order; `inside`: the
    innermost one below `node` itself."""
    stack = [c for c in reversed(node.children)] if inside else [node]
    found = None
    while stack:
        current = stack.pop()
        if current.is_missing or current.is_error:
            found = current
            stack = [c for c in reversed(current.children)]
            continue
        if current.has_error:
            stack.extend(reversed(current.children))
    return found


# ---------------------------------------------------------------- expressions


def unwrap(node: Node | None) -> Node | None:
    """The expression inside any number of parentheses."""
    while node is not None and node.type == "parenthesized_expression":
        node = node.child_by_field_name("expression")
    return node


def same(a: Node | None, b: Node | None) -> bool:
    """The same place in the tree (Node objects are not unique per node)."""
    a, b = unwrap(a), unwrap(b)
    if a is None or b is None:
        return a is b
    return (a.start_byte, a.end_byte, a.type) == (b.start_byte, b.end_byte, b.type)


def operator(node: Node) -> str:
    op = node.child_by_field_name("operator")
    return op.type if op is not None else ""


def variable_name(src: Source, node: Node | None) -> str | None:
    node = unwrap(node)
    if node is not None and node.type == "variable_expression":
        return src.text_of(node)
    return None


def attr_nodes(attrpath: Node | None) -> list[Node]:
    return attrpath.children_by_field_name("attr") if attrpath is not None else []


def attr_name(src: Source, node: Node) -> str | None:
    """An attribute name as written: `a`, `"a b"`; None for an interpolated name."""
    if node.type == "identifier":
        return src.text_of(node)
    if node.type == "string_expression":
        return string_value(src, node)
    return None


@dataclass(frozen=True)
class Binding:
    """`a.b = value;` (names ("a", "b")) or one name of `inherit a;` (value None)."""

    names: tuple[str | None, ...]
    node: Node  # the binding (or inherit) statement
    value: Node | None
    name_node: Node  # the last attribute of the path


def bindings(src: Source, container: Node | None) -> list[Binding]:
    """The bindings of an attrset, `rec` attrset or `let`, in source order."""
    container = unwrap(container)
    if container is None or container.type not in ATTRSET_TYPES:
        return []
    key = (container.start_byte, container.type)
    cached = src.binding_cache.get(key)
    if cached is None:
        cached = src.binding_cache[key] = _read_bindings(src, container)
    return cached


def _read_bindings(src: Source, container: Node) -> list[Binding]:
    found: list[Binding] = []
    for binding_set in container.named_children:
        if binding_set.type != "binding_set":
            continue
        for child in binding_set.named_children:
            if child.type == "binding":
                attrs = attr_nodes(child.child_by_field_name("attrpath"))
                if attrs:
                    names = tuple(attr_name(src, a) for a in attrs)
                    found.append(
                        Binding(names, child, child.child_by_field_name("expression"), attrs[-1])
                    )
            elif child.type in ("inherit", "inherit_from"):
                for inherited in child.children_by_field_name("attrs"):
                    for ident in inherited.children_by_field_name("attr"):
                        found.append(Binding((attr_name(src, ident),), child, None, ident))
    return found


def lookup(src: Source, node: Node | None, path: tuple[str, ...], depth: int = 0) -> Binding | None:
    """The binding of `path` in an attrset-valued expression: an attrset, `a // { … }` (the
    right side wins, as in Nix), or nested attrsets (`meta = { platforms = …; }` and
    `meta.platforms = …` both answer ("meta", "platforms"))."""
    node = unwrap(node)
    if node is None or depth > MAX_DEPTH or not path:
        return None
    if node.type == "binary_expression" and operator(node) == "//":
        for side in ("right", "left"):
            found = lookup(src, node.child_by_field_name(side), path, depth + 1)
            if found is not None:
                return found
        return None
    for binding in bindings(src, node):
        size = len(binding.names)
        if binding.names == path:
            return binding
        if size < len(path) and binding.names == path[:size] and binding.value is not None:
            found = lookup(src, binding.value, path[size:], depth + 1)
            if found is not None:
                return found
    return None


def attrset_of(node: Node | None, depth: int = 0) -> Node | None:
    """The attrset literal an attrset-valued expression adds: `{ … }` itself, or the right
    side of `old // { … }`."""
    node = unwrap(node)
    while node is not None and depth <= MAX_DEPTH:
        if node.type in ("attrset_expression", "rec_attrset_expression"):
            return node
        if node.type == "binary_expression" and operator(node) == "//":
            node = unwrap(node.child_by_field_name("right"))
            depth += 1
            continue
        return None
    return None


def list_elements(node: Node | None) -> list[Node]:
    node = unwrap(node)
    if node is None or node.type != "list_expression":
        return []
    return node.children_by_field_name("element")


def lambda_body(node: Node | None) -> tuple[list[str], Node | None]:
    """`oldAttrs: { … }` or `final: prev: { … }`: the parameter names and the body."""
    node = unwrap(node)
    params: list[str] = []
    while node is not None and node.type == "function_expression" and len(params) < MAX_DEPTH:
        universal = node.child_by_field_name("universal")
        params.append(universal.text.decode() if universal is not None and universal.text else "")
        node = unwrap(node.child_by_field_name("body"))
    return params, node


def formals(src: Source, function: Node) -> dict[str, Node]:
    """A `{ a, b ? d, ... }:` function's formal parameters by name."""
    found: dict[str, Node] = {}
    params = function.child_by_field_name("formals")
    if params is not None:
        for formal in params.children_by_field_name("formal"):
            name = formal.child_by_field_name("name")
            if name is not None:
                found[src.text_of(name)] = formal
    return found


# ---------------------------------------------------------------- application chains


@dataclass(frozen=True)
class Selection:
    """`root.a.b` (or just `root`): the root expression and the attribute nodes after it."""

    root: Node
    attrs: tuple[Node, ...]

    def names(self, src: Source) -> tuple[str | None, ...]:
        return tuple(attr_name(src, a) for a in self.attrs)


@dataclass(frozen=True)
class Step:
    method: str  # override | overrideAttrs | overridePythonAttrs | overrideDerivation
    argument: Node
    node: Node  # the application


@dataclass(frozen=True)
class Chain:
    """`(base.override { … }).overrideAttrs (old: { … })`: the base and its steps, innermost
    first."""

    base: Selection
    steps: tuple[Step, ...]
    node: Node

    def arguments(self, method: str) -> list[Node]:
        return [s.argument for s in self.steps if s.method == method]


def selection(node: Node) -> Selection:
    node = unwrap(node) or node
    if node.type == "select_expression" and node.child_by_field_name("default") is None:
        root = unwrap(node.child_by_field_name("expression"))
        attrs = attr_nodes(node.child_by_field_name("attrpath"))
        if root is not None:
            return Selection(root, tuple(attrs))
    return Selection(node, ())


def apply_chain(src: Source, node: Node) -> Chain:
    """Split an override chain; a plain expression is a chain of no steps."""
    top = node = unwrap(node) or node
    steps: list[Step] = []
    base: Selection | None = None
    while base is None:
        function = node.child_by_field_name("function") if node.type == "apply_expression" else None
        argument = node.child_by_field_name("argument") if function is not None else None
        picked = selection(function) if function is not None else None
        method = attr_name(src, picked.attrs[-1]) if picked is not None and picked.attrs else None
        if (
            method not in OVERRIDE_METHODS
            or argument is None
            or function is None
            or picked is None
            or function.type != "select_expression"
        ):
            base = selection(node)
            break
        steps.append(Step(method, argument, node))
        if len(picked.attrs) > 1:
            base = Selection(picked.root, picked.attrs[:-1])
        else:
            node = unwrap(picked.root) or picked.root
    steps.reverse()
    return Chain(base, tuple(steps), top)


# ---------------------------------------------------------------- strings


def _string_segments(src: Source, node: Node) -> list[str | Node]:
    """The raw text between the delimiters, cut at interpolations (kept as nodes)."""
    children = node.children
    if len(children) < 2:
        return []
    parts: list[str | Node] = []
    at = children[0].end_byte
    for child in children[1:-1]:
        if child.type == "interpolation":
            parts.append(src.decode(at, child.start_byte))
            parts.append(child)
            at = child.end_byte
    parts.append(src.decode(at, children[-1].start_byte))
    return parts


_DQ_ESCAPE = re.compile(r"\\(.)", re.S)
_IND_ESCAPE = re.compile(r"'''|''\$|''\\(.)", re.S)
_CONTROL = {"n": "\n", "r": "\r", "t": "\t"}


def _undo_dq(raw: str) -> str:
    return _DQ_ESCAPE.sub(lambda m: _CONTROL.get(m.group(1), m.group(1)), raw)


def _undo_indented(raw: str) -> str:
    def one(match: re.Match) -> str:
        text = match.group(0)
        if text == "'''":
            return "''"
        if text == "''$":
            return "$"
        return _CONTROL.get(match.group(1), match.group(1))

    return _IND_ESCAPE.sub(one, raw)


_HOLE = "\x00"  # stands for an interpolation while indentation is measured


def _strip_indentation(raw: str) -> str:
    """Nix's rule for '' strings: drop a first line of spaces, remove the smallest indentation
    of the lines with content (an interpolation is content), empty a last line of spaces."""
    lines = raw.split("\n")
    if len(lines) > 1 and not lines[0].strip(" "):
        lines = lines[1:]
    widths = [len(line) - len(line.lstrip(" ")) for line in lines if line.strip(" ")]
    cut = min(widths, default=0)
    lines = [line[cut:] for line in lines]
    if lines and not lines[-1].strip(" "):
        lines[-1] = ""
    return "\n".join(lines)


def string_parts(src: Source, node: Node) -> list[str | Node]:
    """A string literal's value: decoded text pieces and interpolation nodes, in order."""
    segments = _string_segments(src, node)
    if node.type == "string_expression":
        return [_undo_dq(s) if isinstance(s, str) else s for s in segments if s != ""]
    holes = [s for s in segments if not isinstance(s, str)]
    raw = "".join(s if isinstance(s, str) else _HOLE for s in segments)
    pieces = _undo_indented(_strip_indentation(raw)).split(_HOLE)
    parts: list[str | Node] = []
    for index, piece in enumerate(pieces):
        if piece:
            parts.append(piece)
        if index < len(holes):
            parts.append(holes[index])
    return parts


def string_value(src: Source, node: Node | None) -> str | None:
    """The value of a string literal without interpolations (also an old-style bare URL);
    None for anything else."""
    node = unwrap(node)
    if node is None:
        return None
    if node.type == "uri_expression":
        return src.text_of(node)
    if node.type not in STRING_TYPES:
        return None
    parts = string_parts(src, node)
    texts = [p for p in parts if isinstance(p, str)]
    if len(texts) != len(parts):  # an interpolation: no fixed value
        return None
    return "".join(texts)


def is_plain_string(src: Source, node: Node) -> bool:
    """A "…" literal whose bytes are exactly its value: no escapes, no interpolations."""
    return node.type == "string_expression" and all(
        c.type == "string_fragment" for c in node.children[1:-1]
    )


def quote(value: str) -> str:
    """A Nix double-quoted string literal of `value` (`\\`, `"`, `${` and controls escaped)."""
    escaped = (
        value.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("${", "\\${")
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    return f'"{escaped}"'


def indented(value: str) -> str:
    """`value` as text inside a Nix '' string: `''` and `${` escaped."""
    return value.replace("''", "'''").replace("${", "''${")
