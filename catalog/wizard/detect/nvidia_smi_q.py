"""`nvidia-smi -q` (the long "NVSMI LOG" report): names, architecture, driver, CUDA, memory."""

from __future__ import annotations

from collections.abc import Callable

from catalog.wizard import gpus as gpu_names
from catalog.wizard.detect.facts import (
    MAX_GPU_LINES,
    TOO_MANY_GPUS,
    Facts,
    GpuFacts,
    is_version,
    key_value,
    short,
    split_lines,
)
from catalog.wizard.detect.nvidia_smi import _is_bus_id

SOURCE = "nvidia-smi -q"
MARKERS = ("NVSMI LOG",)


def parse_nvidia_smi_q(text: str) -> Facts:
    return parse(split_lines(text))[0]


def _memory(gpu: GpuFacts, value: str) -> None:
    number = value.split()[0] if value.split() else ""
    if gpu.memory_mib is None and number.isdigit() and value.endswith("MiB"):
        gpu.memory_mib = int(number)


def _compute_capability(gpu: GpuFacts, value: str) -> None:
    if gpu_names.is_compute_capability(value):
        gpu.compute_capability = value


def _set(attr: str) -> Callable[[GpuFacts, str], None]:
    def read(gpu: GpuFacts, value: str) -> None:
        setattr(gpu, attr, short(value))

    return read


# The keys of a GPU's section that are read, each with what it records on the GPU.
_GPU_KEYS: dict[str, Callable[[GpuFacts, str], None]] = {
    "Product Name": _set("name"),
    "Product Architecture": _set("architecture_family"),
    "Compute Capability": _compute_capability,
    "CUDA Compute Capability": _compute_capability,
    "Total": _memory,  # the first "Total" of a section is the framebuffer memory's
}
# The machine's keys (they come before any GPU's section).
_MACHINE_KEYS = {"Driver Version": "driver_version", "CUDA Version": "cuda_version"}


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
        if _is_gpu_heading(stripped):
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
        _read(facts, current, *pair)
    if in_log:
        _finish(facts)
    return facts, used


def _is_gpu_heading(stripped: str) -> bool:
    """'GPU 00000000:00:06.0', which starts a GPU's section."""
    words = stripped.split()
    return len(words) == 2 and words[0] == "GPU" and _is_bus_id(words[1])


def _read(facts: Facts, gpu: GpuFacts | None, key: str, value: str) -> None:
    if key in _MACHINE_KEYS:
        setattr(facts, _MACHINE_KEYS[key], value if is_version(value, 2) else "")
    elif gpu is not None and key in _GPU_KEYS:
        _GPU_KEYS[key](gpu, value)


def _finish(facts: Facts) -> None:
    facts.sources.append(SOURCE)
    facts.os = "linux"
    for gpu in facts.gpus:
        gpu.driver_version = gpu.driver_version or facts.driver_version
    facts.gpus = [g for g in facts.gpus if g.name]
