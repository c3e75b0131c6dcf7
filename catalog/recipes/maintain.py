"""Maintainers' jobs on a branch's recipe texts: add or drop a GPU architecture, add a CPU ISA,
derive the next release branch.

Each new recipe is its model's TEXT edited in place (`catalog.recipes.nix.edit.edit_recipe` for
the values; the comments and the descriptive strings that name what changed rewritten line by
line), so a new file differs from its model in those lines only: `add_architecture` and
`add_isa` derive a variant for every variant of the model architecture or ISA on the branch;
`derive_branch` a new branch from another, each recipe with its name, Python package set and pin
edited. `drop_architecture` removes a branch's variants of one architecture (their files become
stale for `export-recipes --prune`). Each writes all or nothing, refuses with one sentence, and
reports the unified diff of every file export will write (a new file against its model).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import ProtectedError

from catalog import naming
from catalog.models import Branch, CpuIsa, GpuArchitecture, Variant
from catalog.recipes.exporting import sync
from catalog.recipes.importing.store import recipe_values
from catalog.recipes.nix.derive import (
    ArchNames,
    derive_isa_recipe,
    derive_recipe,
    derive_release_recipe,
    isa_substitutions,
    python_attr_for,
    reflag,
    release_substitutions,
)
from catalog.recipes.nix.errors import EditError, RecipeError
from catalog.services import validation_message


class MaintainRefused(Exception):
    """A job the catalogue cannot do; the message is one sentence. Nothing was written."""


@dataclass
class JobReport:
    """What a job did, or with dry_run would do."""

    repository: str
    branch: str  # the branch written (derive-branch: the new one)
    job: str  # "added", "dropped" or "derived"
    source: str = ""  # derive-branch: the branch derived from
    # (recipe path, its model's path) per new file; (recipe path, "") per dropped one
    files: list[tuple[str, str]] = field(default_factory=list)
    # per file, the unified diff export writes: a new file against its model, a dropped one
    # against nothing (as --prune deletes it)
    diffs: list[str] = field(default_factory=list)
    dropped: int = 0
    dry_run: bool = False

    @property
    def summary(self) -> str:
        """One sentence, as the command prints it and the admin shows it."""
        where = f"{self.repository}:{self.branch}"
        if self.job == "dropped":
            return f"{where}: {self.dropped} variants dropped"
        if self.job == "derived":
            return (
                f"{where} from {self.source}: {len(self.files)} variants, {self.dropped} "
                "dropped; export-recipes --into a checkout of the new branch writes them"
            )
        return (
            f"{where}: {len(self.files)} variants added; export-recipes --into writes their files"
        )

    def record(self, variant: Variant, model: Variant | None) -> None:
        path = variant.recipe_path or naming.recipe_path(variant.pname)
        if model is None:
            self.files.append((path, ""))
            self.diffs.append(
                _diff(sync.exported_texts([variant])[0], "", f"a/{path}", "/dev/null")
            )
            return
        model_path = model.recipe_path or naming.recipe_path(model.pname)
        self.files.append((path, model_path))
        before, after = sync.exported_texts([model, variant])
        self.diffs.append(_diff(before, after, f"a/{model_path}", f"b/{path}"))


def _diff(before: str, after: str, fromfile: str, tofile: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile, tofile
    )
    return "".join(lines)


def parse_pairs(pairs: list[str], option: str) -> dict[str, str]:
    """["KEY=VALUE", …] -> {key: value}, each key once."""
    parsed = {}
    for pair in pairs:
        key, sep, value = pair.strip().partition("=")
        if not sep or not key or key in parsed:
            raise MaintainRefused(f"{option} {pair!r}: give each as KEY=VALUE, each key once.")
        parsed[key] = value
    return parsed


# ---------------------------------------------------------------- the catalogue


def _catalogued(model, key: str, value: str, what: str):
    """The row of `model` whose `key` is the value as typed (any case), or a refusal that lists
    the known ones."""
    found = model.objects.filter(**{key: value.strip().lower()}).first()
    if found is None:
        known = ", ".join(model.objects.values_list(key, flat=True))
        raise MaintainRefused(f"{value} is not a catalogued {what}; known: {known}.")
    return found


def _arch(sm: str) -> GpuArchitecture:
    return _catalogued(GpuArchitecture, "sm", sm, "GPU architecture")


def _isa(slug: str) -> CpuIsa:
    return _catalogued(CpuIsa, "slug", slug, "CPU ISA")


def _names(arch: GpuArchitecture) -> ArchNames:
    models = tuple(arch.models.order_by("name").values_list("name", flat=True))
    return ArchNames(arch.sm, arch.name, models, arch.short_models, arch.min_driver)


def _branch(repository: str, name: str) -> Branch:
    branch = Branch.objects.filter(repository=repository, name=name).first()
    if branch is None:
        raise MaintainRefused(f"No branch {name!r} in {repository!r}.")
    return branch


def _models(branch: Branch, **where) -> list[Variant]:
    related = ("gpu_arch", "cpu_isa", "depends_on")
    return list(
        Variant.objects.filter(branch=branch, **where)
        .select_related(*related)
        .order_by("library", "pname")
    )


def _compose(variant: Variant, *, sm=None, isa=None, python=None) -> str:
    """The variant's name with one part changed."""
    if sm is None:
        sm = variant.gpu_arch.sm if variant.gpu_arch_id else ""
    if isa is None:
        isa = variant.cpu_isa.slug if variant.cpu_isa_id else ""
    return naming.compose(
        variant.library,
        python or variant.python_version,
        variant.backend,
        variant.cuda_version,
        sm,
        isa,
    )


def _renames(models: list[Variant], **part) -> dict[str, str]:
    """Each model's pname and file stem -> the new name (companions import their PyTorch by
    file)."""
    names = {}
    for model in models:
        names[model.pname] = _compose(model, **part)
        if model.recipe_path:
            names[PurePosixPath(model.recipe_path).stem] = names[model.pname]
    return names


def _require_texts(models: list[Variant]) -> None:
    textless = [m.pname for m in models if not m.recipe_text]
    if textless:
        raise MaintainRefused(
            f"{textless[0]} has no recipe text to derive from (a seeded variant); import the "
            "branch's recipes first."
        )


@dataclass
class _Derivation:
    """How one job makes its variants: `text(model, pname)` is the new recipe text (None: copy
    the model's fields, for a seeded variant); `reads_as` (field, value, label) what each must
    read as; a companion whose PyTorch the job does not derive keeps its PyTorch where
    `outside_ok`, else the job is refused."""

    branch: Branch
    names: dict[str, str]
    text: Callable[[Variant, str], str | None]
    verb: str  # "added", "derived": the refusal says nothing was
    reads_as: tuple[str, int, str] | None = None
    outside_ok: bool = False
    pins: dict[str, str] = field(default_factory=dict)  # a copied variant's pin per CUDA


def _derive_all(job: _Derivation, models: list[Variant], report: JobReport) -> None:
    """A saved variant on the job's branch for every model, PyTorch first (companions depend on
    it), each recorded in the report."""
    created: dict[int, Variant] = {}
    for model in sorted(models, key=lambda v: v.library != "pytorch"):
        variant = _derived_variant(job, model)
        if model.depends_on_id:
            variant.depends_on = created.get(model.depends_on_id)
            if variant.depends_on is None and job.outside_ok:
                variant.depends_on = model.depends_on
            if variant.depends_on is None:
                raise MaintainRefused(
                    f"{model.pname} is built on {model.depends_on.pname}, which this job does "
                    f"not derive; add that one by hand. Nothing was {job.verb}."
                )
        try:
            variant.full_clean()
        except ValidationError as exc:
            raise MaintainRefused(
                f"{variant.pname}: {validation_message(exc)}; nothing was {job.verb}."
            ) from None
        variant.save()
        created[model.pk] = variant
        report.record(variant, model)


def _derived_variant(job: _Derivation, model: Variant) -> Variant:
    pname = job.names[model.pname]
    path = naming.recipe_path(pname)
    try:
        text = job.text(model, pname)
        if text is None:
            return _copied_variant(job, model, pname)
        values, _findings = recipe_values(text, path, job.branch)
    except (EditError, RecipeError) as exc:
        raise MaintainRefused(
            f"{model.recipe_path}: {exc}; nothing was {job.verb} (edit that recipe by hand)."
        ) from None
    values.pop("depends_on", None)
    variant = Variant(branch=job.branch, status="recipe", **values)
    if job.reads_as:
        attname, pk, label = job.reads_as
        if getattr(variant, attname) != pk:
            raise MaintainRefused(f"{path}: its derived recipe does not read as {label}.")
    return variant


def _copied_variant(job: _Derivation, model: Variant, pname: str) -> Variant:
    """A seeded variant (no recipe text) for the new branch, field by field."""
    branch = job.branch
    copied = {
        f.attname: getattr(model, f.attname)
        for f in Variant._meta.concrete_fields
        if f.name not in ("id", "branch", "depends_on", "status")
    }
    variant = Variant(**copied, branch=branch, status=branch.default_status)
    variant.pname, variant.python_version = pname, branch.python_version
    variant.nixpkgs_pin = job.pins.get(model.cuda_version) or variant.nixpkgs_pin
    return variant


def _run(report: JobReport, dry_run: bool, work: Callable[[], None]) -> JobReport:
    """`work` in one transaction, rolled back for a dry run or any refusal."""
    with transaction.atomic():
        work()
        if dry_run:
            transaction.set_rollback(True)
    return report


def add_architecture(
    repository: str, branch_name: str, sm: str, like: str, *, dry_run: bool = False
) -> JobReport:
    """A variant of `sm` for every variant of `like` on the branch, each derived from its
    model's recipe text (see the module docstring)."""
    branch = _branch(repository, branch_name)
    new, old = _arch(sm), _arch(like)
    models = _models(branch, gpu_arch=old)
    if not models:
        raise MaintainRefused(f"{branch} has no {old.sm.upper()} variants to model on.")
    _check_addable(branch, new, models)
    names = _renames(models, sm=new.sm)
    old_names, new_names = _names(old), _names(new)
    job = _Derivation(
        branch,
        names,
        lambda model, pname: derive_recipe(model.recipe_text, old_names, new_names, pname, names),
        "added",
        reads_as=("gpu_arch_id", new.pk, new.sm.upper()),
    )
    report = JobReport(repository, branch_name, "added", dry_run=dry_run)
    return _run(report, dry_run, lambda: _derive_all(job, models, report))


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
    _require_texts(models)


def drop_architecture(
    repository: str, branch_name: str, sm: str, *, dry_run: bool = False
) -> JobReport:
    """Remove the branch's variants of `sm` (companions first); their files become stale."""
    branch = _branch(repository, branch_name)
    arch = _arch(sm)
    variants = _models(branch, gpu_arch=arch)
    if not variants:
        raise MaintainRefused(f"{branch} has no {arch.sm.upper()} variants.")
    report = JobReport(repository, branch_name, "dropped", dry_run=dry_run)

    def drop() -> None:
        for variant in sorted(variants, key=lambda v: v.library == "pytorch"):
            report.record(variant, None)
            try:
                variant.delete()
            except ProtectedError:
                users = ", ".join(str(v) for v in variant.companions.all()[:3])
                raise MaintainRefused(
                    f"{variant.pname} is the PyTorch of {users} on another branch; drop those "
                    "first. Nothing was removed."
                ) from None
        report.dropped = len(variants)

    return _run(report, dry_run, drop)


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
) -> JobReport:
    """A new branch from `source_name`: its fields with `values` set, and a variant for every
    source variant not of a dropped architecture, each from the source's recipe text with the
    name, the Python package set and (per CUDA version, `pins`) the nixpkgs pin edited in place;
    a seeded variant without text is copied field by field. All or nothing."""
    pins = pins or {}
    source = _branch(repository, source_name)
    dropped = {_arch(sm).pk for sm in drop}
    _check_pins(source, pins)
    report = JobReport(repository, new_name, "derived", source=source_name, dry_run=dry_run)

    def derive() -> None:
        branch = _new_branch(source, new_name, values)
        variants = _models(source)
        kept = [v for v in variants if v.gpu_arch_id not in dropped]
        report.dropped = len(variants) - len(kept)
        names = _renames(kept, python=branch.python_version)
        subs = release_substitutions(
            (source.python_version, branch.python_version),
            (source.pytorch_version, branch.pytorch_version),
            names,
        )

        def text(model: Variant, pname: str) -> str | None:
            if not model.recipe_text:
                return None
            changes: dict[str, object] = {"pname": pname}
            attr = python_attr_for(model.python_attr, branch.python_version)
            if attr != model.python_attr:
                changes["python_attr"] = attr
            if pins.get(model.cuda_version) and model.nixpkgs_pin:
                changes["nixpkgs_pin"] = pins[model.cuda_version]
            return derive_release_recipe(model.recipe_text, changes, names, subs)

        job = _Derivation(branch, names, text, "derived", outside_ok=True, pins=pins)
        _derive_all(job, kept, report)

    return _run(report, dry_run, derive)


# ---------------------------------------------------------------- add a CPU ISA


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
    _require_texts(models)


def add_isa(
    repository: str, branch_name: str, slug: str, like: str, *, dry_run: bool = False
) -> JobReport:
    """A variant of ISA `slug` for every variant of `like` on the branch, each from its model's
    recipe text with the name, cpuFlags, passthru.cpuISA and the prose naming them edited."""
    branch = _branch(repository, branch_name)
    new, old = _isa(slug), _isa(like)
    models = _models(branch, cpu_isa=old)
    _check_isa_model(branch, new, old, models)
    names = _renames(models, isa=new.slug)
    labels = list(CpuIsa.objects.values_list("label", flat=True))
    subs = isa_substitutions(
        (old.slug, old.label, old.hardware), (new.slug, new.label, new.hardware), labels, names
    )

    def text(model: Variant, pname: str) -> str:
        flags = reflag(list(model.cpu_flags), old.compiler_flags, new.compiler_flags)
        return derive_isa_recipe(model.recipe_text, flags, new.slug, pname, names, subs)

    job = _Derivation(branch, names, text, "added", reads_as=("cpu_isa_id", new.pk, new.slug))
    report = JobReport(repository, branch_name, "added", dry_run=dry_run)
    return _run(report, dry_run, lambda: _derive_all(job, models, report))
