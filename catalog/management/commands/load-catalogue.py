from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from catalog.seeding import SeedError, load_catalogue


class Command(BaseCommand):
    help = (
        "Load (or refresh) the catalogue from fixtures/: architectures, ISAs, branches and their "
        "variants, seed claims and doc pages. Idempotent; one transaction; nothing is deleted; "
        "an existing variant is kept as the catalogue has it (-v 2 lists those that differ)."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--fixtures", help="fixtures folder (default: the project's fixtures/)")

    def handle(self, *args: str, **options: Any) -> None:
        try:
            report = load_catalogue(options.get("fixtures"))
        except SeedError as exc:
            raise CommandError(f"Nothing was loaded: {exc}") from exc
        if options["verbosity"] >= 1:
            for line in report.lines():
                self.stdout.write(line)
        if options["verbosity"] >= 2:
            for line in report.kept:
                self.stdout.write(f"kept (differs from the seeds): {line}")
            self.stdout.write(
                self.style.SUCCESS(f"Catalogue loaded: {report.changed} rows changed.")
            )
