"""Maintainers' jobs on a branch's recipe texts: add or drop a GPU architecture, add a CPU ISA,
derive the next release branch.

`add_architecture` derives a variant for every pairing the model architecture has, each from
the model's recipe TEXT (`catalog.recipes.nix.edit.edit_recipe` for the name and the GPU target
lines; the comments that name the architecture, the model's name and its PyTorch sibling's file
rewritten line by line), so a new file differs from its sibling in those lines only.
`drop_architecture` removes a branch's variants of one architecture (their files become stale
for `export-recipes --prune`). `derive_branch` starts a branch from another, each recipe the
source's text with its name, Python package set and pin edited in place. Each writes all or
nothing and refuses with one sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import ProtectedError

from catalog import naming
from catalog.models import Branch, CpuIsa, GpuArchitecture, Variant
from catalog.recipes.importing.store import recipe_values
from catalog.recipes.nix.edit import edit_recipe
from catalog.recipes.nix.errors import EditError, RecipeError
from catalog.recipes.nix.read import read_recipe
from catalog.services import validation_message


class MaintainRefused(Exception):
    """A job the catalogue cannot do; the message is one sentence. Nothing was written."""


@dataclass
class ArchitectureReport:
    repository: str
    branch: str
    # (new recipe path, the model's recipe path) for add; (recipe path, "") for drop
    files: list[tuple[str, str]] = field(default_factory=list)
    dry_run: bool = False


# ---------------------------------------------------------------- pure text work


def _comment_start(line: str) -> int:
    """Where a line's comment starts (-1: none); a # inside a "…" string is not one."""
    quoted = False
    for index, char in enumerate(line):
        if char == '"' and (index == 0 or line[index - 1] != "\\"):
            quoted = not quoted
        elif char == "#" and not quoted and (index == 0 or line[index - 1] in " \t;"):
            return index
    return -1


def rewrite_comments(
    text: str,
    substitutions: list[tuple[re.Pattern, str]],
    own_line: list[tuple[re.Pattern, str]] = (),
) -> str:
    """The text with the substitutions applied to its comments only; `own_line` ones only to
    comments on a line of their own (a comment after code, such as a cpuFlags element's,
    describes that element)."""
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines):
        start = _comment_start(line)
        if start < 0:
            continue
        comment = line[start:]
        alone = not line[:start].strip()
        for pattern, replacement in [*substitutions, *(own_line if alone else ())]:
            comment = pattern.sub(replacement, comment)
        lines[number] = line[:start] + comment
    return "".join(lines)


@dataclass(frozen=True)
class ArchNames:
    """How comments and targets name an architecture."""

    sm: str  # "sm90"
    family: str  # "Hopper"
    models: str  # "H100, H200"

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


def arch_substitutions(
    old: ArchNames, new: ArchNames, names: dict[str, str]
) -> list[tuple[re.Pattern, str]]:
    """What the comments of a derived recipe change: file and package names first (they
    contain the SM token), then the SM tokens, the model lists and the family name."""
    subs = [(re.compile(re.escape(a) + r"(?![\w.-])"), b) for a, b in names.items()]
    subs += [
        (re.compile(rf"\bSM{old.number}\b"), f"SM{new.number}"),
        (re.compile(rf"\bsm_?{old.number}\b"), lambda m: m[0].replace(old.number, new.number)),
        (re.compile(rf"(?<![\d.]){re.escape(old.capability)}(?![\d])"), new.capability),
        # "(SM90: H100, L40S)", "(Hopper architecture - H100, L40S)": the models that follow.
        (
            re.compile(rf"(\((?:[^()]*?(?:SM{new.number}:|architecture -)) )[^()]*\)"),
            lambda m: f"{m[1]}{new.models})",
        ),
    ]
    if old.family != new.family:
        subs.append((re.compile(rf"\b{re.escape(old.family)}\b"), new.family))
    return subs


def derive_recipe(
    text: str, old: ArchNames, new: ArchNames, pname: str, names: dict[str, str]
) -> str:
    """The model's recipe text for the new architecture: its name, GPU target lines, sibling
    import and the comments naming them edited; every other byte kept. `names` maps the
    model's package and file names to the new ones. Raises EditError where the targets cannot
    be edited in place."""
    facts = read_recipe(text)
    targets = [retarget(t, old, new) for t in facts.gpu_targets]
    tries = [{"gpu_targets": targets}]
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
    return rewrite_comments(derived, arch_substitutions(old, new, names))


def rename_sibling(text: str, facts, names: dict[str, str]) -> str:
    """A companion's import of its PyTorch sibling file, renamed as `names` says."""
    sibling = facts.pytorch_source.sibling if facts.pytorch_source else ""
    if not sibling or sibling not in names:
        return text
    renamed = text.replace(f"./{sibling}.nix", f"./{names[sibling]}.nix")
    if read_recipe(renamed).pytorch_source.sibling != names[sibling]:
        raise EditError("pytorch_source", "its PyTorch import could not be renamed in place")
    return renamed


def python_attr_for(attr: str, python_version: str) -> str:
    """'python312Packages' for Python 3.13 -> 'python313Packages'; an unversioned set such as
    'python3Packages' stays as it is."""
    if not re.fullmatch(r"python3\d+Packages", attr or ""):
        return attr
    return f"python{python_version.replace('.', '')}Packages"


def release_substitutions(
    old_python: str, new_python: str, names: dict[str, str]
) -> list[tuple[re.Pattern, str]]:
    """What the comments of a recipe derived for a new release change: the names, then the
    Python version where it is written."""
    subs = [(re.compile(re.escape(a) + r"(?![\w.-])"), b) for a, b in names.items()]
    if old_python != new_python:
        subs += [
            (
                re.compile(rf"\bpython{old_python.replace('.', '')}\b"),
                f"python{new_python.replace('.', '')}",
            ),
            (re.compile(rf"\bPython {re.escape(old_python)}\b"), f"Python {new_python}"),
        ]
    return subs


def derive_release_recipe(
    text: str, changes: dict[str, object], names: dict[str, str], old_python: str, new_python: str
) -> str:
    """The source branch's recipe text for the new branch: `changes` (pname, Python set, pin)
    edited in place, its PyTorch sibling's file renamed, and the comments naming them."""
    facts = read_recipe(text)
    derived = rename_sibling(edit_recipe(text, changes), facts, names)
    return rewrite_comments(derived, release_substitutions(old_python, new_python, names))


# ---------------------------------------------------------------- the catalogue


def _arch(sm: str) -> GpuArchitecture:
    found = GpuArchitecture.objects.filter(sm=sm.lower()).first()
    if found is None:
        known = ", ".join(GpuArchitecture.objects.values_list("sm", flat=True))
        raise MaintainRefused(f"{sm} is not a catalogued GPU architecture; known: {known}.")
    return found


def _names(arch: GpuArchitecture) -> ArchNames:
    models = ", ".join(arch.models.values_list("name", flat=True)) or arch.short_models
    return ArchNames(arch.sm, arch.name, models)


def _branch(repository: str, name: str) -> Branch:
    branch = Branch.objects.filter(repository=repository, name=name).first()
    if branch is None:
        raise MaintainRefused(f"No branch {name!r} in {repository!r}.")
    return branch


def _compose(variant: Variant, sm: str) -> str:
    isa = variant.cpu_isa.slug if variant.cpu_isa_id else ""
    return naming.compose(
        variant.library, variant.python_version, variant.backend, variant.cuda_version, sm, isa
    )


def add_architecture(
    repository: str, branch_name: str, sm: str, like: str, *, dry_run: bool = False
) -> ArchitectureReport:
    """A variant of `sm` for every variant of `like` on the branch, each derived from its
    model's recipe text (see the module docstring)."""
    branch = _branch(repository, branch_name)
    new, old = _arch(sm), _arch(like)
    models = list(
        Variant.objects.filter(branch=branch, gpu_arch=old)
        .select_related("gpu_arch", "cpu_isa", "depends_on")
        .order_by("library", "pname")
    )
    if not models:
        raise MaintainRefused(f"{branch} has no {old.sm.upper()} variants to model on.")
    _check_addable(branch, new, models)
    # Model file stems and pnames -> the new ones (companions import their PyTorch by file).
    names = {}
    for model in models:
        pname = _compose(model, new.sm)
        names[model.pname] = pname
        if model.recipe_path:
            names[PurePosixPath(model.recipe_path).stem] = pname
    report = ArchitectureReport(repository, branch_name, dry_run=dry_run)
    created: dict[int, Variant] = {}
    with transaction.atomic():
        # PyTorch first: companions depend on it.
        for model in sorted(models, key=lambda v: v.library != "pytorch"):
            variant = _derive_variant(branch, model, new, old, names, created)
            created[model.pk] = variant
            report.files.append((variant.recipe_path, model.recipe_path))
        if dry_run:
            transaction.set_rollback(True)
    return report


def _check_addable(branch: Branch, new: GpuArchitecture, models: list[Variant]) -> None:
    for version in sorted({m.cuda_version for m in models}):
        if not new.supports_cuda(version):
            limit = f"needs CUDA ≥ {new.min_cuda}" + (
                f" and ≤ {new.max_cuda}" if new.max_cuda else ""
            )
            raise MaintainRefused(
                f"{new.sm.upper()} {limit}; {branch} builds CUDA {version}, which cannot build it."
            )
    taken = Variant.objects.filter(branch=branch, gpu_arch=new).values_list("pname", flat=True)
    if taken:
        raise MaintainRefused(
            f"{branch} already has {new.sm.upper()} variants ({', '.join(sorted(taken)[:3])}…); "
            "drop them first or edit them."
        )
    textless = [m.pname for m in models if not m.recipe_text]
    if textless:
        raise MaintainRefused(
            f"{textless[0]} has no recipe text to derive from (a seeded variant); import the "
            "branch's recipes first."
        )


def _derive_variant(branch, model: Variant, new, old, names, created) -> Variant:
    pname = names[model.pname]
    try:
        text = derive_recipe(model.recipe_text, _names(old), _names(new), pname, names)
    except (EditError, RecipeError) as exc:
        raise MaintainRefused(
            f"{model.recipe_path}: {exc}; nothing was added (edit that recipe by hand)."
        ) from None
    path = naming.recipe_path(pname)
    values, _findings = recipe_values(text, path, branch)
    values.pop("depends_on", None)
    variant = Variant(branch=branch, status="recipe", **values)
    if model.depends_on_id:
        variant.depends_on = created.get(model.depends_on_id)
        if variant.depends_on is None:
            raise MaintainRefused(
                f"{model.pname} is built on {model.depends_on.pname}, which is not a "
                f"{old.sm.upper()} variant of {branch}; add that one by hand."
            )
    if variant.gpu_arch_id != new.pk:
        raise MaintainRefused(f"{path}: its derived recipe does not read as {new.sm.upper()}.")
    variant.full_clean()
    variant.save()
    return variant


def drop_architecture(
    repository: str, branch_name: str, sm: str, *, dry_run: bool = False
) -> ArchitectureReport:
    """Remove the branch's variants of `sm` (companions first); their files become stale."""
    branch = _branch(repository, branch_name)
    arch = _arch(sm)
    variants = list(
        Variant.objects.filter(branch=branch, gpu_arch=arch).order_by("library", "pname")
    )
    if not variants:
        raise MaintainRefused(f"{branch} has no {arch.sm.upper()} variants.")
    report = ArchitectureReport(repository, branch_name, dry_run=dry_run)
    with transaction.atomic():
        for variant in sorted(variants, key=lambda v: v.library == "pytorch"):
            try:
                variant.delete()
            except ProtectedError:
                users = ", ".join(str(v) for v in variant.companions.all()[:3])
                raise MaintainRefused(
                    f"{variant.pname} is the PyTorch of {users} on another branch; drop those "
                    "first. Nothing was removed."
                ) from None
            report.files.append((variant.recipe_path or naming.recipe_path(variant.pname), ""))
        if dry_run:
            transaction.set_rollback(True)
    return report


# ---------------------------------------------------------------- derive a branch

# Branch fields derive-branch may set; the rest are copied from the source branch.
BRANCH_SETTABLE = (
    "pytorch_version",
    "python_version",
    "torchvision_version",
    "vllm_version",
    "cudnn_version",
    "nixpkgs_pin",
    "purpose",
    "key_additions",
)
# Not copied: the new branch's identity, and what only an import sets.
BRANCH_NOT_COPIED = ("id", "name", "is_default", "source_commit", "imported_at")


@dataclass
class DeriveReport:
    repository: str
    source: str
    branch: str
    files: list[tuple[str, str]] = field(default_factory=list)  # (new path, source path)
    dropped: int = 0
    dry_run: bool = False


def _new_branch(source: Branch, name: str, values: dict[str, str]) -> Branch:
    if Branch.objects.filter(repository=source.repository, name=name).exists():
        raise MaintainRefused(f"{source.repository}:{name} exists already; choose a new name.")
    unknown = sorted(set(values) - set(BRANCH_SETTABLE))
    if unknown:
        raise MaintainRefused(
            f"--set {unknown[0]} is not a branch field derive-branch sets; choose from "
            f"{', '.join(BRANCH_SETTABLE)}."
        )
    copied = {
        f.attname: getattr(source, f.attname)
        for f in Branch._meta.concrete_fields
        if f.name not in BRANCH_NOT_COPIED
    }
    branch = Branch(**{**copied, **values, "name": name})
    try:
        branch.full_clean()
    except ValidationError as exc:
        raise MaintainRefused(f"{branch}: {validation_message(exc)}") from None
    branch.save()
    return branch


def _check_pins(source: Branch, pins: dict[str, str]) -> None:
    for cuda in pins:
        if cuda not in source.cuda_major_minors:
            raise MaintainRefused(
                f"--pin {cuda}=…: {source} builds CUDA {', '.join(source.cuda_versions)}, "
                f"not {cuda}."
            )


def derive_branch(
    repository: str,
    source_name: str,
    new_name: str,
    values: dict[str, str],
    *,
    pins: dict[str, str] | None = None,
    drop: list[str] = (),
    dry_run: bool = False,
) -> DeriveReport:
    """A new branch from `source_name`: its fields with `values` set, and a variant for every
    source variant not of a dropped architecture, each from the source's recipe text with the
    name, the Python package set and (per CUDA version, `pins`) the nixpkgs pin edited in place;
    a seeded variant without text is copied field by field. All or nothing."""
    pins = pins or {}
    source = _branch(repository, source_name)
    dropped = {_arch(sm).pk for sm in drop}
    _check_pins(source, pins)
    report = DeriveReport(repository, source_name, new_name, dry_run=dry_run)
    with transaction.atomic():
        branch = _new_branch(source, new_name, values)
        variants = list(
            source.variants.select_related("gpu_arch", "cpu_isa", "depends_on").order_by("pname")
        )
        kept = [v for v in variants if v.gpu_arch_id not in dropped]
        report.dropped = len(variants) - len(kept)
        names = {}
        for model in kept:
            names[model.pname] = _compose_python(model, branch.python_version)
            if model.recipe_path:
                names[PurePosixPath(model.recipe_path).stem] = names[model.pname]
        created: dict[int, Variant] = {}
        for model in sorted(kept, key=lambda v: v.library != "pytorch"):
            variant = _derived_release_variant(branch, source, model, names, pins, created)
            created[model.pk] = variant
            report.files.append(
                (
                    variant.recipe_path or naming.recipe_path(variant.pname),
                    model.recipe_path or naming.recipe_path(model.pname),
                )
            )
        if dry_run:
            transaction.set_rollback(True)
    return report


def _compose_python(variant: Variant, python: str) -> str:
    return naming.compose(
        variant.library,
        python,
        variant.backend,
        variant.cuda_version,
        variant.gpu_arch.sm if variant.gpu_arch_id else "",
        variant.cpu_isa.slug if variant.cpu_isa_id else "",
    )


def _derived_release_variant(branch, source, model, names, pins, created) -> Variant:
    pname = names[model.pname]
    pin = pins.get(model.cuda_version, "")
    if model.recipe_text:
        changes: dict[str, object] = {"pname": pname}
        attr = python_attr_for(model.python_attr, branch.python_version)
        if attr != model.python_attr:
            changes["python_attr"] = attr
        if pin and model.nixpkgs_pin:
            changes["nixpkgs_pin"] = pin
        try:
            text = derive_release_recipe(
                model.recipe_text, changes, names, source.python_version, branch.python_version
            )
        except (EditError, RecipeError) as exc:
            raise MaintainRefused(
                f"{model.recipe_path}: {exc}; nothing was derived (edit that recipe by hand)."
            ) from None
        values, _findings = recipe_values(text, naming.recipe_path(pname), branch)
        values.pop("depends_on", None)
        variant = Variant(branch=branch, status="recipe", **values)
    else:
        copied = {
            f.attname: getattr(model, f.attname)
            for f in Variant._meta.concrete_fields
            if f.name not in ("id", "branch", "depends_on", "status")
        }
        variant = Variant(**copied, branch=branch, status=branch.default_status)
        variant.pname, variant.python_version = pname, branch.python_version
        variant.nixpkgs_pin = pin or variant.nixpkgs_pin
    if model.depends_on_id:
        variant.depends_on = created.get(model.depends_on_id, model.depends_on)
    try:
        variant.full_clean()
    except ValidationError as exc:
        raise MaintainRefused(f"{pname}: {validation_message(exc)}; nothing was derived.") from None
    variant.save()
    return variant


# ---------------------------------------------------------------- add a CPU ISA


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
    old: tuple[str, str], new: tuple[str, str], labels: list[str], names: dict[str, str]
):
    """Comments of a recipe derived for another ISA: the names and the slug anywhere, and (in
    comments on a line of their own) the label where it is not the start of a longer label
    ("AVX-512" in "AVX-512 BF16" stays)."""
    (old_slug, old_label), (new_slug, new_label) = old, new
    longer = [label[len(old_label) :] for label in labels if label.startswith(old_label + " ")]
    guard = "".join(f"(?!{re.escape(rest)})" for rest in longer)
    subs = [(re.compile(re.escape(a) + r"(?![\w.-])"), b) for a, b in names.items()]
    return [
        *subs,
        (re.compile(rf"(?<![\w-]){re.escape(old_slug)}(?![\w-])"), new_slug),
    ], [(re.compile(rf"(?<![\w-]){re.escape(old_label)}(?![\w-]){guard}"), new_label)]


def derive_isa_recipe(text: str, flags: list[str], slug: str, pname: str, names, subs) -> str:
    """The model's recipe for another ISA: pname, cpuFlags, passthru.cpuISA (where written),
    its PyTorch sibling's file and the comments naming them edited."""
    facts = read_recipe(text)
    changes: dict[str, object] = {"pname": pname, "cpu_flags": flags}
    if "cpuISA" in facts.passthru:
        changes["passthru.cpuISA"] = slug
    derived = rename_sibling(edit_recipe(text, changes), facts, names)
    return rewrite_comments(derived, *subs)


def _isa(slug: str) -> CpuIsa:
    found = CpuIsa.objects.filter(slug=slug.lower()).first()
    if found is None:
        known = ", ".join(CpuIsa.objects.values_list("slug", flat=True))
        raise MaintainRefused(f"{slug} is not a catalogued CPU ISA; known: {known}.")
    return found


def _check_isa_model(branch: Branch, new: CpuIsa, old: CpuIsa, models: list[Variant]) -> None:
    if not models:
        raise MaintainRefused(f"{branch} has no {old.slug} variants to model on.")
    if new.arch != old.arch:
        raise MaintainRefused(
            f"{new.slug} is an {new.arch} ISA and {old.slug} an {old.arch} one; model it on an "
            f"{new.arch} ISA (the platform and build scripts differ)."
        )
    if sorted(new.disabled_libraries) != sorted(old.disabled_libraries):
        raise MaintainRefused(
            f"{new.slug} and {old.slug} switch off different libraries "
            f"({', '.join(new.disabled_libraries) or 'none'} vs "
            f"{', '.join(old.disabled_libraries) or 'none'}); their build scripts differ, so "
            "derive that recipe by hand."
        )
    if Variant.objects.filter(branch=branch, cpu_isa=new).exists():
        raise MaintainRefused(f"{branch} already has {new.slug} variants; drop or edit them.")
    textless = [m.pname for m in models if not m.recipe_text]
    if textless:
        raise MaintainRefused(
            f"{textless[0]} has no recipe text to derive from (a seeded variant); import the "
            "branch's recipes first."
        )


def add_isa(
    repository: str, branch_name: str, slug: str, like: str, *, dry_run: bool = False
) -> ArchitectureReport:
    """A variant of ISA `slug` for every variant of `like` on the branch, each from its model's
    recipe text with the name, cpuFlags, passthru.cpuISA and the comments naming them edited."""
    branch = _branch(repository, branch_name)
    new, old = _isa(slug), _isa(like)
    models = list(
        Variant.objects.filter(branch=branch, cpu_isa=old)
        .select_related("gpu_arch", "cpu_isa", "depends_on")
        .order_by("library", "pname")
    )
    _check_isa_model(branch, new, old, models)
    names = {}
    for model in models:
        sm = model.gpu_arch.sm if model.gpu_arch_id else ""
        names[model.pname] = naming.compose(
            model.library,
            model.python_version,
            model.backend,
            model.cuda_version,
            sm,
            new.slug,
        )
        if model.recipe_path:
            names[PurePosixPath(model.recipe_path).stem] = names[model.pname]
    labels = list(CpuIsa.objects.values_list("label", flat=True))
    subs = isa_substitutions((old.slug, old.label), (new.slug, new.label), labels, names)
    report = ArchitectureReport(repository, branch_name, dry_run=dry_run)
    created: dict[int, Variant] = {}
    with transaction.atomic():
        for model in sorted(models, key=lambda v: v.library != "pytorch"):
            pname = names[model.pname]
            flags = reflag(list(model.cpu_flags), old.compiler_flags, new.compiler_flags)
            try:
                text = derive_isa_recipe(model.recipe_text, flags, new.slug, pname, names, subs)
            except (EditError, RecipeError) as exc:
                raise MaintainRefused(
                    f"{model.recipe_path}: {exc}; nothing was added (edit that recipe by hand)."
                ) from None
            variant = _saved_variant(branch, model, text, pname, created)
            if variant.cpu_isa_id != new.pk:
                raise MaintainRefused(f"{variant.recipe_path}: it does not read as {new.slug}.")
            created[model.pk] = variant
            report.files.append((variant.recipe_path, model.recipe_path))
        if dry_run:
            transaction.set_rollback(True)
    return report


def _saved_variant(branch, model: Variant, text: str, pname: str, created) -> Variant:
    values, _findings = recipe_values(text, naming.recipe_path(pname), branch)
    values.pop("depends_on", None)
    variant = Variant(branch=branch, status="recipe", **values)
    if model.depends_on_id:
        variant.depends_on = created.get(model.depends_on_id)
        if variant.depends_on is None:
            raise MaintainRefused(
                f"{model.pname} is built on {model.depends_on.pname}, which this job does not "
                "derive; add that one by hand."
            )
    variant.full_clean()
    variant.save()
    return variant
