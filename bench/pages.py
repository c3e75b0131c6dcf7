"""Server-side timings of the catalogue's pages: median of N requests, and each one's query count.

Runs Django's test client against the dev database (`make setup` loads it). For each page:
"cold" renders with an empty cache (what the first visitor after a catalogue change pays),
"warm" is a repeat with the fragment cache filled, "304" a conditional GET with the ETag.

    python bench/pages.py [-n 15]
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import django

# The app lives at the repository root, which is on the path for manage.py (it sits there) but
# not for a script run from bench/.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "catalogue_site.settings")
django.setup()

from django.core.cache import cache  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from catalog.models import Variant  # noqa: E402

HTMX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "results"}


def pages():
    detail = Variant.objects.select_related("branch").get(
        branch__repository="build-pytorch",
        branch__name="main",
        pname="pytorch-python313-cuda12_8-sm90-avx512",
    )
    return [
        ("matrix, default (first 50)", "/variants/", {}),
        ("matrix, list (all variants)", "/variants/?view=list&per_page=all", {}),
        ("matrix, grid (all variants)", "/variants/?view=grid", {}),
        ("htmx partial gpu=sm90&isa=avx512", "/variants/?gpu=sm90&isa=avx512", HTMX),
        ("htmx partial gpu=sm90", "/variants/?gpu=sm90", HTMX),
        ("CSV, all variants", "/variants/?format=csv", {}),
        ("API, all variants", "/api/variants", {}),
        ("variant detail", detail.get_absolute_url(), {}),
    ]


def timed(client, url, headers, clear):
    if clear:
        cache.clear()
    with CaptureQueriesContext(connection) as queries:
        start = time.perf_counter()
        response = client.get(url, **headers)
        elapsed = time.perf_counter() - start
    if response.status_code not in (200, 304):
        sys.exit(f"{url} answered {response.status_code}")
    return elapsed * 1000, len(queries), response


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=15, help="requests per figure (default 15)")
    args = parser.parse_args()
    client = Client()
    print(
        f"{Variant.objects.count()} variants, median of {args.n} requests, "
        "server side (Django test client)\n"
    )
    print(f"{'page':36} {'cold ms':>8} {'q':>3} {'warm ms':>8} {'q':>3} {'304 ms':>7} {'q':>3}")
    for label, url, headers in pages():
        timed(client, url, headers, clear=True)  # compile templates once
        cold = [timed(client, url, headers, clear=True) for _ in range(args.n)]
        warm = [timed(client, url, headers, clear=False) for _ in range(args.n)]
        etag = warm[-1][2].get("ETag")
        if etag:
            revalidated = [
                timed(client, url, {**headers, "HTTP_IF_NONE_MATCH": etag}, clear=False)
                for _ in range(args.n)
            ]
            r304 = f"{statistics.median(t for t, _, _ in revalidated):7.1f} {revalidated[-1][1]:3d}"
        else:
            r304 = f"{'—':>7} {'':3}"
        print(
            f"{label:36} {statistics.median(t for t, _, _ in cold):8.1f} {cold[-1][1]:3d}"
            f" {statistics.median(t for t, _, _ in warm):8.1f} {warm[-1][1]:3d} {r304}"
        )


if __name__ == "__main__":
    main()
