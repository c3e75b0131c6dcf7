"""`lscpu`, old (flat) and new (indented) layouts, including hybrid CPUs with one section per
core type."""

from __future__ import annotations

from catalog.wizard import cpus
from catalog.wizard.detect.facts import Facts, key_value, short, split_lines

SOURCE = "lscpu"
MARKERS = ("Architecture:",)
KEYS = frozenset(
    {
        "Architecture",
        "CPU op-mode(s)",
        "Byte Order",
        "CPU(s)",
        "On-line CPU(s) list",
        "Vendor ID",
        "Model name",
        "CPU family",
        "Model",
        "Thread(s) per core",
        "Core(s) per socket",
        "Core(s) per cluster",
        "Socket(s)",
        "Cluster(s)",
        "Stepping",
        "BogoMIPS",
        "Flags",
        "Address sizes",
        "CPU max MHz",
        "CPU min MHz",
        "Hypervisor vendor",
        "Virtualization type",
        "Virtualization",
        "NUMA node(s)",
        "L1d cache",
        "L1i cache",
        "L2 cache",
        "L3 cache",
        "Frequency boost",
        "CPU(s) scaling MHz",
        "Caches (sum of all)",
        "NUMA",
        "Vulnerabilities",
    }
)
_KEY_PREFIXES = ("Vulnerability", "NUMA node", "L1", "L2", "L3")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ()/-")


def parse_lscpu(text: str) -> Facts:
    return parse(split_lines(text))[0]


def _field(line: str) -> tuple[str, str] | None:
    """'  Model name:   Intel…' -> ('Model name', 'Intel…'): a capitalised key, then a colon
    and blanks before the value (lscpu's layout; /proc/cpuinfo's tab-separated one is not it)."""
    if ":" not in line or line.startswith("\t"):
        return None
    key, _, rest = line.strip().partition(":")
    if not rest[:1].isspace() or not key[:1].isupper() or not set(key) <= _KEY_CHARS:
        return None
    return key_value(line)


def parse(lines: list[str]) -> tuple[Facts, set[int]]:
    facts, used = Facts(), set()
    seen_arch = False
    flags: set[str] = set()
    for i, line in enumerate(lines):
        pair = _field(line)
        if pair is None:
            continue
        key, value = pair
        if key == "Architecture":
            seen_arch = True
            arch = cpus.ARCH_ALIASES.get(value, value)
            if facts.arch and arch != facts.arch:
                facts.errors.append(
                    f"The pasted outputs disagree: one lscpu says {facts.arch}, another {arch}. "
                    "Paste outputs from one machine."
                )
            facts.arch = facts.arch or short(arch)
        elif not (key in KEYS or key.startswith(_KEY_PREFIXES)):
            continue
        used.add(i)
        if key == "Vendor ID" and not facts.cpu_vendor:
            facts.cpu_vendor = short(value)
        elif key == "Model name":
            # Hybrid CPUs (e.g. GB10) list one section per core type.
            model = f"{facts.cpu_model} + {value}" if facts.cpu_model else value
            facts.cpu_model = short(model)
        elif key == "Flags":
            flags.update(value.lower().split())
    if not seen_arch:
        return Facts(), set()
    facts.cpu_features = flags
    facts.sources.append(SOURCE)
    facts.os = "linux"
    return facts, used
