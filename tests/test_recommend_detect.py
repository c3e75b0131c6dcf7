"""Detection: parsing real and realistic tool output, and rejecting what is not tool output.

No database. Host outputs live in tests/data/hosts/<host>/ (h100-xeon is copied unedited from
the shared samples; the others are realistic outputs written for these tests).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from catalog.wizard import detect as d
from catalog.wizard.gpus import normalise_gpu_name, resolve_gpu_name

HOSTS = Path(__file__).parent / "data" / "hosts"
SHARED = Path("/work/shared/samples/hosts/h100-xeon")


def read(host, name):
    return (HOSTS / host / name).read_text()


def paste(host):
    """Every file of a host, concatenated as if pasted into one textarea."""
    return "\n".join(p.read_text() for p in sorted((HOSTS / host).iterdir()) if p.is_file())


# -- the engine is plain Python ------------------------------------------------------------------


def test_importing_the_engine_does_not_import_django():
    code = (
        "import sys, catalog.wizard, catalog.wizard.engine, catalog.wizard.detect;"
        "bad = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'));"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).parent.parent,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_h100_xeon_samples_are_copied_unedited():
    if not SHARED.exists():
        pytest.skip("shared samples not present on this machine")
    for sample in SHARED.iterdir():
        assert (HOSTS / "h100-xeon" / sample.name).read_bytes() == sample.read_bytes()


# -- nvidia-smi ------------------------------------------------------------------------------------


def test_nvidia_smi_table_gives_gpu_driver_and_cuda():
    facts = d.parse_nvidia_smi(read("h100-xeon", "nvidia-smi.txt"))
    assert facts.sources == ["nvidia-smi"]
    assert [g.name for g in facts.gpus] == ["NVIDIA H100 80GB HBM3"]
    assert facts.gpus[0].memory_mib == 81559
    assert facts.driver_version == "580.159.04"
    assert facts.cuda_version == "13.0"


def test_nvidia_smi_table_lists_several_gpus_in_order():
    facts = d.parse_nvidia_smi(read("mixed-4090-3090", "nvidia-smi.txt"))
    assert [g.name for g in facts.gpus] == [
        "NVIDIA GeForce RTX 4090",
        "NVIDIA GeForce RTX 3090",
        "NVIDIA GeForce RTX 3090",
    ]
    assert facts.driver_version == "555.58.02" and facts.cuda_version == "12.5"


def test_old_nvidia_smi_layout_with_two_k80_dies():
    facts = d.parse_nvidia_smi(read("k80-broadwell", "nvidia-smi.txt"))
    assert [g.name for g in facts.gpus] == ["Tesla K80", "Tesla K80"]
    assert facts.driver_version == "470.239.06" and facts.cuda_version == "11.4"


def test_nvidia_smi_that_cannot_reach_the_driver_is_recognised_with_a_note():
    facts = d.detect(
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
        "Make sure that the latest NVIDIA driver is installed and running.\n"
    )
    assert facts.ok and facts.gpus == []
    assert any("could not talk to the NVIDIA driver" in n for n in facts.notes)


def test_query_csv_with_header_and_mib_units():
    facts = d.parse_nvidia_smi_csv(read("h100-xeon", "nvidia-smi-query.csv"))
    gpu = facts.gpus[0]
    assert (gpu.name, gpu.compute_capability, gpu.driver_version, gpu.memory_mib) == (
        "NVIDIA H100 80GB HBM3",
        "9.0",
        "580.159.04",
        81559,
    )


def test_query_csv_without_header():
    facts = d.parse_nvidia_smi_csv(read("t4-cascadelake", "nvidia-smi-query.csv"))
    assert [(g.name, g.compute_capability, g.memory_mib) for g in facts.gpus] == [
        ("Tesla T4", "7.5", 15360)
    ]
    assert facts.driver_version == "550.54.15"


def test_query_csv_nounits_and_not_available_memory():
    facts = d.parse_nvidia_smi_csv("NVIDIA A100-SXM4-80GB, 8.0, 535.104.05, 81920\n")
    assert (facts.gpus[0].compute_capability, facts.gpus[0].memory_mib) == ("8.0", 81920)
    spark = d.parse_nvidia_smi_csv(read("dgx-spark", "nvidia-smi-query.csv"))
    assert (spark.gpus[0].name, spark.gpus[0].compute_capability, spark.gpus[0].memory_mib) == (
        "NVIDIA GB10",
        "12.1",
        None,
    )


def test_query_csv_eight_identical_gpus_stay_eight():
    facts = d.parse_nvidia_smi_csv(read("b300-xeon", "nvidia-smi-query.csv"))
    assert len(facts.gpus) == 8
    assert {g.compute_capability for g in facts.gpus} == {"10.3"}


def test_name_and_compute_cap_queries_pasted_one_after_the_other_pair_up():
    facts = d.detect("NVIDIA GeForce RTX 4090\nNVIDIA GeForce RTX 3090\n8.9\n8.6\n")
    assert [(g.name, g.compute_capability) for g in facts.gpus] == [
        ("NVIDIA GeForce RTX 4090", "8.9"),
        ("NVIDIA GeForce RTX 3090", "8.6"),
    ]


def test_nvidia_smi_q_gives_name_driver_cuda_but_no_compute_capability():
    facts = d.parse_nvidia_smi_q(read("h100-lent", "nvidia-smi-q.txt"))
    assert facts.sources == ["nvidia-smi -q"]
    assert [g.name for g in facts.gpus] == ["NVIDIA H100 80GB HBM3"]
    assert facts.gpus[0].architecture_family == "Hopper"
    assert facts.gpus[0].compute_capability == ""  # not in -q on this version
    assert (facts.driver_version, facts.cuda_version) == ("580.159.04", "13.0")
    t4 = d.parse_nvidia_smi_q(read("t4-cascadelake", "nvidia-smi-q.txt"))
    assert [(g.name, g.memory_mib) for g in t4.gpus] == [("Tesla T4", 15360)]


def test_the_same_gpu_from_four_tools_is_one_gpu():
    facts = d.detect(paste("h100-lent"))
    assert facts.ok, facts.errors
    assert len(facts.gpus) == 1
    gpu = facts.gpus[0]
    assert (gpu.name, gpu.compute_capability, gpu.memory_mib) == (
        "NVIDIA H100 80GB HBM3",
        "9.0",
        81559,
    )


# -- CPU tools ----------------------------------------------------------------------------------


def test_lscpu_on_the_h100_xeon():
    facts = d.parse_lscpu(read("h100-xeon", "lscpu.txt"))
    assert (facts.arch, facts.cpu_vendor, facts.cpu_model) == (
        "x86_64",
        "GenuineIntel",
        "Intel(R) Xeon(R) Processor",
    )
    assert {"avx512f", "avx512_bf16", "avx512_vnni", "amx_tile"} <= facts.cpu_features
    assert facts.microarchitecture() == ("sapphirerapids", "Intel Sapphire Rapids")


def test_cpuinfo_on_the_h100_xeon_matches_lscpu():
    cpuinfo = d.parse_cpuinfo(read("h100-xeon", "cpuinfo.txt"))
    lscpu = d.parse_lscpu(read("h100-xeon", "lscpu.txt"))
    assert cpuinfo.cpu_features == lscpu.cpu_features
    assert cpuinfo.arch == "x86_64" and cpuinfo.sources == ["/proc/cpuinfo"]


def test_new_indented_lscpu_layout_ivy_bridge_has_avx_but_not_avx2():
    facts = d.parse_lscpu(read("pascal-ivybridge", "lscpu.txt"))
    assert "avx" in facts.cpu_features and "avx2" not in facts.cpu_features
    assert facts.cpu_model == "Intel(R) Core(TM) i7-3770 CPU @ 3.40GHz"
    assert facts.microarchitecture()[1] == "Intel Ivy Bridge"


@pytest.mark.parametrize(
    "host, file, label",
    [
        ("t4-cascadelake", "lscpu.txt", "Intel Cascade Lake"),
        ("ryzen-5800x", "lscpu.txt", "AMD Zen 3"),
        ("v100-broadwell", "cpuinfo.txt", "Intel Broadwell"),
        ("graviton2", "cpuinfo.txt", "Neoverse N1 (AWS Graviton2)"),
        ("graviton2", "lscpu.txt", "Neoverse N1 (AWS Graviton2)"),
        ("gh200-grace", "cpuinfo.txt", "Neoverse V2 (NVIDIA Grace, AWS Graviton4)"),
        ("dgx-spark", "lscpu.txt", "Cortex-X925 + Cortex-A725 (NVIDIA GB10 / DGX Spark)"),
    ],
)
def test_microarchitecture_is_named_from_the_features(host, file, label):
    facts = d.detect(read(host, file))
    assert facts.ok
    assert facts.microarchitecture()[1] == label


def test_arm_cpuinfo_features_and_part():
    facts = d.parse_cpuinfo(read("graviton2", "cpuinfo.txt"))
    assert facts.arch == "aarch64" and facts.cpu_vendor == "ARM"
    assert facts.cpu_parts == ["0xd0c"] and facts.arm_cores == ["Neoverse N1"]
    assert {"fphp", "asimdhp", "asimddp"} <= facts.cpu_features
    assert "sve" not in facts.cpu_features
    grace = d.parse_cpuinfo(read("gh200-grace", "cpuinfo.txt"))
    assert {"sve", "sve2"} <= grace.cpu_features and grace.arm_cores == ["Neoverse V2"]


def test_graviton3_cpu_part_names_neoverse_v1():
    text = (
        "processor\t: 0\nFeatures\t: fp asimd fphp asimdhp asimddp sve\n"
        "CPU implementer\t: 0x41\nCPU part\t: 0xd40\n"
    )
    facts = d.detect(text)
    assert facts.microarchitecture() == ("neoverse_v1", "Neoverse V1 (AWS Graviton3)")


def test_cortex_a53_is_named_from_its_part_id():
    text = (
        "processor\t: 0\nFeatures\t: fp asimd evtstrm crc32 cpuid\n"
        "CPU implementer\t: 0x41\nCPU part\t: 0xd03\n"
    )
    assert d.detect(text).microarchitecture()[1].startswith("Cortex-A53")


def test_uname_a_and_m():
    assert (
        d.parse_uname(read("graviton2", "uname.txt")).os,
        d.parse_uname(read("graviton2", "uname.txt")).arch,
    ) == ("linux", "aarch64")
    assert d.parse_uname("arm64\n").arch == "aarch64"
    mac = d.parse_uname(read("apple-m3", "uname-a.txt"))
    assert (mac.os, mac.arch) == ("darwin", "aarch64")
    intel = d.parse_uname(read("intel-mac", "uname.txt"))
    assert (intel.os, intel.arch) == ("darwin", "x86_64")


def test_sysctl_apple_silicon():
    facts = d.detect(paste("apple-m3"))
    assert (facts.os, facts.arch, facts.cpu_vendor) == ("darwin", "aarch64", "Apple")
    assert facts.microarchitecture() == ("m3", "Apple M3 Pro")


def test_sysctl_intel_mac_converts_darwin_feature_names():
    facts = d.detect(paste("intel-mac"))
    assert (facts.os, facts.arch) == ("darwin", "x86_64")
    assert {"avx", "avx2", "fma", "f16c", "sse4_2"} <= facts.cpu_features
    assert "avx1.0" in facts.cpu_features and "avx512f" not in facts.cpu_features


# -- the dispatcher -------------------------------------------------------------------------------


def test_shared_sample_pasted_whole_is_recognised_tool_by_tool():
    facts = d.detect(paste("h100-xeon"))
    assert facts.ok and facts.notes == []
    assert set(facts.sources) == {
        "nvidia-smi",
        "nvidia-smi --query-gpu",
        "lscpu",
        "/proc/cpuinfo",
        "uname",
        "os-release",
    }
    assert (facts.os, facts.arch, facts.distro) == ("linux", "x86_64", "Ubuntu 24.04.3 LTS")
    answers = facts.answers()
    assert answers["gpu"] == ["NVIDIA H100 80GB HBM3"] and answers["compute_cap"] == ["9.0"]
    assert answers["driver"] == "580.159.04" and answers["driver_cuda"] == "13.0"
    assert "avx512_vnni" in answers["cpu_features"]


@pytest.mark.parametrize("host", sorted(p.name for p in HOSTS.iterdir() if p.is_dir()))
def test_every_host_paste_is_recognised_without_errors(host):
    facts = d.detect(paste(host))
    assert facts.ok, facts.errors
    assert facts.os in ("linux", "darwin") and facts.arch in ("x86_64", "aarch64")


def test_crlf_and_ansi_colour_are_tolerated():
    text = read("t4-cascadelake", "lscpu.txt").replace("\n", "\r\n")
    assert d.detect("\x1b[1m" + text + "\x1b[0m").cpu_model.startswith(
        "Intel(R) Xeon(R) Platinum 8259CL"
    )


def test_bytes_are_accepted_as_utf8():
    assert d.detect(read("graviton2", "lscpu.txt").encode()).arch == "aarch64"


@pytest.mark.parametrize(
    "data, words",
    [
        ("", "Nothing was pasted"),
        ("   \n\t\n", "Nothing was pasted"),
        (None, "Nothing was pasted"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00", "binary"),
        ("abc\x00def", "binary"),
        (b"\xff\xfe\xfa not utf8", "not UTF-8"),
        ("x" * 262_145, "262,144 bytes"),
        (b"y" * 300_000, "262,144 bytes"),
        (
            "Hello, I have a fast computer with a big GPU.\nPlease help!\n",
            "does not look like output",
        ),
        ('{"gpu": "H100"}', "does not look like output"),
        (12345, "Expected text"),
    ],
)
def test_unusable_input_is_rejected_with_a_sentence(data, words):
    facts = d.detect(data)
    assert not facts.ok
    assert len(facts.errors) == 1 and words in facts.errors[0]
    assert facts.gpus == [] and facts.sources == []


def test_exactly_256_kb_is_accepted():
    body = read("graviton2", "lscpu.txt")
    text = body + " " * (262_144 - len(body.encode()))
    assert d.detect(text).ok


def test_pastes_from_two_machines_disagreeing_on_arch_are_an_error():
    facts = d.detect(read("graviton2", "lscpu.txt") + "\n" + read("t4-cascadelake", "lscpu.txt"))
    assert not facts.ok and "disagree" in facts.errors[0]


def test_macos_with_nvidia_smi_output_is_an_error():
    facts = d.detect(paste("apple-m3") + "\n" + read("h100-xeon", "nvidia-smi.txt"))
    assert not facts.ok
    assert any("darwin" in e or "macOS" in e for e in facts.errors)


def test_truncated_and_garbled_tool_output_does_not_raise():
    text = read("h100-xeon", "nvidia-smi.txt")
    for cut in (20, 120, 400, 900, len(text) - 5):
        facts = d.detect(text[:cut])
        assert isinstance(facts, d.Facts)
    garbled = "Architecture: \nFlags:\nprocessor\t:\nCPU part\t: zz\nname, compute_cap\nfoo, bar\n"
    assert isinstance(d.detect(garbled), d.Facts)


def test_each_parser_returns_empty_facts_on_foreign_input():
    for parser in (
        d.parse_nvidia_smi,
        d.parse_nvidia_smi_q,
        d.parse_nvidia_smi_csv,
        d.parse_lscpu,
        d.parse_cpuinfo,
        d.parse_uname,
        d.parse_sysctl,
    ):
        facts = parser("nothing to see here\n")
        assert facts.sources == [] and facts.gpus == [] and not facts.cpu_features


# -- GPU names -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, normal",
    [
        ("NVIDIA H100 80GB HBM3", "h100"),
        ("NVIDIA A100-SXM4-80GB", "a100"),
        ("NVIDIA GeForce RTX 4090", "rtx 4090"),
        ("Tesla T4", "t4"),
        ("Tesla V100-PCIE-32GB", "v100"),
        ("NVIDIA H100 PCIe", "h100"),
    ],
)
def test_gpu_names_are_normalised(name, normal):
    assert normalise_gpu_name(name) == normal


@pytest.mark.parametrize(
    "name, sm",
    [
        ("NVIDIA H100 80GB HBM3", "sm90"),
        ("NVIDIA GeForce RTX 4090", "sm89"),
        ("Tesla T4", "sm75"),
        ("NVIDIA GB10", "sm121"),
        ("NVIDIA B300 SXM6 AC", "sm103"),
        ("NVIDIA GeForce RTX 4090 Laptop GPU", "sm89"),
        ("Tesla K80", "sm37"),
        ("Tesla P100-PCIE-16GB", "sm60"),
        ("Jetson AGX Orin", "sm87"),
        ("NVIDIA A10G", "sm86"),
    ],
)
def test_gpu_names_resolve_without_a_catalogue(name, sm):
    assert resolve_gpu_name(name).sm == sm


def test_unknown_gpu_name_resolves_to_none():
    assert resolve_gpu_name("Voodoo 5 6000") is None
    assert resolve_gpu_name("") is None
