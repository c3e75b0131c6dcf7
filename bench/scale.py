"""Cold cost of every page and answer at 1×, 4× and 16× the catalogue, with the growth ratio.

Builds its own catalogue in a throwaway SQLite file (the dev database is untouched, no network):
the seed (`load-catalogue`) plus the real branches in ../shared/real-recipes (`import-recipes`,
when that folder exists) is 1×; every branch is then cloned with all its variants under new
branch names to reach 4× and 16×. Each request is cold: the cache is cleared before it (what the
first visitor pays after a change to the catalogue's structure, an import): every cache alias,
the version's own included, so the in-process copies keyed by it are retired as well. A second
figure is the request after a build record (what CI writes after each build) with the cache warm
before it: what the next visitor pays while builds are reported.

    python bench/scale.py [-n 3] [--sizes 1,4,16] [--keep DB] [--pages audit,/wizard/]

--pages measures only the pages whose label contains one of the comma-separated words.
"""

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT.parent / "shared" / "real-recipes"
REAL_BRANCHES = [  # (repository, branch folder)
    ("build-pytorch", "pytorch-2.8-python312"),
    ("build-torchvision", "cuda-12_9"),
]


def configure(database: Path) -> None:
    """Point Django at the throwaway database and a per-process cache, then start it."""
    os.environ["DATABASE_URL"] = f"sqlite:///{database}"
    os.environ["DJANGO_CACHE"] = "locmem"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "catalogue_site.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def build_base() -> None:
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    call_command("load-catalogue", verbosity=0)
    for repository, branch in REAL_BRANCHES:
        folder = REAL / repository / branch
        if folder.is_dir():
            call_command(
                "import-recipes",
                str(folder),
                repository=repository,
                branch=[branch],
                skip_invalid=True,
                verbosity=0,
                stdout=io.StringIO(),
            )


SKIP = ("id", "branch_id")


def grow(copies: int, start: int) -> None:
    """Clone every original branch (names without a copy suffix) `copies` times, variants and
    their in-branch dependencies included, numbering the copies from `start`."""
    from django.db import transaction

    from catalog import audit_store, cache
    from catalog.models import Branch, Variant

    fields = [f.attname for f in Variant._meta.concrete_fields if f.attname not in SKIP]
    originals = list(Branch.objects.exclude(name__contains="-scale"))
    with transaction.atomic():
        for n in range(start, start + copies):
            clones = {}
            for branch in originals:
                clone = Branch.objects.get(pk=branch.pk)
                clone.pk = None
                clone.name = f"{branch.name}-scale{n}"
                clone.is_default = False
                clone.preference = min(branch.preference + 1 + n, 32767)
                clone.pytorch_branch_id = None
                clone.save()
                clones[branch.pk] = clone
            for branch in originals:
                if branch.pytorch_branch_id in clones:
                    clones[branch.pk].pytorch_branch = clones[branch.pytorch_branch_id]
                    clones[branch.pk].save(update_fields=["pytorch_branch"])
            old = list(Variant.objects.filter(branch__in=originals).order_by("id"))
            new = Variant.objects.bulk_create(
                Variant(**{f: getattr(v, f) for f in fields}, branch=clones[v.branch_id])
                for v in old
            )
            mapped = {o.pk: c for o, c in zip(old, new, strict=True)}
            changed = []
            for o, c in zip(old, new, strict=True):
                if o.depends_on_id in mapped:
                    c.depends_on_id = mapped[o.depends_on_id].pk
                    changed.append(c)
            Variant.objects.bulk_update(changed, ["depends_on"], batch_size=500)
    cache.bump_version()  # bulk writes send no signals
    started = time.perf_counter()
    # As an import does before it commits: the new branches' audit findings and the snapshots.
    stale = len(audit_store.stale_branch_ids())
    cache.store_derived()
    print(
        f"audit findings of {stale} new branches and the snapshots stored in "
        f"{time.perf_counter() - started:.1f} s (write time)",
        file=sys.stderr,
    )


def requests():
    from catalog.models import Variant

    detail = (
        Variant.objects.select_related("branch")
        .filter(branch__repository="build-pytorch", branch__name="main", gpu_arch__sm="sm90")
        .order_by("pname")
        .first()
    )
    answers = {"os": "linux", "arch": "x86_64", "gpu": "H100", "isa": "avx512"}
    return [
        ("/ (selector)", "get", "/", None),
        ("/variants/", "get", "/variants/", None),
        ("/variants/?view=grid", "get", "/variants/?view=grid", None),
        ("/api/variants", "get", "/api/variants", None),
        ("/architectures/sm90/", "get", "/architectures/sm90/", None),
        ("/audit/", "get", "/audit/", None),
        ("/wizard/", "get", "/wizard/", None),
        (
            "/wizard/ H100 answer",
            "get",
            "/wizard/?"
            + "&".join(
                f"{k}={v}" for k, v in {**answers, "has_gpu": "yes", "workload": "general"}.items()
            ),
            None,
        ),
        ("POST /api/recommend", "post", "/api/recommend", json.dumps(answers)),
        ("variant page", "get", detail.get_absolute_url(), None),
    ]


def _request(client, method, url, body):
    start = time.perf_counter()
    if method == "post":
        response = client.post(url, body, content_type="application/json")
    else:
        response = client.get(url)
    content = b"".join(response.streaming_content) if response.streaming else response.content
    elapsed = (time.perf_counter() - start) * 1000
    if response.status_code != 200:
        sys.exit(f"{url} answered {response.status_code}")
    return elapsed, len(content)


def record_a_build(n: int) -> None:
    """What CI does after each build: one variant's status changes."""
    from catalog import services

    services.record_build(
        repository="build-pytorch",
        branch="main",
        pname="pytorch-python313-cpu-avx2",
        status=("failed", "built")[n % 2],
    )


def measure(client, method, url, body, runs):
    """(cold ms, KB, ms after a build record): cold clears every cache first; the other comes
    after a warm request and one build record, as a visitor meets the site while CI reports."""
    from django.core.cache import caches

    from catalog import cache as catalogue_cache

    cold, size = [], 0
    for _ in range(runs + 1):  # the first one warms imports and templates, not counted
        # Every alias, the versions' own included: a new version is what a write leaves, so
        # each process's in-memory copies (selector index, wizard snapshot) are retired too.
        for alias in caches:
            caches[alias].clear()
        catalogue_cache._local.clear()
        elapsed, size = _request(client, method, url, body)
        cold.append(elapsed)
    after_build = []
    for n in range(runs):
        _request(client, method, url, body)
        record_a_build(n)
        after_build.append(_request(client, method, url, body)[0])
    return statistics.median(cold[1:]), size, statistics.median(after_build)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3, help="cold requests per figure (median)")
    parser.add_argument("--sizes", default="1,4,16", help="catalogue multiples, ascending")
    parser.add_argument("--keep", help="keep the database at this path (default: a temp file)")
    parser.add_argument("--pages", default="", help="only pages whose label contains one of these")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    workdir = tempfile.mkdtemp(prefix="catalogue-scale-")
    database = Path(args.keep) if args.keep else Path(workdir) / "scale.sqlite3"
    database.unlink(missing_ok=True)
    configure(database)
    build_base()

    from django.test import Client

    from catalog.models import Variant

    client = Client()
    results, counts, made = {}, [], 1
    for size in sizes:
        grow(size - made, made)
        made = size
        counts.append(Variant.objects.count())
        wanted = [w for w in args.pages.split(",") if w]
        for label, method, url, body in requests():
            if wanted and not any(w in label for w in wanted):
                continue
            results.setdefault(label, []).append(measure(client, method, url, body, args.n))
        print(f"{size}×: {counts[-1]:,} variants measured", file=sys.stderr)

    head = " | ".join(f"{s}× ({c:,} variants)" for s, c in zip(sizes, counts, strict=True))
    print(f"| page / answer | {head} | {sizes[-1]}× / 1× cold |")
    print("|---|" + "---|" * (len(sizes) + 1))
    for label, figures in results.items():
        cells = " | ".join(
            f"{ms:.0f} ms, {kb / 1024:.0f} KB; {after:.0f} ms" for ms, kb, after in figures
        )
        ratio = figures[-1][0] / figures[0][0]
        print(f"| {label} | {cells} | {ratio:.1f} |")
    print(
        f"\ncold ms, KB; ms after a build record. Median of {args.n} requests (Django test "
        "client): cold with every cache cleared first; after a build record with the cache warm "
        "before it."
    )


if __name__ == "__main__":
    main()
