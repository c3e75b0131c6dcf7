"""`nvidia-smi` (the default table), old and new layouts; also its "cannot talk to the driver"
message, which means no usable GPU."""

from __future__ import annotations

from catalog.recommend.detect.facts import (
    MAX_GPU_LINES,
    TOO_MANY_GPUS,
    Facts,
    GpuFacts,
    is_version,
    short,
    split_lines,
)

SOURCE = "nvidia-smi"
_NO_DRIVER = ("NVIDIA-SMI has failed", "couldn't communicate with the NVIDIA driver")
MARKERS = ("NVIDIA-SMI", *_NO_DRIVER)  # text without any of these is not nvidia-smi output
_PERSISTENCE = frozenset({"On", "Off", "WDDM", "TCC"})
_HEX = frozenset("0123456789abcdefABCDEF")


def parse_nvidia_smi(text: str) -> Facts:
    return parse(split_lines(text))[0]


def _after(line: str, label: str) -> str:
    """The word after `label` in a line ('Driver Version: 580.1  CUDA...' -> '580.1')."""
    at = line.find(label)
    if at < 0:
        return ""
    words = line[at + len(label) :].split(None, 1)
    return words[0] if words else ""


def _is_bus_id(word: str) -> bool:
    """'00000000:00:06.0' (domain:bus:device.function, hexadecimal)."""
    domain, _, rest = word.partition(":")
    bus, _, rest = rest.partition(":")
    device, _, function = rest.partition(".")
    return (
        4 <= len(domain) <= 8
        and len(bus) == 2
        and len(device) == 2
        and len(function) == 1
        and set(domain + bus + device + function) <= _HEX
    )


def _gpu_row(line: str) -> str:
    """The GPU name of a table row: '|   0  NVIDIA H100 80GB HBM3   On  |   00000000:00:06.0
    Off |' -> 'NVIDIA H100 80GB HBM3'."""
    cells = line.strip().split("|")
    if len(cells) < 3 or cells[0].strip():
        return ""
    words, bus = cells[1].split(), cells[2].split()
    if len(words) < 3 or not words[0].isdigit() or words[-1] not in _PERSISTENCE:
        return ""
    if not bus or not _is_bus_id(bus[0]):
        return ""
    return " ".join(words[1:-1])


def _memory_total(line: str) -> int | None:
    """'... |   0MiB /  81559MiB | ...' -> 81559."""
    words = line.replace("/", " / ").split()
    for i in range(1, len(words) - 1):
        if words[i] == "/" and words[i - 1].endswith("MiB") and words[i + 1].endswith("MiB"):
            total = words[i + 1][:-3]
            if total.isdigit() and words[i - 1][:-3].isdigit():
                return int(total)
    return None


def _is_date(line: str) -> bool:
    """'Sun Nov 22 14:34:40 2026' (nvidia-smi's first line)."""
    if len(line) > 64 or ":" not in line:
        return False
    words = line.split()
    return (
        len(words) == 5
        and len(words[0]) == 3
        and len(words[1]) == 3
        and words[2].isdigit()
        and words[3].count(":") == 2
        and words[4].isdigit()
    )


def parse(lines: list[str]) -> tuple[Facts, set[int]]:
    facts, used = Facts(), set()
    header_seen = False
    last_gpu = None
    for i, line in enumerate(lines):
        if _NO_DRIVER[0] in line or _NO_DRIVER[1] in line:
            used.add(i)
            if SOURCE not in facts.sources:
                facts.sources.append(SOURCE)
                facts.notes.append(
                    "nvidia-smi could not talk to the NVIDIA driver: the driver is missing or not "
                    "loaded, so no GPU could be detected."
                )
            continue
        if "NVIDIA-SMI" in line and "Driver Version:" in line:
            driver = _after(line, "Driver Version:")
            if is_version(driver, 2):
                header_seen = True
                used.add(i)
                if i and lines[i - 1].strip().startswith("+"):
                    used.add(i - 1)
                facts.driver_version = driver
                cuda = _after(line, "CUDA Version:")
                if is_version(cuda, 2):
                    facts.cuda_version = cuda
                continue
        if not header_seen:
            if _is_date(line):
                used.add(i)
            continue
        name = _gpu_row(line)
        if name and len(facts.gpus) >= MAX_GPU_LINES:
            facts.errors.append(TOO_MANY_GPUS)
            break
        if name:
            used.add(i)
            last_gpu = GpuFacts(name=short(name), driver_version=facts.driver_version)
            facts.gpus.append(last_gpu)
            continue
        if last_gpu is not None and last_gpu.memory_mib is None and "MiB" in line:
            last_gpu.memory_mib = _memory_total(line)
        stripped = line.strip()
        if stripped.startswith(("|", "+")) or "No running processes found" in line:
            used.add(i)
    if header_seen:
        if SOURCE not in facts.sources:
            facts.sources.append(SOURCE)
        facts.os = facts.os or "linux"
        if not facts.gpus:
            facts.notes.append("nvidia-smi ran but listed no GPU.")
    return facts, used
