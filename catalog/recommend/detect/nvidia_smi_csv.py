"""`nvidia-smi --query-gpu=name,compute_cap,driver_version[,memory.total] --format=csv`, with or
without a header, and the one-value-a-line forms (`--query-gpu=name` / `=compute_cap`)."""

from __future__ import annotations

from catalog.recommend import gpus as gpu_names
from catalog.recommend.detect.facts import (
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


def parse_nvidia_smi_csv(text: str) -> Facts:
    return parse(split_lines(text), set())[0]


def _mib(value: str) -> int | None:
    """'81559 MiB' or '81559' -> 81559."""
    number = value[:-3].strip() if value.endswith("MiB") else value
    return int(number) if number.isdigit() and len(number) <= 9 else None


def looks_like_gpu_name(value: str) -> bool:
    """'NVIDIA H100 …', 'Tesla T4', 'A100', 'H100', 'L40S', 'GB200' and the like."""
    word = value.split(None, 1)[0].lower() if value.split() else ""
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


def parse(lines: list[str], taken: set[int]) -> tuple[Facts, set[int]]:
    """Rows are grouped in blocks (a header, or a run of rows after other text starts one): the
    same GPUs queried twice (with and without header) are merged, not counted twice."""
    facts, used = Facts(), set()
    header = None
    loose_names, loose_ccs = [], []
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
        if header and len(parts) == len(header):
            row = dict(zip(header, parts))
            if "name" in row and not looks_like_gpu_name(row["name"]):
                continue
            cc = row.get("compute_cap")
            if (
                cc is not None
                and not gpu_names.is_compute_capability(cc)
                and cc not in _NOT_AVAILABLE
            ):
                continue
        elif 2 <= len(parts) <= len(_COLUMNS):  # each known column at most once
            kinds = [_classify(p) for p in parts]
            if "" in kinds or kinds[0] != "name" or len(set(kinds)) != len(kinds):
                continue
            if not looks_like_gpu_name(parts[0]):
                continue
            row = dict(zip(kinds, parts))
        elif len(parts) == 1:
            # One value a line: `--query-gpu=name` or `--query-gpu=compute_cap`, noheader.
            if gpu_names.is_compute_capability(stripped):
                loose_ccs.append(stripped)
                used.add(i)
            elif looks_like_gpu_name(stripped) and gpu_names.resolve_gpu_name(stripped):
                loose_names.append(short(stripped))
                used.add(i)
            continue
        else:
            continue
        used.add(i)
        if not blocks or last_row != i - 1:
            blocks.append([])
        last_row = i
        gpu = GpuFacts(name=short(row.get("name", "")))
        if gpu_names.is_compute_capability(row.get("compute_cap", "")):
            gpu.compute_capability = row["compute_cap"]
        driver = row.get("driver_version", "")
        if is_version(driver, 2):
            gpu.driver_version = facts.driver_version = driver
        gpu.memory_mib = _mib(row.get("memory.total", ""))
        blocks[-1].append(gpu)
    if loose_names:
        ccs = loose_ccs if len(loose_ccs) == len(loose_names) else [""] * len(loose_names)
        if loose_ccs and len(loose_ccs) != len(loose_names):
            facts.notes.append(
                f"{len(loose_names)} GPU name(s) but {len(loose_ccs)} compute capabilities were "
                "pasted; they are not paired."
            )
        facts.gpus.extend(GpuFacts(name=n, compute_capability=c) for n, c in zip(loose_names, ccs))
    else:
        facts.gpus.extend(GpuFacts(compute_capability=cc) for cc in loose_ccs)
    for block in blocks:
        facts.merge_gpus(block)
    if used:
        facts.sources.append(SOURCE)
        facts.os = "linux"
    return facts, used
