"""One vocabulary at every door: each name the site shows for a GPU architecture ('sm90', 'SM90',
'sm_90', '9.0', 'Hopper', 'H100') or a CPU ISA ('avx512', 'AVX-512') is read the same way by the
wizard, /api/recommend, `which-variant`, the matrix's filters and the selector — all through
catalog.naming's resolvers.
"""

from __future__ import annotations

import json
import re

import pytest

from catalog import naming
from catalog.models import GpuArchitecture
from tests.test_which_variant import cli

GPU_SPELLINGS = ["sm90", "SM90", "sm_90", "9.0", "Hopper", "H100"]
ISA_SPELLINGS = ["avx512", "AVX-512", "AVX512", "avx_512"]
PICK = re.compile(r'class="wizard-pick" href="[^"]+"><code>([^<]+)</code>')
HOPPER = naming.Named("sm90", ("Hopper", "H100", "NVIDIA H100 80GB HBM3"))
KNOWN = (
    HOPPER,
    naming.Named("sm100", ("Blackwell", "Blackwell DC", "B200")),
    naming.Named("sm120", ("Blackwell", "RTX 5090")),
)


# -- the resolvers (pure) ----------------------------------------------------------------------


@pytest.mark.parametrize("written", [*GPU_SPELLINGS, "sm_90a", " h100 ", "nvidia h100 80gb hbm3"])
def test_every_spelling_of_an_architecture_resolves_to_its_slug(written):
    assert naming.resolve_gpu(written, KNOWN) == ("sm90",)


def test_an_sm_or_compute_capability_stands_for_itself_even_uncatalogued():
    assert naming.resolve_gpu("sm_37", KNOWN) == ("sm37",)
    assert naming.resolve_gpu("12.1", KNOWN) == ("sm121",)


def test_a_shared_family_name_resolves_to_every_architecture_of_it():
    assert naming.resolve_gpu("blackwell", KNOWN) == ("sm100", "sm120")


@pytest.mark.parametrize("written", ["", "  ", "Hoppers", "sm9", "90", "H1000"])
def test_unknown_names_resolve_to_nothing(written):
    assert naming.resolve_gpu(written, KNOWN) == ()


@pytest.mark.parametrize("written", ["armv8.2", "ARMv8.2", "armv8_2", "ARMV8-2"])
def test_isa_spellings_resolve(written):
    known = (naming.Named("armv8_2", ("ARMv8.2",)), naming.Named("armv9", ("ARMv9",)))
    assert naming.resolve_name(written, known) == ("armv8_2",)


# -- the wizard's doors --------------------------------------------------------------------------


def post(client, body):
    return client.post("/api/recommend", json.dumps(body), content_type="application/json")


@pytest.mark.django_db
@pytest.mark.parametrize("written", GPU_SPELLINGS)
def test_api_reads_every_gpu_spelling_as_a_gpu_name(client, written):
    response = post(client, {"os": "linux", "gpu": written, "isa": "avx512"})
    assert response.status_code == 200, response.content
    assert response.json()["variant"]["sm"] == "sm90"


@pytest.mark.django_db
@pytest.mark.parametrize("written", GPU_SPELLINGS)
def test_api_reads_every_gpu_spelling_as_a_compute_capability(client, written):
    response = post(client, {"os": "linux", "compute_cap": written, "isa": "avx512"})
    assert response.status_code == 200, response.content
    assert response.json()["detected"]["gpus"][0]["compute_capability"] == "9.0"


@pytest.mark.django_db
@pytest.mark.parametrize("written", ISA_SPELLINGS)
def test_api_reads_every_isa_spelling(client, written):
    response = post(client, {"os": "linux", "arch": "x86_64", "has_gpu": "no", "isa": written})
    assert response.status_code == 200, response.content
    assert response.json()["variant"]["isa"] == "avx512"


@pytest.mark.django_db
def test_api_refuses_a_family_of_several_architectures_naming_them(client):
    sms = GpuArchitecture.objects.filter(name="Blackwell").values_list("sm", flat=True)
    ccs = sorted(naming.compute_capability_from_sm(sm) for sm in sms)
    assert len(ccs) > 1, "the test needs a family name shared by several architectures"
    response = post(client, {"os": "linux", "gpu": "Blackwell", "isa": "avx512"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert "several GPU architectures" in error and all(cc in error for cc in ccs)


@pytest.mark.django_db
@pytest.mark.parametrize("written", ["sm_90", "Hopper"])
def test_which_variant_reads_the_spellings(written):
    code, out, err = cli("--os", "linux", "--gpu", written, "--isa", "AVX-512", "--json")
    assert code == 0, err
    variant = json.loads(out)["variant"]
    assert (variant["sm"], variant["isa"]) == ("sm90", "avx512")


@pytest.mark.django_db
@pytest.mark.parametrize("written", ["sm90", "Hopper"])
def test_the_web_wizard_reads_the_spellings(client, written):
    query = {"os": "linux", "gpu": written, "isa": "AVX-512", "workload": "general", "library": ""}
    response = client.get("/wizard/", query)
    assert response.status_code == 200
    (pname,) = PICK.findall(response.content.decode())
    assert naming.parse(pname).sm == "sm90"


# -- the matrix's filters and the selector ----------------------------------------------------


def variants(client, params):
    """(count, first page) of /api/variants: the `next` link repeats the spelling given."""
    body = client.get("/api/variants", params).json()
    return body["count"], body["results"]


@pytest.mark.django_db
@pytest.mark.parametrize("written", GPU_SPELLINGS)
def test_matrix_filters_read_every_gpu_spelling(client, written):
    expected = variants(client, {"gpu": "sm90"})
    response = client.get("/api/variants", {"gpu": written})
    assert response.status_code == 200
    assert variants(client, {"gpu": written}) == expected and expected[0] > 0


@pytest.mark.django_db
@pytest.mark.parametrize("written", ISA_SPELLINGS)
def test_matrix_filters_read_every_isa_spelling(client, written):
    assert variants(client, {"isa": written}) == variants(client, {"isa": "avx512"})


@pytest.mark.django_db
def test_matrix_family_name_means_each_of_its_architectures(client):
    sms = set(GpuArchitecture.objects.filter(name="Blackwell").values_list("sm", flat=True))
    results = client.get("/api/variants", {"gpu": "Blackwell", "per_page": "all"}).json()
    assert {r["gpu"] for r in results["results"]} == sms


@pytest.mark.django_db
def test_matrix_page_checks_the_architecture_written_by_name(client):
    body = client.get("/variants/", {"gpu": "Hopper"}).content.decode()
    assert re.search(r'<input[^>]*value="sm90"[^>]*checked', body)


@pytest.mark.django_db
def test_matrix_still_refuses_an_unknown_name(client):
    response = client.get("/api/variants", {"gpu": "Hoppers"})
    assert response.status_code == 400 and "gpu" in response.json()["fields"]


@pytest.mark.django_db
@pytest.mark.parametrize("written", GPU_SPELLINGS)
def test_selector_reads_every_gpu_spelling(client, written):
    body = client.get("/", {"gpu": written}).content.decode()
    assert re.search(r'class="option selected" data-value="sm90"', body)


@pytest.mark.django_db
def test_selector_reads_an_isa_label(client):
    body = client.get("/", {"isa": "AVX-512"}).content.decode()
    assert re.search(r'class="option selected" data-value="avx512"', body)


@pytest.mark.django_db
def test_selector_refuses_a_family_of_several_architectures(client):
    response = client.get("/", {"gpu": "Blackwell"})
    assert response.status_code == 400
    assert "names several" in response.content.decode()
