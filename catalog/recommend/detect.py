"""Hardware detection from pasted tool output.

Each parser takes the text of one tool's output and returns a `Facts` (plain data); none raises
on bad input. `detect()` takes one blob that may hold the output of several tools pasted one
after the other, recognises which tools it came from line by line, merges what they say, and
rejects what cannot be used (empty, binary, over 256 KB, no tool output at all) with a sentence
naming the problem.

Recognised: `nvidia-smi` (table), `nvidia-smi --query-gpu=... --format=csv[,noheader]`,
`nvidia-smi -q`, `lscpu`, `/proc/cpuinfo` (x86 and ARM), `uname -a` / `uname -m` / `uname -s`,
macOS `sysctl -a | grep machdep.cpu`, and `/etc/os-release`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from catalog.recommend import gpus as gpu_names

MAX_BYTES = 262_144  # 256 KB

MACHINES = {
    "x86_64": "x86_64",
    "amd64": "x86_64",
    "x64": "x86_64",
    "aarch64": "aarch64",
    "arm64": "aarch64",
    "aarch64_be": "aarch64",
}
OTHER_MACHINES = {"i386", "i686", "armv7l", "armv6l", "ppc64le", "ppc64", "s390x", "riscv64"}

# ARM `CPU part` ids (implementer 0x41, Arm Ltd) -> core name.
ARM_PARTS = {
    "0xd03": "Cortex-A53",
    "0xd04": "Cortex-A35",
    "0xd05": "Cortex-A55",
    "0xd07": "Cortex-A57",
    "0xd08": "Cortex-A72",
    "0xd09": "Cortex-A73",
    "0xd0a": "Cortex-A75",
    "0xd0b": "Cortex-A76",
    "0xd0c": "Neoverse N1",
    "0xd0d": "Cortex-A77",
    "0xd40": "Neoverse V1",
    "0xd41": "Cortex-A78",
    "0xd44": "Cortex-X1",
    "0xd46": "Cortex-A510",
    "0xd47": "Cortex-A710",
    "0xd48": "Cortex-X2",
    "0xd49": "Neoverse N2",
    "0xd4a": "Neoverse E1",
    "0xd4d": "Cortex-A715",
    "0xd4e": "Cortex-X3",
    "0xd4f": "Neoverse V2",
    "0xd80": "Cortex-A520",
    "0xd81": "Cortex-A720",
    "0xd82": "Cortex-X4",
    "0xd83": "Neoverse V3AE",
    "0xd84": "Neoverse V3",
    "0xd85": "Cortex-X925",
    "0xd87": "Cortex-A725",
    "0xd8e": "Neoverse N3",
}
# Where a core is best known from (for the reasons text).
ARM_CORE_SYSTEMS = {
    "Neoverse N1": "AWS Graviton2, Ampere Altra",
    "Neoverse V1": "AWS Graviton3",
    "Neoverse V2": "NVIDIA Grace, AWS Graviton4",
    "Neoverse N2": "Microsoft Cobalt 100",
    "Cortex-X925": "NVIDIA GB10 / DGX Spark",
    "Cortex-A72": "Raspberry Pi 4, AWS Graviton1",
    "Cortex-A53": "Raspberry Pi 3",
}
ARM_IMPLEMENTERS = {"0x41": "ARM", "0x4e": "Nvidia", "0x61": "Apple", "0xc0": "Ampere", "0x48": "HiSilicon"}

# archspec target name -> how people call it.
MICROARCH_LABELS = {
    "sandybridge": "Intel Sandy Bridge",
    "ivybridge": "Intel Ivy Bridge",
    "haswell": "Intel Haswell",
    "broadwell": "Intel Broadwell",
    "skylake": "Intel Skylake",
    "skylake_avx512": "Intel Skylake-SP (AVX-512)",
    "cannonlake": "Intel Cannon Lake",
    "cascadelake": "Intel Cascade Lake",
    "icelake": "Intel Ice Lake",
    "sapphirerapids": "Intel Sapphire Rapids",
    "alderlake": "Intel Alder Lake",
    "arrowlake": "Intel Arrow Lake",
    "arrowlake_s": "Intel Arrow Lake",
    "bulldozer": "AMD Bulldozer",
    "piledriver": "AMD Piledriver",
    "steamroller": "AMD Steamroller",
    "excavator": "AMD Excavator",
    "zen": "AMD Zen",
    "zen2": "AMD Zen 2",
    "zen3": "AMD Zen 3",
    "zen4": "AMD Zen 4",
    "zen5": "AMD Zen 5",
    "zen6": "AMD Zen 6",
    "neoverse_n1": "Neoverse N1 (AWS Graviton2)",
    "neoverse_v1": "Neoverse V1 (AWS Graviton3)",
    "neoverse_v2": "Neoverse V2 (NVIDIA Grace, AWS Graviton4)",
    "neoverse_n2": "Neoverse N2",
    "neoverse_v3ae": "Neoverse V3AE",
    "cortex_a72": "Cortex-A72",
    "a64fx": "Fujitsu A64FX",
    "thunderx2": "Cavium ThunderX2",
    "ampere1": "AmpereOne",
    "m1": "Apple M1",
    "m2": "Apple M2",
    "m3": "Apple M3",
    "m4": "Apple M4",
}
# Linux spells some features differently from archspec's tables.
_FEATURE_ALIASES = {"pni": "sse3"}
# Features hypervisors commonly hide; not needed to name the microarchitecture.
_NAMING_OPTIONAL = {"waitpkg"}

# Features that exist only on one architecture: a flag list mixing them is contradictory.
X86_ONLY_FEATURES = frozenset(
    "sse sse2 ssse3 sse4_1 sse4_2 avx avx2 fma f16c avx512f avx512dq avx512vl avx512bw "
    "avx512_bf16 avx512_vnni pni mmx cx16".split()
)
ARM_ONLY_FEATURES = frozenset("asimd fphp asimdhp asimddp sve sve2 evtstrm asimdrdm".split())


def infer_arch(features) -> str:
    features = set(features)
    if features & X86_ONLY_FEATURES and not features & ARM_ONLY_FEATURES:
        return "x86_64"
    if features & ARM_ONLY_FEATURES and not features & X86_ONLY_FEATURES:
        return "aarch64"
    return ""


@dataclass
class GpuFacts:
    name: str = ""
    compute_capability: str = ""
    memory_mib: int | None = None
    driver_version: str = ""
    architecture_family: str = ""  # "Hopper" from nvidia-smi -q "Product Architecture"

    def to_dict(self):
        return {k: v for k, v in self.__dict__.items() if v not in ("", None)}


@dataclass
class Facts:
    """What one or several tool outputs say about a machine. Empty fields mean 'not said'."""

    sources: list = field(default_factory=list)  # tool names, e.g. ["nvidia-smi", "lscpu"]
    os: str = ""  # linux | darwin
    arch: str = ""  # x86_64 | aarch64 (or the raw machine name when it is neither)
    distro: str = ""
    cpu_vendor: str = ""  # GenuineIntel, AuthenticAMD, ARM, Apple ...
    cpu_model: str = ""  # "Intel(R) Xeon(R) Processor", "Neoverse-N1", "Apple M3 Pro"
    cpu_parts: list = field(default_factory=list)  # ARM CPU part ids, e.g. ["0xd0c"]
    cpu_features: set = field(default_factory=set)
    gpus: list = field(default_factory=list)  # [GpuFacts]
    driver_version: str = ""
    cuda_version: str = ""  # newest CUDA the driver supports (nvidia-smi header)
    errors: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def arm_cores(self) -> list[str]:
        return [ARM_PARTS.get(p, p) for p in self.cpu_parts]

    def microarchitecture(self) -> tuple[str, str]:
        """(archspec target name, human label), or ("", "") when unknown."""
        return name_microarchitecture(
            self.cpu_features, self.cpu_vendor, self.arch, self.cpu_parts, self.cpu_model
        )

    def to_dict(self) -> dict:
        target, label = self.microarchitecture()
        return {
            "sources": list(self.sources),
            "os": self.os,
            "arch": self.arch,
            "distro": self.distro,
            "cpu_vendor": self.cpu_vendor,
            "cpu_model": self.cpu_model,
            "cpu_cores": self.arm_cores,
            "microarchitecture": target,
            "microarchitecture_label": label,
            "cpu_features": sorted(self.cpu_features),
            "gpus": [g.to_dict() for g in self.gpus],
            "driver_version": self.driver_version,
            "cuda_version": self.cuda_version,
            "errors": list(self.errors),
            "notes": list(self.notes),
        }

    def answers(self) -> dict:
        """The detected facts as answers for `recommend()` (only what was detected)."""
        out: dict = {}
        if self.os:
            out["os"] = self.os
        if self.arch in ("x86_64", "aarch64"):
            out["arch"] = self.arch
        if self.cpu_features:
            out["cpu_flags"] = sorted(self.cpu_features)
        for key in ("cpu_vendor", "cpu_model"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.cpu_parts:
            out["cpu_parts"] = list(self.cpu_parts)
        if self.gpus:
            out["has_gpu"] = "yes"
            out["gpus"] = [
                {"name": g.name, "compute_capability": g.compute_capability} for g in self.gpus
            ]
        elif "nvidia-smi" in self.sources and not self.gpus:
            out["has_gpu"] = "no"
        if self.driver_version:
            out["driver_version"] = self.driver_version
        if self.cuda_version:
            out["driver_cuda"] = self.cuda_version
        return out


# ---------------------------------------------------------------------------------------------
# Individual parsers. Each returns (Facts, set of line numbers it recognised).
# ---------------------------------------------------------------------------------------------

_SMI_HEADER = re.compile(
    r"NVIDIA-SMI\s+(?P<smi>[\d.]+)\s+Driver Version:\s*(?P<driver>[\d.]+)"
    r"(?:\s+CUDA Version:\s*(?P<cuda>[\d.]+|N/A))?"
)
_SMI_GPU_ROW = re.compile(
    r"^\|\s*(?P<idx>\d+)\s+(?P<name>.+?)\s+(?:On|Off|WDDM|TCC)\s*\|\s*"
    r"(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])"
)
_SMI_MEM = re.compile(r"(\d+)MiB\s*/\s*(\d+)MiB")
_SMI_FRAME = re.compile(r"^[|+][-=+|\s]*$|^\|.*\|\s*$|^\+[-=+]+\+\s*$")
_SMI_DATE = re.compile(r"^\w{3} \w{3}\s+\d+ \d\d:\d\d:\d\d \d{4}\s*$")


def parse_nvidia_smi(text: str) -> Facts:
    return _nvidia_smi(_lines(text))[0]


def _nvidia_smi(lines):
    facts, used = Facts(), set()
    header_seen = False
    last_gpu = None
    for i, line in enumerate(lines):
        if "NVIDIA-SMI has failed" in line or "couldn't communicate with the NVIDIA driver" in line:
            used.add(i)
            if "nvidia-smi" not in facts.sources:
                facts.sources.append("nvidia-smi")
                facts.notes.append(
                    "nvidia-smi could not talk to the NVIDIA driver: the driver is missing or not "
                    "loaded, so no GPU could be detected."
                )
            continue
        m = _SMI_HEADER.search(line)
        if m:
            header_seen = True
            used.add(i)
            if i and lines[i - 1].strip().startswith("+"):
                used.add(i - 1)
            facts.driver_version = m["driver"]
            if m["cuda"] and m["cuda"] != "N/A":
                facts.cuda_version = m["cuda"]
            continue
        if not header_seen:
            if _SMI_DATE.match(line.strip()):
                used.add(i)
            continue
        m = _SMI_GPU_ROW.match(line.strip())
        if m:
            used.add(i)
            name = m["name"].strip()
            last_gpu = GpuFacts(name=name, driver_version=facts.driver_version)
            facts.gpus.append(last_gpu)
            continue
        if last_gpu is not None and last_gpu.memory_mib is None:
            mem = _SMI_MEM.search(line)
            if mem:
                last_gpu.memory_mib = int(mem.group(2))
        stripped = line.strip()
        if stripped.startswith(("|", "+")) or "No running processes found" in line:
            used.add(i)
    if header_seen:
        if "nvidia-smi" not in facts.sources:
            facts.sources.append("nvidia-smi")
        facts.os = "linux" if facts.os == "" else facts.os
        if not facts.gpus:
            facts.notes.append("nvidia-smi ran but listed no GPU.")
    return facts, used


_Q_FIELD = re.compile(r"^\s*(?P<key>[A-Za-z][A-Za-z0-9 ./()-]*?)\s*:\s*(?P<value>.*?)\s*$")
_Q_GPU = re.compile(r"^GPU\s+[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]\s*$")


def parse_nvidia_smi_q(text: str) -> Facts:
    return _nvidia_smi_q(_lines(text))[0]


def _nvidia_smi_q(lines):
    facts, used = Facts(), set()
    in_log = False
    current = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        if "NVSMI LOG" in stripped:
            in_log = True
            used.add(i)
            continue
        if not in_log:
            continue
        if not stripped:
            continue
        if _Q_GPU.match(stripped):
            current = GpuFacts(driver_version=facts.driver_version)
            facts.gpus.append(current)
            used.add(i)
            continue
        m = _Q_FIELD.match(line)
        if not m:
            if stripped.startswith("=") or stripped.startswith("Timestamp"):
                used.add(i)
            continue
        used.add(i)
        key, value = m["key"].strip(), m["value"].strip()
        if key == "Driver Version":
            facts.driver_version = value
            for gpu in facts.gpus:
                gpu.driver_version = gpu.driver_version or value
        elif key == "CUDA Version" and value not in ("", "N/A"):
            facts.cuda_version = value
        elif current is not None and key == "Product Name":
            current.name = value
        elif current is not None and key == "Product Architecture":
            current.architecture_family = value
        elif current is not None and key in ("Compute Capability", "CUDA Compute Capability"):
            if gpu_names.is_compute_capability(value):
                current.compute_capability = value
        elif current is not None and key == "Total" and current.memory_mib is None:
            mem = re.match(r"(\d+)\s*MiB", value)
            if mem:
                current.memory_mib = int(mem.group(1))
    if in_log:
        facts.sources.append("nvidia-smi -q")
        facts.os = "linux"
        for gpu in facts.gpus:
            gpu.driver_version = gpu.driver_version or facts.driver_version
        facts.gpus = [g for g in facts.gpus if g.name]
    return facts, used


_CSV_HEADER = re.compile(r"^\s*(name|compute_cap|driver_version|gpu_name)\s*(,|$)")
_DRIVER_RE = re.compile(r"^\d{3}(\.\d{1,3}){1,2}$")
_MIB_RE = re.compile(r"^(\d+)\s*MiB$")
_GPU_WORDS = re.compile(
    r"^(NVIDIA|Tesla|Quadro|GeForce|TITAN|Jetson|RTX|GTX|[ABHLTVP]\d{1,3}[A-Z]?\b|G[BH]\d{2,3})",
    re.IGNORECASE,
)


def parse_nvidia_smi_csv(text: str) -> Facts:
    return _nvidia_smi_csv(_lines(text), set())[0]


def _classify_csv_field(value: str) -> str:
    value = value.strip()
    if gpu_names.is_compute_capability(value):
        return "compute_cap"
    if _DRIVER_RE.match(value):
        return "driver_version"
    if _MIB_RE.match(value) or (value.isdigit() and len(value) >= 3):
        return "memory.total"
    if value and re.search(r"[A-Za-z]", value):
        return "name"
    return ""


def _nvidia_smi_csv(lines, taken):
    """Rows are grouped in blocks (a header, or a run of rows after other text starts one): the
    same GPUs queried twice (with and without header) are merged, not counted twice."""
    facts, used = Facts(), set()
    header = None
    loose_names, loose_ccs = [], []
    blocks: list[list[GpuFacts]] = []
    last_row = -2
    for i, line in enumerate(lines):
        if i in taken:
            continue
        stripped = line.strip()
        if not stripped:
            continue
        if _CSV_HEADER.match(stripped):
            header = [h.strip().split(" [")[0].strip() for h in stripped.split(",")]
            header = ["name" if h == "gpu_name" else h for h in header]
            used.add(i)
            blocks.append([])
            last_row = i
            continue
        parts = [p.strip() for p in stripped.split(",")]
        if header and len(parts) == len(header):
            row = dict(zip(header, parts))
            if "name" in row and not _GPU_WORDS.match(row["name"]):
                continue
            if "compute_cap" in row and not gpu_names.is_compute_capability(row["compute_cap"]):
                if row["compute_cap"] not in ("[N/A]", "N/A", "[Not Supported]"):
                    continue
        elif len(parts) >= 2:
            kinds = [_classify_csv_field(p) for p in parts]
            if "" in kinds or kinds.count("name") != 1 or kinds[0] != "name":
                continue
            if not _GPU_WORDS.match(parts[0]):
                continue
            if len(set(kinds)) != len(kinds):
                continue
            row = dict(zip(kinds, parts))
        else:
            # One value a line: `--query-gpu=name` or `--query-gpu=compute_cap`, noheader.
            if gpu_names.is_compute_capability(stripped):
                loose_ccs.append(stripped)
                used.add(i)
            elif _GPU_WORDS.match(stripped) and gpu_names.resolve_gpu_name(stripped) is not None:
                loose_names.append(stripped)
                used.add(i)
            continue
        used.add(i)
        if not blocks or last_row != i - 1:
            blocks.append([])
        last_row = i
        gpu = GpuFacts(name=row.get("name", ""))
        if gpu_names.is_compute_capability(row.get("compute_cap", "")):
            gpu.compute_capability = row["compute_cap"]
        if row.get("driver_version"):
            gpu.driver_version = row["driver_version"]
            facts.driver_version = row["driver_version"]
        mem = _MIB_RE.match(row.get("memory.total", "") or "")
        if mem:
            gpu.memory_mib = int(mem.group(1))
        elif (row.get("memory.total") or "").isdigit():
            gpu.memory_mib = int(row["memory.total"])
        blocks[-1].append(gpu)
    if loose_names:
        ccs = loose_ccs if len(loose_ccs) == len(loose_names) else [""] * len(loose_names)
        if loose_ccs and len(loose_ccs) != len(loose_names):
            facts.notes.append(
                f"{len(loose_names)} GPU name(s) but {len(loose_ccs)} compute capabilities were "
                "pasted; they are not paired."
            )
        for name, cc in zip(loose_names, ccs):
            facts.gpus.append(GpuFacts(name=name, compute_capability=cc))
    else:
        for cc in loose_ccs:
            facts.gpus.append(GpuFacts(compute_capability=cc))
    for block in blocks:
        _merge_gpus(facts, block)
    if used:
        facts.sources.append("nvidia-smi --query-gpu")
        facts.os = "linux"
    return facts, used


_LSCPU = re.compile(r"^(?P<key>[A-Z][A-Za-z0-9 ()/-]*?):\s+(?P<value>.*?)\s*$")
_LSCPU_KEYS = {
    "Architecture", "CPU op-mode(s)", "Byte Order", "CPU(s)", "On-line CPU(s) list", "Vendor ID",
    "Model name", "CPU family", "Model", "Thread(s) per core", "Core(s) per socket",
    "Core(s) per cluster", "Socket(s)", "Cluster(s)", "Stepping", "BogoMIPS", "Flags",
    "Address sizes", "CPU max MHz", "CPU min MHz", "Hypervisor vendor", "Virtualization type",
    "Virtualization", "NUMA node(s)", "L1d cache", "L1i cache", "L2 cache", "L3 cache",
    "Frequency boost", "CPU(s) scaling MHz", "Caches (sum of all)", "NUMA", "Vulnerabilities",
}


def parse_lscpu(text: str) -> Facts:
    return _lscpu(_lines(text))[0]


def _lscpu(lines):
    facts, used = Facts(), set()
    seen_arch = False
    flags: set[str] = set()
    for i, line in enumerate(lines):
        m = _LSCPU.match(line.strip()) if not line.startswith(("\t",)) else None
        if not m:
            continue
        key, value = m["key"].strip(), m["value"]
        if key == "Architecture":
            seen_arch = True
            arch = MACHINES.get(value, value)
            if facts.arch and arch != facts.arch:
                facts.errors.append(
                    f"The pasted outputs disagree: one lscpu says {facts.arch}, another {arch}. "
                    "Paste outputs from one machine."
                )
            facts.arch = facts.arch or arch
        elif not (key in _LSCPU_KEYS or key.startswith(("Vulnerability", "NUMA node", "L1", "L2", "L3"))):
            continue
        used.add(i)
        if key == "Vendor ID" and not facts.cpu_vendor:
            facts.cpu_vendor = value
        elif key == "Model name":
            # Hybrid CPUs (e.g. GB10) list one section per core type.
            facts.cpu_model = f"{facts.cpu_model} + {value}" if facts.cpu_model else value
        elif key == "Flags":
            flags.update(value.lower().split())
    if not seen_arch:
        return Facts(), set()
    facts.cpu_features = flags
    facts.sources.append("lscpu")
    facts.os = "linux"
    return facts, used


_CPUINFO = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9 _()]*?)\s*:\s?(?P<value>.*?)\s*$")
_CPUINFO_MARKERS = ("processor", "vendor_id", "flags", "Features", "CPU implementer", "CPU part")


def parse_cpuinfo(text: str) -> Facts:
    return _cpuinfo(_lines(text))[0]


def _cpuinfo(lines):
    facts, used = Facts(), set()
    flags: set[str] = set()
    saw_processor = saw_features = False
    implementer = ""
    for i, line in enumerate(lines):
        if "\t" not in line and not line.startswith(
            ("processor", "Processor", "BogoMIPS", "Hardware", "Revision", "Serial", "Model", "power management")
        ):
            continue
        m = _CPUINFO.match(line)
        if not m:
            continue
        key, value = m["key"].strip(), m["value"]
        if key == "processor":
            saw_processor = True
        elif key in ("flags", "Features"):
            saw_features = True
            if not flags:
                flags.update(value.lower().split())
            else:
                # A CPU's usable set is what every core has.
                flags &= set(value.lower().split())
        elif key == "vendor_id":
            facts.cpu_vendor = facts.cpu_vendor or value
        elif key == "model name":
            facts.cpu_model = facts.cpu_model or value
        elif key == "CPU implementer":
            implementer = implementer or value.lower()
        elif key == "CPU part":
            part = value.lower()
            if part not in facts.cpu_parts:
                facts.cpu_parts.append(part)
        elif key == "Model":
            facts.cpu_model = facts.cpu_model or value  # Raspberry Pi: "Model : Raspberry Pi 4"
        elif key not in (
            "cpu family", "model", "stepping", "microcode", "cpu MHz", "cache size", "physical id",
            "siblings", "core id", "cpu cores", "apicid", "initial apicid", "fpu", "fpu_exception",
            "cpuid level", "wp", "bugs", "bogomips", "BogoMIPS", "clflush size", "cache_alignment",
            "address sizes", "power management", "CPU architecture", "CPU variant", "CPU revision",
            "Hardware", "Revision", "Serial", "TLB size", "vmx flags",
        ):
            continue
        used.add(i)
    if not (saw_processor and (saw_features or facts.cpu_vendor or facts.cpu_parts)):
        return Facts(), set()
    facts.cpu_features = flags
    if facts.cpu_parts or implementer:
        facts.arch = "aarch64"
        facts.cpu_vendor = facts.cpu_vendor or ARM_IMPLEMENTERS.get(implementer, implementer)
        if not facts.cpu_model and facts.cpu_parts:
            facts.cpu_model = " + ".join(ARM_PARTS.get(p, p) for p in facts.cpu_parts)
    elif facts.cpu_vendor in ("GenuineIntel", "AuthenticAMD", "HygonGenuine", "CentaurHauls") or (
        flags & {"sse2", "lm"}
    ):
        facts.arch = "x86_64" if "lm" in flags or not flags else "i686"
    facts.sources.append("/proc/cpuinfo")
    facts.os = "linux"
    return facts, used


_UNAME_A = re.compile(r"^(?P<os>Linux|Darwin)\s+\S+\s+\S+.*$")


def parse_uname(text: str) -> Facts:
    return _uname(_lines(text))[0]


def _uname(lines):
    facts, used = Facts(), set()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped in MACHINES or stripped in OTHER_MACHINES:
            facts.arch = MACHINES.get(stripped, stripped)
            used.add(i)
            continue
        if stripped in ("Linux", "Darwin"):
            facts.os = stripped.lower()
            used.add(i)
            continue
        m = _UNAME_A.match(stripped)
        if m:
            tokens = stripped.split()
            machines = [t for t in tokens if t in MACHINES or t in OTHER_MACHINES]
            if not machines:
                continue
            facts.os = m["os"].lower()
            facts.arch = MACHINES.get(machines[-1], machines[-1])
            used.add(i)
    if used:
        facts.sources.append("uname")
    return facts, used


_SYSCTL = re.compile(r"^(?P<key>(machdep\.cpu|hw\.optional|hw\.cputype|hw\.machine|hw\.model)[\w.]*)\s*[:=]\s*(?P<value>.*?)\s*$")
# macOS spells some CPU features differently from Linux (archspec's conversion table).
_DARWIN_FLAGS = {
    "sse4.1": "sse4_1",
    "sse4.2": "sse4_2",
    "avx1.0": "avx",
    "lahf": "lahf_lm",
    "sha": "sha_ni",
    "popcnt lzcnt": "abm",
    "clfsopt": "clflushopt",
    "xsave": "xsavec xsaveopt",
}


def parse_sysctl(text: str) -> Facts:
    return _sysctl(_lines(text))[0]


def _sysctl(lines):
    facts, used = Facts(), set()
    data: dict[str, str] = {}
    for i, line in enumerate(lines):
        m = _SYSCTL.match(line.strip())
        if m:
            data[m["key"]] = m["value"]
            used.add(i)
    if not used:
        return facts, used
    facts.sources.append("sysctl")
    facts.os = "darwin"
    brand = data.get("machdep.cpu.brand_string", "")
    facts.cpu_model = brand
    raw = " ".join(
        data.get(k, "")
        for k in ("machdep.cpu.features", "machdep.cpu.leaf7_features", "machdep.cpu.extfeatures")
    ).lower().split()
    features = set(raw)
    for darwin, linux in _DARWIN_FLAGS.items():
        if all(f in features for f in darwin.split()):
            features.update(linux.split())
    facts.cpu_features = features
    if "Apple" in brand or data.get("hw.optional.arm64", "").strip() == "1":
        facts.arch = "aarch64"
        facts.cpu_vendor = "Apple"
    elif brand or data.get("machdep.cpu.vendor"):
        facts.arch = "x86_64"
        facts.cpu_vendor = data.get("machdep.cpu.vendor", "") or (
            "GenuineIntel" if "Intel" in brand else ""
        )
    return facts, used


_OS_RELEASE = re.compile(r'^(NAME|PRETTY_NAME|ID|ID_LIKE|VERSION|VERSION_ID|VERSION_CODENAME|UBUNTU_CODENAME|HOME_URL|SUPPORT_URL|BUG_REPORT_URL|PRIVACY_POLICY_URL|LOGO|ANSI_COLOR|CPE_NAME|BUILD_ID|VARIANT|VARIANT_ID|PLATFORM_ID|DOCUMENTATION_URL)=(?P<value>.*)$')


def _os_release(lines):
    facts, used = Facts(), set()
    for i, line in enumerate(lines):
        m = _OS_RELEASE.match(line.strip())
        if m:
            used.add(i)
            if line.startswith("PRETTY_NAME="):
                facts.distro = m["value"].strip().strip('"')
    if used:
        facts.sources.append("os-release")
        facts.os = "linux"
    return facts, used


# ---------------------------------------------------------------------------------------------
# The dispatcher.
# ---------------------------------------------------------------------------------------------

_PARSERS = (
    ("nvidia-smi", _nvidia_smi),
    ("nvidia-smi -q", _nvidia_smi_q),
    ("lscpu", _lscpu),
    ("/proc/cpuinfo", _cpuinfo),
    ("sysctl", _sysctl),
    ("uname", _uname),
    ("os-release", _os_release),
)
TOOLS_SENTENCE = (
    "nvidia-smi (plain, -q, or --query-gpu=name,compute_cap,driver_version --format=csv), "
    "lscpu, cat /proc/cpuinfo, uname -a / uname -m, or on macOS sysctl -a | grep machdep.cpu"
)


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _lines(text: str) -> list[str]:
    return (text or "").replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _reject(message: str) -> Facts:
    facts = Facts()
    facts.errors.append(message)
    return facts


def detect(data) -> Facts:
    """Recognise and parse pasted tool output (str or bytes). Never raises."""
    try:
        return _detect(data)
    except Exception as exc:  # a parser bug must not take the page down
        return _reject(f"The pasted text could not be read ({type(exc).__name__}: {exc}).")


def _detect(data) -> Facts:
    if data is None:
        return _reject("Nothing was pasted: paste the output of " + TOOLS_SENTENCE + ".")
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        if len(raw) > MAX_BYTES:
            return _reject(
                f"The pasted text is {len(raw):,} bytes; the limit is {MAX_BYTES:,} bytes (256 KB). "
                "Paste only the tool output, e.g. lscpu rather than a whole log."
            )
        if b"\x00" in raw:
            return _reject("The pasted data is binary (it contains NUL bytes), not a tool's text output.")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return _reject("The pasted data is not UTF-8 text; paste the tool's text output.")
    elif isinstance(data, str):
        text = data
        size = len(text.encode("utf-8", errors="replace"))
        if size > MAX_BYTES:
            return _reject(
                f"The pasted text is {size:,} bytes; the limit is {MAX_BYTES:,} bytes (256 KB). "
                "Paste only the tool output, e.g. lscpu rather than a whole log."
            )
        if "\x00" in text:
            return _reject("The pasted data is binary (it contains NUL bytes), not a tool's text output.")
    else:
        return _reject(f"Expected text, got {type(data).__name__}.")
    if not text.strip():
        return _reject("Nothing was pasted: paste the output of " + TOOLS_SENTENCE + ".")
    text = _ANSI.sub("", text)
    controls = sum(1 for c in text if ord(c) < 32 and c not in "\n\r\t\f")
    if controls > max(2, len(text) // 100):
        return _reject("The pasted data is full of control characters; it looks binary, not like a tool's text output.")

    lines = _lines(text)
    merged = Facts()
    taken: set[int] = set()
    for name, parser in _PARSERS:
        facts, used = parser(lines)
        if not facts.sources:
            continue
        taken |= used
        _merge(merged, facts)
    csv_facts, used = _nvidia_smi_csv(lines, taken)
    if csv_facts.sources:
        taken |= used
        _merge(merged, csv_facts)
    if not merged.sources:
        return _reject(
            "This does not look like output of any supported tool; paste the output of "
            + TOOLS_SENTENCE + "."
        )
    unrecognised = [l for i, l in enumerate(lines) if i not in taken and l.strip()]
    if unrecognised:
        merged.notes.append(f"{len(unrecognised)} line(s) were not recognised and were ignored.")
    _check_consistency(merged)
    return merged


def _merge(into: Facts, new: Facts):
    for source in new.sources:
        if source not in into.sources:
            into.sources.append(source)
    for key in ("os", "arch"):
        old, value = getattr(into, key), getattr(new, key)
        if value and old and value != old:
            into.errors.append(
                f"The pasted outputs disagree: one says {key} is {old}, {new.sources[0]} says {value}. "
                "Paste outputs from one machine."
            )
        elif value and not old:
            setattr(into, key, value)
    for key in ("distro", "cpu_vendor", "cpu_model", "driver_version", "cuda_version"):
        if getattr(new, key) and not getattr(into, key):
            setattr(into, key, getattr(new, key))
    for part in new.cpu_parts:
        if part not in into.cpu_parts:
            into.cpu_parts.append(part)
    if new.cpu_features:
        # Tools can disagree on spelling but not on content; keep the union.
        into.cpu_features |= set(new.cpu_features)
    _merge_gpus(into, new.gpus)
    into.errors.extend(new.errors)
    into.notes.extend(new.notes)


def _merge_gpus(into: Facts, gpus: list):
    """The same GPUs listed by two tools (table + csv) are merged by position and name."""
    if not gpus:
        return
    if not into.gpus:
        into.gpus = list(gpus)
        return
    if len(into.gpus) == len(gpus):
        for old, new in zip(into.gpus, gpus):
            same = (
                not old.name
                or not new.name
                or gpu_names.normalise_gpu_name(old.name).startswith(gpu_names.normalise_gpu_name(new.name))
                or gpu_names.normalise_gpu_name(new.name).startswith(gpu_names.normalise_gpu_name(old.name))
            )
            if not same:
                into.gpus.extend(gpus)
                return
        for old, new in zip(into.gpus, gpus):
            if len(new.name) > len(old.name):
                old.name = new.name
            for key in ("compute_capability", "memory_mib", "driver_version", "architecture_family"):
                if getattr(new, key) and not getattr(old, key):
                    setattr(old, key, getattr(new, key))
        return
    into.gpus.extend(gpus)


def _check_consistency(facts: Facts):
    if facts.os == "darwin" and facts.gpus:
        facts.errors.append(
            "The pasted outputs mix macOS (sysctl/uname Darwin) with nvidia-smi output; "
            "macOS has no NVIDIA CUDA support. Paste outputs from one machine."
        )
    arch = infer_arch(facts.cpu_features)
    if facts.arch in ("x86_64", "aarch64") and arch and arch != facts.arch:
        facts.errors.append(
            f"The CPU features are those of an {arch} CPU, but the machine is {facts.arch}. "
            "Paste outputs from one machine."
        )
    if not facts.arch and arch:
        facts.arch = arch


# ---------------------------------------------------------------------------------------------
# Naming the CPU microarchitecture (archspec).
# ---------------------------------------------------------------------------------------------

def name_microarchitecture(features, vendor="", arch="", cpu_parts=(), cpu_model="") -> tuple[str, str]:
    """The most specific archspec target the features support, as (name, label).

    x86: targets of the CPU's vendor (or generic) whose features are all present; the deepest
    wins. ARM: a target with the CPU's `CPU part` id wins; otherwise the same subset rule.
    Apple: the brand string names the chip ("Apple M3 Pro" -> m3).
    """
    try:
        import archspec.cpu
    except Exception:  # archspec missing: no name, no failure
        return "", ""
    targets = archspec.cpu.TARGETS
    have = {_FEATURE_ALIASES.get(f, f) for f in (str(x).lower() for x in features)}
    have |= _NAMING_OPTIONAL
    if vendor == "Apple" or (cpu_model or "").startswith("Apple"):
        m = re.search(r"apple\s+m(\d+)", (cpu_model or "").lower())
        if m:
            for n in range(int(m.group(1)), 0, -1):
                if f"m{n}" in targets:
                    return f"m{n}", (cpu_model or MICROARCH_LABELS.get(f"m{n}", f"Apple M{n}")).strip()
        return "", cpu_model or ""
    if arch == "aarch64" or (not arch and infer_arch(have) == "aarch64"):
        parts = [p.lower() for p in cpu_parts]
        if not parts and cpu_model:
            by_name = {n.replace("-", " ").lower(): p for p, n in ARM_PARTS.items()}
            for model in cpu_model.split(" + "):
                part = by_name.get(model.replace("-", " ").strip().lower())
                if part:
                    parts.append(part)
        by_part = [t for t in targets.values() if t.cpu_part and t.cpu_part.lower() in parts]
        if by_part:
            best = max(by_part, key=lambda t: (len(t.ancestors), len(t.features)))
            return best.name, MICROARCH_LABELS.get(best.name, best.name)
        if parts:
            cores = [ARM_PARTS.get(p, p) for p in parts]
            label = " + ".join(cores)
            systems = [ARM_CORE_SYSTEMS[c] for c in cores if c in ARM_CORE_SYSTEMS]
            return "", f"{label} ({systems[0]})" if systems else label
        model = (cpu_model or "").replace("-", " ").lower()
        for name, label in MICROARCH_LABELS.items():
            if name in targets and targets[name].family.name == "aarch64":
                if label.split(" (")[0].lower() == model:
                    return name, label
        vendor_name = ARM_IMPLEMENTERS.get(str(vendor).lower(), vendor)
        cands = [
            t for t in targets.values()
            if t.family.name == "aarch64" and t.vendor in (vendor_name, "generic")
            and t.features and t.features.issubset(have)
        ]
    else:
        cands = [
            t for t in targets.values()
            if t.family.name == "x86_64" and (not vendor or t.vendor in (vendor, "generic"))
            and t.features.issubset(have)
        ]
    if not cands:
        return "", ""
    specific = [t for t in cands if t.vendor != "generic"]
    best = max(specific or cands, key=lambda t: (len(t.ancestors), len(t.features)))
    if best.vendor == "generic" and best.name in ("x86_64", "aarch64"):
        return "", ""
    if best.vendor == "generic":
        return best.name, best.name.replace("_", "-") + " (generic)"
    return best.name, MICROARCH_LABELS.get(best.name, best.name.replace("_", " "))
