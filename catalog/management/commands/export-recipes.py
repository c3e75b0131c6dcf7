"""Write the catalogue's recipes and generated docs into export trees or a build-repo checkout.

--diff prints the unified diff of each file written (with --check or --dry-run: that would be
written). Exit codes: 0 done (or --check found nothing to change), 1 --check found differing files,
2 bad input (CommandError: unknown branch, not a checkout, unwritable target, a path that would
leave its target or pass through a symbolic link — nothing is written then), 3 a recipe whose
changed field cannot be edited in place was left unwritten (every other file was written).
"""

import logging
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from catalog import vocabulary
from catalog.recipes import verify as recipe_verify
from catalog.recipes.exporting import sync

log = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Export every variant's .flox/pkgs/<pname>.nix plus README sections and BUILD_MATRIX.md."

    def add_arguments(self, parser):
        parser.add_argument(
            "--output", default="export", help="root of the export trees (default: export/)"
        )
        parser.add_argument(
            "--into",
            help="an existing checkout of one build repo (needs --repository and --branch)",
        )
        parser.add_argument(
            "--repository", action="append", default=[], help="only this repository (repeatable)"
        )
        parser.add_argument(
            "--branch", action="append", default=[], help="only this branch (repeatable)"
        )
        parser.add_argument(
            "--library",
            action="append",
            default=[],
            choices=list(vocabulary.LIBRARIES),
            help="only these recipes (repeatable)",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="report what would change; write nothing"
        )
        parser.add_argument(
            "--check", action="store_true", help="write nothing; exit 1 if any file differs"
        )
        parser.add_argument(
            "--diff",
            action="store_true",
            help="print the unified diff of every file export writes (or would write)",
        )
        parser.add_argument(
            "--prune",
            action="store_true",
            help="delete recipe files no variant claims, if the catalogue wrote them or they are "
            "unchanged since the branch was imported (others are only reported)",
        )
        parser.add_argument(
            "--verify",
            action="store_true",
            help="then evaluate each tree's recipes as verify-recipes does (exit 1 on findings)",
        )

    def handle(self, *args, **opts):
        try:
            if opts["into"]:
                if len(opts["repository"]) != 1 or len(opts["branch"]) != 1:
                    raise sync.SyncError(
                        "--into writes one branch: give exactly one --repository and one --branch."
                    )
                targets = [
                    sync.checkout_target(opts["into"], opts["repository"][0], opts["branch"][0])
                ]
            else:
                targets = sync.export_targets(
                    Path(opts["output"]), opts["repository"], opts["branch"]
                )
            report = sync.export_recipes(
                targets,
                libraries=opts["library"],
                dry_run=opts["dry_run"],
                check=opts["check"],
                prune=opts["prune"],
                checkout=bool(opts["into"]),
                diffs=opts["diff"],
            )
        except sync.SyncError as exc:
            log.error("Export failed: %s", exc)
            raise CommandError(str(exc), returncode=2) from exc
        self._report(report, opts, len(targets))
        if opts["verify"]:
            recipe_verify.verify_folders([root for root, _ in targets], self.stdout, self.style)
        if report.problems:
            for problem in report.problems:
                log.warning("Recipe not exported: %s", problem)
                self.stderr.write(problem)
            raise CommandError(
                f"{len(report.problems)} recipes were not written because a changed field cannot "
                "be edited in place; edit the named fields by hand, then export again.",
                returncode=3,
            )
        if opts["check"] and report.differing:
            raise CommandError(
                f"{len(report.differing)} files differ from the catalogue; run export-recipes to "
                "update them.",
                returncode=1,
            )

    def _report(self, report, opts, trees):
        verbose = opts["verbosity"] > 1 or opts["dry_run"]
        previewing = opts["dry_run"] or opts["check"]
        for outcome in report.outcomes:
            if outcome.action == "stale":
                note = " (no variant claims it; left alone unless --prune may delete it)"
                self.stdout.write(self.style.WARNING(f"stale: {outcome.path}{note}"))
            elif outcome.action in ("pruned", "refused"):
                self.stdout.write(self.style.WARNING(f"{outcome.action}: {outcome.path}"))
            elif outcome.action in ("removed", "leftover"):
                verb = "removed" if outcome.action == "removed" else "would remove"
                note = "temporary file of an interrupted export"
                self.stdout.write(self.style.WARNING(f"{verb}: {outcome.path} ({note})"))
            elif outcome.action != "unchanged" and (verbose or opts["check"] or opts["diff"]):
                verb = f"would {outcome.action[:-1]}" if previewing else outcome.action
                self.stdout.write(f"{verb}: {outcome.path}")
                if opts["diff"]:
                    self.stdout.write(outcome.diff.rstrip("\n"))
            elif opts["verbosity"] > 1:
                self.stdout.write(f"unchanged: {outcome.path}")
        for note in report.notes:
            self.stdout.write(self.style.NOTICE(note))
        prefix = "dry run: " if opts["dry_run"] else ("check: " if opts["check"] else "")
        self.stdout.write(self.style.SUCCESS(f"{prefix}{report.summary()} ({trees} branch trees)"))
