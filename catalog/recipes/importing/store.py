"""import-recipes: read a branch's recipes (from a checkout or from git objects) into the catalogue.

Every `.nix` under `.flox/pkgs` is read with `catalog.recipes.nix.read`;
`catalog.recipes.importing.recipes` turns its facts into field values. Files that are not recipes at
all are collected first, every one of them, and then nothing is imported unless `skip_invalid`; a
recipe is never refused for what it lacks or for an inconsistency (those are findings, reported by
the audit). One branch is one transaction."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import ProtectedError
from django.utils import timezone

from catalog import cache, naming, vocabulary
from catalog.models import Branch, CpuIsa, GpuArchitecture, Variant
from catalog.recipes.importing import build_matrix
from catalog.recipes.importing.errors import ParseError
from catalog.recipes.importing.recipes import BranchDefaults, Dependency, Tables, interpret
from catalog.recipes.nix.errors import RecipeError
from catalog.recipes.nix.read import MAX_RECIPE_CHARS, read_recipe
from catalog.services import assign_changed

PKGS_DIR = vocabulary.PKGS_DIR
BUILD_MATRIX = "BUILD_MATRIX.md"


class ImportFailure(Exception):
    """Input the command cannot act on; the message is one sentence. `details` lists the
    files that are not recipes, one "file:line: reason" each."""

    def __init__(self, message: str, details: Iterable[str] = ()):
        super().__init__(message)
        self.details = list(details)


@dataclass(frozen=True)
class Source:
    path: str  # relative to the checkout root, e.g. ".flox/pkgs/<file>.nix"
    data: bytes
    refused: str = ""  # why the file was not read (a link, too large, …); data is then empty


# A recipe is a few kilobytes; the reader refuses more than this many characters, and the file
# is refused before it is read when it holds more bytes (stat first, then a bounded read).
MAX_RECIPE_BYTES = MAX_RECIPE_CHARS
MAX_MATRIX_BYTES = 1024 * 1024
LINK_REFUSED = (
    "a symbolic link; import reads only regular files inside the checkout and never follows one"
)


@dataclass
class ImportReport:
    repository: str
    branch: str
    branch_outcome: str = ""  # created | updated | unchanged
    inferred: list[str] = field(default_factory=list)  # what a new branch's fields came from
    files: list[tuple[str, str, str]] = field(default_factory=list)  # (path, outcome, detail)
    findings: list[tuple[str, str]] = field(default_factory=list)  # (path, sentence)
    unplaced: list[tuple[str, str]] = field(default_factory=list)  # (path, sentence), printed
    invalid: list[str] = field(default_factory=list)  # "path:line: reason", skipped
    # (path, field, catalogue value, checkout value): changed on both sides since the last
    # import; the catalogue's value was kept.
    conflicts: list[tuple[str, str, str, str]] = field(default_factory=list)
    dry_run: bool = False

    def count(self, outcome: str) -> int:
        return sum(1 for _, o, _ in self.files if o == outcome)

    @property
    def changed(self) -> int:
        return sum(self.count(o) for o in ("created", "updated", "removed"))

    def summary(self) -> str:
        c = Counter(o for _, o, _ in self.files)
        text = (
            f"{self.repository}:{self.branch}: branch {self.branch_outcome}; recipes: "
            f"{c['created']} created, {c['updated']} updated, {c['unchanged']} unchanged, "
            f"{c['removed']} removed"
        )
        if c["kept"]:
            text += f", {c['kept']} kept"
        if self.invalid:
            text += f", {len(self.invalid)} skipped (not recipes)"
        if self.unplaced:
            text += f"; {len(self.unplaced)} values not placed (listed above; the audit lists them)"
        text += f"; {len(self.findings)} findings"
        if self.conflicts:
            text += f"; {len(self.conflicts)} conflicts (the catalogue's values kept)"
        return text


# ---------------------------------------------------------------- reading


def checkout_sources(path) -> tuple[list[Source], bytes | None]:
    """The recipes under PATH/.flox/pkgs and BUILD_MATRIX.md's bytes (None when absent).

    Only regular files inside the checkout are read: a symbolic link (file or folder) is
    refused, never followed; a file's size is checked on its open descriptor before a bounded
    read; a path that is not a safe name is refused unread."""
    from pathlib import Path

    root = Path(path).expanduser()
    if not root.is_dir():
        raise ImportFailure(f"{root} is not a directory; pass the root of a build-repo checkout.")
    for part in (".flox", PKGS_DIR):
        if (root / part).is_symlink():
            raise ImportFailure(
                f"{root / part} is a symbolic link; import reads only the checkout's own "
                f"{PKGS_DIR} and never follows one."
            )
    pkgs = root / PKGS_DIR
    if not pkgs.is_dir():
        raise ImportFailure(
            f"{root} has no {PKGS_DIR} directory; pass the root of a build-repo checkout."
        )
    sources = []
    for folder, dirs, files in os.walk(pkgs, followlinks=False):
        dirs.sort()
        for name in sorted(files) + [d for d in dirs if (Path(folder) / d).is_symlink()]:
            full = Path(folder) / name
            relative = full.relative_to(root).as_posix()
            if name.endswith(".nix") or full.is_symlink():
                sources.append(_read_source(full, relative, MAX_RECIPE_BYTES))
    sources.sort(key=lambda source: source.path)
    matrix = None
    if (root / BUILD_MATRIX).is_symlink() or (root / BUILD_MATRIX).is_file():
        found = _read_source(root / BUILD_MATRIX, BUILD_MATRIX, MAX_MATRIX_BYTES)
        if found.refused:
            sources.append(found)
        else:
            matrix = found.data
    return sources, matrix


def _read_source(full, relative: str, limit: int) -> Source:
    """One file, read only if it is a regular file of at most `limit` bytes."""
    try:
        fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Source(relative, b"", LINK_REFUSED)
        return Source(relative, b"", f"cannot be read ({exc.strerror})")
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return Source(relative, b"", "not a regular file")
        if info.st_size > limit:
            return Source(relative, b"", f"the file is over {limit // 1024} KiB; a recipe is a few")
        data = handle.read(limit + 1)
    if len(data) > limit:  # it grew while being read
        return Source(relative, b"", f"the file is over {limit // 1024} KiB; a recipe is a few")
    return Source(relative, data)


def _read_all(sources: list[Source]):
    """(path, facts) for each recipe, and "path:line: reason" for each file that is not one."""
    parsed, invalid, by_pname = [], [], {}
    for source in sources:
        shown = naming.shown_path(source.path)
        problem = source.refused or naming.recipe_path_problem(source.path)
        if problem:
            invalid.append(f"{shown}:1: {problem}")
            continue
        try:
            text = source.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = source.data.count(b"\n", 0, exc.start) + 1
            invalid.append(f"{shown}:{line}: not UTF-8 text")
            continue
        try:
            facts = read_recipe(text)
        except RecipeError as exc:
            invalid.append(f"{shown}:{exc.line}: {exc.reason}")
            continue
        unsafe = naming.unsafe_name_reason(facts.pname)
        if unsafe:
            line = facts.spans["pname"].line if "pname" in facts.spans else 1
            invalid.append(
                f"{shown}:{line}: the pname is not a safe name (letters, digits, '.', '_' and "
                "'-', starting with a letter or digit, at most 120 characters)"
            )
            continue
        if facts.pname in by_pname:
            invalid.append(
                f"{source.path}:{facts.spans['pname'].line if 'pname' in facts.spans else 1}: "
                f'pname "{facts.pname}" is also the pname of {by_pname[facts.pname]}'
            )
            continue
        by_pname[facts.pname] = source.path
        parsed.append((source.path, text, facts))
    return parsed, invalid


# ---------------------------------------------------------------- the branch


def _tables() -> Tables:
    isas = list(CpuIsa.objects.values_list("slug", "compiler_flags"))
    return Tables(
        archs=frozenset(GpuArchitecture.objects.values_list("sm", flat=True)),
        isa_flags={tuple(flags): slug for slug, flags in isas},
        isas=frozenset(slug for slug, _ in isas),
    )


def _most_common(values) -> str:
    counted = Counter(v for v in values if v)
    return counted.most_common(1)[0][0] if counted else ""


def _matrix_facts(branch_name: str, matrix: bytes) -> dict:
    """The facts table's values, checked as the admin checks a branch (ValidationError)."""
    values = build_matrix.parse_branch_facts(matrix.decode("utf-8"))
    fields = {k: v for k, v in values.items() if k not in ("repository", "name", "pytorch_branch")}
    trial = Branch(repository=vocabulary.PYTORCH_REPOSITORY, name=branch_name, **fields)
    trial.full_clean(exclude=["repository", "name", "pytorch_branch"], validate_unique=False)
    return values


def _new_branch_values(branch_name: str, parsed, matrix: bytes | None, inferred: list[str]):
    """A branch the catalogue lacks: its facts table if the checkout has one (the catalogue's
    own export writes it), else versions read from the recipes and the branch name."""
    if matrix is not None:
        try:
            values = _matrix_facts(branch_name, matrix)
        except (ParseError, UnicodeDecodeError, ValidationError) as exc:
            reason = (
                "; ".join(f"{k}: {v[0]}" for k, v in exc.message_dict.items())
                if isinstance(exc, ValidationError)
                else str(exc)
            )
            inferred.append(f"{BUILD_MATRIX} was refused ({reason.rstrip('.')})")
        else:
            values.pop("repository", None)
            values.pop("name", None)
            dep = values.pop("pytorch_branch", "")
            values["pytorch_branch"] = (
                Branch.objects.filter(repository=vocabulary.PYTORCH_REPOSITORY, name=dep).first()
                if dep
                else None
            )
            inferred.append(f"branch facts from {BUILD_MATRIX}")
            return values
    facts = [f for _, _, f in parsed]
    named = [naming.parse_lenient(PurePosixPath(p).stem) for p, _, _ in parsed]
    release = re.search(r"pytorch-(\d+\.\d+)", branch_name)
    # Only a value a Branch can hold (a version of at most 20 characters).
    pytorch = _most_common(
        v for f in facts if naming.version_key(v := f.torch_version_override) and len(v) <= 20
    ) or (release.group(1) if release else "")
    python = re.search(r"python(\d)(\d{1,2})", branch_name)
    python_version = (
        f"{python.group(1)}.{python.group(2)}"
        if python
        else _most_common(n.python_version for n in named if n)
    )
    inferred.append(
        f"PyTorch {pytorch or 'unknown (set it in the admin)'}, "
        f"Python {python_version or 'unknown'} from the recipes and the branch name"
    )
    return {
        "pytorch_version": pytorch,
        "python_version": python_version,
        "nixpkgs_pin": _most_common(f.nixpkgs_pin for f in facts),
        "cuda_versions": [],
        "purpose": "Imported from the build repository.",
    }


def _branch(report: ImportReport, parsed, matrix, source_commit: str) -> Branch:
    branch = Branch.objects.filter(repository=report.repository, name=report.branch).first()
    if branch is None:
        values = _new_branch_values(report.branch, parsed, matrix, report.inferred)
        branch = Branch(repository=report.repository, name=report.branch, **values)
        report.branch_outcome = "created"
    else:
        report.branch_outcome = "unchanged"
    if branch.pk is not None and (
        branch.imported_at is None or (source_commit and branch.source_commit != source_commit)
    ):
        report.branch_outcome = "updated"
    branch.source_commit = source_commit or branch.source_commit
    if report.branch_outcome != "unchanged":
        branch.imported_at = timezone.now()
        branch.save()
    return branch


def _finish_branch(branch: Branch, report: ImportReport) -> None:
    """The branch lists every CUDA version its variants build (newest first); versions it
    already states, such as "12.9.1", stand for their MAJOR.MINOR."""
    built = {v for v in branch.variants.values_list("cuda_version", flat=True) if v}
    missing = built - set(branch.cuda_major_minors)
    if missing:
        branch.cuda_versions = sorted(
            [*branch.cuda_versions, *missing], key=naming.version_key, reverse=True
        )
    if (missing or report.changed) and report.branch_outcome == "unchanged":
        report.branch_outcome = "updated"
    if report.branch_outcome != "unchanged":
        branch.imported_at = timezone.now()
        branch.save()


# ---------------------------------------------------------------- the variants


def _resolve_dependency(dep: Dependency, branch: Branch, imported: dict[str, Variant]):
    """The PyTorch variant a companion is built on, or None (inline, or not in the catalogue)."""
    if dep.kind == "sibling":
        found = imported.get(dep.sibling)
        if found is None:
            found = Variant.objects.filter(
                branch=branch, recipe_path=f"{PKGS_DIR}/{dep.sibling}.nix"
            ).first()
        return found
    if dep.kind == "built-against":
        repo, name, pname = dep.built_against
        return Variant.objects.filter(
            branch__repository=repo, branch__name=name, pname=pname, library="pytorch"
        ).first()
    if dep.kind == "remote":
        commit = re.search(r"/archive/([0-9a-f]{7,40})\.tar", dep.url)
        candidates = Variant.objects.filter(
            branch__repository=vocabulary.PYTORCH_REPOSITORY, recipe_path=dep.path
        )
        if commit:
            for variant in candidates.select_related("branch"):
                if variant.branch.source_commit.startswith(commit.group(1)):
                    return variant
    return None


def _values(interpreted, text: str, path: str, archs: dict, isas: dict) -> dict:
    values = dict(interpreted.values)
    values["gpu_arch"] = archs.get(values["gpu_arch"])
    values["cpu_isa"] = isas.get(values["cpu_isa"])
    values.update(origin="imported", recipe_path=path, recipe_text=text)
    return values


# Set by the importer itself, never from the recipe: not checked against the model here.
_NOT_FROM_RECIPE = ("id", "branch", "gpu_arch", "cpu_isa", "depends_on", "status", "origin")


def _fit(values: dict, unplaced: list[str]) -> str:
    """Clears each optional field whose value the model refuses (too long, out of range, …)
    and says so in `unplaced`; returns why the recipe cannot be a variant at all ("" when it
    can). An empty required field (an unknown Python version) is kept: pages show it unknown."""
    trial = Variant(**{k: v for k, v in values.items() if k not in _NOT_FROM_RECIPE})
    try:
        trial.clean_fields(exclude=_NOT_FROM_RECIPE)
    except ValidationError as exc:
        for name, messages in sorted(exc.message_dict.items()):
            model_field = Variant._meta.get_field(name)
            value = values[name]
            if model_field.blank:
                values[name] = None if model_field.null else type(value)()
                unplaced.append(
                    f"Its {model_field.verbose_name} {_shown(value)} was not imported: "
                    f"{messages[0]}"
                )
            elif value not in ("", None):
                return f"its {model_field.verbose_name} {_shown(value)} is refused: {messages[0]}"
    return ""


def _shown(value) -> str:
    text = ascii(value) if isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:60] + "…"


# Fields with no place in a recipe belong to the catalogue: import sets them on a new variant
# (from the recipe's header comments) and never overwrites them afterwards.
CATALOGUE_OWNED = ("use_case", "notes", "status")
# The record of what was imported: always the checkout's, the base of the next three-way merge.
IMPORT_RECORD = ("origin", "recipe_path", "recipe_text", "recipe_facts", "depends_on")


def _merge_shown(value) -> str:
    if isinstance(value, GpuArchitecture):
        return value.sm
    if isinstance(value, CpuIsa):
        return value.slug
    if value in ("", None, [], {}):
        return "(none)"
    return str(value)


def _base_values(variant: Variant, tables: Tables, defaults, archs, isas) -> dict | None:
    """The field values the text last imported for this variant gave (None: nothing imported,
    or the stored text no longer reads)."""
    if variant.origin != "imported" or not variant.recipe_text:
        return None
    try:
        facts = read_recipe(variant.recipe_text)
    except RecipeError:
        return None
    stem = PurePosixPath(variant.recipe_path).stem
    interpreted = interpret(facts, stem, tables, defaults)
    values = _values(interpreted, variant.recipe_text, variant.recipe_path, archs, isas)
    # Fitted as the checkout's values are, so an unchanged value compares equal.
    return None if _fit(values, []) else values


def merge_values(variant: Variant, theirs: dict, base: dict | None, path: str, report) -> dict:
    """The values to store on an existing variant: a three-way merge of the catalogue's values
    (ours), the checkout's (theirs) and those of the text last imported (base). Unchanged in
    the checkout: ours stay; changed only in the checkout: theirs; changed on both sides to
    different values: ours stay and the conflict is reported."""
    merged = {}
    for name, value in theirs.items():
        if name in CATALOGUE_OWNED:
            continue
        if base is None or name in IMPORT_RECORD:
            merged[name] = value
            continue
        ours = getattr(variant, name)
        if value == base[name] or ours == value:
            continue  # the checkout did not change it, or both sides agree
        if ours == base[name]:
            merged[name] = value
        else:
            report.conflicts.append((path, name, _merge_shown(ours), _merge_shown(value)))
    return merged


def recipe_values(text: str, path: str, branch: Branch) -> tuple[dict, list[str]]:
    """A recipe's field values (as import would store them on a new variant, depends_on left
    to the caller) and its findings. Raises RecipeError when the text is not a recipe."""
    facts = read_recipe(text)
    defaults = BranchDefaults(
        branch.python_version, branch.cuda_versions[0] if branch.cuda_versions else ""
    )
    archs = {a.sm: a for a in GpuArchitecture.objects.all()}
    isas = {i.slug: i for i in CpuIsa.objects.all()}
    interpreted = interpret(facts, PurePosixPath(path).stem, _tables(), defaults)
    return _values(interpreted, text, path, archs, isas), interpreted.findings


def _apply_variants(report: ImportReport, branch: Branch, parsed) -> None:
    tables = _tables()
    archs = {a.sm: a for a in GpuArchitecture.objects.all()}
    isas = {i.slug: i for i in CpuIsa.objects.all()}
    existing = list(
        Variant.objects.filter(branch=branch).select_related("gpu_arch", "cpu_isa", "depends_on")
    )
    by_path = {v.recipe_path: v for v in existing if v.recipe_path}
    by_pname = {v.pname: v for v in existing}
    defaults = BranchDefaults(
        branch.python_version, branch.cuda_versions[0] if branch.cuda_versions else ""
    )
    imported: dict[str, Variant] = {}  # file stem -> variant
    seen = set()
    # PyTorch first: companions point at it.
    for path, text, facts in sorted(
        parsed, key=lambda item: (item[2].library != "pytorch", item[0])
    ):
        stem = PurePosixPath(path).stem
        interpreted = interpret(facts, stem, tables, defaults)
        values = _values(interpreted, text, path, archs, isas)
        refused = _fit(values, interpreted.unplaced)
        if refused:
            report.invalid.append(f"{path}:1: {refused}")
            continue
        values["depends_on"] = _resolve_dependency(interpreted.dependency, branch, imported)
        # The row with this pname, else the one from this file (its pname changed); never one
        # another file of this import already claimed.
        candidates = (by_pname.get(facts.pname), by_path.get(path))
        variant = next((v for v in candidates if v is not None and v.pk not in seen), None)
        if variant is None:
            variant, outcome = Variant(branch=branch, status="recipe", **values), "created"
        else:
            # An unchanged file is its own base (the common case: no second parse).
            same = variant.origin == "imported" and variant.recipe_text == text
            base = values if same else _base_values(variant, tables, defaults, archs, isas)
            values = merge_values(variant, values, base, path, report)
            outcome = "updated" if assign_changed(variant, values) else "unchanged"
        if outcome != "unchanged":
            variant.save()
        seen.add(variant.pk)
        imported[stem] = variant
        report.files.append((path, outcome, ""))
        report.findings.extend((path, sentence) for sentence in interpreted.findings)
        report.unplaced.extend((path, sentence) for sentence in interpreted.unplaced)
    _remove_missing(report, [v for v in existing if v.pk not in seen])


def _remove_missing(report: ImportReport, missing: list[Variant]) -> None:
    """Imported variants whose files are gone are removed; seeded ones are kept (no file)."""
    for variant in sorted(missing, key=lambda v: v.library == "pytorch"):
        label = variant.recipe_path or naming.recipe_path(variant.pname)
        if variant.origin != "imported":
            report.files.append((label, "kept", "seeded variant with no file in the checkout"))
            continue
        try:
            with transaction.atomic():
                variant.delete()
        except ProtectedError:
            report.files.append(
                (label, "kept", "its file is gone, but other variants depend on it")
            )
        else:
            report.files.append((label, "removed", "its file is gone"))


# ---------------------------------------------------------------- entry points


def import_sources(
    sources: list[Source],
    repository: str,
    branch_name: str,
    *,
    matrix: bytes | None = None,
    source_commit: str = "",
    skip_invalid: bool = False,
    dry_run: bool = False,
) -> ImportReport:
    """Import one branch's recipes in one transaction (rolled back on dry_run)."""
    if repository not in vocabulary.REPOSITORIES:
        raise ImportFailure(
            f"Unknown repository {repository!r}; choose one of "
            f"{', '.join(vocabulary.REPOSITORIES)}."
        )
    unsafe = naming.unsafe_name_reason(branch_name)
    if unsafe:
        raise ImportFailure(f"The branch name {unsafe[0].lower()}{unsafe[1:]}")
    if not sources:
        raise ImportFailure(
            f"{repository}:{branch_name} has no .nix files under {PKGS_DIR}; nothing was imported."
        )
    parsed, invalid = _read_all(sources)
    if invalid and not skip_invalid:
        raise ImportFailure(
            f"{len(invalid)} of {len(sources)} files in {repository}:{branch_name} are not "
            "recipes (listed above); nothing was imported (--skip-invalid imports the rest).",
            invalid,
        )
    report = ImportReport(repository, branch_name, invalid=invalid, dry_run=dry_run)
    with transaction.atomic():
        branch = _branch(report, parsed, matrix, source_commit)
        _apply_variants(report, branch, parsed)
        _finish_branch(branch, report)
        if dry_run:
            transaction.set_rollback(True)
        else:
            # The branch's audit findings and the snapshots, stored with the import itself.
            cache.store_derived()
    return report


def import_checkout(path, repository: str, branch_name: str, **options) -> ImportReport:
    sources, matrix = checkout_sources(path)
    return import_sources(sources, repository, branch_name, matrix=matrix, **options)
