"""A build outcome bumps the status version only: structure caches (selector, filter choices,
the wizard's snapshot) stay warm, and whatever shows statuses shows the new one at once."""

import json

import pytest
from django.core.cache import cache as django_cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog import cache, queries, services
from catalog.models import Variant

pytestmark = pytest.mark.django_db

REPO, BRANCH = "build-pytorch", "main"
PNAME = "pytorch-python313-cuda12_8-sm90-avx512"
H100 = {"os": "linux", "arch": "x86_64", "gpu": "H100", "isa": "avx512"}


@pytest.fixture(autouse=True)
def fresh_cache():
    django_cache.clear()
    queries._RECOMMEND_MEMO.clear()


def record(status):
    services.record_build(repository=REPO, branch=BRANCH, pname=PNAME, status=status)


def recommend(client):
    response = client.post("/api/recommend", json.dumps(H100), content_type="application/json")
    assert response.status_code == 200
    return response.json()


def test_a_build_record_bumps_status_not_structure():
    structure, status = cache.structure_version(), cache.status_version()
    record("failed")
    assert cache.structure_version() == structure
    assert cache.status_version() != status


def test_an_edit_of_a_variant_bumps_both():
    structure, status = cache.structure_version(), cache.status_version()
    variant = Variant.objects.get(branch__repository=REPO, branch__name=BRANCH, pname=PNAME)
    variant.notes = "edited"
    variant.save()
    assert cache.structure_version() != structure
    assert cache.status_version() != status


def test_the_wizard_sees_the_new_status_without_rebuilding_its_snapshot(client, monkeypatch):
    before = recommend(client)
    assert before["variant"]["pname"] == PNAME
    assert before["variant"]["status"] == "recipe"
    builds = []
    rebuild = queries._build_recommend_rows
    monkeypatch.setattr(queries, "_build_recommend_rows", lambda v: builds.append(v) or rebuild(v))
    record("failed")
    after = recommend(client)
    assert builds == []
    assert after["variant"]["pname"] == PNAME
    assert after["variant"]["status"] == "failed"
    assert any("'failed'" in w for w in after["warnings"])


def test_the_selector_stays_cached_across_a_build_record(client):
    htmx = {"HTTP_HX_REQUEST": "true"}
    first = client.get("/select/?gpu=sm90", **htmx)
    assert first.status_code == 200
    record("failed")
    with CaptureQueriesContext(connection) as ran:
        again = client.get("/select/?gpu=sm90", **htmx)
    assert again.content == first.content
    assert len(ran) == 0


def test_the_matrix_shows_the_new_status_at_once(client):
    url = f"/api/variants?q={PNAME}&branch=main"
    assert client.get(url).json()["results"][0]["status"] == "recipe"
    record("failed")
    assert client.get(url).json()["results"][0]["status"] == "failed"
