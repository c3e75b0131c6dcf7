"""`nvidia-smi` (the default table), old and new layouts; also its "cannot talk to the driver"
message, which means no usable GPU."""

from __future__ import annotations

from dataclasses import dataclass, field

from catalog.wizard.detect.facts import (
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


@dataclass
class _Reading:
    """What the lines read so far say."""

    facts: Facts = field(default_factory=Facts)
    used: set[int] = field(default_factory=set)
    header_seen: bool = False
    last_gpu: GpuFacts | None = None


def parse(lines: list[str]) -> tuple[Facts, set[int]]:
    r = _Reading()
    for i, line in enumerate(lines):
        if _NO_DRIVER[0] in line or _NO_DRIVER[1] in line:
            _no_driver(r, i)
            continue
        if _header(r, lines, i):
            continue
        if not r.header_seen:
            if _is_date(line):
                r.used.add(i)
            continue
        name = _gpu_row(line)
        if name and len(r.facts.gpus) >= MAX_GPU_LINES:
            r.facts.errors.append(TOO_MANY_GPUS)
            break
        if name:
            r.used.add(i)
            r.last_gpu = GpuFacts(name=short(name), driver_version=r.facts.driver_version)
            r.facts.gpus.append(r.last_gpu)
            continue
        _table_line(r, line, i)
    if r.header_seen:
        _finish(r.facts)
    return r.facts, r.used


def _no_driver(r: _Reading, i: int) -> None:
    r.used.add(i)
    if SOURCE not in r.facts.sources:
        r.facts.sources.append(SOURCE)
        r.facts.notes.append(
            "nvidia-smi could not talk to the NVIDIA driver: the driver is missing or not "
            "loaded, so no GPU could be detected."
        )


def _header(r: _Reading, lines: list[str], i: int) -> bool:
    """Whether line i is the table's header ('NVIDIA-SMI 580.1  Driver Version: 580.1  CUDA
    Version: 13.0'), read into the facts with the border above it."""
    line = lines[i]
    if "NVIDIA-SMI" not in line or "Driver Version:" not in line:
        return False
    driver = _after(line, "Driver Version:")
    if not is_version(driver, 2):
        return False
    r.header_seen = True
    r.used.add(i)
    if i and lines[i - 1].strip().startswith("+"):
        r.used.add(i - 1)
    r.facts.driver_version = driver
    cuda = _after(line, "CUDA Version:")
    if is_version(cuda, 2):
        r.facts.cuda_version = cuda
    return True


def _table_line(r: _Reading, line: str, i: int) -> None:
    """A line of the table below a GPU's row: its memory, borders and the process list."""
    if r.last_gpu is not None and r.last_gpu.memory_mib is None and "MiB" in line:
        r.last_gpu.memory_mib = _memory_total(line)
    if line.strip().startswith(("|", "+")) or "No running processes found" in line:
        r.used.add(i)


def _finish(facts: Facts) -> None:
    if SOURCE not in facts.sources:
        facts.sources.append(SOURCE)
    facts.os = facts.os or "linux"
    if not facts.gpus:
        facts.notes.append("nvidia-smi ran but listed no GPU.")
