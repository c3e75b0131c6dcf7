"""check-caches: ask each configured binary cache whether each recorded output is present.

For cron or CI. Caches come from settings.BINARY_CACHES (CATALOG_BINARY_CACHES, added to the
table by name) and the admin (BinaryCache, enabled ones). Outputs are those of each variant's
latest build that recorded store paths. Every answer is stored with its time (CacheEntry);
a failed check keeps the last definitive answer.

Exit codes: 0 every cache answered for every output; 1 some checks failed (timeouts, errors:
their entries keep the last known state); 2 cannot run (no caches, bad options).
"""

from argparse import ArgumentParser
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from catalog import cache as catalogue_cache
from catalog import naming, narinfo, services
from catalog.models import BinaryCache

LIMITS = {"workers": (1, 64), "timeout": (0.1, 120.0), "retries": (0, 5)}


def _bounded(name: str, value: float) -> float:
    low, high = LIMITS[name]
    if not low <= value <= high:
        raise CommandError(f"--{name} must be from {low} to {high}, not {value}.", returncode=2)
    return value


class Command(BaseCommand):
    help = (
        "Ask each binary cache (GET {cache}/{hash}.narinfo) whether each recorded build output "
        "is present, and store the answers. Exit 0 all answered, 1 some checks failed, "
        "2 cannot run."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--cache", action="append", default=[], help="only this cache (by name); repeatable"
        )
        parser.add_argument("--workers", type=int, default=16, help="requests in flight (1-64)")
        parser.add_argument("--timeout", type=float, default=10.0, help="seconds per request")
        parser.add_argument("--retries", type=int, default=2, help="retries of a failed request")

    def _caches(self, names: list[str]) -> list[BinaryCache]:
        try:
            services.sync_binary_caches(settings.BINARY_CACHES)
        except ValidationError as exc:
            raise CommandError(
                f"BINARY_CACHES in settings: {services.validation_message(exc)}", returncode=2
            ) from None
        caches = list(BinaryCache.objects.filter(enabled=True))
        if names:
            unknown = sorted(set(names) - {c.name for c in caches})
            if unknown:
                raise CommandError(
                    f"No enabled binary cache named {', '.join(unknown)}.", returncode=2
                )
            caches = [c for c in caches if c.name in names]
        if not caches:
            raise CommandError(
                "No binary cache is configured: set CATALOG_BINARY_CACHES=name=url or add one "
                "in the admin (Binary caches).",
                returncode=2,
            )
        return caches

    def handle(self, *args: str, **options: Any) -> None:
        workers = int(_bounded("workers", options["workers"]))
        timeout = _bounded("timeout", options["timeout"])
        retries = int(_bounded("retries", options["retries"]))
        caches = self._caches(options["cache"])
        outputs = services.latest_outputs()
        by_pair = {
            (cache.url, naming.parse_store_path(output.store_path).hash): (output, cache)
            for output in outputs
            for cache in caches
        }
        answers, stats = narinfo.check(by_pair, workers=workers, timeout=timeout, retries=retries)
        counts = services.store_cache_answers(
            [(*by_pair[(a.cache_url, a.store_hash)], a) for a in answers]
        )
        if answers:
            catalogue_cache.bump_version()  # pages show cache state: retire their fragments
        self.stdout.write(
            f"Checked {len(outputs)} output(s) in {len(caches)} cache(s): "
            f"{counts['present']} present, {counts['absent']} absent, {counts['error']} failed "
            f"({stats.requests} requests, {stats.retries} retries, at most "
            f"{stats.max_in_flight} in flight, {stats.seconds:.2f} s)."
        )
        failed = [a for a in answers if a.present is None]
        for answer in failed[:20]:
            self.stderr.write(f"{answer.cache_url} {answer.store_hash}: {answer.error}")
        if failed:
            raise CommandError(
                f"{len(failed)} check(s) failed; their entries keep the last known answer.",
                returncode=1,
            )
