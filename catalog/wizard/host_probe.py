"""Read this machine's hardware facts for `which-variant --detect`. Standard library only.

Runs `nvidia-smi` (the default table and `--query-gpu=name,compute_cap,driver_version
--format=csv`) with a timeout, reads /proc/cpuinfo (Linux) or `sysctl -a` (macOS) and `uname`.
No GPU, no `nvidia-smi` binary or a driver that does not answer is a valid answer: the machine
has no usable NVIDIA GPU, and `notes` says why.

Also runnable without Django, to capture a host's outputs as test data:

    python3 -m catalog.wizard.host_probe --save tests/data/hosts/<name>/
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

TIMEOUT_S = 20
QUERY = ["--query-gpu=name,compute_cap,driver_version", "--format=csv"]
CPUINFO_LIMIT = 128 * 1024  # the paste limit is 256 KB; one core's block says it all on x86


@dataclass
class Probe:
    texts: dict = field(default_factory=dict)  # paste field -> tool output
    files: dict = field(default_factory=dict)  # file name -> tool output (for --save)
    notes: list = field(default_factory=list)  # sentences for the user
    has_gpu: str = ""  # "no" when nvidia-smi is missing or finds no GPU


def _run(argv, timeout=TIMEOUT_S):
    """(returncode, stdout, stderr); returncode None when it could not run or timed out."""
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            errors="replace",
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return None, "", f"{argv[0]} did not answer within {timeout} s"
    except OSError as exc:
        return None, "", str(exc)
    return done.returncode, done.stdout, done.stderr


def trim_cpuinfo(text: str, limit: int = CPUINFO_LIMIT) -> str:
    """Whole processor blocks up to `limit` characters (a 200-core /proc/cpuinfo is ~300 KB)."""
    if len(text) <= limit:
        return text
    out: list[str] = []
    size = 0
    for block in text.split("\n\n"):
        if out and size + len(block) + 2 > limit:
            break
        out.append(block)
        size += len(block) + 2
    return "\n\n".join(out) + "\n"


def probe(nvidia_smi: str = "nvidia-smi", proc: Path = Path("/proc")) -> Probe:
    result = Probe()
    # -- GPU ------------------------------------------------------------------------------
    binary = shutil.which(nvidia_smi)
    if binary is None:
        result.has_gpu = "no"
        result.notes.append(
            "nvidia-smi is not installed (not on PATH): "
            "treating this machine as having no NVIDIA GPU."
        )
    else:
        rc, table, err = _run([binary])
        if rc != 0:
            result.has_gpu = "no"
            why = (err or table).strip().splitlines()
            result.notes.append(
                "nvidia-smi found no usable NVIDIA GPU"
                + (f" ({why[0].strip()})" if why else "")
                + ": treating this machine as having no NVIDIA GPU."
            )
        else:
            result.files["nvidia-smi.txt"] = table
            parts = [table]
            rc, csv, err = _run([binary, *QUERY])
            if rc == 0 and csv.strip():
                result.files["nvidia-smi-query.csv"] = csv
                parts.append(csv)
            else:
                result.notes.append(
                    "nvidia-smi --query-gpu=compute_cap is not supported by this driver; "
                    "the GPU is resolved from its name."
                )
            result.texts["nvidia_smi"] = "\n".join(parts)
    # -- CPU ------------------------------------------------------------------------------
    cpuinfo = proc / "cpuinfo"
    if cpuinfo.exists():
        try:
            text = cpuinfo.read_text(errors="replace")
        except OSError as exc:
            result.notes.append(f"Could not read {cpuinfo}: {exc}.")
        else:
            result.files["cpuinfo.txt"] = text
            result.texts["cpuinfo"] = trim_cpuinfo(text)
    elif sys.platform == "darwin" and shutil.which("sysctl"):
        rc, out, _ = _run(["sysctl", "-a"])
        if rc == 0:
            lines = [
                line
                for line in out.splitlines()
                if line.startswith(
                    ("machdep.cpu", "hw.optional", "hw.cputype", "hw.machine", "hw.model")
                )
            ]
            result.files["sysctl.txt"] = "\n".join(lines) + "\n"
            result.texts["sysctl"] = result.files["sysctl.txt"]
    # -- uname ----------------------------------------------------------------------------
    rc, kernel, _ = _run(["uname", "-s"], timeout=5) if shutil.which("uname") else (None, "", "")
    rc2, machine, _ = _run(["uname", "-m"], timeout=5) if shutil.which("uname") else (None, "", "")
    if rc != 0 or rc2 != 0:
        uname = os.uname()
        kernel, machine = uname.sysname, uname.machine
    text = f"{kernel.strip()}\n{machine.strip()}\n"
    result.files["uname.txt"] = text
    result.texts["uname"] = text
    return result


def save(result: Probe, directory: str | Path) -> list[Path]:
    """Write what was read into `directory` (for test data); returns the paths written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in sorted(result.files.items()):
        path = directory / name
        path.write_text(text)
        written.append(path)
    return written


if __name__ == "__main__":  # pragma: no cover - a capture helper for real hosts
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", metavar="DIR", help="write the tool outputs into DIR")
    args = parser.parse_args()
    found = probe()
    for note in found.notes:
        print(note, file=sys.stderr)
    if args.save:
        for path in save(found, args.save):
            print(path)
    else:
        for key, text in found.texts.items():
            print(f"== {key} ==\n{text}")
