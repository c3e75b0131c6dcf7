"""`python manage.py which-variant`: which variant should this machine use?

The logic lives in catalog.wizard.cli (input and output shared with /wizard/ and /api/recommend
through catalog.wizard.inputs and catalog.wizard.output); this module only wires it up. Exit
codes: 0 a variant fits, 1 no variant fits this hardware, 2 invalid input (CommandError).
"""

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand

from catalog.wizard import cli


class Command(BaseCommand):
    help = (
        "Recommend the variant to install from answers, tool output files or --detect "
        "(exit 0 a variant, 1 none fits, 2 invalid input)."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        cli.add_arguments(parser)

    def handle(self, *args: str, **options: Any) -> None:
        cli.run(options, self.stdout, self.stderr)
