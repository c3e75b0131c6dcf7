"""drop-architecture: remove a branch's variants of one GPU architecture, companions first.

Their files become stale: `export-recipes --into … --prune` deletes them. Exit 0 when dropped,
2 when refused (nothing was removed).
"""

from django.core.management.base import BaseCommand, CommandError

from catalog import vocabulary
from catalog.recipes.maintain import MaintainRefused, drop_architecture


class Command(BaseCommand):
    help = "Remove a branch's variants of one GPU architecture (their files become stale)."

    def add_arguments(self, parser):
        parser.add_argument("--repository", required=True, help=", ".join(vocabulary.REPOSITORIES))
        parser.add_argument("--branch", required=True)
        parser.add_argument("sm", help="the architecture to drop, e.g. sm61")
        parser.add_argument("--dry-run", action="store_true", help="report; save nothing")

    def handle(self, *args, **opts):
        try:
            report = drop_architecture(
                opts["repository"], opts["branch"], opts["sm"], dry_run=opts["dry_run"]
            )
        except MaintainRefused as exc:
            raise CommandError(str(exc), returncode=2) from exc
        for path, _ in report.files:
            self.stdout.write(f"dropped: {path} (stale: export-recipes --prune deletes it)")
        prefix = "dry run (nothing saved): " if report.dry_run else ""
        self.stdout.write(
            self.style.SUCCESS(
                f"{prefix}{report.repository}:{report.branch}: {len(report.files)} variants dropped"
            )
        )
