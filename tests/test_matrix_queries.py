"""The matrix's query count does not grow with the catalogue: seed size and four times that."""

import pytest
from django.core.cache import cache

from catalog import cache as catalogue_cache
from catalog.models import Branch, Variant

pytestmark = pytest.mark.django_db
# Cold cache: the filters' choices (4 queries) and the variants (1); a page adds one count per
# facet (10), the paginator's count (1) and its build summaries (1, and 1 more for cache entries
# once any build recorded outputs). The same bound at every size.
DATA_QUERIES = 6
SUMMARY_QUERIES = 2
PAGE_QUERIES = DATA_QUERIES + 10 + 1 + SUMMARY_QUERIES
PAGES = [
    "/variants/",
    "/variants/?view=grid",
    "/variants/?q=H100&sort=-gpu",
    "/api/variants",
    "/variants/?format=csv",
]


def max_queries(url):
    if url.startswith("/api/"):
        return DATA_QUERIES + SUMMARY_QUERIES
    return (
        PAGE_QUERIES if url.startswith("/variants/") and "format=csv" not in url else DATA_QUERIES
    )


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


@pytest.mark.parametrize("url", PAGES)
def test_query_count_at_seed_size(client, django_assert_max_num_queries, url):
    cache.clear()
    with django_assert_max_num_queries(max_queries(url)):
        response = client.get(url)
    assert response.status_code == 200


@pytest.mark.parametrize("url", PAGES)
def test_query_count_at_four_times_the_seed(client, django_assert_max_num_queries, url):
    seed = Variant.objects.count()
    grow_catalogue(3)
    assert Variant.objects.count() == 4 * seed
    cache.clear()
    with django_assert_max_num_queries(max_queries(url)):
        response = client.get(url)
    assert response.status_code == 200
    if url == "/api/variants":
        assert response.json()["count"] == 4 * seed
