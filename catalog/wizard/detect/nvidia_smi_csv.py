"""`nvidia-smi --query-gpu=name,compute_cap,driver_version[,memory.total] --format=csv`, with or
without a header, and the one-value-a-line forms (`--query-gpu=name` / `=compute_cap`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from catalog.wizard import gpus as gpu_names
from catalog.wizard.detect.facts import (
    MAX_GPU_LINES,
    TOO_MANY_GPUS,
    Facts,
    GpuFacts,
    is_version,
    short,
    split_lines,
)

SOURCE = "nvidia-smi --query-gpu"
_HEADER_WORDS = frozenset({"name", "compute_cap", "driver_version", "gpu_name"})
_NOT_AVAILABLE = frozenset({"[N/A]", "N/A", "[Not Supported]"})
_COLUMNS = ("name", "compute_cap", "driver_version", "memory.total")  # what a headerless row holds
# First words of GPU names (a row's name must start like one).
_GPU_PREFIXES = ("nvidia", "tesla", "quadro", "geforce", "titan", "jetson", "rtx", "gtx")
_MAX_WORD = 32


def parse_nvidia_smi_csv(text: str) -> Facts:
    return parse(split_lines(text), set())[0]


def _mib(value: str) -> int | None:
    """'81559 MiB' or '81559' -> 81559."""
    number = value[:-3].strip() if value.endswith("MiB") else value
    return int(number) if number.isdigit() and len(number) <= 9 else None


def looks_like_gpu_name(value: str) -> bool:
    """'NVIDIA H100 …', 'Tesla T4', 'A100', 'H100', 'L40S', 'GB200' and the like."""
    word = value.split(None, 1)[0].lower() if value.strip() else ""
    if len(word) > _MAX_WORD:  # no GPU name starts with a long word; spares the scans below
        return False
    if word.startswith(_GPU_PREFIXES):
        return True
    head = word.split("-", 1)[0]
    if head[:2] in ("gb", "gh"):
        digits = head[2:]
        return digits.isdigit() and 2 <= len(digits) <= 3
    digits = head[1:].rstrip("abcdefghijklmnopqrstuvwxyz")
    return head[:1] in "abhltvp" and head[:1] != "" and digits.isdigit() and 1 <= len(digits) <= 3


def _classify(value: str) -> str:
    """Which query column a headerless value is."""
    if gpu_names.is_compute_capability(value):
        return "compute_cap"
    if is_version(value, 2) and len(value.split(".")[0]) == 3:
        return "driver_version"
    if value.endswith("MiB") or (value.isdigit() and len(value) >= 3):
        return "memory.total" if _mib(value) is not None else ""
    if any(c.isalpha() for c in value):
        return "name"
    return ""


def _header(stripped: str) -> list[str] | None:
    if stripped.partition(",")[0].strip() not in _HEADER_WORDS:
        return None
    columns = [c.strip().split(" [")[0].strip() for c in stripped.split(",")]
    return ["name" if c == "gpu_name" else c for c in columns]


@dataclass
class _Loose:
    """One value a line: `--query-gpu=name` or `--query-gpu=compute_cap`, noheader."""

    names: list[str] = field(default_factory=list)
    ccs: list[str] = field(default_factory=list)

    def read(self, value: str) -> bool:
        """Whether the line is a compute capability or a known GPU's name (then kept)."""
        if gpu_names.is_compute_capability(value):
            self.ccs.append(value)
            return True
        if looks_like_gpu_name(value) and gpu_names.resolve_gpu_name(value):
            self.names.append(short(value))
            return True
        return False

    def add_to(self, facts: Facts) -> None:
        """The GPUs, names paired with compute capabilities when there are as many of each."""
        if not self.names:
            facts.gpus.extend(GpuFacts(compute_capability=cc) for cc in self.ccs)
            return
        paired = len(self.ccs) == len(self.names)
        if self.ccs and not paired:
            facts.notes.append(
                f"{len(self.names)} GPU name(s) but {len(self.ccs)} compute capabilities were "
                "pasted; they are not paired."
            )
        ccs = self.ccs if paired else [""] * len(self.names)
        facts.gpus.extend(
            GpuFacts(name=n, compute_capability=c) for n, c in zip(self.names, ccs, strict=True)
        )


def _header_row(header: list[str], parts: list[str]) -> dict | None:
    """A row under a header, refused when its name or compute capability is not one."""
    row = dict(zip(header, parts, strict=True))
    if "name" in row and not looks_like_gpu_name(row["name"]):
        return None
    cc = row.get("compute_cap")
    if cc is not None and not gpu_names.is_compute_capability(cc) and cc not in _NOT_AVAILABLE:
        return None
    return row


def _headerless_row(parts: list[str]) -> dict | None:
    """A row without a header: a GPU name first, then each known column at most once."""
    kinds = [_classify(p) for p in parts]
    if "" in kinds or kinds[0] != "name" or len(set(kinds)) != len(kinds):
        return None
    if not looks_like_gpu_name(parts[0]):
        return None
    return dict(zip(kinds, parts, strict=True))


def _row(header: list[str] | None, parts: list[str]) -> dict | None:
    if header and len(parts) == len(header):
        return _header_row(header, parts)
    if 2 <= len(parts) <= len(_COLUMNS):
        return _headerless_row(parts)
    return None


def _gpu(row: dict, facts: Facts) -> GpuFacts:
    """A row's GPU; its driver version is also the machine's."""
    gpu = GpuFacts(name=short(row.get("name", "")))
    if gpu_names.is_compute_capability(row.get("compute_cap", "")):
        gpu.compute_capability = row["compute_cap"]
    driver = row.get("driver_version", "")
    if is_version(driver, 2):
        gpu.driver_version = facts.driver_version = driver
    gpu.memory_mib = _mib(row.get("memory.total", ""))
    return gpu


def parse(lines: list[str], taken: set[int]) -> tuple[Facts, set[int]]:
    """Rows are grouped in blocks (a header, or a run of rows after other text starts one): the
    same GPUs queried twice (with and without header) are merged, not counted twice."""
    facts, used = Facts(), set[int]()
    header = None
    loose = _Loose()
    blocks: list[list[GpuFacts]] = []
    last_row = -2
    for i, line in enumerate(lines):
        stripped = line.strip()
        if i in taken or not stripped:
            continue
        if len(used) > MAX_GPU_LINES:
            facts.errors.append(TOO_MANY_GPUS)
            break
        columns = _header(stripped)
        if columns is not None:
            header = columns
            used.add(i)
            blocks.append([])
            last_row = i
            continue
        parts = [p.strip() for p in stripped.split(",")]
        if len(parts) == 1 and not (header and len(header) == 1):
            if loose.read(stripped):
                used.add(i)
            continue
        row = _row(header, parts)
        if row is None:
            continue
        used.add(i)
        if not blocks or last_row != i - 1:
            blocks.append([])
        last_row = i
        blocks[-1].append(_gpu(row, facts))
    _finish(facts, loose, blocks, used)
    return facts, used


def _finish(facts: Facts, loose: _Loose, blocks: list[list[GpuFacts]], used: set[int]) -> None:
    loose.add_to(facts)
    for block in blocks:
        facts.merge_gpus(block)
    if used:
        facts.sources.append(SOURCE)
        facts.os = "linux"
