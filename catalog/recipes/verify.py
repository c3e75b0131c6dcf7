"""What `verify-recipes` and `export-recipes --verify` share: the catalogue's ISA flags, the run
over one or more recipe folders, and the report in the commands' output.

Exit codes: 0 every recipe passes, 1 findings (CommandError with returncode=1), 2 a PATH that
cannot be verified or no usable nix-instantiate (returncode=2).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from django.core.management.base import CommandError, OutputWrapper

from catalog.models import CpuIsa
from catalog.recipes.nix import evaluate, verify


def catalogue_isa_flags() -> dict[str, list[str]]:
    flags = dict(CpuIsa.objects.values_list("slug", "compiler_flags"))
    if not flags:
        raise CommandError(
            "The catalogue has no CPU ISAs to check flags against; run load-catalogue first.",
            returncode=2,
        )
    return flags


def verify_folders(
    paths: Iterable[Path],
    stdout: OutputWrapper,
    style,
    *,
    jobs: int = 2,
    file_timeout: float = evaluate.FILE_TIMEOUT_S,
) -> list[verify.Report]:
    """Verify each folder, print its findings, and raise CommandError(returncode=1) if any."""
    isa_flags = catalogue_isa_flags()
    try:
        reports = verify.verify_folders(
            [Path(p) for p in paths], isa_flags, jobs=jobs, file_timeout=file_timeout
        )
    except (verify.VerifyInputError, evaluate.EvaluatorUnavailable) as exc:
        raise CommandError(str(exc), returncode=2) from exc
    for report in reports:
        for finding in report.findings:
            stdout.write(style.ERROR(f"{finding.path.name}: [{finding.rule}] ") + finding.message)
        for note in report.notes:
            stdout.write(style.WARNING(f"{note.path.name}: not checked: ") + note.message)
        line = (
            f"{report.root}: {len(report.paths)} recipes evaluated, "
            f"{report.files_with_findings()} with findings ({len(report.findings)} findings)"
        )
        stdout.write(style.SUCCESS(line) if report.ok else style.WARNING(line))
    if reports:
        stdout.write(
            f"Evaluated {sum(len(r.paths) for r in reports)} recipes in {len(reports)} folder(s) "
            f"in {reports[0].seconds:.1f} s."
        )
    failing = [r for r in reports if not r.ok]
    if failing:
        total = sum(len(r.findings) for r in failing)
        raise CommandError(
            f"{total} finding(s) in {sum(r.files_with_findings() for r in failing)} recipe(s); "
            "fix the recipes (or the catalogue) and verify again.",
            returncode=1,
        )
    return reports
