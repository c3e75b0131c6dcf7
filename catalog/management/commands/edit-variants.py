"""edit-variants: set fields on the variants of one branch that match, e.g. a pin bump:

    manage.py edit-variants --repository build-pytorch --branch pytorch-2.8-python312 \\
        --where cuda_version=12.8 --set nixpkgs_pin=<commit>

Each variant is validated as the admin validates it, and all are saved or none. It prints every
change and, for an imported recipe, the diff `export-recipes --into` will write. Exit 0 when
done (or nothing differed), 2 when refused (nothing was written).
"""

from django.core.management.base import BaseCommand, CommandError

from catalog import vocabulary
from catalog.services import EditRefused, edit_variants, parse_assignments


class Command(BaseCommand):
    help = "Set fields on the variants of a branch that match --where (all or nothing)."

    def add_arguments(self, parser):
        parser.add_argument("--repository", required=True, help=", ".join(vocabulary.REPOSITORIES))
        parser.add_argument("--branch", required=True)
        parser.add_argument(
            "--where",
            action="append",
            default=[],
            metavar="FIELD=VALUE",
            help="only variants whose field reads VALUE (repeatable; all must hold)",
        )
        parser.add_argument(
            "--set",
            action="append",
            default=[],
            dest="assign",
            metavar="FIELD=VALUE",
            help="the value to set (repeatable); JSON for list fields, the slug for gpu_arch "
            "and cpu_isa, empty for none",
        )
        parser.add_argument("--dry-run", action="store_true", help="report; save nothing")

    def handle(self, *args, **opts):
        try:
            report = edit_variants(
                opts["repository"],
                opts["branch"],
                parse_assignments(opts["where"], "--where"),
                parse_assignments(opts["assign"], "--set"),
                dry_run=opts["dry_run"],
            )
        except EditRefused as exc:
            raise CommandError(str(exc), returncode=2) from exc
        for edit in report.edits:
            for name, old, new in edit.changes:
                self.stdout.write(f"{edit.pname}: {name}: {old or '(none)'} → {new or '(none)'}")
            if edit.diff and opts["verbosity"] > 1:
                self.stdout.write(edit.diff.rstrip("\n"))
        prefix = "dry run (nothing saved): " if opts["dry_run"] else ""
        self.stdout.write(
            self.style.SUCCESS(
                f"{prefix}{opts['repository']}:{opts['branch']}: {report.matched} variants "
                f"matched, {len(report.edits)} changed"
            )
        )
