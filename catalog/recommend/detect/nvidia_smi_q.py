"""`nvidia-smi -q` (the long "NVSMI LOG" report): names, architecture, driver, CUDA, memory."""

from __future__ import annotations

from catalog.recommend import gpus as gpu_names
from catalog.recommend.detect.facts import (
    MAX_GPU_LINES,
    TOO_MANY_GPUS,
    Facts,
    GpuFacts,
    is_version,
    key_value,
    short,
    split_lines,
)
from catalog.recommend.detect.nvidia_smi import _is_bus_id

SOURCE = "nvidia-smi -q"
MARKERS = ("NVSMI LOG",)


def parse_nvidia_smi_q(text: str) -> Facts:
    return parse(split_lines(text))[0]


def parse(lines: list[str]) -> tuple[Facts, set[int]]:
    facts, used = Facts(), set()
    in_log = False
    current = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        if "NVSMI LOG" in stripped:
            in_log = True
            used.add(i)
            continue
        if not in_log or not stripped:
            continue
        words = stripped.split()
        if len(words) == 2 and words[0] == "GPU" and _is_bus_id(words[1]):
            if len(facts.gpus) >= MAX_GPU_LINES:
                facts.errors.append(TOO_MANY_GPUS)
                break
            current = GpuFacts(driver_version=facts.driver_version)
            facts.gpus.append(current)
            used.add(i)
            continue
        pair = key_value(line)
        if pair is None or not pair[0][:1].isalpha():
            if stripped.startswith(("=", "Timestamp")):
                used.add(i)
            continue
        used.add(i)
        key, value = pair
        if key == "Driver Version":
            facts.driver_version = value if is_version(value, 2) else ""
        elif key == "CUDA Version":
            facts.cuda_version = value if is_version(value, 2) else ""
        elif current is None:
            continue
        elif key == "Product Name":
            current.name = short(value)
        elif key == "Product Architecture":
            current.architecture_family = short(value)
        elif key in ("Compute Capability", "CUDA Compute Capability"):
            if gpu_names.is_compute_capability(value):
                current.compute_capability = value
        elif key == "Total" and current.memory_mib is None:
            number = value.split()[0] if value.split() else ""
            if number.isdigit() and value.endswith("MiB"):
                current.memory_mib = int(number)
    if in_log:
        facts.sources.append(SOURCE)
        facts.os = "linux"
        for gpu in facts.gpus:
            gpu.driver_version = gpu.driver_version or facts.driver_version
        facts.gpus = [g for g in facts.gpus if g.name]
    return facts, used
