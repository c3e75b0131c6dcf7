"""Recipe texts derived from a model recipe, edited in place: for another GPU architecture, CPU
ISA or release. No Django.

The values change through `edit.edit_recipe` (pname, GPU targets, cpuFlags, Python package set,
pin); the prose that names them — comments, `meta.description`, the lines of a
`longDescription`, the build log's `echo` lines — is rewritten line by line with substitutions
built from what the catalogue knows of the old and the new (SM token, compute capability,
family, GPU models, minimum driver; ISA slug, label, hardware; Python and PyTorch versions), so
a derived file differs from its model only in the lines that name what changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from catalog import naming
from catalog.recipes.nix.edit import edit_recipe
from catalog.recipes.nix.errors import EditError
from catalog.recipes.nix.read import read_recipe

Replacement = str | Callable[[re.Match[str]], str]
Substitutions = list[tuple[re.Pattern[str], Replacement]]


def _comment_start(line: str) -> int:
    """Where a line's comment starts (-1: none); a # inside a "…" string is not one."""
    quoted = False
    for index, char in enumerate(line):
        if char == '"' and (index == 0 or line[index - 1] != "\\"):
            quoted = not quoted
        elif char == "#" and not quoted and (index == 0 or line[index - 1] in " \t;"):
            return index
    return -1


# Strings that describe the build to people: meta.description, the lines of a
# longDescription, and the build log's echo lines.
DESCRIPTION_LINE = re.compile(r'^\s*(?:description\s*=\s*"|echo\s+")')
LONG_DESCRIPTION = re.compile(r"^\s*longDescription\s*=\s*''")


def _substitute(text: str, substitutions: Sequence[tuple[re.Pattern[str], Replacement]]) -> str:
    for pattern, replacement in substitutions:
        text = pattern.sub(replacement, text)
    return text


def rewrite_prose(
    text: str,
    substitutions: Substitutions,
    own_line: Sequence[tuple[re.Pattern[str], Replacement]] = (),
) -> str:
    """The text with the substitutions applied to its prose only: comments and descriptive
    strings. `own_line` ones are not applied to a comment after code (a cpuFlags element's
    comment describes that element)."""
    lines = text.splitlines(keepends=True)
    in_long = False
    for number, line in enumerate(lines):
        if in_long or DESCRIPTION_LINE.match(line):
            in_long = in_long and not line.lstrip().startswith("''")
            lines[number] = _substitute(line, [*substitutions, *own_line])
            continue
        if LONG_DESCRIPTION.match(line):
            in_long = not line.rstrip().endswith("'';")
        start = _comment_start(line)
        if start < 0:
            continue
        alone = not line[:start].strip()
        comment = _substitute(line[start:], [*substitutions, *(own_line if alone else ())])
        lines[number] = line[:start] + comment
    return "".join(lines)


def name_substitutions(names: dict[str, str]) -> Substitutions:
    """File and package names first: they contain the tokens the other substitutions change."""
    return [(re.compile(re.escape(a) + r"(?![\w.-])"), b) for a, b in names.items()]


@dataclass(frozen=True)
class ArchNames:
    """How comments, descriptions and targets name an architecture."""

    sm: str  # "sm90"
    family: str  # "Hopper"
    models: tuple[str, ...]  # ("GH200", "H100", "H200")
    short_models: str = ""  # "H100/H200"
    min_driver: int = 0

    @property
    def number(self) -> str:
        return naming.sm_number(self.sm)

    @property
    def capability(self) -> str:
        return naming.gpu_target(self.sm)


def retarget(target: str, old: ArchNames, new: ArchNames) -> str:
    """One written GPU target for the new architecture, in the style it is written in
    ("9.0", "9.0+PTX", "sm_90")."""
    if target.startswith("sm_"):
        return target.replace(f"sm_{old.number}", f"sm_{new.number}", 1)
    return target.replace(old.capability, new.capability, 1)


def _model_lists(old: ArchNames, new: ArchNames) -> Substitutions:
    """The old architecture's GPU models as written: its short list ("T4/RTX 2080 Ti"), then any
    run of its model names ("T4, RTX 2080 Ti, Quadro RTX 8000") -> the new one's."""
    subs: Substitutions = []
    if old.short_models and new.short_models:
        subs.append(
            (re.compile(rf"(?<![\w-]){re.escape(old.short_models)}(?![\w])"), new.short_models)
        )
    if old.models and new.models:
        one = "|".join(re.escape(m) for m in sorted(old.models, key=len, reverse=True))
        run = re.compile(rf"(?<![\w-])(?:{one})(?:(, |/)(?:{one}))*(?![\w])")
        subs.append((run, lambda m: (m[1] or ", ").join(new.models)))
    return subs


def arch_substitutions(old: ArchNames, new: ArchNames, names: dict[str, str]) -> Substitutions:
    """What the prose of a derived recipe changes: the names, the model lists (in a header's
    "(SM90: H100, L40S)" or "(Hopper architecture - H100, L40S)" whatever follows), the SM
    tokens, the compute capability, the family name and the minimum driver."""
    subs = name_substitutions(names)
    subs += [
        (
            re.compile(rf"(\((?:[^()]*?(?:SM{old.number}:|architecture -)) )[^()]*\)"),
            lambda m: f"{m[1]}{', '.join(new.models)})",
        ),
        *_model_lists(old, new),
        (re.compile(rf"\bSM{old.number}\b"), f"SM{new.number}"),
        (re.compile(rf"\bsm_?{old.number}\b"), lambda m: m[0].replace(old.number, new.number)),
        (re.compile(rf"(?<![\d.]){re.escape(old.capability)}(?![\d])"), new.capability),
    ]
    if old.family != new.family:
        subs.append((re.compile(rf"\b{re.escape(old.family)}\b"), new.family))
    if old.min_driver and new.min_driver and old.min_driver != new.min_driver:
        subs.append((re.compile(rf"\bNVIDIA {old.min_driver}\+"), f"NVIDIA {new.min_driver}+"))
    return subs


def derive_recipe(
    text: str, old: ArchNames, new: ArchNames, pname: str, names: dict[str, str]
) -> str:
    """The model's recipe text for the new architecture: its name, GPU target lines, sibling
    import and the prose naming them edited; every other byte kept. `names` maps the model's
    package and file names to the new ones. Raises EditError where the targets cannot be
    edited in place."""
    facts = read_recipe(text)
    targets = [retarget(t, old, new) for t in facts.gpu_targets]
    tries: list[dict[str, object]] = [{"gpu_targets": targets}]
    if facts.gpu_arch_num:
        tries = [
            {"gpu_targets": targets, "gpu_arch_num": new.number},
            {"gpu_arch_num": new.number},
            *tries,
        ]
    derived, refusal = None, None
    for changes in tries:
        try:
            candidate = edit_recipe(text, {"pname": pname, **changes})
        except EditError as exc:
            refusal = exc
            continue
        read = read_recipe(candidate)
        # Some recipes bind gpuArchNum to the dotted target itself ("7.5").
        if read.gpu_targets == targets and read.gpu_arch_num in ("", new.number, *targets):
            derived = candidate
            break
    if derived is None:
        raise refusal or EditError("gpu_targets", "the GPU targets could not be edited in place")
    derived = rename_sibling(derived, facts, names)
    return rewrite_prose(derived, arch_substitutions(old, new, names))


def rename_sibling(text: str, facts, names: dict[str, str]) -> str:
    """A companion's import of its PyTorch sibling file, renamed as `names` says."""
    sibling = facts.pytorch_source.sibling if facts.pytorch_source else ""
    if not sibling or sibling not in names:
        return text
    renamed = text.replace(f"./{sibling}.nix", f"./{names[sibling]}.nix")
    source = read_recipe(renamed).pytorch_source
    if source is None or source.sibling != names[sibling]:
        raise EditError("pytorch_source", "its PyTorch import could not be renamed in place")
    return renamed


def python_attr_for(attr: str, python_version: str) -> str:
    """'python312Packages' for Python 3.13 -> 'python313Packages'; an unversioned set such as
    'python3Packages' stays as it is."""
    if not re.fullmatch(r"python3\d+Packages", attr or ""):
        return attr
    return f"python{python_version.replace('.', '')}Packages"


def _version_substitutions(word: str, old: str, new: str) -> Substitutions:
    """ "Python 3.12", "Python: 3.12" -> the new version (not a longer one: "3.12.1" stays)."""
    if not old or not new or old == new:
        return []
    return [(re.compile(rf"\b({word}:? ){re.escape(old)}(?![\d.]*\d)"), rf"\g<1>{new}")]


def release_substitutions(
    python: tuple[str, str], pytorch: tuple[str, str], names: dict[str, str]
) -> Substitutions:
    """What the prose of a recipe derived for a new release changes: the names, then the
    Python and PyTorch versions ((old, new) each) where they are written."""
    subs = name_substitutions(names)
    if python[0] != python[1]:
        old_tag, new_tag = (v.replace(".", "") for v in python)
        subs.append((re.compile(rf"\bpython{old_tag}\b"), f"python{new_tag}"))
    subs += _version_substitutions("Python", *python)
    subs += _version_substitutions("PyTorch", *pytorch)
    return subs


def derive_release_recipe(
    text: str, changes: dict[str, object], names: dict[str, str], subs: Substitutions
) -> str:
    """The source branch's recipe text for the new branch: `changes` (pname, Python set, pin)
    edited in place, its PyTorch sibling's file renamed, and the prose naming them."""
    facts = read_recipe(text)
    derived = rename_sibling(edit_recipe(text, changes), facts, names)
    return rewrite_prose(derived, subs)


def reflag(written: list[str], old: list[str], new: list[str]) -> list[str]:
    """The written cpuFlags for the new ISA: the old ISA's flags the new one lacks removed,
    every other written flag kept in place, and each flag the new ISA adds inserted after the
    flag that precedes it in the new ISA's list."""
    result = [f for f in written if f not in old or f in new]
    for index, flag in enumerate(new):
        if flag in result:
            continue
        before = [f for f in new[:index] if f in result]
        result.insert(result.index(before[-1]) + 1 if before else 0, flag)
    return result


def isa_substitutions(
    old: tuple[str, str, str],
    new: tuple[str, str, str],
    labels: list[str],
    names: dict[str, str],
) -> tuple[Substitutions, Substitutions]:
    """Prose of a recipe derived for another ISA ((slug, label, hardware) each): the names, the
    slug and the hardware anywhere, and (not in a comment after code) the label where it is
    not the start of a longer label ("AVX-512" in "AVX-512 BF16" stays)."""
    (old_slug, old_label, old_hardware), (new_slug, new_label, new_hardware) = old, new
    longer = [label[len(old_label) :] for label in labels if label.startswith(old_label + " ")]
    guard = "".join(f"(?!{re.escape(rest)})" for rest in longer)
    subs = name_substitutions(names)
    subs.append((re.compile(rf"(?<![\w-]){re.escape(old_slug)}(?![\w-])"), new_slug))
    if old_hardware and new_hardware:
        subs.append((re.compile(re.escape(old_hardware)), new_hardware))
    return subs, [(re.compile(rf"(?<![\w-]){re.escape(old_label)}(?![\w-]){guard}"), new_label)]


def derive_isa_recipe(text: str, flags: list[str], slug: str, pname: str, names, subs) -> str:
    """The model's recipe for another ISA: pname, cpuFlags, passthru.cpuISA (where written),
    its PyTorch sibling's file and the prose naming them edited."""
    facts = read_recipe(text)
    changes: dict[str, object] = {"pname": pname, "cpu_flags": flags}
    if "cpuISA" in facts.passthru:
        changes["passthru.cpuISA"] = slug
    derived = rename_sibling(edit_recipe(text, changes), facts, names)
    return rewrite_prose(derived, *subs)
