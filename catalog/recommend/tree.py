"""The "which variant?" decision tree, as data.

The seeds' Quick Decision Tree (macOS? → NVIDIA GPU? → which GPU → which CPU ISA) plus the
workload and the constraints, written as records the web wizard, the JSON API and the CLI all
walk: `STEPS` (question, answer fields, choices, when it applies), `next_step(answers)` (which
question comes next) and the rule tables the engine (`engine.recommend`) applies. Change the tree
by changing these tables, not the engine's control flow.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Choice:
    value: str
    label: str
    help: str = ""


@dataclass(frozen=True)
class Step:
    id: str
    question: str
    fields: tuple  # answer keys this step sets
    choices: tuple = ()  # static choices; see `choices_for` for ones read from the catalogue
    when: tuple = ()  # ((field, (allowed values...)), ...): all must hold for the step to apply
    required: bool = True  # the engine cannot decide without it
    default: dict = field(default_factory=dict)  # used by the engine when the step is skipped
    help: str = ""  # how to find the answer on the machine


OS_CHOICES = (
    Choice("linux", "Linux"),
    Choice("darwin", "macOS"),
)
ARCH_CHOICES = (
    Choice("x86_64", "x86-64 (Intel, AMD; an Intel Mac)"),
    Choice("aarch64", "ARM64 (Graviton, Grace, Ampere; Apple Silicon M1–M4)"),
)
YES_NO = (Choice("yes", "Yes"), Choice("no", "No"))
WORKLOAD_CHOICES = (
    Choice("general", "General training and inference (FP32 / mixed)", "the safe default"),
    Choice("bf16-training", "BF16 mixed-precision training on the CPU"),
    Choice("int8-inference", "INT8 quantized inference (serving)"),
)
LIBRARY_CHOICES = (
    Choice("pytorch", "PyTorch"),
    Choice("torchvision", "torchvision"),
    Choice("torchaudio", "torchaudio"),
)

STEPS: tuple[Step, ...] = (
    Step(
        "os",
        "Which operating system will run PyTorch?",
        ("os",),
        OS_CHOICES,
        help="uname -s",
    ),
    Step(
        "arch",
        "Which CPU architecture does the machine have?",
        ("arch",),
        ARCH_CHOICES,
        help="uname -m (arm64 on a Mac means Apple Silicon)",
    ),
    Step(
        "gpu",
        "Do you have an NVIDIA GPU?",
        ("has_gpu",),
        YES_NO,
        when=(("os", ("linux",)),),
        help="nvidia-smi",
    ),
    Step(
        "gpu_model",
        "Which NVIDIA GPU is it (its name, or its compute capability)?",
        ("gpu", "compute_capability", "gpus"),
        when=(("os", ("linux",)), ("has_gpu", ("yes",))),
        help="nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv "
        "(the driver version lets the engine check the branch's minimum driver)",
    ),
    Step(
        "cpu",
        "Which CPU features does it have (paste the flags, or pick the newest ISA it supports)?",
        ("cpu_flags", "isa"),
        when=(("os", ("linux",)),),
        help="lscpu | grep -E 'avx|sve'  or  grep -E 'avx|sve' /proc/cpuinfo",
    ),
    Step(
        "workload",
        "What will you mostly run?",
        ("workload",),
        WORKLOAD_CHOICES,
        when=(("os", ("linux",)),),
        required=False,
        default={"workload": "general"},
    ),
    Step(
        "constraints",
        "Any constraints (library, Python, PyTorch or vLLM version, a branch)?",
        ("library", "repository", "branch", "python", "pytorch", "vllm"),
        required=False,
    ),
)
STEP_BY_ID = {step.id: step for step in STEPS}

ANSWER_KEYS = (
    "os", "arch", "has_gpu", "gpu", "compute_capability", "gpus", "driver_version",
    "driver_cuda", "cpu_flags", "isa", "cpu_vendor", "cpu_model", "cpu_parts", "workload",
    "library", "repository", "branch", "python", "pytorch", "vllm",
)

# -- value spellings ---------------------------------------------------------------------------
OS_ALIASES = {
    "linux": "linux", "gnu/linux": "linux",
    "darwin": "darwin", "macos": "darwin", "mac": "darwin", "osx": "darwin", "mac os x": "darwin",
}
ARCH_ALIASES = {
    "x86_64": "x86_64", "x86-64": "x86_64", "amd64": "x86_64", "x64": "x86_64", "intel": "x86_64",
    "aarch64": "aarch64", "arm64": "aarch64", "arm": "aarch64", "armv8": "aarch64",
}
YES = {"yes", "y", "true", "1", "on", "nvidia"}
NO = {"no", "n", "false", "0", "off", "none"}

# -- rules -------------------------------------------------------------------------------------
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
WORKLOAD_LABELS = {c.value: c.label for c in WORKLOAD_CHOICES}
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

# Which repositories build a library, in the order the engine prefers them when both fit. A
# build-pytorch companion matches a build-pytorch PyTorch exactly, so it comes first.
LIBRARY_REPOSITORIES = {
    "pytorch": ("build-pytorch",),
    "torchvision": ("build-pytorch", "build-torchvision"),
    "torchaudio": ("build-pytorch", "build-torchaudio"),
}
DEFAULT_LIBRARY = "pytorch"

# Constraints on a branch: answer key -> (branch attribute, how a value matches, label).
# "exact": equal strings; "prefix": version prefix ("2.9" matches "2.9.1").
BRANCH_CONSTRAINTS = (
    ("repository", "repository", "exact", "repository"),
    ("branch", "name", "exact", "branch"),
    ("python", "python_version", "exact", "Python"),
    ("pytorch", "pytorch_version", "prefix", "PyTorch"),
    ("vllm", "vllm_version", "prefix", "vLLM"),
)

# How the engine orders the branches that can serve the machine (first wins):
BRANCH_ORDER = (
    "isa",  # the branch that builds the best ISA for the workload the CPU can run
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


def _present(answers, key) -> bool:
    value = answers.get(key)
    if value is None:
        return False
    if isinstance(value, str):
        return value.strip() != ""
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        return len(value) > 0
    return True


def applies(step: Step, answers) -> bool:
    """Whether a step is part of the path the answers so far have taken."""
    for key, allowed in step.when:
        value = str(answers.get(key, "")).strip().lower()
        if key == "os":
            value = OS_ALIASES.get(value, value)
        elif key == "has_gpu":
            value = "yes" if value in YES else "no" if value in NO else value
            if value == "" and (_present(answers, "gpu") or _present(answers, "compute_capability") or _present(answers, "gpus")):
                value = "yes"
        if value not in allowed:
            return False
    return True


def answered(step: Step, answers) -> bool:
    """A required step is answered by a non-empty value; an optional one by any of its keys
    being present (an empty constraints form means 'no constraints')."""
    if step.required:
        return any(_present(answers, f) for f in step.fields)
    return any(f in answers for f in step.fields)


def steps() -> tuple[Step, ...]:
    return STEPS


def next_step(answers) -> Step | None:
    """The first step on the answers' path that has no answer yet; None when all are answered.

    `gpu_model` counts as answered by a detected `gpus` list; `arch` is implied on macOS only
    by an answer, never guessed."""
    answers = answers or {}
    for step in STEPS:
        if applies(step, answers) and not answered(step, answers):
            if step.id == "gpu" and (_present(answers, "gpu") or _present(answers, "compute_capability") or _present(answers, "gpus")):
                continue
            return step
    return None


def missing_required(answers) -> list[Step]:
    answers = answers or {}
    out = []
    for step in STEPS:
        if step.required and applies(step, answers) and not answered(step, answers):
            if step.id == "gpu" and (_present(answers, "gpu") or _present(answers, "compute_capability") or _present(answers, "gpus")):
                continue
            out.append(step)
    return out


def choices_for(step: Step | str, catalogue=None) -> tuple[Choice, ...]:
    """A step's choices; GPU, CPU and constraint choices come from the catalogue."""
    step = STEP_BY_ID[step] if isinstance(step, str) else step
    if step.choices or catalogue is None:
        return step.choices
    if step.id == "gpu_model":
        out = []
        for arch in sorted(catalogue.architectures, key=lambda a: a.cc_key):
            names = [m.name for m in catalogue.gpu_models if m.sm == arch.sm]
            label = f"{arch.compute_capability} — {arch.sm.upper()} {arch.name}"
            if names:
                label += f" ({', '.join(names)})"
            out.append(Choice(arch.compute_capability, label))
        return tuple(out)
    if step.id == "cpu":
        return tuple(
            Choice(i.slug, f"{i.label} ({i.arch})", i.hardware)
            for i in sorted(catalogue.isas, key=lambda i: (i.arch, i.rank))
        )
    if step.id == "constraints":
        pythons = sorted({b.python_version for b in catalogue.branches})
        return tuple(Choice(p, f"Python {p}") for p in pythons)
    return ()
