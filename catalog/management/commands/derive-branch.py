"""derive-branch: start a release branch from another one:

    manage.py derive-branch --repository build-pytorch --branch pytorch-2.8-python312 \\
        pytorch-2.9-python313 --set pytorch_version=2.9 --set python_version=3.13 \\
        --pin 12.8=<nixpkgs commit> --drop-architecture sm61

Each recipe of the new branch is the source's text with its name, Python package set and pin
edited in place (and the comments naming them); `export-recipes --into` on a checkout of the new
git branch writes them. Exit 0 when derived, 2 when refused (nothing was written).
"""

from django.core.management.base import BaseCommand, CommandError

from catalog import vocabulary
from catalog.recipes.maintain import MaintainRefused, derive_branch


def _pairs(pairs: list[str], option: str) -> dict[str, str]:
    parsed = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or key in parsed:
            raise CommandError(
                f"{option} {pair!r}: give each as KEY=VALUE, each key once.", returncode=2
            )
        parsed[key] = value
    return parsed


class Command(BaseCommand):
    help = "Derive a new branch from another: the source's recipe texts edited in place."

    def add_arguments(self, parser):
        parser.add_argument("--repository", required=True, help=", ".join(vocabulary.REPOSITORIES))
        parser.add_argument("--branch", required=True, help="the branch to derive from")
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
        parser.add_argument("--dry-run", action="store_true", help="report; save nothing")

    def handle(self, *args, **opts):
        try:
            report = derive_branch(
                opts["repository"],
                opts["branch"],
                opts["new"],
                _pairs(opts["assign"], "--set"),
                pins=_pairs(opts["pin"], "--pin"),
                drop=opts["drop"],
                dry_run=opts["dry_run"],
            )
        except MaintainRefused as exc:
            raise CommandError(str(exc), returncode=2) from exc
        if opts["verbosity"] > 1:
            for path, source in report.files:
                self.stdout.write(f"derived: {path} (from {source})")
        prefix = "dry run (nothing saved): " if report.dry_run else ""
        self.stdout.write(
            self.style.SUCCESS(
                f"{prefix}{report.repository}:{report.branch} from {report.source}: "
                f"{len(report.files)} variants, {report.dropped} dropped; "
                "export-recipes --into a checkout of the new branch writes them"
            )
        )
