"""Read what a recipe says: `read_recipe(text) -> RecipeFacts`.

Facts are read from the syntax tree as written, never evaluated, and a recipe is refused
(`RecipeError`) only when it cannot be read as one at all: a syntax error, no outer torch /
torchvision / torchaudio derivation, no pname. Every optional part may be missing.

`analyse(text)` returns the `Recipe` behind the facts: the tree and the node each fact was read
from, which is what `edit.edit_recipe` changes in place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from tree_sitter import Node

from catalog import vocabulary as V

from . import syntax as S
from .errors import RecipeError
from .facts import PytorchSource, RecipeFacts
from .syntax import Binding, Chain, Source

# A recipe is a few kilobytes (the largest real one 7 KB); anything near this is not one, and
# reading it costs time (tree-sitter about 1 ms per KB, the page's highlighting as much).
MAX_RECIPE_CHARS = 16 * 1024
# Dots in one run of name characters (`x.a.a.a…`, `1.1.1…`): tree-sitter's Nix lexer rescans the
# rest of such a run at each dot (a path might follow), so its time grows with the square of the
# run (8,000 dots: 0.9 s). Real recipes have at most 4.
MAX_RUN_DOTS = 32
_NAME_RUN = re.compile(r"[\w.+'-]+")  # matches never overlap nor backtrack

NIXPKGS_ARCHIVE = re.compile(
    r"^https?://github\.com/nixos/nixpkgs/archive/([0-9a-f]{1,40})\.tar\.gz$", re.I
)
CUDA_SET = re.compile(r"^cudaPackages(?:_\d+)+$")
METADATA_REV = re.compile(rb"echo\s+(\d+)\s*>\s*\"?\$out/\.metadata-rev\b")
ARCH_LIST = re.compile(rb'TORCH_CUDA_ARCH_LIST=(?:"([^"\n]*)"|([^\s"]*))')
# USE_X=0 in a build script, -DUSE_X=OFF in a CMake flag.
SWITCH = re.compile(r"(?:(?<=-D)|(?<![A-Za-z0-9_]))(USE_[A-Z0-9_]+)=(\w+)")
SWITCHED_OFF = frozenset({"0", "OFF", "FALSE", "NO"})
SWITCHED_ON = frozenset({"1", "ON", "TRUE", "YES"})
INTERPOLATED_NAME = re.compile(rb"^\$\{\s*([A-Za-z_][A-Za-z0-9_'-]*)\s*\}$")
ATTRS_METHODS = ("overrideAttrs", "overridePythonAttrs", "overrideDerivation")
TORCH_ATTRS = tuple(a for a, lib in V.LIBRARY_BY_ATTR.items() if lib == "pytorch")


@dataclass
class Targets:
    """Where the GPU targets are written: a `gpuTargets` list (its element literals, resolved
    through `let` bindings), or the text of `TORCH_CUDA_ARCH_LIST="…"` in a build script."""

    values: list[str]
    list_node: Node | None = None
    literals: list[Node] = field(default_factory=list)  # one per value, in order
    direct: bool = False  # every element is a literal written in the list itself
    shell: tuple[int, int] | None = None  # byte range of the script text


@dataclass
class Recipe:
    """A parsed recipe: its facts and the nodes they were read from."""

    src: Source
    facts: RecipeFacts
    outer: Chain
    outer_attrs: Node  # the `{ … }` of the outer overrideAttrs that sets pname
    outer_param: str  # that function's parameter ("oldAttrs"); "" for a plain attrset
    callpackage: bool
    pname_node: Node
    pin_range: tuple[int, int] | None = None
    cuda_attr_node: Node | None = None
    targets: Targets | None = None
    gpu_arch_num_node: Node | None = None
    cpu_flags_node: Node | None = None  # the list literal
    meta_attrs: Node | None = None
    platforms_node: Node | None = None
    description_node: Node | None = None
    version_node: Node | None = None
    metadata_range: tuple[int, int] | None = None
    post_install: Binding | None = None
    passthru_attrs: Node | None = None
    passthru_bindings: dict[str, Binding] = field(default_factory=dict)
    passthru_values: dict[str, Node] = field(default_factory=dict)  # each binding's value
    cmake_node: Node | None = None  # the added list literal
    cmake_binding: Binding | None = None
    python_nodes: list[Node] = field(default_factory=list)  # every place naming the set


def read_recipe(text: str) -> RecipeFacts:
    """What the recipe says, as written; RecipeError when it cannot be read as a recipe."""
    return analyse(text).facts


def analyse(text: str) -> Recipe:
    """The parsed recipe with its facts and the nodes they come from (for edits)."""
    if len(text) > MAX_RECIPE_CHARS:
        raise RecipeError(1, f"the file is over {MAX_RECIPE_CHARS // 1024} KiB; a recipe is a few")
    if "\x00" in text:  # Nix cannot hold one, and it would end the parser's input early
        nul = text.index("\x00")
        raise RecipeError(text.count("\n", 0, nul) + 1, "the file contains a NUL character")
    _check_runs(text)
    src = Source(text)
    problem = src.problem()
    if problem is not None:
        raise RecipeError(problem.line, problem.reason, problem.column)
    expression = src.root.child_by_field_name("expression")
    if expression is None:
        raise RecipeError(1, "the file holds no Nix expression")
    return _Reader(src).read(expression)


def _check_runs(text: str) -> None:
    """Refuse a dotted run of more than MAX_RUN_DOTS dots before tree-sitter reads it (one
    linear scan: runs never overlap)."""
    for match in _NAME_RUN.finditer(text):
        run = match.group()
        if len(run) > MAX_RUN_DOTS and run.count(".") > MAX_RUN_DOTS:
            raise RecipeError(
                text.count("\n", 0, match.start()) + 1,
                f"a dotted name or number with {run.count('.'):,} dots (`{run[:40]}…`); at most "
                f"{MAX_RUN_DOTS} are read",
            )


class _Reader:
    def __init__(self, src: Source) -> None:
        self.src = src
        self.scope: dict[str, Binding] = {}  # `let` bindings around the outer derivation
        self.formals: dict[str, Node] = {}
        self.strings: list[Node] = src.find(*S.STRING_TYPES)  # every string literal, in order
        self.by_name: dict[str | None, list[Binding]] = {}  # every binding, by its last name
        self.outer_sets: list[tuple[str, Node]] = []  # (parameter, `{ … }`) outermost first
        self.torch_chain: Chain | None = None  # the chain that builds the PyTorch, if here
        for container in src.find(*S.ATTRSET_TYPES):
            for binding in S.bindings(src, container):
                self.by_name.setdefault(binding.names[-1], []).append(binding)

    # ---------------------------------------------------------------- names

    def named(self, name: str) -> Binding | None:
        """The `let` binding of `name` around the derivation, else the first one anywhere."""
        if name in self.scope:
            return self.scope[name]
        for binding in self.by_name.get(name, ()):
            if binding.names == (name,) and binding.value is not None:
                return binding
        return None

    def resolve(self, node: Node | None) -> Node | None:
        """Follow a variable through the `let` bindings to the expression it names."""
        node = S.unwrap(node)
        for _ in range(S.MAX_DEPTH):
            name = S.variable_name(self.src, node)
            binding = self.scope.get(name) if name else None
            if binding is None or binding.value is None:
                break
            node = S.unwrap(binding.value)
        return node

    def value_of(self, binding: Binding | None) -> Node | None:
        if binding is None:
            return None
        if binding.value is not None:
            return self.resolve(binding.value)
        found = self.scope.get(binding.names[0] or "")  # `inherit x;`
        return self.resolve(found.value) if found is not None and found.value is not None else None

    def literal(self, node: Node | None) -> tuple[str, Node] | None:
        """A string literal (through `let` bindings): its value and node."""
        node = self.resolve(node)
        value = S.string_value(self.src, node)
        return (value, node) if value is not None and node is not None else None

    def strings_in(self, node: Node | None) -> list[Node]:
        if node is None:
            return []
        return [s for s in self.strings if node.start_byte <= s.start_byte < node.end_byte]

    def script_lines(self, nodes: list[Node]) -> list[tuple[int, bytes]]:
        """(offset, bytes) of every line of these strings that is not a shell comment."""
        lines = []
        for node in nodes:
            start, raw = node.start_byte, self.src.raw(node)
            at = 0
            for line in raw.split(b"\n"):
                if not line.lstrip().startswith(b"#"):
                    lines.append((start + at, line))
                at += len(line) + 1
        return lines

    # ---------------------------------------------------------------- structure

    def spine(self, node: Node) -> tuple[Node, Node]:
        """Step through the file's functions and `let`s to the expression it evaluates to:
        (that expression as written, and where its variables lead)."""
        written: Node | None = None
        for _ in range(S.MAX_DEPTH * 4):
            node = S.unwrap(node) or node
            kind, inner = node.type, None
            if kind == "function_expression":
                if not self.formals:
                    self.formals = S.formals(self.src, node)
                inner = node.child_by_field_name("body")
            elif kind == "let_expression":
                for binding in S.bindings(self.src, node):
                    if len(binding.names) == 1 and binding.names[0]:
                        self.scope[binding.names[0]] = binding
                inner = node.child_by_field_name("body")
            elif kind in ("with_expression", "assert_expression"):
                inner = node.child_by_field_name("body")
            elif kind == "variable_expression" and not S.same(self.resolve(node), node):
                written = written or node
                inner = self.resolve(node)
            if inner is None:
                break
            node = inner
        return written or node, node

    def chain(self, node: Node) -> Chain:
        """The override chain of `node`, continued through a variable at its base."""
        chain = S.apply_chain(self.src, node)
        for _ in range(S.MAX_DEPTH):
            base = chain.base
            if base.attrs or base.root.type != "variable_expression":
                break
            target = self.resolve(base.root)
            if target is None or S.same(target, base.root):
                break
            inner = S.apply_chain(self.src, target)
            chain = Chain(inner.base, inner.steps + chain.steps, chain.node)
        return chain

    def library(self, chain: Chain) -> tuple[str, str, Node | None] | None:
        """(library key, Python set attribute, the node naming the set) of a chain's base."""
        names = chain.base.names(self.src)
        root_name = S.variable_name(self.src, chain.base.root)
        if not names:
            return None
        library = V.LIBRARY_BY_ATTR.get(names[-1] or "")
        if library is None:
            return None
        if len(names) >= 2:
            return library, names[-2] or "", chain.base.attrs[-2]
        return library, root_name or "", chain.base.root if root_name else None

    def attrs_sets(self, chain: Chain) -> list[tuple[str, Node]]:
        """(parameter, `{ … }`) of each overrideAttrs step, outermost first."""
        found = []
        for step in reversed(chain.steps):
            if step.method in ATTRS_METHODS:
                params, body = S.lambda_body(step.argument)
                attrs = S.attrset_of(body)
                if attrs is not None:
                    found.append((params[-1] if params else "", attrs))
        return found

    def override_arg(self, chain: Chain | None, name: str) -> Binding | None:
        """`name` among the `.override { … }` arguments of a chain (the last one wins)."""
        if chain is None:
            return None
        for argument in reversed(chain.arguments("override")):
            found = S.lookup(self.src, argument, (name,))
            if found is not None:
                return found
        return None

    # ---------------------------------------------------------------- the recipe

    def read(self, expression: Node) -> Recipe:
        src = self.src
        written, body = self.spine(expression)
        outer = self.chain(body)
        found = self.library(outer)
        if found is None:
            raise RecipeError(
                written.start_point.row + 1,
                "the file's value is not a torch, torchvision or torchaudio derivation "
                "(expected `….torch.overrideAttrs (…)` or a similar override chain)",
            )
        library, python_attr, python_node = found
        pname_binding, outer_param, outer_attrs = None, "", None
        self.outer_sets = self.attrs_sets(outer)
        for param, attrs in self.outer_sets:
            pname_binding = S.lookup(src, attrs, ("pname",))
            if pname_binding is not None:
                outer_param, outer_attrs = param, attrs
                break
        if pname_binding is None or outer_attrs is None:
            raise RecipeError(
                outer.node.start_point.row + 1,
                'the derivation sets no pname (`pname = "…";` in its overrideAttrs)',
            )
        written_pname = self.literal(pname_binding.value)  # a literal, or a `let` name for one
        if written_pname is None:
            raise RecipeError(
                pname_binding.node.start_point.row + 1, "pname is not a plain string literal"
            )
        pname, pname_node = written_pname
        root_name = S.variable_name(src, outer.base.root) or ""
        formal = self.formals.get(root_name)
        callpackage = formal is not None and formal.child_by_field_name("default") is None
        facts = RecipeFacts(
            form="", pname=pname, library=library, backend="cpu", python_attr=python_attr
        )
        recipe = Recipe(src, facts, outer, outer_attrs, outer_param, callpackage, pname_node)
        facts.spans["pname"] = src.span(pname_node)
        if python_node is not None:
            facts.spans["python_attr"] = src.span(python_node)
            recipe.python_nodes.append(python_node)

        torch_chain = outer if library == "pytorch" else None
        if library != "pytorch":
            torch_chain = self.companion_source(recipe)
        if torch_chain is not None and torch_chain is not outer:
            inner = self.library(torch_chain)
            if inner is not None and inner[1] == python_attr and inner[2] is not None:
                recipe.python_nodes.append(inner[2])
        self.torch_chain = torch_chain

        self.read_pin(recipe)
        self.read_cuda(recipe)
        self.read_targets(recipe)
        self.read_cpu(recipe)
        self.read_meta(recipe)
        self.read_version(recipe)
        self.read_metadata(recipe)
        self.read_passthru(recipe)
        self.read_cmake(recipe)
        self.read_overlay_sets(recipe)
        switches = self.switches()
        facts.backend = self.backend(recipe, switches)
        facts.disabled_features = self.disabled(recipe, switches)
        facts.header = self.header(expression)
        kind = facts.pytorch_source.kind if facts.pytorch_source else ""
        facts.form = form_of(library, not callpackage, kind)
        return recipe

    def header(self, expression: Node) -> list[str]:
        lines = []
        for node in self.src.root.children:
            if node.start_byte >= expression.start_byte or node.type != "comment":
                break
            for line in self.src.text_of(node).splitlines():
                text = line.strip()
                if text.startswith("#"):
                    text = text[1:]
                    lines.append(text[1:] if text.startswith(" ") else text)
        return lines

    # ---------------------------------------------------------------- companions

    def companion_source(self, recipe: Recipe) -> Chain | None:
        """Where a torchvision / torchaudio recipe's PyTorch comes from; the inline chain."""
        binding = None
        for attr in TORCH_ATTRS:
            binding = binding or self.override_arg(recipe.outer, attr)
        node = self.value_of(binding)
        if node is None:
            return None
        path = self.imported(node)
        if path is not None:
            if path.type == "path_expression":
                stem = PurePosixPath(self.src.text_of(path)).name.removesuffix(".nix")
                recipe.facts.pytorch_source = PytorchSource("sibling", sibling=stem)
            else:
                url, inside = self.remote(path)
                recipe.facts.pytorch_source = PytorchSource("remote", url=url, path=inside)
            return None
        chain = self.chain(node)
        found = self.library(chain)
        if found is None or found[0] != "pytorch":
            return None
        pname = ""
        for _, attrs in self.attrs_sets(chain):
            binding = S.lookup(self.src, attrs, ("pname",))
            value = S.string_value(self.src, binding.value) if binding else None
            if value is not None:
                pname = value
                break
        recipe.facts.pytorch_source = PytorchSource("inline", pname=pname)
        return chain

    def imported(self, start: Node) -> Node | None:
        """X in `import X { … }`, `import X` or `callPackage X { … }`."""
        node: Node | None = start
        for _ in range(3):
            node = S.unwrap(node)
            if node is None or node.type != "apply_expression":
                return None
            function = S.unwrap(node.child_by_field_name("function"))
            if function is None:
                return None
            picked = S.selection(function)
            name = S.attr_name(self.src, picked.attrs[-1]) if picked.attrs else None
            name = name or S.variable_name(self.src, function)
            if name in ("import", "callPackage"):
                return S.unwrap(node.child_by_field_name("argument"))
            node = function
        return None

    def remote(self, path: Node) -> tuple[str, str]:
        """("url fetched", "path inside it") of `"${src}/p.nix"` or `src + "/p.nix"`."""
        fetched, rest = None, ""
        if path.type == "string_expression":
            parts = S.string_parts(self.src, path)
            if parts and not isinstance(parts[0], str):
                fetched = parts[0].child_by_field_name("expression")
                rest = "".join(p for p in parts[1:] if isinstance(p, str))
        elif path.type == "binary_expression" and S.operator(path) == "+":
            fetched = path.child_by_field_name("left")
            rest = S.string_value(self.src, path.child_by_field_name("right")) or ""
        return self.fetch_url(self.resolve(fetched)), rest.lstrip("/")

    def fetch_url(self, node: Node | None) -> str:
        """The URL a `fetchTarball "…"` / `fetchTarball { url = "…"; }` fetches."""
        node = S.unwrap(node)
        if node is None or node.type != "apply_expression":
            return ""
        argument = S.unwrap(node.child_by_field_name("argument"))
        found = self.literal(argument)
        if found is None:
            binding = S.lookup(self.src, argument, ("url",))
            found = self.literal(binding.value) if binding else None
        return found[0] if found else ""

    # ---------------------------------------------------------------- nixpkgs

    def read_pin(self, recipe: Recipe) -> None:
        """The nixpkgs commit the derivation's package set is imported from."""
        name = S.variable_name(self.src, recipe.outer.base.root) or ""
        places: list[Node | None] = []
        if name in self.scope:
            places.append(self.scope[name].value)
        elif name in self.formals:
            places.append(self.formals[name].child_by_field_name("default"))
        places.append(self.src.root)  # a pin bound some other way
        for place in places:
            for node in self.strings_in(place):
                value = S.string_value(self.src, node)
                match = NIXPKGS_ARCHIVE.match(value or "")
                if match is None:
                    continue
                recipe.facts.nixpkgs_pin = match.group(1)
                if S.is_plain_string(self.src, node):
                    start = node.start_byte + 1 + match.start(1)
                    recipe.pin_range = (start, start + len(match.group(1)))
                    recipe.facts.spans["nixpkgs_pin"] = self.src.span_at(*recipe.pin_range)
                return

    def read_cuda(self, recipe: Recipe) -> None:
        """The CUDA set an overlay selects: `cudaPackages = final.cudaPackages_12_8;`."""
        for binding in self.by_name.get("cudaPackages", ()):
            if binding.value is None:
                continue
            picked = S.selection(binding.value)
            node = picked.attrs[-1] if picked.attrs else S.unwrap(binding.value)
            name = self.src.text_of(node) if node is not None else ""
            if node is not None and node.type in ("identifier", "variable_expression"):
                if CUDA_SET.match(name):
                    recipe.facts.cuda_packages_attr = name
                    recipe.cuda_attr_node = node
                    recipe.facts.spans["cuda_packages_attr"] = self.src.span(node)
                    return

    def read_overlay_sets(self, recipe: Recipe) -> None:
        """Overlays that replace the derivation's Python set (`python3Packages =
        prev.python3Packages.override …`) name it too: a new set must be renamed there."""
        attr = recipe.facts.python_attr
        if recipe.callpackage:
            recipe.python_nodes = [
                n
                for n in self.src.nodes()
                if n.type == "variable_expression" and self.src.text_of(n) == attr
            ]
            formal = self.formals.get(attr)
            name = formal.child_by_field_name("name") if formal is not None else None
            if name is not None:
                recipe.python_nodes.append(name)
            return
        for binding in self.by_name.get(attr, ()):
            if binding.names != (attr,) or binding.value is None:
                continue
            chain = S.apply_chain(self.src, binding.value)
            names = chain.base.names(self.src)
            if chain.steps and names and names[-1] == attr:
                recipe.python_nodes += [binding.name_node, chain.base.attrs[-1]]

    # ---------------------------------------------------------------- targets

    def read_targets(self, recipe: Recipe) -> None:
        facts = recipe.facts
        for chain in (self.torch_chain, recipe.outer):
            binding = self.override_arg(chain, "gpuTargets")
            node = self.value_of(binding)
            if node is not None and node.type == "list_expression":
                targets = Targets([], list_node=node, direct=True)
                for element in S.list_elements(node):
                    found = self.literal(element)
                    if found is None:
                        continue
                    targets.values.append(found[0])
                    targets.literals.append(found[1])
                    targets.direct &= S.same(element, found[1])
                recipe.targets = targets
                break
        else:
            recipe.targets = self.arch_list(recipe) or self.declared_arch(recipe)
        if recipe.targets is None:
            return
        facts.gpu_targets = list(recipe.targets.values)
        targets = recipe.targets
        if targets.shell is not None:
            facts.spans["gpu_targets"] = self.src.span_at(*targets.shell)
        elif targets.list_node is not None and (
            targets.direct or len({n.start_byte for n in targets.literals}) != 1
        ):
            facts.spans["gpu_targets"] = self.src.span(targets.list_node)
        else:  # one `let` binding edits them all: `gpuArchSM = "9.0";`
            facts.spans["gpu_targets"] = self.src.span(targets.literals[0])

    def arch_list(self, recipe: Recipe) -> Targets | None:
        """`export TORCH_CUDA_ARCH_LIST="${gpuArchSM}"` (or a literal list) in a script."""
        for offset, line in self.script_lines(self.strings_in(recipe.outer.node)):
            match = ARCH_LIST.search(line)
            if match is None:
                continue
            group = 1 if match.group(1) is not None else 2
            raw = match.group(group)
            named = INTERPOLATED_NAME.match(raw)
            if named is not None:
                binding = self.named(named.group(1).decode())
                found = self.literal(binding.value) if binding else None
                if found is None:
                    return None
                return Targets([found[0]], literals=[found[1]])
            start = offset + match.start(group)
            values = [v for v in re.split(r"[;\s]+", raw.decode()) if v]
            return Targets(values, shell=(start, start + len(raw)))
        return None

    def declared_arch(self, recipe: Recipe) -> Targets | None:
        """Last resort: the architecture the outer derivation declares in passthru.gpuArch
        (a companion built on a sibling's PyTorch may say no more)."""
        binding = self.outer_lookup(("passthru", "gpuArch"))
        found = self.literal(binding.value) if binding else None
        if found is None or found[0] == "mps":
            return None
        return Targets([found[0]], literals=[found[1]])

    def read_cpu(self, recipe: Recipe) -> None:
        facts = recipe.facts
        binding = self.named("gpuArchNum")
        found = self.literal(binding.value) if binding else None
        if found is not None:
            facts.gpu_arch_num = found[0]
            recipe.gpu_arch_num_node = found[1]
            facts.spans["gpu_arch_num"] = self.src.span(found[1])
        binding = self.named("cpuFlags")
        node = self.resolve(binding.value) if binding else None
        facts.cpu_flags = self.string_list(node)
        if node is not None and node.type == "list_expression":
            recipe.cpu_flags_node = node
            facts.spans["cpu_flags"] = self.src.span(node)

    def string_list(self, node: Node | None) -> list[str]:
        """The string elements of a list, of `a ++ b`, through `let` bindings."""
        values: list[str] = []
        for found in self.list_nodes(node):
            for element in S.list_elements(found):
                literal = self.literal(element)
                if literal is not None:
                    values.append(literal[0])
        return values

    def list_nodes(self, node: Node | None) -> list[Node]:
        """The list literals that `a ++ b ++ …` joins (through `let` bindings), in order."""
        found: list[Node] = []
        stack = [node]
        for _ in range(4096):  # a bound on hostile concatenations
            if not stack:
                break
            current = self.resolve(stack.pop())
            if current is None:
                continue
            if current.type == "binary_expression" and S.operator(current) == "++":
                stack += [current.child_by_field_name("right"), current.child_by_field_name("left")]
            elif current.type == "list_expression":
                found.append(current)
        return found

    # ---------------------------------------------------------------- the outer attributes

    def outer_lookup(self, path: tuple[str, ...]) -> Binding | None:
        for _, attrs in self.outer_sets:
            found = S.lookup(self.src, attrs, path)
            if found is not None:
                return found
        return None

    def read_meta(self, recipe: Recipe) -> None:
        facts = recipe.facts
        meta = self.outer_lookup(("meta",))
        recipe.meta_attrs = S.attrset_of(meta.value) if meta else None
        binding = self.outer_lookup(("meta", "platforms"))
        node = S.unwrap(binding.value) if binding else None
        if node is not None and node.type == "select_expression":
            default = S.unwrap(node.child_by_field_name("default"))
            node = default if default is not None and default.type == "list_expression" else None
            facts.platforms_fallback = node is not None
        if node is not None and node.type == "list_expression":
            facts.platforms = self.string_list(node)
            recipe.platforms_node = node
            facts.spans["platforms"] = self.src.span(node)
        binding = self.outer_lookup(("meta", "description"))
        node = S.unwrap(binding.value) if binding else None
        if node is not None and node.type in S.STRING_TYPES:
            parts = S.string_parts(self.src, node)
            facts.description = "".join(
                p if isinstance(p, str) else self.src.text_of(p) for p in parts
            )
            recipe.description_node = node
            facts.spans["description"] = self.src.span(node)

    def read_version(self, recipe: Recipe) -> None:
        """`torch = pprev.torch.overrideAttrs (… { version = "2.10.0"; src = …; })`."""
        for binding in (b for attr in TORCH_ATTRS for b in self.by_name.get(attr, ())):
            if binding.value is None:
                continue
            chain = S.apply_chain(self.src, binding.value)
            for _, attrs in self.attrs_sets(chain):
                version = S.lookup(self.src, attrs, ("version",))
                if version is None or S.lookup(self.src, attrs, ("src",)) is None:
                    continue
                found = self.literal(version.value)
                if found is not None:
                    recipe.facts.torch_version_override = found[0]
                    recipe.version_node = found[1]
                    recipe.facts.spans["torch_version_override"] = self.src.span(found[1])
                    return

    def read_metadata(self, recipe: Recipe) -> None:
        """`echo N > $out/.metadata-rev` in the outer postInstall."""
        binding = self.outer_lookup(("postInstall",))
        recipe.post_install = binding
        if binding is None:
            return
        for offset, line in self.script_lines(self.strings_in(binding.value)):
            match = METADATA_REV.search(line)
            if match is not None:
                start = offset + match.start(1)
                recipe.metadata_range = (start, start + len(match.group(1)))
                recipe.facts.metadata_rev = int(match.group(1))
                recipe.facts.spans["metadata_rev"] = self.src.span_at(*recipe.metadata_range)
                return

    def read_passthru(self, recipe: Recipe) -> None:
        """The passthru fields written as a string or null; disabledFeatures, if listed."""
        binding = self.outer_lookup(("passthru",))
        attrs = S.attrset_of(binding.value) if binding else None
        if attrs is None:
            return
        recipe.passthru_attrs = attrs
        recipe.facts.spans["passthru"] = self.src.span(attrs)
        for field_binding in S.bindings(self.src, attrs):
            key = field_binding.names[0] if len(field_binding.names) == 1 else None
            node = S.unwrap(field_binding.value)
            if not key or node is None:
                continue
            if node.type in S.STRING_TYPES:
                value = S.string_value(self.src, node)
                if value is None:
                    continue
            elif node.type == "variable_expression" and self.src.text_of(node) == "null":
                value = None
            else:
                recipe.passthru_bindings[key] = field_binding  # there, but not a literal
                recipe.passthru_values[key] = node
                continue
            recipe.passthru_bindings[key] = field_binding
            recipe.passthru_values[key] = node
            recipe.facts.passthru[key] = value
            recipe.facts.spans[f"passthru.{key}"] = self.src.span(node)

    def read_cmake(self, recipe: Recipe) -> None:
        """The list the outer derivation adds: `cmakeFlags = (old.cmakeFlags or []) ++ [ … ]`."""
        binding = self.outer_lookup(("cmakeFlags",))
        if binding is None or binding.value is None:
            return
        recipe.cmake_binding = binding
        recipe.facts.extra_cmake_flags = self.string_list(binding.value)
        lists = self.list_nodes(binding.value)
        if len(lists) == 1:
            recipe.cmake_node = lists[0]
            recipe.facts.spans["extra_cmake_flags"] = self.src.span(lists[0])

    # ---------------------------------------------------------------- judgements

    def switches(self) -> dict[str, str]:
        """USE_X switches set in the file's scripts and flags: {"USE_FBGEMM": "0", …}."""
        found: dict[str, str] = {}
        for _, line in self.script_lines(self.strings):
            for match in SWITCH.finditer(line.decode("utf-8", "replace")):
                found[match.group(1)] = match.group(2).upper()
        return found

    def backend(self, recipe: Recipe, switches: dict[str, str]) -> str:
        facts = recipe.facts
        gpu_arch = self.named("gpuArch")
        gpu_arch_value = self.literal(gpu_arch.value) if gpu_arch else None
        darwin = bool(facts.platforms) and all(
            (V.PLATFORMS[p].os == "darwin") if p in V.PLATFORMS else "darwin" in p
            for p in facts.platforms
        )
        if (
            switches.get("USE_MPS") in SWITCHED_ON
            or facts.passthru.get("gpuArch") == "mps"
            or (gpu_arch_value is not None and gpu_arch_value[0] == "mps")
            or darwin
        ):
            return "mps"
        explicit = self.override_arg(self.torch_chain, "cudaSupport")
        explicit_value = S.variable_name(self.src, explicit.value) if explicit else None
        if explicit_value in ("true", "false"):
            return "cuda" if explicit_value == "true" else "cpu"
        config = any(
            S.variable_name(self.src, b.value) == "true"
            for b in self.by_name.get("cudaSupport", ())
        )
        if facts.gpu_targets or facts.cuda_packages_attr or config:
            return "cuda"
        return "cpu"

    def disabled(self, recipe: Recipe, switches: dict[str, str]) -> list[str]:
        """Libraries switched off (USE_X=0 anywhere, passthru.disabledFeatures); cuDNN only
        counts on a CUDA build, where there is one to switch off."""
        keys = {
            V.FEATURE_BY_SWITCH[switch]
            for switch, value in switches.items()
            if switch in V.FEATURE_BY_SWITCH and value in SWITCHED_OFF
        }
        listed = recipe.passthru_bindings.get("disabledFeatures")
        if listed is not None:
            keys |= set(self.string_list(listed.value)) & set(V.FEATURES)
        cuda = recipe.facts.backend == "cuda"
        return [k for k, f in V.FEATURES.items() if k in keys and (cuda or not f.needs_cuda)]


def form_of(library: str, pinned: bool, pytorch: str) -> str:
    """The vocabulary.RECIPE_FORMS key of a recipe: its library, whether it imports a nixpkgs
    of its own, and (companions) where its PyTorch comes from ("" when it uses its set's own
    torch, which is read as the inline form)."""
    family = "pytorch" if library == "pytorch" else "companion"
    candidates = [
        key
        for key, form in V.RECIPE_FORMS.items()
        if form.library == family and form.pinned == pinned
    ]
    if family == "companion":
        exact = [key for key in candidates if V.RECIPE_FORMS[key].pytorch == (pytorch or "inline")]
        candidates = exact or candidates
    return candidates[0]
