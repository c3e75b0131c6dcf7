"""The site search: /api/search and /search/ over names, errors, guides and variants; the
matrix's `q` reading GPU and Apple chip names whole."""

import re
import subprocess
import sys

import pytest

from catalog import cache, queries
from catalog.models import DocPage, GpuModel

pytestmark = pytest.mark.django_db

# (query, expected first result: kind, and a URL or title fragment it must contain)
FIRST = [
    # GPU names, with typos and spacing
    ("RTX 3060", "gpu", "/wizard/?gpu=RTX+3060"),
    ("rtx3060", "gpu", "/wizard/?gpu=RTX+3060"),
    ("RTX 3O60", "gpu", "/wizard/?gpu=RTX+3060"),
    ("NVIDIA GeForce RTX 3060", "gpu", "/wizard/?gpu=RTX+3060"),
    ("h 100", "gpu", "/wizard/?gpu=H100"),
    ("H100", "gpu", "/wizard/?gpu=H100"),
    ("NVIDIA H100 80GB HBM3", "gpu", "/wizard/?gpu=H100"),
    ("GTX 1060", "gpu", "SM61"),
    ("RTX 5080", "gpu", "SM120"),
    ("rtx 4090", "gpu", "SM89"),
    ("L40S", "gpu", "SM89"),
    ("a100", "gpu", "SM80"),
    ("a10", "gpu", "SM86"),
    ("B200", "gpu", "SM100"),
    ("GB10", "gpu", "SM121"),
    ("DGX Spark", "gpu", "SM121"),
    ("Tesla K80", "gpu", "no builds"),
    ("Tesla V100-SXM2-16GB", "gpu", "SM70"),
    # CPU models and microarchitectures
    ("Ryzen 9 7950X", "cpu", "cpu=zen4"),
    ("AMD Ryzen 9 7950X 16-Core Processor", "cpu", "cpu=zen4"),
    ("Xeon Platinum 8480+", "cpu", "cpu=sapphirerapids"),
    ("Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz", "cpu", "cpu=sapphirerapids"),
    ("Grace", "cpu", "cpu=neoverse_v2"),
    ("Graviton3", "cpu", "ARMv8.2"),
    ("EPYC 9654", "cpu", "cpu=zen4"),
    ("i9-13900K", "cpu", "best ISA AVX2"),
    ("sapphire rapids", "cpu", "cpu=sapphirerapids"),
    ("saphire rapids", "cpu", "cpu=sapphirerapids"),
    ("zen 4", "cpu", "cpu=zen4"),
    ("M2", "cpu", "os=darwin"),
    ("Apple M3 Max", "cpu", "MPS"),
    # GPU architectures and ISAs
    ("sm86", "architecture", "/architectures/sm86/"),
    ("sm_90", "architecture", "/architectures/sm90/"),
    ("hoper", "architecture", "/architectures/sm90/"),
    ("blackwell", "architecture", "Blackwell"),
    ("avx512bf16", "isa", "/isas/avx512bf16/"),
    ("AVX-512 BF16", "isa", "/isas/avx512bf16/"),
    ("armv9", "isa", "/isas/armv9/"),
    # Error messages
    ("no kernel image is available", "error", "/docs/troubleshooting/#"),
    ("CUDA error: no kernel image is available for execution on the device", "error", "no kernel"),
    ("Illegal instruction (core dumped)", "error", "#illegal-instruction-on-import"),
    ("CUDA driver version is insufficient for CUDA runtime version", "error", "insufficient"),
    ("nvcc fatal : Unsupported gpu architecture 'compute_103'", "error", "unknown-architecture"),
    # Branches and versions
    ("pytorch-2.9-python313", "branch", "/branches/build-pytorch/pytorch-2.9-python313/"),
    ("build-pytorch/main", "branch", "/branches/build-pytorch/main/"),
    ("python3.12", "branch", "python312"),
    ("vllm 0.15.1", "branch", "pytorch-2.9-vllm-0.15.1"),
    # Variants and guides
    ("pytorch-python313-cuda13_0-sm121-armv9", "variant", "sm121-armv9/"),
    ("flox publish", "guide", "/docs/publishing/#publish"),
    ("openblas", "guide", "/docs/blas-strategy/"),
    ("mkl", "guide", "#intel-mkl-as-an-alternative"),
]


def first(client, query):
    response = client.get("/api/search", {"q": query})
    assert response.status_code == 200, (query, response.content)
    results = response.json()["results"]
    return results[0] if results else None


def test_the_first_result_of_each_query(client):
    assert len(FIRST) >= 40
    wrong = []
    for query, kind, fragment in FIRST:
        top = first(client, query)
        if not top or top["kind"] != kind or fragment not in top["url"] + " " + top["title"]:
            wrong.append((query, kind, fragment, top))
    assert wrong == []


def test_results_have_the_documented_fields_and_are_grouped_by_kind(client):
    results = client.get("/api/search", {"q": "RTX 3060"}).json()["results"]
    assert set(results[0]) == {"kind", "title", "url", "why"}
    assert results[0]["title"] == "RTX 3060 — Ampere, SM86: 89 variants"
    kinds = [r["kind"] for r in results]
    # each kind's results are together
    assert kinds == sorted(kinds, key=kinds.index)


def test_an_error_with_a_gpu_name_prefills_the_wizard(client):
    query = "CUDA error: no kernel image is available for execution on the device on my RTX 3060"
    results = client.get("/api/search", {"q": query}).json()["results"]
    urls = [r["url"] for r in results if r["kind"] == "error"]
    assert "/wizard/?os=linux&has_gpu=yes&gpu=RTX+3060" in urls
    assert any(r["kind"] == "gpu" and "SM86" in r["title"] for r in results)


def test_error_links_point_at_an_existing_section(client):
    for query in ("no kernel image is available", "Illegal instruction"):
        url = first(client, query)["url"]
        path, anchor = url.split("#")
        html = client.get(path).content.decode()
        assert f'id="{anchor}"' in html


@pytest.mark.parametrize(
    "query, message",
    [
        ("", "Type what to search for"),
        ("   ", "Type what to search for"),
        ("x" * 301, "at most 300 characters"),
        (" ".join(["w"] * 41), "at most 40 words"),
    ],
)
def test_bad_queries_answer_400_json(client, query, message):
    response = client.get("/api/search", {"q": query})
    assert response.status_code == 400
    assert message in response.json()["error"]


def test_missing_q_is_400_json(client):
    response = client.get("/api/search")
    assert response.status_code == 400 and "error" in response.json()


def test_search_page_lists_groups_and_the_header_box_is_on_every_page(client):
    response = client.get("/search/", {"q": "RTX 3060"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "<h2>GPUs</h2>" in html and 'href="/wizard/?gpu=RTX+3060"' in html
    for page in ("/", "/variants/", "/docs/troubleshooting/", "/search/"):
        assert 'action="/search/"' in client.get(page).content.decode()


def test_search_page_bad_query_is_400_with_the_message(client):
    response = client.get("/search/", {"q": "x" * 400})
    assert response.status_code == 400
    assert "at most 300 characters" in response.content.decode()


def test_search_page_says_when_nothing_matches(client):
    html = client.get("/search/", {"q": "qqqzzzxxx"}).content.decode()
    assert "Nothing matches" in html


def test_index_is_built_once_per_catalogue_version(client):
    index = queries.search_index()
    assert queries.search_index() is index
    model = GpuModel.objects.get(name="H100")
    model.aliases = [*model.aliases, "Hopper Hundred"]
    model.save()  # bumps the catalogue version
    assert queries.search_index() is not index
    assert first(client, "Hopper Hundred")["url"] == "/wizard/?gpu=H100"


def test_guide_text_is_searched_and_follows_edits(client):
    page = DocPage.objects.get(slug="troubleshooting")
    page.body += "\n\n## Quokka failures\n\nA quokka ate the build cache.\n"
    page.save()
    cache.bump_version()
    top = first(client, "quokka")
    assert top["kind"] == "guide" and top["url"] == "/docs/troubleshooting/#quokka-failures"


def test_search_engine_imports_no_django():
    code = "import sys, catalog.browse.search; print(any(m == 'django' for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- the matrix's q -------------------------------------------------------------------------------


def count(client, **params):
    html = client.get("/variants/", params).content.decode()
    return int(re.search(r'data-testid="result-count">(\d+)<', html)[1]), html


@pytest.mark.parametrize(
    "query, sm",
    [("RTX 3060", "sm86"), ("GTX 1060", "sm61"), ("RTX 5080", "sm120"), ("rtx3060", "sm86")],
)
def test_matrix_q_reads_a_gpu_name_whole(client, query, sm):
    n, html = count(client, q=query, per_page="all")
    assert n > 0
    assert set(re.findall(r"-(sm\d+)-", html)) == {sm}


def test_matrix_q_m2_is_the_mac_build_not_volta(client):
    n, html = count(client, q="M2", per_page="all")
    assert n > 0 and "darwin-mps" in html and not re.findall(r"-sm\d+-", html)


def test_matrix_q_gpu_name_then_more_words(client):
    n, html = count(client, q="rtx 3060 python3.12", per_page="all")
    assert n > 0 and set(re.findall(r"-(sm\d+)-", html)) == {"sm86"}
    assert set(re.findall(r"python(3\d+)-cuda", html)) == {"312"}
