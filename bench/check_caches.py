"""check-caches over N recorded outputs against a local binary cache (tests/cache_server.py).

Builds a throwaway SQLite catalogue (the seeds, one build per variant with several outputs,
N outputs in all), then runs what `check-caches` runs — latest outputs, narinfo requests,
storing the answers — against caches that answer, answer slowly, fail, or hang; and shows what
the variant page says afterwards (the last known state, with its age).

    python bench/check_caches.py [--outputs 2000] [--present 0.7]
"""

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the app and tests/ live at the repository root


def setup(db_path: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{db_path}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "catalogue_site.settings")
    os.environ.setdefault("DJANGO_CACHE", "locmem")
    import django

    django.setup()
    from django.core.management import call_command

    from catalog.seeding import load_catalogue

    call_command("migrate", verbosity=0)
    load_catalogue()


def record_outputs(count: int, server, present: float) -> list[str]:
    """One built record per variant, outputs spread over them until `count`; a share `present`
    of them served by the cache."""
    from django.utils import timezone

    from catalog.models import BuildOutput, BuildRecord, Variant

    variants = list(Variant.objects.order_by("pk").values_list("pk", flat=True))
    builds = BuildRecord.objects.bulk_create(
        BuildRecord(variant_id=pk, status="built", started_at=timezone.now(), duration_seconds=60)
        for pk in variants
    )
    rng = random.Random(7)
    paths = [f"/nix/store/{n:032d}-python3.13-torch-2.9.1-out{n}" for n in range(count)]
    BuildOutput.objects.bulk_create(
        BuildOutput(build=builds[n % len(builds)], store_path=p) for n, p in enumerate(paths)
    )
    for path in paths:
        if rng.random() < present:
            server.add(path, nar_size=3 * 2**30, file_size=2**30)
    return paths


def run(cache_url: str, *, workers: int, timeout: float, retries: int) -> dict:
    from catalog import naming, narinfo, services
    from catalog.models import BinaryCache

    cache, _ = BinaryCache.objects.update_or_create(name="bench", defaults={"url": cache_url})
    start = time.perf_counter()
    outputs = services.latest_outputs()
    pairs = {(cache.url, naming.parse_store_path(o.store_path).hash): o for o in outputs}
    read = time.perf_counter() - start
    answers, stats = narinfo.check(pairs, workers=workers, timeout=timeout, retries=retries)
    start = time.perf_counter()
    counts = services.store_cache_answers(
        [(pairs[(a.cache_url, a.store_hash)], cache, a) for a in answers]
    )
    stored = time.perf_counter() - start
    return {
        "outputs": len(outputs),
        "read_s": read,
        "http_s": stats.seconds,
        "store_s": stored,
        "requests": stats.requests,
        "retries": stats.retries,
        "in_flight": stats.max_in_flight,
        **counts,
    }


def page_after(client) -> tuple[float, str]:
    """The variant page of a cached variant: its time and what it says of the cache."""
    from catalog import queries

    cached = queries.cached_variant_ids()
    from catalog.models import Variant

    variant = Variant.objects.select_related("branch").get(pk=cached[0])
    start = time.perf_counter()
    body = client.get(variant.get_absolute_url()).content.decode()
    elapsed = time.perf_counter() - start
    text = body.split('data-testid="availability">', 1)[1].split("</ul>", 1)[0]
    said = " ".join(text.replace("<", " <").split())
    import re

    return elapsed, re.sub(r"<[^>]+>", "", said).strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=int, default=2000)
    parser.add_argument("--present", type=float, default=0.7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        setup(Path(tmp) / "bench.sqlite3")
        from django.test import Client

        from tests.cache_server import CacheServer

        with CacheServer(slow_seconds=0.05) as server:
            record_outputs(args.outputs, server, args.present)
            client = Client()
            print(f"{args.outputs} outputs, {args.present:.0%} present in the cache\n")
            header = (
                f"{'scenario':<34} {'workers':>7} {'HTTP s':>7} {'store s':>7} {'requests':>8} "
                f"{'retries':>7} {'in flight':>9} {'present':>7} {'absent':>6} {'failed':>6}"
            )
            print(header)
            scenarios = [
                ("answers at once", "ok", 1, 10.0, 2),
                ("answers at once", "ok", 8, 10.0, 2),
                ("answers at once", "ok", 16, 10.0, 2),
                ("answers at once", "ok", 32, 10.0, 2),
                ("slow: 50 ms an answer", "slow", 16, 10.0, 2),
                ("slow: 50 ms an answer", "slow", 64, 10.0, 2),
                ("503 on each path's first ask", "flaky", 16, 10.0, 2),
                ("down: HTTP 500 (1 retry)", "broken", 16, 10.0, 1),
            ]
            for name, mode, workers, timeout, retries in scenarios:
                server.seen.clear()
                r = run(f"{server.url}/{mode}", workers=workers, timeout=timeout, retries=retries)
                print(
                    f"{name:<34} {workers:>7} {r['http_s']:>7.2f} {r['store_s']:>7.2f} "
                    f"{r['requests']:>8} {r['retries']:>7} {r['in_flight']:>9} "
                    f"{r['present']:>7} {r['absent']:>6} {r['error']:>6}"
                )
            seconds, said = page_after(client)
            print(f"\nVariant page after the cache went down ({seconds * 1000:.0f} ms): {said}")
            server.slow_seconds = 5.0
            r = run(f"{server.url}/slow", workers=64, timeout=0.5, retries=0)
            print(
                f"\nhung cache (answers after 5 s), timeout 0.5 s, 64 workers, no retry: "
                f"{r['http_s']:.1f} s for {r['requests']} requests, {r['error']} failed"
            )
            seconds, said = page_after(client)
            print(f"Variant page after that ({seconds * 1000:.0f} ms): {said}")


if __name__ == "__main__":
    main()
