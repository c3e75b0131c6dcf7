"""The engine: seed scenarios, the tree's rules, and bad answers. No database.

The catalogue is the hand-made snapshot in test_recommend_catalogue.py. CPU flag sets come from
archspec's microarchitecture tables (real feature lists) or from the host outputs in
tests/data/hosts/.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import archspec.cpu
import pytest

from catalog.wizard import rules, steps
from catalog.wizard.answers import normalise
from catalog.wizard.detect import detect as detect_hardware
from catalog.wizard.engine import recommend
from catalog.wizard.snapshot import Catalogue
from tests.test_recommend_catalogue import catalogue

HOSTS = Path(__file__).parent / "data" / "hosts"


def flags(target):
    return sorted(archspec.cpu.TARGETS[target].features)


ALDER_LAKE = flags("alderlake")  # Core i9-12900K: AVX-512 fused off
ZEN4 = flags("zen4")  # EPYC Genoa / Ryzen 7000: avx512 + bf16 + vnni
ZEN3 = flags("zen3")
HASWELL = flags("haswell")
CASCADE_LAKE = flags("cascadelake")  # avx512 + vnni, no bf16
SAPPHIRE_RAPIDS = flags("sapphirerapids")  # avx512 + bf16 + vnni
IVY_BRIDGE = flags("ivybridge")  # avx, no avx2
GRAVITON3 = flags("neoverse_v1") + ["fp", "asimd"]  # sve, no sve2
GRAVITON2 = flags("neoverse_n1")
GRACE = flags("neoverse_v2")  # sve + sve2


def ask(**answers):
    return recommend(answers, catalogue())


def linux_x86(cpu, **more):
    return ask(os="linux", arch="x86_64", cpu_flags=cpu, **more)


def linux_arm(cpu, **more):
    return ask(os="linux", arch="aarch64", cpu_flags=cpu, **more)


def host(name, **more):
    text = "\n".join(p.read_text() for p in sorted((HOSTS / name).iterdir()))
    facts = detect_hardware(text)
    assert facts.ok, facts.errors
    return recommend({**facts.answers(), **more}, catalogue())


def alt_names(rec):
    return [(a.branch, a.pname) for a in rec.alternatives]


def text(rec):
    return " ".join(rec.reasons + rec.warnings)


# =================================================================================================
# Seed 001, "Example Use Cases"
# =================================================================================================


def test_scenario_1_rtx3090_i9_12900k_flags_win_over_the_seed():
    # The seed: `lscpu | grep avx512f  # ✓ Found AVX-512` → sm86-avx512. An i9-12900K has no
    # AVX-512 (fused off), so its flags give AVX2, and the claim gets a warning.
    rec = linux_x86(
        ALDER_LAKE, gpu="NVIDIA GeForce RTX 3090", isa="avx512", cpu_vendor="GenuineIntel"
    )
    assert rec.ok
    assert rec.variant.pname == "pytorch-python313-cuda12_8-sm86-avx2"
    assert (rec.variant.repository, rec.variant.branch) == ("build-pytorch", "main")
    assert any("You said the CPU has AVX-512" in w and "avx512f" in w for w in rec.warnings)
    assert any("Alder Lake" in w for w in rec.warnings)
    assert "SM86 (Ampere)" in text(rec)


def test_scenario_2_h100_epyc_zen4_training_and_int8_inference():
    training = linux_x86(ZEN4, gpu="H100", cpu_vendor="AuthenticAMD", workload="general")
    assert training.variant.pname == "pytorch-python313-cuda12_8-sm90-avx512"
    # The CPU also runs the specialised builds: offered with why.
    whys = {a.pname: a.why for a in training.alternatives}
    assert "INT8" in whys["pytorch-python313-cuda12_8-sm90-avx512vnni"]
    assert "BF16" in whys["pytorch-python313-cuda12_8-sm90-avx512bf16"]
    assert "AMD Zen 4" in text(training)
    inference = linux_x86(ZEN4, gpu="H100", cpu_vendor="AuthenticAMD", workload="int8-inference")
    assert inference.variant.pname == "pytorch-python313-cuda12_8-sm90-avx512vnni"
    assert ("main", "pytorch-python313-cuda12_8-sm90-avx512") in alt_names(inference)


def test_scenario_3_development_laptop_without_gpu():
    rec = linux_x86(HASWELL, has_gpu="no")
    assert rec.variant.pname == "pytorch-python313-cpu-avx2"
    assert rec.variant.backend == "cpu" and rec.variant.branch == "main"
    assert any("no NVIDIA GPU" in r for r in rec.reasons)


def test_scenario_4_graviton3_h100_gets_armv8_2_not_armv9():
    # The seed: `lscpu | grep sve2  # ✓ Found (Graviton3 has SVE2)` → sm90-armv9. Neoverse V1
    # has SVE but no SVE2, and the armv9 build is compiled with +sve2.
    rec = ask(
        os="linux",
        arch="aarch64",
        gpu="H100",
        cpu_flags=GRAVITON3,
        cpu_parts=["0xd40"],
        isa="armv9",
    )
    assert rec.variant.pname == "pytorch-python313-cuda12_8-sm90-armv8_2"
    assert rec.variant.platform == "aarch64-linux"
    assert any("sve2" in w and "ARMv9" in w for w in rec.warnings)
    assert any("Graviton3" in w for w in rec.warnings)
    assert "Neoverse V1 (AWS Graviton3)" in text(rec)


def test_scenario_5_macbook_pro_m3():
    rec = ask(os="darwin", arch="aarch64")
    assert rec.variant.pname == "pytorch-python313-darwin-mps"
    assert (rec.variant.backend, rec.variant.platform) == ("mps", "aarch64-darwin")
    assert "MPS" in rec.reasons[0]


def test_scenario_5_from_pasted_sysctl_and_uname():
    rec = host("apple-m3")
    assert rec.variant.pname == "pytorch-python313-darwin-mps"
    assert rec.detected["cpu"]["label"] == "Apple M3 Pro"


# =================================================================================================
# Seed 001, "Default Recommendations"
# =================================================================================================


def test_default_development_testing_is_cpu_avx2_on_an_avx2_machine():
    assert linux_x86(ZEN3, has_gpu="no").variant.pname == "pytorch-python313-cpu-avx2"


def test_default_rtx3090_workstation_with_xeon_is_sm86_avx512():
    rec = linux_x86(CASCADE_LAKE, gpu="RTX 3090", cpu_vendor="GenuineIntel")
    assert rec.variant.pname == "pytorch-python313-cuda12_8-sm86-avx512"


def test_default_rtx3090_workstation_with_core_i9_12900k_is_avx2():
    rec = linux_x86(ALDER_LAKE, gpu="RTX 3090", cpu_vendor="GenuineIntel")
    assert rec.variant.pname == "pytorch-python313-cuda12_8-sm86-avx2"
    assert any("Alder Lake" in w for w in rec.warnings)


def test_default_h100_datacenter_is_sm90_avx512_from_the_real_h100_host():
    rec = host("h100-xeon")
    assert rec.variant.pname == "pytorch-python313-cuda12_8-sm90-avx512"
    assert rec.detected["cpu"]["label"] == "Intel Sapphire Rapids"
    assert rec.detected["gpus"][0]["sm"] == "sm90"


@pytest.mark.parametrize("cpu, isa", [(ZEN4, "avx512"), (ALDER_LAKE, "avx2")])
def test_default_rtx5090_gaming_pc_is_sm120_avx512_or_avx2(cpu, isa):
    rec = linux_x86(cpu, gpu="NVIDIA GeForce RTX 5090", driver_version="570.124.04")
    assert rec.variant.pname == f"pytorch-python313-cuda12_8-sm120-{isa}"
    assert rec.warnings == [] or all("driver" not in w.lower() for w in rec.warnings)


def test_default_aws_h100_graviton3_flags_win():
    rec = ask(os="linux", arch="aarch64", gpu="H100", cpu_flags=GRAVITON3, cpu_parts=["0xd40"])
    assert rec.variant.isa == "armv8_2"
    assert any("Graviton3" in w for w in rec.warnings)


@pytest.mark.parametrize("gpu, sm", [("RTX 3090", "sm86"), ("H100", "sm90"), ("RTX 5090", "sm120")])
def test_default_int8_inference_server_is_avx512vnni(gpu, sm):
    rec = linux_x86(CASCADE_LAKE, gpu=gpu, workload="int8-inference")
    assert rec.variant.pname == f"pytorch-python313-cuda12_8-{sm}-avx512vnni"


# =================================================================================================
# CPU ISA rules
# =================================================================================================


def test_isa_is_allowed_only_when_the_cpu_has_every_feature_its_flags_need():
    # avx2 needs fma and f16c too: a tool's flag list without fma (taken as it is) rules AVX2 out
    # although avx2 is present.
    no_fma = [f for f in HASWELL if f != "fma"]
    rec = ask(os="linux", arch="x86_64", cpu_features=no_fma, has_gpu="no")
    assert rec.variant is None or rec.variant.isa == "avx"
    assert "fma" in text(rec) and "Assumed" not in text(rec)


def test_sm61_has_only_avx_and_avx2_so_an_avx512_cpu_falls_back_to_avx2():
    rec = linux_x86(SAPPHIRE_RAPIDS, gpu="NVIDIA GeForce GTX 1080 Ti")
    assert rec.variant.pname == "pytorch-python313-cuda12_8-sm61-avx2"
    assert any("built only with AVX, AVX2" in r for r in rec.reasons)


def test_pascal_with_ivy_bridge_gets_the_avx_build():
    rec = host("pascal-ivybridge")
    assert rec.variant.pname == "pytorch-python313-cuda12_8-sm61-avx"
    assert "it lacks avx2" in text(rec)


@pytest.mark.parametrize(
    "cpu, workload, isa",
    [
        (SAPPHIRE_RAPIDS, "general", "avx512"),
        (SAPPHIRE_RAPIDS, "bf16-training", "avx512bf16"),
        (SAPPHIRE_RAPIDS, "int8-inference", "avx512vnni"),
        (CASCADE_LAKE, "bf16-training", "avx512"),  # no avx512_bf16
        (CASCADE_LAKE, "int8-inference", "avx512vnni"),
        (flags("skylake_avx512"), "int8-inference", "avx512"),  # no avx512_vnni
        (HASWELL, "bf16-training", "avx2"),
        (IVY_BRIDGE, "int8-inference", "avx"),
    ],
)
def test_workload_picks_among_the_isas_the_cpu_has(cpu, workload, isa):
    rec = linux_x86(cpu, gpu="A100", workload=workload)
    assert rec.variant.isa == isa


def test_bf16_training_alternative_names_the_vnni_build_for_int8_serving():
    rec = linux_x86(SAPPHIRE_RAPIDS, gpu="A100", workload="bf16-training")
    whys = {a.pname: a.why for a in rec.alternatives}
    assert "INT8" in whys["pytorch-python313-cuda12_8-sm80-avx512vnni"]
    assert "general" in whys["pytorch-python313-cuda12_8-sm80-avx512"]


def test_no_specialised_alternative_the_cpu_cannot_run():
    rec = linux_x86(CASCADE_LAKE, gpu="A100")
    assert not any(a.pname.endswith("avx512bf16") for a in rec.alternatives)


@pytest.mark.parametrize("cpu, isa", [(GRACE, "armv9"), (GRAVITON2, "armv8_2")])
def test_arm_cpu_only(cpu, isa):
    rec = ask(os="linux", arch="aarch64", has_gpu="no", cpu_flags=cpu)
    assert rec.variant.pname == f"pytorch-python313-cpu-{isa}"


def test_an_isa_answer_without_flags_stands_for_the_cpu():
    rec = ask(os="linux", arch="x86_64", has_gpu="no", isa="avx512vnni", workload="int8-inference")
    assert rec.variant.pname == "pytorch-python313-cpu-avx512vnni"


def test_avx_only_cpu_without_gpu_moves_to_a_branch_with_a_cpu_avx_build():
    rec = linux_x86(IVY_BRIDGE, has_gpu="no")
    assert (rec.variant.branch, rec.variant.pname) == (
        "pytorch-2.9-python313",
        "pytorch-python313-cpu-avx",
    )
    assert any("default branch" in r for r in rec.reasons)


# =================================================================================================
# Branch and CUDA rules
# =================================================================================================


def test_no_constraint_gives_the_default_branch():
    rec = linux_x86(CASCADE_LAKE, gpu="A100")
    assert (rec.variant.branch, rec.variant.cuda_version, rec.variant.python_version) == (
        "main",
        "12.8",
        "3.13",
    )
    assert rec.variant.pytorch_version == "2.8.0"
    assert any("default branch" in r for r in rec.reasons)


def test_same_variant_on_the_recommended_newer_branch_is_an_alternative():
    rec = linux_x86(CASCADE_LAKE, gpu="A100")
    newer = [a for a in rec.alternatives if a.branch == "pytorch-2.9-python313"]
    assert [a.pname for a in newer] == ["pytorch-python313-cuda12_9-sm80-avx512"]
    assert "newer branch" in newer[0].why


def test_sm70_goes_to_a_branch_that_builds_it():
    rec = linux_x86(CASCADE_LAKE, gpu="Tesla V100-SXM2-16GB")
    assert rec.variant.branch == "pytorch-2.9-vllm-0.14.0"
    assert rec.variant.pname.startswith("pytorch-python312-cuda12_9-sm70-")
    assert any(
        "built only on pytorch-2.9-vllm-0.14.0, pytorch-2.9-python311" in r for r in rec.reasons
    )


def test_sm70_with_python_311_goes_to_pytorch_2_9_python311():
    rec = linux_x86(CASCADE_LAKE, gpu="V100", python="3.11")
    assert rec.variant.branch == "pytorch-2.9-python311"
    assert rec.variant.python_version == "3.11"


def test_sm70_with_python_313_has_no_build_and_offers_the_unconstrained_one():
    rec = linux_x86(CASCADE_LAKE, gpu="V100", python="3.13")
    assert rec.ok and rec.variant is None
    assert any("none of these matches Python 3.13" in r for r in rec.reasons)
    assert rec.alternatives[0].branch == "pytorch-2.9-vllm-0.14.0"
    assert "without the Python 3.13 constraint" in rec.alternatives[0].why


def test_sm103_b300_goes_to_the_preferred_branch_that_builds_it():
    rec = host("b300-xeon")
    assert (rec.variant.branch, rec.variant.pname) == (
        "pytorch-2.9-python313",
        "pytorch-python313-cuda12_9-sm103-avx512",
    )
    assert "8 of this model" in rec.reasons[1]


def test_sm103_on_a_vllm_branch_is_cuda_12_9_only():
    rec = linux_x86(SAPPHIRE_RAPIDS, gpu="B300", vllm="0.15.1", driver_version="570.124.06")
    assert rec.variant.pname == "pytorch-python313-cuda12_9-sm103-avx512"
    assert rec.variant.cuda_version == "12.9"


@pytest.mark.parametrize("gpu", ["NVIDIA GB10", "DRIVE Thor"])
def test_sm110_and_sm121_only_on_pytorch_2_10(gpu):
    rec = linux_arm(GRACE, gpu=gpu)
    assert rec.variant.branch == "pytorch-2.10-python313" and rec.variant.cuda_version == "13.0"
    assert rec.variant.isa == "armv9"


@pytest.mark.parametrize("gpu, sm", [("NVIDIA GB10", "SM121"), ("DRIVE Thor", "SM110")])
def test_a_gpu_built_into_an_arm_system_is_never_paired_with_an_x86_isa(gpu, sm):
    # The snapshot holds x86 builds of SM110/SM121 (the repository has them): never recommended.
    for library in ("pytorch", "torchvision"):
        rec = linux_x86(SAPPHIRE_RAPIDS, gpu=gpu, library=library)
        assert rec.variant is None or rec.variant.backend == "cpu"
        assert all(f"-{sm.lower()}-" not in a.pname for a in rec.alternatives)
        assert re.search(
            rf"{sm} is built into an aarch64 system, so an x86_64 ISA \(avx\w*\) cannot run "
            "beside it.",
            text(rec),
        )
        assert "impossible pairings, never recommended" in text(rec)


def test_dgx_spark_host_gets_sm121_armv9_on_pytorch_2_10():
    rec = host("dgx-spark")
    assert rec.variant.pname == "pytorch-python313-cuda13_0-sm121-armv9"
    assert rec.variant.branch == "pytorch-2.10-python313"
    assert rec.warnings == []


def test_gh200_grace_hopper_gets_sm90_armv9():
    rec = host("gh200-grace")
    assert rec.variant.pname == "pytorch-python313-cuda12_8-sm90-armv9"


@pytest.mark.parametrize(
    "constraint, branch",
    [
        ({"python": "3.12"}, "pytorch-2.8-python312"),
        ({"python": "3.11"}, "pytorch-2.8-python311"),
        ({"pytorch": "2.9"}, "pytorch-2.9-python313"),
        ({"pytorch": "2.9.1", "python": "3.12"}, "pytorch-2.9-vllm-0.14.0"),
        ({"vllm": "0.15.1"}, "pytorch-2.9-vllm-0.15.1"),
        ({"vllm": "0.14"}, "pytorch-2.9-vllm-0.14.0"),
        ({"pytorch": "2.10"}, "pytorch-2.10-python313"),
        ({"branch": "pytorch-2.9-python311"}, "pytorch-2.9-python311"),
    ],
)
def test_constraints_pick_among_the_branches_that_satisfy_them(constraint, branch):
    rec = linux_x86(CASCADE_LAKE, gpu="A100", **constraint)
    assert rec.ok, rec.errors
    assert rec.variant.branch == branch


@pytest.mark.parametrize(
    "driver, cuda",
    [("580.82.07", "12.9"), ("575.51.03", "12.9"), ("570.124.06", "12.8")],
)
def test_two_cuda_branch_picks_the_newest_the_driver_allows(driver, cuda):
    rec = linux_x86(CASCADE_LAKE, gpu="A100", vllm="0.15.1", driver_version=driver)
    assert rec.variant.cuda_version == cuda
    other = "12.8" if cuda == "12.9" else "12.9"
    assert any(
        a.pname == f"pytorch-python313-cuda{other.replace('.', '_')}-sm80-avx512"
        for a in rec.alternatives
    )


def test_nvidia_smi_cuda_version_decides_over_the_driver_table():
    rec = linux_x86(
        CASCADE_LAKE, gpu="A100", vllm="0.15.1", driver_version="580.82.07", driver_cuda="12.8"
    )
    assert rec.variant.cuda_version == "12.8"


def test_two_cuda_branch_without_driver_takes_the_newest_and_mentions_the_other():
    rec = linux_x86(CASCADE_LAKE, gpu="A100", vllm="0.15.1")
    assert rec.variant.cuda_version == "12.9"
    assert any("12.9 and 12.8" in r for r in rec.reasons)
    assert any(
        a.pname == "pytorch-python313-cuda12_8-sm80-avx512" and "CUDA 12.8" in a.why
        for a in rec.alternatives
    )


def test_old_driver_warns_with_the_version_needed():
    rec = host("v100-broadwell")
    assert rec.variant.branch == "pytorch-2.9-vllm-0.14.0"
    assert rec.variant.cuda_version == "12.8"  # the driver supports CUDA 12.2: the older CUDA
    assert any("535.183.01" in w and "550" in w for w in rec.warnings)


@pytest.mark.parametrize(
    "driver, cuda", [("470.239.06", "11.4"), ("515.65.01", "11.7"), ("460.32.03", "11.2")]
)
def test_an_old_driver_is_said_to_support_the_cuda_it_does(driver, cuda):
    # NVIDIA's table: driver 470 runs up to CUDA 11.4, not 11.0.
    rec = linux_x86(SAPPHIRE_RAPIDS, gpu="H100", driver_version=driver)
    assert any(f"supports CUDA {cuda} at most" in w for w in rec.warnings), rec.warnings


def test_architecture_minimum_driver_is_checked_too():
    rec = linux_x86(ZEN4, gpu="RTX 5090", driver_version="560.35.03")
    assert any("570" in w and "SM120" in w for w in rec.warnings)


def test_cuda_13_build_on_a_cuda_12_driver_warns():
    rec = linux_arm(GRACE, gpu="GB10", driver_version="550.54.15")
    assert rec.variant.cuda_version == "13.0"
    assert any("CUDA 13.0" in w and "580" in w for w in rec.warnings)


# =================================================================================================
# Hardware no branch supports
# =================================================================================================


@pytest.mark.parametrize(
    "answers, words",
    [
        ({"gpu": "Tesla K80"}, "3.7"),
        ({"gpu": "NVIDIA GeForce GTX 980"}, "Maxwell"),
        ({"gpu": "Tesla P100-PCIE-16GB"}, "6.0"),
        ({"compute_capability": "5.2"}, "Maxwell"),
    ],
)
def test_unsupported_gpu_gets_no_variant_and_the_cpu_build_instead(answers, words):
    rec = linux_x86(CASCADE_LAKE, **answers)
    assert rec.ok and rec.variant is None
    assert any("There is no build for" in r and words in r for r in rec.reasons)
    assert rec.alternatives[0].pname == "pytorch-python313-cpu-avx512"
    assert "CPU" in rec.alternatives[0].why


def test_jetson_orin_on_arm_gets_no_build_and_the_arm_cpu_build():
    rec = ask(
        os="linux",
        arch="aarch64",
        gpu="Jetson AGX Orin",
        cpu_flags=flags("cortex_a72") + ["fphp", "asimdhp", "asimddp"],
    )
    assert rec.variant is None
    assert "8.7" in text(rec)
    assert rec.alternatives[0].pname == "pytorch-python313-cpu-armv8_2"


def test_k80_host_from_pasted_output():
    rec = host("k80-broadwell")
    assert rec.variant is None and "Tesla K80" in text(rec)
    assert rec.alternatives[0].pname == "pytorch-python313-cpu-avx2"


def test_intel_mac_has_no_build():
    rec = host("intel-mac")
    assert rec.ok and rec.variant is None
    assert any("no build for Intel Macs" in r for r in rec.reasons)
    assert rec.alternatives[0].pname == "pytorch-python313-cpu-avx2"
    assert "Linux VM" in rec.alternatives[0].why


# =================================================================================================
# GPU names, several GPUs, libraries
# =================================================================================================


@pytest.mark.parametrize(
    "name, sm",
    [
        ("NVIDIA H100 80GB HBM3", "sm90"),
        ("NVIDIA GeForce RTX 4090", "sm89"),
        ("Tesla T4", "sm75"),
        ("NVIDIA A100-SXM4-80GB", "sm80"),
        ("NVIDIA GeForce RTX 3080 Ti", "sm86"),  # a model written without its aliases
    ],
)
def test_gpu_names_resolve_to_architectures(name, sm):
    rec = linux_x86(SAPPHIRE_RAPIDS, gpu=name)
    assert rec.variant.sm == sm


def test_compute_capability_alone_or_with_an_unknown_name_wins():
    assert linux_x86(HASWELL, compute_capability="8.9").variant.sm == "sm89"
    assert linux_x86(HASWELL, gpu="Some OEM Board", compute_capability="8.0").variant.sm == "sm80"


def test_several_distinct_gpus_get_one_recommendation_each():
    rec = host("mixed-4090-3090")
    assert rec.ok and rec.variant is None
    assert [r.variant.pname for r in rec.per_gpu] == [
        "pytorch-python313-cuda12_8-sm89-avx2",
        "pytorch-python313-cuda12_8-sm86-avx2",
    ]
    assert "RTX 4090" in rec.per_gpu[0].gpu and "RTX 3090" in rec.per_gpu[1].gpu
    assert any("one recommendation per GPU model" in r for r in rec.reasons)
    assert "×2" in text(rec)


def test_several_gpus_of_one_architecture_share_one_build():
    rec = linux_x86(CASCADE_LAKE, gpu=["RTX 4090", "L40"])
    assert rec.variant.pname == "pytorch-python313-cuda12_8-sm89-avx512"
    assert len(rec.per_gpu) == 2


def test_torchaudio_exists_for_sm61_with_avx():
    rec = host("pascal-ivybridge", library="torchaudio")
    assert (rec.variant.repository, rec.variant.branch, rec.variant.pname) == (
        "build-pytorch",
        "main",
        "torchaudio-python313-cuda12_8-sm61-avx",
    )


def test_torchaudio_for_an_h100_has_no_build_and_offers_pytorch():
    rec = linux_x86(SAPPHIRE_RAPIDS, gpu="H100", library="torchaudio")
    assert rec.ok and rec.variant is None
    assert any("no torchaudio build" in r and "SM61 + avx, SM75 + avx" in r for r in rec.reasons)
    assert rec.alternatives[0].pname == "pytorch-python313-cuda12_8-sm90-avx512"


def test_torchvision_for_an_h100_comes_from_build_torchvision():
    rec = linux_x86(SAPPHIRE_RAPIDS, gpu="H100", library="torchvision")
    assert (rec.variant.repository, rec.variant.branch, rec.variant.pname) == (
        "build-torchvision",
        "main",
        "torchvision-python313-cuda12_8-sm90-avx512",
    )


def test_torchvision_for_t4_with_avx_only_cpu_is_the_build_pytorch_companion():
    rec = linux_x86(IVY_BRIDGE, gpu="T4", library="torchvision")
    assert (rec.variant.repository, rec.variant.pname) == (
        "build-pytorch",
        "torchvision-python313-cuda12_8-sm75-avx",
    )


@pytest.mark.parametrize(
    "machine, gpu, branch",
    [
        (lambda **kw: linux_arm(GRACE, **kw), "GB10", "cuda-13_0"),
        (lambda **kw: linux_x86(SAPPHIRE_RAPIDS, **kw), "B300", "cuda-12_9"),
    ],
)
def test_torchvision_follows_the_hardware_across_build_torchvision_branches(machine, gpu, branch):
    rec = machine(gpu=gpu, library="torchvision")
    assert (rec.variant.repository, rec.variant.branch) == ("build-torchvision", branch)


def test_torchvision_on_a_mac_has_no_build_and_offers_pytorch_mps():
    rec = ask(os="darwin", arch="aarch64", library="torchvision")
    assert rec.variant is None
    assert rec.alternatives[0].pname == "pytorch-python313-darwin-mps"


# =================================================================================================
# Bad and contradictory answers
# =================================================================================================


@pytest.mark.parametrize(
    "answers, words",
    [
        ({"os": "darwin", "arch": "aarch64", "gpu": "H100"}, "macOS with an NVIDIA GPU"),
        ({"os": "darwin", "arch": "aarch64", "has_gpu": "yes"}, "macOS with an NVIDIA GPU"),
        (
            {"os": "linux", "arch": "aarch64", "cpu_flags": "avx avx2 fma", "has_gpu": "no"},
            "x86_64 CPU",
        ),
        (
            {"os": "linux", "arch": "x86_64", "cpu_flags": "fp asimd sve sve2", "has_gpu": "no"},
            "aarch64 CPU",
        ),
        (
            {"os": "linux", "arch": "x86_64", "cpu_flags": "avx", "workload": "gaming"},
            "Unknown workload",
        ),
        ({"os": "windows"}, "no Windows builds"),
        ({"os": "solaris"}, "Unknown operating system"),
        ({"os": "linux", "arch": "riscv64"}, "Unknown CPU architecture"),
        (
            {
                "os": "linux",
                "arch": "x86_64",
                "cpu_flags": "avx2",
                "gpu": "Tesla T4",
                "compute_capability": "8.6",
            },
            "Contradictory",
        ),
        (
            {"os": "linux", "arch": "x86_64", "cpu_flags": "avx2", "has_gpu": "no", "gpu": "T4"},
            "Contradictory",
        ),
        ({"os": "linux", "arch": "x86_64", "cpu_flags": "avx2", "gpu": "Voodoo 5"}, "Unknown GPU"),
        (
            {"os": "linux", "arch": "x86_64", "cpu_flags": "avx2", "compute_capability": "nine"},
            "MAJOR.MINOR",
        ),
        (
            {
                "os": "linux",
                "arch": "x86_64",
                "cpu_flags": "avx2",
                "gpu": "T4",
                "driver_version": "latest",
            },
            "Driver version",
        ),
        ({"os": "linux", "arch": "x86_64", "isa": "armv9", "has_gpu": "no"}, "aarch64 ISA"),
        ({"os": "linux", "arch": "x86_64", "isa": "sse9", "has_gpu": "no"}, "Unknown CPU ISA"),
        (
            {
                "os": "linux",
                "arch": "x86_64",
                "cpu_flags": "avx2",
                "has_gpu": "no",
                "library": "jax",
            },
            "Unknown library",
        ),
        (
            {
                "os": "linux",
                "arch": "x86_64",
                "cpu_flags": "avx2",
                "has_gpu": "no",
                "python": "3.10",
            },
            "No branch builds Python 3.10",
        ),
        (
            {
                "os": "linux",
                "arch": "x86_64",
                "cpu_flags": "avx2",
                "has_gpu": "no",
                "vllm": "0.15.1",
                "python": "3.11",
            },
            "No branch combines",
        ),
        (
            {
                "os": "linux",
                "arch": "x86_64",
                "cpu_flags": "avx2",
                "has_gpu": "no",
                "branch": "nope",
            },
            "No branch 'nope'",
        ),
        (
            {
                "os": "linux",
                "arch": "x86_64",
                "cpu_flags": "avx2",
                "has_gpu": "no",
                "repository": "build-torchvision",
            },
            "does not build pytorch",
        ),
        (
            {"os": "linux", "arch": "x86_64", "cpu_flags": "avx2", "has_gpu": "maybe"},
            "choose yes, no or unknown",
        ),
    ],
)
def test_bad_answers_give_a_clear_error_not_an_exception(answers, words):
    rec = ask(**answers)
    assert not rec.ok and rec.variant is None
    assert any(words in e.message for e in rec.errors), rec.errors


@pytest.mark.parametrize(
    "raw",
    [
        None,
        [],
        "linux",
        42,
        {"os": None},
        {"cpu_flags": 3.5, "os": "linux"},
        {"gpus": "H100", "os": "linux"},
        {"gpus": [None, 3], "os": "linux"},
    ],
)
def test_garbage_never_raises(raw):
    rec = recommend(raw, catalogue())
    assert not rec.ok
    json.dumps(rec.to_dict())


def test_an_empty_catalogue_gives_no_variant_without_raising():
    rec = recommend(
        {"os": "linux", "arch": "x86_64", "cpu_flags": HASWELL, "has_gpu": "no"}, Catalogue()
    )
    assert rec.variant is None


def test_missing_answers_name_the_next_question_and_its_field():
    rec = ask(os="linux", arch="x86_64", has_gpu="no")
    assert rec.next_step == "cpu" and "CPU features" in rec.errors[0].message
    assert rec.errors[0].field == "isa"
    rec = ask(cpu_flags=HASWELL)
    assert rec.next_step == "os" and rec.errors[0].field == "os"


def test_arch_is_inferred_from_the_flags_on_linux():
    rec = ask(os="linux", cpu_flags=GRAVITON2, has_gpu="no")
    assert rec.variant.pname == "pytorch-python313-cpu-armv8_2"


def test_result_is_json_serialisable_with_every_field():
    data = json.loads(json.dumps(host("h100-xeon").to_dict()))
    assert set(data) == {
        "ok",
        "variant",
        "reasons",
        "warnings",
        "alternatives",
        "detected",
        "errors",
        "per_gpu",
        "gpu",
        "next_step",
    }
    assert data["variant"]["pname"] == "pytorch-python313-cuda12_8-sm90-avx512"
    assert {"pname", "repository", "branch", "why", "status"} == set(data["alternatives"][0])


def test_one_reason_per_step_taken():
    rec = linux_x86(CASCADE_LAKE, gpu="A100", vllm="0.15.1")
    joined = " | ".join(rec.reasons)
    for words in (
        "Linux on x86_64",
        "NVIDIA GPU",
        "SM80",
        "The CPU",
        "order of preference",
        "vLLM 0.15.1",
        "CUDA 12.9",
    ):
        assert words in joined


# =================================================================================================
# The tree as data
# =================================================================================================


def test_steps_follow_the_seed_decision_tree():
    assert [s.id for s in steps.STEPS] == [
        "os",
        "arch",
        "gpu",
        "gpu_model",
        "cpu",
        "workload",
        "constraints",
    ]
    for step in steps.STEPS:
        assert step.question.endswith(("?", ")")) and step.fields
    workload = steps.FIELDS["workload"]
    assert [c.value for c in workload.choices] == ["general", "bf16-training", "int8-inference"]
    assert set(rules.ISA_PREFERENCE) == {c.value for c in workload.choices}


def test_isa_preference_is_data_and_each_slug_exists():
    cat = catalogue()
    for workload, per_arch in rules.ISA_PREFERENCE.items():
        for arch, order in per_arch.items():
            assert all(cat.isa(slug).arch == arch for slug in order), (workload, arch)


@pytest.mark.parametrize(
    "answers, step",
    [
        ({}, "os"),
        ({"os": "linux"}, "arch"),
        ({"os": "linux", "arch": "x86_64"}, "gpu"),
        ({"os": "linux", "arch": "x86_64", "has_gpu": "yes"}, "gpu_model"),
        ({"os": "linux", "arch": "x86_64", "has_gpu": "no"}, "cpu"),
        ({"os": "linux", "arch": "x86_64", "gpu": "H100"}, "cpu"),
        ({"os": "linux", "arch": "x86_64", "has_gpu": "no", "cpu_flags": "avx2"}, "workload"),
        (
            {
                "os": "linux",
                "arch": "x86_64",
                "has_gpu": "no",
                "isa": "avx2",
                "workload": "general",
            },
            "constraints",
        ),
        ({"os": "darwin"}, "arch"),
        ({"os": "darwin", "arch": "aarch64"}, "constraints"),
        ({"os": "darwin", "arch": "aarch64", "library": ""}, None),
        (
            {
                "os": "linux",
                "arch": "x86_64",
                "has_gpu": "no",
                "isa": "avx2",
                "workload": "general",
                "python": "",
            },
            None,
        ),
    ],
)
def test_next_step_walks_the_tree(answers, step):
    read, errors = normalise(answers, catalogue())
    assert errors == []
    nxt = steps.next_step(read.values, read.given)
    assert (nxt.id if nxt else None) == step


def test_gpu_and_cpu_choices_come_from_the_catalogue():
    cat = catalogue()
    gpu_choices = steps.gpu_choices(cat)
    assert gpu_choices[0].value == "6.1" and "GTX 1080 Ti" in gpu_choices[0].label
    assert any(c.value == "12.1" and "DGX Spark" in c.label for c in gpu_choices)
    assert {c.value for c in steps.isa_choices(cat)} == {i.slug for i in cat.isas}
    assert {c.value for c in steps.isa_choices(cat, {"arch": "aarch64"})} == {"armv8_2", "armv9"}


def test_the_default_branch_wins_over_a_lower_preference_number():
    from dataclasses import replace

    cat = catalogue()
    branches = [replace(b, preference=99) if b.is_default else b for b in cat.branches]
    shuffled = Catalogue(
        variants=cat.variants,
        branches=branches,
        architectures=cat.architectures,
        gpu_models=cat.gpu_models,
        isas=cat.isas,
    )
    rec = recommend(
        {"os": "linux", "arch": "x86_64", "cpu_flags": CASCADE_LAKE, "gpu": "A100"}, shuffled
    )
    assert rec.variant.branch == "main"
    # Without a default, the lowest preference wins.
    branches = [replace(b, is_default=False) for b in cat.branches]
    no_default = Catalogue(
        variants=cat.variants,
        branches=branches,
        architectures=cat.architectures,
        gpu_models=cat.gpu_models,
        isas=cat.isas,
    )
    rec = recommend(
        {"os": "linux", "arch": "x86_64", "cpu_flags": CASCADE_LAKE, "gpu": "A100"}, no_default
    )
    assert rec.variant.branch == "main"  # preference 10 is the lowest
    branches = [
        replace(b, is_default=False, preference=99)
        if b.name == "main"
        else replace(b, is_default=False)
        for b in cat.branches
    ]
    rec = recommend(
        {"os": "linux", "arch": "x86_64", "cpu_flags": CASCADE_LAKE, "gpu": "A100"},
        Catalogue(
            variants=cat.variants,
            branches=branches,
            architectures=cat.architectures,
            gpu_models=cat.gpu_models,
            isas=cat.isas,
        ),
    )
    assert rec.variant.branch == "pytorch-2.9-python313"


def test_snapshot_builds_from_orm_like_objects():
    from types import SimpleNamespace as NS

    branch = NS(
        repository="build-pytorch",
        name="main",
        pytorch_version="2.8.0",
        python_version="3.13",
        cuda_versions=["12.8"],
        torchvision_version="",
        min_driver=550,
        is_default=True,
        preference=10,
        purpose="Stable baseline",
    )  # no vllm_version yet: read as ""
    arch = NS(
        sm="sm90",
        compute_capability="9.0",
        name="Hopper",
        min_driver=525,
        min_cuda="11.8",
        max_cuda="",
    )
    isa = NS(
        slug="avx2",
        label="AVX2",
        arch="x86_64",
        rank=20,
        compiler_flags=["-mavx2", "-mfma", "-mf16c"],
        required_features=["avx2", "fma", "f16c"],
        hardware="Intel Haswell+",
    )
    variant = NS(
        pname="pytorch-python313-cuda12_8-sm90-avx2",
        branch=branch,
        library="pytorch",
        backend="cuda",
        platform="x86_64-linux",
        python_version="3.13",
        cuda_version="12.8",
        gpu_arch=arch,
        cpu_isa=isa,
        status="built",
    )
    model = NS(name="H100", aliases=["NVIDIA H100 80GB HBM3"], architecture=arch)
    cat = Catalogue.from_objects(
        variants=[variant], branches=[branch], architectures=[arch], gpu_models=[model], isas=[isa]
    )
    assert cat.branch("build-pytorch", "main").vllm_version == ""
    rec = recommend(
        {
            "os": "linux",
            "arch": "x86_64",
            "cpu_flags": HASWELL,
            "gpu": "NVIDIA H100 80GB HBM3",
            "driver_version": "580.1",
        },
        cat,
    )
    assert (
        rec.variant.pname == "pytorch-python313-cuda12_8-sm90-avx2"
        and rec.variant.status == "built"
    )


def test_a_gpu_the_catalogue_does_not_list_is_unknown_not_guessed():
    # GPU models of built architectures live in the catalogue (architectures.toml): one missing
    # from this test catalogue has no second table to fall back on.
    assert "RTX 3080" not in {m.name for m in catalogue().gpu_models}
    rec = linux_x86(SAPPHIRE_RAPIDS, gpu="NVIDIA GeForce RTX 3080")
    assert not rec.ok and rec.variant is None
    assert "Unknown GPU 'NVIDIA GeForce RTX 3080'" in str(rec.errors[0])
