"""Where exported files go and what they hold: the logic behind `export-recipes`.

`export_recipes` plans every file of the selected branches, compares it with what is on disk,
and (unless dry-run / check) writes only what changed, atomically. An imported recipe is written
as its own text, edited in place where the catalogue changed it; README.md and BUILD_MATRIX.md
change only between their markers; a file no variant claims is deleted (--prune) only when the
catalogue wrote it or it is unchanged since the branch's import. Errors are `SyncError`, one
sentence a user can act on; the command turns it into a CommandError.
"""

from __future__ import annotations

import difflib
import os
import subprocess
import tempfile
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from catalog import exporters
from catalog.exporters import readme
from catalog.exporters.profiles import GENERATED_NOTE
from catalog.models import Branch, CpuIsa, Variant
from catalog.nix.errors import EditError

README = "README.md"
BUILD_MATRIX = "BUILD_MATRIX.md"
PKGS_DIR = ".flox/pkgs"


class SyncError(Exception):
    """Input the commands cannot act on; the message is one actionable sentence."""


# ---------------------------------------------------------------- selection


def select_branches(repositories=(), branch_names=()) -> list[Branch]:
    qs = Branch.objects.select_related("pytorch_branch").order_by(
        "repository", "preference", "name"
    )
    if repositories:
        known = {r for r, _ in Branch._meta.get_field("repository").choices}
        unknown = sorted(set(repositories) - known)
        if unknown:
            raise SyncError(
                f"Unknown repository {unknown[0]!r}; choose one of {', '.join(sorted(known))}."
            )
        qs = qs.filter(repository__in=repositories)
    branches = list(qs)
    if branch_names:
        names = {b.name for b in branches}
        unknown = sorted(set(branch_names) - names)
        if unknown:
            scope = f" in {', '.join(repositories)}" if repositories else ""
            raise SyncError(
                f"Unknown branch {unknown[0]!r}{scope}; known branches: {', '.join(sorted(names))}."
            )
        branches = [b for b in branches if b.name in set(branch_names)]
    if not branches:
        raise SyncError("No branch matches these filters; check --repository and --branch.")
    return branches


def branch_variants(branch) -> list[Variant]:
    return list(
        Variant.objects.filter(branch=branch)
        .select_related("branch", "gpu_arch", "cpu_isa", "depends_on__branch")
        .order_by("pname")
    )


# ---------------------------------------------------------------- writing


def atomic_write(path: Path, data: bytes) -> None:
    """Write through a temporary file in the same directory and rename it over the target, so
    an interrupted run leaves either the old file or the new one, never half of either."""
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _check_writable(root: Path) -> None:
    probe = root
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise SyncError(
            f"Cannot write to {root}: {probe} is a file, not a directory; choose another target."
        )
    for existing in (probe, root / PKGS_DIR):
        if existing.exists() and not os.access(existing, os.W_OK):
            raise SyncError(
                f"Cannot write to {existing}: permission denied; choose a writable target."
            )


@dataclass
class FileOutcome:
    path: Path
    action: str  # created | updated | unchanged | stale | pruned | refused


@dataclass
class ExportReport:
    outcomes: list[FileOutcome] = field(default_factory=list)
    # One sentence per file that could not be written (an edit that cannot be made in place).
    problems: list[str] = field(default_factory=list)
    # Documents left alone because they have no markers, with the marker lines to paste.
    notes: list[str] = field(default_factory=list)

    def count(self, action) -> int:
        return sum(1 for o in self.outcomes if o.action == action)

    @property
    def written(self) -> int:
        return self.count("created") + self.count("updated")

    @property
    def differing(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.action in ("created", "updated")]

    def summary(self) -> str:
        c = Counter(o.action for o in self.outcomes)
        shown = ["created", "updated", "unchanged", "stale"]
        shown += [a for a in ("pruned", "refused") if c[a]]
        return ", ".join(f"{c[a]} {a}" for a in shown)


@dataclass
class Plan:
    """One branch's files: relative path -> content, and what could not be planned."""

    files: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)  # relative path -> why, a sentence
    notes: list[str] = field(default_factory=list)


def _plan_recipes(plan: Plan, variants, libraries, isas) -> None:
    for v in variants:
        if libraries and v.library not in libraries:
            continue
        rel = exporters.nix.export_path(v)
        try:
            plan.files[rel] = exporters.nix.export_text(v, isas)
        except EditError as exc:
            plan.refused[rel] = (
                f"the catalogue changed {exc.field}, which cannot be edited in place "
                f"({exc.reason}); edit {exc.field} in that file by hand, or set it back in the "
                "catalogue. The file was not written."
            )


def _plan_document(plan: Plan, rel, sections, title, read_existing, create: bool) -> None:
    """Fill the marked sections of an existing document; create it only where the catalogue
    makes the tree (`create`). A document without markers is left alone, with a note."""
    existing = read_existing(rel)
    if existing is None and not create:
        plan.notes.append(
            f"{rel} does not exist, so it was not created; to have export maintain its "
            f"sections, create it with these marker lines where they belong:\n"
            + readme.marker_lines(sections)
        )
        return
    try:
        if existing is not None and not readme.marked_sections(existing):
            plan.notes.append(
                f"{rel} has no generated-section markers, so it was left alone; to have export "
                "fill a section, paste its marker lines where it belongs:\n"
                + readme.marker_lines(sections)
            )
            return
        plan.files[rel] = readme.merge_sections(existing, sections, title)
    except readme.MarkerError as exc:
        raise SyncError(f"Cannot update {rel}: {exc}; fix its markers by hand first.") from exc


def planned_files(
    branch, variants, repo_branches, counts, libraries, read_existing, isas=(), create=True
) -> Plan:
    """One branch's recipes, README sections and BUILD_MATRIX.md (see `_plan_document`)."""
    plan = Plan()
    _plan_recipes(plan, variants, libraries, isas)
    sections = readme.readme_sections(branch, repo_branches, variants, counts)
    _plan_document(plan, README, sections, readme.readme_title(branch), read_existing, create)
    _plan_document(
        plan,
        BUILD_MATRIX,
        readme.build_matrix_sections(branch, variants),
        readme.build_matrix_title(branch),
        read_existing,
        create,
    )
    return plan


def _write_changed(report, root: Path, files: dict[str, str], write: bool) -> None:
    for rel in sorted(files):
        path = root / rel
        data = files[rel].encode("utf-8")
        old = path.read_bytes() if path.is_file() else None
        action = "unchanged" if old == data else ("created" if old is None else "updated")
        if write and action != "unchanged":
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(path, data)
            except OSError as exc:
                raise SyncError(
                    f"Cannot write {path}: {exc.strerror or exc}; nothing else was changed there."
                ) from exc
        report.outcomes.append(FileOutcome(path, action))


def written_by_catalogue(root: Path, rel: str, source_commit: str) -> bool:
    """Whether export may delete a recipe no variant claims: the catalogue's template wrote it
    (its generated note is in the file), or it is unchanged since the commit the branch was
    imported from, so git holds it and the variant read from it was deleted in the catalogue.
    Anything else — a maintainer's own file, or one edited since — is theirs."""
    path = root / rel
    if GENERATED_NOTE.encode() in path.read_bytes():
        return True
    if not source_commit or not (root / ".git").exists():
        return False
    git = ["git", "-C", str(root)]
    try:
        stored = subprocess.run(
            [*git, "rev-parse", "--verify", "-q", f"{source_commit}:{rel}"],
            capture_output=True,
            text=True,
            check=False,
        )
        current = subprocess.run(
            [*git, "hash-object", "--", rel], capture_output=True, text=True, check=False
        )
    except OSError:
        return False
    return stored.returncode == 0 and stored.stdout.strip() == current.stdout.strip()


def _stale_recipes(report, root: Path, branch, known: set[str], prune: bool, write: bool) -> None:
    pkgs = root / PKGS_DIR
    for path in sorted(pkgs.glob("*.nix")) if pkgs.is_dir() else []:
        rel = f"{PKGS_DIR}/{path.name}"
        if rel in known:
            continue
        if prune and write and written_by_catalogue(root, rel, branch.source_commit):
            path.unlink()
            report.outcomes.append(FileOutcome(path, "pruned"))
        else:
            report.outcomes.append(FileOutcome(path, "stale"))


def export_recipes(
    targets, libraries=(), dry_run=False, check=False, prune=False, checkout=False
) -> ExportReport:
    """targets: [(root directory, Branch)]. Compares first, then writes only what differs.

    `checkout`: the targets are build-repo checkouts the catalogue did not create, so a missing
    README.md / BUILD_MATRIX.md is not created. A recipe whose changed field cannot be edited in
    place is not written (`refused`, with its sentence in `problems`)."""
    report = ExportReport()
    write = not (dry_run or check)
    counts = Counter(Variant.objects.values_list("branch_id", flat=True))
    repo_branches: dict[str, list[Branch]] = {}
    for b in Branch.objects.order_by("repository", "preference", "name"):
        repo_branches.setdefault(b.repository, []).append(b)
    isas = exporters.nix.isa_table(CpuIsa.objects.all())
    if write:
        for root, _ in targets:
            _check_writable(Path(root))
    for root, branch in targets:
        root = Path(root)
        variants = branch_variants(branch)

        def read_existing(rel, root=root):
            path = root / rel
            return path.read_text(encoding="utf-8") if path.is_file() else None

        plan = planned_files(
            branch,
            variants,
            repo_branches[branch.repository],
            counts,
            libraries,
            read_existing,
            isas,
            create=not checkout,
        )
        _write_changed(report, root, plan.files, write)
        report.outcomes += [FileOutcome(root / rel, "refused") for rel in sorted(plan.refused)]
        report.problems += [f"{root / rel}: {why}" for rel, why in sorted(plan.refused.items())]
        report.notes += [f"{root}/{note}" for note in plan.notes]
        known = {exporters.nix.export_path(v) for v in variants}
        _stale_recipes(report, root, branch, known, prune, write)
    return report


def exported_texts(variants) -> list[str]:
    """What export would write for each variant now, for pages to show: an imported recipe
    edited in place where the catalogue changed it, its stored text where such an edit is
    refused (the export names the field), else the template. One query, and only when some
    variant was imported."""
    variants = list(variants)
    if not any(v.recipe_text for v in variants):
        return [exporters.nix.render_recipe(v) for v in variants]
    isas = exporters.nix.isa_table(CpuIsa.objects.all())
    texts = []
    for variant in variants:
        try:
            texts.append(exporters.nix.export_text(variant, isas))
        except EditError:
            texts.append(variant.recipe_text)
    return texts


def export_diff(variant) -> str:
    """A unified diff of an imported variant's stored recipe against what export would write
    for it now ("" when export writes it unchanged). Raises EditError as export would."""
    isas = exporters.nix.isa_table(CpuIsa.objects.all())
    after = exporters.nix.export_text(variant, isas)
    if after == variant.recipe_text:
        return ""
    rel = exporters.nix.export_path(variant)
    lines = difflib.unified_diff(
        variant.recipe_text.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{rel}",
        tofile=f"b/{rel}",
    )
    return "".join(lines)


def checkout_target(path, repository, branch_name) -> tuple[Path, Branch]:
    root = Path(path).expanduser()
    if not root.is_dir():
        raise SyncError(
            f"{root} is not a directory; pass the path of a {repository} checkout to --into."
        )
    missing = [name for name in (".git", ".flox") if not (root / name).exists()]
    if missing:
        raise SyncError(
            f"{root} is not a build-repo checkout (no {' or '.join(missing)}); "
            f"clone {repository} there first."
        )
    return root, select_branches([repository], [branch_name])[0]
