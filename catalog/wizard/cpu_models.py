"""CPU model names ("Ryzen 9 7950X", "Xeon Platinum 8480+", "Grace") -> archspec microarchitecture.

archspec names microarchitectures from feature flags, not from the names people know their CPU
by; this table bridges the two. Model numbers encode the generation, so families are rules
(a pattern and the digit that picks the generation), not one row per SKU. Plain Python.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from catalog.wizard import cpus

MAX_TEXT = 200  # characters of a CPU name that are read (real ones are under 80)

# (pattern over the compact name, {generation digit(s): archspec target}); group 1 is the key.
# Compact: lower case, letters and digits only ("Ryzen 9 7950X" -> "ryzen97950x").
FAMILY_RULES: tuple[tuple[str, str, dict[str, str]], ...] = (
    # AMD Ryzen desktop/laptop: the thousands digit is the series.
    (
        "AMD Ryzen",
        r"ryzen(?:threadripper(?:pro)?)?(?:ai)?[3579]?([1-9])\d{3}",
        {
            "1": "zen",
            "2": "zen",
            "3": "zen2",
            "4": "zen2",
            "5": "zen3",
            "7": "zen4",
            "8": "zen4",
            "9": "zen5",
        },
    ),
    # AMD EPYC 7002/7003/9004/9005: the last digit is the generation.
    (
        "AMD EPYC",
        r"epyc[79]\d{2}([1-5])",
        {"1": "zen", "2": "zen2", "3": "zen3", "4": "zen4", "5": "zen5"},
    ),
    # Intel Xeon Scalable: the second digit is the generation (8480 -> 4th, Sapphire Rapids).
    (
        "Intel Xeon",
        r"xeon(?:platinum|gold|silver|bronze)\d([1-5])\d{2}",
        {
            "1": "skylake_avx512",
            "2": "cascadelake",
            "3": "icelake",
            "4": "sapphirerapids",
            "5": "sapphirerapids",
        },
    ),
    (
        "Intel Xeon W",
        r"xeonw[3579]?-?([23])\d{3}",
        {"2": "sapphirerapids", "3": "sapphirerapids"},
    ),
    # Intel Core i3/i5/i7/i9: 10th-14th generation have five digits, 2nd-9th four.
    (
        "Intel Core",
        r"(?:core)?i[3579]-?(1[0-4]|[2-9])\d{2,3}",
        {
            "2": "sandybridge",
            "3": "ivybridge",
            "4": "haswell",
            "5": "broadwell",
            "6": "skylake",
            "7": "skylake",
            "8": "skylake",
            "9": "skylake",
            "10": "skylake",
            "11": "icelake",
            "12": "alderlake",
            "13": "alderlake",
            "14": "alderlake",
        },
    ),
    # Intel Core Ultra 200 (Arrow Lake) and 100 (Meteor Lake: Alder Lake's ISA).
    ("Intel Core Ultra", r"coreultra[579]([12])\d{2}", {"1": "alderlake", "2": "arrowlake"}),
    (
        "Apple",
        r"(?:apple)?m([1-4])(?:pro|max|ultra)?$",
        {"1": "m1", "2": "m2", "3": "m3", "4": "m4"},
    ),
)

# Names without a model number: compact spelling -> (display name, archspec target, note).
NAMED: dict[str, tuple[str, str, str]] = {
    "grace": ("NVIDIA Grace", "neoverse_v2", "72 Neoverse V2 cores (GH200, GB200)"),
    "gracehopper": ("NVIDIA Grace", "neoverse_v2", "72 Neoverse V2 cores (GH200, GB200)"),
    "gb10": ("NVIDIA GB10", "neoverse_v2", "Cortex-X925 + A725 cores; SVE2, so ARMv9"),
    "dgxspark": ("NVIDIA GB10", "neoverse_v2", "Cortex-X925 + A725 cores; SVE2, so ARMv9"),
    "graviton2": ("AWS Graviton2", "neoverse_n1", "Neoverse N1: no SVE"),
    "graviton3": ("AWS Graviton3", "neoverse_v1", "Neoverse V1: SVE but no SVE2"),
    "graviton4": ("AWS Graviton4", "neoverse_v2", "Neoverse V2: SVE2"),
    "amperealtra": ("Ampere Altra", "neoverse_n1", "Neoverse N1: no SVE"),
    "ampereone": ("AmpereOne", "ampere1", ""),
    "cobalt100": ("Microsoft Cobalt 100", "neoverse_n2", "Neoverse N2: SVE2"),
    "raspberrypi4": ("Raspberry Pi 4", "cortex_a72", "ARMv8.0: no build runs on it"),
    "raspberrypi5": ("Raspberry Pi 5", "cortex_a72", "Cortex-A76, ARMv8.2"),
}


@dataclass(frozen=True)
class CpuModelMatch:
    query: str
    name: str  # "AMD Ryzen 9 7950X", or the table's display name
    target: str  # archspec microarchitecture, e.g. "zen4"
    note: str = ""


def compact(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", (text or "")[:MAX_TEXT].lower().replace("(r)", ""))


_COMPILED = tuple((family, re.compile(pattern), table) for family, pattern, table in FAMILY_RULES)
_MARKS = re.compile(r"\((?:r|tm)\)|[®™]|@.*$", re.IGNORECASE)  # trademarks, "@ 2.00GHz"
_NOISE = re.compile(r"\b(amd|intel|aws|nvidia|processor|cpu|\d+-core)\b", re.IGNORECASE)


def resolve_cpu_model(text: str) -> CpuModelMatch | None:
    """The microarchitecture of a CPU model name, or None when no rule knows it.

    Rules match from the start of the name, after vendor words and punctuation are dropped
    ("AMD Ryzen 9 7950X 16-Core Processor" -> "ryzen97950x16core").
    """
    key = compact(_NOISE.sub(" ", _MARKS.sub(" ", (text or "")[:MAX_TEXT])))
    if not key:
        return None
    if key in NAMED:
        name, target, note = NAMED[key]
        return CpuModelMatch(text, name, target, note)
    for family, pattern, table in _COMPILED:
        match = pattern.match(key)
        if match and match.group(1) in table:
            shown = " ".join(_NOISE.sub(" ", _MARKS.sub(" ", text[:MAX_TEXT])).split())
            vendor = family.split()[0]
            if not shown.lower().startswith(vendor.lower()):
                shown = f"{vendor} {shown}"
            return CpuModelMatch(text, shown, table[match.group(1)])
    return None


def systems_by_best_isa(isas: Iterable[tuple[str, int, frozenset, str]]) -> dict[str, list[str]]:
    """For each ISA (slug, rank, features it needs, arch), the named systems of NAMED whose best
    ISA it is: the highest-ranked one of their architecture whose features archspec lists for
    their microarchitecture ("which to pick" beside a choice)."""
    isas = list(isas)
    out: dict[str, list[str]] = {}
    for name, target, _note in dict.fromkeys(NAMED.values()):
        have = cpus.target_features(target)
        arch = cpus.target_arch(target)
        fits = [
            (rank, slug)
            for slug, rank, need, isa_arch in isas
            if isa_arch == arch and {cpus.FEATURE_ALIASES.get(f, f) for f in need} <= have
        ]
        if fits:
            names = out.setdefault(max(fits)[1], [])
            if name not in names:
                names.append(name)
    return out
