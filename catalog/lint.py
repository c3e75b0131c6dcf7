"""Lint of every branch's variants: rules over plain records, no Django.

A VariantRecord is what one variant's recipe says (its pname and file name, GPU targets,
platforms, nixpkgs pin, the sibling PyTorch recipe a companion imports) next to what the
catalogue knows of it (library, backend, CUDA version, architecture, ISA). Architectures come
in as ArchFacts: the CUDA versions that can target them and, for a GPU built into an Arm system,
the only CPU architecture it is paired with. The rules are data (RULES: key, summary, check);
`audit.lint_records` builds the records from the database, and `lint` returns one LintFinding
per broken rule and variant.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from catalog import naming, vocabulary


@dataclass(frozen=True)
class ArchFacts:
    sm: str
    min_cuda: str
    max_cuda: str = ""  # "" while current CUDA still targets it
    host_arch: str = ""  # "aarch64" for a GPU built into an Arm system; "" for any host


@dataclass(frozen=True)
class VariantRecord:
    repository: str
    branch: str
    pname: str  # as the recipe writes it
    file_name: str  # the recipe's file name without .nix
    library: str
    backend: str
    cuda_version: str = ""
    sm: str = ""
    isa: str = ""
    platforms: tuple[str, ...] = ()
    gpu_targets: tuple[str, ...] = ()
    nixpkgs_pin: str = ""  # "" when the recipe takes whatever nixpkgs it is given
    planned: bool = False  # no recipe yet: its pin may still be to be decided
    pytorch_recipe: str = ""  # a companion's imported sibling recipe (file name), "" otherwise


@dataclass(frozen=True)
class LintFinding:
    repository: str
    branch: str
    variant: str  # the catalogue's name for it: its recipe's file name
    rule: str
    message: str


def expected_platforms(backend: str, isa: str) -> tuple[str, ...]:
    """The platform a variant's CPU code builds for: its ISA's Linux, or Darwin for MPS."""
    if backend == "mps":
        return tuple(k for k, p in vocabulary.PLATFORMS.items() if p.os == "darwin")
    arch = vocabulary.ISA_ARCH.get(isa)
    return (vocabulary.CPU_ARCHES[arch].linux_platform,) if arch else ()


def _placed(r: VariantRecord, _arch, _files) -> str:
    """What the import could not place: stored empty, shown as unknown by the pages."""
    missing = []
    if r.backend == "cuda" and not r.sm:
        written = ", ".join(r.gpu_targets)[:120] or "none"
        missing.append(f"no catalogued GPU architecture matches its GPU targets ({written})")
    if r.backend == "cuda" and not r.cuda_version:
        missing.append("it gives no CUDA version")
    if r.backend == "cpu" and not r.isa:
        missing.append("no catalogued CPU ISA matches its cpuFlags or its name")
    return f"Not placed: {'; '.join(missing)}." if missing else ""


def _cuda_bounds(r: VariantRecord, arch: ArchFacts | None, _files) -> str:
    if r.backend != "cuda" or not r.sm or not r.cuda_version:
        return ""  # `placed` reports what is missing
    if arch is None:
        return f"No architecture {r.sm!r} in the catalogue."
    version = naming.version_key(r.cuda_version)[:2]
    if version < naming.version_key(arch.min_cuda)[:2]:
        return (
            f"{arch.sm.upper()} needs CUDA {arch.min_cuda} or newer; CUDA {r.cuda_version} "
            "cannot target it."
        )
    if arch.max_cuda and version > naming.version_key(arch.max_cuda)[:2]:
        return (
            f"CUDA {r.cuda_version} no longer targets {arch.sm.upper()} (the last CUDA for it is "
            f"{arch.max_cuda})."
        )
    return ""


def impossible_pairing(sm: str, host_arch: str, isa: str) -> str:
    """Why no machine pairs this GPU with this ISA ("" when one can): the GPU is built into a
    system whose CPU is of another architecture. The one rule the catalogue, the audit, the
    selector and the wizard share."""
    isa_arch = vocabulary.ISA_ARCH.get(isa, "")
    if not sm or not host_arch or not isa_arch or isa_arch == host_arch:
        return ""
    return (
        f"{sm.upper()} is built into an {host_arch} system, so an {isa_arch} ISA ({isa}) "
        "cannot run beside it."
    )


def _arm_only_gpu(r: VariantRecord, arch: ArchFacts | None, _files) -> str:
    if r.backend != "cuda" or arch is None or not arch.host_arch:
        return ""
    host_platform = vocabulary.CPU_ARCHES[arch.host_arch].linux_platform
    reason = impossible_pairing(arch.sm, arch.host_arch, r.isa)
    if reason:
        return reason
    foreign = [p for p in r.platforms if p != host_platform]
    if foreign:
        return (
            f"{arch.sm.upper()} is built into an {arch.host_arch} system; the recipe lists "
            f"{', '.join(foreign)}."
        )
    return ""


def _gpu_targets(r: VariantRecord, _arch, _files) -> str:
    if r.backend != "cuda":
        return ""
    if not r.gpu_targets:
        return "The recipe sets no GPU target."
    problems = []
    for target in r.gpu_targets:
        try:
            sm = naming.gpu_target_sm(target)
        except naming.InvalidName as exc:
            problems.append(f"{exc}; PyTorch refuses it")
            continue
        if sm != r.sm:
            problems.append(f'"{target}" is {sm.upper()}, not {r.sm.upper()}')
    return "; ".join(problems) + "." if problems else ""


def _file_name(r: VariantRecord, _arch, _files) -> str:
    return f'pname is "{r.pname}" in {r.file_name}.nix.' if r.pname != r.file_name else ""


def _name_parts(r: VariantRecord, _arch, _files) -> str:
    """The file name's parts (release numbers and dotted ISAs read leniently) against what the
    recipe builds."""
    named = naming.parse_lenient(r.file_name)
    if named is None:
        return f"{r.file_name}.nix does not follow the naming convention."
    problems = [
        f"{label} {said or 'none'} but the recipe builds {built or 'none'}"
        for label, said, built in (
            ("library", named.library, r.library),
            ("backend", named.backend, r.backend),
            ("CUDA", named.cuda_version, r.cuda_version),
            ("GPU architecture", named.sm, r.sm),
            ("CPU ISA", named.isa, r.isa),
        )
        if said != built
    ]
    return f"The name says {'; '.join(problems)}." if problems else ""


def _platforms(r: VariantRecord, _arch, _files) -> str:
    expected = expected_platforms(r.backend, r.isa)
    wrong = [p for p in r.platforms if p not in expected]
    if not expected or not (wrong or not r.platforms):
        return ""
    listed = ", ".join(r.platforms) or "no platform"
    return f"It lists {listed}; its {r.isa or 'MPS'} build runs only on {', '.join(expected)}."


def _nixpkgs_pin(r: VariantRecord, _arch, _files) -> str:
    if r.nixpkgs_pin or r.planned:
        return ""
    return "No nixpkgs pin: the recipe builds with whatever nixpkgs its builder has."


def _companion_pytorch(r: VariantRecord, _arch, branch_files: frozenset[str]) -> str:
    if not r.pytorch_recipe or r.pytorch_recipe in branch_files:
        return ""
    return f"It imports {r.pytorch_recipe}.nix, which the branch does not have."


@dataclass(frozen=True)
class Rule:
    key: str
    summary: str  # what the rule requires, one line (the audit page lists it)
    # (record, its architecture or None, the file names of its branch) -> "" when it holds
    check: Callable[[VariantRecord, ArchFacts | None, frozenset[str]], str]


RULES: tuple[Rule, ...] = (
    Rule(
        "placed",
        "a CUDA variant has a catalogued architecture and a CUDA version; a CPU one a catalogued "
        "ISA",
        _placed,
    ),
    Rule(
        "cuda-bounds",
        "the CUDA version can target the architecture (its first and last CUDA)",
        _cuda_bounds,
    ),
    Rule(
        "arm-only-gpu",
        "a GPU built into an Arm system is paired only with Arm ISAs and aarch64-linux",
        _arm_only_gpu,
    ),
    Rule(
        "gpu-targets",
        'GPU targets are compute capabilities ("9.0") of the variant\'s architecture',
        _gpu_targets,
    ),
    Rule("file-name", "the recipe's pname equals its file name", _file_name),
    Rule(
        "name-parts",
        "the file name's library, backend, CUDA, architecture and ISA are what the recipe builds",
        _name_parts,
    ),
    Rule(
        "platforms-as-written",
        "meta.platforms is the one platform the ISA (or MPS) builds for",
        _platforms,
    ),
    Rule(
        "nixpkgs-pin",
        "a recipe pins its nixpkgs commit (a planned variant may wait for one)",
        _nixpkgs_pin,
    ),
    Rule(
        "companion-pytorch",
        "a companion's sibling PyTorch recipe exists in its branch",
        _companion_pytorch,
    ),
)


def lint_variant(
    record: VariantRecord, archs: Mapping[str, ArchFacts], branch_files: frozenset[str]
) -> list[tuple[str, str]]:
    """(rule, sentence) for each rule this variant breaks, in RULES order."""
    arch = archs.get(record.sm) if record.sm else None
    found = ((rule.key, rule.check(record, arch, branch_files)) for rule in RULES)
    return [(key, message) for key, message in found if message]


def lint(records: Iterable[VariantRecord], archs: Mapping[str, ArchFacts]) -> list[LintFinding]:
    records = list(records)
    files: dict[tuple[str, str], set[str]] = {}
    for record in records:
        files.setdefault((record.repository, record.branch), set()).add(record.file_name)
    frozen = {key: frozenset(names) for key, names in files.items()}
    return [
        LintFinding(record.repository, record.branch, record.file_name, rule, message)
        for record in records
        for rule, message in lint_variant(record, archs, frozen[(record.repository, record.branch)])
    ]
