"""`recommend(answers, catalogue)`: pick the variant for a machine. Selection only.

Answers are a plain mapping of the Step fields (catalog.wizard.steps) to text or lists, from
the wizard's form, the API's JSON, the CLI's options, or `detect(...).answers()`. They are read
by catalog.wizard.answers (every problem an `AnswerError` naming its field); this module walks
the decision — platform, GPU, library, constraints, runnable ISA, branch, ISA, CUDA — reading the
rules in catalog.wizard.rules. The result is a `Recommendation`; it never raises.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from catalog import naming
from catalog.vocabulary import LIBRARIES
from catalog.wizard import gpus as gpu_names
from catalog.wizard import rules, steps
from catalog.wizard.answers import (
    Answers,
    Cpu,
    Gpu,
    claimed_cpu,
    constraint_label,
    isa_features,
    matches,
    normalise,
)
from catalog.wizard.readers import AnswerError
from catalog.wizard.snapshot import BranchInfo, Catalogue, IsaInfo, VariantInfo

log = logging.getLogger(__name__)

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
    status: str = ""

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Recommendation:
    variant: Pick | None = None
    reasons: list = field(default_factory=list)  # one plain sentence per step taken
    warnings: list = field(default_factory=list)
    alternatives: list = field(default_factory=list)  # [Alternative]
    detected: dict = field(default_factory=dict)  # what the answers say about the machine
    errors: list = field(default_factory=list)  # [AnswerError]: bad or contradictory answers
    per_gpu: list = field(default_factory=list)  # [Recommendation], one per distinct GPU model
    gpu: str = ""  # the GPU model a per-GPU recommendation is for
    next_step: str = ""  # id of the first unanswered required step, when that is the error
    answers: Answers | None = None  # the answers as read (for the wizard's links)

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
            "errors": [{"field": e.field, "message": e.message} for e in self.errors],
            "per_gpu": [r.to_dict() for r in self.per_gpu],
            "gpu": self.gpu,
            "next_step": self.next_step,
        }

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def offer(self, variant: VariantInfo | Pick, why: str, first: bool = False) -> None:
        """Add an alternative (not the pick itself, and each variant once); `first` puts it
        ahead of those already offered."""
        key = (variant.pname, variant.repository, variant.branch)
        if self.variant and key == (
            self.variant.pname,
            self.variant.repository,
            self.variant.branch,
        ):
            return
        known = [a for a in self.alternatives if (a.pname, a.repository, a.branch) == key]
        if known and not first:
            return
        self.alternatives = [a for a in self.alternatives if a not in known]
        alternative = Alternative(*key, why, variant.status)
        if first:
            self.alternatives.insert(0, alternative)
        else:
            self.alternatives.append(alternative)


# ---------------------------------------------------------------------------------------------
# The walk
# ---------------------------------------------------------------------------------------------


def recommend(answers: object, catalogue: Catalogue) -> Recommendation:
    """Walk the decision for these answers; never raises."""
    try:
        return _recommend(answers, catalogue)
    except Exception as exc:  # a bug must not become a 500; it is logged with its traceback
        log.exception("The engine could not decide for the answers %r", answers)
        return Recommendation(
            errors=[AnswerError(f"The engine could not decide ({type(exc).__name__}: {exc}).")]
        )


def _recommend(raw: object, cat: Catalogue) -> Recommendation:
    a, errors = normalise(raw, cat)
    rec = Recommendation(detected=_detected(a, cat), answers=a)
    if errors:
        rec.errors = errors
        return rec
    missing = steps.missing_required(a.values, a.given)
    if missing:
        step = missing[0]
        rec.errors.append(AnswerError(f"Answer this first: {step.question}", step.fields[0].name))
        rec.next_step = step.id
        return rec
    rec.reasons += a.implied
    if a.os == "darwin":
        _darwin(a, cat, rec)
        return rec
    rec.reasons.append(f"You are on Linux on {a.arch}, so the {a.arch}-linux builds apply.")
    if not a.gpus:
        if a.has_gpu == "no":
            rec.reasons.append("There is no NVIDIA GPU, so a CPU-only build fits.")
        else:  # nothing said about a GPU (or "I don't know"): the same rule everywhere
            rec.reasons.append(
                "Nothing says the machine has an NVIDIA GPU, so a CPU-only build is used."
            )
            rec.warn(rules.NO_GPU_INFORMATION)
        _select(a, cat, rec, backend="cpu", sm="", hardware=f"CPU-only {a.arch}")
        return rec
    if len(a.gpus) == 1:
        _gpu_path(a, a.gpus[0], cat, rec)
        return rec
    _several_gpus(a, cat, rec)
    return rec


def _several_gpus(a: Answers, cat: Catalogue, rec: Recommendation) -> None:
    """Several distinct GPU models: one recommendation each, or one when they share a build."""
    for gpu in a.gpus:
        sub = Recommendation(detected=rec.detected, gpu=gpu.label)
        sub.reasons.append(rec.reasons[0])
        _gpu_path(a, gpu, cat, sub)
        rec.per_gpu.append(sub)
    names = ", ".join(
        (g.query or g.label) + (f" ×{g.count}" if g.count > 1 else "") for g in a.gpus
    )
    picks = {
        (s.variant.repository, s.variant.branch, s.variant.pname) if s.variant else None
        for s in rec.per_gpu
    }
    if len(picks) == 1 and None not in picks:
        first = rec.per_gpu[0]
        rec.variant = first.variant
        rec.reasons = [
            f"This machine has {len(a.gpus)} GPU models ({names}); they share one "
            "architecture, so one build serves them all."
        ] + first.reasons
        rec.warnings = list(first.warnings)
        rec.alternatives = list(first.alternatives)
    else:
        rec.reasons.append(
            f"This machine has {len(a.gpus)} different GPU models ({names}); a CUDA build targets "
            "one GPU architecture, so there is one recommendation per GPU model."
        )
        rec.warn(
            "Several GPU models: install the build that matches the GPU each process uses "
            "(CUDA_VISIBLE_DEVICES)."
        )


def _relevant_features(cat: Catalogue) -> frozenset:
    return frozenset().union(*(isa_features(i) for i in cat.isas))


def _detected(a: Answers, cat: Catalogue) -> dict:
    out: dict[str, Any] = {"os": a.os, "arch": a.arch}
    cpu = a.cpu
    if cpu.given or cpu.model or a.values.get("cpu"):
        relevant = _relevant_features(cat)
        out["cpu"] = {
            "model": cpu.model,
            "vendor": cpu.vendor,
            "microarchitecture": cpu.target,
            "label": cpu.label,
            "isa_features": sorted(cpu.given & relevant),
        }
        if cpu.source == "flags" and cpu.assumed & relevant:  # typed flags, completed
            out["cpu"]["assumed_features"] = sorted(cpu.assumed & relevant)
    if a.gpus:
        out["gpus"] = []
        for g in a.gpus:
            arch = cat.architecture(g.sm)
            out["gpus"] += [
                {
                    "name": g.query,
                    "compute_capability": g.compute_capability,
                    "sm": g.sm,
                    "architecture": arch.name
                    if arch
                    else gpu_names.family_for_cc(g.compute_capability),
                    "in_catalogue": arch is not None,
                }
            ] * g.count
    if a.driver:
        out["driver_version"] = a.driver
    if a.driver_cuda:
        out["driver_cuda"] = a.driver_cuda
    return out


def bracketed(text: str) -> str:
    """'(Hopper)'; '(Blackwell, DGX Spark)' for a text with its own brackets (never nested)."""
    return f"({text.replace(' (', ', ').replace(')', '')})"


def architecture_label(sm: str, name: str) -> str:
    """'SM90 (Hopper)', 'SM121 (Blackwell, DGX Spark)'."""
    return f"{sm.upper()} {bracketed(name)}"


def _darwin(a: Answers, cat: Catalogue, rec: Recommendation) -> None:
    if a.arch == "x86_64":
        rec.reasons.append(
            "There is no build for Intel Macs: the only macOS build is the Apple Silicon MPS one "
            "(aarch64-darwin); the CUDA and CPU-only builds are for Linux."
        )
        # Nearest usable: a Linux CPU-only build for this CPU (in a VM or container).
        why = "the Linux CPU-only build for this Mac's CPU, to run in a Linux VM or container"
        linux = a.changed(os="linux", has_gpu="no", gpus=())
        if not a.cpu.known and cat.isa("avx2"):
            linux = linux.changed(cpu=claimed_cpu(cat, ("avx2",), a.arch))
            why += " (if its CPU has AVX2: Haswell, 2013, or newer)"
        _fallback(linux, cat, rec, why, "cpu", "", "CPU-only x86_64")
        return
    rec.reasons.append("macOS on Apple Silicon (arm64): the Metal (MPS) build is the macOS build.")
    _select(a, cat, rec, backend="mps", sm="", hardware="Apple Silicon (MPS)")


def _gpu_path(a: Answers, gpu: Gpu, cat: Catalogue, rec: Recommendation) -> None:
    several = f" ({gpu.count} of this model)" if gpu.count > 1 else ""
    rec.reasons.append(f"You have an NVIDIA GPU{several}, so a CUDA build fits.")
    arch = cat.architecture(gpu.sm)
    if arch is None or not any(sm == gpu.sm for _, sm, _ in cat.hardware()):
        built = sorted(
            {sm for backend, sm, _ in cat.hardware() if backend == "cuda"},
            key=lambda sm: naming.version_key(naming.compute_capability_from_sm(sm)),
        )
        family = arch.name if arch else gpu_names.family_for_cc(gpu.compute_capability)
        ccs = ", ".join(naming.compute_capability_from_sm(sm) for sm in built)
        rec.reasons.append(
            f"There is no build for {gpu.label}, a {family} GPU: the catalogue builds for compute "
            f"capabilities {ccs}, and a CUDA build for one architecture does not run on another."
        )
        _cpu_alternative(
            a,
            cat,
            rec,
            "no build exists for this GPU; this CPU-only build runs on the machine's CPU",
        )
        return
    hardware = architecture_label(arch.sm, arch.name)
    rec.reasons.append(f"{gpu.label} is architecture {hardware}.")
    if a.driver_major is not None and arch.min_driver and a.driver_major < arch.min_driver:
        rec.warn(
            f"Driver {a.driver} is older than the NVIDIA {arch.min_driver} that {hardware} needs; "
            f"update the driver to {arch.min_driver} or newer."
        )
    _select(a, cat, rec, backend="cuda", sm=gpu.sm, hardware=hardware)
    if rec.variant is None and not rec.alternatives:
        _cpu_alternative(
            a, cat, rec, "no CUDA build fits; this CPU-only build runs on the machine's CPU"
        )


def _fallback(
    a: Answers, cat: Catalogue, rec: Recommendation, why: str, backend: str, sm: str, hardware: str
) -> None:
    """Offer, as an alternative, what the selection picks for (changed) answers, if anything."""
    probe = Recommendation()
    _select(a, cat, probe, backend, sm, hardware)
    if probe.variant:
        rec.offer(probe.variant, why)


def _cpu_alternative(a: Answers, cat: Catalogue, rec: Recommendation, why: str) -> None:
    if a.cpu.known:
        _fallback(a.changed(gpus=(), has_gpu="no"), cat, rec, why, "cpu", "", f"CPU-only {a.arch}")


def _summarise_hardware(variants: list[VariantInfo]) -> str:
    """'SM61 + avx, SM75 + avx' for few variants; 'SM61, SM75, …, CPU-only' for many."""

    def cc(sm: str) -> tuple[int, ...]:
        return naming.version_key(naming.compute_capability_from_sm(sm)) if sm else (99,)

    combos = sorted({(v.sm, v.isa, v.backend) for v in variants}, key=lambda c: (cc(c[0]), c[1]))
    if len(combos) <= 6:
        return ", ".join(
            f"{sm.upper()} + {isa}"
            if sm
            else (f"CPU-only {isa}" if backend == "cpu" else "Apple MPS")
            for sm, isa, backend in combos
        )
    labels = [sm.upper() for sm in sorted({v.sm for v in variants if v.sm}, key=cc)]
    if any(v.backend == "cpu" for v in variants):
        labels.append("CPU-only")
    if any(v.backend == "mps" for v in variants):
        labels.append("Apple MPS")
    return ", ".join(labels)


# ---------------------------------------------------------------------------------------------
# Selection: library -> repository -> constraints -> runnable ISA -> branch -> ISA -> CUDA
# ---------------------------------------------------------------------------------------------


def _isa_missing(isa: IsaInfo, features: Iterable[str]) -> set[str]:
    return set(isa_features(isa) - set(features))


def _branch_sort_key(
    cat: Catalogue, repos: tuple, best_rank: dict
) -> Callable[[tuple[str, str]], tuple]:
    """The sort key of rules.BRANCH_ORDER over branch keys (repository, name)."""
    keys = {
        "best_isa": lambda key: best_rank[key],
        "default": lambda key: 0 if (b := cat.branch(*key)) and b.is_default else 1,
        "repository": lambda key: repos.index(key[0]) if key[0] in repos else len(repos),
        "preference": lambda key: b.preference if (b := cat.branch(*key)) else 999,
        "name": lambda key: key[1],
    }
    order = [keys[name] for name in rules.BRANCH_ORDER]
    return lambda key: tuple(criterion(key) for criterion in order)


def _select(
    a: Answers, cat: Catalogue, rec: Recommendation, backend: str, sm: str, hardware: str
) -> None:
    platform = "aarch64-darwin" if backend == "mps" else f"{a.arch}-linux"
    library = a.library or rules.DEFAULT_LIBRARY
    pool = _pool(cat, rec, backend, sm, platform)
    if not pool:
        rec.reasons.append(f"There is no build for {hardware} on {platform}.")
        if backend == "cuda":
            _cpu_alternative(
                a,
                cat,
                rec,
                f"no {hardware} build exists for {platform}; this "
                "CPU-only build runs on the machine's CPU",
            )
        return
    repos = rules.LIBRARY_REPOSITORIES[library]
    lib_pool = [v for v in pool if v.library == library and v.repository in repos]
    if not lib_pool:
        _no_library_build(a, cat, rec, backend, sm, hardware, library)
        return
    constrained = _constrained(a, cat, rec, lib_pool, backend, sm, hardware)
    if constrained is None:
        return
    runnable_isas = {
        i.slug for i in cat.isas if i.arch == a.arch and not _isa_missing(i, a.cpu.features)
    }
    order = _isa_order(a, cat)
    if backend == "mps":
        runnable = constrained
    else:
        runnable = [v for v in constrained if v.isa in runnable_isas]
        _cpu_reason(a, cat, rec, runnable_isas)
        if not runnable:
            _no_runnable_isa(a, cat, rec, constrained, order, hardware)
            return
    isa_rank = _rank_in(order)

    branch, in_branch = _choose_branch(cat, runnable, repos, isa_rank, backend)
    best = min(map(isa_rank, in_branch))
    isa = next((v.isa for v in in_branch if isa_rank(v) == best), "")
    same_isa = [v for v in in_branch if v.isa == isa]

    if backend != "mps":
        pref = list(rules.ISA_PREFERENCE[a.workload].get(a.arch, ()))
        _isa_reason(a, cat, rec, isa, pref, runnable_isas, {v.isa for v in in_branch}, hardware)
    if branch is not None:
        _branch_reason(a, cat, rec, branch, lib_pool, constrained, hardware, library)

    pick = _pick_cuda(a, rec, same_isa, backend)
    rec.variant = _as_pick(pick, branch)
    _pick_warnings(a, rec, pick, branch, backend)
    if backend != "mps":
        _isa_alternatives(a, cat, rec, isa, runnable_isas, in_branch, pick)
    _newer_branch_alternative(a, cat, rec, branch, pick, runnable)
    _recommended_branch_alternative(cat, rec, branch, pick, runnable)


def _recommended_branch_alternative(
    cat: Catalogue,
    rec: Recommendation,
    branch: BranchInfo | None,
    pick: VariantInfo,
    runnable: list[VariantInfo],
) -> None:
    """Where the pick is not on the branch the catalogue recommends, say why and offer that
    branch's same build first among the alternatives, with its status."""
    if branch is None or branch.is_recommended:
        return
    same = [
        (v, b)
        for v in runnable
        if (b := cat.branch_of(v)) is not None
        and b.is_recommended
        and b.repository == branch.repository
        and v.isa == pick.isa
    ]
    if not same:
        return
    v, b = max(same, key=lambda vb: naming.version_key(vb[0].cuda_version))
    why = (
        "the wizard keeps the repository's default branch, the conservative baseline, unless "
        "an answer asks for another"
        if branch.is_default
        else "it builds a better ISA for this CPU or is preferred in the wizard's branch order"
    )
    rec.reasons.append(
        f"The catalogue recommends {b.name} (PyTorch {b.pytorch_version}) for general use; "
        f"{branch.name} is picked because {why}. {b.name}'s build is offered first among the "
        f"alternatives (status: {v.status})."
    )
    cuda = f", CUDA {v.cuda_version}" if v.cuda_version else ""
    purpose = f": {b.purpose}" if b.purpose else ""
    rec.offer(
        v,
        f"the same build on the recommended branch {b.name} (PyTorch {b.pytorch_version}{cuda})"
        f"{purpose}",
        first=True,
    )


def _pool(
    cat: Catalogue, rec: Recommendation, backend: str, sm: str, platform: str
) -> list[VariantInfo]:
    """The variants for this hardware and platform that a machine can run: an impossible pairing
    (a GPU built into a system of another CPU architecture) is never recommended."""
    found = list(cat.variants_for(backend, sm, platform))
    impossible = [v for v in found if cat.impossible_pairing(v)]
    if impossible:
        rec.reasons.append(
            f"{cat.impossible_pairing(impossible[0])} The catalogue's {len(impossible)} "
            f"{platform} build(s) of {sm.upper()} are impossible pairings, never recommended."
        )
    return [v for v in found if v not in impossible]


def _choose_branch(
    cat: Catalogue,
    runnable: list[VariantInfo],
    repos: tuple,
    isa_rank: Callable[[VariantInfo], int],
    backend: str,
) -> tuple[BranchInfo | None, list[VariantInfo]]:
    """The branch first in rules.BRANCH_ORDER among those with a runnable build, and its
    runnable builds."""
    by_branch: dict = {}
    for v in runnable:
        by_branch.setdefault(v.branch_key, []).append(v)
    best_rank = {
        key: (min(map(isa_rank, vs)) if backend != "mps" else 0) for key, vs in by_branch.items()
    }
    chosen_key = min(by_branch, key=_branch_sort_key(cat, repos, best_rank))
    return cat.branch(*chosen_key), by_branch[chosen_key]


def _isa_order(a: Answers, cat: Catalogue) -> list[str]:
    """The machine's ISAs, the workload's preferred ones first, then from the most specialised."""
    pref = list(rules.ISA_PREFERENCE[a.workload].get(a.arch, ()))
    arch_isas = sorted(cat.isas_for(a.arch), key=lambda i: -i.rank)
    return pref + [i.slug for i in arch_isas if i.slug not in pref]


def _rank_in(order: list[str]) -> Callable[[VariantInfo], int]:
    """A variant's place in the ISA order (past the end when its ISA is not in it)."""

    def isa_rank(v: VariantInfo) -> int:
        return order.index(v.isa) if v.isa in order else len(order)

    return isa_rank


def _no_library_build(
    a: Answers,
    cat: Catalogue,
    rec: Recommendation,
    backend: str,
    sm: str,
    hardware: str,
    library: str,
) -> None:
    """No build of the library for the hardware: say so and offer the PyTorch build."""
    everywhere = [v for v in cat.variants if v.library == library]
    built = (
        f": {library} is built only for {_summarise_hardware(everywhere)}." if everywhere else "."
    )
    rec.reasons.append(f"There is no {library} build for {hardware}{built}")
    kept = {k: v for k, v in a.constraints.items() if k not in ("repository", "branch")}
    _fallback(
        a.changed(library=rules.DEFAULT_LIBRARY, constraints=kept),
        cat,
        rec,
        f"the PyTorch build for this hardware (no {library} build exists for {hardware})",
        backend,
        sm,
        hardware,
    )


def _constrained(
    a: Answers,
    cat: Catalogue,
    rec: Recommendation,
    lib_pool: list[VariantInfo],
    backend: str,
    sm: str,
    hardware: str,
) -> list | None:
    """The builds whose branch meets the constraints; None (after offering the build without
    them) when none does."""
    constrained = [
        v
        for v in lib_pool
        if all(matches(v, cat.branch_of(v), k, val) for k, val in a.constraints.items())
    ]
    if constrained:
        return constrained
    text = ", ".join(constraint_label(k, v) for k, v in a.constraints.items())
    branches = sorted({b.label for v in lib_pool if (b := cat.branch_of(v))})
    rec.reasons.append(
        f"{hardware} is built on {', '.join(branches)}, and none of these matches {text}."
    )
    _fallback(
        a.changed(constraints={}),
        cat,
        rec,
        f"the build for this hardware without the {text} constraint",
        backend,
        sm,
        hardware,
    )
    return None


def _no_runnable_isa(
    a: Answers,
    cat: Catalogue,
    rec: Recommendation,
    constrained: list[VariantInfo],
    order: list[str],
    hardware: str,
) -> None:
    """Every build for the hardware needs CPU features the machine lacks: say which."""
    features = a.cpu.features
    present = sorted(
        {v.isa for v in constrained},
        key=lambda s: order.index(s) if s in order else len(order),
    )
    detail = "; ".join(
        f"{cat.isa_label(s)} needs {', '.join(sorted(_isa_missing(cat.known_isa(s), features)))}"
        for s in present
        if cat.isa(s)
    )
    labels = ", ".join(cat.isa_label(s) for s in present)
    rec.reasons.append(
        f"{hardware} is built only with {labels}, and this CPU runs none of them ({detail})."
    )


def _as_pick(pick: VariantInfo, branch: BranchInfo | None) -> Pick:
    return Pick(
        pname=pick.pname,
        repository=pick.repository,
        branch=pick.branch,
        library=pick.library,
        backend=pick.backend,
        platform=pick.platform,
        python_version=pick.python_version,
        cuda_version=pick.cuda_version,
        sm=pick.sm,
        isa=pick.isa,
        status=pick.status,
        pytorch_version=branch.pytorch_version if branch else "",
    )


def _pick_warnings(
    a: Answers, rec: Recommendation, pick: VariantInfo, branch: BranchInfo | None, backend: str
) -> None:
    """The chosen build has no successful build yet, or needs a newer driver than the one given."""
    if pick.status in ("planned", "failed"):
        rec.warn(
            f"{pick.pname} on {pick.branch} has status '{pick.status}': there is no "
            "successful build of it yet."
        )
    if (
        backend == "cuda"
        and branch
        and branch.min_driver
        and a.driver_major is not None
        and a.driver_major < branch.min_driver
    ):
        rec.warn(
            f"Driver {a.driver} is older than the NVIDIA {branch.min_driver} that "
            f"{branch.repository} {branch.name} needs; update the driver to {branch.min_driver} "
            "or newer."
        )


def _isa_alternatives(
    a: Answers,
    cat: Catalogue,
    rec: Recommendation,
    isa: str,
    runnable_isas: set[str],
    in_branch: list[VariantInfo],
    pick: VariantInfo,
) -> None:
    """The specialised ISAs the CPU runs, and the general one, on the same branch and CUDA."""

    def same_build(slug: str) -> list[VariantInfo]:
        return [v for v in in_branch if v.isa == slug and v.cuda_version == pick.cuda_version]

    for slug, why in rules.SPECIALISED_ISAS.items():
        if slug != isa and slug in runnable_isas:
            for v in same_build(slug):
                rec.offer(v, f"the {cat.isa_label(slug)} build, {why}")
    general = next(
        (
            s
            for s in rules.ISA_PREFERENCE["general"].get(a.arch, ())
            if s in runnable_isas and any(v.isa == s for v in in_branch)
        ),
        "",
    )
    if general and general != isa:
        for v in same_build(general):
            rec.offer(
                v, f"the {cat.isa_label(general)} build for general FP32 training and inference"
            )


# ---------------------------------------------------------------------------------------------
# Reasons
# ---------------------------------------------------------------------------------------------


def _labels(cat: Catalogue, slugs: Iterable[str]) -> str:
    return ", ".join(cat.isa_label(s) for s in slugs if cat.isa(s))


def _cpu_reason(a: Answers, cat: Catalogue, rec: Recommendation, runnable_isas: set) -> None:
    cpu = a.cpu
    who = f"The CPU {bracketed(cpu.label)}" if cpu.label else "The CPU"
    isas = cat.isas_for(a.arch)
    _assumption_reasons(cpu, cat, rec, [i.slug for i in isas if i.slug in runnable_isas])
    source = {
        "tool": "its flags",
        "flags": "its flags",
        "isa": f"the ISA level given ({_labels(cat, cpu.claims)})",
        "microarchitecture": f"its microarchitecture ({cpu.label})",
        "model": f"the flags archspec lists for {cpu.target}",
    }.get(cpu.source, "the answers")
    can = [i.label for i in isas if i.slug in runnable_isas]
    text = (
        f"{who} can run, going by {source}, the {', '.join(can)} builds"
        if can
        else f"{who} can run none of the {a.arch} builds"
    )
    cannot = [
        (i, sorted(_isa_missing(i, cpu.features))) for i in isas if i.slug not in runnable_isas
    ]
    if cannot:
        why = "that answer does not imply" if cpu.source == "isa" else "it lacks"
        text += "; not " + ", ".join(f"{i.label} ({why} {', '.join(m)})" for i, m in cannot)
    rec.reasons.append(text + ".")
    _cpu_warnings(cpu, cat, rec, isas, runnable_isas)


def _assumption_reasons(cpu: Cpu, cat: Catalogue, rec: Recommendation, runnable: list[str]) -> None:
    """What was assumed beyond the answers: features implied by typed flags, ISAs implied by
    the ISA given."""
    relevant = _relevant_features(cat)
    assumed = sorted(cpu.assumed & relevant)
    if cpu.source == "flags" and assumed:
        given = ", ".join(sorted(cpu.given & relevant))
        rec.reasons.append(
            f"Assumed {', '.join(assumed)}: every CPU archspec knows with {given} "
            f"also has {'it' if len(assumed) == 1 else 'them'}."
        )
    implied = [slug for slug in runnable if slug not in cpu.claims]
    if cpu.source == "isa" and implied:
        rec.reasons.append(
            f"{_labels(cat, cpu.claims)} implies {_labels(cat, implied)}: every CPU "
            f"archspec knows with {_labels(cat, cpu.claims)} runs those builds too."
        )


def _cpu_warnings(
    cpu: Cpu, cat: Catalogue, rec: Recommendation, isas: list[IsaInfo], runnable_isas: set
) -> None:
    """The flags win over what the user believed, and over prose in the guides."""
    if cpu.given:
        for claim in cpu.claims:
            if claim not in runnable_isas:
                isa = cat.known_isa(claim)
                missing = sorted(_isa_missing(isa, cpu.features))
                rec.warn(
                    f"You said the CPU has {isa.label}, but its flags lack "
                    f"{', '.join(missing)}: the {isa.label} build would crash with 'illegal "
                    "instruction', so the flags win."
                )
    caveat = rules.CPU_CAVEATS.get(cpu.target)
    if caveat and any(i.slug not in runnable_isas for i in isas):
        rec.warn(caveat + " The recommendation follows the CPU flags.")
        return
    names = _cpu_names(cpu.label)
    for i in isas:
        if i.slug in runnable_isas or not i.hardware:
            continue
        hits = [n for n in names if n.lower() in i.hardware.lower()]
        if hits:
            rec.warn(
                f"The {i.label} guide lists {hits[0]} among its CPUs, but this CPU's flags lack "
                f"{', '.join(sorted(_isa_missing(i, cpu.features)))}; the flags win."
            )


def _cpu_names(label: str) -> list[str]:
    """'Neoverse V1 (AWS Graviton3)' -> ['Neoverse V1', 'AWS Graviton3', 'Graviton3']."""
    if not label:
        return []
    main, _, rest = label.partition(" (")
    names = [main.strip()] + [n.strip() for n in rest.rstrip(")").split(",") if n.strip()]
    names += [
        n.split(" ", 1)[1] for n in names if n.startswith(("AWS ", "NVIDIA ", "Intel ", "AMD "))
    ]
    return [n for n in names if len(n) >= 4]


def _isa_reason(
    a: Answers,
    cat: Catalogue,
    rec: Recommendation,
    isa: str,
    pref: list[str],
    runnable_isas: set[str],
    branch_isas: set[str],
    hardware: str,
) -> None:
    label = cat.isa_label(isa)
    workload = rules.WORKLOAD_SHORT.get(a.workload, a.workload)
    prefix = f"For {workload}" + ("" if a.workload_given else " (the default workload)")
    wanted = next((s for s in pref if s in runnable_isas), "")
    if wanted == isa or not wanted:
        chain = ", then ".join(cat.isa_label(s) for s in pref if cat.isa(s))
        rec.reasons.append(
            f"{prefix} the order of preference is {chain}; {label} is the best this CPU runs."
        )
    else:
        built = ", ".join(sorted(cat.isa_label(s) for s in branch_isas if cat.isa(s)))
        rec.reasons.append(
            f"{prefix} {cat.isa_label(wanted)} would be preferred, but {hardware} is built only "
            f"with {built} here, so {label} is the best of those this CPU runs."
        )


def _branch_reason(
    a: Answers,
    cat: Catalogue,
    rec: Recommendation,
    branch: BranchInfo,
    lib_pool: list[VariantInfo],
    constrained: list[VariantInfo],
    hardware: str,
    library: str,
) -> None:
    # A Mac (MPS) or CPU-only answer does not mention the branch's CUDA versions.
    cuda = f", CUDA {' / '.join(branch.cuda_versions)}" if lib_pool[0].backend == "cuda" else ""
    desc = (
        f"{branch.repository} {branch.name} (PyTorch {branch.pytorch_version}{cuda}, "
        f"Python {branch.python_version})"
    )
    with_hw = {b for v in lib_pool if (b := cat.branch_of(v)) is not None}
    hw_branches = [b.name for b in sorted(with_hw, key=lambda b: (b.preference, b.name))]
    default_has_hw = any((b := cat.branch_of(v)) and b.is_default for v in lib_pool)
    if a.constraints:
        text = ", ".join(constraint_label(k, v) for k, v in a.constraints.items())
        fit = sorted({b.name for v in constrained if (b := cat.branch_of(v))})
        rec.reasons.append(
            f"{text} narrows the branches to {', '.join(fit)}; {desc} is the preferred one."
        )
    elif branch.is_default:
        rec.reasons.append(f"With no version constraints the default branch {desc} is used.")
    elif not default_has_hw:
        name = LIBRARIES[library].label if library in LIBRARIES else library
        rec.reasons.append(
            f"{name} for {hardware} is built only on {', '.join(hw_branches)}; "
            f"{desc} is the preferred one."
        )
    else:
        rec.reasons.append(
            f"The default branch has no {hardware} build this CPU runs as well, so {desc} is used."
        )


# ---------------------------------------------------------------------------------------------
# CUDA
# ---------------------------------------------------------------------------------------------


def _driver_cuda(a: Answers) -> str:
    if a.driver_cuda:
        return a.driver_cuda
    major = a.driver_major
    if major is None:
        return ""
    return next((cuda for min_driver, cuda in rules.DRIVER_CUDA if major >= min_driver), "10.0")


def _pick_cuda(
    a: Answers, rec: Recommendation, same_isa: list[VariantInfo], backend: str
) -> VariantInfo:
    if backend != "cuda":
        return same_isa[0]
    versions = sorted({v.cuda_version for v in same_isa}, key=naming.version_key, reverse=True)
    limit = _driver_cuda(a)
    if limit:
        fits = [c for c in versions if naming.version_key(c)[:2] <= naming.version_key(limit)[:2]]
        if fits:
            cuda = fits[0]
            others = [c for c in versions if c != cuda]
            also = f" (the branch also builds CUDA {', '.join(others)})." if others else "."
            rec.reasons.append(
                f"The driver ({a.driver or 'given'}) supports CUDA {limit}, so the "
                f"CUDA {cuda} build is used" + also
            )
        else:
            cuda = versions[-1]
            if naming.version_key(cuda)[0] == naming.version_key(limit)[0]:
                rec.reasons.append(
                    f"The driver supports CUDA {limit}; the oldest CUDA this branch builds for the "
                    f"GPU is {cuda}, which runs on it through CUDA minor-version compatibility."
                )
            else:
                rec.reasons.append(
                    f"The branch builds this GPU only with CUDA {', '.join(versions)}."
                )
                rec.warn(
                    f"The driver ({a.driver or 'CUDA ' + limit}) supports CUDA {limit} at most; "
                    f"the CUDA {cuda} build needs a newer driver (CUDA {cuda} needs NVIDIA "
                    f"{_min_driver_for(cuda)} or newer)."
                )
    else:
        cuda = versions[0]
        if len(versions) > 1:
            rec.reasons.append(
                f"This branch builds CUDA {' and '.join(versions)}; with no driver version given "
                f"the newest, CUDA {cuda}, is used."
            )
    pick = next(v for v in same_isa if v.cuda_version == cuda)
    for v in same_isa:
        if v.cuda_version != cuda:
            rec.offer(
                v,
                f"the CUDA {v.cuda_version} build of the same variant on the same "
                f"branch, for drivers that do not support CUDA {cuda}",
            )
    return pick


def _min_driver_for(cuda: str) -> int:
    want = naming.version_key(cuda)[:2]
    for min_driver, version in reversed(rules.DRIVER_CUDA):
        if naming.version_key(version)[:2] >= want:
            return min_driver
    return rules.DRIVER_CUDA[0][0]


def _newer_branch_alternative(
    a: Answers,
    cat: Catalogue,
    rec: Recommendation,
    branch: BranchInfo | None,
    pick: VariantInfo,
    runnable: list[VariantInfo],
) -> None:
    """The same build (library, backend, GPU, ISA) on a branch with a newer PyTorch."""
    if branch is None:
        return
    mine = naming.version_key(branch.pytorch_version)
    options = []
    for v in runnable:
        b = cat.branch_of(v)
        if b is None or b.repository != branch.repository or v.isa != pick.isa:
            continue
        if naming.version_key(b.pytorch_version) > mine:
            options.append((b.preference, b.name, v, b))
    if not options:
        return
    options.sort(key=lambda o: (o[0], o[1]))
    b = options[0][3]
    candidates = [o[2] for o in options if o[3] is b]
    limit = _driver_cuda(a)
    if limit:
        fitting = [
            v
            for v in candidates
            if naming.version_key(v.cuda_version)[:2] <= naming.version_key(limit)[:2]
        ]
        candidates = fitting or candidates
    v = max(candidates, key=lambda v: naming.version_key(v.cuda_version))
    purpose = f": {b.purpose}" if b.purpose else ""
    cuda = f", CUDA {v.cuda_version}" if v.cuda_version else ""
    rec.offer(
        v,
        f"the same build on the newer branch {b.name} (PyTorch {b.pytorch_version}{cuda}){purpose}",
    )
