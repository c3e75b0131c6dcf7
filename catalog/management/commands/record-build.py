"""record-build: add a BuildRecord to a variant and update its status (catalog.services).

Exit codes: 0 recorded; 1 (CommandError) unknown variant or bad input — nothing written.
"""

from argparse import ArgumentParser
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_datetime

from catalog import services


def _non_negative_int(value: str, flag: str) -> int:
    unit = "seconds" if flag == "--duration" else "bytes"
    try:
        number = int(value)
    except ValueError:
        raise CommandError(f"{flag} must be a whole number of {unit}, not {value!r}.") from None
    if number < 0:
        raise CommandError(f"{flag} must be 0 or more {unit}.")
    return number


class Command(BaseCommand):
    help = (
        "Record a build of a variant: adds a build record and sets the variant's status. "
        "Example: record-build pytorch-python313-cpu-avx2 --repository build-pytorch "
        "--branch main --status built --duration 3600"
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("pname", help="the variant's package name")
        parser.add_argument("--repository", required=True, help="e.g. build-pytorch")
        parser.add_argument("--branch", required=True, help="e.g. main")
        parser.add_argument("--status", required=True, choices=services.BUILD_STATUSES)
        parser.add_argument("--duration", help="build time in seconds")
        parser.add_argument("--log-url", default="", help="link to the build log")
        parser.add_argument("--commit", default="", help="the build repository's commit")
        parser.add_argument("--host", default="", help="the machine that built it")
        parser.add_argument("--started-at", help="ISO 8601 start time (default: now)")
        parser.add_argument(
            "--output",
            action="append",
            default=[],
            dest="outputs",
            help="an output store path (/nix/store/…); repeat for several outputs",
        )
        parser.add_argument("--system", default="", help="e.g. x86_64-linux")
        parser.add_argument("--nixpkgs-rev", default="", help="the nixpkgs commit built against")
        parser.add_argument("--nar-size", help="the output's NAR size in bytes")
        parser.add_argument("--closure-size", help="the closure's size in bytes")
        parser.add_argument("--flox-catalog", default="", help="Flox catalog organisation")
        parser.add_argument("--flox-package", default="", help="package name in that catalog")
        parser.add_argument("--flox-version", default="", help="version published there")
        parser.add_argument(
            "--published-cache-url", default="", help="binary cache the output was pushed to"
        )

    def handle(self, *args: str, **options: Any) -> None:
        started_at = None
        if options["started_at"]:
            try:
                started_at = parse_datetime(options["started_at"])
            except ValueError:
                started_at = None
            if started_at is None:
                raise CommandError(
                    "--started-at must be an ISO 8601 date and time, e.g. 2026-01-31T12:00:00Z."
                )
        duration, nar_size, closure_size = (
            _non_negative_int(options[name], flag) if options[name] is not None else None
            for name, flag in (
                ("duration", "--duration"),
                ("nar_size", "--nar-size"),
                ("closure_size", "--closure-size"),
            )
        )
        try:
            record = services.record_build(
                repository=options["repository"],
                branch=options["branch"],
                pname=options["pname"],
                status=options["status"],
                duration_seconds=duration,
                log_url=options["log_url"],
                commit=options["commit"],
                host=options["host"],
                started_at=started_at,
                outputs=options["outputs"],
                nar_size=nar_size,
                closure_size=closure_size,
                **{
                    name: options[name]
                    for name in (
                        "system",
                        "nixpkgs_rev",
                        "flox_catalog",
                        "flox_package",
                        "flox_version",
                        "published_cache_url",
                    )
                },
            )
        except services.UnknownVariant as exc:
            raise CommandError(f"{exc} Nothing was recorded.") from None
        except ValidationError as exc:
            messages = services.validation_message(exc)
            raise CommandError(f"{messages} Nothing was recorded.") from None
        if options["verbosity"] >= 1:
            variant = record.variant
            self.stdout.write(
                self.style.SUCCESS(
                    f"Recorded build {record.pk}: {variant.pname} is {variant.status}."
                )
            )
