"""The engine's input normalisation: raw answers -> `Answers`, and every problem as an
`AnswerError` that names its field.

Each field is read by the reader its Step record names (catalog.wizard.steps); then the rules
that relate fields run: GPU names paired with compute capabilities and resolved, the CPU's
features worked out (a tool's flags as they are; typed flags and ISA answers completed from
archspec's microarchitecture data), contradictions between answers, and the constraints checked
against the catalogue. Plain Python, no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from itertools import zip_longest
from typing import Any

from catalog import hardware, naming
from catalog.wizard import cpus, rules, steps
from catalog.wizard import gpus as gpu_names
from catalog.wizard.cpu_models import resolve_cpu_model
from catalog.wizard.readers import AnswerError
from catalog.wizard.snapshot import BranchInfo, Catalogue, IsaInfo


@dataclass(frozen=True)
class Gpu:
    query: str  # the name as given ("" when only a compute capability was)
    label: str  # for sentences
    compute_capability: str
    sm: str
    count: int = 1


@dataclass(frozen=True)
class Cpu:
    """What the answers say about the CPU, and what ISAs are judged by."""

    features: frozenset = frozenset()  # the features ISAs are judged by
    source: str = ""  # tool | flags | isa | microarchitecture | model | "" (nothing said)
    given: frozenset = frozenset()  # flags as given (a tool's or typed), before completion
    assumed: frozenset = frozenset()  # implied by what was given, from archspec's data
    claims: tuple[str, ...] = ()  # ISA slugs answered
    vendor: str = ""
    model: str = ""
    parts: tuple[str, ...] = ()
    target: str = ""  # archspec microarchitecture name
    label: str = ""  # how people call it

    @property
    def known(self) -> bool:
        return bool(self.source)


@dataclass(frozen=True)
class Answers:
    """Normalised answers. Common ones are attributes; `values` holds every field as read, with
    what was inferred (arch, has_gpu) filled in: a new question's rule reads its value there, and
    catalog.wizard.steps decides from it which question comes next."""

    values: dict = field(default_factory=dict)
    given: frozenset = frozenset()  # field names present in the input, even empty
    os: str = ""
    arch: str = ""
    has_gpu: str = ""  # yes | no | unknown | "" (not said)
    gpus: tuple[Gpu, ...] = ()  # distinct GPU models, each with its count
    driver: str = ""
    driver_cuda: str = ""
    cpu: Cpu = Cpu()
    workload: str = "general"
    workload_given: bool = False
    library: str = ""
    constraints: dict = field(default_factory=dict)  # rules.CONSTRAINTS field -> value
    implied: tuple[str, ...] = ()  # why answers not given were taken as implied (Field.implied_by)

    @property
    def driver_major(self) -> int | None:
        key = naming.version_key(self.driver)
        return key[0] if key else None

    def changed(self, **changes: Any) -> Answers:
        return replace(self, **changes)


# ---------------------------------------------------------------------------------------------
# Reading the fields
# ---------------------------------------------------------------------------------------------


def _values(value) -> list[str]:
    """A raw answer as a list of strings (one per value)."""
    items = list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]
    out = []
    for item in items:
        if isinstance(item, bool):
            out.append("yes" if item else "no")
        elif isinstance(item, (str, int, float)):
            out.append(str(item).strip())
        else:
            raise AnswerError(
                f"An answer must be text, a number or a list of those, not {type(item).__name__}."
            )
    return out


def _read_fields(raw: Mapping, cat: Catalogue, errors: list) -> tuple[dict, frozenset]:
    names = {**steps.NAMES, **{f.name: f.name for f in steps.FIELDS.values()}}
    values, given = {}, set()
    for key, value in raw.items():
        name = names.get(key)
        if name is None or value is None:
            continue
        given.add(name)
        fld = steps.FIELDS[name]
        try:
            values[name] = fld.read(_values(value), cat)
        except AnswerError as exc:
            errors.append(exc.on(name))
    return values, frozenset(given)


def normalise(raw: object, cat: Catalogue) -> tuple[Answers, list[AnswerError]]:
    """Raw answers (field name -> text or list) -> (Answers, errors). Never raises."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        return Answers(), [
            AnswerError(
                f"Answers must be a mapping of question to answer, not {type(raw).__name__}."
            )
        ]
    errors: list[AnswerError] = []
    values, given = _read_fields(raw, cat, errors)
    a = Answers(
        values=values,
        given=given,
        os=values.get("os", ""),
        arch=values.get("arch", ""),
        has_gpu=values.get("has_gpu", ""),
        driver=values.get("driver", ""),
        driver_cuda=values.get("driver_cuda", ""),
        workload=values.get("workload") or "general",
        workload_given=bool(values.get("workload")),
        library=values.get("library", ""),
        constraints={c.field: values[c.field] for c in rules.CONSTRAINTS if values.get(c.field)},
    )
    a = _read_cpu(a, cat, errors)
    a = _read_gpus(a, cat, errors)
    a = _implied(a)
    if not errors:
        errors += _check_constraints(a, cat)
    return a, errors


def _implied(a: Answers) -> Answers:
    """Fill in the answers that earlier ones imply (each Field's `implied_by`), with why."""
    values, why = dict(a.values), list(a.implied)
    for fld in steps.FIELDS.values():
        rule = next(
            (r for r in fld.implied_by if values.get(r.field) in r.values),
            None,
        )
        if rule is not None and not values.get(fld.name):
            values[fld.name] = rule.value
            why.append(rule.why)
    if len(why) == len(a.implied):
        return a
    # The attributes named like a field (os, arch, …) follow their value.
    attributes = {f.name for f in fields(Answers)} & set(steps.FIELDS)
    changes = {k: v for k, v in values.items() if k in attributes and v != getattr(a, k)}
    return a.changed(values=values, implied=tuple(why), **changes)


# ---------------------------------------------------------------------------------------------
# GPUs
# ---------------------------------------------------------------------------------------------


def _pairs(names: list[str], ccs: list[str]) -> list[tuple[str, str]]:
    """GPU names and compute capabilities, paired in order (one of either goes with all)."""
    if len(names) > 1 and len(ccs) > 1 and len(names) != len(ccs):
        raise AnswerError(
            f"{len(names)} GPU names but {len(ccs)} compute capabilities: give them in pairs.",
            "compute_cap",
        )
    if len(ccs) == 1 and len(names) > 1:
        ccs = ccs * len(names)
    if len(names) == 1 and len(ccs) > 1:
        names = names * len(ccs)
    return [(n or "", c or "") for n, c in zip_longest(names, ccs)]


def _read_gpus(a: Answers, cat: Catalogue, errors: list) -> Answers:
    names = list(a.values.get("gpu", []))
    ccs = list(a.values.get("compute_cap", []))
    counts = list(a.values.get("gpu_count", []))
    has_gpu = a.has_gpu
    if len(names) == 1 and names[0].lower() in steps.NO_GPU_NAMES and not any(ccs):
        names, has_gpu = [], has_gpu or "no"
    try:
        entries = _gpu_entries(names, ccs, counts)
    except AnswerError as exc:
        errors.append(exc)
        return a
    has_gpu = _gpu_presence(a, has_gpu, bool(entries), errors)
    groups = _group_gpus(entries, cat, errors)
    if len(groups) > rules.MAX_GPU_MODELS:
        errors.append(
            AnswerError(
                f"{len(groups)} different GPU models were given; at most "
                f"{rules.MAX_GPU_MODELS} are answered in one request.",
                "gpu",
            )
        )
        return a
    return a.changed(
        has_gpu=has_gpu, gpus=tuple(groups.values()), values={**a.values, "has_gpu": has_gpu}
    )


def _gpu_entries(names: list[str], ccs: list[str], counts: list) -> list[tuple[str, str, int]]:
    """(name, compute capability, count) for each GPU given; an AnswerError when the lists do not
    pair up or there are more GPUs than one request answers."""
    entries = _pairs(names, ccs)
    if len(counts) > len(entries):
        raise AnswerError(f"{len(counts)} GPU counts for {len(entries)} GPUs.", "gpu_count")
    padded = [*counts, *[1] * (len(entries) - len(counts))]  # a count not given is one
    given = [(n, c, k) for (n, c), k in zip(entries, padded, strict=True) if n or c]
    total = sum(k for _n, _c, k in given)
    if total > rules.MAX_GPUS:  # refused before any name is looked up
        raise AnswerError(
            f"{total:,} GPUs were given; at most {rules.MAX_GPUS} are accepted in one request.",
            "gpu",
        )
    return given


def _gpu_presence(a: Answers, has_gpu: str, given: bool, errors: list) -> str:
    """Whether the machine has an NVIDIA GPU ("yes" once one is given), noting contradictions."""
    if given and has_gpu == "no":
        errors.append(
            AnswerError("Contradictory answers: 'no NVIDIA GPU', but a GPU was given.", "has_gpu")
        )
    if given:
        has_gpu = "yes"
    if a.os == "darwin" and has_gpu == "yes":
        errors.append(
            AnswerError(
                "Contradictory answers: macOS with an NVIDIA GPU. There is no CUDA on macOS; on a "
                "Mac answer 'no GPU' (Apple Silicon uses the MPS build).",
                "os",
            )
        )
    return has_gpu


def _group_gpus(entries: list[tuple[str, str, int]], cat: Catalogue, errors: list) -> dict:
    """The GPUs resolved and grouped by model, counts added up; an unknown one is an error."""
    groups: dict = {}
    for name, cc, count in entries:
        try:
            gpu = _resolve(name, cc, cat)
        except AnswerError as exc:
            errors.append(exc.on("compute_cap" if cc and not name else "gpu"))
            continue
        key = (gpu_names.normalise_gpu_name(gpu.query) or gpu.compute_capability, gpu.sm)
        groups[key] = (
            replace(gpu, count=groups[key].count + count)
            if key in groups
            else replace(gpu, count=count)
        )
    return groups


def _match(name: str, cat: Catalogue) -> gpu_names.GpuMatch | None:
    """A GPU name as nvidia-smi prints it, or an architecture as the site writes it ('sm90',
    'Hopper'; naming.resolve_gpu): its compute capability; None when unknown."""
    match = gpu_names.resolve_gpu_name(name, cat)
    if match is not None:
        return match
    sms = naming.resolve_gpu(name, cat.gpu_names())
    if len(sms) > 1:
        ccs = ", ".join(naming.compute_capability_from_sm(sm) for sm in sms)
        raise AnswerError(
            f"{name!r} names several GPU architectures (compute capabilities {ccs}): give the "
            "GPU's model or its compute capability."
        )
    if not sms:
        return None
    arch = cat.architecture(sms[0])
    cc = arch.compute_capability if arch else naming.compute_capability_from_sm(sms[0])
    return gpu_names.GpuMatch(name, arch.name if arch else name, cc, sms[0], "architecture")


def _resolve(name: str, cc: str, cat: Catalogue) -> Gpu:
    match = _match(name, cat) if name else None
    if cc:
        if match and naming.version_key(match.compute_capability) != naming.version_key(cc):
            raise AnswerError(
                f"Contradictory answers: {name} is compute capability "
                f"{match.compute_capability}, but compute capability {cc} was given.",
                "compute_cap",
            )
        label = f"{name} (compute capability {cc})" if name else f"a GPU of compute capability {cc}"
        return Gpu(name, label, cc, naming.sm_from_compute_capability(cc))
    if match is None:
        raise AnswerError(
            f"Unknown GPU {name!r}: give its compute capability instead "
            "(nvidia-smi --query-gpu=compute_cap --format=csv,noheader)."
        )
    label = f"{name} (compute capability {match.compute_capability})"
    return Gpu(name, label, match.compute_capability, match.sm)


# ---------------------------------------------------------------------------------------------
# The CPU
# ---------------------------------------------------------------------------------------------


def isa_features(isa: IsaInfo) -> frozenset:
    """The CPU features a build of this ISA needs (from its compiler flags, and the seeds)."""
    try:
        needed = hardware.features_required_by(isa.compiler_flags)
    except hardware.UnknownFlag:
        needed = set()
    return frozenset(needed | {f.lower() for f in isa.required_features})


def claimed_cpu(cat: Catalogue, claims: tuple[str, ...], arch: str) -> Cpu:
    """A CPU known only by the ISAs said to run on it: what they need, and what that implies."""
    needed = frozenset().union(*(isa_features(cat.known_isa(s)) for s in claims))
    features, assumed = cpus.complete_features(needed, arch)
    return Cpu(features=features, source="isa", assumed=assumed, claims=claims)


def _one_arch_only(flags: frozenset) -> None:
    if flags & cpus.X86_ONLY_FEATURES and flags & cpus.ARM_ONLY_FEATURES:
        raise AnswerError(
            "The CPU flags mix x86 features (e.g. avx) with ARM features (e.g. "
            "asimd, sve); paste the flags of one CPU.",
            "cpu_flags",
        )


def _read_cpu(a: Answers, cat: Catalogue, errors: list) -> Answers:
    v = a.values
    tool = frozenset(v.get("cpu_features", ()))
    typed = frozenset(v.get("cpu_flags", ()))
    flags = tool or typed
    claims = tuple(v.get("isa", ()))
    target = v.get("cpu", "")
    named = None
    if not (flags or claims or target) and v.get("cpu_model") and a.os != "darwin":
        # A model name alone: its microarchitecture (cpu_models' table) gives the features
        # (macOS builds have no CPU ISA to choose).
        named = resolve_cpu_model(v["cpu_model"])
        if named is None:
            errors.append(
                AnswerError(
                    f"Unknown CPU model {v['cpu_model'][:80]!r}: give its flags "
                    "(grep -m1 flags /proc/cpuinfo) or the newest ISA it runs.",
                    "cpu_model",
                )
            )
            return a
        target = named.target
    try:
        _one_arch_only(flags)
    except AnswerError as exc:
        errors.append(exc)
        return a
    flag_arch = cpus.infer_arch(flags)
    claim_arch = cat.known_isa(claims[0]).arch if claims else ""
    implied_arch = flag_arch or claim_arch or cpus.target_arch(target)
    if a.arch:
        errors.extend(_arch_contradictions(a.arch, cat, flags, flag_arch, claims, target))
    arch = a.arch
    parts = tuple(v.get("cpu_parts", ()))
    if not arch and a.os != "darwin":
        arch = implied_arch or ("aarch64" if parts else "")
    vendor, model = v.get("cpu_vendor", ""), v.get("cpu_model", "")
    features, source, assumed = _cpu_features(cat, tool, typed, claims, target, arch)
    name, label = cpus.name_microarchitecture(flags, vendor, arch, parts, model)
    if target:
        name, label = target, cpus.label_of(target)
    if named is not None:
        source = "model"
        label = f"{named.name}, {label}" if label else named.name
    cpu = Cpu(
        features=features,
        source=source,
        given=flags,
        assumed=assumed,
        claims=claims,
        vendor=vendor,
        model=model,
        parts=parts,
        target=name,
        label=label or model,
    )
    return a.changed(arch=arch, cpu=cpu, values={**a.values, "arch": arch})


def _arch_contradictions(
    arch: str,
    cat: Catalogue,
    flags: frozenset,
    flag_arch: str,
    claims: tuple[str, ...],
    target: str,
) -> list[AnswerError]:
    """The CPU answers (flags, ISAs, a microarchitecture) that belong to another machine
    architecture than the one given."""
    errors = []
    if flag_arch and flag_arch != arch:
        only = cpus.X86_ONLY_FEATURES if flag_arch == "x86_64" else cpus.ARM_ONLY_FEATURES
        errors.append(
            AnswerError(
                f"Contradictory answers: the machine is {arch}, but the CPU flags are those of "
                f"an {flag_arch} CPU (e.g. {', '.join(sorted(flags & only)[:3])}).",
                "cpu_flags",
            )
        )
    claim_arch = cat.known_isa(claims[0]).arch if claims else ""
    if claim_arch and claim_arch != arch:
        errors.append(
            AnswerError(
                f"Contradictory answers: {cat.isa_label(claims[0])} is an {claim_arch} ISA, but "
                f"the machine is {arch}.",
                "isa",
            )
        )
    if target and cpus.target_arch(target) != arch:
        errors.append(
            AnswerError(
                f"Contradictory answers: {target} is an {cpus.target_arch(target)} CPU, but the "
                f"machine is {arch}.",
                "cpu",
            )
        )
    return errors


def _cpu_features(
    cat: Catalogue,
    tool: frozenset,
    typed: frozenset,
    claims: tuple[str, ...],
    target: str,
    arch: str,
) -> tuple[frozenset, str, frozenset]:
    """(features, source, assumed) from the best answer given: a tool's flags as they are, typed
    flags completed, the ISAs said to run, a named microarchitecture, or nothing."""
    if tool:
        return tool, "tool", frozenset()
    if typed:
        features, assumed = cpus.complete_features(typed, arch)
        return features, "flags", assumed
    if claims:
        claimed = claimed_cpu(cat, claims, arch)
        return claimed.features, claimed.source, claimed.assumed
    if target:
        return cpus.target_features(target), "microarchitecture", frozenset()
    return frozenset(), "", frozenset()


# ---------------------------------------------------------------------------------------------
# Constraints
# ---------------------------------------------------------------------------------------------


def matches(variant: object | None, branch: BranchInfo | None, key: str, value: str) -> bool:
    """Whether a build meets one constraint (rules.CONSTRAINTS): its branch's or its own
    attribute; a record that is not known meets it."""
    rule = rules.constraint(key)
    record = None if rule is None else (branch if rule.on == "branch" else variant)
    if rule is None or record is None:
        return True
    have = str(getattr(record, rule.attribute, "") or "")
    if rule.how == "exact":
        return have == value
    want = naming.version_key(value)
    return bool(want) and naming.version_key(have)[: len(want)] == want


def constraint_label(key: str, value: str) -> str:
    rule = rules.constraint(key)
    return f"{rule.label if rule else key} {value}"


def _check_constraints(a: Answers, cat: Catalogue) -> list[AnswerError]:
    """Constraints no build of the library's repositories satisfies are bad answers."""
    library = a.library or rules.DEFAULT_LIBRARY
    try:
        branches = _constrained_branches(a, cat, library)
    except AnswerError as exc:
        return [exc]
    if not a.constraints:  # nothing to check: the variants are not read (nor built)
        return []
    keys = {b.key for b in branches}
    variants = [v for v in cat.variants if v.library == library and v.branch_key in keys]
    errors = []
    for key, value in a.constraints.items():
        rule = rules.constraint(key)
        if rule is None or key in ("repository", "branch"):
            continue
        records = branches if rule.on == "branch" else variants
        error = _version_constraint_error(key, value, records)
        if error is not None:
            errors.append(error)
    if not errors and a.constraints:
        if not any(_fits(b, variants, a.constraints) for b in branches):
            names = list(a.constraints)
            text = " with ".join(constraint_label(k, a.constraints[k]) for k in names)
            errors.append(
                AnswerError(f"No branch combines {text}; relax one of these constraints.", names[0])
            )
    return errors


def _fits(branch: BranchInfo, variants: list, constraints: dict) -> bool:
    """Whether a branch meets every constraint (one of its builds those on builds)."""
    if not all(matches(None, branch, k, v) for k, v in constraints.items()):
        return False
    on_builds = any((r := rules.constraint(k)) and r.on == "variant" for k in constraints)
    return not on_builds or any(
        all(matches(v, branch, k, value) for k, value in constraints.items())
        for v in variants
        if v.branch_key == branch.key
    )


def _constrained_branches(a: Answers, cat: Catalogue, library: str) -> list:
    """The branches that build the library in the repository and branch asked for (all of its
    repositories' branches when none is); an AnswerError when no such repository or branch."""
    repos = set(rules.LIBRARY_REPOSITORIES[library])
    if "repository" in a.constraints:
        repo = a.constraints["repository"]
        known = {b.repository for b in cat.branches}
        if repo not in known:
            raise AnswerError(
                f"Unknown repository {repo!r}: choose one of {', '.join(sorted(known))}.",
                "repository",
            )
        if repo not in repos:
            built = sorted({v.library for v in cat.variants if v.repository == repo})
            raise AnswerError(
                f"{repo} does not build {library} (it builds {', '.join(built) or 'nothing yet'}).",
                "repository",
            )
        repos = {repo}
    branches = [b for b in cat.branches if b.repository in repos]
    if "branch" in a.constraints:
        name = a.constraints["branch"]
        if not any(b.name == name for b in branches):
            names = sorted({b.name for b in branches})
            raise AnswerError(
                f"No branch {name!r} builds {library}; branches: {', '.join(names)}.", "branch"
            )
    return branches


def _version_constraint_error(key: str, value: str, records: list) -> AnswerError | None:
    """A version constraint that is no version, or that none of the records (branches or
    builds, as its rule says) satisfies."""
    if not naming.version_key(value):
        return AnswerError(f"{constraint_label(key, value)} is not a version like 3.12.", key)
    if any(matches(r, r, key, value) for r in records):
        return None
    rule = rules.constraint(key)
    attr = rule.attribute if rule else key
    have = sorted(
        {getattr(r, attr) for r in records if getattr(r, attr, "")}, key=naming.version_key
    )
    return AnswerError(
        f"No branch builds {constraint_label(key, value)}; available: {', '.join(have) or 'none'}.",
        key,
    )
