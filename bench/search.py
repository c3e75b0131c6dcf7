"""The site search at 1× and 16× the catalogue: seconds to build the index (once per catalogue
version) and median / worst milliseconds per query over a mixed set of queries.

    python bench/search.py [-n 20]

The 16× catalogue repeats every variant 16 times under distinct names (what the scale work
measures pages with); names, guides and errors stay as they are, so the figure shows how the
per-query work grows with the variants alone.
"""

import argparse
import dataclasses
import importlib
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUERIES = [
    "RTX 3060",
    "rtx3060",
    "h 100",
    "M2",
    "Ryzen 9 7950X",
    "saphire rapids",
    "pytorch-2.9-python313",
    "sm121 armv9",
    "flox publish",
    "CUDA error: no kernel image is available for execution on the device on my RTX 3060",
    "Illegal instruction (core dumped)",
    "qqqzzzxxx",
]


def timed(fn, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20, help="runs per query")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "catalogue_site.settings")
    importlib.import_module("django").setup()
    queries = importlib.import_module("catalog.queries")
    search = importlib.import_module("catalog.browse.search")
    models = importlib.import_module("catalog.models")
    catalogue = queries.recommend_catalogue()
    archs = [
        search.ArchitectureText(*row)
        for row in models.GpuArchitecture.objects.values_list("sm", "label", "short_models")
    ]
    rows = models.DocPage.objects.values_list("slug", "title", "body")
    guides = [search.GuideText(*row) for row in rows]
    for scale in (1, 16):
        variants = [
            dataclasses.replace(v, pname=f"{v.pname}-x{i}" if i else v.pname)
            for v in catalogue.variants
            for i in range(scale)
        ]
        scaled = dataclasses.replace(catalogue, variants=tuple(variants), _index={})
        start = time.perf_counter()
        index = search.build_index(scaled, archs, guides)
        built = time.perf_counter() - start
        per_query = {q: timed(lambda q=q, ix=index: ix.search(q), args.n) for q in QUERIES}
        times = [t for ts in per_query.values() for t in ts]
        slowest = max(per_query, key=lambda q: statistics.median(per_query[q]))
        print(
            f"{scale:>2}x ({len(variants):>6} variants): index built in {built:.2f} s; "
            f"per query median {statistics.median(times):.1f} ms, worst {max(times):.1f} ms; "
            f"slowest query {statistics.median(per_query[slowest]):.1f} ms ({slowest[:30]}…)"
        )


if __name__ == "__main__":
    main()
