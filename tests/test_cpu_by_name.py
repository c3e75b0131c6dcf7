"""A CPU named by its model: the API, the CLI and the wizard answer with its microarchitecture
and the best ISA whose flags it has (catalog/wizard/cpu_models.py + archspec's data)."""

from __future__ import annotations

import pytest

API = "/api/recommend"

# model, arch, GPU, expected microarchitecture label, expected ISA of the pick
MODELS = [
    ("Ryzen 9 7950X", "x86_64", "RTX 4090", "Zen 4", "avx512"),
    ("Xeon Platinum 8480+", "x86_64", "H100", "Sapphire Rapids", "avx512"),
    ("Intel Core i7-4770K", "x86_64", "RTX 3060", "Haswell", "avx2"),
    ("Grace", "aarch64", "H100", "Neoverse V2", "armv9"),
    ("AWS Graviton3", "aarch64", "H100", "Neoverse V1", "armv8_2"),
]


@pytest.mark.django_db
@pytest.mark.parametrize("model, arch, gpu, label, isa", MODELS)
def test_api_answers_a_cpu_model(client, model, arch, gpu, label, isa):
    body = client.get(API, {"os": "linux", "arch": arch, "gpu": gpu, "cpu_model": model}).json()
    assert body["variant"]["isa"] == isa, body["reasons"]
    said = " ".join(body["reasons"])
    assert label in said and "the flags archspec lists for" in said


@pytest.mark.django_db
def test_unknown_model_is_a_400_with_a_sentence(client):
    response = client.get(API, {"os": "linux", "gpu": "H100", "cpu_model": "Pentium 4"})
    assert response.status_code == 400
    assert "Unknown CPU model 'Pentium 4'" in response.content.decode()


@pytest.mark.django_db
def test_flags_win_over_the_model(client):
    query = {"os": "linux", "gpu": "H100", "cpu_model": "Ryzen 9 7950X", "cpu_flags": "avx avx2"}
    body = client.get(API, query).json()
    assert body["variant"]["isa"] == "avx2"


@pytest.mark.django_db
def test_wizard_has_a_cpu_model_field_and_answers_from_it(client):
    page = client.get("/wizard/", {"os": "linux", "arch": "x86_64", "gpu": "H100"}).content.decode()
    assert 'name="cpu_model"' in page and 'type="hidden" name="cpu_model"' not in page
    query = {"os": "linux", "gpu": "H100", "cpu_model": "Intel Xeon Platinum 8480+", "library": ""}
    answer = client.get("/wizard/", {**query, "workload": "general"}).content.decode()
    assert "pytorch-python313-cuda12_8-sm90-avx512<" in answer
    assert "Sapphire Rapids" in answer


@pytest.mark.django_db
def test_cli_accepts_a_cpu_model(capsys):
    from django.core.management import call_command

    call_command("which-variant", "--os", "linux", "--gpu", "H100", "--cpu-model", "Ryzen 9 7950X")
    out = capsys.readouterr().out
    assert "pytorch-python313-cuda12_8-sm90-avx512" in out and "Zen 4" in out


@pytest.mark.django_db
def test_isa_choices_name_the_generations_with_each_flag_and_which_to_pick(client):
    x86 = client.get("/wizard/", {"os": "linux", "arch": "x86_64", "gpu": "H100"}).content.decode()
    helps = {
        slug: x86.split(f'value="{slug}"')[1].split("</label>")[0]
        for slug in ("avx512", "avx512bf16", "avx512vnni")
    }
    # Ice Lake has AVX-512 and VNNI but no BF16 (archspec): the three lists differ.
    assert "Ice Lake" in helps["avx512"] and "Ice Lake" in helps["avx512vnni"]
    assert "Ice Lake" not in helps["avx512bf16"] and "Sapphire Rapids" in helps["avx512bf16"]
    assert len(set(helps.values())) == 3
    arm = client.get("/wizard/", {"os": "linux", "arch": "aarch64", "gpu": "H100"}).content.decode()
    armv9 = arm.split('value="armv9"')[1].split("</label>")[0]
    armv8 = arm.split('value="armv8_2"')[1].split("</label>")[0]
    assert "Pick this for NVIDIA Grace, NVIDIA GB10" in armv9
    assert "AWS Graviton3" in armv8.split("Pick this for")[1] and "GB10" not in armv8


@pytest.mark.django_db
def test_gb10_is_named_in_the_gpu_list_and_on_its_variant_pages(client):
    query = {"os": "linux", "arch": "aarch64", "has_gpu": "yes"}
    page = client.get("/wizard/", query).content.decode()
    spark = page.split('value="12.1"')[1].split("</option>")[0].split("</label>")[0]
    assert "GB10" in spark
    variant = client.get(
        "/variants/build-pytorch/pytorch-2.10-python313/pytorch-python313-cuda13_0-sm121-armv9/"
    )
    assert variant.status_code == 200 and "GB10" in variant.content.decode()


@pytest.mark.django_db
def test_isa_page_lists_generations_from_archspec(client):
    html = client.get("/isas/avx512bf16/").content.decode()
    cell = html.split('class="cpu-generations"')[1].split("</td>")[0]
    assert "Sapphire Rapids" in cell and "Zen 4" in cell and "Ice Lake" not in cell
