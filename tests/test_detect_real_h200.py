"""Detection over tool outputs captured on a real machine: tests/data/hosts/h200-lent/ (one NVIDIA
H200, a 16-core Intel Xeon of family 6 model 207, driver 580.159.04; see
tests/data/hosts/README.md). Replayed through `which-variant --detect`, tool output files and
POST /api/recommend, each must name the SM90 build for the CPU's best ISA."""

from __future__ import annotations

import json
import os

import pytest

from catalog.wizard import host_probe
from tests.test_which_variant import HOSTS, cli, fake_nvidia_smi, fake_proc, run

HOST = "h200-lent"
FILES = HOSTS / HOST
EXPECTED = {
    "general": "pytorch-python313-cuda12_8-sm90-avx512",
    "int8-inference": "pytorch-python313-cuda12_8-sm90-avx512vnni",
    "bf16-training": "pytorch-python313-cuda12_8-sm90-avx512bf16",
}


def check_detected(body: dict) -> None:
    detected = body["detected"]
    assert detected["os"] == "linux" and detected["arch"] == "x86_64"
    [gpu] = detected["gpus"]
    assert (gpu["name"], gpu["compute_capability"], gpu["sm"]) == ("NVIDIA H200", "9.0", "sm90")
    assert detected["driver_version"] == "580.159.04"
    # archspec knows no newer Intel server core than Sapphire Rapids; the flags decide.
    assert detected["cpu"]["label"] == "Intel Sapphire Rapids"


@pytest.mark.django_db
@pytest.mark.parametrize("workload", sorted(EXPECTED))
def test_detect_on_the_captured_machine(tmp_path, monkeypatch, workload):
    bin_dir = tmp_path / "bin"
    fake_nvidia_smi(bin_dir, host=HOST)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    proc = fake_proc(tmp_path / "proc", HOST)
    options = {"detect": True, "json": True, "workload": workload}
    code, out, err = run(options, probe=lambda: host_probe.probe(proc=proc))
    assert code == 0, err
    body = json.loads(out)
    assert body["variant"]["pname"] == EXPECTED[workload]
    check_detected(body)
    assert body["warnings"] == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    "files",
    [
        {"--nvidia-smi": "nvidia-smi.txt", "--lscpu": "lscpu.txt", "--uname": "uname.txt"},
        {"--nvidia-smi": "nvidia-smi-query.csv", "--cpuinfo": "cpuinfo.txt"},
    ],
    ids=["table-and-lscpu", "csv-and-cpuinfo"],
)
def test_tool_output_files_give_the_same_answer(files):
    args = [arg for option, name in files.items() for arg in (option, str(FILES / name))]
    code, out, err = cli(*args, "--json")
    assert code == 0, err
    body = json.loads(out)
    assert body["variant"]["pname"] == EXPECTED["general"]
    check_detected(body)


@pytest.mark.django_db
def test_pasted_into_the_api(client):
    response = client.post(
        "/api/recommend",
        {
            "nvidia_smi": (FILES / "nvidia-smi.txt").read_text(),
            "lscpu": (FILES / "lscpu.txt").read_text(),
        },
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["variant"]["pname"] == EXPECTED["general"]
    check_detected(body)
