"""Hardware detection from pasted tool output: one parser module per tool, and `detect()`.

Each parser takes the lines of one tool's output and returns `(Facts, line numbers it
recognised)`; none raises on bad input, and each runs in time linear in its input (lines are
bounded by `facts.MAX_LINE` and split with `str` methods, never with backtracking patterns).
`detect()` takes one blob that may hold the output of several tools pasted one after the other,
lets every parser claim its lines, merges what they say, and rejects what cannot be used (empty,
binary, over 256 KB, no tool output at all) with a sentence naming the problem.

Recognised: `nvidia-smi` (table), `nvidia-smi --query-gpu=... --format=csv[,noheader]`,
`nvidia-smi -q`, `lscpu`, `/proc/cpuinfo` (x86 and ARM), `uname -a` / `uname -m` / `uname -s`,
macOS `sysctl -a | grep machdep.cpu`, and `/etc/os-release`.
"""

from __future__ import annotations

import logging
import re

from catalog.wizard import cpus
from catalog.wizard.detect import (
    cpuinfo,
    lscpu,
    nvidia_smi,
    nvidia_smi_csv,
    nvidia_smi_q,
    os_release,
    sysctl,
    uname,
)
from catalog.wizard.detect.cpuinfo import parse_cpuinfo
from catalog.wizard.detect.facts import MAX_LINE, Facts, GpuFacts, long_lines, split_lines
from catalog.wizard.detect.lscpu import parse_lscpu
from catalog.wizard.detect.nvidia_smi import parse_nvidia_smi
from catalog.wizard.detect.nvidia_smi_csv import parse_nvidia_smi_csv
from catalog.wizard.detect.nvidia_smi_q import parse_nvidia_smi_q
from catalog.wizard.detect.os_release import parse_os_release
from catalog.wizard.detect.sysctl import parse_sysctl
from catalog.wizard.detect.uname import parse_uname

log = logging.getLogger(__name__)

__all__ = [
    "MAX_BYTES",
    "MAX_LINES",
    "MAX_LINE",
    "PARSERS",
    "TOOLS_SENTENCE",
    "Facts",
    "GpuFacts",
    "detect",
    "parse_cpuinfo",
    "parse_lscpu",
    "parse_nvidia_smi",
    "parse_nvidia_smi_csv",
    "parse_nvidia_smi_q",
    "parse_os_release",
    "parse_sysctl",
    "parse_uname",
]

MAX_BYTES = 262_144  # 256 KB
# Lines of one paste: every parser reads line by line in Python, so lines, not bytes, are what a
# paste costs (131,000 two-byte lines took 0.5 s). nvidia-smi -q of 8 GPUs is about 2,100 lines,
# lscpu 40, one processor's block of /proc/cpuinfo 27 (64 processors, 1,728).
MAX_LINES = 2_500

# The parsers that recognise their own lines, in the order their facts are merged; a parser
# runs only when the text holds one of its markers (its output cannot be there otherwise). The CSV
# parser runs last, over the lines no other parser claimed (a table row is not a CSV row).
PARSERS = (
    (nvidia_smi.SOURCE, nvidia_smi.MARKERS, nvidia_smi.parse),
    (nvidia_smi_q.SOURCE, nvidia_smi_q.MARKERS, nvidia_smi_q.parse),
    (lscpu.SOURCE, lscpu.MARKERS, lscpu.parse),
    (cpuinfo.SOURCE, cpuinfo.MARKERS, cpuinfo.parse),
    (sysctl.SOURCE, sysctl.MARKERS, sysctl.parse),
    (uname.SOURCE, uname.MARKERS, uname.parse),
    (os_release.SOURCE, os_release.MARKERS, os_release.parse),
)
TOOLS_SENTENCE = (
    "nvidia-smi (plain, -q, or --query-gpu=name,compute_cap,driver_version --format=csv), "
    "lscpu, cat /proc/cpuinfo, uname -a / uname -m, or on macOS sysctl -a | grep machdep.cpu"
)
_ANSI = re.compile(r"\x1b\[[0-9;?]{0,32}[A-Za-z]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")  # not tab, newline, form feed, return


def _reject(message: str) -> Facts:
    facts = Facts()
    facts.errors.append(message)
    return facts


def _too_big(size: int) -> Facts:
    return _reject(
        f"The pasted text is {size:,} bytes; the limit is {MAX_BYTES:,} bytes (256 KB). "
        "Paste only the tool output, e.g. lscpu rather than a whole log."
    )


def detect(data: object) -> Facts:
    """Recognise and parse pasted tool output (str or bytes). Never raises."""
    try:
        return _detect(data)
    except Exception as exc:  # a parser bug must not take the page down; it is logged
        log.exception("A pasted %s could not be read", type(data).__name__)
        return _reject(f"The pasted text could not be read ({type(exc).__name__}: {exc}).")


def _text_of(data) -> tuple[str, Facts | None]:
    """The pasted data as text, or the reason it is not usable text."""
    if data is None:
        return "", _reject("Nothing was pasted: paste the output of " + TOOLS_SENTENCE + ".")
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        if len(raw) > MAX_BYTES:
            return "", _too_big(len(raw))
        if b"\x00" in raw:
            return "", _reject(
                "The pasted data is binary (it contains NUL bytes), not a tool's text output."
            )
        try:
            return raw.decode("utf-8"), None
        except UnicodeDecodeError:
            return "", _reject("The pasted data is not UTF-8 text; paste the tool's text output.")
    if not isinstance(data, str):
        return "", _reject(f"Expected text, got {type(data).__name__}.")
    if len(data) > MAX_BYTES or len(data.encode("utf-8", errors="replace")) > MAX_BYTES:
        return "", _too_big(len(data.encode("utf-8", errors="replace")))
    if "\x00" in data:
        return "", _reject(
            "The pasted data is binary (it contains NUL bytes), not a tool's text output."
        )
    return data, None


def _detect(data: object) -> Facts:
    text, refusal = _usable_text(data)
    if refusal is not None:
        return refusal
    lines = split_lines(text)
    merged, taken = _parse_all(text, lines)
    if not merged.sources:
        return _reject(
            "This does not look like output of any supported tool; paste the output "
            "of " + TOOLS_SENTENCE + "."
        )
    skipped = long_lines(text)
    if skipped:
        merged.notes.append(f"{skipped} line(s) longer than {MAX_LINE:,} characters were ignored.")
    unrecognised = sum(1 for i, line in enumerate(lines) if i not in taken and line.strip())
    if unrecognised:
        merged.notes.append(f"{unrecognised} line(s) were not recognised and were ignored.")
    _check_consistency(merged)
    return merged


def _usable_text(data) -> tuple[str, Facts | None]:
    """The pasted text without terminal colour codes, or the reason it is not worth parsing."""
    text, refusal = _text_of(data)
    if refusal is not None:
        return "", refusal
    if not text.strip():
        return "", _reject("Nothing was pasted: paste the output of " + TOOLS_SENTENCE + ".")
    lines = text.count("\n") + text.count("\r") - text.count("\r\n") + 1
    if lines > MAX_LINES:
        return "", _reject(
            f"The pasted text has {lines:,} lines; at most {MAX_LINES:,} are read. Paste only "
            "the tool output: lscpu or one processor's block of /proc/cpuinfo, and nvidia-smi "
            "(-q for at most 8 GPUs)."
        )
    text = _ANSI.sub("", text)
    controls = len(_CONTROL.findall(text))
    if controls > max(2, len(text) // 100):
        return "", _reject(
            "The pasted data is full of control characters; it looks binary, not like "
            "a tool's text output."
        )
    return text, None


def _parse_all(text: str, lines: list[str]) -> tuple[Facts, set[int]]:
    """Every parser whose markers the text holds, then the CSV parser over the lines the others
    left: their facts merged, and the indexes of the lines they read."""
    merged = Facts()
    taken: set[int] = set()
    for _source, markers, parse in PARSERS:
        if markers and not any(marker in text for marker in markers):
            continue
        facts, used = parse(lines)
        if facts.sources:
            taken |= used
            merged.merge(facts)
    facts, used = nvidia_smi_csv.parse(lines, taken)
    if facts.sources:
        taken |= used
        merged.merge(facts)
    return merged, taken


def _check_consistency(facts: Facts) -> None:
    if facts.os == "darwin" and facts.gpus:
        facts.errors.append(
            "The pasted outputs mix macOS (sysctl/uname Darwin) with nvidia-smi output; "
            "macOS has no NVIDIA CUDA support. Paste outputs from one machine."
        )
    arch = cpus.infer_arch(facts.cpu_features)
    if facts.arch in cpus.ARCH_ALIASES.values() and arch and arch != facts.arch:
        facts.errors.append(
            f"The CPU features are those of an {arch} CPU, but the machine is {facts.arch}. "
            "Paste outputs from one machine."
        )
    if not facts.arch and arch:
        facts.arch = arch
