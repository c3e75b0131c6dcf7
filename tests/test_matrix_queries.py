"""Query counts do not grow with the catalogue: every page and answer costs the same number of
queries, cold, at the seed's size and at four times that."""

import json

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog import cache as catalogue_cache
from catalog import queries
from catalog.models import Branch, Variant
from tests.conftest import clear_caches

pytestmark = pytest.mark.django_db
VARIANT = "/variants/build-pytorch/main/pytorch-python313-cuda12_8-sm90-avx512/"
H100 = {"os": "linux", "arch": "x86_64", "gpu": "H100", "isa": "avx512"}
PAGES = [
    "/",
    "/variants/",
    "/variants/?view=grid",
    "/variants/?q=H100&sort=-gpu",
    "/variants/?format=csv",
    "/api/variants",
    "/api/variants?format=jsonl",
    "/api/variants?format=csv",
    "/architectures/sm90/",
    "/audit/",
    "/wizard/",
    "POST /api/recommend",
    VARIANT,
]
# Cold matrix page: the filters' choices (4 queries) and the variants (1); a page adds one count
# per facet (10) and the paginator's count (1); the grid its branch list and count (2); the
# shown variants' build summaries (1, and 1 more for cache entries once a build has outputs).
SUMMARY_QUERIES = 2
MATRIX_QUERIES = 6 + 10 + 1 + 1 + SUMMARY_QUERIES


def grow_catalogue(copies):
    """Clone every branch with all its variants `copies` times, in bulk."""
    fields = [f.attname for f in Variant._meta.concrete_fields if f.attname != "id"]
    originals = list(Branch.objects.all())
    variants = list(Variant.objects.all())
    for n in range(copies):
        for branch in originals:
            clone = Branch.objects.get(pk=branch.pk)
            clone.pk = None
            clone.name = f"{branch.name}-copy{n}"
            clone.is_default = False
            clone.save()
            Variant.objects.bulk_create(
                Variant(**{**{f: getattr(v, f) for f in fields}, "branch_id": clone.pk})
                for v in variants
                if v.branch_id == branch.pk
            )
    catalogue_cache.bump_version()  # bulk_create sends no signals
    catalogue_cache.store_derived()  # as writers do: the audit findings and the snapshots


def cold_queries(client, page):
    """The queries one cold request for `page` runs (streamed bodies read to their end)."""
    clear_caches()
    queries._RECOMMEND_MEMO.clear()
    queries._SEARCH_MEMO.clear()
    with CaptureQueriesContext(connection) as ran:
        if page.startswith("POST "):
            response = client.post(page[5:], json.dumps(H100), content_type="application/json")
        else:
            response = client.get(page)
        body = b"".join(response.streaming_content) if response.streaming else response.content
    assert response.status_code == 200, (page, body[:200])
    return len(ran)


def test_every_page_costs_the_same_queries_at_four_times_the_seed(client):
    seed = {page: cold_queries(client, page) for page in PAGES}
    assert seed["/variants/?view=grid"] <= MATRIX_QUERIES
    assert seed["/api/variants"] <= 8 + SUMMARY_QUERIES
    size = Variant.objects.count()
    grow_catalogue(3)
    assert Variant.objects.count() == 4 * size
    grown = {page: cold_queries(client, page) for page in PAGES}
    assert grown == seed


def test_api_count_is_every_variant_at_four_times_the_seed(client):
    size = Variant.objects.count()
    grow_catalogue(3)
    cache.clear()
    data = client.get("/api/variants").json()
    assert data["count"] == 4 * size
    assert len(data["results"]) == 100
