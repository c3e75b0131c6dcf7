"""The frame of the maintainer-job commands (add-architecture, drop-architecture,
derive-branch): the branch options, --dry-run, a refusal as exit 2, a line per file and, with
-v 2, the diff export-recipes will write for it."""

from abc import ABCMeta, abstractmethod

from django.core.management.base import BaseCommand, CommandError

from catalog import vocabulary
from catalog.recipes.maintain import JobReport, MaintainRefused


class JobCommand(BaseCommand, metaclass=ABCMeta):
    branch_help = "the branch to change"
    # One line per file, from its path and its model's; files_at the verbosity that shows them.
    file_line = "{path}"
    files_at = 1

    @abstractmethod
    def add_job_arguments(self, parser) -> None:
        """The job's own arguments, between --branch and --dry-run."""

    @abstractmethod
    def run_job(self, opts: dict) -> JobReport:
        """The service call; a refusal raises MaintainRefused (or CommandError)."""

    def add_arguments(self, parser):
        parser.add_argument("--repository", required=True, help=", ".join(vocabulary.REPOSITORIES))
        parser.add_argument("--branch", required=True, help=self.branch_help)
        self.add_job_arguments(parser)
        parser.add_argument("--dry-run", action="store_true", help="report; save nothing")

    def handle(self, *args, **opts):
        try:
            report = self.run_job(opts)
        except MaintainRefused as exc:
            raise CommandError(str(exc), returncode=2) from exc
        for (path, model), diff in zip(report.files, report.diffs, strict=True):
            if opts["verbosity"] >= self.files_at:
                self.stdout.write(self.file_line.format(path=path, model=model))
            if diff and opts["verbosity"] > 1:
                self.stdout.write(diff.rstrip("\n"))
        prefix = "dry run (nothing saved): " if report.dry_run else ""
        self.stdout.write(self.style.SUCCESS(prefix + report.summary))
