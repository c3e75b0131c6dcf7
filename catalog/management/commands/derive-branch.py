"""derive-branch: start a release branch from another one:

    manage.py derive-branch --repository build-pytorch --branch pytorch-2.8-python312 \\
        pytorch-2.9-python313 --set pytorch_version=2.9 --set python_version=3.13 \\
        --pin 12.8=<nixpkgs commit> --drop-architecture sm61

Each recipe of the new branch is the source's text with its name, Python package set and pin
edited in place (and the comments and descriptions naming them); `export-recipes --into` on a
checkout of the new git branch writes them. Exit 0 when derived, 2 when refused (nothing was
written).
"""

from catalog.management.jobs import JobCommand
from catalog.recipes.maintain import derive_branch, parse_pairs


class Command(JobCommand):
    help = "Derive a new branch from another: the source's recipe texts edited in place."
    branch_help = "the branch to derive from"
    file_line = "derived: {path} (from {model})"
    files_at = 2

    def add_job_arguments(self, parser):
        parser.add_argument("new", help="the new branch's name")
        parser.add_argument(
            "--set", action="append", default=[], dest="assign", metavar="FIELD=VALUE"
        )
        parser.add_argument(
            "--pin",
            action="append",
            default=[],
            metavar="CUDA=COMMIT",
            help="the nixpkgs commit of the recipes of one CUDA version (repeatable)",
        )
        parser.add_argument(
            "--drop-architecture", action="append", default=[], metavar="SM", dest="drop"
        )

    def run_job(self, opts):
        return derive_branch(
            opts["repository"],
            opts["branch"],
            opts["new"],
            parse_pairs(opts["assign"], "--set"),
            pins=parse_pairs(opts["pin"], "--pin"),
            drop=opts["drop"],
            dry_run=opts["dry_run"],
        )
