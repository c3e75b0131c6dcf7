"""The questions of "which variant?", one `Step` record each: the one home of a question.

A Step names its answer fields (`Field`: the name used by the API, the wizard's URL and form,
and — as `--name` — the CLI; its label, widget, choices, limits and reader), the question, how
to find the answer on the machine, and when the question applies. Everything reads these
records: the engine's input normalisation (catalog.wizard.answers) reads every field through
its reader, the web wizard renders each step's fields in a loop, the API accepts exactly these
field names, and `which-variant` turns each public field into an option.

Adding a question: add a Step (or a Field to a Step) here, and its rule: a row of a table in
catalog.wizard.rules (a question that narrows the builds is a `rules.Constraint`), or, for a new
kind of decision, the engine reading its value. Nothing else (tests/test_wizard_questions.py adds
one). A Field's `implied_by` names the earlier answers that give it (an NVIDIA GPU: Linux).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from catalog import naming
from catalog.vocabulary import LIBRARIES
from catalog.wizard import cpu_models, cpus, readers

if TYPE_CHECKING:
    from catalog.wizard.snapshot import Catalogue


@dataclass(frozen=True)
class Choice:
    value: str
    label: str
    help: str = ""
    aliases: tuple[str, ...] = ()  # other spellings accepted for the value


@dataclass(frozen=True)
class Implied:
    """An answer that an earlier one implies: when `field` is one of `values`, this field's
    answer is `value` (unless given), and `why` says so among the reasons."""

    field: str
    values: tuple[str, ...]
    value: str
    why: str


@dataclass(frozen=True)
class Field:
    """One answer: how it is named, asked, limited and read."""

    name: str  # API field, URL query key, form input name; the CLI option is --name
    label: str
    read: Callable  # (values: list[str], catalogue) -> value; raises readers.AnswerError
    widget: str = "text"  # radio | select | text | textarea | hidden | "" (never in a form)
    choices: tuple | Callable = ()  # Choice records, or (catalogue, values) -> Choice records
    multi: bool = False  # may be given more than once
    max_length: int = 200  # characters of one value
    aliases: tuple[str, ...] = ()  # other accepted field names
    public: bool = True  # accepted from the API, the URL and the CLI
    answers_step: bool = True  # False: a detail that does not answer the question on its own
    group: str = ""  # explicit answers in a group replace the detected ones of the group
    command: str = ""  # a shell command that tells the answer (shown as code)
    note: str = ""  # plain-text help after the label
    placeholder: str = ""
    empty: str = ""  # a select's option for "no answer"
    default: str = ""  # checked or selected when there is no answer
    help: str = ""  # what the value is, out of the form's context (CLI help); "" = the label
    implied_by: tuple[Implied, ...] = ()  # earlier answers that give this one

    @property
    def cli(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Step:
    id: str
    question: str
    fields: tuple[Field, ...]
    when: tuple = ()  # ((field, (allowed values...)), ...): all must hold for the step to apply
    required: bool = True  # the engine cannot decide without an answer
    commands: tuple[str, ...] = ()  # commands that tell the answer on the machine
    hint: str = ""  # plain text after the commands
    give: str = ""  # what the API or the CLI must give when the step is missing
    # How the answer reads in the wizard's "Your answers", from the Recommendation, when the
    # fields' own values (choice labels) do not say it well; "" falls back to those.
    summary: Callable | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)


# -- choices ---------------------------------------------------------------------------------------

OS_CHOICES = (
    Choice("linux", "Linux", aliases=("gnu/linux",)),
    Choice("darwin", "macOS", aliases=("macos", "mac", "osx", "mac os x")),
)
ARCH_CHOICES = (
    Choice("x86_64", "x86-64 (Intel, AMD; an Intel Mac)"),
    Choice("aarch64", "ARM64 (Graviton, Grace, Ampere; Apple Silicon M1–M4)"),
)
HAS_GPU_CHOICES = (
    Choice("yes", "Yes", aliases=("y", "true", "1", "on", "nvidia")),
    Choice("no", "No", aliases=("n", "false", "0", "off", "none")),
    Choice(
        "unknown",
        "I don't know",
        "the CPU-only build for now; paste nvidia-smi to find out",
        aliases=("?", "not sure", "dont-know"),
    ),
)
WORKLOAD_CHOICES = (
    Choice("general", "General training and inference (FP32 / mixed)", "the safe default"),
    Choice("bf16-training", "BF16 mixed-precision training on the CPU"),
    Choice("int8-inference", "INT8 quantized inference (serving)"),
)
LIBRARY_CHOICES = tuple(Choice(key, library.label) for key, library in LIBRARIES.items())
NO_GPU_NAMES = ("none", "no", "-")  # `gpu=none`: no NVIDIA GPU


def gpu_choices(catalogue: Catalogue, values: Mapping | None = None) -> tuple[Choice, ...]:
    """One choice per catalogued architecture, named with its GPUs (no name said twice)."""
    out = []
    for arch in sorted(catalogue.architectures, key=lambda a: a.cc_key):
        names = [
            m.name for m in catalogue.gpu_models if m.sm == arch.sm and m.name not in arch.name
        ]
        label = f"{arch.compute_capability} — {arch.sm.upper()} {arch.name}"
        out.append(
            Choice(arch.compute_capability, label + (f": {', '.join(names)}" if names else ""))
        )
    return tuple(out)


def isa_choices(catalogue: Catalogue, values: Mapping | None = None) -> tuple[Choice, ...]:
    """The catalogue's ISAs, only those of the machine's architecture once it is known; each
    says which CPU generations have its flags (archspec) and which named systems should pick it."""
    from catalog.wizard.answers import isa_features  # answers imports this module

    arch = (values or {}).get("arch", "")
    isas = sorted(catalogue.isas, key=lambda i: (i.arch, i.rank))
    picks = cpu_models.systems_by_best_isa((i.slug, i.rank, isa_features(i), i.arch) for i in isas)
    out = []
    for i in isas:
        if arch and i.arch != arch:
            continue
        help = cpus.generations_with(isa_features(i), i.arch) or i.hardware
        if picks.get(i.slug):
            help += f". Pick this for {', '.join(picks[i.slug])}"
        out.append(Choice(i.slug, f"{i.label} ({i.arch})", help))
    return tuple(out)


def python_choices(catalogue: Catalogue, values: Mapping | None = None) -> tuple[Choice, ...]:
    pythons = sorted({b.python_version for b in catalogue.branches}, key=naming.version_key)
    return tuple(Choice(p, f"Python {p}") for p in pythons)


def _gpu_summary(rec) -> str:
    """'NVIDIA B300 SXM6 AC ×8 (compute capability 10.3); driver 580.82.07'."""
    a = rec.answers
    text = ", ".join(
        f"{g.query or 'GPU'}{f' ×{g.count}' if g.count > 1 else ''} (compute "
        f"capability {g.compute_capability})"
        for g in a.gpus
    )
    return text + (f"; driver {a.driver}" if text and a.driver else "")


def _cpu_summary(rec) -> str:
    """'Intel Sapphire Rapids: flags avx avx2 …' when flags were given (an ISA answer reads as
    its choice)."""
    if not rec.answers.cpu.given:
        return ""
    cpu = rec.detected.get("cpu") or {}
    name = cpu.get("label") or cpu.get("model") or "this CPU"
    flags = cpu.get("isa_features") or []
    return f"{name}: flags {' '.join(flags)}" if flags else f"{name} (flags given)"


# -- the questions ---------------------------------------------------------------------------------

STEPS: tuple[Step, ...] = (
    Step(
        "os",
        "Which operating system will run PyTorch?",
        (
            Field(
                "os",
                "Operating system",
                readers.choice(
                    "operating system",
                    OS_CHOICES,
                    {
                        "win": "There are no Windows builds: choose linux (e.g. under WSL2) or "
                        "darwin (macOS).",
                    },
                ),
                "radio",
                OS_CHOICES,
                implied_by=(
                    Implied(
                        "has_gpu",
                        ("yes",),
                        "linux",
                        "An NVIDIA GPU was given and there is no CUDA on macOS, so the machine "
                        "runs Linux.",
                    ),
                ),
            ),
        ),
        commands=("uname -s",),
        give="os (linux or darwin), or paste uname",
    ),
    Step(
        "arch",
        "Which CPU architecture does the machine have?",
        (Field("arch", "CPU architecture", readers.arch, "radio", ARCH_CHOICES),),
        commands=("uname -m",),
        hint="arm64 on a Mac means Apple Silicon.",
        give="arch (x86_64 or aarch64), or paste uname -m",
    ),
    Step(
        "gpu",
        "Do you have an NVIDIA GPU?",
        (
            Field(
                "has_gpu",
                "NVIDIA GPU",
                readers.choice("answer to 'Do you have an NVIDIA GPU?'", HAS_GPU_CHOICES),
                "radio",
                HAS_GPU_CHOICES,
                group="gpu",
            ),
        ),
        when=(("os", ("linux",)),),
        required=False,
        commands=("nvidia-smi",),
    ),
    Step(
        "gpu_model",
        "Which NVIDIA GPU is it (its name, or its compute capability)?",
        (
            Field(
                "compute_cap",
                "GPU (compute capability)",
                readers.compute_capabilities,
                "select",
                gpu_choices,
                multi=True,
                max_length=8,
                aliases=("compute_capability",),
                group="gpu",
                empty="— choose, or type a name below —",
                help="the GPU's compute capability, e.g. 9.0",
            ),
            Field(
                "gpu",
                "or its name, as nvidia-smi prints it",
                readers.texts,
                multi=True,
                group="gpu",
                placeholder="NVIDIA GeForce RTX 4090",
                help="the GPU's name as nvidia-smi prints it ('none': no NVIDIA GPU)",
            ),
            Field(
                "gpu_count",
                "How many of each GPU",
                readers.counts,
                "hidden",
                multi=True,
                max_length=5,
                group="gpu",
                answers_step=False,
                help="how many of each GPU given (in the same order; default 1)",
            ),
            Field(
                "driver",
                "Driver version (optional)",
                readers.version("Driver", 1),
                max_length=40,
                aliases=("driver_version",),
                answers_step=False,
                placeholder="570.124.06",
            ),
            Field(
                "driver_cuda",
                "Newest CUDA the driver supports",
                readers.version("CUDA", 2),
                "hidden",
                max_length=20,
                answers_step=False,
            ),
        ),
        when=(("os", ("linux",)), ("has_gpu", ("yes",))),
        commands=("nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv",),
        hint="The driver version lets the engine check the branch's minimum driver.",
        give="gpu or compute_cap",
        summary=_gpu_summary,
    ),
    Step(
        "cpu",
        "Which CPU features does it have (paste the flags, or pick the newest ISA it supports)?",
        (
            Field(
                "isa",
                "Newest instruction set",
                readers.isas,
                "radio",
                isa_choices,
                multi=True,
                max_length=40,
                help="the newest CPU ISA the machine runs, e.g. avx512 (it "
                "implies the ones below it)",
            ),
            Field(
                "cpu_flags",
                "or paste the CPU flags",
                readers.words,
                "textarea",
                max_length=16_384,
                group="cpu_flags",
                command="grep -m1 flags /proc/cpuinfo",
                note="they win over the choice above",
                help="CPU flags as /proc/cpuinfo names them, space or comma separated",
            ),
            Field(
                "cpu",
                "CPU microarchitecture",
                readers.microarchitecture,
                "hidden",
                max_length=40,
                help="the CPU's microarchitecture as archspec names it, e.g. sapphirerapids",
            ),
            Field("cpu_vendor", "CPU vendor", readers.text, "hidden", answers_step=False),
            Field(
                "cpu_model",
                "or the CPU model",
                readers.text,
                max_length=200,
                placeholder="Ryzen 9 7950X",
                command="lscpu | grep 'Model name'",
                note="its microarchitecture gives the flags (flags win)",
                help="the CPU's model name, e.g. 'Ryzen 9 7950X', 'Xeon Platinum 8480+', 'Grace'",
            ),
            Field(
                "cpu_parts",
                "ARM CPU part ids",
                readers.lower_words,
                "hidden",
                multi=True,
                answers_step=False,
            ),
            # A tool's complete flag list (lscpu, /proc/cpuinfo, sysctl): taken as it is.
            Field(
                "cpu_features",
                "CPU flags read from a tool",
                readers.words,
                "",
                public=False,
                group="cpu_flags",
            ),
        ),
        when=(("os", ("linux",)),),
        commands=("lscpu | grep -E 'avx|sve'", "grep -E 'avx|sve' /proc/cpuinfo"),
        give="cpu_flags, isa or cpu_model, or paste lscpu or /proc/cpuinfo",
        summary=_cpu_summary,
    ),
    Step(
        "workload",
        "What will you mostly run?",
        (
            Field(
                "workload",
                "Workload",
                readers.choice("workload", WORKLOAD_CHOICES),
                "radio",
                WORKLOAD_CHOICES,
                default="general",
            ),
        ),
        when=(("os", ("linux",)),),
        required=False,
    ),
    Step(
        "constraints",
        "Any constraints (library, Python, PyTorch or vLLM version, a branch)?",
        (
            Field(
                "library",
                "Library",
                readers.choice("library", LIBRARY_CHOICES),
                "select",
                LIBRARY_CHOICES,
                empty="PyTorch (default)",
            ),
            Field(
                "python",
                "Python",
                readers.text,
                "select",
                python_choices,
                empty="any",
                help="Python version, e.g. 3.12",
            ),
            Field("pytorch", "PyTorch version", readers.text, max_length=20, placeholder="2.9"),
            Field("vllm", "vLLM version", readers.text, max_length=20, placeholder="0.15.1"),
            Field("branch", "Branch", readers.text, max_length=100, placeholder="main"),
            Field("repository", "Repository", readers.text, "hidden", max_length=100),
        ),
        required=False,
        hint="All optional: leave them empty for the stable default.",
    ),
)


class Index(NamedTuple):
    """Lookups derived from the steps."""

    step_by_id: dict[str, Step]
    fields: dict[str, Field]
    step_of: dict[str, Step]
    names: dict[str, str]  # every accepted spelling of a public field's name -> the field's name


def index(all_steps: tuple[Step, ...]) -> Index:
    return Index(
        {step.id: step for step in all_steps},
        {f.name: f for step in all_steps for f in step.fields},
        {f.name: step for step in all_steps for f in step.fields},
        {
            alias: f.name
            for step in all_steps
            for f in step.fields
            if f.public
            for alias in (f.name, *f.aliases)
        },
    )


STEP_BY_ID, FIELDS, STEP_OF, NAMES = index(STEPS)


def applies(step: Step, values: Mapping) -> bool:
    """Whether a step is on the path the (normalised) answers so far have taken."""
    return all(values.get(name, "") in allowed for name, allowed in step.when)


def _filled(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(value)
    return bool(value)


def answered(step: Step, values: Mapping, given: Collection[str] = ()) -> bool:
    """A required step is answered by a value of one of its answering fields; an optional one
    also by any of its fields being given, even empty ("library=" means no constraints)."""
    if any(_filled(values.get(f.name)) for f in step.fields if f.answers_step):
        return True
    return not step.required and any(f.name in given for f in step.fields)


def next_step(values: Mapping, given: Collection[str] = ()) -> Step | None:
    """The first step on the answers' path that has no answer yet; None when all are answered."""
    for step in STEPS:
        if applies(step, values) and not answered(step, values, given):
            return step
    return None


def missing_required(values: Mapping, given: Collection[str] = ()) -> list[Step]:
    return [
        s for s in STEPS if s.required and applies(s, values) and not answered(s, values, given)
    ]
