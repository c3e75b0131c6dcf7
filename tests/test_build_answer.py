"""No command without its status: the selector, the wizard and the variant page show a build's
status (and, when it is not built, the nearest variant further along) before its commands,
through one component (templates/partials/build_answer.html)."""

import pytest

from catalog import queries
from catalog.build_commands import nearest_further
from catalog.models import Variant
from catalog.wizard.snapshot import VariantInfo
from tests.conftest import clear_caches

pytestmark = pytest.mark.django_db

PLANNED = "/variants/build-pytorch/pytorch-2.10-python313/pytorch-python313-cuda13_0-sm90-armv8_2/"


def status_then_commands(body: str) -> str:
    start = body.index('data-testid="build-status"')
    assert start < body.index("git clone ") < body.index("flox publish -o ")
    return body[start : body.index("git clone ")]


def test_home_selector_says_planned_before_the_commands(client):
    body = client.get("/", {"gpu": "sm121", "isa": "armv9", "library": "pytorch"}).content.decode()
    block = status_then_commands(body)
    assert "Planned" in block and "not buildable yet" in block
    assert 'href="/docs/overview/#statuses"' in block


def test_variant_page_names_the_nearest_variant_further_along(client):
    block = status_then_commands(client.get(PLANNED).content.decode())
    assert "Planned" in block
    assert "pytorch-python313-cuda12_8-sm90-armv8_2</code></a> (recipe)" in block
    assert "branch main instead of pytorch-2.10-python313; CUDA 12.8 instead of 13.0" in block


def test_a_built_variant_becomes_the_nearest_for_a_recipe(client):
    built = Variant.objects.get(branch__name="pytorch-2.9-python313", pname__endswith="sm90-avx512")
    built.status = "built"
    built.save()
    recipe = Variant.objects.get(branch__name="main", pname=built.pname.replace("12_9", "12_8"))
    block = status_then_commands(client.get(recipe.get_absolute_url()).content.decode())
    assert "Recipe" in block and f"{built.pname}</code></a> (built)" in block
    built_block = status_then_commands(client.get(built.get_absolute_url()).content.decode())
    assert "Built" in built_block and "Nearest" not in built_block


def test_wizard_answer_has_the_status_and_the_organisation_fill_in(client):
    answers = {"os": "linux", "arch": "x86_64", "has_gpu": "yes", "compute_cap": "9.0"}
    answers |= {"isa": "avx512", "workload": "general", "library": ""}
    body = client.get("/wizard/", answers).content.decode()
    block = status_then_commands(body)
    assert "Status:" in block
    assert 'name="org"' in block and 'action="/variants/build-pytorch/' in block


def test_organisation_fills_in_the_publish_and_install_commands(client):
    body = client.get(PLANNED, {"org": "acme"}).content.decode()
    assert "flox publish -o acme pytorch-python313-cuda13_0-sm90-armv8_2" in body


def record(pname, status, **fields):
    base = dict(
        repository="build-pytorch",
        branch="main",
        library="pytorch",
        backend="cuda",
        platform="x86_64-linux",
        python_version="3.13",
        cuda_version="12.8",
        sm="sm90",
        isa="avx2",
    )
    return VariantInfo(pname=pname, status=status, **{**base, **fields})


def test_nearest_further_keeps_the_hardware_and_prefers_fewest_differences():
    planned = record("a", "planned", branch="next", cuda_version="13.0")
    others = [
        record("other-gpu", "built", sm="sm89"),
        record("two-diffs", "recipe", branch="main"),
        record("one-diff", "recipe", branch="next", cuda_version="12.9"),
        record("same-planned", "planned", branch="next", isa="avx"),
    ]
    found, diffs = nearest_further(planned, others)
    assert found.pname == "one-diff" and diffs == ["CUDA 12.9 instead of 13.0"]
    assert nearest_further(record("b", "built"), others) is None


def test_the_variant_pages_narrow_query_picks_what_the_engine_picks_from_every_variant():
    # Some variants further along, on other branches and CUDA versions, so ties and
    # differences are exercised beside the seed's planned and recipe variants.
    Variant.objects.filter(pname__endswith="sm90-avx512", cuda_version="12.9").update(
        status="built"
    )
    Variant.objects.filter(pname__endswith="sm89-avx2", python_version="3.12").update(
        status="published"
    )
    Variant.objects.filter(pname__contains="cpu").exclude(branch__name="main").update(
        status="failed"
    )
    catalogue = queries.recommend_catalogue()
    variants = Variant.objects.select_related("branch", "gpu_arch", "cpu_isa")
    picked = 0
    for variant in variants:
        expected = nearest_further(queries._variant_info(variant), catalogue.variants)
        assert queries.nearest_further(variant) == expected, variant
        picked += expected is not None
    assert picked > 50  # the comparison covered real answers, not only "nothing further"


def test_the_variant_page_does_not_load_the_whole_catalogues_snapshot(client):
    clear_caches()
    queries._RECOMMEND_MEMO.clear()
    block = status_then_commands(client.get(PLANNED).content.decode())
    assert "branch main instead of pytorch-2.10-python313; CUDA 12.8 instead of 13.0" in block
    assert queries._RECOMMEND_MEMO == {}
