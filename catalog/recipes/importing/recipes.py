"""What a recipe's facts mean for the catalogue: RecipeFacts + lookup tables -> field values.

Pure Python (no Django): `interpret` takes what `catalog.recipes.nix.read.read_recipe` found and the
catalogue's tables (architectures, ISA flags) and returns the variant's field values, the
values as written, and the findings (what it had to infer or what looks inconsistent). Nothing
is refused here: a recipe that lacks an optional part still becomes a variant.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields

from catalog import naming, vocabulary
from catalog.recipes.nix.facts import PytorchSource, RecipeFacts

_PYTHON_ATTR_RE = re.compile(r"^python(?P<major>\d)(?P<minor>\d{1,2})Packages$")
_CUDA_FLAG_RE = re.compile(r"^-DCUDA_VERSION=(?P<version>\d+\.\d+)")
_HEADER_RE = re.compile(r"^(?P<key>Use case|Note|Built against):\s*(?P<value>.*)$")


@dataclass(frozen=True)
class Tables:
    """What the catalogue knows, as plain data."""

    archs: frozenset[str]  # architecture slugs, e.g. "sm90"
    isa_flags: Mapping[tuple[str, ...], str]  # compiler flags -> ISA slug
    isas: frozenset[str]  # ISA slugs


@dataclass(frozen=True)
class BranchDefaults:
    python_version: str = ""  # "3.13"; "" for a branch the catalogue does not have yet
    cuda_version: str = ""  # the branch's first CUDA version


@dataclass(frozen=True)
class Dependency:
    """Where a companion's PyTorch comes from; `interpret` cannot resolve it to a variant."""

    kind: str  # sibling | inline | remote | built-against | ""
    sibling: str = ""  # sibling: the imported file's stem
    url: str = ""  # remote: the archive URL
    path: str = ""  # remote: the recipe path inside it
    built_against: tuple[str, str, str] = ("", "", "")  # header: repository, branch, pname


@dataclass
class Interpreted:
    values: dict  # Variant field -> value; gpu_arch / cpu_isa as slugs ("" = none)
    dependency: Dependency
    findings: list[str] = field(default_factory=list)  # sentences, each about this recipe
    # What the catalogue cannot place (a CUDA variant with no catalogued architecture, …): the
    # variant is stored with the field empty and the pages show it as unknown; the import
    # prints these at every verbosity and the audit lists them.
    unplaced: list[str] = field(default_factory=list)


def facts_json(facts: RecipeFacts) -> dict:
    """The facts as stored in Variant.recipe_facts: everything read but the spans."""
    # Field by field: asdict would also copy every span, the slowest part of an import.
    data = {}
    for f in fields(RecipeFacts):
        value = getattr(facts, f.name)
        if f.name == "spans":
            continue
        if f.name == "pytorch_source":
            value = asdict(value) if value is not None else None
        elif isinstance(value, list | dict):
            value = value.copy()
        data[f.name] = value
    return data


def facts_from_json(data: dict) -> RecipeFacts:
    """Variant.recipe_facts back into RecipeFacts (for the audit's lint)."""
    known = {f.name for f in fields(RecipeFacts)} - {"spans", "pytorch_source"}
    source = data.get("pytorch_source")
    return RecipeFacts(
        **{key: value for key, value in data.items() if key in known},
        pytorch_source=PytorchSource(**source) if source else None,
    )


def cuda_version_of(attr: str) -> str:
    """`cudaPackages_12_8` -> 12.8. A set named by major only (`cudaPackages_13`) is that major's
    `.0` release: the real recipes that select it are named `…-cuda13_0-…` and pass
    `-DCUDA_VERSION=13.0` to CMake."""
    parts = naming.cuda_set_parts(attr)
    if parts is None:
        return ""
    major, minor = parts
    return f"{major}.{minor or 0}"


def python_version_of(attr: str) -> str:
    match = _PYTHON_ATTR_RE.match(attr or "")
    return f"{match['major']}.{match['minor']}" if match else ""


def interpret(
    facts: RecipeFacts, file_stem: str, tables: Tables, branch: BranchDefaults
) -> Interpreted:
    findings: list[str] = []
    unplaced: list[str] = []
    named = naming.parse_lenient(file_stem) or naming.parse_lenient(facts.pname)
    cuda = _cuda_version(facts, named, branch, findings) if facts.backend == "cuda" else ""
    if facts.backend == "cuda" and not cuda:
        unplaced.append(
            "No CUDA version: neither its CUDA package set, a -DCUDA_VERSION flag, its name nor "
            "the branch gives one."
        )
    sm = _gpu_arch(facts, named, tables, unplaced) if facts.backend == "cuda" else ""
    isa = _cpu_isa(facts, named, tables, findings, unplaced) if facts.backend != "mps" else ""
    values = {
        "pname": facts.pname,
        "library": facts.library,
        "backend": facts.backend,
        "cuda_version": cuda,
        "gpu_arch": sm,
        "cpu_isa": isa,
        "platform": _platform(facts, isa, findings),
        "python_version": _python_version(facts, named, branch, unplaced),
        "blas": _blas(facts),
        "disabled_features": list(facts.disabled_features),
        "extra_cmake_flags": list(facts.extra_cmake_flags),
        "metadata_rev": facts.metadata_rev,
        "recipe_form": facts.form,
        "nixpkgs_pin": facts.nixpkgs_pin,
        "cuda_packages_attr": facts.cuda_packages_attr,
        "python_attr": facts.python_attr,
        "gpu_targets": list(facts.gpu_targets),
        "cpu_flags": list(facts.cpu_flags),
        "platforms": list(facts.platforms),
        "torch_version_override": facts.torch_version_override,
        "passthru": dict(facts.passthru),
        "recipe_facts": facts_json(facts),
    }
    values.update(_header_values(facts.header))
    return Interpreted(values, _dependency(facts), findings, unplaced)


def _cuda_version(facts, named, branch: BranchDefaults, findings: list[str]) -> str:
    version = cuda_version_of(facts.cuda_packages_attr)
    if version:
        return version
    for flag in facts.extra_cmake_flags:
        match = _CUDA_FLAG_RE.match(flag)
        if match:
            return match["version"]
    if named and named.cuda_version:
        findings.append(f"CUDA {named.cuda_version} is taken from the name (no CUDA package set).")
        return named.cuda_version
    if branch.cuda_version:
        findings.append(f"CUDA {branch.cuda_version} is the branch's (the recipe names none).")
    return branch.cuda_version


def _gpu_arch(facts, named, tables: Tables, findings: list[str]) -> str:
    candidates = [naming.gpu_target_sm_lenient(t) for t in facts.gpu_targets]
    if facts.gpu_arch_num.isdigit():
        candidates.append(f"sm{facts.gpu_arch_num}")
    if named and named.sm:
        candidates.append(named.sm)
    for sm in candidates:
        if sm in tables.archs:
            return sm
    written = ", ".join(facts.gpu_targets)[:200] or "none"
    findings.append(f"No catalogued GPU architecture matches its GPU targets ({written}).")
    return ""


def _cpu_isa(facts, named, tables: Tables, findings: list[str], unplaced: list[str]) -> str:
    # `-mno-…` guards keep the compiler off newer instructions; the ISA is what is switched on.
    enabled = tuple(f for f in facts.cpu_flags if not f.startswith("-mno-"))
    by_flags = tables.isa_flags.get(enabled) if enabled else None
    if by_flags:
        return by_flags
    for written in (facts.passthru.get("cpuISA") or "", named.isa if named else ""):
        slug = naming.isa_slug(written[:40])
        if slug in tables.isas:
            if facts.cpu_flags:
                findings.append(
                    f"cpuFlags {' '.join(facts.cpu_flags)} match no catalogued ISA; "
                    f"{slug} is taken from the name."
                )
            return slug
    if facts.cpu_flags or facts.backend == "cpu":
        unplaced.append("No catalogued CPU ISA matches its cpuFlags or its name.")
    return ""


def _platform(facts, isa: str, findings: list[str]) -> str:
    """The one platform the variant is for: the one declared, else the one its CPU code is."""
    if facts.backend == "mps":
        expected = [k for k, p in vocabulary.PLATFORMS.items() if p.os == "darwin"]
    else:
        arch = vocabulary.ISA_ARCH.get(isa, "")
        expected = [vocabulary.CPU_ARCHES[arch].linux_platform] if arch else []
    declared = [p for p in facts.platforms if p in vocabulary.PLATFORMS]
    if len(declared) == 1 and (not expected or declared == expected):
        return declared[0]
    chosen = (expected or declared or list(vocabulary.BACKENDS[facts.backend].platforms))[0]
    if len(declared) > 1:
        findings.append(
            f"It declares {', '.join(declared)}; its CPU code is for {chosen}, so that is its "
            "platform."
        )
    elif declared and declared[0] != chosen:
        findings.append(f"It declares {declared[0]}, but its CPU code is for {chosen}.")
    return chosen


def _python_version(facts, named, branch: BranchDefaults, findings: list[str]) -> str:
    version = python_version_of(facts.python_attr)
    if version:
        return version
    if branch.python_version:
        return branch.python_version
    if named:
        return named.python_version
    findings.append("No Python version: the set is python3Packages and the name gives none.")
    return ""


def _blas(facts) -> str:
    provider = facts.passthru.get("blasProvider") or ""
    blas = vocabulary.BLAS_BY_PROVIDER.get(provider)
    allowed = vocabulary.BACKENDS[facts.backend].blas
    return blas if blas in allowed else allowed[0]


def _header_values(header: list[str]) -> dict:
    use_case, notes = "", []
    for line in header:
        match = _HEADER_RE.match(line.strip())
        if match and match["key"] == "Use case":
            use_case = match["value"]
        elif match and match["key"] == "Note":
            notes.append(match["value"])
    return {"use_case": use_case[:120], "notes": "\n".join(notes)}


def _dependency(facts: RecipeFacts) -> Dependency:
    if facts.library == "pytorch":
        return Dependency("")
    for line in facts.header:
        match = _HEADER_RE.match(line.strip())
        parts = match["value"].split() if match and match["key"] == "Built against" else []
        if len(parts) == 3:
            return Dependency("built-against", built_against=(parts[0], parts[1], parts[2]))
    source = facts.pytorch_source
    if source is None:
        return Dependency("")
    return Dependency(source.kind, sibling=source.sibling, url=source.url, path=source.path)
