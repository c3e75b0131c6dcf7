"""GPU names: normalising what nvidia-smi prints and resolving it to a compute capability.

The catalogue's GPU models (names + aliases, from the snapshot; from the seed file
architectures.toml when a paste is read without one) are asked first; `UNBUILT_GPUS` adds
well-known GPUs that no catalogue architecture covers (Tesla K80, Maxwell, P100, Jetson Orin), so
that such a name resolves to a compute capability and gets a clear "no build" answer.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from catalog import naming

if TYPE_CHECKING:
    from catalog.wizard.snapshot import Catalogue

# GPUs of compute capabilities the catalogue has no architecture for, name -> compute capability
# (matched after `normalise_gpu_name`). Every GPU of an architecture the catalogue has is a model
# in fixtures/catalogue/architectures.toml, and only there (tests/test_gpu_names_home.py).
UNBUILT_GPUS: dict[str, str] = {
    # Kepler / Maxwell / Pascal GP100 / Volta and Orin Jetsons: no branch builds these.
    "Tesla K80": "3.7",
    "Tesla K40": "3.5",
    "Tesla K20": "3.5",
    "GeForce GTX 780": "3.5",
    "Tesla M60": "5.2",
    "Tesla M40": "5.2",
    "Tesla M10": "5.0",
    "GeForce GTX 980": "5.2",
    "GeForce GTX 970": "5.2",
    "GeForce GTX 960": "5.2",
    "GeForce GTX 750 Ti": "5.0",
    "GeForce GTX TITAN X": "5.2",
    "Jetson Nano": "5.3",
    "Tesla P100": "6.0",
    "Quadro GP100": "6.0",
    "Jetson TX2": "6.2",
    "Jetson AGX Xavier": "7.2",
    "Jetson Xavier NX": "7.2",
    "Jetson AGX Orin": "8.7",
    "Jetson Orin Nano": "8.7",
    "Jetson Orin NX": "8.7",
    "Jetson Orin": "8.7",
}

# The GPU generation of compute capabilities that have no catalogue architecture.
FAMILY_BY_CC_MAJOR = {
    "1": "Tesla",
    "2": "Fermi",
    "3": "Kepler",
    "5": "Maxwell",
    "6": "Pascal",
    "7": "Volta/Turing",
    "8": "Ampere/Ada",
    "9": "Hopper",
    "10": "Blackwell",
    "11": "Blackwell (Thor)",
    "12": "Blackwell",
}
FAMILY_BY_CC = {
    "6.0": "Pascal GP100",
    "7.0": "Volta",
    "7.2": "Volta (Jetson Xavier)",
    "8.7": "Ampere (Jetson Orin)",
    "5.3": "Maxwell (Jetson Nano)",
    "6.2": "Pascal (Jetson TX2)",
}

# Words nvidia-smi adds that do not change which chip it is.
_DROP_WORDS = {
    "nvidia",
    "geforce",
    "tesla",
    "pcie",
    "sxm",
    "sxm2",
    "sxm3",
    "sxm4",
    "sxm5",
    "sxm6",
    "nvl",
    "hbm",
    "hbm2",
    "hbm2e",
    "hbm3",
    "hbm3e",
    "gddr6",
    "gddr6x",
    "gddr7",
    "mig",
    "(r)",
    "(tm)",
}
MAX_NAME = 200  # characters of a GPU name that are read (real ones are under 60)
_MEMORY_RE = re.compile(r"^\d+(\.\d+)?(gb|g|gib|mb)$")
_CC_RE = re.compile(r"\d{1,2}\.\d")


def normalise_gpu_name(name: str) -> str:
    """'NVIDIA A100-SXM4-80GB' -> 'a100'; 'NVIDIA GeForce RTX 4090' -> 'rtx 4090'."""
    text = (name or "")[:MAX_NAME].lower().replace("\u00ae", " ").replace("\u2122", " ")
    text = text.replace("(r)", " ").replace("(tm)", " ")
    text = re.sub(r"[-_/,]+", " ", text)
    text = text.replace("...", " ").rstrip(".")
    words = [w for w in text.split() if w not in _DROP_WORDS and not _MEMORY_RE.match(w)]
    return " ".join(words)


def is_compute_capability(value: str) -> bool:
    return bool(_CC_RE.fullmatch(str(value or "").strip()))


@dataclass(frozen=True)
class GpuMatch:
    query: str  # what was asked
    name: str  # the model it resolved to ("H100"), or the query when only a cc was known
    compute_capability: str  # "9.0"
    sm: str  # "sm90"
    source: str  # "catalogue" | "unbuilt" | "compute capability"


def _table_of(pairs) -> dict[str, tuple[str, str, str]]:
    """normalised name -> (display name, compute capability, source); the first spelling wins."""
    table: dict[str, tuple[str, str, str]] = {}
    for spelling, entry in pairs:
        key = normalise_gpu_name(spelling)
        if key and key.count(" ") < _MAX_WORDS:
            table.setdefault(key, entry)
    return table


_MAX_WORDS = 8  # words in the longest GPU name a table holds (_table_of keeps no longer one)


# The GPU models of the catalogue's architectures: the seed the catalogue is loaded from.
ARCHITECTURES_TOML = Path(__file__).resolve().parents[2] / "fixtures/catalogue/architectures.toml"


def seed_models(path: Path = ARCHITECTURES_TOML) -> list[tuple[str, tuple[str, ...], str]]:
    """(name, aliases, compute capability) of every GPU model in architectures.toml."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [
        (model["name"], tuple(model.get("aliases", ())), arch["compute_capability"])
        for arch in data["architecture"]
        for model in arch.get("models", ())
    ]


@functools.cache
def _unbuilt_table() -> dict[str, tuple[str, str, str]]:
    return _table_of((name, (name, cc, "unbuilt")) for name, cc in UNBUILT_GPUS.items())


@functools.cache
def _seed_table() -> dict[str, tuple[str, str, str]]:
    """The seed's models and aliases first, then UNBUILT_GPUS: for a paste read on its own."""
    table = _table_of(
        (spelling, (name, cc, "catalogue"))
        for name, aliases, cc in seed_models()
        for spelling in (name, *aliases)
    )
    for key, entry in _unbuilt_table().items():
        table.setdefault(key, entry)
    return table


def _catalogue_table(catalogue) -> dict[str, tuple[str, str, str]]:
    """The catalogue's models and aliases first, then UNBUILT_GPUS."""
    pairs = []
    for model in catalogue.gpu_models:
        arch = catalogue.architecture(model.sm)
        cc = arch.compute_capability if arch else naming.compute_capability_from_sm(model.sm)
        pairs += [
            (spelling, (model.name, cc, "catalogue")) for spelling in (model.name, *model.aliases)
        ]
    table = _table_of(pairs)
    for key, entry in _unbuilt_table().items():
        table.setdefault(key, entry)
    return table


def _table(catalogue) -> dict[str, tuple[str, str, str]]:
    """Built once per catalogue snapshot (and once from the seed), never per GPU."""
    if catalogue is None:
        return _seed_table()
    return catalogue.memo("gpu-names", _catalogue_table)


def resolve_gpu_name(name: str, catalogue: Catalogue | None = None) -> GpuMatch | None:
    """The compute capability of a GPU name, or None when the name is unknown.

    Exact match on the normalised name first; then the longest known name that the query
    starts with at a word boundary ('b300 sxm6 ac' -> 'b300', 'rtx 4090 laptop gpu' -> 'rtx 4090').
    """
    key = normalise_gpu_name(name)
    if not key:
        return None
    table = _table(catalogue)
    hit = table.get(key)
    words = key.split()
    # Known names are a few words long: only prefixes that short can match.
    for n in range(min(len(words) - 1, _MAX_WORDS), 0, -1):
        if hit is not None:
            break
        hit = table.get(" ".join(words[:n]))
    if hit is None and (name or "").rstrip().endswith("..."):
        # nvidia-smi truncates long names in its table: 'NVIDIA GeForce RTX 4090 Lap...'.
        candidates = [k for k in table if k.startswith(key)]
        if len({table[k][1] for k in candidates}) == 1:
            hit = table[candidates[0]]
    if hit is None:
        return None
    display, cc, source = hit
    return GpuMatch(name, display, cc, naming.sm_from_compute_capability(cc), source)


def family_for_cc(cc: str) -> str:
    cc = str(cc).strip()
    return FAMILY_BY_CC.get(cc) or FAMILY_BY_CC_MAJOR.get(cc.split(".")[0], "unknown")


def exact_gpu_name(name: str, catalogue: Catalogue | None = None) -> GpuMatch | None:
    """Like `resolve_gpu_name`, but only a whole known name: 'h100' yes, 'h100 python3.12' no
    (a search reads the words after a GPU name as further terms)."""
    key = normalise_gpu_name(name)
    hit = _table(catalogue).get(key) if key else None
    if hit is None and key:  # typed without spaces: "rtx3060"
        hit = _spaceless(catalogue).get(key.replace(" ", ""))
    if hit is None:
        return None
    display, cc, source = hit
    return GpuMatch(name, display, cc, naming.sm_from_compute_capability(cc), source)


def _spaceless(catalogue) -> dict[str, tuple[str, str, str]]:
    def build(cat=None) -> dict:
        return {k.replace(" ", ""): v for k, v in reversed(list(_table(cat).items()))}

    return catalogue.memo("gpu-names-spaceless", build) if catalogue else build()
