"""add-architecture: add a GPU architecture to a branch, modelled on one it has:

    manage.py add-architecture --repository build-pytorch --branch pytorch-2.8-python312 \\
        sm70 --like sm75
    manage.py add-architecture … --isa avx512vnni --like avx512

A variant for every pairing the model has, each derived from the model's recipe text with only
the GPU target lines (for an ISA: cpuFlags and passthru.cpuISA), the name and the comments naming
them changed; `export-recipes --into`
then writes the new files. Exit 0 when added, 2 when refused (nothing was written).
"""

from django.core.management.base import BaseCommand, CommandError

from catalog import vocabulary
from catalog.recipes.maintain import MaintainRefused, add_architecture, add_isa


class Command(BaseCommand):
    help = "Add a GPU architecture to a branch: one variant per pairing of the --like one."

    def add_arguments(self, parser):
        parser.add_argument("--repository", required=True, help=", ".join(vocabulary.REPOSITORIES))
        parser.add_argument("--branch", required=True)
        parser.add_argument("sm", nargs="?", help="the architecture to add, e.g. sm103")
        parser.add_argument("--isa", help="add this CPU ISA instead, e.g. avx512vnni")
        parser.add_argument(
            "--like", required=True, help="the architecture (or with --isa the ISA) to model it on"
        )
        parser.add_argument("--dry-run", action="store_true", help="report; save nothing")

    def handle(self, *args, **opts):
        if bool(opts["sm"]) == bool(opts["isa"]):
            raise CommandError("Name an architecture (SM) or --isa ISA, not both.", returncode=2)
        job = add_isa if opts["isa"] else add_architecture
        try:
            report = job(
                opts["repository"],
                opts["branch"],
                opts["isa"] or opts["sm"],
                opts["like"],
                dry_run=opts["dry_run"],
            )
        except MaintainRefused as exc:
            raise CommandError(str(exc), returncode=2) from exc
        for path, model in report.files:
            self.stdout.write(f"added: {path} (from {model})")
        prefix = "dry run (nothing saved): " if report.dry_run else ""
        self.stdout.write(
            self.style.SUCCESS(
                f"{prefix}{report.repository}:{report.branch}: {len(report.files)} variants added; "
                "export-recipes --into writes their files"
            )
        )
