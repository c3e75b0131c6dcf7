"""`uname -a`, `uname -m`, `uname -s`."""

from __future__ import annotations

from catalog.wizard import cpus
from catalog.wizard.detect.facts import Facts, split_lines

SOURCE = "uname"
_KERNELS = {"Linux": "linux", "Darwin": "darwin"}
_STARTS = tuple(f"{kernel} " for kernel in _KERNELS)
# Every machine name uname -m may print -> the architecture (or the name, when no build has it).
_MACHINES = {**{m: m for m in cpus.OTHER_MACHINES}, **cpus.ARCH_ALIASES}
MARKERS = (*_KERNELS, *_MACHINES)


def parse_uname(text: str) -> Facts:
    return parse(split_lines(text))[0]


def parse(lines: list[str]) -> tuple[Facts, set[int]]:
    facts, used = Facts(), set()
    for i, line in enumerate(lines):
        word = line.strip()
        if word in _MACHINES:  # uname -m
            facts.arch = _MACHINES[word]
            used.add(i)
        elif word in _KERNELS:  # uname -s
            facts.os = _KERNELS[word]
            used.add(i)
        elif word.startswith(_STARTS):  # uname -a
            words = word.split()
            machines = [_MACHINES[w] for w in words[1:] if w in _MACHINES]
            if machines:  # uname -a: the machine is among the last words
                facts.os = _KERNELS[words[0]]
                facts.arch = machines[-1]
                used.add(i)
    if used:
        facts.sources.append(SOURCE)
    return facts, used
