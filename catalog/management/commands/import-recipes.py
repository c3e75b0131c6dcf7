"""Read a build-repo checkout's recipes (and BUILD_MATRIX.md facts) into the catalogue.

One transaction: a file that cannot be parsed aborts everything (exit 2 with file, line and
reason). Recipes that break the naming rule or validation are reported as rejected and not
saved; exit code 0 when every recipe was imported, 1 when some were rejected.
"""

import sys

from django.core.management.base import BaseCommand, CommandError

from catalog import recipe_sync


class Command(BaseCommand):
    help = "Import PATH/.flox/pkgs/*.nix into the catalogue as the variants of one branch."

    def add_arguments(self, parser):
        parser.add_argument("path", help="root of a build-repo checkout")
        parser.add_argument(
            "--repository",
            required=True,
            choices=["build-pytorch", "build-torchvision", "build-torchaudio"],
        )
        parser.add_argument("--branch", required=True)
        parser.add_argument("--dry-run", action="store_true", help="report without saving")

    def handle(self, *args, **opts):
        try:
            report = recipe_sync.import_checkout(
                opts["path"], opts["repository"], opts["branch"], dry_run=opts["dry_run"]
            )
        except recipe_sync.SyncError as exc:
            raise CommandError(str(exc), returncode=2) from exc
        for name, outcome, detail in report.lines:
            line = f"{outcome}: {name}" + (f" — {detail}" if detail else "")
            if outcome == "rejected":
                self.stdout.write(self.style.ERROR(line))
            elif outcome != "unchanged" or opts["verbosity"] > 1:
                self.stdout.write(line)
        prefix = "dry run (nothing saved): " if opts["dry_run"] else ""
        self.stdout.write(self.style.SUCCESS(prefix + report.summary()))
        if report.count("rejected"):
            self.stderr.write(
                f"{report.count('rejected')} recipes differ from the naming rule or validation; fix them and import again."
            )
            sys.exit(1)
