"""Where exported files go and what they hold: the logic behind `export-recipes`.

`export_recipes` plans every file of the selected branches, compares it with what is on disk,
and (unless dry-run / check) writes only what changed, atomically. An imported recipe is written
as its own text, edited in place where the catalogue changed it; README.md and BUILD_MATRIX.md
change only between their markers; a file no variant claims is deleted (--prune) only when the
catalogue wrote it or it is unchanged since the branch's import. Every path is checked to stay
inside its target and never to pass through a symbolic link before anything is written; a killed
run's temporary files are removed by the next. Errors are `SyncError`, one
sentence a user can act on; the command turns it into a CommandError.
"""

from __future__ import annotations

import difflib
import errno
import hashlib
import os
import re
import stat
import subprocess
import tempfile
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from catalog import naming, vocabulary
from catalog.models import Branch, CpuIsa, Variant
from catalog.recipes import exporting
from catalog.recipes.exporting import readme
from catalog.recipes.exporting.profiles import GENERATED_NOTE
from catalog.recipes.nix.errors import EditError

README = "README.md"
BUILD_MATRIX = "BUILD_MATRIX.md"
PKGS_DIR = vocabulary.PKGS_DIR


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


def export_targets(output, repositories=(), branch_names=()) -> list[tuple[Path, Branch]]:
    """Each selected branch's tree `<output>/<repository>/<branch>/`, checked to stay inside
    `output` (the model refuses unsafe names; this holds even for rows saved around it)."""
    output = Path(output)
    targets = []
    for branch in select_branches(repositories, branch_names):
        for name in (branch.repository, branch.name):
            if naming.unsafe_name_reason(name):
                raise SyncError(
                    f"Refusing to export {branch.repository}/{branch.name!r}: {name!r} is not a "
                    f"safe path name, so its tree could leave {output}; rename it in the catalogue."
                )
        targets.append((safe_path(output, f"{branch.repository}/{branch.name}"), branch))
    return targets


# ---------------------------------------------------------------- paths inside a target


def _link_refused(path: Path) -> SyncError:
    return SyncError(
        f"{path} is a symbolic link; export never follows links inside its target, so nothing "
        "was written: replace it with a real file or directory, then export again."
    )


def safe_path(root: Path, rel: str, checked: dict[Path, Path] | None = None) -> Path:
    """`root/rel`, refused unless `rel` is relative, has no `..`, and no part of it below `root`
    is a symbolic link (lstat, so a link is never followed); its resolved folder must stay inside
    `root` as well. `root` itself is the user's choice and may be anything. `checked` (folder ->
    resolved folder) spares one export re-checking the same folders for every recipe."""
    pure = PurePosixPath(rel)
    if pure.is_absolute() or "\\" in rel or "\0" in rel or not pure.parts or ".." in pure.parts:
        raise SyncError(
            f"Refusing to write {rel!r}: the path would leave {root}; nothing was written."
        )
    checked = {} if checked is None else checked
    if root not in checked:
        checked[root] = root.resolve()
    path = root
    for part in pure.parts:
        path = path / part
        if path in checked:
            continue
        if path.is_symlink():
            raise _link_refused(path)
        if path != root / rel:  # a folder on the way: its real location must be inside root
            real = path.resolve()
            if not real.is_relative_to(checked[root]):
                raise SyncError(f"Refusing to write {path}: it resolves outside {root}.")
            checked[path] = real
    return path


def read_regular(path: Path) -> bytes | None:
    """A regular file's bytes, None when absent. Opened with O_NOFOLLOW (a link is refused, not
    read) and O_NONBLOCK (a FIFO cannot hang the export); anything but a regular file is refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _link_refused(path) from exc
        raise SyncError(f"Cannot read {path}: {exc.strerror or exc}; nothing was written.") from exc
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise SyncError(
                f"{path} is not a regular file; move it away, then export again (nothing was "
                "written)."
            )
        return fh.read()


def _read_text(path: Path) -> str | None:
    data = read_regular(path)
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SyncError(f"{path} is not UTF-8 text; fix or remove it, then export again.") from exc


# atomic_write's mkstemp names carry a marker no other tool writes, so a leftover is provably
# the catalogue's own: ".<name>.variant-catalogue-" + 8 characters of tempfile's alphabet + ".tmp".
TEMP_MARKER = "variant-catalogue-"
_LEFTOVER = re.compile(rf"\..+\.{TEMP_MARKER}[a-z0-9_]{{8}}\.tmp")


def _remove_leftovers(report, dirs, write: bool) -> None:
    """Temporary files of an export that was killed between mkstemp and the rename: only names
    carrying the catalogue's marker (TEMP_MARKER), only regular files, only in directories this
    export writes."""
    for directory in sorted(dirs):
        if not directory.is_dir() or directory.is_symlink():
            continue
        for path in sorted(directory.iterdir()):
            if not _LEFTOVER.fullmatch(path.name) or not stat.S_ISREG(path.lstat().st_mode):
                continue
            if write:
                with suppress(FileNotFoundError):
                    path.unlink()
            report.outcomes.append(FileOutcome(path, "removed" if write else "leftover"))


# ---------------------------------------------------------------- writing


def atomic_write(path: Path, data: bytes) -> None:
    """Write through a temporary file in the same directory and rename it over the target, so
    an interrupted run leaves either the old file or the new one, never half of either."""
    mode = path.lstat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{TEMP_MARKER}", suffix=".tmp")
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
    # created | updated | unchanged | stale | pruned | refused, and for an interrupted export's
    # temporary files: removed (or leftover, when previewing)
    action: str
    # created | updated: the unified diff from what the file held to what export writes
    diff: str = ""


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
        shown += [a for a in ("pruned", "refused", "removed", "leftover") if c[a]]
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
        rel = exporting.nix.export_path(v)
        try:
            plan.files[rel] = exporting.nix.export_text(v, isas)
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


def _compare(root: Path, files: dict[str, str]) -> list[tuple[Path, bytes, str]]:
    """(path, new bytes, created | updated | unchanged) per planned file; every path is checked
    (inside `root`, no link on the way, an existing file read without following a link)."""
    compared, checked = [], {}
    for rel in sorted(files):
        path = safe_path(root, rel, checked)
        data = files[rel].encode("utf-8")
        old = read_regular(path)
        action = "unchanged" if old == data else ("created" if old is None else "updated")
        compared.append((path, data, action))
    return compared


def file_diff(root: Path, path: Path, data: bytes) -> str:
    """A unified diff, paths relative to the tree, from what `path` holds to `data`."""
    rel = path.relative_to(root).as_posix()
    old = (read_regular(path) or b"").decode("utf-8", "replace")
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            data.decode("utf-8").splitlines(keepends=True),
            fromfile=f"a/{rel}" if old else "/dev/null",
            tofile=f"b/{rel}",
        )
    )


def _write_changed(report, compared, write: bool, diff_root: Path | None) -> None:
    """Write what changed (when `write`); with a `diff_root`, each change's diff is kept."""
    for path, data, action in compared:
        diff = file_diff(diff_root, path, data) if diff_root and action != "unchanged" else ""
        if write and action != "unchanged":
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(path, data)
            except OSError as exc:
                raise SyncError(
                    f"Cannot write {path}: {exc.strerror or exc}; nothing else was changed there."
                ) from exc
        report.outcomes.append(FileOutcome(path, action, diff))


def written_by_catalogue(root: Path, rel: str, source_commit: str) -> bool:
    """Whether export may delete a recipe no variant claims: the catalogue's template wrote it
    (its generated note is in the file), or it is unchanged since the commit the branch was
    imported from, so git holds it and the variant read from it was deleted in the catalogue.
    Anything else — a maintainer's own file, or one edited since — is theirs."""
    data = read_regular(root / rel)
    if data is None:
        return False
    if GENERATED_NOTE.encode() in data:
        return True
    if not source_commit or not (root / ".git").exists():
        return False
    try:
        stored = subprocess.run(
            [*SAFE_GIT, "-C", str(root), "rev-parse", "--verify", "-q", f"{source_commit}:{rel}"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return False
    return stored.returncode == 0 and stored.stdout.strip() == blob_id(data)


# git run in a checkout export writes to: no hooks and no file-system monitor from its config
# (rev-parse runs neither today; the options keep it so). Blobs are hashed here, never by
# `git hash-object`, which runs the checkout's clean filters.
SAFE_GIT = ("git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")


def blob_id(data: bytes) -> str:
    """The id git gives a file's bytes stored unfiltered (`git hash-object --no-filters`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _stale_recipes(report, root: Path, branch, known: set[str], prune: bool, write: bool) -> None:
    """Recipes no variant claims: reported, and with --prune deleted when the catalogue wrote
    them — only regular files; a link is left alone (never read, never deleted through)."""
    pkgs = root / PKGS_DIR
    for path in sorted(pkgs.glob("*.nix")) if pkgs.is_dir() else []:
        rel = f"{PKGS_DIR}/{path.name}"
        if rel in known:
            continue
        regular = stat.S_ISREG(path.lstat().st_mode)
        if not regular:
            what = "a symbolic link" if path.is_symlink() else "not a regular file"
            report.notes.append(
                f"{path} is {what}; export never deletes or follows it, so it was left alone."
            )
        if regular and prune and write and written_by_catalogue(root, rel, branch.source_commit):
            path.unlink()
            report.outcomes.append(FileOutcome(path, "pruned"))
        else:
            report.outcomes.append(FileOutcome(path, "stale"))


@dataclass
class _Checked:
    """One target after the read-only phase: what to write, and what was refused."""

    root: Path
    branch: Branch
    compared: list[tuple[Path, bytes, str]]
    plan: Plan
    known: set[str]


def _check_target(root: Path, branch, libraries, repo_branches, counts, isas, checkout) -> _Checked:
    variants = branch_variants(branch)
    safe_path(root, PKGS_DIR)  # a linked .flox or .flox/pkgs is refused before anything is read
    plan = planned_files(
        branch,
        variants,
        repo_branches[branch.repository],
        counts,
        libraries,
        lambda rel: _read_text(safe_path(root, rel)),
        isas,
        create=not checkout,
    )
    for rel in plan.refused:
        safe_path(root, rel)
    known = {exporting.nix.export_path(v) for v in variants}
    return _Checked(root, branch, _compare(root, plan.files), plan, known)


def export_recipes(
    targets, libraries=(), dry_run=False, check=False, prune=False, checkout=False, diffs=False
) -> ExportReport:
    """targets: [(root directory, Branch)]. Every target is planned, compared and checked first
    (paths inside the root, no symbolic link followed); only then is what differs written, so a
    refused path leaves every tree as it was.

    `checkout`: the targets are build-repo checkouts the catalogue did not create, so a missing
    README.md / BUILD_MATRIX.md is not created. A recipe whose changed field cannot be edited in
    place is not written (`refused`, with its sentence in `problems`). `diffs`: each created or
    updated file's outcome carries its unified diff (export-recipes --diff)."""
    report = ExportReport()
    write = not (dry_run or check)
    counts = Counter(Variant.objects.values_list("branch_id", flat=True))
    repo_branches: dict[str, list[Branch]] = {}
    for b in Branch.objects.order_by("repository", "preference", "name"):
        repo_branches.setdefault(b.repository, []).append(b)
    isas = exporting.nix.isa_table(CpuIsa.objects.all())
    if write:
        for root, _ in targets:
            _check_writable(Path(root))
    checked = [
        _check_target(Path(root), branch, libraries, repo_branches, counts, isas, checkout)
        for root, branch in targets
    ]
    for target in checked:
        root, plan = target.root, target.plan
        dirs = {root, root / PKGS_DIR} | {path.parent for path, _, _ in target.compared}
        _remove_leftovers(report, dirs, write)
        _write_changed(report, target.compared, write, root if diffs else None)
        report.outcomes += [FileOutcome(root / rel, "refused") for rel in sorted(plan.refused)]
        report.problems += [f"{root / rel}: {why}" for rel, why in sorted(plan.refused.items())]
        report.notes += [f"{root}/{note}" for note in plan.notes]
        _stale_recipes(report, root, target.branch, target.known, prune, write)
    return report


def exported_texts(variants) -> list[str]:
    """What export would write for each variant now, for pages to show: an imported recipe
    edited in place where the catalogue changed it, its stored text where such an edit is
    refused (the export names the field), else the template. One query, and only when some
    variant was imported."""
    variants = list(variants)
    if not any(v.recipe_text for v in variants):
        return [exporting.nix.render_recipe(v) for v in variants]
    isas = exporting.nix.isa_table(CpuIsa.objects.all())
    texts = []
    for variant in variants:
        try:
            texts.append(exporting.nix.export_text(variant, isas))
        except EditError:
            texts.append(variant.recipe_text)
    return texts


def export_diff(variant) -> str:
    """A unified diff of an imported variant's stored recipe against what export would write
    for it now ("" when export writes it unchanged). Raises EditError as export would."""
    isas = exporting.nix.isa_table(CpuIsa.objects.all())
    after = exporting.nix.export_text(variant, isas)
    if after == variant.recipe_text:
        return ""
    rel = exporting.nix.export_path(variant)
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
