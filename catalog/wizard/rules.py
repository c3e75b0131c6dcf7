"""The decision rules of "which variant?", as data the engine (catalog.wizard.engine) reads.

The questions themselves are catalog.wizard.steps; these tables say what the answers mean:
which ISA a workload prefers, how branches are ordered, which repositories build a library,
which CUDA a driver runs, and what to say about CPUs whose guides and flags disagree. Change a
rule by changing a table here, not the engine's control flow.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.vocabulary import LIBRARIES, PYTORCH_REPOSITORY, REPOSITORIES

# CPU ISA preference per workload and architecture: the first ISA the CPU can run (every feature
# its compiler flags need) and the branch builds wins. ISAs not listed come after, newest first.
ISA_PREFERENCE = {
    "general": {"x86_64": ("avx512", "avx2", "avx"), "aarch64": ("armv9", "armv8_2")},
    "bf16-training": {
        "x86_64": ("avx512bf16", "avx512", "avx2", "avx"),
        "aarch64": ("armv9", "armv8_2"),
    },
    "int8-inference": {
        "x86_64": ("avx512vnni", "avx512", "avx2", "avx"),
        "aarch64": ("armv9", "armv8_2"),
    },
}
WORKLOAD_SHORT = {
    "general": "general workloads",
    "bf16-training": "BF16 training",
    "int8-inference": "INT8 inference",
}
# Specialised ISAs: offered as alternatives, with why, when the CPU runs them but they were not
# chosen.
SPECIALISED_ISAS = {
    "avx512bf16": "for BF16 mixed-precision training on the CPU (the CPU has avx512_bf16)",
    "avx512vnni": "for INT8 quantized inference / serving INT8 models (the CPU has avx512_vnni)",
}

# Which repositories build a library, in the order the engine prefers them when both fit: a
# build-pytorch companion matches a build-pytorch PyTorch exactly, so that repository comes first.
LIBRARY_REPOSITORIES = {
    library: tuple(
        sorted(
            (name for name, repo in REPOSITORIES.items() if library in repo.libraries),
            key=lambda name: name != PYTORCH_REPOSITORY,
        )
    )
    for library in LIBRARIES
}
DEFAULT_LIBRARY = "pytorch"


@dataclass(frozen=True)
class Constraint:
    """An answer that narrows the builds to those whose branch's (or variant's) attribute matches:
    "exact" equal strings; "prefix" a version prefix ("2.9" matches "2.9.1")."""

    field: str  # the answer field (a Step record's Field)
    on: str  # "branch" | "variant": whose attribute
    attribute: str
    how: str  # "exact" | "prefix"
    label: str  # how a sentence names it: "PyTorch 2.9"


# A new constraint question is a Step record (catalog.wizard.steps) and a row here.
CONSTRAINTS: tuple[Constraint, ...] = (
    Constraint("repository", "branch", "repository", "exact", "repository"),
    Constraint("branch", "branch", "name", "exact", "branch"),
    Constraint("python", "branch", "python_version", "exact", "Python"),
    Constraint("pytorch", "branch", "pytorch_version", "prefix", "PyTorch"),
    Constraint("vllm", "branch", "vllm_version", "prefix", "vLLM"),
)


def constraint(field: str) -> Constraint | None:
    return next((c for c in CONSTRAINTS if c.field == field), None)


# How the engine orders the branches that can serve the machine: the first criterion decides,
# the next breaks ties. Each is read from branch data, so branches imported later take their place
# by their own `is_default` and `preference` (engine.BRANCH_KEYS computes each criterion).
BRANCH_ORDER = (
    "best_isa",  # the branch that builds the best ISA for the workload the CPU can run
    "default",  # the repository's default branch
    "repository",  # LIBRARY_REPOSITORIES order
    "preference",  # lower Branch.preference
    "name",
)

# Newest CUDA a driver supports natively (Linux, driver major -> CUDA major.minor), for picking
# between a branch's CUDA versions when nvidia-smi's "CUDA Version" is not known.
DRIVER_CUDA = (
    (580, "13.0"),
    (575, "12.9"),
    (570, "12.8"),
    (560, "12.6"),
    (555, "12.5"),
    (550, "12.4"),
    (545, "12.3"),
    (535, "12.2"),
    (530, "12.1"),
    (525, "12.0"),
    (520, "11.8"),
    (515, "11.7"),
    (510, "11.6"),
    (495, "11.5"),
    (470, "11.4"),
    (465, "11.3"),
    (460, "11.2"),
    (455, "11.1"),
    (450, "11.0"),
    (440, "10.2"),
    (418, "10.1"),
)

# Caveats for CPUs whose prose description and flags disagree (archspec target -> sentence).
CPU_CAVEATS = {
    "alderlake": "Alder Lake and later Intel desktop CPUs (e.g. Core i9-12900K) ship with "
    "AVX-512 disabled, although some guides list them as AVX-512 CPUs.",
    "raptorlake": "Raptor Lake desktop CPUs ship with AVX-512 disabled.",
    "neoverse_v1": "Neoverse V1 (AWS Graviton3) implements SVE but not SVE2 (it is ARMv8.4-A + "
    "SVE), although some guides list Graviton3 as ARMv9.",
}

# When no GPU was given at all: the CPU-only build, with this warning (web, API and CLI alike).
NO_GPU_INFORMATION = (
    "No GPU information was given (no GPU answer and no nvidia-smi output), so this is the "
    "CPU-only build; for a GPU build, give the output of nvidia-smi (or the GPU's name or compute "
    "capability)."
)
# Limits that keep one request's work and answer small.
MAX_GPUS = 64  # GPUs in one request, counting identical ones
MAX_GPU_MODELS = 8  # distinct GPU models (one answer each)
