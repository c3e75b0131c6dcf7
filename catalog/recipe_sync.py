"""Where exported files go and how imports are applied: the logic behind the two commands.

`export_recipes` plans every file of the selected branches, compares it with what is on disk,
and (unless dry-run / check) writes only what changed, atomically. `import_checkout` parses a
checkout and applies it in one transaction. Both raise `SyncError` with one sentence a user
can act on; the commands turn it into a CommandError.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from catalog import exporters, naming
from catalog.exporters import markdown as md
from catalog.models import Branch, Variant

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
    action: str  # created | updated | unchanged | stale | pruned


@dataclass
class ExportReport:
    outcomes: list[FileOutcome] = field(default_factory=list)

    def count(self, action) -> int:
        return sum(1 for o in self.outcomes if o.action == action)

    @property
    def written(self) -> int:
        return self.count("created") + self.count("updated")

    @property
    def differing(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.action in ("created", "updated", "stale")]

    def summary(self) -> str:
        c = Counter(o.action for o in self.outcomes)
        text = f"{c['created']} created, {c['updated']} updated, {c['unchanged']} unchanged, {c['stale']} stale"
        return text + (f", {c['pruned']} pruned" if c["pruned"] else "")


def planned_files(
    branch, variants, repo_branches, counts, libraries, read_existing
) -> dict[str, str]:
    """Relative path -> content for one branch (README merged with what exists there)."""
    files = {}
    for v in variants:
        if not libraries or v.library in libraries:
            files[naming.recipe_path(v.pname)] = exporters.render_recipe(v)
    sections = md.readme_sections(branch, repo_branches, variants, counts)
    existing = read_existing(README)
    try:
        files[README] = md.merge_sections(existing, sections, md.readme_title(branch))
    except md.MarkerError as exc:
        raise SyncError(
            f"Cannot update {README} of {branch}: {exc}; fix its markers by hand first."
        ) from exc
    files[BUILD_MATRIX] = md.build_matrix(branch, variants)
    return files


def export_recipes(targets, libraries=(), dry_run=False, check=False, prune=False) -> ExportReport:
    """targets: [(root directory, Branch)]. Compares first, then writes only what differs."""
    report = ExportReport()
    write = not (dry_run or check)
    counts = Counter(Variant.objects.values_list("branch_id", flat=True))
    repo_branches: dict[str, list[Branch]] = {}
    for b in Branch.objects.order_by("repository", "preference", "name"):
        repo_branches.setdefault(b.repository, []).append(b)
    if write:
        for root, _ in targets:
            _check_writable(Path(root))
    for root, branch in targets:
        root = Path(root)
        variants = branch_variants(branch)

        def read_existing(rel, root=root):
            path = root / rel
            return path.read_text(encoding="utf-8") if path.is_file() else None

        files = planned_files(
            branch, variants, repo_branches[branch.repository], counts, libraries, read_existing
        )
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
        known = {Path(naming.recipe_path(v.pname)).name for v in variants}
        pkgs = root / PKGS_DIR
        for path in sorted(pkgs.glob("*.nix")) if pkgs.is_dir() else []:
            if path.name not in known:
                if prune and write:
                    path.unlink()
                    report.outcomes.append(FileOutcome(path, "pruned"))
                else:
                    report.outcomes.append(FileOutcome(path, "stale"))
    return report


def checkout_target(path, repository, branch_name) -> tuple[Path, Branch]:
    root = Path(path).expanduser()
    if not root.is_dir():
        raise SyncError(
            f"{root} is not a directory; pass the path of a {repository} checkout to --into."
        )
    missing = [name for name in (".git", ".flox") if not (root / name).exists()]
    if missing:
        raise SyncError(
            f"{root} is not a build-repo checkout (no {' or '.join(missing)}); clone {repository} there first."
        )
    return root, select_branches([repository], [branch_name])[0]
