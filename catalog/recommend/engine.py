"""`recommend(answers, catalogue)`: walk the decision tree (catalog.recommend.tree) for a machine.

Answers are a plain mapping (from the wizard's form, the API's JSON, the CLI's options, or
`detect(...).answers()`):

    os                  "linux" | "darwin"
    arch                "x86_64" | "aarch64" (inferred from the CPU flags on Linux when absent)
    has_gpu             "yes" | "no" (implied "yes" by gpu / compute_capability / gpus)
    gpu                 a GPU name as nvidia-smi prints it ("NVIDIA H100 80GB HBM3")
    compute_capability  "9.0" (wins over the name; both given and disagreeing is an error)
    gpus                [{"name": ..., "compute_capability": ...}, ...] for several GPUs
    driver_version      "580.159.04"
    driver_cuda         newest CUDA the driver supports (nvidia-smi's "CUDA Version")
    cpu_flags           CPU features as /proc/cpuinfo names them (list or space-separated)
    isa                 an ISA slug the user believes the CPU has; the flags win when both given
    cpu_vendor, cpu_model, cpu_parts   optional facts for naming the CPU
    workload            "general" | "bf16-training" | "int8-inference" (default general)
    library             "pytorch" | "torchvision" | "torchaudio" (default pytorch)
    repository, branch, python, pytorch, vllm   optional constraints

The result is a `Recommendation`; bad or contradictory answers give `errors`, never an exception.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from catalog import hardware, naming
from catalog.recommend.detect import (
    ARM_ONLY_FEATURES,
    X86_ONLY_FEATURES,
    infer_arch,
    name_microarchitecture,
)
from catalog.recommend import gpus as gpu_names
from catalog.recommend import tree
from catalog.recommend.snapshot import Catalogue, VariantInfo


LIBRARY_NAMES = {"pytorch": "PyTorch", "torchvision": "torchvision", "torchaudio": "torchaudio"}

# ---------------------------------------------------------------------------------------------
# Result types
# ---------------------------------------------------------------------------------------------

@dataclass
class Pick:
    """The recommended variant."""

    pname: str
    repository: str
    branch: str
    library: str
    backend: str
    platform: str
    python_version: str
    cuda_version: str = ""
    sm: str = ""
    isa: str = ""
    status: str = ""
    pytorch_version: str = ""

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Alternative:
    pname: str
    repository: str
    branch: str
    why: str

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Recommendation:
    variant: Pick | None = None
    reasons: list = field(default_factory=list)  # one plain sentence per step taken
    warnings: list = field(default_factory=list)
    alternatives: list = field(default_factory=list)  # [Alternative]
    detected: dict = field(default_factory=dict)  # what the answers say about the machine
    errors: list = field(default_factory=list)  # bad or contradictory answers
    per_gpu: list = field(default_factory=list)  # [Recommendation], one per distinct GPU model
    gpu: str = ""  # the GPU model a per-GPU recommendation is for
    next_step: str = ""  # id of the first unanswered required step, when that is the error

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "variant": self.variant.to_dict() if self.variant else None,
            "reasons": list(self.reasons),
            "warnings": list(self.warnings),
            "alternatives": [a.to_dict() for a in self.alternatives],
            "detected": self.detected,
            "errors": list(self.errors),
            "per_gpu": [r.to_dict() for r in self.per_gpu],
            "gpu": self.gpu,
            "next_step": self.next_step,
        }

    def _warn(self, message: str):
        if message not in self.warnings:
            self.warnings.append(message)

    def _alt(self, variant: VariantInfo, why: str):
        if self.variant and variant.pname == self.variant.pname and variant.branch == self.variant.branch and variant.repository == self.variant.repository:
            return
        for alt in self.alternatives:
            if (alt.pname, alt.repository, alt.branch) == (variant.pname, variant.repository, variant.branch):
                return
        self.alternatives.append(Alternative(variant.pname, variant.repository, variant.branch, why))


# ---------------------------------------------------------------------------------------------
# Normalised answers
# ---------------------------------------------------------------------------------------------

@dataclass
class Gpu:
    query: str  # as given
    label: str  # for sentences
    compute_capability: str
    sm: str


@dataclass
class Answers:
    os: str = ""
    arch: str = ""
    has_gpu: bool | None = None
    gpus: list = field(default_factory=list)  # [Gpu]
    driver: str = ""
    driver_cuda: str = ""
    features: frozenset | None = None  # None: not given
    isa_claim: str = ""
    cpu_vendor: str = ""
    cpu_model: str = ""
    cpu_parts: tuple = ()
    workload: str = "general"
    workload_given: bool = False
    library: str = ""
    constraints: dict = field(default_factory=dict)  # key -> value, BRANCH_CONSTRAINTS keys

    @property
    def driver_major(self) -> int | None:
        key = naming.version_key(self.driver)
        return key[0] if key else None

    @property
    def platform(self) -> str:
        return f"{self.arch}-{self.os}"

    def cpu_label(self) -> str:
        _, label = name_microarchitecture(
            self.features or (), self.cpu_vendor, self.arch, self.cpu_parts, self.cpu_model
        )
        return label or self.cpu_model

    def cpu_target(self) -> str:
        target, _ = name_microarchitecture(
            self.features or (), self.cpu_vendor, self.arch, self.cpu_parts, self.cpu_model
        )
        return target


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        value = " ".join(str(v) for v in value)
    return str(value).strip()


def _features(value):
    if value is None or value == "":
        return None
    if isinstance(value, str):
        items = value.replace(",", " ").split()
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = [str(v) for v in value]
    else:
        raise ValueError(f"CPU flags must be text or a list, not {type(value).__name__}.")
    items = {i.strip().lower() for i in items if i.strip()}
    # A pasted `lscpu` line keeps its "Flags:" label.
    items -= {"flags:", "features:", "flags", "features", ":"}
    return frozenset(items)


def _normalise(raw, cat: Catalogue) -> tuple[Answers, list[str]]:
    errors: list[str] = []
    a = Answers()
    if raw is None:
        raw = {}
    if not hasattr(raw, "get"):
        return a, [f"Answers must be a mapping of question to answer, not {type(raw).__name__}."]

    # -- os / arch ---------------------------------------------------------------------------
    os_value = _text(raw.get("os")).lower()
    if os_value:
        a.os = tree.OS_ALIASES.get(os_value, "")
        if not a.os:
            if os_value.startswith("win"):
                errors.append("There are no Windows builds: choose linux (e.g. under WSL2) or darwin (macOS).")
            else:
                errors.append(f"Unknown operating system {os_value!r}: choose linux or darwin (macOS).")
    arch_value = _text(raw.get("arch")).lower()
    if arch_value:
        a.arch = tree.ARCH_ALIASES.get(arch_value, "")
        if not a.arch:
            errors.append(f"Unknown CPU architecture {arch_value!r}: choose x86_64 or aarch64 (arm64).")

    # -- CPU -----------------------------------------------------------------------------------
    try:
        a.features = _features(raw.get("cpu_flags"))
    except ValueError as exc:
        errors.append(str(exc))
    a.cpu_vendor = _text(raw.get("cpu_vendor"))
    a.cpu_model = _text(raw.get("cpu_model"))
    parts = raw.get("cpu_parts") or ()
    a.cpu_parts = tuple(str(p).lower() for p in ([parts] if isinstance(parts, str) else parts))
    isa = _text(raw.get("isa")).lower().replace("-", "_").replace(".", "_")
    if isa:
        info = cat.isa(isa)
        if info is None:
            errors.append(
                f"Unknown CPU ISA {isa!r}: choose one of {', '.join(i.slug for i in cat.isas)}."
            )
        else:
            a.isa_claim = isa
    flag_arch = infer_arch(a.features or ())
    if a.features and a.features & X86_ONLY_FEATURES and a.features & ARM_ONLY_FEATURES:
        errors.append("The CPU flags mix x86 features (e.g. avx) with ARM features (e.g. asimd, sve); paste the flags of one CPU.")
    if a.arch and flag_arch and flag_arch != a.arch:
        errors.append(
            f"Contradictory answers: the machine is {a.arch}, but the CPU flags are those of an "
            f"{flag_arch} CPU (e.g. {', '.join(sorted(a.features & (X86_ONLY_FEATURES if flag_arch == 'x86_64' else ARM_ONLY_FEATURES))[:3])})."
        )
    if a.isa_claim:
        claim_arch = cat.isa(a.isa_claim).arch
        if a.arch and claim_arch != a.arch:
            errors.append(
                f"Contradictory answers: {cat.isa(a.isa_claim).label} is an {claim_arch} ISA, but the machine is {a.arch}."
            )
    if not a.arch and a.os != "darwin":
        a.arch = flag_arch or (cat.isa(a.isa_claim).arch if a.isa_claim else "") or ("aarch64" if a.cpu_parts else "")

    # -- GPU -------------------------------------------------------------------------------------
    has_gpu = _text(raw.get("has_gpu")).lower()
    if has_gpu:
        if has_gpu in tree.YES:
            a.has_gpu = True
        elif has_gpu in tree.NO:
            a.has_gpu = False
        else:
            errors.append(f"Unknown answer {has_gpu!r} to 'Do you have an NVIDIA GPU?': answer yes or no.")
    # `gpus` (several, e.g. detected) wins; otherwise the single `gpu` / `compute_capability`.
    entries = []
    raw_gpus = raw.get("gpus")
    if raw_gpus:
        if isinstance(raw_gpus, (list, tuple)):
            for g in raw_gpus:
                if isinstance(g, dict):
                    entries.append((_text(g.get("name")), _text(g.get("compute_capability"))))
                elif isinstance(g, str):
                    entries.append((g.strip(), ""))
        else:
            errors.append("'gpus' must be a list of {name, compute_capability}.")
    if not entries:
        entries = [(_text(raw.get("gpu")), _text(raw.get("compute_capability")))]
    entries = [e for e in entries if e[0] or e[1]]
    if entries and a.has_gpu is False:
        errors.append("Contradictory answers: 'no NVIDIA GPU', but a GPU was given.")
    if entries:
        a.has_gpu = True
    if a.os == "darwin" and (a.has_gpu or entries):
        errors.append(
            "Contradictory answers: macOS with an NVIDIA GPU. There is no CUDA on macOS; "
            "on a Mac answer 'no GPU' (Apple Silicon uses the MPS build)."
        )
    for name, cc in entries:
        gpu, error = _resolve_gpu(name, cc, cat)
        if error:
            errors.append(error)
        else:
            a.gpus.append(gpu)
    driver = _text(raw.get("driver_version"))
    if driver:
        if len(naming.version_key(driver)) < 1 or not driver.replace(".", "").isdigit():
            errors.append(f"Driver version {driver!r} is not a version like 550.54.15.")
        else:
            a.driver = driver
    driver_cuda = _text(raw.get("driver_cuda"))
    if driver_cuda:
        if len(naming.version_key(driver_cuda)) < 2:
            errors.append(f"CUDA version {driver_cuda!r} is not a version like 12.8.")
        else:
            a.driver_cuda = driver_cuda

    # -- workload / library / constraints ----------------------------------------------------------
    workload = _text(raw.get("workload")).lower()
    if workload:
        if workload not in tree.ISA_PREFERENCE:
            errors.append(
                f"Unknown workload {workload!r}: choose one of {', '.join(tree.ISA_PREFERENCE)}."
            )
        else:
            a.workload, a.workload_given = workload, True
    library = _text(raw.get("library")).lower()
    if library:
        if library not in tree.LIBRARY_REPOSITORIES:
            errors.append(f"Unknown library {library!r}: choose pytorch, torchvision or torchaudio.")
        else:
            a.library = library
    for key, attr, how, label in tree.BRANCH_CONSTRAINTS:
        value = _text(raw.get(key))
        if value:
            a.constraints[key] = value
    errors.extend(_check_constraints(a, cat))
    return a, errors


def _resolve_gpu(name: str, cc: str, cat: Catalogue) -> tuple[Gpu | None, str]:
    if cc and not gpu_names.is_compute_capability(cc):
        return None, f"Compute capability {cc!r} is not of the form MAJOR.MINOR, e.g. 8.6."
    match = gpu_names.resolve_gpu_name(name, cat) if name else None
    if cc:
        if match and naming.version_key(match.compute_capability) != naming.version_key(cc):
            return None, (
                f"Contradictory answers: {name} is compute capability {match.compute_capability}, "
                f"but compute capability {cc} was given."
            )
        label = f"{name} (compute capability {cc})" if name else f"a GPU of compute capability {cc}"
        return Gpu(name, label, cc, naming.sm_from_compute_capability(cc)), ""
    if match is None:
        return None, (
            f"Unknown GPU {name!r}: give its compute capability instead "
            "(nvidia-smi --query-gpu=compute_cap --format=csv,noheader)."
        )
    return Gpu(name, f"{name} (compute capability {match.compute_capability})",
               match.compute_capability, match.sm), ""


def _branch_matches(branch, key, value) -> bool:
    for ckey, attr, how, _label in tree.BRANCH_CONSTRAINTS:
        if ckey != key:
            continue
        have = str(getattr(branch, attr, "") or "")
        if how == "exact":
            return have == value
        want = naming.version_key(value)
        return bool(want) and naming.version_key(have)[: len(want)] == want
    return True


def _constraint_label(key, value) -> str:
    for ckey, _attr, _how, label in tree.BRANCH_CONSTRAINTS:
        if ckey == key:
            return f"{label} {value}" if key not in ("branch", "repository") else f"{label} {value}"
    return value


def _check_constraints(a: Answers, cat: Catalogue) -> list[str]:
    """Constraints no branch of the library's repositories satisfies are bad answers."""
    errors = []
    library = a.library or tree.DEFAULT_LIBRARY
    repos = set(tree.LIBRARY_REPOSITORIES[library])
    if "repository" in a.constraints:
        repo = a.constraints["repository"]
        known = {b.repository for b in cat.branches}
        if repo not in known:
            return [f"Unknown repository {repo!r}: choose one of {', '.join(sorted(known))}."]
        if repo not in repos:
            built = sorted({v.library for v in cat.variants if v.repository == repo})
            return [f"{repo} does not build {library} (it builds {', '.join(built) or 'nothing yet'})."]
        repos = {repo}
    branches = [b for b in cat.branches if b.repository in repos]
    if "branch" in a.constraints:
        name = a.constraints["branch"]
        if not any(b.name == name for b in branches):
            names = sorted({b.name for b in branches})
            return [f"No branch {name!r} builds {library}; branches: {', '.join(names)}."]
    for key, value in a.constraints.items():
        if key in ("repository", "branch"):
            continue
        if not naming.version_key(value):
            errors.append(f"{_constraint_label(key, value)} is not a version like 3.12.")
            continue
        if not any(_branch_matches(b, key, value) for b in branches):
            attr = next(attr for k, attr, _h, _l in tree.BRANCH_CONSTRAINTS if k == key)
            have = sorted({getattr(b, attr) for b in branches if getattr(b, attr, "")}, key=naming.version_key)
            errors.append(
                f"No branch builds {_constraint_label(key, value)}; available: {', '.join(have) or 'none'}."
            )
    if not errors and a.constraints:
        keys = [k for k in a.constraints]
        if not any(all(_branch_matches(b, k, a.constraints[k]) for k in keys) for b in branches):
            text = " with ".join(_constraint_label(k, a.constraints[k]) for k in keys)
            errors.append(f"No branch combines {text}; relax one of these constraints.")
    return errors


# ---------------------------------------------------------------------------------------------
# The engine
# ---------------------------------------------------------------------------------------------

def recommend(answers, catalogue: Catalogue) -> Recommendation:
    """Walk the tree for these answers; never raises."""
    try:
        return _recommend(answers, catalogue)
    except Exception as exc:  # pragma: no cover - a bug must not become a 500
        return Recommendation(errors=[f"The engine could not decide ({type(exc).__name__}: {exc})."])


def _tree_view(a: Answers, raw) -> dict:
    """The answers as the tree's step conditions read them."""
    view = {k: raw.get(k) for k in tree.ANSWER_KEYS if raw.get(k) not in (None, "")}
    view["os"] = a.os or view.get("os", "")
    if a.arch:
        view["arch"] = a.arch
    if a.has_gpu is not None:
        view["has_gpu"] = "yes" if a.has_gpu else "no"
    return view


def _recommend(raw, cat: Catalogue) -> Recommendation:
    a, errors = _normalise(raw, cat)
    rec = Recommendation(detected=_detected(a, cat))
    if errors:
        rec.errors = errors
        return rec
    missing = tree.missing_required(_tree_view(a, raw))
    if missing:
        step = missing[0]
        rec.errors.append(f"Answer this first: {step.question}")
        rec.next_step = step.id
        return rec
    if a.os == "darwin":
        _darwin(a, cat, rec)
        return rec
    rec.reasons.append(f"You are on Linux on {a.arch}, so the {a.arch}-linux builds apply.")
    if not a.gpus:
        rec.reasons.append("There is no NVIDIA GPU, so a CPU-only build fits.")
        _select(a, cat, rec, backend="cpu", sm="", hardware=f"CPU-only {a.arch}")
        return rec
    models = _distinct_models(a.gpus)
    if len(models) == 1:
        gpu, count = models[0]
        _gpu_path(a, gpu, cat, rec, count)
        return rec
    # Several distinct GPU models: one recommendation each.
    for gpu, count in models:
        sub = Recommendation(detected=rec.detected, gpu=gpu.label)
        sub.reasons.append(rec.reasons[0])
        _gpu_path(a, gpu, cat, sub, count)
        rec.per_gpu.append(sub)
    names = ", ".join(f"{g.query or g.label}" + (f" ×{n}" if n > 1 else "") for g, n in models)
    picks = {(s.variant.repository, s.variant.branch, s.variant.pname) if s.variant else None for s in rec.per_gpu}
    if len(picks) == 1 and None not in picks:
        first = rec.per_gpu[0]
        rec.variant = first.variant
        rec.reasons = [f"This machine has {len(models)} GPU models ({names}); they share one architecture, so one build serves them all."] + first.reasons
        rec.warnings = list(first.warnings)
        rec.alternatives = list(first.alternatives)
    else:
        rec.reasons.append(
            f"This machine has {len(models)} different GPU models ({names}); a CUDA build targets "
            "one GPU architecture, so there is one recommendation per GPU model."
        )
        rec._warn("Several GPU models: install the build that matches the GPU each process uses "
                  "(CUDA_VISIBLE_DEVICES).")
    return rec


def _distinct_models(gpus: list[Gpu]) -> list[tuple[Gpu, int]]:
    seen: dict = {}
    for gpu in gpus:
        key = (gpu_names.normalise_gpu_name(gpu.query) or gpu.compute_capability, gpu.sm)
        if key in seen:
            seen[key][1] += 1
        else:
            seen[key] = [gpu, 1]
    return [(g, n) for g, n in seen.values()]


def _detected(a: Answers, cat: Catalogue) -> dict:
    out = {"os": a.os, "arch": a.arch}
    if a.features is not None or a.cpu_model:
        target = a.cpu_target()
        out["cpu"] = {
            "model": a.cpu_model,
            "vendor": a.cpu_vendor,
            "microarchitecture": target,
            "label": a.cpu_label(),
            "isa_features": sorted(
                f for f in (a.features or ())
                if any(f in _isa_features(i) for i in cat.isas)
            ),
        }
    if a.gpus:
        out["gpus"] = []
        for g in a.gpus:
            arch = cat.architecture(g.sm)
            out["gpus"].append({
                "name": g.query,
                "compute_capability": g.compute_capability,
                "sm": g.sm,
                "architecture": arch.name if arch else gpu_names.family_for_cc(g.compute_capability),
                "in_catalogue": arch is not None,
            })
    if a.driver:
        out["driver_version"] = a.driver
    if a.driver_cuda:
        out["driver_cuda"] = a.driver_cuda
    return out


def _isa_features(isa) -> set[str]:
    try:
        needed = hardware.features_required_by(isa.compiler_flags)
    except hardware.UnknownFlag:
        needed = set()
    return needed | {f.lower() for f in isa.required_features}


def _isa_missing(isa, features) -> set[str]:
    return _isa_features(isa) - set(features or ())


def _cpu_features(a: Answers, cat: Catalogue):
    """The features to judge ISAs by: the flags; else what the claimed ISA needs."""
    if a.features is not None:
        return a.features
    if a.isa_claim:
        return frozenset(_isa_features(cat.isa(a.isa_claim)))
    return frozenset()


def _darwin(a: Answers, cat: Catalogue, rec: Recommendation):
    if a.arch == "x86_64":
        rec.reasons.append(
            "There is no build for Intel Macs: the only macOS build is the Apple Silicon MPS one "
            "(aarch64-darwin); the CUDA and CPU-only builds are for Linux."
        )
        # Nearest usable: a Linux CPU-only build for this CPU (in a VM or container).
        linux = replace(a, os="linux", has_gpu=False, gpus=[])
        if a.features is None and not a.isa_claim:
            linux.isa_claim = "avx2" if cat.isa("avx2") else ""
        probe = Recommendation()
        _select(linux, cat, probe, backend="cpu", sm="", hardware="CPU-only x86_64")
        if probe.variant:
            why = "the Linux CPU-only build for this Mac's CPU, to run in a Linux VM or container"
            if a.features is None:
                why += " (if its CPU has AVX2: Haswell, 2013, or newer)"
            rec.alternatives.append(Alternative(probe.variant.pname, probe.variant.repository, probe.variant.branch, why))
        return
    rec.reasons.append("macOS on Apple Silicon (arm64): the Metal (MPS) build is the macOS build.")
    _select(a, cat, rec, backend="mps", sm="", hardware="Apple Silicon (MPS)")


def _gpu_path(a: Answers, gpu: Gpu, cat: Catalogue, rec: Recommendation, count: int = 1):
    rec.reasons.append(
        "You have an NVIDIA GPU" + (f" ({count} of this model)" if count > 1 else "") + ", so a CUDA build fits."
    )
    arch = cat.architecture(gpu.sm)
    built = sorted({v.sm for v in cat.variants if v.backend == "cuda"},
                   key=lambda sm: naming.version_key(naming.compute_capability_from_sm(sm)))
    if arch is None or not any(v.sm == gpu.sm for v in cat.variants):
        family = arch.name if arch else gpu_names.family_for_cc(gpu.compute_capability)
        ccs = ", ".join(naming.compute_capability_from_sm(sm) for sm in built)
        rec.reasons.append(
            f"There is no build for {gpu.label}, a {family} GPU: the catalogue builds for compute "
            f"capabilities {ccs}, and a CUDA build for one architecture does not run on another."
        )
        _cpu_alternative(a, cat, rec, "no build exists for this GPU; this CPU-only build runs on the machine's CPU")
        return
    rec.reasons.append(f"{gpu.label} is architecture {arch.sm.upper()} ({arch.name}).")
    if a.driver_major is not None and arch.min_driver and a.driver_major < arch.min_driver:
        rec._warn(
            f"Driver {a.driver} is older than the NVIDIA {arch.min_driver} that {arch.sm.upper()} "
            f"({arch.name}) needs; update the driver to {arch.min_driver} or newer."
        )
    _select(a, cat, rec, backend="cuda", sm=gpu.sm, hardware=f"{arch.sm.upper()} ({arch.name})")
    if rec.variant is None and not rec.alternatives:
        _cpu_alternative(a, cat, rec, "no CUDA build fits; this CPU-only build runs on the machine's CPU")


def _cpu_alternative(a: Answers, cat: Catalogue, rec: Recommendation, why: str):
    if a.features is None and not a.isa_claim:
        return
    probe = Recommendation()
    _select(replace(a, gpus=[], has_gpu=False), cat, probe, backend="cpu", sm="", hardware=f"CPU-only {a.arch}")
    if probe.variant:
        rec.alternatives.append(
            Alternative(probe.variant.pname, probe.variant.repository, probe.variant.branch, why)
        )


def _summarise_hardware(variants) -> str:
    """'SM61 + avx, SM75 + avx' for few variants; 'SM61, SM75, …, CPU-only' for many."""
    def cc(sm):
        return naming.version_key(naming.compute_capability_from_sm(sm)) if sm else (99,)

    combos = sorted({(v.sm, v.isa, v.backend) for v in variants}, key=lambda c: (cc(c[0]), c[1]))
    if len(combos) <= 6:
        return ", ".join(
            f"{sm.upper()} + {isa}" if sm else (f"CPU-only {isa}" if backend == "cpu" else "Apple MPS")
            for sm, isa, backend in combos
        )
    groups = sorted({v.sm for v in variants if v.sm}, key=cc)
    labels = [sm.upper() for sm in groups]
    if any(v.backend == "cpu" for v in variants):
        labels.append("CPU-only")
    if any(v.backend == "mps" for v in variants):
        labels.append("Apple MPS")
    return ", ".join(labels)


def _select(a: Answers, cat: Catalogue, rec: Recommendation, backend: str, sm: str, hardware: str):
    """Pick library → repository → constraints → runnable ISA → branch → ISA → CUDA."""
    platform = "aarch64-darwin" if backend == "mps" else f"{a.arch}-linux"
    library = a.library or tree.DEFAULT_LIBRARY
    pool = [v for v in cat.variants if v.backend == backend and v.sm == sm and v.platform == platform]
    if not pool:
        rec.reasons.append(f"There is no build for {hardware} on {platform}.")
        if backend == "cuda":
            _cpu_alternative(a, cat, rec, f"no {hardware} build exists for {platform}; this CPU-only build runs on the machine's CPU")
        return

    # Library and repository.
    repos = tree.LIBRARY_REPOSITORIES[library]
    lib_pool = [v for v in pool if v.library == library and v.repository in repos]
    if not lib_pool:
        everywhere = [v for v in cat.variants if v.library == library]
        rec.reasons.append(
            f"There is no {library} build for {hardware}"
            + (f": {library} is built only for {_summarise_hardware(everywhere)}." if everywhere else ".")
        )
        probe = Recommendation()
        _select(replace(a, library="pytorch", constraints={k: v for k, v in a.constraints.items() if k not in ("repository", "branch")}),
                cat, probe, backend, sm, hardware)
        if probe.variant:
            rec.alternatives.append(Alternative(
                probe.variant.pname, probe.variant.repository, probe.variant.branch,
                f"the PyTorch build for this hardware (no {library} build exists for {hardware})",
            ))
        return
    # Constraints.
    constrained = [v for v in lib_pool if all(_branch_matches(cat.branch_of(v), k, val) for k, val in a.constraints.items() if cat.branch_of(v))]
    if not constrained:
        text = ", ".join(_constraint_label(k, v) for k, v in a.constraints.items())
        branches = sorted({cat.branch_of(v).label for v in lib_pool if cat.branch_of(v)})
        rec.reasons.append(
            f"{hardware} is built on {', '.join(branches)}, and none of these matches {text}."
        )
        probe = Recommendation()
        _select(replace(a, constraints={}), cat, probe, backend, sm, hardware)
        if probe.variant:
            rec.alternatives.append(Alternative(
                probe.variant.pname, probe.variant.repository, probe.variant.branch,
                f"the build for this hardware without the {text} constraint",
            ))
        return

    # Runnable ISAs.
    features = _cpu_features(a, cat)
    pref = list(tree.ISA_PREFERENCE[a.workload].get(a.arch, ()))
    arch_isas = sorted(cat.isas_for(a.arch), key=lambda i: -i.rank)
    order = pref + [i.slug for i in arch_isas if i.slug not in pref]
    runnable_isas = {i.slug for i in cat.isas if i.arch == a.arch and not _isa_missing(i, features)}
    if backend == "mps":
        runnable = constrained
    else:
        runnable = [v for v in constrained if v.isa in runnable_isas]
        _cpu_reason(a, cat, rec, features, runnable_isas)
        if not runnable:
            present = sorted({v.isa for v in constrained}, key=lambda s: order.index(s) if s in order else 99)
            lacking = {s: _isa_missing(cat.isa(s), features) for s in present if cat.isa(s)}
            detail = "; ".join(f"{cat.isa(s).label} needs {', '.join(sorted(m))}" for s, m in lacking.items())
            rec.reasons.append(
                f"{hardware} is built only with {', '.join(cat.isa(s).label if cat.isa(s) else s for s in present)}, "
                f"and this CPU runs none of them ({detail})."
            )
            return

    def isa_rank(v):
        return order.index(v.isa) if v.isa in order else len(order)

    # Branch choice (tree.BRANCH_ORDER).
    by_branch: dict = {}
    for v in runnable:
        by_branch.setdefault(v.branch_key, []).append(v)
    default_keys = {b.key for b in cat.branches if b.is_default}

    def branch_sort(key):
        b = cat.branch(*key)
        best = min(isa_rank(v) for v in by_branch[key])
        return (
            best if backend != "mps" else 0,
            0 if key in default_keys else 1,
            repos.index(key[0]) if key[0] in repos else 99,
            b.preference if b else 999,
            key[1],
        )

    keys = sorted(by_branch, key=branch_sort)
    chosen_key = keys[0]
    branch = cat.branch(*chosen_key)
    in_branch = by_branch[chosen_key]
    best_rank = min(isa_rank(v) for v in in_branch)
    isa = next((v.isa for v in in_branch if isa_rank(v) == best_rank), "")
    same_isa = [v for v in in_branch if v.isa == isa]

    # ISA reason (workload step).
    if backend != "mps":
        _isa_reason(a, cat, rec, isa, pref, runnable_isas, {v.isa for v in in_branch}, hardware)
    # Branch reason (constraints step).
    _branch_reason(a, cat, rec, branch, lib_pool, constrained, default_keys, hardware, library)

    # CUDA version.
    pick = _pick_cuda(a, cat, rec, branch, same_isa, backend)
    rec.variant = Pick(
        pname=pick.pname, repository=pick.repository, branch=pick.branch, library=pick.library,
        backend=pick.backend, platform=pick.platform, python_version=pick.python_version,
        cuda_version=pick.cuda_version, sm=pick.sm, isa=pick.isa, status=pick.status,
        pytorch_version=branch.pytorch_version if branch else "",
    )
    if pick.status in ("planned", "failed"):
        rec._warn(f"{pick.pname} on {pick.branch} has status '{pick.status}': there is no successful build of it yet.")
    if backend == "cuda" and branch and branch.min_driver and a.driver_major is not None and a.driver_major < branch.min_driver:
        rec._warn(
            f"Driver {a.driver} is older than the NVIDIA {branch.min_driver} that {branch.repository} "
            f"{branch.name} needs; update the driver to {branch.min_driver} or newer."
        )

    # Alternatives: specialised ISAs, the general one, the same build on a newer branch.
    if backend != "mps":
        for slug, why in tree.SPECIALISED_ISAS.items():
            if slug == isa or slug not in runnable_isas:
                continue
            for v in in_branch:
                if v.isa == slug and v.cuda_version == pick.cuda_version:
                    rec._alt(v, f"the {cat.isa(slug).label} build, {why}")
        general = next((s for s in tree.ISA_PREFERENCE["general"].get(a.arch, ()) if s in runnable_isas and any(v.isa == s for v in in_branch)), "")
        if general and general != isa:
            for v in in_branch:
                if v.isa == general and v.cuda_version == pick.cuda_version:
                    rec._alt(v, f"the {cat.isa(general).label} build for general FP32 training and inference")
    _newer_branch_alternative(a, cat, rec, branch, pick, runnable)


def _cpu_reason(a, cat, rec, features, runnable_isas):
    label = a.cpu_label()
    who = f"The CPU ({label})" if label else "The CPU"
    isas = cat.isas_for(a.arch)
    can = [i.label for i in isas if i.slug in runnable_isas]
    cannot = [(i, sorted(_isa_missing(i, features))) for i in isas if i.slug not in runnable_isas]
    source = "its flags" if a.features is not None else f"your answer ({cat.isa(a.isa_claim).label})" if a.isa_claim else "the answers"
    text = f"{who} can run, going by {source}, the {', '.join(can)} builds" if can else f"{who} can run none of the {a.arch} builds"
    if cannot:
        text += "; not " + ", ".join(f"{i.label} (it lacks {', '.join(m)})" for i, m in cannot)
    rec.reasons.append(text + ".")
    # The flags win over what the user believed, and over prose in the guides.
    if a.isa_claim and a.features is not None and a.isa_claim not in runnable_isas:
        claim = cat.isa(a.isa_claim)
        missing = sorted(_isa_missing(claim, a.features))
        rec._warn(
            f"You said the CPU has {claim.label}, but its flags lack {', '.join(missing)}: "
            f"the {claim.label} build would crash with 'illegal instruction', so the flags win."
        )
    target = a.cpu_target()
    caveat = tree.CPU_CAVEATS.get(target)
    if caveat and any(i.slug not in runnable_isas for i in isas):
        rec._warn(caveat + " The recommendation follows the CPU flags.")
        return
    names = _cpu_names(label)
    for i in isas:
        if i.slug in runnable_isas or not i.hardware:
            continue
        hits = [n for n in names if n.lower() in i.hardware.lower()]
        if hits:
            rec._warn(
                f"The {i.label} guide lists {hits[0]} among its CPUs, but this CPU's flags lack "
                f"{', '.join(sorted(_isa_missing(i, features)))}; the flags win."
            )


def _cpu_names(label: str) -> list[str]:
    """'Neoverse V1 (AWS Graviton3)' -> ['Neoverse V1', 'AWS Graviton3', 'Graviton3']."""
    if not label:
        return []
    main, _, rest = label.partition(" (")
    names = [main.strip()] + [n.strip() for n in rest.rstrip(")").split(",") if n.strip()]
    names += [n.split(" ", 1)[1] for n in names if n.startswith(("AWS ", "NVIDIA ", "Intel ", "AMD "))]
    return [n for n in names if len(n) >= 4]


def _isa_reason(a, cat, rec, isa, pref, runnable_isas, branch_isas, hardware):
    label = cat.isa(isa).label if cat.isa(isa) else isa
    workload = tree.WORKLOAD_SHORT.get(a.workload, a.workload)
    prefix = f"For {workload}" + ("" if a.workload_given else " (the default workload)")
    wanted = next((s for s in pref if s in runnable_isas), "")
    if wanted == isa or not wanted:
        chain = ", then ".join(cat.isa(s).label for s in pref if cat.isa(s))
        rec.reasons.append(f"{prefix} the order of preference is {chain}; {label} is the best this CPU runs.")
    else:
        built = ", ".join(sorted((cat.isa(s).label for s in branch_isas if cat.isa(s)), key=str))
        wanted_label = cat.isa(wanted).label
        rec.reasons.append(
            f"{prefix} {wanted_label} would be preferred, but {hardware} is built only with {built} "
            f"here, so {label} is the best of those this CPU runs."
        )


def _branch_reason(a, cat, rec, branch, lib_pool, constrained, default_keys, hardware, library):
    desc = (f"{branch.repository} {branch.name} (PyTorch {branch.pytorch_version}, CUDA "
            f"{' / '.join(branch.cuda_versions)}, Python {branch.python_version})")
    hw_branches = [b.name for b in sorted({cat.branch_of(v) for v in lib_pool if cat.branch_of(v)}, key=lambda b: (b.preference, b.name))]
    default_has_hw = any(v.branch_key in default_keys for v in lib_pool)
    if a.constraints:
        text = ", ".join(_constraint_label(k, v) for k, v in a.constraints.items())
        fit = sorted({cat.branch_of(v).name for v in constrained})
        rec.reasons.append(
            f"{text} narrows the branches to {', '.join(fit)}; {desc} is the preferred one."
        )
    elif branch.is_default:
        rec.reasons.append(f"With no version constraints the default branch {desc} is used.")
    elif not default_has_hw:
        rec.reasons.append(
            f"{LIBRARY_NAMES.get(library, library)} for {hardware} is built only on {', '.join(hw_branches)}; "
            f"{desc} is the preferred one."
        )
    else:
        rec.reasons.append(
            f"The default branch has no {hardware} build this CPU runs as well, so {desc} is used."
        )


def _driver_cuda(a: Answers) -> str:
    if a.driver_cuda:
        return a.driver_cuda
    major = a.driver_major
    if major is None:
        return ""
    for min_driver, cuda in tree.DRIVER_CUDA:
        if major >= min_driver:
            return cuda
    return "10.0"


def _pick_cuda(a, cat, rec, branch, same_isa, backend):
    if backend != "cuda":
        return same_isa[0]
    versions = sorted({v.cuda_version for v in same_isa}, key=naming.version_key, reverse=True)
    limit = _driver_cuda(a)
    if limit:
        fits = [c for c in versions if naming.version_key(c)[:2] <= naming.version_key(limit)[:2]]
        if fits:
            cuda = fits[0]
            others = [c for c in versions if c != cuda]
            rec.reasons.append(
                f"The driver ({a.driver or 'given'}) supports CUDA {limit}, so the CUDA {cuda} build is used"
                + (f" (the branch also builds CUDA {', '.join(others)})." if others else ".")
            )
        else:
            cuda = versions[-1]
            same_major = naming.version_key(cuda)[0] == naming.version_key(limit)[0]
            if same_major:
                rec.reasons.append(
                    f"The driver supports CUDA {limit}; the oldest CUDA this branch builds for the GPU is "
                    f"{cuda}, which runs on it through CUDA minor-version compatibility."
                )
            else:
                rec.reasons.append(f"The branch builds this GPU only with CUDA {', '.join(versions)}.")
                rec._warn(
                    f"The driver ({a.driver or 'CUDA ' + limit}) supports CUDA {limit} at most; the CUDA "
                    f"{cuda} build needs a newer driver (CUDA {cuda} needs NVIDIA "
                    f"{_min_driver_for(cuda)} or newer)."
                )
    else:
        cuda = versions[0]
        if len(versions) > 1:
            rec.reasons.append(
                f"This branch builds CUDA {' and '.join(versions)}; with no driver version given the "
                f"newest, CUDA {cuda}, is used."
            )
    pick = next(v for v in same_isa if v.cuda_version == cuda)
    for v in same_isa:
        if v.cuda_version != cuda:
            rec._alt(v, f"the CUDA {v.cuda_version} build of the same variant on the same branch, "
                        f"for drivers that do not support CUDA {cuda}")
    return pick


def _min_driver_for(cuda: str) -> int:
    want = naming.version_key(cuda)[:2]
    for min_driver, version in reversed(tree.DRIVER_CUDA):
        if naming.version_key(version)[:2] >= want:
            return min_driver
    return tree.DRIVER_CUDA[0][0]


def _newer_branch_alternative(a, cat, rec, branch, pick, runnable):
    """The same build (library, backend, GPU, ISA) on a branch with a newer PyTorch."""
    if branch is None:
        return
    mine = naming.version_key(branch.pytorch_version)
    options = []
    for v in runnable:
        b = cat.branch_of(v)
        if b is None or b.repository != branch.repository or v.isa != pick.isa:
            continue
        if naming.version_key(b.pytorch_version) <= mine:
            continue
        options.append((b.preference, b.name, v, b))
    if not options:
        return
    options.sort(key=lambda o: (o[0], o[1]))
    b = options[0][3]
    candidates = [o[2] for o in options if o[3] is b]
    limit = _driver_cuda(a)
    if limit:
        fitting = [v for v in candidates if naming.version_key(v.cuda_version)[:2] <= naming.version_key(limit)[:2]]
        candidates = fitting or candidates
    v = max(candidates, key=lambda v: naming.version_key(v.cuda_version))
    purpose = f": {b.purpose}" if b.purpose else ""
    rec._alt(v, f"the same build on the newer branch {b.name} (PyTorch {b.pytorch_version}"
                + (f", CUDA {v.cuda_version}" if v.cuda_version else "") + f"){purpose}")
