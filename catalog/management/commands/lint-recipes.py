"""lint-recipes: the catalogue's lint and stand-in evaluation over a build repository checkout,
with no database and no network — for the build repositories' CI.

Findings: `file:line: rule: sentence`, or with --format github workflow annotations
(`::error file=…,line=…::…`). Architecture facts and ISA flags come from the seed TOML files.

Exit codes: 0 clean; 1 findings; 2 cannot run (no recipes, unreadable seeds, no nix-instantiate).
"""

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from catalog import lint
from catalog.recipes import checkout_lint
from catalog.recipes.nix import verify

FORMATS = ("text", "github")


class Command(BaseCommand):
    help = (
        "Lint every recipe of a build repository checkout (PATH/.flox/pkgs) without a database "
        "or network: "
        + "; ".join(rule.summary for rule in lint.RULES)
        + "; and, evaluated against the stand-in nixpkgs: "
        + "; ".join(verify.RULES.values())
        + ". Exit 0 clean, 1 findings, 2 cannot run."
    )
    requires_system_checks: list = []  # a CI runner has no database to check
    requires_migrations_checks = False

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("path", metavar="PATH", help="a checkout or its .flox/pkgs folder")
        parser.add_argument("--format", choices=FORMATS, default="text")
        parser.add_argument(
            "--seeds",
            default=str(Path(settings.CATALOGUE_FIXTURES_DIR) / "catalogue"),
            help="folder of architectures.toml and isas.toml (default: this project's seeds)",
        )
        parser.add_argument(
            "--skip-evaluation",
            action="store_true",
            help="lint only, without nix-instantiate",
        )
        parser.add_argument("--jobs", type=int, default=2, help="nix-instantiate processes (1-64)")

    def handle(self, *args: str, **options: Any) -> None:
        if not 1 <= options["jobs"] <= 64:
            raise CommandError("--jobs takes a number from 1 to 64.", returncode=2)
        try:
            seeds = checkout_lint.read_seeds(Path(options["seeds"]))
            findings, checked = checkout_lint.lint_checkout(
                Path(options["path"]),
                seeds,
                evaluate_recipes=not options["skip_evaluation"],
                jobs=options["jobs"],
            )
        except checkout_lint.CannotLint as exc:
            raise CommandError(str(exc), returncode=2) from None
        for finding in findings:
            self.stdout.write(finding.github() if options["format"] == "github" else finding.text())
        files = len({f.path for f in findings})
        summary = f"{checked} recipe(s) checked, {len(findings)} finding(s) in {files} file(s)."
        if findings:
            raise CommandError(summary, returncode=1)
        self.stderr.write(summary)
