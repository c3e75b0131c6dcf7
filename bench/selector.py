"""Timings of the selector and compare: the pure narrowing engine, then the pages.

The engine's figures are per call of `selector_engine.narrow` over every variant; the pages' are
server side through Django's test client against the dev database (`make setup` loads it): "cold"
with an empty cache (the rows fetched again), "warm" with the rows cached.

    python bench/selector.py [-n 15]
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import django

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "catalogue_site.settings")
django.setup()

from django.core.cache import cache  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from catalog import queries  # noqa: E402
from catalog.browse import selector_engine  # noqa: E402

UNIQUE = "gpu=sm90&isa=avx512&cuda=12.8&branch=build-pytorch%3Amain&library=pytorch"
HTMX = {"HTTP_HX_REQUEST": "true"}
SM90 = "build-pytorch/main/pytorch-python313-cuda12_8-sm90-avx512"
CHOICES = [
    ("nothing chosen", {}),
    ("gpu=sm61 (disabled options explained)", {"gpu": "sm61"}),
    ("narrowed to one", dict(p.split("=") for p in UNIQUE.replace("%3A", ":").split("&"))),
]
PAGES = [
    ("home, nothing chosen", "/", {}),
    ("home, narrowed to one", f"/?{UNIQUE}", {}),
    ("/select/ htmx, gpu=sm61", "/select/?gpu=sm61", HTMX),
    ("/select/ htmx, narrowed to one", f"/select/?{UNIQUE}", HTMX),
    (
        "compare, 4 variants",
        f"/compare/?v={SM90}&v=build-pytorch/main/pytorch-python313-cuda12_8-sm90-avx2"
        "&v=build-pytorch/main/pytorch-python313-cuda12_8-sm61-avx"
        "&v=build-pytorch/main/pytorch-python313-darwin-mps",
        {},
    ),
]


def median_ms(fn, n):
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def page_figures(client, url, headers, n, clear):
    times, queries, size = [], 0, 0
    for _ in range(n):
        if clear:
            cache.clear()
        with CaptureQueriesContext(connection) as captured:
            start = time.perf_counter()
            response = client.get(url, **headers)
            times.append((time.perf_counter() - start) * 1000)
        if response.status_code != 200:
            sys.exit(f"{url} answered {response.status_code}")
        queries, size = len(captured), len(response.content)
    return statistics.median(times), queries, size


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=15, help="runs per figure (default 15)")
    args = parser.parse_args()

    def build():
        return selector_engine.index_rows(
            selector_engine.rows_from_records(queries.selector_records())
        )

    rows = build()
    print(f"{len(rows.rows)} variants, median of {args.n} runs\n")
    fetch = median_ms(build, args.n)
    print(f"{'index: one query, rows and bitsets':44} {fetch:8.1f} ms")
    for label, chosen in CHOICES:
        ms = median_ms(lambda chosen=chosen: selector_engine.narrow(rows, chosen), args.n)
        print(f"{'narrow, ' + label:44} {ms:8.1f} ms")

    client = Client()
    print(f"\n{'page':36} {'cold ms':>8} {'q':>3} {'warm ms':>8} {'q':>3} {'KB':>6}")
    for label, url, headers in PAGES:
        client.get(url, **headers)  # compile templates once
        cold, cold_q, _ = page_figures(client, url, headers, args.n, clear=True)
        warm, warm_q, size = page_figures(client, url, headers, args.n, clear=False)
        print(f"{label:36} {cold:8.1f} {cold_q:3d} {warm:8.1f} {warm_q:3d} {size / 1024:6.1f}")


if __name__ == "__main__":
    main()
