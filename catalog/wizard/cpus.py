"""What the engine knows about CPUs: architecture spellings, naming a microarchitecture, and the
features a CPU must have given some it is known to have — all from archspec's microarchitecture
data (the DAG Spack uses), not from hand tables.

Plain Python, no Django. Detection (`catalog.wizard.detect`) and answer reading
(`catalog.wizard.answers`) both read this module, so a spelling or a rule lives here once.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

import archspec.cpu

from catalog.vocabulary import CPU_ARCHES

# Every spelling of the two architectures the catalogue builds for, as `uname -m` prints them and
# as people type them. The values are the vocabulary's architecture keys.
ARCH_ALIASES: dict[str, str] = {
    **{key: key for key in CPU_ARCHES},
    "x86-64": "x86_64",
    "amd64": "x86_64",
    "x64": "x86_64",
    "intel": "x86_64",
    "arm64": "aarch64",
    "aarch64_be": "aarch64",
    "arm": "aarch64",
    "armv8": "aarch64",
}
assert set(ARCH_ALIASES.values()) == set(CPU_ARCHES)
# Machines `uname -m` names that no build targets (recognised, then refused as unsupported).
OTHER_MACHINES = frozenset("i386 i686 armv7l armv6l ppc64le ppc64 s390x riscv64".split())

# Features that exist on one architecture only: a flag list mixing them is contradictory.
X86_ONLY_FEATURES = frozenset(
    "sse sse2 ssse3 sse4_1 sse4_2 avx avx2 fma f16c avx512f avx512dq avx512vl avx512bw "
    "avx512_bf16 avx512_vnni pni mmx cx16".split()
)
ARM_ONLY_FEATURES = frozenset("asimd fphp asimdhp asimddp sve sve2 evtstrm asimdrdm".split())

# ARM `CPU part` ids (implementer 0x41, Arm Ltd) -> core name.
ARM_PARTS = {
    "0xd03": "Cortex-A53",
    "0xd04": "Cortex-A35",
    "0xd05": "Cortex-A55",
    "0xd07": "Cortex-A57",
    "0xd08": "Cortex-A72",
    "0xd09": "Cortex-A73",
    "0xd0a": "Cortex-A75",
    "0xd0b": "Cortex-A76",
    "0xd0c": "Neoverse N1",
    "0xd0d": "Cortex-A77",
    "0xd40": "Neoverse V1",
    "0xd41": "Cortex-A78",
    "0xd44": "Cortex-X1",
    "0xd46": "Cortex-A510",
    "0xd47": "Cortex-A710",
    "0xd48": "Cortex-X2",
    "0xd49": "Neoverse N2",
    "0xd4a": "Neoverse E1",
    "0xd4d": "Cortex-A715",
    "0xd4e": "Cortex-X3",
    "0xd4f": "Neoverse V2",
    "0xd80": "Cortex-A520",
    "0xd81": "Cortex-A720",
    "0xd82": "Cortex-X4",
    "0xd83": "Neoverse V3AE",
    "0xd84": "Neoverse V3",
    "0xd85": "Cortex-X925",
    "0xd87": "Cortex-A725",
    "0xd8e": "Neoverse N3",
}
# Where a core is best known from (for the reasons text).
ARM_CORE_SYSTEMS = {
    "Neoverse N1": "AWS Graviton2, Ampere Altra",
    "Neoverse V1": "AWS Graviton3",
    "Neoverse V2": "NVIDIA Grace, AWS Graviton4",
    "Neoverse N2": "Microsoft Cobalt 100",
    "Cortex-X925": "NVIDIA GB10 / DGX Spark",
    "Cortex-A72": "Raspberry Pi 4, AWS Graviton1",
    "Cortex-A53": "Raspberry Pi 3",
}
ARM_IMPLEMENTERS = {
    "0x41": "ARM",
    "0x4e": "Nvidia",
    "0x61": "Apple",
    "0xc0": "Ampere",
    "0x48": "HiSilicon",
}

# archspec target name -> how people call it.
MICROARCH_LABELS = {
    "sandybridge": "Intel Sandy Bridge",
    "ivybridge": "Intel Ivy Bridge",
    "haswell": "Intel Haswell",
    "broadwell": "Intel Broadwell",
    "skylake": "Intel Skylake",
    "skylake_avx512": "Intel Skylake-SP (AVX-512)",
    "mic_knl": "Intel Xeon Phi Knights Landing",
    "cannonlake": "Intel Cannon Lake",
    "cascadelake": "Intel Cascade Lake",
    "icelake": "Intel Ice Lake",
    "sapphirerapids": "Intel Sapphire Rapids",
    "alderlake": "Intel Alder Lake",
    "arrowlake": "Intel Arrow Lake",
    "arrowlake_s": "Intel Arrow Lake",
    "bulldozer": "AMD Bulldozer",
    "piledriver": "AMD Piledriver",
    "steamroller": "AMD Steamroller",
    "excavator": "AMD Excavator",
    "zen": "AMD Zen",
    "zen2": "AMD Zen 2",
    "zen3": "AMD Zen 3",
    "zen4": "AMD Zen 4",
    "zen5": "AMD Zen 5",
    "zen6": "AMD Zen 6",
    "neoverse_n1": "Neoverse N1 (AWS Graviton2)",
    "neoverse_v1": "Neoverse V1 (AWS Graviton3)",
    "neoverse_v2": "Neoverse V2 (NVIDIA Grace, AWS Graviton4)",
    "neoverse_n2": "Neoverse N2",
    "neoverse_v3ae": "Neoverse V3AE",
    "cortex_a72": "Cortex-A72",
    "a64fx": "Fujitsu A64FX",
    "thunderx2": "Cavium ThunderX2",
    "ampere1": "AmpereOne",
    "ampere1a": "AmpereOne A",
    "olympus": "NVIDIA Olympus (Vera)",
    "m1": "Apple M1",
    "m2": "Apple M2",
    "m3": "Apple M3",
    "m4": "Apple M4",
}
# Linux spells some features differently from archspec's tables.
FEATURE_ALIASES = {"pni": "sse3"}
# Features hypervisors commonly hide; not needed to name the microarchitecture.
_NAMING_OPTIONAL = frozenset({"waitpkg"})
_APPLE_CHIP = re.compile(r"apple\s+m(\d{1,2})")


def infer_arch(features: Iterable[str]) -> str:
    """x86_64 or aarch64 when the features belong to one architecture only; "" otherwise."""
    features = set(features)
    if features & X86_ONLY_FEATURES and not features & ARM_ONLY_FEATURES:
        return "x86_64"
    if features & ARM_ONLY_FEATURES and not features & X86_ONLY_FEATURES:
        return "aarch64"
    return ""


# ---------------------------------------------------------------------------------------------
# archspec's targets, read once
# ---------------------------------------------------------------------------------------------


@functools.cache
def _targets(arch: str) -> tuple[tuple[str, frozenset], ...]:
    """(name, features) of archspec's targets of an architecture that list their features."""
    return tuple(
        (t.name, frozenset(t.features))
        for t in archspec.cpu.TARGETS.values()
        if t.family.name == arch and t.features
    )


@functools.cache
def _known_features(arch: str) -> frozenset:
    return frozenset().union(*(features for _name, features in _targets(arch)))


def microarchitectures(arch: str) -> tuple[str, ...]:
    """archspec's named targets of an architecture (for reading a `cpu` answer)."""
    return tuple(name for name, _features in _targets(arch))


def target_features(name: str) -> frozenset:
    """The features archspec lists for a target (empty when it is unknown)."""
    target = archspec.cpu.TARGETS.get(name)
    return frozenset(target.features) if target is not None else frozenset()


def target_arch(name: str) -> str:
    target = archspec.cpu.TARGETS.get(name)
    return target.family.name if target is not None and target.family.name in CPU_ARCHES else ""


def complete_features(given: Iterable[str], arch: str) -> tuple[frozenset, frozenset]:
    """(given + implied, implied): the features every known CPU with all the given ones also has.

    archspec's microarchitectures (including the generic x86-64 levels v2–v4 and the ARMv8/v9
    families) are the known CPUs; names archspec does not know (typos, features of no target) are
    kept but do not narrow the search. No known CPU having them all means nothing is implied.
    """
    given = frozenset(str(f).lower() for f in given)
    have = {FEATURE_ALIASES.get(f, f) for f in given}
    known = have & _known_features(arch)
    if not known:
        return given, frozenset()
    candidates = [features for _name, features in _targets(arch) if known <= features]
    if not candidates:
        return given, frozenset()
    implied = frozenset.intersection(*candidates) - have
    return given | implied, implied


# ---------------------------------------------------------------------------------------------
# Naming the CPU
# ---------------------------------------------------------------------------------------------


def name_microarchitecture(
    features: Iterable[str],
    vendor: str = "",
    arch: str = "",
    cpu_parts: Iterable[str] = (),
    cpu_model: str = "",
) -> tuple[str, str]:
    """The most specific archspec target the features support, as (name, label).

    x86: targets of the CPU's vendor (or generic) whose features are all present; the deepest
    wins. ARM: a target with the CPU's `CPU part` id wins; otherwise the same subset rule.
    Apple: the brand string names the chip ("Apple M3 Pro" -> m3).
    """
    targets = archspec.cpu.TARGETS
    have = {FEATURE_ALIASES.get(f, f) for f in (str(x).lower() for x in features)}
    have |= _NAMING_OPTIONAL
    cpu_model = cpu_model or ""
    if vendor == "Apple" or cpu_model.startswith("Apple"):
        m = _APPLE_CHIP.search(cpu_model[:200].lower())
        if m:
            for n in range(int(m.group(1)), 0, -1):
                if f"m{n}" in targets:
                    label = cpu_model or MICROARCH_LABELS.get(f"m{n}", f"Apple M{n}")
                    return f"m{n}", label.strip()
        return "", cpu_model
    if arch == "aarch64" or (not arch and infer_arch(have) == "aarch64"):
        return _name_arm(have, vendor, cpu_parts, cpu_model)
    cands = [
        t
        for t in targets.values()
        if t.family.name == "x86_64"
        and (not vendor or t.vendor in (vendor, "generic"))
        and t.features.issubset(have)
    ]
    return _best(cands)


def _name_arm(have, vendor, cpu_parts, cpu_model) -> tuple[str, str]:
    targets = archspec.cpu.TARGETS
    parts = [p.lower() for p in cpu_parts]
    if not parts and cpu_model:
        by_name = {n.replace("-", " ").lower(): p for p, n in ARM_PARTS.items()}
        for model in cpu_model.split(" + "):
            part = by_name.get(model.replace("-", " ").strip().lower())
            if part:
                parts.append(part)
    by_part = [t for t in targets.values() if t.cpu_part and t.cpu_part.lower() in parts]
    if by_part:
        best = max(by_part, key=lambda t: (len(t.ancestors), len(t.features)))
        return best.name, MICROARCH_LABELS.get(best.name, best.name)
    if parts:
        cores = [ARM_PARTS.get(p, p) for p in parts]
        label = " + ".join(cores)
        systems = [ARM_CORE_SYSTEMS[c] for c in cores if c in ARM_CORE_SYSTEMS]
        return "", f"{label} ({systems[0]})" if systems else label
    model = cpu_model.replace("-", " ").lower()
    for name, label in MICROARCH_LABELS.items():
        if name in targets and targets[name].family.name == "aarch64":
            if label.split(" (")[0].lower() == model:
                return name, label
    vendor_name = ARM_IMPLEMENTERS.get(str(vendor).lower(), vendor)
    cands = [
        t
        for t in targets.values()
        if t.family.name == "aarch64"
        and t.vendor in (vendor_name, "generic")
        and t.features
        and t.features.issubset(have)
    ]
    return _best(cands)


def _best(cands) -> tuple[str, str]:
    if not cands:
        return "", ""
    specific = [t for t in cands if t.vendor != "generic"]
    best = max(specific or cands, key=lambda t: (len(t.ancestors), len(t.features)))
    if best.vendor == "generic" and best.name in CPU_ARCHES:
        return "", ""
    if best.vendor == "generic":
        return best.name, best.name.replace("_", "-") + " (generic)"
    return best.name, MICROARCH_LABELS.get(best.name, best.name.replace("_", " "))


def generations_with(needed: Iterable[str], arch: str) -> str:
    """The named CPU generations (archspec's non-generic microarchitectures) that have every
    needed feature, grouped by vendor, older first: 'Intel Sapphire Rapids; AMD Zen 4, Zen 5'.
    "" when none or nothing is needed."""
    need = {FEATURE_ALIASES.get(f.lower(), f.lower()) for f in needed}
    if not need:
        return ""
    hits = sorted(
        (
            t
            for t in archspec.cpu.TARGETS.values()
            if t.family.name == arch and t.vendor != "generic" and need <= set(t.features)
        ),
        key=lambda t: (t.vendor, *_label_order(t.name)),
    )
    groups: dict[str, list[str]] = {}
    for t in hits:
        labels = groups.setdefault(t.vendor, [])
        label = label_of(t.name)
        if label not in labels:
            labels.append(label)
    return "; ".join(_shared_prefix(labels) for labels in groups.values())


def _label_order(name: str) -> tuple[int, str]:
    """MICROARCH_LABELS is written oldest first within a vendor; unlabelled targets go last."""
    order = list(MICROARCH_LABELS)
    return (order.index(name) if name in order else len(order), name)


def _shared_prefix(labels: list[str]) -> str:
    """'Intel Ice Lake, Sapphire Rapids': the vendor word said once."""
    first = labels[0].split(" ", 1)[0]
    if len(labels) > 1 and all(label.startswith(first + " ") for label in labels):
        return first + " " + ", ".join(label[len(first) + 1 :] for label in labels)
    return ", ".join(labels)


def label_of(target: str) -> str:
    """How people call an archspec target ("sapphirerapids" -> "Intel Sapphire Rapids")."""
    if not target:
        return ""
    return MICROARCH_LABELS.get(target, target.replace("_", " "))
