"""A hand-made catalogue snapshot shaped after the seeds, shared by the engine tests.

No database: the engine reads plain records. Branch coverage follows seed 001 ("Variants on
Other Branches") and seed 003 (build-torchvision); preferences are this test's own choice:
main (default) < pytorch-2.9-python313 (recommended general-purpose) < 2.8-python312 <
2.8-python311 < vllm-0.15.1 < vllm-0.14.0 < 2.9-python311 < 2.10-python313.

This module also checks the snapshot itself, so a broken fixture fails loudly.
"""

from __future__ import annotations

import functools

from catalog import naming
from catalog.wizard.snapshot import (
    ArchitectureInfo,
    BranchInfo,
    Catalogue,
    GpuModelInfo,
    IsaInfo,
    VariantInfo,
)

AVX512 = ("-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw", "-mfma")
ISAS = (
    IsaInfo(
        "avx",
        "AVX",
        "x86_64",
        10,
        ("-mavx",),
        ("avx",),
        "Intel Sandy Bridge+ (2011+), AMD Bulldozer+ (2011+)",
    ),
    IsaInfo(
        "avx2",
        "AVX2",
        "x86_64",
        20,
        ("-mavx2", "-mfma", "-mf16c"),
        ("avx2", "fma", "f16c"),
        "Intel Haswell+ (2013+), AMD Zen 1+ (2017+)",
    ),
    IsaInfo(
        "avx512",
        "AVX-512",
        "x86_64",
        30,
        AVX512,
        ("avx512f", "avx512dq", "avx512vl", "avx512bw", "fma"),
        "Intel Skylake-X+ (2017+), AMD Zen 4+ (2022+)",
    ),
    IsaInfo(
        "avx512bf16",
        "AVX-512 BF16",
        "x86_64",
        40,
        AVX512[:4] + ("-mavx512bf16", "-mfma"),
        ("avx512f", "avx512dq", "avx512vl", "avx512bw", "avx512_bf16", "fma"),
        "Intel Cooper Lake+ (2020+), AMD Zen 4+ (2022+)",
    ),
    IsaInfo(
        "avx512vnni",
        "AVX-512 VNNI",
        "x86_64",
        41,
        AVX512[:4] + ("-mavx512vnni", "-mfma"),
        ("avx512f", "avx512dq", "avx512vl", "avx512bw", "avx512_vnni", "fma"),
        "Intel Skylake-SP+ (2017+), AMD Zen 4+ (2022+)",
    ),
    IsaInfo(
        "armv8_2",
        "ARMv8.2",
        "aarch64",
        10,
        ("-march=armv8.2-a+fp16+dotprod",),
        ("fphp", "asimdhp", "asimddp"),
        "ARM Neoverse N1, Cortex-A75+, AWS Graviton2",
    ),
    IsaInfo(
        "armv9",
        "ARMv9",
        "aarch64",
        20,
        ("-march=armv9-a+sve+sve2",),
        ("sve", "sve2"),
        "NVIDIA Grace, ARM Neoverse V1/V2, Cortex-X2+, AWS Graviton3+",
    ),
)

ARCHITECTURES = (
    ArchitectureInfo("sm61", "6.1", "Pascal", 390, "8.0", "12.9"),
    ArchitectureInfo("sm70", "7.0", "Volta", 396, "9.0", "12.9"),
    ArchitectureInfo("sm75", "7.5", "Turing", 418, "10.0"),
    ArchitectureInfo("sm80", "8.0", "Ampere DC", 450, "11.0"),
    ArchitectureInfo("sm86", "8.6", "Ampere", 470, "11.1"),
    ArchitectureInfo("sm89", "8.9", "Ada Lovelace", 520, "11.8"),
    ArchitectureInfo("sm90", "9.0", "Hopper", 525, "11.8"),
    ArchitectureInfo("sm100", "10.0", "Blackwell DC", 550, "12.8"),
    ArchitectureInfo("sm103", "10.3", "Blackwell B300", 550, "12.9"),
    ArchitectureInfo("sm110", "11.0", "Blackwell Thor", 550, "13.0", host_arch="aarch64"),
    ArchitectureInfo("sm120", "12.0", "Blackwell", 570, "12.8"),
    ArchitectureInfo("sm121", "12.1", "DGX Spark", 570, "12.9", host_arch="aarch64"),
)

GPU_MODELS = (
    GpuModelInfo("GTX 1080 Ti", "sm61", ("NVIDIA GeForce GTX 1080 Ti",)),
    GpuModelInfo("GTX 1080", "sm61"),
    GpuModelInfo("GTX 1070", "sm61"),
    GpuModelInfo("V100", "sm70", ("Tesla V100-SXM2-16GB", "Tesla V100-PCIE-32GB")),
    GpuModelInfo("T4", "sm75", ("Tesla T4",)),
    GpuModelInfo("RTX 2080 Ti", "sm75"),
    GpuModelInfo("Quadro RTX 8000", "sm75"),
    GpuModelInfo("A100", "sm80", ("NVIDIA A100-SXM4-80GB", "NVIDIA A100-PCIE-40GB")),
    GpuModelInfo("A30", "sm80"),
    GpuModelInfo("RTX 3090", "sm86"),
    GpuModelInfo("RTX 3090 Ti", "sm86"),
    GpuModelInfo("RTX 3080 Ti", "sm86"),
    GpuModelInfo("A5000", "sm86", ("NVIDIA RTX A5000",)),
    GpuModelInfo("A40", "sm86"),
    GpuModelInfo("RTX 4090", "sm89"),
    GpuModelInfo("RTX 4080", "sm89"),
    GpuModelInfo("L4", "sm89"),
    GpuModelInfo("L40", "sm89"),
    GpuModelInfo("H100", "sm90", ("NVIDIA H100 80GB HBM3", "H100 SXM", "H100 PCIe")),
    GpuModelInfo("H200", "sm90"),
    GpuModelInfo("L40S", "sm90"),  # seed 001 lists L40S under SM90 (recorded contradiction)
    GpuModelInfo("GH200", "sm90", ("NVIDIA GH200 480GB",)),
    GpuModelInfo("B100", "sm100"),
    GpuModelInfo("B200", "sm100"),
    GpuModelInfo("B300", "sm103", ("NVIDIA B300 SXM6 AC",)),
    GpuModelInfo("DRIVE Thor", "sm110"),
    GpuModelInfo("RTX 5090", "sm120"),
    GpuModelInfo("DGX Spark", "sm121", ("NVIDIA GB10", "GB10")),
)

PY_BRANCHES = (
    # name, pytorch, python, cudas, min_driver, default, preference, vllm, purpose
    ("main", "2.8.0", "3.13", ("12.8",), 550, True, 10, "", "Stable baseline"),
    (
        "pytorch-2.9-python313",
        "2.9.1",
        "3.13",
        ("12.9",),
        550,
        False,
        20,
        "",
        "Recommended general-purpose branch",
    ),
    ("pytorch-2.8-python312", "2.8.0", "3.12", ("12.8",), 550, False, 30, "", ""),
    ("pytorch-2.8-python311", "2.8.0", "3.11", ("12.8",), 550, False, 31, "", ""),
    ("pytorch-2.9-vllm-0.15.1", "2.9.1", "3.13", ("12.9", "12.8"), 550, False, 40, "0.15.1", ""),
    ("pytorch-2.9-vllm-0.14.0", "2.9.1", "3.12", ("12.9", "12.8"), 550, False, 41, "0.14.0", ""),
    ("pytorch-2.9-python311", "2.9.1", "3.11", ("12.9", "12.8"), 550, False, 42, "", ""),
    ("pytorch-2.10-python313", "2.10", "3.13", ("13.0",), 570, False, 50, "", "Bleeding-edge"),
)
FULL = ("avx", "avx2", "avx512", "avx512bf16", "avx512vnni", "armv8_2", "armv9")
CPU_MAIN = ("avx2", "avx512", "avx512bf16", "avx512vnni", "armv8_2", "armv9")
CPU_FULL = ("avx",) + CPU_MAIN
BASE_SMS = ("sm75", "sm80", "sm86", "sm89", "sm90", "sm100", "sm120")
# branch -> {sm: cuda versions}; sm61 always gets only avx/avx2.
PY_COVERAGE = {
    "main": ({"sm61": ("12.8",), **{sm: ("12.8",) for sm in BASE_SMS}}, CPU_MAIN),
    "pytorch-2.8-python312": ({"sm61": ("12.8",), **{sm: ("12.8",) for sm in BASE_SMS}}, CPU_MAIN),
    "pytorch-2.8-python311": ({"sm61": ("12.8",), **{sm: ("12.8",) for sm in BASE_SMS}}, CPU_MAIN),
    "pytorch-2.9-python313": (
        {"sm61": ("12.9",), **{sm: ("12.9",) for sm in BASE_SMS}, "sm103": ("12.9",)},
        CPU_FULL,
    ),
    "pytorch-2.9-vllm-0.15.1": (
        {"sm61": ("12.9", "12.8"), **{sm: ("12.9", "12.8") for sm in BASE_SMS}, "sm103": ("12.9",)},
        CPU_MAIN,
    ),
    "pytorch-2.9-vllm-0.14.0": (
        {
            "sm61": ("12.9", "12.8"),
            "sm70": ("12.9", "12.8"),
            **{sm: ("12.9", "12.8") for sm in BASE_SMS},
            "sm103": ("12.9",),
        },
        CPU_MAIN,
    ),
    "pytorch-2.9-python311": (
        {
            "sm61": ("12.9", "12.8"),
            "sm70": ("12.9", "12.8"),
            **{sm: ("12.9", "12.8") for sm in BASE_SMS},
            "sm103": ("12.9",),
        },
        CPU_MAIN,
    ),
    "pytorch-2.10-python313": (
        {sm: ("13.0",) for sm in BASE_SMS + ("sm103", "sm110", "sm121")},
        CPU_FULL,
    ),
}
TV_BRANCHES = (
    ("main", "2.8.0", "0.23.0", "3.13", ("12.8",), 550, True, 10),
    ("cuda-12_9", "2.9.1", "0.24.0", "3.13", ("12.9",), 550, False, 20),
    ("cuda-13_0", "2.10", "", "3.13", ("13.0",), 570, False, 30),
)
TV_CPU = CPU_MAIN
TV_COVERAGE = {
    "main": ({"sm61": "12.8", **{sm: "12.8" for sm in BASE_SMS}}, CPU_MAIN),
    "cuda-12_9": ({"sm61": "12.9", **{sm: "12.9" for sm in BASE_SMS}, "sm103": "12.9"}, CPU_FULL),
    "cuda-13_0": ({"sm110": "13.0", "sm121": "13.0"}, ()),
}
GPU_ISAS_NO_AVX = ("avx2", "avx512", "avx512bf16", "avx512vnni", "armv8_2", "armv9")


def _platform(isa):
    return "aarch64-linux" if isa.startswith("arm") else "x86_64-linux"


def _gpu_isas(sm, with_avx=True):
    if sm == "sm61":
        return ("avx", "avx2")
    return FULL if with_avx else GPU_ISAS_NO_AVX


def _variant(repo, branch, library, python, backend, cuda="", sm="", isa="", status="recipe"):
    pname = naming.compose(library, python, backend, cuda, sm, isa)
    platform = "aarch64-darwin" if backend == "mps" else _platform(isa)
    return VariantInfo(
        pname, repo, branch, library, backend, platform, python, cuda, sm, isa, status
    )


def _pytorch_variants(name: str, py: str) -> list[VariantInfo]:
    sms, cpu_isas = PY_COVERAGE[name]
    variants = [
        _variant("build-pytorch", name, "pytorch", py, "cuda", cuda, sm, isa)
        for sm, sm_cudas in sms.items()
        for cuda in sm_cudas
        for isa in _gpu_isas(sm)
    ]
    variants += [_variant("build-pytorch", name, "pytorch", py, "cpu", isa=isa) for isa in cpu_isas]
    variants.append(_variant("build-pytorch", name, "pytorch", py, "mps"))
    if name in ("main", "pytorch-2.8-python312", "pytorch-2.8-python311"):
        variants += [
            _variant("build-pytorch", name, lib, py, "cuda", "12.8", sm, "avx")
            for lib in ("torchvision", "torchaudio")
            for sm in ("sm61", "sm75")
        ]
    return variants


def _torchvision_variants(name: str, py: str) -> list[VariantInfo]:
    sms, cpu_isas = TV_COVERAGE[name]
    variants = [
        _variant("build-torchvision", name, "torchvision", py, "cuda", cuda, sm, isa)
        for sm, cuda in sms.items()
        for isa in (_gpu_isas(sm, with_avx=False) if sm != "sm61" else ("avx", "avx2"))
    ]
    variants += [
        _variant("build-torchvision", name, "torchvision", py, "cpu", isa=isa) for isa in cpu_isas
    ]
    return variants


@functools.lru_cache(maxsize=1)
def catalogue() -> Catalogue:
    branches, variants = [], []
    for name, pt, py, cudas, drv, default, pref, vllm, purpose in PY_BRANCHES:
        branches.append(
            BranchInfo("build-pytorch", name, pt, py, cudas, "", drv, default, pref, vllm, purpose)
        )
        variants += _pytorch_variants(name, py)
    for name, pt, tv, py, cudas, drv, default, pref in TV_BRANCHES:
        branches.append(
            BranchInfo("build-torchvision", name, pt, py, cudas, tv, drv, default, pref)
        )
        variants += _torchvision_variants(name, py)
    return Catalogue(
        variants=variants,
        branches=branches,
        architectures=ARCHITECTURES,
        gpu_models=GPU_MODELS,
        isas=ISAS,
    )


# -- checks on the snapshot itself ---------------------------------------------------------------


def test_snapshot_counts_follow_the_seeds():
    cat = catalogue()
    main = [v for v in cat.variants if v.repository == "build-pytorch" and v.branch == "main"]
    # Seed 001: main has 62 variants (56 GPU + 6 CPU... + MPS + 4 companions, as the seed counts
    # them); here: 2 SM61 + 7×7 others + 6 CPU + 1 MPS + 4 companions.
    assert len([v for v in main if v.library == "pytorch" and v.backend == "cuda"]) == 2 + 7 * 7
    assert len([v for v in main if v.backend == "cpu"]) == 6
    assert {v.pname for v in main if v.library != "pytorch"} == {
        "torchvision-python313-cuda12_8-sm61-avx",
        "torchvision-python313-cuda12_8-sm75-avx",
        "torchaudio-python313-cuda12_8-sm61-avx",
        "torchaudio-python313-cuda12_8-sm75-avx",
    }
    cuda13 = [
        v for v in cat.variants if v.repository == "build-torchvision" and v.branch == "cuda-13_0"
    ]
    assert len(cuda13) == 12  # seed 003: cuda-13_0 has 12 variants


def test_snapshot_names_parse_and_branches_resolve():
    cat = catalogue()
    for v in cat.variants:
        parts = naming.parse(v.pname)
        assert (parts.sm, parts.isa, parts.backend) == (v.sm, v.isa, v.backend)
        assert cat.branch_of(v) is not None
    assert len({(v.repository, v.branch, v.pname) for v in cat.variants}) == len(cat.variants)
