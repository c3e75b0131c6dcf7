"""What tool output says about a machine (`Facts`), and the line reading every parser shares.

Every parser reads its input line by line through `split_lines`, which bounds the length of a
line, and splits lines with `str` methods (`partition`, `split`) or patterns anchored on fixed
text, so its work grows linearly with the input however it is crafted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from catalog.wizard import cpus, rules
from catalog.wizard import gpus as gpu_names

MAX_LINE = 8_192  # characters; the longest real line (a CPU's flags) is about 2,000
MAX_TEXT = 200  # characters kept of a name or model read from tool output
# GPU lines one parser reads before it gives up: a paste may list a machine's GPUs a few times
# (the table, the CSV with and without header), and more than rules.MAX_GPUS are refused anyway.
MAX_GPU_LINES = 4 * rules.MAX_GPUS
TOO_MANY_GPUS = (
    f"The pasted output lists more than {MAX_GPU_LINES} GPU lines; at most "
    f"{rules.MAX_GPUS} GPUs are accepted in one request."
)


def _lines(text: str) -> list[str]:
    return (text or "").replace("\r\n", "\n").replace("\r", "\n").split("\n")


def split_lines(text: str) -> list[str]:
    """The lines of a text; a line longer than MAX_LINE is replaced by "" (not read)."""
    return [line if len(line) <= MAX_LINE else "" for line in _lines(text)]


def long_lines(text: str) -> int:
    """How many lines `split_lines` leaves unread."""
    return sum(1 for line in _lines(text) if len(line) > MAX_LINE)


def key_value(line: str, sep: str = ":") -> tuple[str, str] | None:
    """'Key  :  value ' -> ('Key', 'value'); None without the separator or with an empty key."""
    key, found, value = line.partition(sep)
    key = key.strip()
    if not found or not key:
        return None
    return key, value.strip()


def is_version(text: str, parts: int = 1) -> bool:
    """'580.159.04' (`parts` to 4 dot-separated numbers, each of at most 5 digits)."""
    pieces = text.split(".")
    return parts <= len(pieces) <= 4 and all(p.isdigit() and len(p) <= 5 for p in pieces)


def short(text: str) -> str:
    return text[:MAX_TEXT]


@dataclass
class GpuFacts:
    name: str = ""
    compute_capability: str = ""
    memory_mib: int | None = None
    driver_version: str = ""
    architecture_family: str = ""  # "Hopper" from nvidia-smi -q "Product Architecture"

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v not in ("", None)}


@dataclass
class Facts:
    """What one or several tool outputs say about a machine. Empty fields mean 'not said'."""

    sources: list = field(default_factory=list)  # tool names, e.g. ["nvidia-smi", "lscpu"]
    os: str = ""  # linux | darwin
    arch: str = ""  # x86_64 | aarch64 (or the raw machine name when it is neither)
    distro: str = ""
    cpu_vendor: str = ""  # GenuineIntel, AuthenticAMD, ARM, Apple ...
    cpu_model: str = ""  # "Intel(R) Xeon(R) Processor", "Neoverse-N1", "Apple M3 Pro"
    cpu_parts: list = field(default_factory=list)  # ARM CPU part ids, e.g. ["0xd0c"]
    cpu_features: set = field(default_factory=set)
    gpus: list = field(default_factory=list)  # [GpuFacts]
    driver_version: str = ""
    cuda_version: str = ""  # newest CUDA the driver supports (nvidia-smi header)
    errors: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def arm_cores(self) -> list[str]:
        return [cpus.ARM_PARTS.get(p, p) for p in self.cpu_parts]

    def microarchitecture(self) -> tuple[str, str]:
        """(archspec target name, human label), or ("", "") when unknown."""
        return cpus.name_microarchitecture(
            self.cpu_features, self.cpu_vendor, self.arch, self.cpu_parts, self.cpu_model
        )

    def to_dict(self) -> dict:
        target, label = self.microarchitecture()
        return {
            "sources": list(self.sources),
            "os": self.os,
            "arch": self.arch,
            "distro": self.distro,
            "cpu_vendor": self.cpu_vendor,
            "cpu_model": self.cpu_model,
            "cpu_cores": self.arm_cores,
            "microarchitecture": target,
            "microarchitecture_label": label,
            "cpu_features": sorted(self.cpu_features),
            "gpus": [g.to_dict() for g in self.gpus],
            "driver_version": self.driver_version,
            "cuda_version": self.cuda_version,
            "errors": list(self.errors),
            "notes": list(self.notes),
        }

    def answers(self) -> dict:
        """The detected facts as answers for `recommend()` (catalog.wizard.steps field names;
        only what was detected). The CPU's flags are `cpu_features`: a tool's complete list,
        taken as it is, where a hand-typed `cpu_flags` list is completed."""
        return {**self._machine_answers(), **self._gpu_answers()}

    def _machine_answers(self) -> dict:
        detected = {
            "os": self.os,
            "arch": self.arch if self.arch in cpus.ARCH_ALIASES.values() else "",
            "cpu_features": sorted(self.cpu_features),
            "cpu_vendor": self.cpu_vendor,
            "cpu_model": self.cpu_model,
            "cpu_parts": list(self.cpu_parts),
        }
        return {key: value for key, value in detected.items() if value}

    def _gpu_answers(self) -> dict:
        out: dict = {}
        if self.gpus:
            out["gpu"] = [g.name for g in self.gpus]
            out["compute_cap"] = [g.compute_capability for g in self.gpus]
        elif any(source.startswith("nvidia-smi") for source in self.sources):
            out["has_gpu"] = "no"  # nvidia-smi ran and listed no GPU, or found no driver
        if self.driver_version:
            out["driver"] = self.driver_version
        if self.cuda_version:
            out["driver_cuda"] = self.cuda_version
        return out

    def merge(self, new: Facts) -> None:
        """Add what another tool said (the first tool to say a thing wins; disagreements on the
        machine's OS or architecture are errors)."""
        for source in new.sources:
            if source not in self.sources:
                self.sources.append(source)
        for key in ("os", "arch"):
            old, value = getattr(self, key), getattr(new, key)
            if value and old and value != old:
                self.errors.append(
                    f"The pasted outputs disagree: one says {key} is {old}, {new.sources[0]} says "
                    f"{value}. Paste outputs from one machine."
                )
            elif value and not old:
                setattr(self, key, value)
        for key in ("distro", "cpu_vendor", "cpu_model", "driver_version", "cuda_version"):
            if getattr(new, key) and not getattr(self, key):
                setattr(self, key, getattr(new, key))
        for part in new.cpu_parts:
            if part not in self.cpu_parts:
                self.cpu_parts.append(part)
        # Tools can disagree on spelling but not on content; keep the union.
        self.cpu_features |= set(new.cpu_features)
        self.merge_gpus(new.gpus)
        self.errors.extend(new.errors)
        self.notes.extend(new.notes)

    def merge_gpus(self, gpus: list) -> None:
        """The same GPUs listed by two tools (table + csv) are merged by position and name."""
        if not gpus:
            return
        if not self.gpus:
            self.gpus = list(gpus)
            return
        if len(self.gpus) != len(gpus) or not all(map(_same_gpu, self.gpus, gpus)):
            self.gpus.extend(gpus)
            return
        for old, new in zip(self.gpus, gpus, strict=True):
            if len(new.name) > len(old.name):
                old.name = new.name
            for key in (
                "compute_capability",
                "memory_mib",
                "driver_version",
                "architecture_family",
            ):
                if getattr(new, key) and not getattr(old, key):
                    setattr(old, key, getattr(new, key))


def _same_gpu(old: GpuFacts, new: GpuFacts) -> bool:
    if not old.name or not new.name:
        return True
    a, b = gpu_names.normalise_gpu_name(old.name), gpu_names.normalise_gpu_name(new.name)
    return a.startswith(b) or b.startswith(a)
