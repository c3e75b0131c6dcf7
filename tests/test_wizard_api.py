"""/api/recommend over the real (seeded) catalogue: every seed scenario, the default
recommendations and the other hardware cases, and malformed input.

CASES is shared with tests/test_which_variant.py (the CLI) and tests/test_wizard_pages.py (the
web wizard and the test that all three front ends agree). A case is answers (the API's public
field names) and/or a host directory of real tool output from tests/data/hosts/.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import archspec.cpu
import pytest

HOSTS = Path(__file__).parent / "data" / "hosts"
API = "/api/recommend"


def flags(target, *more):
    return " ".join(sorted(archspec.cpu.TARGETS[target].features) + list(more))


ALDER_LAKE = flags("alderlake")  # Core i9-12900K: AVX-512 fused off
ZEN4 = flags("zen4")
ZEN3 = flags("zen3")
HASWELL = flags("haswell")
CASCADE_LAKE = flags("cascadelake")
GRAVITON3 = flags("neoverse_v1", "fp", "asimd")  # sve, no sve2


@dataclass
class Case:
    id: str
    params: dict = field(default_factory=dict)  # public field -> value
    host: str = ""  # a directory in tests/data/hosts/
    pname: str | None = None  # expected variant (None: no variant fits)
    branch: str = "main"
    words: tuple = ()  # in reasons + warnings
    alternative: str = ""  # expected first-mentioned alternative pname (when set)
    per_gpu: tuple = ()  # expected pnames, one per GPU model

    def __str__(self):
        return self.id


CASES = [
    # Seed 001 "Example Use Cases" 1-5
    Case(
        "use-case-1-rtx3090-i9-12900k",
        dict(
            os="linux",
            arch="x86_64",
            gpu="NVIDIA GeForce RTX 3090",
            cpu_flags=ALDER_LAKE,
            isa="avx512",
            cpu_vendor="GenuineIntel",
        ),
        pname="pytorch-python313-cuda12_8-sm86-avx2",
        words=("You said the CPU has AVX-512", "Alder Lake", "SM86 (Ampere)"),
    ),
    Case(
        "use-case-2-h100-epyc-zen4-training",
        dict(
            os="linux",
            arch="x86_64",
            gpu="H100",
            cpu_flags=ZEN4,
            cpu_vendor="AuthenticAMD",
            workload="general",
        ),
        pname="pytorch-python313-cuda12_8-sm90-avx512",
        words=("AMD Zen 4", "AVX-512 is the best"),
    ),
    Case(
        "use-case-2-h100-epyc-zen4-int8",
        dict(
            os="linux",
            arch="x86_64",
            gpu="H100",
            cpu_flags=ZEN4,
            cpu_vendor="AuthenticAMD",
            workload="int8-inference",
        ),
        pname="pytorch-python313-cuda12_8-sm90-avx512vnni",
        words=("For INT8 inference",),
    ),
    Case(
        "use-case-3-laptop-no-gpu",
        dict(os="linux", arch="x86_64", gpu="none", cpu_flags=HASWELL),
        pname="pytorch-python313-cpu-avx2",
        words=("There is no NVIDIA GPU",),
    ),
    Case(
        "use-case-4-graviton3-h100",
        dict(
            os="linux",
            arch="aarch64",
            gpu="H100",
            cpu_flags=GRAVITON3,
            cpu_parts="0xd40",
            isa="armv9",
        ),
        pname="pytorch-python313-cuda12_8-sm90-armv8_2",
        words=("sve2", "Graviton3"),
    ),
    Case(
        "use-case-5-macbook-m3",
        host="apple-m3",
        pname="pytorch-python313-darwin-mps",
        words=("MPS",),
    ),
    # Seed 001 "Default Recommendations"
    Case(
        "default-development-avx2",
        dict(os="linux", arch="x86_64", gpu="none", cpu_flags=ZEN3),
        pname="pytorch-python313-cpu-avx2",
    ),
    Case(
        "default-rtx3090-xeon",
        dict(
            os="linux",
            arch="x86_64",
            gpu="RTX 3090",
            cpu_flags=CASCADE_LAKE,
            cpu_vendor="GenuineIntel",
        ),
        pname="pytorch-python313-cuda12_8-sm86-avx512",
    ),
    Case(
        "default-rtx3090-core-i9-12900k",
        dict(
            os="linux",
            arch="x86_64",
            gpu="RTX 3090",
            cpu_flags=ALDER_LAKE,
            cpu_vendor="GenuineIntel",
        ),
        pname="pytorch-python313-cuda12_8-sm86-avx2",
        words=("Alder Lake",),
    ),
    Case(
        "default-h100-datacenter",
        host="h100-xeon",
        pname="pytorch-python313-cuda12_8-sm90-avx512",
        words=("Sapphire Rapids", "SM90 (Hopper)"),
    ),
    Case(
        "default-rtx5090-gaming-pc",
        dict(
            os="linux",
            arch="x86_64",
            gpu="NVIDIA GeForce RTX 5090",
            cpu_flags=ZEN4,
            driver="570.124.04",
        ),
        pname="pytorch-python313-cuda12_8-sm120-avx512",
    ),
    Case(
        "default-aws-h100-graviton3",
        dict(os="linux", arch="aarch64", gpu="H100", cpu_flags=GRAVITON3, cpu_parts="0xd40"),
        pname="pytorch-python313-cuda12_8-sm90-armv8_2",
        words=("Graviton3",),
    ),
    Case(
        "default-int8-inference-server",
        dict(
            os="linux", arch="x86_64", gpu="H100", cpu_flags=CASCADE_LAKE, workload="int8-inference"
        ),
        pname="pytorch-python313-cuda12_8-sm90-avx512vnni",
    ),
    # Other hardware, from real tool output
    Case(
        "pascal-ivybridge",
        host="pascal-ivybridge",
        pname="pytorch-python313-cuda12_8-sm61-avx",
        words=("it lacks avx2",),
    ),
    Case(
        "t4-cascadelake",
        host="t4-cascadelake",
        pname="pytorch-python313-cuda12_8-sm75-avx512",
        words=("SM75",),
    ),
    Case(
        "graviton2",
        dict(gpu="none"),
        host="graviton2",
        pname="pytorch-python313-cpu-armv8_2",
        words=("Neoverse N1",),
    ),
    Case("grace-hopper-gh200", host="gh200-grace", pname="pytorch-python313-cuda12_8-sm90-armv9"),
    Case(
        "dgx-spark",
        host="dgx-spark",
        pname="pytorch-python313-cuda13_0-sm121-armv9",
        branch="pytorch-2.10-python313",
        words=("SM121",),
    ),
    # build-torchvision cuda-13_0 holds x86 pairings of DGX Spark; only the Arm one is recommended.
    Case(
        "dgx-spark-torchvision",
        dict(library="torchvision"),
        host="dgx-spark",
        pname="torchvision-python313-cuda13_0-sm121-armv9",
        branch="cuda-13_0",
    ),
    Case(
        "gb10-with-an-x86-cpu-torchvision",
        dict(os="linux", arch="x86_64", gpu="NVIDIA GB10", cpu_flags=ZEN4, library="torchvision"),
        pname=None,
        words=(
            "SM121 is built into an aarch64 system, so an x86_64 ISA",
            "impossible pairings, never recommended",
        ),
        alternative="torchvision-python313-cpu-avx512",
    ),
    Case(
        "b300",
        host="b300-xeon",
        pname="pytorch-python313-cuda12_9-sm103-avx512",
        branch="pytorch-2.9-python313",
        words=("8 of this model",),
    ),
    Case(
        "v100-old-driver",
        host="v100-broadwell",
        pname="pytorch-python312-cuda12_8-sm70-avx2",
        branch="pytorch-2.9-vllm-0.14.0",
        words=("535.183.01", "550"),
    ),
    Case(
        "k80-no-build",
        host="k80-broadwell",
        pname=None,
        words=("Tesla K80", "3.7"),
        alternative="pytorch-python313-cpu-avx2",
    ),
    Case("apple-m-series", dict(os="darwin", arch="arm64"), pname="pytorch-python313-darwin-mps"),
    Case(
        "intel-mac-no-build",
        host="intel-mac",
        pname=None,
        words=("no build for Intel Macs",),
        alternative="pytorch-python313-cpu-avx2",
    ),
    Case(
        "ryzen-without-avx512",
        host="ryzen-5800x",
        pname="pytorch-python313-cuda12_8-sm86-avx2",
        words=("lacks avx512",),
    ),
    Case(
        "h100-lent-real-machine",
        host="h100-lent",
        pname="pytorch-python313-cuda12_8-sm90-avx512",
        words=("Sapphire Rapids",),
    ),
    Case(
        "mixed-4090-3090",
        host="mixed-4090-3090",
        pname=None,
        per_gpu=("pytorch-python313-cuda12_8-sm89-avx2", "pytorch-python313-cuda12_8-sm86-avx2"),
        words=("one recommendation per GPU model",),
    ),
]


def host_texts(name: str) -> dict:
    """A host directory's files as paste fields (one tool output per field)."""
    out: dict = {}
    directory = HOSTS / name
    for stem, key in (
        ("nvidia-smi", "nvidia_smi"),
        ("lscpu", "lscpu"),
        ("cpuinfo", "cpuinfo"),
        ("uname", "uname"),
        ("sysctl", "sysctl"),
    ):
        files = sorted(p for p in directory.iterdir() if p.name.startswith(stem))
        if key == "nvidia_smi":  # the default table if there is one, else the CSV query, else -q
            rank = {"nvidia-smi.txt": 0, "nvidia-smi-query.csv": 1}
            files = sorted(files, key=lambda p: rank.get(p.name, 2))[:1]
        if key == "uname":
            files = files[:1]
        if files:
            out[key] = "\n".join(p.read_text() for p in files)
    return out


def case_data(case: Case) -> dict:
    data = host_texts(case.host) if case.host else {}
    data.update(case.params)
    return data


def all_text(result: dict) -> str:
    parts = list(result["reasons"]) + list(result["warnings"])
    for sub in result.get("per_gpu", []):
        parts += sub["reasons"] + sub["warnings"]
    return " ".join(parts)


def check_body(case: Case, body: dict):
    """The expectations of a case against an API body (also used for the CLI's --json)."""
    if case.per_gpu:
        assert body["variant"] is None
        assert [g["variant"]["pname"] for g in body["per_gpu"]] == list(case.per_gpu)
    elif case.pname is None:
        assert body["variant"] is None
    else:
        assert body["variant"]["pname"] == case.pname, all_text(body)
        assert body["variant"]["branch"] == case.branch
        assert (
            body["variant"]["url"]
            == f"/variants/{body['variant']['repository']}/{case.branch}/{case.pname}/"
        )
    text = all_text(body)
    for words in case.words:
        assert words in text, (words, text)
    if case.alternative:
        assert body["alternatives"][0]["pname"] == case.alternative
        assert body["alternatives"][0]["url"].endswith(f"/{case.alternative}/")


def api_json(client, case: Case):
    return client.post(API, json.dumps(case_data(case)), content_type="application/json")


# =================================================================================================
# Every case, through the API (JSON POST, and GET or form POST for the ones without pastes)
# =================================================================================================


@pytest.mark.django_db
@pytest.mark.parametrize("case", CASES, ids=str)
def test_case_through_the_api(client, case):
    response = api_json(client, case)
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) >= {"variant", "reasons", "warnings", "alternatives", "detected"}
    assert all(
        {"pname", "branch", "why", "repository", "url"} <= set(a) for a in body["alternatives"]
    )
    check_body(case, body)


@pytest.mark.django_db
@pytest.mark.parametrize("case", [c for c in CASES if not c.host][:6], ids=str)
def test_get_and_form_post_give_the_same_answer_as_json(client, case):
    by_json = api_json(client, case).json()
    assert client.get(API, case.params).json() == by_json
    assert client.post(API, case.params).json() == by_json


@pytest.mark.django_db
def test_detected_facts_come_back_with_the_sources(client):
    body = client.post(API, host_texts("h100-xeon")).json()
    detected = body["detected"]
    assert (
        detected["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3"
        and detected["gpus"][0]["sm"] == "sm90"
    )
    assert detected["cpu"]["label"] == "Intel Sapphire Rapids"
    assert "avx512f" in detected["cpu"]["isa_features"]
    assert {"nvidia-smi", "lscpu"} <= set(detected["sources"])


@pytest.mark.django_db
def test_cpu_flags_may_be_comma_or_space_separated(client):
    base = dict(os="linux", arch="x86_64", gpu="none")
    spaced = client.get(API, {**base, "cpu_flags": "avx avx2 fma f16c"}).json()
    commas = client.get(API, {**base, "cpu_flags": "avx,avx2, fma,f16c"}).json()
    assert spaced["variant"]["pname"] == commas["variant"]["pname"] == "pytorch-python313-cpu-avx2"


@pytest.mark.django_db
def test_constraints_pick_the_branch(client):
    body = client.get(
        API, dict(os="linux", arch="x86_64", gpu="A100", cpu_flags=CASCADE_LAKE, python="3.12")
    ).json()
    assert body["variant"]["branch"] == "pytorch-2.8-python312"
    assert body["variant"]["python_version"] == "3.12"


@pytest.mark.django_db
def test_unsupported_hardware_is_200_with_no_variant_and_the_reason(client):
    response = client.get(
        API, dict(os="linux", arch="x86_64", compute_cap="3.7", cpu_flags=HASWELL)
    )
    assert response.status_code == 200
    body = response.json()
    assert body["variant"] is None
    assert any("There is no build for" in r for r in body["reasons"])
    assert body["alternatives"][0]["pname"] == "pytorch-python313-cpu-avx2"


@pytest.mark.django_db
def test_several_gpu_names_may_be_given(client):
    body = client.get(
        API + "?os=linux&arch=x86_64&cpu_flags=avx+avx2+fma+f16c&gpu=RTX+4090&gpu=RTX+3090"
    ).json()
    assert [g["variant"]["pname"] for g in body["per_gpu"]] == [
        "pytorch-python313-cuda12_8-sm89-avx2",
        "pytorch-python313-cuda12_8-sm86-avx2",
    ]


# =================================================================================================
# Malformed input: 400 {"error": ...}
# =================================================================================================

BAD_GET = [
    ({"os": "windows"}, "no Windows builds"),
    ({"os": "linux", "arch": "riscv64"}, "Unknown CPU architecture"),
    ({"os": "linux", "arch": "x86_64", "gpu": "Voodoo 5", "cpu_flags": "avx2"}, "Unknown GPU"),
    (
        {
            "os": "linux",
            "arch": "x86_64",
            "gpu": "Tesla T4",
            "compute_cap": "8.6",
            "cpu_flags": "avx2",
        },
        "Contradictory",
    ),
    ({"os": "darwin", "arch": "aarch64", "gpu": "H100"}, "macOS with an NVIDIA GPU"),
    ({"os": "linux", "arch": "aarch64", "gpu": "none", "cpu_flags": "avx avx2 fma"}, "x86_64 CPU"),
    (
        {"os": "linux", "arch": "x86_64", "gpu": "none", "cpu_flags": "avx2", "workload": "gaming"},
        "Unknown workload",
    ),
    (
        {"os": "linux", "arch": "x86_64", "gpu": "none", "cpu_flags": "avx2", "library": "jax"},
        "Unknown library",
    ),
    (
        {"os": "linux", "arch": "x86_64", "gpu": "none", "cpu_flags": "avx2", "python": "3.10"},
        "No branch builds Python 3.10",
    ),
    (
        {"os": "linux", "arch": "x86_64", "gpu": "T4", "cpu_flags": "avx2", "driver": "latest"},
        "Driver version",
    ),
    ({"os": "linux", "arch": "x86_64", "compute_cap": "nine", "cpu_flags": "avx2"}, "MAJOR.MINOR"),
    ({"os": "linux", "arch": "x86_64"}, "Not enough answers"),
    ({"os": "linux", "color": "blue"}, "Unknown field 'color'"),
    ({}, "No answers given"),
    ({"os": "linux", "arch": "x" * 500}, "at most 200"),
    ({"os": "linux\x00"}, "binary"),
]


@pytest.mark.django_db
@pytest.mark.parametrize("params, words", BAD_GET)
def test_bad_answers_are_400_with_an_error(client, params, words):
    response = client.get(API, params)
    assert response.status_code == 400
    assert words in response.json()["error"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body, content_type, words",
    [
        (b"{not json", "application/json", "not valid JSON"),
        (b"\xff\xfe{\x00", "application/json", "not UTF-8"),
        (b"[1, 2]", "application/json", "must be an object"),
        (b'{"os": {"name": "linux"}}', "application/json", "must be text"),
        (b"os=linux", "text/plain", "Unsupported content type"),
        (bytes(range(256)), "application/octet-stream", "Unsupported content type"),
    ],
)
def test_malformed_bodies_are_400(client, body, content_type, words):
    response = client.post(API, body, content_type=content_type)
    assert response.status_code == 400
    assert words in response.json()["error"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "paste, words",
    [
        ("hello, this is not tool output\n", "nvidia-smi output could not be used"),
        ("\x00\x01\x02 binary", "binary"),
        ("GPU 0: " + "A" * 270_000, "at most 256 KB"),
    ],
)
def test_bad_pastes_are_400_naming_the_field(client, paste, words):
    response = client.post(API, {"nvidia_smi": paste, "os": "linux"})
    assert response.status_code == 400
    body = response.json()
    assert words in body["error"], body
    assert body["field"] == "nvidia_smi"


@pytest.mark.django_db
def test_pasting_lscpu_of_an_arm_machine_with_an_x86_arch_is_contradictory(client):
    response = client.post(
        API,
        {"lscpu": host_texts("graviton2")["lscpu"], "arch": "x86_64", "gpu": "none", "os": "linux"},
    )
    assert response.status_code == 400
    assert "Contradictory" in response.json()["error"]


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_other_methods_are_405(client, method):
    response = getattr(client, method)(API)
    assert response.status_code == 405
    assert "GET or POST" in response.json()["error"]
