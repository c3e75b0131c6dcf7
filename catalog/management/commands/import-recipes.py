"""import-recipes: read a build repository's recipes into the catalogue.

`import-recipes PATH --repository R --branch B` reads a checkout's `.flox/pkgs`;
`import-recipes --git CLONE [--branch B …] [--repository R]` reads branches of a clone from its
git objects. Files that are not recipes are all listed (file:line: reason) and nothing is
imported, unless --skip-invalid. A variant already in the catalogue is merged three ways against
the text last imported (catalog.recipes.importing.store.merge_values): a field changed both in
the catalogue and in the checkout keeps the catalogue's value and is reported as a conflict.
Exit 0 on success; 2 when the input cannot be used; 3 when the import (or --dry-run) found
conflicts (everything else was imported).
"""

from __future__ import annotations

import logging
import sys

from django.core.management.base import BaseCommand, CommandError

from catalog import naming, vocabulary
from catalog.recipes import git_source
from catalog.recipes.importing.store import (
    BUILD_MATRIX,
    MAX_MATRIX_BYTES,
    MAX_RECIPE_BYTES,
    ImportFailure,
    ImportReport,
    Source,
    import_checkout,
    import_sources,
)

log = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Import a build repository's .flox/pkgs recipes (a checkout, or branches of a clone)."

    def add_arguments(self, parser):
        parser.add_argument("path", help="root of a checkout, or with --git the clone")
        parser.add_argument("--git", action="store_true", help="read branches from git objects")
        parser.add_argument("--repository", help=", ".join(vocabulary.REPOSITORIES))
        parser.add_argument(
            "--branch",
            action="append",
            default=[],
            help="branch name (with --git: repeatable; all branches when omitted)",
        )
        parser.add_argument(
            "--skip-invalid", action="store_true", help="import the recipes, skip other files"
        )
        parser.add_argument("--dry-run", action="store_true", help="report without saving")

    def handle(self, *args, **opts):
        repository = opts["repository"]
        if repository and repository not in vocabulary.REPOSITORIES:
            raise CommandError(
                f"Unknown repository {repository!r}; choose one of "
                f"{', '.join(vocabulary.REPOSITORIES)}.",
                returncode=2,
            )
        names = [opts["branch"]] if isinstance(opts["branch"], str) else list(opts["branch"])
        options = {"skip_invalid": opts["skip_invalid"], "dry_run": opts["dry_run"]}
        try:
            if opts["git"]:
                reports = self._from_git(opts["path"], repository, names, options)
            else:
                reports = [self._from_checkout(opts["path"], repository, names, options)]
        except ImportFailure as exc:
            log.warning("Import refused (%s %s): %s", repository, names, exc)
            for line in exc.details:
                self.stderr.write(line)
            raise CommandError(str(exc), returncode=2) from exc
        except git_source.GitError as exc:
            log.warning("Import refused (%s %s): %s", repository, names, exc)
            raise CommandError(str(exc), returncode=2) from exc
        for report in reports:
            self._print(report, opts["verbosity"])
        conflicts = sum(len(report.conflicts) for report in reports)
        if conflicts:
            raise CommandError(
                f"{conflicts} fields were changed both in the catalogue and in the checkout since "
                "the last import (listed above); the catalogue's values were kept — set the ones "
                "you want in the admin or with edit-variants.",
                returncode=3,
            )

    def _from_checkout(self, path, repository, branches, options) -> ImportReport:
        if not repository or len(branches) != 1:
            raise CommandError(
                "Name the checkout's repository and branch: --repository R --branch B "
                "(or read a clone with --git).",
                returncode=2,
            )
        return import_checkout(path, repository, branches[0], **options)

    def _from_git(self, path, repository, names, options) -> list[ImportReport]:
        repo = git_source.open_clone(path)
        repository = repository or git_source.repository_of(repo)
        if not repository:
            raise CommandError(
                f"Cannot tell which repository {repo} is from its remote URL; pass --repository.",
                returncode=2,
            )
        selected = self._safe_branches(git_source.select(repo, names), bool(names))
        reports = []
        for number, branch in enumerate(selected, start=1):
            self._progress(f"[{number}/{len(selected)}] {repository}:{branch.name} reading…")
            files, matrix, matrix_refused = git_source.read_branch(
                repo, branch.commit, MAX_RECIPE_BYTES, MAX_MATRIX_BYTES
            )
            sources = [Source(name, data, refused) for name, data, refused in files]
            if matrix_refused:
                sources.append(Source(BUILD_MATRIX, b"", matrix_refused))
            self._progress(f"[{number}/{len(selected)}] {repository}:{branch.name} importing…")
            reports.append(
                import_sources(
                    sources,
                    repository,
                    branch.name,
                    matrix=matrix,
                    source_commit=branch.commit,
                    **options,
                )
            )
        self._progress("")
        return reports

    def _safe_branches(self, selected, named: bool):
        """The branches whose names the catalogue can hold. A name with a slash (`feature/x`)
        or another character a path cannot carry is skipped with a sentence: mapping it to a
        safe name could merge it with a real branch of that name. Naming one is an error."""
        safe = []
        for branch in selected:
            unsafe = naming.unsafe_name_reason(branch.name)
            if unsafe and named:
                raise CommandError(f"The branch name {unsafe[0].lower()}{unsafe[1:]}", returncode=2)
            if unsafe:
                self.stdout.write(self.style.WARNING(f"skipped branch: {unsafe}"))
            else:
                safe.append(branch)
        if not safe:
            raise CommandError("None of the clone's branches has a safe name.", returncode=2)
        return safe

    def _progress(self, text: str) -> None:
        """A one-line status on a terminal only (redirected stderr stays clean)."""
        stream = getattr(self.stderr, "_out", sys.stderr)
        if stream.isatty():
            stream.write(f"\r\033[K{text}")
            stream.flush()

    def _print(self, report: ImportReport, verbosity: int) -> None:
        for path, outcome, detail in report.files:
            if outcome != "unchanged" or verbosity > 1:
                self.stdout.write(f"{outcome}: {path}" + (f" — {detail}" if detail else ""))
        for line in report.invalid:
            self.stdout.write(self.style.WARNING(f"skipped: {line}"))
        # What the catalogue could not place is stored empty (shown as unknown) and is never a
        # silent success: listed at every verbosity.
        for path, sentence in report.unplaced:
            self.stdout.write(self.style.WARNING(f"not placed: {path}: {sentence}"))
        if verbosity > 1:
            for path, sentence in report.findings:
                self.stdout.write(f"finding: {path}: {sentence}")
        for path, name, ours, theirs in report.conflicts:
            self.stdout.write(
                self.style.WARNING(
                    f"conflict: {path}: {name}: catalogue {ours}, checkout {theirs} "
                    "(the catalogue's value kept)"
                )
            )
        for note in report.inferred:
            self.stdout.write(f"inferred for the new branch: {note}")
        prefix = "dry run (nothing saved): " if report.dry_run else ""
        self.stdout.write(self.style.SUCCESS(prefix + report.summary()))
