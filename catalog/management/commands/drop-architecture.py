"""drop-architecture: remove a branch's variants of one GPU architecture, companions first.

Their files become stale: `export-recipes --into … --prune` deletes them. Exit 0 when dropped,
2 when refused (nothing was removed).
"""

from catalog.management.jobs import JobCommand
from catalog.recipes.maintain import drop_architecture


class Command(JobCommand):
    help = "Remove a branch's variants of one GPU architecture (their files become stale)."
    file_line = "dropped: {path} (stale: export-recipes --prune deletes it)"

    def add_job_arguments(self, parser):
        parser.add_argument("sm", help="the architecture to drop, e.g. sm61")

    def run_job(self, opts):
        return drop_architecture(
            opts["repository"], opts["branch"], opts["sm"], dry_run=opts["dry_run"]
        )
