"""`python manage.py which-variant`: which variant should this machine use?

The logic lives in catalog.wizard_input (shared with /wizard/ and /api/recommend); this module
only wires it to the command line. Exit codes: 0 a variant fits, 1 no variant fits this
hardware, 2 invalid input (a sentence on stderr).
"""
import sys

from django.core.management.base import BaseCommand

from catalog import wizard_input


class Command(BaseCommand):
    help = ("Recommend the variant to install from answers, tool output files or --detect "
            "(exit 0 a variant, 1 none fits, 2 invalid input).")

    def add_arguments(self, parser):
        wizard_input.add_cli_arguments(parser)

    def handle(self, *args, **options):
        code = wizard_input.run_cli(options, self.stdout, self.stderr)
        if code:
            sys.exit(code)
