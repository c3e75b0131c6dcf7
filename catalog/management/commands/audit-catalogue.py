"""Exit codes: 0 only known, recorded findings and no lint finding in a gating branch; 1
otherwise; 2 for a --gate naming no branch."""

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from catalog.audit import GATES, AuditResult, run_audit
from catalog.lint import RULES
from catalog.models import Branch


class Command(BaseCommand):
    help = (
        "List where the seeds contradict each other or the recipes' flags, count mismatches, "
        "records that fail validation, and the lint of every branch's variants. Exit 0 when only "
        "known, recorded findings remain and the gating branches lint clean; 1 otherwise."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--verified", action="store_true", help="also list the claims that hold"
        )
        parser.add_argument(
            "--gate",
            action="append",
            metavar="WHICH",
            help="whose lint findings fail the exit code: seeded (the default), imported, all, "
            "none, or REPOSITORY:BRANCH (repeatable)",
        )

    def handle(self, *args: str, **options: Any) -> None:
        gate = options["gate"] or ["seeded"]
        self._check_gate(gate)
        result = run_audit(gate)
        self._write_findings(result)
        self.stdout.write(f"Claims verified: {len(result.verified)}")
        if options["verified"]:
            for v in result.verified:
                self.stdout.write(f"- {v.key} ({v.subject}): {v.statement} [{v.source}]")
        self._write_lint(result)
        if not result.ok:
            raise CommandError(_failure(result), returncode=1)
        self.stdout.write(self.style.SUCCESS("Only known, recorded findings remain."))

    def _check_gate(self, gate: list[str]) -> None:
        known_branches = {f"{r}:{n}" for r, n in Branch.objects.values_list("repository", "name")}
        unknown = [g for g in gate if g not in GATES and g not in known_branches]
        if unknown:
            raise CommandError(
                f"--gate {unknown[0]!r} is neither {', '.join(GATES)} nor a REPOSITORY:BRANCH of "
                "the catalogue.",
                returncode=2,
            )

    def _write_findings(self, result: AuditResult) -> None:
        for title, findings, style in (
            ("New findings", result.new, self.style.ERROR),
            ("Known findings (recorded)", result.known, self.style.WARNING),
        ):
            self.stdout.write(style(f"{title}: {len(findings)}"))
            for f in findings:
                self.stdout.write(f"- [{f.kind}] {f.key} ({f.subject}): {f.message}")
                for label, text in (
                    ("seed says", f.statement),
                    ("source", f.source),
                    ("catalogue", f.resolution),
                ):
                    if text:
                        self.stdout.write(f"    {label}: {text}")

    def _write_lint(self, result: AuditResult) -> None:
        dirty = [b for b in result.lint if b.findings]
        style = (
            self.style.ERROR
            if result.gating_lint
            else (self.style.WARNING if dirty else self.style.SUCCESS)
        )
        self.stdout.write(
            style(
                f"Lint: {result.lint_count} findings in {len(dirty)} of {len(result.lint)} "
                f"branches ({len(RULES)} rules: {', '.join(rule.key for rule in RULES)})"
            )
        )
        for branch in dirty:
            origin = "imported" if branch.imported else "seeded"
            effect = "gates the exit code" if branch.gates else "shown, does not gate the exit code"
            recorded = sum(1 for f in branch.findings if branch.is_recorded(f))
            if recorded:
                effect += f"; {recorded} recorded, which do not"
            self.stdout.write(f"- {branch.name} ({origin}; {effect}): {len(branch.findings)}")
            for f in branch.findings:
                known = " (recorded: does not gate)" if branch.is_recorded(f) else ""
                self.stdout.write(f"    [{f.rule}] {f.variant}: {f.message}{known}")


def _failure(result: AuditResult) -> str:
    """The one sentence a failing audit ends with."""
    parts = []
    if result.new:
        parts.append(f"{len(result.new)} new finding(s): record or fix them")
    if result.gating_lint:
        parts.append(
            f"{len(result.gating_lint)} lint finding(s) in gating branches: fix the variants"
        )
    return "; ".join(parts) + "."
