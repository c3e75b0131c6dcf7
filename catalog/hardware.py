"""What a recipe's compiler flags require of the CPU that runs the result.

The recipes' flags are the truth about an ISA variant: a binary compiled with `-mavx512bw`
faults on a CPU without AVX512BW, whatever a prose table says. This module maps each flag to
the feature names Linux reports (`/proc/cpuinfo` `flags` on x86, `Features` on ARM), so the
catalogue, the audit and the wizard all judge a CPU the same way. Pure Python: no Django.
"""

from __future__ import annotations

from collections.abc import Iterable

X86_FLAG_FEATURES = {
    "-mavx": ("avx",),
    "-mavx2": ("avx2",),
    "-mfma": ("fma",),
    "-mf16c": ("f16c",),
    "-mavx512f": ("avx512f",),
    "-mavx512dq": ("avx512dq",),
    "-mavx512vl": ("avx512vl",),
    "-mavx512bw": ("avx512bw",),
    "-mavx512bf16": ("avx512_bf16",),
    "-mavx512vnni": ("avx512_vnni",),
}

# `-march=<base>+<ext>+...`: the extensions a binary may use, as Linux names them.
ARM_EXTENSION_FEATURES = {
    "fp16": ("fphp", "asimdhp"),
    "dotprod": ("asimddp",),
    "sve": ("sve",),
    "sve2": ("sve2",),
}
ARM_MARCH_BASES = ("armv8-a", "armv8.2-a", "armv9-a")


class UnknownFlag(ValueError):
    pass


def features_required_by(flags: Iterable[str]) -> set[str]:
    """The CPU features a binary built with these compiler flags needs."""
    needed: set[str] = set()
    for flag in flags:
        if flag in X86_FLAG_FEATURES:
            needed.update(X86_FLAG_FEATURES[flag])
        elif flag.startswith("-march="):
            base, *extensions = flag.removeprefix("-march=").split("+")
            if base not in ARM_MARCH_BASES:
                raise UnknownFlag(f"unknown -march base {base!r} in {flag!r}")
            for ext in extensions:
                if ext not in ARM_EXTENSION_FEATURES:
                    raise UnknownFlag(f"unknown -march extension {ext!r} in {flag!r}")
                needed.update(ARM_EXTENSION_FEATURES[ext])
        else:
            raise UnknownFlag(f"no CPU feature is known for compiler flag {flag!r}")
    return needed


def missing_features(flags: Iterable[str], cpu_features: Iterable[str]) -> set[str]:
    """Features the flags need that a CPU (given its feature names) lacks."""
    return features_required_by(flags) - {f.lower() for f in cpu_features}
