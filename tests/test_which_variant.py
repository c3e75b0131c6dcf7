"""`python manage.py which-variant`: every case of tests/test_wizard_api.py through the CLI
(options and tool output files), --json, exit codes, bad input, and --detect with a fake
nvidia-smi on PATH and with none at all."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from catalog.wizard import cli as wizard_cli
from catalog.wizard import host_probe
from tests.test_wizard_api import CASES, HOSTS, Case, check_body, host_texts

ROOT = Path(__file__).resolve().parent.parent
FILE_OPTIONS = {
    "nvidia_smi": "--nvidia-smi",
    "lscpu": "--lscpu",
    "cpuinfo": "--cpuinfo",
    "uname": "--uname",
    "sysctl": "--sysctl",
}


def cli(*args):
    """(exit code, stdout, stderr) of the command, its CommandError written as manage.py does."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("which-variant", *args, stdout=out, stderr=err)
        code = 0
    except CommandError as exc:
        code = exc.returncode
        err.write(f"CommandError: {exc}\n")
    return code, out.getvalue(), err.getvalue()


def run(options: dict, probe) -> tuple[int, str, str]:
    """wizard_cli.run with a probe of a fake machine, as cli() reports it."""
    out, err = io.StringIO(), io.StringIO()
    try:
        wizard_cli.run(options, out, err, probe=probe)
        code = 0
    except CommandError as exc:
        code = exc.returncode
        err.write(f"CommandError: {exc}\n")
    return code, out.getvalue(), err.getvalue()


def case_args(case: Case, tmp_path) -> list[str]:
    args = []
    if case.host:
        for key, text in host_texts(case.host).items():
            path = tmp_path / f"{key}.txt"
            path.write_text(text)
            args += [FILE_OPTIONS[key], str(path)]
    for key, value in case.params.items():
        args += ["--" + key.replace("_", "-"), value]
    return args


@pytest.mark.django_db
@pytest.mark.parametrize("case", CASES, ids=str)
def test_case_through_the_cli_json(case, tmp_path):
    code, out, err = cli(*case_args(case, tmp_path), "--json")
    body = json.loads(out)
    check_body(case, body)
    assert code == (1 if case.pname is None and not case.per_gpu else 0), err


@pytest.mark.django_db
@pytest.mark.parametrize("case", CASES, ids=str)
def test_case_through_the_cli_text(case, tmp_path):
    code, out, err = cli(*case_args(case, tmp_path))
    for words in case.words:
        assert words in out + err  # warnings go to standard error
    if case.pname:
        assert f"Use: {case.pname}  (" in out and f"branch {case.branch})" in out
        assert f"git checkout {case.branch}" in out
        assert f"flox build {case.pname}" in out
        assert f"flox install <your-org>/{case.pname}" in out
        assert code == 0
    elif case.per_gpu:
        for pname in case.per_gpu:
            assert f"Use: {pname}" in out
        assert out.count("== For ") == len(case.per_gpu)
    else:
        assert "No variant fits this machine." in out and code == 1
        assert f"- {case.alternative} (" in out


@pytest.mark.django_db
def test_cli_json_is_exactly_the_api_body(client, tmp_path):
    case = next(c for c in CASES if c.id == "default-h100-datacenter")
    _, out, _ = cli(*case_args(case, tmp_path), "--json")
    api = client.post("/api/recommend", host_texts(case.host)).json()
    assert json.loads(out) == api


@pytest.mark.django_db
@pytest.mark.parametrize(
    "args, words",
    [
        (["--os", "windows"], "no Windows builds"),
        (
            ["--os", "linux", "--arch", "x86_64", "--gpu", "Voodoo 5", "--cpu-flags", "avx2"],
            "Unknown GPU",
        ),
        (
            [
                "--os",
                "linux",
                "--arch",
                "x86_64",
                "--gpu",
                "T4",
                "--compute-cap",
                "8.6",
                "--cpu-flags",
                "avx2",
            ],
            "Contradictory",
        ),
        (["--os", "linux", "--arch", "x86_64"], "Not enough answers"),
        (["--workload", "gaming", "--os", "linux"], "Unknown workload"),
        ([], "Nothing to go on"),
        (["--nvidia-smi", "/no/such/file"], "Cannot read --nvidia-smi /no/such/file"),
        (["--save-detected", "/tmp/x"], "--save-detected needs --detect"),
    ],
)
def test_bad_input_exits_2_with_a_sentence(args, words):
    code, out, err = cli(*args)
    assert code == 2
    assert words in err and out == ""
    assert "Traceback" not in err


@pytest.mark.django_db
@pytest.mark.parametrize(
    "content, words",
    [(b"\x00\x01\x02\xff" * 100, "binary"), (b"just some words\n", "could not be used")],
)
def test_unusable_files_exit_2(tmp_path, content, words):
    path = tmp_path / "lscpu.txt"
    path.write_bytes(content)
    code, _, err = cli("--lscpu", str(path))
    assert code == 2 and words in err


def test_a_directory_is_an_unreadable_file(tmp_path):
    code, _, err = cli("--lscpu", str(tmp_path))
    assert code == 2 and "Cannot read --lscpu" in err


def test_exit_codes_through_manage_py():
    """The real entry point: no traceback, the sentence on stderr, the documented codes."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    bad = subprocess.run(
        [sys.executable, "manage.py", "which-variant", "--os", "windows"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert (
        bad.returncode == 2 and "no Windows builds" in bad.stderr and "Traceback" not in bad.stderr
    )


# =================================================================================================
# --detect
# =================================================================================================


def fake_nvidia_smi(directory: Path, host: str = "h100-lent", fail: str = "") -> Path:
    """A tiny nvidia-smi printing a captured output (the table, or the CSV for --query-gpu)."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "nvidia-smi"
    table, csv = HOSTS / host / "nvidia-smi.txt", HOSTS / host / "nvidia-smi-query.csv"
    if fail:
        body = f'echo "{fail}"\nexit 9\n'
    else:
        body = f'case "$*" in\n  *--query-gpu*) cat "{csv}" ;;\n  *) cat "{table}" ;;\nesac\n'
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return script


def fake_proc(directory: Path, host: str = "h100-lent") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "cpuinfo").write_text((HOSTS / host / "cpuinfo.txt").read_text())
    return directory


@pytest.mark.django_db
def test_detect_with_a_fake_nvidia_smi_on_path(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    fake_nvidia_smi(bin_dir)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    proc = fake_proc(tmp_path / "proc")
    code, out, err = run(
        {"detect": True, "json": True, "save_detected": str(tmp_path / "saved")},
        probe=lambda: host_probe.probe(proc=proc),
    )
    body = json.loads(out)
    assert code == 0, err
    assert body["variant"]["pname"] == "pytorch-python313-cuda12_8-sm90-avx512"
    assert body["detected"]["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3"
    assert body["detected"]["driver_version"] == "580.159.04"
    assert body["detected"]["cpu"]["label"] == "Intel Sapphire Rapids"
    saved = sorted(p.name for p in (tmp_path / "saved").iterdir())
    assert saved == ["cpuinfo.txt", "nvidia-smi-query.csv", "nvidia-smi.txt", "uname.txt"]


@pytest.mark.django_db
def test_detect_through_the_command_reads_this_machine(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    fake_nvidia_smi(bin_dir)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    code, out, err = cli("--detect")
    # This machine's CPU decides the ISA; the fake nvidia-smi's H100 decides the GPU build.
    assert "NVIDIA H100 80GB HBM3" in out and "-sm90-" in out, err
    assert code == 0


@pytest.mark.django_db
def test_detect_without_nvidia_smi_is_a_cpu_only_answer(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    proc = fake_proc(tmp_path / "proc", "v100-broadwell")
    code, text, err = run({"detect": True}, probe=lambda: host_probe.probe(proc=proc))
    assert code == 0, err
    assert "nvidia-smi is not installed" in text
    assert "Use: pytorch-python313-cpu-avx2" in text
    assert "There is no NVIDIA GPU" in text


@pytest.mark.django_db
def test_detect_with_a_driver_that_does_not_answer_is_no_gpu(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    fake_nvidia_smi(
        bin_dir,
        fail="NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
    )
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    proc = fake_proc(tmp_path / "proc")
    code, out, err = run({"detect": True, "json": True}, probe=lambda: host_probe.probe(proc=proc))
    body = json.loads(out)
    assert code == 0
    assert body["variant"]["pname"] == "pytorch-python313-cpu-avx512"
    assert "couldn't communicate with the NVIDIA driver" in err


def test_probe_needs_only_the_standard_library():
    """--detect's probe runs on hosts without Django: it imports nothing outside the stdlib."""
    code = (
        "import sys; import catalog.wizard.host_probe; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('django', 'archspec')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_big_cpuinfo_is_trimmed_to_whole_processor_blocks():
    block = (HOSTS / "h100-lent" / "cpuinfo.txt").read_text().split("\n\n")[0]
    text = "\n\n".join([block] * 400)
    trimmed = host_probe.trim_cpuinfo(text)
    assert len(trimmed) <= host_probe.CPUINFO_LIMIT + 2
    assert trimmed.startswith(block) and trimmed.count("flags") >= 1


def json_decision(body: dict) -> dict:
    """What a machine's answer decides — the variant, the detected hardware, the reasons and the
    alternatives offered — leaving out what was added to answers after a capture was kept (the
    build fields, later reasons, the alternatives' order and status)."""
    return {
        "variant": {k: body["variant"][k] for k in ("pname", "repository", "branch", "url")},
        "detected": body["detected"],
        "reasons": body["reasons"],
        "alternatives": sorted(a["pname"] for a in body["alternatives"]),
    }


def text_decision(text: str) -> dict:
    """The same from the CLI's text: the Detected and Use lines, the numbered reasons and the
    alternatives' names."""
    lines = text.splitlines()
    return {
        "detected": [line for line in lines if line.startswith(("Detected:", "Use:"))],
        "reasons": [line for line in lines if line[:5].strip().rstrip(".").isdigit()],
        "alternatives": sorted(line.split()[1] for line in lines if line.startswith("  - ")),
    }


def same_decision(now: dict, kept: dict) -> None:
    """The kept reasons come first and unchanged; reasons added since may follow."""
    assert now["reasons"][: len(kept["reasons"])] == kept["reasons"]
    assert {k: v for k, v in now.items() if k != "reasons"} == {
        k: v for k, v in kept.items() if k != "reasons"
    }


@pytest.mark.django_db
def test_detect_replaying_the_real_h100_capture(tmp_path, monkeypatch):
    """tests/data/hosts/h100-detect/ is what `python3 -m catalog.wizard.host_probe --save` read on a
    real H100 machine (no Django there); tests/data/detect-runs/h100.json is `which-variant --detect
    --json` over exactly those outputs, as kept then."""
    bin_dir = tmp_path / "bin"
    fake_nvidia_smi(bin_dir, host="h100-detect")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    proc = fake_proc(tmp_path / "proc", "h100-detect")
    code, out, err = run({"detect": True, "json": True}, probe=lambda: host_probe.probe(proc=proc))
    body = json.loads(out)
    assert code == 0
    assert body["variant"]["pname"] == "pytorch-python313-cuda12_8-sm90-avx512"
    kept = json.loads((HOSTS.parent / "detect-runs" / "h100.json").read_text())
    same_decision(json_decision(body), json_decision(kept))
    assert body["variant"]["cached"] is False


@pytest.mark.django_db
@pytest.mark.parametrize(
    "options, kept",
    [
        ({"json": True}, "which-variant-detect.json"),
        ({}, "which-variant-detect.txt"),
        ({"workload": "int8-inference"}, "which-variant-detect-int8.txt"),
    ],
)
def test_detect_replaying_manage_py_on_a_real_h100(tmp_path, monkeypatch, options, kept):
    """`python3 manage.py which-variant --detect [--json | --workload int8-inference]` ran on a real
    H100 machine; tests/data/detect-runs/h100-manage-py/ keeps what it printed and
    tests/data/hosts/h100-manage-py/ the tool outputs it read (--save-detected). Replaying those
    outputs here must reach the same decision."""
    bin_dir = tmp_path / "bin"
    fake_nvidia_smi(bin_dir, host="h100-manage-py")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    proc = fake_proc(tmp_path / "proc", "h100-manage-py")
    code, out, err = run({"detect": True, **options}, probe=lambda: host_probe.probe(proc=proc))
    assert code == 0 and err == ""
    printed = (HOSTS.parent / "detect-runs" / "h100-manage-py" / kept).read_text()
    # The kept files are what the real run printed; answers have gained lines since (the build's
    # status and availability, the recommended branch's reason): the decision must not change.
    if options.get("json"):
        same_decision(json_decision(json.loads(out)), json_decision(json.loads(printed)))
    else:
        same_decision(text_decision(out), text_decision(printed))
        assert out.index("Status: ") < out.index("Commands (status: ")
