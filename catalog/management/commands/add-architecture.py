"""add-architecture: add a GPU architecture to a branch, modelled on one it has:

    manage.py add-architecture --repository build-pytorch --branch pytorch-2.8-python312 \\
        sm70 --like sm75
    manage.py add-architecture … --isa avx512vnni --like avx512

A variant for every pairing the model has, each derived from the model's recipe text with only
the GPU target lines (for an ISA: cpuFlags and passthru.cpuISA), the name and the comments and
descriptions naming them changed; `export-recipes --into` then writes the new files (-v 2 prints
each one's diff against its model). Exit 0 when added, 2 when refused (nothing was written).
"""

from django.core.management.base import CommandError

from catalog.management.jobs import JobCommand
from catalog.recipes.maintain import add_architecture, add_isa


class Command(JobCommand):
    help = "Add a GPU architecture to a branch: one variant per pairing of the --like one."
    file_line = "added: {path} (from {model})"

    def add_job_arguments(self, parser):
        parser.add_argument("sm", nargs="?", help="the architecture to add, e.g. sm103")
        parser.add_argument("--isa", help="add this CPU ISA instead, e.g. avx512vnni")
        parser.add_argument(
            "--like", required=True, help="the architecture (or with --isa the ISA) to model it on"
        )

    def run_job(self, opts):
        if bool(opts["sm"]) == bool(opts["isa"]):
            raise CommandError("Name an architecture (SM) or --isa ISA, not both.", returncode=2)
        job = add_isa if opts["isa"] else add_architecture
        return job(
            opts["repository"],
            opts["branch"],
            opts["isa"] or opts["sm"],
            opts["like"],
            dry_run=opts["dry_run"],
        )
