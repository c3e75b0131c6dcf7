"""`/proc/cpuinfo`, x86 and ARM (Raspberry Pi's trailer included)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from catalog.wizard import cpus
from catalog.wizard.detect.facts import Facts, key_value, short, split_lines

SOURCE = "/proc/cpuinfo"
MARKERS = ("processor", "Processor")
# Lines without a tab that still belong to /proc/cpuinfo (ARM, Raspberry Pi).
_UNTABBED = (
    "processor",
    "Processor",
    "BogoMIPS",
    "Hardware",
    "Revision",
    "Serial",
    "Model",
    "power management",
)
_OTHER_KEYS = frozenset(
    {
        "cpu family",
        "model",
        "stepping",
        "microcode",
        "cpu MHz",
        "cache size",
        "physical id",
        "siblings",
        "core id",
        "cpu cores",
        "apicid",
        "initial apicid",
        "fpu",
        "fpu_exception",
        "cpuid level",
        "wp",
        "bugs",
        "bogomips",
        "BogoMIPS",
        "clflush size",
        "cache_alignment",
        "address sizes",
        "power management",
        "CPU architecture",
        "CPU variant",
        "CPU revision",
        "Hardware",
        "Revision",
        "Serial",
        "TLB size",
        "vmx flags",
    }
)
_X86_VENDORS = frozenset({"GenuineIntel", "AuthenticAMD", "HygonGenuine", "CentaurHauls"})


def parse_cpuinfo(text: str) -> Facts:
    return parse(split_lines(text))[0]


@dataclass
class _Reading:
    """What the lines read so far say."""

    facts: Facts = field(default_factory=Facts)
    flags: set[str] = field(default_factory=set)
    saw_processor: bool = False
    saw_features: bool = False
    implementer: str = ""


def _processor(r: _Reading, value: str) -> None:
    r.saw_processor = True


def _flags(r: _Reading, value: str) -> None:
    r.saw_features = True
    if not r.flags:
        r.flags.update(value.lower().split())
    else:
        r.flags &= set(value.lower().split())  # a CPU's usable set is what every core has


def _vendor(r: _Reading, value: str) -> None:
    r.facts.cpu_vendor = r.facts.cpu_vendor or short(value)


def _model(r: _Reading, value: str) -> None:
    # "model name" on x86; "Model" on a Raspberry Pi ("Model : Pi 4")
    r.facts.cpu_model = r.facts.cpu_model or short(value)


def _implementer(r: _Reading, value: str) -> None:
    r.implementer = r.implementer or value.lower()[:10]


def _part(r: _Reading, value: str) -> None:
    part = value.lower()[:10]
    if part not in r.facts.cpu_parts:
        r.facts.cpu_parts.append(part)


# The keys read, each with what it records; _OTHER_KEYS are only recognised.
_READERS: dict[str, Callable[[_Reading, str], None]] = {
    "processor": _processor,
    "flags": _flags,
    "Features": _flags,
    "vendor_id": _vendor,
    "model name": _model,
    "CPU implementer": _implementer,
    "CPU part": _part,
    "Model": _model,
}


def parse(lines: list[str]) -> tuple[Facts, set[int]]:
    reading, used = _Reading(), set()
    for i, line in enumerate(lines):
        if "\t" not in line and not line.startswith(_UNTABBED):
            continue
        pair = key_value(line)
        if pair is None or not pair[0][:1].isalpha():
            continue
        key, value = pair
        reader = _READERS.get(key)
        if reader is not None:
            reader(reading, value)
        elif key not in _OTHER_KEYS:
            continue
        used.add(i)
    facts = reading.facts
    if not (
        reading.saw_processor and (reading.saw_features or facts.cpu_vendor or facts.cpu_parts)
    ):
        return Facts(), set()
    facts.cpu_features = reading.flags
    _set_arch(facts, reading.flags, reading.implementer)
    facts.sources.append(SOURCE)
    facts.os = "linux"
    return facts, used


def _set_arch(facts: Facts, flags: set[str], implementer: str) -> None:
    """ARM when the CPU has an implementer or parts (naming them), x86 by vendor or flags."""
    if facts.cpu_parts or implementer:
        facts.arch = "aarch64"
        vendor = cpus.ARM_IMPLEMENTERS.get(implementer, implementer)
        facts.cpu_vendor = facts.cpu_vendor or vendor
        if not facts.cpu_model and facts.cpu_parts:
            facts.cpu_model = short(" + ".join(cpus.ARM_PARTS.get(p, p) for p in facts.cpu_parts))
    elif facts.cpu_vendor in _X86_VENDORS or flags & {"sse2", "lm"}:
        facts.arch = "x86_64" if "lm" in flags or not flags else "i686"
