"""Evaluate every recipe of a checkout or export tree against the stand-in nixpkgs.

Exit codes: 0 every recipe passes, 1 findings, 2 bad input (a PATH without recipes) or no
usable nix-instantiate.
"""

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from catalog.recipes import verify as recipe_verify
from catalog.recipes.nix import evaluate, verify


class Command(BaseCommand):
    help = (
        "Evaluate every .nix under PATH/.flox/pkgs (or PATH itself) with nix-instantiate against "
        "the project's stand-in nixpkgs, offline, and check each recipe against its file name: "
        + "; ".join(verify.RULES.values())
        + ". Exit 0 when all pass, 1 with findings, 2 for bad input."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "paths",
            nargs="+",
            metavar="PATH",
            help="a checkout or export tree, or its .flox/pkgs folder",
        )
        parser.add_argument(
            "--jobs",
            type=int,
            default=2,
            help="nix-instantiate processes to run at once (default 2)",
        )
        parser.add_argument(
            "--timeout",
            type=float,
            default=evaluate.FILE_TIMEOUT_S,
            help=f"seconds one recipe may take to evaluate (default {evaluate.FILE_TIMEOUT_S:g})",
        )

    def handle(self, *args: str, **opts: Any) -> None:
        if not 1 <= opts["jobs"] <= 64:
            raise CommandError("--jobs takes a number from 1 to 64.", returncode=2)
        if not 0 < opts["timeout"] <= 3600:
            raise CommandError(
                "--timeout takes seconds, more than 0 and at most 3600.", returncode=2
            )
        recipe_verify.verify_folders(
            opts["paths"], self.stdout, self.style, jobs=opts["jobs"], file_timeout=opts["timeout"]
        )
