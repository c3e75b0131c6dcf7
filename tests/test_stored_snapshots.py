"""The selector's index is stored in the database by the writers, at the structure revision
their write made: a cold process (every cache cleared) loads it with one query instead of
reading every variant, and never takes an older one for current."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog import cache
from catalog.browse.views import select
from catalog.models import StoredSnapshot, StructureRevision, Variant
from tests.conftest import clear_caches
from tests.nix_data import BUILD_PYTORCH, need_real

pytestmark = pytest.mark.django_db


def revision() -> int:
    return StructureRevision.objects.get(pk=1).number


def stored_revision() -> int:
    return StoredSnapshot.objects.get(name="selector-index").revision


def cold_home(client) -> tuple[str, list[str]]:
    clear_caches()
    select._MEMO.clear()
    with CaptureQueriesContext(connection) as ran:
        html = client.get("/").content.decode()
    return html, [q["sql"] for q in ran]


def reads_every_variant(sql: list[str]) -> bool:
    return any('FROM "catalog_variant"' in q and "gpu_arch" in q and "LIMIT" not in q for q in sql)


def test_the_seeded_catalogue_has_its_index_stored_and_a_cold_page_loads_it(client):
    assert stored_revision() == revision()
    html, sql = cold_home(client)
    assert 'data-value="build-pytorch/main"' in html
    assert not reads_every_variant(sql)
    assert sum('"catalog_storedsnapshot"' in q for q in sql) == 1


def test_an_import_stores_the_index_with_the_new_branch(client):
    need_real()
    call_command(
        "import-recipes",
        str(BUILD_PYTORCH.parent.parent),
        repository="build-pytorch",
        branch="pytorch-2.8-python312-again",
        stdout=StringIO(),
        stderr=StringIO(),
    )
    assert stored_revision() == revision()  # stored by the import, at the revision it made
    html, sql = cold_home(client)
    assert 'data-value="build-pytorch/pytorch-2.8-python312-again"' in html
    assert not reads_every_variant(sql)


def test_a_write_without_a_store_makes_the_index_older_and_it_is_built_again(client):
    before = stored_revision()
    # pytorch-2.8-python312's CPU variants have no companions depending on them.
    variant = Variant.objects.filter(branch__name="pytorch-2.8-python312", backend="cpu").first()
    variant.delete()  # as the admin deletes: the revision moves, nothing is stored
    assert revision() > before and stored_revision() == before
    html, sql = cold_home(client)
    assert reads_every_variant(sql)  # the older index is not used
    assert stored_revision() == revision()  # and the one built is stored for the next process
    index = select.rows()
    assert index.size == Variant.objects.count()
    assert f"\tpytorch-2.8-python312\t{variant.pname}\t" not in index.lines
    _, again = cold_home(client)
    assert not reads_every_variant(again)


def test_a_snapshot_from_another_release_is_built_again(client):
    StoredSnapshot.objects.filter(name="selector-index").update(data=b"not a pickle")
    html, sql = cold_home(client)
    assert 'data-value="build-pytorch/main"' in html
    assert reads_every_variant(sql)
    assert cache.snapshot("selector-index").size == Variant.objects.count()


def test_the_wizard_snapshot_is_stored_and_a_build_record_is_laid_on_top(client):
    from catalog import queries, services

    assert StoredSnapshot.objects.get(name="recommend-table").revision == revision()
    services.record_build(
        repository="build-pytorch",
        branch="main",
        pname="pytorch-python313-cpu-avx2",
        status="failed",
    )
    assert StoredSnapshot.objects.get(name="recommend-table").revision == revision()
    clear_caches()
    queries._RECOMMEND_MEMO.clear()
    with CaptureQueriesContext(connection) as ran:
        catalogue = queries.recommend_catalogue()
    assert not reads_every_variant([q["sql"] for q in ran])
    [variant] = [
        v
        for v in catalogue.variants
        if (v.repository, v.branch, v.pname)
        == ("build-pytorch", "main", "pytorch-python313-cpu-avx2")
    ]
    assert variant.status == "failed"
    assert len(catalogue.variants) == Variant.objects.count()


def test_the_default_matrix_counts_come_from_the_stored_snapshot_and_statuses_live(client):
    from django.http import QueryDict

    from catalog import services
    from catalog.browse.filters import FACETS, VariantFilter

    def counts() -> tuple[dict, dict]:
        unfiltered = VariantFilter(QueryDict())
        assert unfiltered.form.is_valid()
        return unfiltered.facet_counts(), unfiltered._counts(FACETS)

    stored, live = counts()
    assert stored == live
    failed = stored["status"].get("failed", 0)
    services.record_build(
        repository="build-pytorch",
        branch="main",
        pname="pytorch-python313-cpu-avx2",
        status="failed",
    )
    stored, live = counts()
    assert stored == live and stored["status"]["failed"] == failed + 1
    clear_caches()
    with CaptureQueriesContext(connection) as ran:
        assert client.get("/variants/").status_code == 200
    facets = [q["sql"] for q in ran if q["sql"].endswith('FROM "catalog_variant" GROUP BY 1')]
    facets += [q["sql"] for q in ran if "GROUP BY" in q["sql"] and "catalog_cpuisa" in q["sql"]]
    assert len(facets) == 1 and '"catalog_variant"."status" AS "status"' in facets[0]


def test_a_cold_answer_builds_records_only_for_the_hardware_asked_about(client):
    """The wizard's stored snapshot keeps its variants as one string per hardware: a cold
    answer for an H100 builds the records of that hardware alone, and the same answer comes
    from the compact form as from every record."""
    from catalog import queries
    from catalog.wizard.snapshot import Catalogue, VariantTable

    clear_caches()
    queries._RECOMMEND_MEMO.clear()
    answers = {"os": "linux", "arch": "x86_64", "gpu": "H100", "isa": "avx512"}
    response = client.post("/api/recommend", answers, content_type="application/json")
    assert response.status_code == 200
    table = queries.recommend_catalogue().variants
    assert isinstance(table, VariantTable) and "all" not in table._built
    assert set(table._built) == {("cuda", "sm90", "x86_64-linux")}
    assert 0 < len(table._built[("cuda", "sm90", "x86_64-linux")]) < table.size / 4

    every = Catalogue(
        variants=tuple(table),
        branches=queries.recommend_catalogue().branches,
        architectures=queries.recommend_catalogue().architectures,
        gpu_models=queries.recommend_catalogue().gpu_models,
        isas=queries.recommend_catalogue().isas,
    )
    assert len(every.variants) == Variant.objects.count() == len(table)
    compact = queries.recommend_catalogue()
    assert set(compact.hardware()) == set(every.hardware())
    for key in every.hardware():
        assert compact.variants_for(*key) == every.variants_for(*key)
    first = every.variants[0]
    assert compact.variant_named(first.repository, first.branch, first.pname) == first
    assert compact.variant_named(first.repository, first.branch, "no-such-variant") is None
    from_records = client.post("/api/recommend", answers, content_type="application/json")
    assert from_records.json() == response.json()


@pytest.mark.parametrize(
    "url",
    [
        "/wizard/",
        "/wizard/?os=linux&arch=x86_64&gpu=H100&isa=avx512&has_gpu=yes&workload=general",
    ],
)
def test_the_wizard_pages_build_no_record_of_other_hardware_when_cold(client, url):
    from catalog import queries

    clear_caches()
    queries._RECOMMEND_MEMO.clear()
    response = client.get(url)
    assert response.status_code == 200
    built = queries.recommend_catalogue().variants._built
    assert "all" not in built
    assert set(built) <= {("cuda", "sm90", "x86_64-linux")}


def test_an_answer_reads_the_statuses_of_its_hardware_only(client):
    from catalog import queries, services

    variant = Variant.objects.filter(
        backend="cuda", gpu_arch__sm="sm90", platform="x86_64-linux"
    ).first()
    services.record_build(
        repository=variant.branch.repository,
        branch=variant.branch.name,
        pname=variant.pname,
        status="failed",
    )
    clear_caches()
    queries._RECOMMEND_MEMO.clear()
    catalogue = queries.recommend_catalogue()
    with CaptureQueriesContext(connection) as ran:
        group = catalogue.variants_for("cuda", "sm90", "x86_64-linux")
        catalogue.variants_for("cuda", "sm90", "x86_64-linux")  # built once
    [query] = [q["sql"] for q in ran]
    assert "WHERE" in query and "x86_64-linux" in query
    [found] = [v for v in group if v.pname == variant.pname and v.branch == variant.branch.name]
    assert found.status == "failed"
    named = catalogue.variant_named(variant.branch.repository, variant.branch.name, variant.pname)
    assert named.status == "failed"
    assert len(group) < Variant.objects.count()
