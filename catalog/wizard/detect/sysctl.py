"""macOS `sysctl -a | grep machdep.cpu` (and `hw.optional`, `hw.machine`...)."""

from __future__ import annotations

from catalog.wizard.detect.facts import Facts, short, split_lines

SOURCE = "sysctl"
_PREFIXES = ("machdep.cpu", "hw.optional", "hw.cputype", "hw.machine", "hw.model")
MARKERS = _PREFIXES
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")
# macOS spells some CPU features differently from Linux (archspec's conversion table).
_DARWIN_FLAGS = {
    "sse4.1": "sse4_1",
    "sse4.2": "sse4_2",
    "avx1.0": "avx",
    "lahf": "lahf_lm",
    "sha": "sha_ni",
    "popcnt lzcnt": "abm",
    "clfsopt": "clflushopt",
    "xsave": "xsavec xsaveopt",
}
_FEATURE_KEYS = ("machdep.cpu.features", "machdep.cpu.leaf7_features", "machdep.cpu.extfeatures")


def parse_sysctl(text: str) -> Facts:
    return parse(split_lines(text))[0]


def _entry(line: str) -> tuple[str, str] | None:
    """'machdep.cpu.brand_string: Apple M3 Pro' (or `key = value`) -> (key, value)."""
    stripped = line.strip()
    if not stripped.startswith(_PREFIXES):
        return None
    cut = min((i for i in (stripped.find(":"), stripped.find("=")) if i >= 0), default=-1)
    if cut < 0:
        return None
    key = stripped[:cut].strip()
    if not set(key) <= _KEY_CHARS:
        return None
    return key, stripped[cut + 1 :].strip()


def parse(lines: list[str]) -> tuple[Facts, set[int]]:
    facts, used = Facts(), set()
    data: dict[str, str] = {}
    for i, line in enumerate(lines):
        entry = _entry(line)
        if entry:
            data[entry[0]] = entry[1]
            used.add(i)
    if not used:
        return facts, used
    facts.sources.append(SOURCE)
    facts.os = "darwin"
    brand = short(data.get("machdep.cpu.brand_string", ""))
    facts.cpu_model = brand
    features = set(" ".join(data.get(k, "") for k in _FEATURE_KEYS).lower().split())
    for darwin, linux in _DARWIN_FLAGS.items():
        if all(f in features for f in darwin.split()):
            features.update(linux.split())
    facts.cpu_features = features
    if "Apple" in brand or data.get("hw.optional.arm64", "") == "1":
        facts.arch = "aarch64"
        facts.cpu_vendor = "Apple"
    elif brand or data.get("machdep.cpu.vendor"):
        facts.arch = "x86_64"
        vendor = data.get("machdep.cpu.vendor", "") or ("GenuineIntel" if "Intel" in brand else "")
        facts.cpu_vendor = short(vendor)
    return facts, used
