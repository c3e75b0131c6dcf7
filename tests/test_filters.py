"""Every filter of the variant matrix, through /api/variants (same FilterSet as the page)."""

import pytest
from django.core.cache import cache

from catalog.models import Variant

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


def results(client, query):
    """Every match, following the pages' `next` links."""
    response = client.get(f"/api/variants?{query}")
    assert response.status_code == 200, response.content
    data = response.json()
    rows = data["results"]
    while data["next"]:
        data = client.get(data["next"].removeprefix("http://testserver")).json()
        rows += data["results"]
    assert data["count"] == len(rows)
    return rows


def in_branch(repository, name):
    return Variant.objects.filter(branch__repository=repository, branch__name=name).count()


def test_no_filter_lists_every_variant(client):
    assert len(results(client, "")) == Variant.objects.count() > 0


def test_repository(client):
    rows = results(client, "repository=build-torchvision")
    assert rows and {r["repository"] for r in rows} == {"build-torchvision"}
    assert len(rows) == Variant.objects.filter(branch__repository="build-torchvision").count()


def test_branch_name_spans_repositories(client):
    rows = results(client, "branch=main")
    assert {r["repository"] for r in rows} == {"build-pytorch", "build-torchvision"}
    assert {r["branch"] for r in rows} == {"main"}
    assert len(rows) == Variant.objects.filter(branch__name="main").count()


def test_branch_with_repository_picks_one_branch(client):
    rows = results(client, "branch=main&repository=build-torchvision")
    assert len(rows) == in_branch("build-torchvision", "main")
    assert {(r["repository"], r["branch"]) for r in rows} == {("build-torchvision", "main")}


def test_several_branches_are_alternatives(client):
    rows = results(client, "branch=cuda-12_9&branch=cuda-13_0")
    assert {r["branch"] for r in rows} == {"cuda-12_9", "cuda-13_0"}
    assert len(rows) == in_branch("build-torchvision", "cuda-12_9") + in_branch(
        "build-torchvision", "cuda-13_0"
    )


def test_library(client):
    rows = results(client, "library=torchaudio")
    assert rows and {r["library"] for r in rows} == {"torchaudio"}
    assert len(rows) == Variant.objects.filter(library="torchaudio").count()


def test_backend(client):
    rows = results(client, "backend=mps")
    assert len(rows) == 8
    assert {(r["backend"], r["platform"], r["gpu"], r["isa"]) for r in rows} == {
        ("mps", "aarch64-darwin", None, None)
    }


def test_gpu_several_values(client):
    rows = results(client, "gpu=sm89&gpu=sm90")
    assert {r["gpu"] for r in rows} == {"sm89", "sm90"}
    assert len(rows) == Variant.objects.filter(gpu_arch__sm__in=["sm89", "sm90"]).count()


def test_gpu_none_means_cpu_and_mps(client):
    rows = results(client, "gpu=none")
    assert {r["backend"] for r in rows} == {"cpu", "mps"}
    assert len(rows) == Variant.objects.filter(gpu_arch__isnull=True).count()


def test_gpu_none_combined_with_an_architecture(client):
    rows = results(client, "gpu=none&gpu=sm121")
    assert {r["gpu"] for r in rows} == {None, "sm121"}


def test_gpu_mps_and_unknown_as_the_selector_names_them(client):
    rows = results(client, "gpu=mps")
    assert rows and {r["backend"] for r in rows} == {"mps"}
    assert len(rows) == Variant.objects.filter(backend="mps").count()
    assert results(client, "gpu=unknown") == []
    # A CUDA variant whose targets match no catalogued architecture (an import finding).
    stray = Variant.objects.filter(backend="cuda").first()
    Variant.objects.filter(pk=stray.pk).update(gpu_arch=None)
    rows = results(client, "gpu=unknown&gpu=mps")
    assert {(r["backend"], r["gpu"]) for r in rows} == {("cuda", None), ("mps", None)}
    assert stray.pname in {r["pname"] for r in rows}


def test_every_selector_gpu_choice_is_a_matrix_filter(client):
    from catalog import queries
    from catalog.browse import selector_engine

    rows = selector_engine.rows_from_records(queries.selector_records())
    for value in {row.choices["gpu"].value for row in rows}:
        assert client.get(f"/api/variants?gpu={value}").json()["count"] > 0, value


def test_isa(client):
    rows = results(client, "isa=avx512vnni")
    assert rows and {r["isa"] for r in rows} == {"avx512vnni"}
    assert len(rows) == Variant.objects.filter(cpu_isa__slug="avx512vnni").count()


def test_isa_none_is_mps(client):
    assert {r["backend"] for r in results(client, "isa=none")} == {"mps"}


def test_platform(client):
    rows = results(client, "platform=aarch64-linux")
    assert rows and {r["isa"] for r in rows} <= {"armv8_2", "armv9"}


def test_cuda(client):
    rows = results(client, "cuda=13.0")
    assert rows and {r["cuda"] for r in rows} == {"13.0"}
    assert len(rows) == Variant.objects.filter(cuda_version="13.0").count()


def test_python(client):
    rows = results(client, "python=3.12")
    assert rows and {r["python"] for r in rows} == {"3.12"}
    assert len(rows) == Variant.objects.filter(python_version="3.12").count()


def test_status(client):
    rows = results(client, "status=planned")
    assert {r["branch"] for r in rows} == {"pytorch-2.10-python313", "cuda-13_0"}
    assert results(client, "status=published") == []


def test_filters_narrow_each_other(client):
    rows = results(client, "branch=main&library=pytorch&gpu=sm90&isa=avx2")
    assert [r["pname"] for r in rows] == ["pytorch-python313-cuda12_8-sm90-avx2"]


def test_text_search_matches_gpu_model_names(client):
    rows = results(client, "q=RTX 4090")
    assert rows and {r["gpu"] for r in rows} == {"sm89"}


def test_text_search_matches_nvidia_smi_aliases(client):
    rows = results(client, "q=NVIDIA+GeForce+GTX+1080+Ti")
    assert rows and {r["gpu"] for r in rows} == {"sm61"}


def test_text_search_matches_package_names(client):
    rows = results(client, "q=darwin-mps")
    assert len(rows) == 8


def test_text_search_matches_use_case(client):
    rows = results(client, "q=Graviton2")
    assert rows and {r["isa"] for r in rows} == {"armv8_2"}
    assert len(rows) == Variant.objects.filter(use_case__icontains="graviton2").count()


def test_text_search_words_all_apply(client):
    rows = results(client, "q=H100 avx512bf16")
    assert rows and {(r["gpu"], r["isa"]) for r in rows} == {("sm90", "avx512bf16")}


def test_sort_by_python_descending(client):
    rows = results(client, "sort=-python")
    pythons = [r["python"] for r in rows]
    assert pythons == sorted(pythons, reverse=True)
    assert pythons[0] == "3.13" and pythons[-1] == "3.11"


def test_sort_by_gpu_orders_by_architecture_number(client):
    gpus = [r["gpu"] for r in results(client, "gpu=sm61&gpu=sm100&gpu=sm90&sort=gpu")]
    assert gpus == sorted(gpus, key=lambda sm: int(sm[2:]))
