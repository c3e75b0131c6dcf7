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


def ask(**answers):
    return recommend(answers, catalogue())


ONLY_AVX2 = (
    "not AVX-512 (that answer does not imply avx512bw, avx512dq, avx512f, avx512vl), AVX-512 BF16 "
    "(that answer does not imply avx512_bf16, avx512bw, avx512dq, avx512f, avx512vl), AVX-512 "
    "VNNI (that answer does not imply avx512_vnni, avx512bw, avx512dq, avx512f, avx512vl)."
)


def test_no_gpu_information_is_a_cpu_build_with_a_warning_and_every_step_said():
    rec = ask(os="linux", arch="x86_64", isa="avx2")
    assert rec.reasons == [
        "You are on Linux on x86_64, so the x86_64-linux builds apply.",
        "Nothing says the machine has an NVIDIA GPU, so a CPU-only build is used.",
        "AVX2 implies AVX: every CPU archspec knows with AVX2 runs those builds too.",
        "The CPU can run, going by the ISA level given (AVX2), the AVX, AVX2 builds; " + ONLY_AVX2,
        "For general workloads (the default workload) the order of preference is AVX-512, then "
        "AVX2, then AVX; AVX2 is the best this CPU runs.",
        "With no version constraints the default branch build-pytorch main (PyTorch 2.8.0, "
        "Python 3.13) is used.",
    ]
    assert len(rec.warnings) == 1 and rec.warnings[0].startswith("No GPU information was given")
    assert ask(os="linux", arch="x86_64", isa="avx2", has_gpu="no").warnings == []


def test_typed_flags_completed_by_archspec_are_said_and_shown_as_assumed():
    rec = ask(os="linux", arch="x86_64", cpu_flags=["avx2"], has_gpu="no")
    assumed = [r for r in rec.reasons if r.startswith("Assumed ")]
    assert len(assumed) == 1 and ": every CPU archspec knows with avx2 also has" in assumed[0]
    shown = rec.detected["cpu"]["assumed_features"]
    assert shown and "avx2" not in shown and "avx512f" not in shown
    complete = ask(os="linux", arch="x86_64", cpu_flags=["avx", "avx2", "fma", "f16c"], gpu="H100")
    assert "assumed_features" not in complete.detected["cpu"]
    assert not any(r.startswith("Assumed ") for r in complete.reasons)


def test_a_driver_that_supports_the_cuda_build_says_so():
    rec = ask(os="linux", arch="x86_64", isa="avx2", gpu="H100", driver="570.86.10")
    assert "The driver (570.86.10) supports CUDA 12.8, so the CUDA 12.8 build is used." in (
        rec.reasons
    )
    assert rec.warnings == []


def test_an_older_driver_of_the_same_cuda_major_runs_the_build_through_compatibility():
    rec = ask(os="linux", arch="x86_64", isa="avx2", gpu="H100", driver="535.104.05")
    assert rec.variant.pname == "pytorch-python313-cuda12_8-sm90-avx2"
    assert (
        "The driver supports CUDA 12.2; the oldest CUDA this branch builds for the GPU is 12.8, "
        "which runs on it through CUDA minor-version compatibility."
    ) in rec.reasons
    assert rec.warnings == [
        "Driver 535.104.05 is older than the NVIDIA 550 that build-pytorch main needs; update "
        "the driver to 550 or newer."
    ]


def test_a_driver_of_an_older_cuda_major_is_warned_with_the_driver_the_build_needs():
    rec = ask(os="linux", arch="x86_64", isa="avx2", gpu="H100", driver="470.57.02")
    assert "The branch builds this GPU only with CUDA 12.8." in rec.reasons
    assert any(
        w.startswith("The driver (470.57.02) supports CUDA 11.4 at most; the CUDA 12.8 build needs")
        and w.endswith(" or newer).")
        for w in rec.warnings
    )


def test_several_gpu_models_warn_to_match_the_build_to_the_gpu_a_process_uses():
    rec = ask(os="linux", arch="x86_64", isa="avx2", gpu=["H100", "T4"])
    assert rec.variant is None and len(rec.per_gpu) == 2
    assert "This machine has 2 different GPU models (H100, T4);" in rec.reasons[-1]
    assert rec.warnings == [
        "Several GPU models: install the build that matches the GPU each process uses "
        "(CUDA_VISIBLE_DEVICES)."
    ]


def test_a_cuda_version_alone_names_the_limit_in_the_warning():
    rec = ask(os="linux", arch="x86_64", isa="avx2", gpu="H100", driver_cuda="11.8")
    assert any(
        w.startswith("The driver (CUDA 11.8) supports CUDA 11.8 at most;") for w in rec.warnings
    )


def test_flags_imply_no_isa_claims_and_the_newer_branch_gives_its_purpose():
    rec = ask(os="linux", arch="x86_64", cpu_flags=["avx2"], has_gpu="no")
    assert not any(" implies " in r for r in rec.reasons)
    assert [a.why for a in rec.alternatives] == [
        "the same build on the newer branch pytorch-2.9-python313 (PyTorch 2.9.1): Recommended "
        "general-purpose branch"
    ]
