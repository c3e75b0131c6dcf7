"""Built, published, cached — what people see: the variant page, the matrix column and its
"cached only" filter, /api/variants, the selector's answer and the wizard's answer (page and
JSON); the nearest cached stand-in and the build-time estimate when a variant is cached nowhere.

Cache answers come from `check-caches` against a real HTTP cache (tests/cache_server.py)."""

from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from catalog import availability, services
from catalog.models import BinaryCache

pytestmark = pytest.mark.django_db

REPO, BRANCH = "build-pytorch", "main"
SM90 = "pytorch-python313-cuda12_8-sm90-avx512"
SM86_AVX512 = "pytorch-python313-cuda12_8-sm86-avx512"
SM86_AVX = "pytorch-python313-cuda12_8-sm86-avx"
SM80_AVX2 = "pytorch-python313-cuda12_8-sm80-avx2"
SM80_BF16 = "pytorch-python313-cuda12_8-sm80-avx512bf16"
GIB = 2**30


def path(n: int) -> str:
    return f"/nix/store/{n:032d}-python3.13-torch-2.9.1"


def build(pname: str, *outputs: str, duration: int | None = None, **extra):
    return services.record_build(
        repository=REPO,
        branch=BRANCH,
        pname=pname,
        status="built",
        outputs=outputs,
        duration_seconds=duration,
        **extra,
    )


def check(server) -> None:
    try:
        call_command("check-caches", "--retries", "0", stdout=StringIO(), stderr=StringIO())
    except CommandError as exc:
        assert exc.returncode == 1  # some failed: the rest is stored


@pytest.fixture
def server():
    from tests.cache_server import CacheServer

    with CacheServer(slow_seconds=1.0) as running:
        BinaryCache.objects.create(name="ours", url=f"{running.url}/ok")
        yield running


@pytest.fixture
def sm90_cached(server):
    server.add(path(1), nar_size=3 * GIB, file_size=GIB)
    build(SM90, path(1), duration=7200, flox_catalog="myorg", flox_version="2.9.1")
    check(server)


# --- the rules (pure) --------------------------------------------------------------------------


def entry(name, present, file_size=10, since=None):
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return {
        "cache__name": name,
        "cache__url": f"https://{name}.example.org",
        "cache__priority": 10,
        "present": present,
        "file_size": file_size,
        "nar_size": 30,
        "checked_at": now,
        "present_since": since or now,
        "error": "",
    }


def test_a_cache_counts_only_when_it_holds_every_output():
    copies = availability.cached_copies(
        2,
        [entry("a", True), entry("a", True), entry("b", True), entry("c", True), entry("c", False)],
    )
    assert [c.name for c in copies] == ["a"]
    assert copies[0].download_bytes == 20


def test_the_estimate_is_the_median_with_its_count_or_says_there_is_none():
    assert availability.estimate([]).text == "no recorded builds on this branch to estimate from"
    three = availability.estimate([3600, 9000, 5400])
    assert (three.median_seconds, three.count) == (5400, 3)
    assert three.text == "about 1 h 30 min (median of 3 recorded builds)"


# --- the pages and answers ----------------------------------------------------------------------


def test_the_variant_page_says_cached_where_since_when_and_the_download_size(client, sm90_cached):
    body = client.get(f"/variants/{REPO}/{BRANCH}/{SM90}/").content.decode()
    assert "Cached — nothing to compile." in body
    assert "Download 1.0\xa0GB (3.0\xa0GB unpacked)" in body
    assert ">ours</a>, since <time" in body
    assert "Flox catalog <code>myorg 2.9.1</code>" in body
    assert path(1) in body  # the build history names the output


def test_an_uncached_variant_names_the_nearest_cached_one_and_an_honest_estimate(client, server):
    for n, pname in enumerate([SM80_AVX2, SM80_BF16, SM86_AVX, SM90], start=10):
        server.add(path(n))
        build(pname, path(n), duration=3600)
    build(SM86_AVX512, duration=7200)  # built, with no outputs recorded
    check(server)
    body = client.get(f"/variants/{REPO}/{BRANCH}/{SM86_AVX512}/").content.decode()
    assert "Built, but in no configured binary cache" in body
    # Same family (Ampere), a GPU it can run on and an ISA no higher: the closest GPU wins.
    assert "Nearest cached variant (same GPU family, same or lower ISA): <a href=" in body
    assert f"<code>{SM86_AVX}</code>" in body.split("Nearest cached variant")[1][:300]
    assert "about 1 h 00 min (median of 5 recorded builds)" in body


def test_a_variant_nothing_stands_in_for_says_so(client):
    body = client.get(f"/variants/{REPO}/{BRANCH}/{SM90}/").content.decode()
    assert "Not built yet." in body
    assert "No cached variant runs on the same hardware." in body
    assert "no recorded builds on this branch to estimate from" in body


def test_the_page_keeps_the_last_known_state_with_its_age_when_a_check_fails(client, server):
    server.add(path(2))
    build(SM90, path(2))
    check(server)
    BinaryCache.objects.filter(name="ours").update(url=f"{server.url}/broken")
    check(server)
    body = client.get(f"/variants/{REPO}/{BRANCH}/{SM90}/").content.decode()
    assert "Cached — nothing to compile." in body
    assert "the last check failed: HTTP 500 — this is the last known state" in body
    assert "(checked 0\xa0minutes ago" in body


def test_the_matrix_shows_a_cached_column_and_filters_cached_only(client, sm90_cached, server):
    build(SM86_AVX512, path(3))  # built, absent from the cache
    check(server)
    page = client.get("/variants/?gpu=sm90&gpu=sm86&per_page=200").content.decode()
    assert '<th scope="col">Cached</th>' in page
    assert "cached · ours · 1.0\xa0GB" in page
    assert "built, not cached" in page
    only = client.get("/variants/?cached=1").content.decode()
    assert 'data-testid="result-count">1<' in only and SM90 in only
    assert 'name="cached" value="1" id="id_cached" aria-describedby="cached-help" checked' in only


def test_cached_only_refuses_a_bad_value(client):
    assert client.get("/variants/?cached=yes").status_code == 400
    response = client.get("/api/variants?cached=2")
    assert response.status_code == 400 and "cached" in response.json()["fields"]


def test_api_variants_carries_the_same_fields(client, sm90_cached):
    [record] = client.get("/api/variants?cached=1").json()["results"]
    assert record["pname"] == SM90
    assert record["built"] is True and record["cached"] is True
    assert record["download_bytes"] == GIB and record["nar_bytes"] == 3 * GIB
    assert record["published"] == {"flox": "myorg 2.9.1", "binary_cache": None}
    [copy] = record["caches"]
    assert copy["name"] == "ours" and copy["since"] and copy["last_check_failed"] is None


def test_the_selector_answer_says_where_it_is_cached(client, sm90_cached):
    from tests.test_selector import SM90_CHOICES

    body = client.get("/", SM90_CHOICES).content.decode()
    assert 'id="selector-pname">' + SM90 in body
    assert "Cached — nothing to compile." in body


def test_the_wizard_answer_page_and_json_carry_availability(client, sm90_cached):
    from tests.test_wizard_pages import RESULT

    page = client.get("/wizard/", RESULT).content.decode()
    assert "<strong>Cached</strong> in ours since" in page and "download 1.0\xa0GB" in page
    from tests.test_wizard_api import ZEN4

    answer = client.get(
        "/api/recommend", {"os": "linux", "arch": "x86_64", "gpu": "H100", "cpu_flags": ZEN4}
    ).json()
    variant = answer["variant"]
    assert variant["pname"] == SM90
    assert variant["cached"] is True and variant["caches"][0]["name"] == "ours"
    assert "nearest_cached" not in variant  # only for a pick cached nowhere


def test_the_wizard_json_names_the_nearest_cached_variant_when_its_pick_is_not(client, server):
    server.add(path(4))
    build(SM80_AVX2, path(4), duration=600)
    check(server)
    answer = client.get(
        "/api/recommend", {"os": "linux", "arch": "x86_64", "gpu": "RTX 3090", "cpu_flags": "avx2"}
    ).json()
    variant = answer["variant"]
    assert variant["cached"] is False
    assert variant["nearest_cached"]["pname"] == SM80_AVX2
    assert variant["build_estimate"]["based_on_builds"] == 1


def test_present_since_is_shown_as_the_time_it_first_appeared(client, server):
    from catalog.models import CacheEntry

    server.add(path(5))
    build(SM90, path(5))
    check(server)
    first = timezone.now() - timedelta(days=3)
    CacheEntry.objects.update(present_since=first)
    check(server)  # still there: the time it first appeared stays
    body = client.get(f"/variants/{REPO}/{BRANCH}/{SM90}/").content.decode()
    assert f'since <time datetime="{first.isoformat()}">{first:%Y-%m-%d %H:%M} UTC' in body


def test_a_check_shows_on_the_cached_matrix_at_once(client, server):
    server.add(path(6))
    build(SM90, path(6))
    before = client.get("/variants/?gpu=sm90&isa=avx512").content.decode()
    assert "built, not cached" in before  # rendered and cached before the check
    check(server)
    after = client.get("/variants/?gpu=sm90&isa=avx512").content.decode()
    assert "cached · ours" in after


def test_caches_are_configured_in_the_admin_with_http_urls_only(admin_client):
    url = "/admin/catalog/binarycache/add/"
    bad = admin_client.post(url, {"name": "ftp", "url": "ftp://cache.example.org", "priority": 5})
    assert bad.status_code == 200 and not BinaryCache.objects.filter(name="ftp").exists()
    good = admin_client.post(
        url, {"name": "ours", "url": "https://cache.example.org", "priority": 5, "enabled": "on"}
    )
    assert good.status_code == 302
    assert BinaryCache.objects.get(name="ours").url == "https://cache.example.org"


def test_a_long_id_list_gives_the_same_summaries_as_a_short_one(sm90_cached):
    from catalog import queries
    from catalog.models import Variant

    sm90 = Variant.objects.get(branch__repository=REPO, branch__name=BRANCH, pname=SM90)
    many = [sm90.pk, *range(10**6, 10**6 + queries.MAX_ID_PARAMETERS + 5)]
    assert queries.availability(many) == queries.availability([sm90.pk])
    assert queries.availability(many)[sm90.pk].cached


def test_the_grid_marks_cached_variants(client, sm90_cached):
    grid = client.get("/variants/?view=grid&gpu=sm90").content.decode()
    assert grid.count('<span class="status status-cached">cached</span>') == 1
    cell = grid.split(f'title="{SM90}"', 1)[1].split("</td>", 1)[0]
    assert "cached</span>" in cell
