"""The engine's fallbacks and branch ranking on catalogues cut down from the test snapshot: the
CPU-only alternative when no CUDA build fits, and the branch with the best runnable ISA first."""

from __future__ import annotations

import dataclasses

import archspec.cpu

from catalog.wizard.engine import recommend
from tests.test_recommend_catalogue import catalogue

HASWELL = sorted(archspec.cpu.TARGETS["haswell"].features)  # AVX2, no AVX-512
SAPPHIRE_RAPIDS = sorted(archspec.cpu.TARGETS["sapphirerapids"].features)


def without(drop) -> object:
    cat = catalogue()
    return dataclasses.replace(
        cat, variants=tuple(v for v in cat.variants if not drop(v)), _index={}
    )


def alternatives(rec) -> list[tuple[str, str]]:
    return [(a.pname, a.why) for a in rec.alternatives]


def test_a_gpu_without_any_build_gets_the_cpu_build_as_the_alternative():
    rec = recommend(
        {"os": "linux", "arch": "x86_64", "gpu": "Tesla K80", "isa": "avx2"}, catalogue()
    )
    assert rec.ok and rec.variant is None
    assert alternatives(rec) == [
        (
            "pytorch-python313-cpu-avx2",
            "no build exists for this GPU; this CPU-only build runs on the machine's CPU",
        )
    ]
    # The architectures built are listed in compute-capability order, not as text sorts them.
    assert (
        "compute capabilities 6.1, 7.0, 7.5, 8.0, 8.6, 8.9, 9.0, 10.0, 10.3, 11.0, 12.0, 12.1,"
        in (" ".join(rec.reasons))
    )
    assert "a Kepler GPU" in " ".join(rec.reasons)


def test_no_cuda_build_the_cpu_runs_falls_back_to_the_cpu_build():
    cat = without(lambda v: v.sm == "sm90" and not v.isa.startswith("avx512"))
    rec = recommend({"os": "linux", "arch": "x86_64", "cpu_flags": HASWELL, "gpu": "H100"}, cat)
    assert rec.variant is None
    assert alternatives(rec) == [
        (
            "pytorch-python313-cpu-avx2",
            "no CUDA build fits; this CPU-only build runs on the machine's CPU",
        )
    ]


def test_no_build_for_the_platform_falls_back_to_the_cpu_build():
    cat = without(lambda v: v.sm == "sm90" and v.platform == "x86_64-linux")
    rec = recommend({"os": "linux", "arch": "x86_64", "cpu_flags": HASWELL, "gpu": "H100"}, cat)
    assert rec.variant is None
    assert "There is no build for SM90 (Hopper) on x86_64-linux." in rec.reasons
    assert alternatives(rec) == [
        (
            "pytorch-python313-cpu-avx2",
            "no SM90 (Hopper) build exists for x86_64-linux; this CPU-only build runs on the "
            "machine's CPU",
        )
    ]


def test_the_branch_with_the_best_runnable_isa_wins_over_the_default_branch():
    answers = {"os": "linux", "arch": "x86_64", "cpu_flags": SAPPHIRE_RAPIDS, "has_gpu": "no"}
    rec = recommend(answers, catalogue())
    assert (rec.variant.branch, rec.variant.pname) == ("main", "pytorch-python313-cpu-avx512")
    cat = without(
        lambda v: (
            (v.repository, v.branch) == ("build-pytorch", "main") and v.isa.startswith("avx512")
        )
    )
    rec = recommend(answers, cat)
    assert (rec.variant.branch, rec.variant.pname) == (
        "pytorch-2.9-python313",
        "pytorch-python313-cpu-avx512",
    )
    assert any("The default branch has no CPU-only x86_64 build" in r for r in rec.reasons)
