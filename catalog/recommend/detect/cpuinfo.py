"""`/proc/cpuinfo`, x86 and ARM (Raspberry Pi's trailer included)."""

from __future__ import annotations

from catalog.recommend import cpus
from catalog.recommend.detect.facts import Facts, key_value, short, split_lines

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


def parse(lines: list[str]) -> tuple[Facts, set[int]]:
    facts, used = Facts(), set()
    flags: set[str] = set()
    saw_processor = saw_features = False
    implementer = ""
    for i, line in enumerate(lines):
        if "\t" not in line and not line.startswith(_UNTABBED):
            continue
        pair = key_value(line)
        if pair is None or not pair[0][:1].isalpha():
            continue
        key, value = pair
        if key == "processor":
            saw_processor = True
        elif key in ("flags", "Features"):
            saw_features = True
            if not flags:
                flags.update(value.lower().split())
            else:
                flags &= set(value.lower().split())  # a CPU's usable set is what every core has
        elif key == "vendor_id":
            facts.cpu_vendor = facts.cpu_vendor or short(value)
        elif key == "model name":
            facts.cpu_model = facts.cpu_model or short(value)
        elif key == "CPU implementer":
            implementer = implementer or value.lower()[:10]
        elif key == "CPU part":
            part = value.lower()[:10]
            if part not in facts.cpu_parts:
                facts.cpu_parts.append(part)
        elif key == "Model":
            facts.cpu_model = facts.cpu_model or short(value)  # Raspberry Pi: "Model : Pi 4"
        elif key not in _OTHER_KEYS:
            continue
        used.add(i)
    if not (saw_processor and (saw_features or facts.cpu_vendor or facts.cpu_parts)):
        return Facts(), set()
    facts.cpu_features = flags
    if facts.cpu_parts or implementer:
        facts.arch = "aarch64"
        vendor = cpus.ARM_IMPLEMENTERS.get(implementer, implementer)
        facts.cpu_vendor = facts.cpu_vendor or vendor
        if not facts.cpu_model and facts.cpu_parts:
            facts.cpu_model = short(" + ".join(cpus.ARM_PARTS.get(p, p) for p in facts.cpu_parts))
    elif facts.cpu_vendor in _X86_VENDORS or flags & {"sse2", "lm"}:
        facts.arch = "x86_64" if "lm" in flags or not flags else "i686"
    facts.sources.append(SOURCE)
    facts.os = "linux"
    return facts, used
