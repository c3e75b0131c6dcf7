"""The catalogue audit: seed claims checked against the data, counts, validation, and the lint
of every branch's variants.

`evaluate_claim` and `catalog.lint` are pure (plain values in, a verdict out); `run_audit`
gathers the data. A finding is *known* when its claim is acknowledged (recorded with a
resolution) and *new* otherwise. Lint findings are listed per branch; those of the branches
that gate (by default the seeded ones; an imported branch's findings are its repository's own
defects) count against the result. `audit-catalogue` exits 1 while any new or gating finding
remains.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import archspec.cpu
from django.core.exceptions import ValidationError

from catalog import hardware, lint, naming

if TYPE_CHECKING:
    from catalog.models import Branch


@dataclass(frozen=True)
class Finding:
    key: str
    kind: str
    subject: str
    message: str
    source: str = ""
    statement: str = ""
    resolution: str = ""
    known: bool = False


@dataclass(frozen=True)
class Verified:
    key: str
    subject: str
    statement: str
    source: str


@dataclass(frozen=True)
class BranchLint:
    repository: str
    branch: str
    imported: bool  # read from a repository: its findings are that repository's defects
    gates: bool  # its findings count against the audit's result (the exit code)
    findings: list  # lint.LintFinding, ordered by variant
    # Variants whose impossible pairing an acknowledged claim records (the repository holds
    # them so): their `arm-only-gpu` finding is shown and known, and does not gate.
    recorded: frozenset = frozenset()

    @property
    def name(self) -> str:
        return f"{self.repository}:{self.branch}"

    def is_recorded(self, finding: lint.LintFinding) -> bool:
        return finding.rule == IMPOSSIBLE_RULE and finding.variant in self.recorded

    @property
    def gating(self) -> list[lint.LintFinding]:
        return [f for f in self.findings if not self.is_recorded(f)] if self.gates else []


@dataclass
class AuditResult:
    findings: list
    verified: list
    lint: list = field(default_factory=list)  # BranchLint for every branch

    @property
    def new(self) -> list[Finding]:
        return [f for f in self.findings if not f.known]

    @property
    def known(self) -> list[Finding]:
        return [f for f in self.findings if f.known]

    @property
    def gating_lint(self) -> list[lint.LintFinding]:
        return [f for branch in self.lint for f in branch.gating]

    @property
    def lint_count(self) -> int:
        return sum(len(branch.findings) for branch in self.lint)

    @property
    def ok(self) -> bool:
        return not self.new and not self.gating_lint


@dataclass(frozen=True)
class CatalogueFacts:
    """The plain facts claims are checked against."""

    isa_flags: dict  # slug -> compiler flags
    arch_fields: dict  # sm -> {"min_cuda": ..., "max_cuda": ..., ...}
    model_arch: dict  # GPU model name -> sm
    variant_names: dict  # (repository, branch) -> set of pnames
    counts: dict  # (repository, branch) -> number of variants
    # (repository, branch) -> [(pname, why no machine runs it, and its missing PyTorch)]
    impossible: dict = field(default_factory=dict)


def _cpu_features(check: dict) -> set[str] | None:
    if "features" in check:
        return set(check["features"])
    target = archspec.cpu.TARGETS.get(check.get("microarch", ""))
    if target is None:
        return None
    return set(target.features)


def _arch_buildable(fields: dict, cuda: str) -> bool:
    v = naming.version_key(cuda)[:2]
    if v < naming.version_key(fields["min_cuda"])[:2]:
        return False
    return not (fields.get("max_cuda") and v > naming.version_key(fields["max_cuda"])[:2])


def _gpu_target_problem(target: str, sm: str) -> str | None:
    """Whether `target` is how a recipe's gpuTargets / TORCH_CUDA_ARCH_LIST names `sm`."""
    try:
        named = naming.gpu_target_sm(target)
    except naming.InvalidName as exc:
        return (
            f"{exc}; PyTorch refuses it, so the recipes target {sm.upper()} as "
            f"{naming.gpu_target(sm)!r}."
        )
    return None if named == sm else f"{target!r} is {named.upper()}, not {sm.upper()}."


def _statement_problem(check: dict, facts: CatalogueFacts) -> str | None:
    return "The seed documents disagree here (a recorded contradiction)."


def _cpu_generation_problem(check: dict, facts: CatalogueFacts) -> str | None:
    flags = facts.isa_flags.get(check["isa"])
    if flags is None:
        return f"No ISA {check['isa']!r} in the catalogue."
    features = _cpu_features(check)
    if features is None:
        return f"archspec knows no microarchitecture {check.get('microarch')!r}."
    missing = hardware.missing_features(flags, features)
    if missing:
        return (
            f"{check.get('cpu', check.get('microarch'))} lacks {', '.join(sorted(missing))}, "
            f"which the {check['isa']} recipes' flags ({' '.join(flags)}) require."
        )
    return None


def _architecture_problem(check: dict, facts: CatalogueFacts) -> str | None:
    sms = check["sm"] if isinstance(check["sm"], list) else [check["sm"]]
    unknown = [sm for sm in sms if sm not in facts.arch_fields]
    if unknown:
        return f"No architecture {', '.join(unknown)} in the catalogue."
    if "gpu_target" in check:
        return _gpu_target_problem(check["gpu_target"], sms[0])
    if "buildable_with" in check:
        cuda = check["buildable_with"]
        failing = [sm for sm in sms if not _arch_buildable(facts.arch_fields[sm], cuda)]
        if failing:
            return f"CUDA {cuda} cannot build {', '.join(s.upper() for s in failing)}."
        return None
    field, value = check["field"], check["value"]
    actual = facts.arch_fields[sms[0]].get(field)
    if str(actual) != str(value):
        return f"The catalogue has {sms[0].upper()} {field} = {actual}, not {value}."
    return None


def _gpu_model_problem(check: dict, facts: CatalogueFacts) -> str | None:
    actual = facts.model_arch.get(check["model"])
    if actual is None:
        return f"No GPU model {check['model']!r} in the catalogue (claimed {check['sm'].upper()})."
    if actual != check["sm"]:
        return (
            f"The catalogue resolves {check['model']} to {actual.upper()}, "
            f"not {check['sm'].upper()}."
        )
    return None


def _count_problem(check: dict, facts: CatalogueFacts) -> str | None:
    key = (check["repository"], check["branch"])
    actual = facts.counts.get(key, 0)
    if actual != check["count"]:
        return f"{key[0]}:{key[1]} has {actual} variants, not {check['count']}."
    return None


def _name_problem(check: dict, facts: CatalogueFacts) -> str | None:
    name = check["name"]
    try:
        naming.parse(name)
    except naming.InvalidName as exc:
        return f"Not a valid package name: {exc}."
    key = (check["repository"], check["branch"])
    if name not in facts.variant_names.get(key, set()):
        return f"{name} is not a variant of {key[0]}:{key[1]}."
    return None


def _isa_slug_problem(check: dict, facts: CatalogueFacts) -> str | None:
    if check["slug"] not in facts.isa_flags:
        return (
            f"No ISA slug {check['slug']!r}; the catalogue's slugs are "
            f"{', '.join(sorted(facts.isa_flags))}."
        )
    return None


def _isa_flags_problem(check: dict, facts: CatalogueFacts) -> str | None:
    actual = facts.isa_flags.get(check["isa"])
    if actual != check["flags"]:
        return (
            f"The {check['isa']} recipes compile with {' '.join(actual or [])}, "
            f"not {' '.join(check['flags'])}."
        )
    return None


def _impossible_pairing_problem(check: dict, facts: CatalogueFacts) -> str | None:
    key = (check["repository"], check["branch"])
    pairs = facts.impossible.get(key, [])
    if not pairs:
        return None
    listed = " ".join(f"{pname}: {why}" for pname, why in pairs)
    return f"{key[0]}:{key[1]} holds {len(pairs)} impossible pairing(s) — {listed}"


# How each kind of seed claim is checked: kind -> (criteria, facts) -> problem or None.
CLAIM_CHECKS: dict[str, Callable[[dict, CatalogueFacts], str | None]] = {
    "statement": _statement_problem,
    "cpu-generation": _cpu_generation_problem,
    "architecture": _architecture_problem,
    "gpu-model": _gpu_model_problem,
    "count": _count_problem,
    "name": _name_problem,
    "isa-slug": _isa_slug_problem,
    "isa-flags": _isa_flags_problem,
    "impossible-pairing": _impossible_pairing_problem,
}
IMPOSSIBLE_RULE = "arm-only-gpu"  # the lint rule that finds an impossible pairing


def evaluate_claim(kind: str, check: dict, facts: CatalogueFacts) -> str | None:
    """None when the claim holds; otherwise a sentence saying how the catalogue differs."""
    checker = CLAIM_CHECKS.get(kind)
    if checker is None:
        return f"Unknown claim kind {kind!r}."
    return checker(check, facts)


def gather_facts(claims: Iterable = ()) -> CatalogueFacts:
    """The facts the claims are checked against. Variant names are read only for the names a
    claim states and impossible pairings from the stored findings, so the cost follows the
    claims, not the catalogue."""
    from django.db.models import Count

    from catalog.models import Branch, CpuIsa, GpuArchitecture, GpuModel, Variant

    names: dict = {}
    for repo, branch, pname in Variant.objects.filter(
        _any_of(claims, "name", lambda c: {"pname": c["name"]})
    ).values_list("branch__repository", "branch__name", "pname"):
        names.setdefault((repo, branch), set()).add(pname)
    counted = Branch.objects.filter(_any_of(claims, "count", None, prefix=""))
    return CatalogueFacts(
        isa_flags=dict(CpuIsa.objects.values_list("slug", "compiler_flags")),
        arch_fields={
            a["sm"]: a
            for a in GpuArchitecture.objects.values(
                "sm", "min_cuda", "max_cuda", "min_driver", "compute_capability"
            )
        },
        model_arch=dict(GpuModel.objects.values_list("name", "architecture__sm")),
        variant_names=names,
        counts={(b.repository, b.name): b.n for b in counted.annotate(n=Count("variants"))},
        impossible=stored_impossible_pairings(),
    )


def _any_of(claims, kind: str, lookup: Callable[[dict], dict] | None, prefix="branch__"):
    """A filter matching what the claims of `kind` name on their branch (nothing when none):
    the facts are read for the claims, not for the whole catalogue."""
    from django.db.models import Q

    found = Q(pk__in=[])
    for claim in claims:
        criteria = claim.criteria or {}
        if claim.kind == kind and "repository" in criteria and "branch" in criteria:
            where = {f"{prefix}repository": criteria["repository"]}
            where[f"{prefix}name"] = criteria["branch"]
            found |= Q(**where, **(lookup(criteria) if lookup else {}))
    return found


def stored_impossible_pairings() -> dict:
    """(repository, branch) -> [(pname, reason)], as `impossible_pairings` computed them when
    the branch was written."""
    from catalog.models import AuditFinding

    found: dict = {}
    rows = AuditFinding.objects.filter(kind="impossible").order_by("branch", "position")
    for repo, branch, pname, why in rows.values_list(
        "branch__repository", "branch__name", "variant_name", "message"
    ):
        found.setdefault((repo, branch), []).append((pname, why))
    return found


def impossible_pairings(variants) -> Iterator[tuple]:
    """(variant, reason) for each of `variants` (with branch__pytorch_branch, gpu_arch and
    cpu_isa joined) that no machine runs; a companion's reason names the PyTorch it lacks."""
    for v in variants:
        why = v.impossible_pairing
        if not why:
            continue
        if v.library != "pytorch" and not v.depends_on_id:
            target = v.branch.pytorch_branch or v.branch
            name = naming.compose(
                "pytorch", v.python_version, "cuda", v.cuda_version, v.gpu_arch.sm, v.cpu_isa.slug
            )
            why += f" No PyTorch {name} on {target.repository}:{target.name} to build against."
        yield v, why


def count_finding(branch: Branch, actual: int) -> Finding | None:
    """The finding for a branch whose seeds state another number of variants, or None."""
    stated = branch.stated_variant_count
    if stated is None or actual == stated:
        return None
    return Finding(
        key=f"count-{branch.repository}-{branch.name}",
        kind="count",
        subject=f"branch:{branch}",
        message=f"The seeds state {stated} variants; the catalogue has {actual}.",
    )


def validation_finding(obj) -> Finding | None:
    """The finding for a record that fails its model's rules, or None."""
    from catalog.services import validation_message

    relations = [f.name for f in obj._meta.fields if f.is_relation]
    try:
        # Uniqueness and foreign keys are enforced by the database; checking them here would
        # cost a query per record. The rules in clean() are what the audit adds.
        obj.full_clean(exclude=relations, validate_unique=False, validate_constraints=False)
    except ValidationError as exc:
        return Finding(
            key=f"invalid-{obj._meta.model_name}-{obj.pk}",
            kind="validation",
            subject=f"{obj._meta.verbose_name}:{obj}",
            message=f"Fails validation — {validation_message(exc)}",
        )
    return None


def _validation_findings() -> Iterator[Finding]:
    """The reference tables checked now (a few dozen rows); branches and variants as stored
    when they were written."""
    from catalog import audit_store
    from catalog.models import CpuIsa, GpuArchitecture, GpuModel

    for qs in (
        CpuIsa.objects.all(),
        GpuArchitecture.objects.all(),
        GpuModel.objects.select_related("architecture"),
    ):
        for obj in qs:
            finding = validation_finding(obj)
            if finding:
                yield finding
    yield from audit_store.stored_validation()


def _stale_count(criteria: dict, facts: CatalogueFacts) -> bool:
    """An acknowledged count claim records the catalogue's own count (`catalogue`); when the
    catalogue no longer has that many, the recorded resolution no longer explains it."""
    expected = criteria.get("catalogue")
    key = (criteria.get("repository"), criteria.get("branch"))
    return expected is not None and facts.counts.get(key, 0) != expected


def _stale_note(kind: str, criteria: dict) -> str:
    expected = criteria["catalogue"] if kind == "count" else criteria.get("count")
    return f" The recorded resolution expects {expected}."


def _stale(kind: str, criteria: dict, facts: CatalogueFacts) -> bool:
    if kind == "count":
        return _stale_count(criteria, facts)
    if kind == "impossible-pairing":
        key = (criteria.get("repository"), criteria.get("branch"))
        return len(facts.impossible.get(key, [])) != criteria.get("count")
    return False


GATES = ("seeded", "imported", "all", "none")  # or REPOSITORY:BRANCH
DEFAULT_GATE = ("seeded",)


def check_claims() -> tuple[list[Finding], list[Verified], dict]:
    """The seed claims, the stated counts and validation: (findings, verified claims, the
    impossible pairings acknowledged claims record per (repository, branch))."""
    from catalog import audit_store
    from catalog.models import SourceClaim

    claims = list(SourceClaim.objects.all())
    facts = gather_facts(claims)
    findings, verified = [], []
    explained_counts = set()  # (repository, branch, stated count) an acknowledged claim explains
    recorded = {}  # (repository, branch) -> the impossible pairings an acknowledged claim records
    for claim in claims:
        criteria = claim.criteria or {}
        problem = evaluate_claim(claim.kind, criteria, facts)
        if problem is None:
            verified.append(Verified(claim.key, claim.subject, claim.statement, claim.source))
            continue
        stale = _stale(claim.kind, criteria, facts)
        if claim.kind == "count" and claim.acknowledged and not stale:
            explained_counts.add((criteria["repository"], criteria["branch"], criteria["count"]))
        if claim.kind == "impossible-pairing" and claim.acknowledged and not stale:
            key = (criteria["repository"], criteria["branch"])
            recorded[key] = frozenset(pname for pname, _ in facts.impossible[key])
        findings.append(
            Finding(
                key=claim.key,
                kind=claim.kind,
                subject=claim.subject,
                message=problem + (_stale_note(claim.kind, criteria) if stale else ""),
                source=claim.source,
                statement=claim.statement,
                resolution=claim.resolution,
                known=claim.acknowledged and not stale,
            )
        )
    findings.extend(audit_store.stored_counts(explained_counts))
    findings.extend(_validation_findings())
    return findings, verified, recorded


def run_audit(gate: Iterable[str] = DEFAULT_GATE, recompute: bool = True) -> AuditResult:
    """gate: which branches' lint findings count against the result (GATES or
    "repository:branch" names). The per-branch findings are computed again for every branch
    and stored (catalog/audit_store.py), so a write that bypassed the signals (a raw `update`)
    is caught too; with recompute=False they are read as stored when each branch was written,
    computed first only for a branch written since."""
    from catalog import audit_store
    from catalog.models import Branch

    if recompute:
        audit_store.refresh_all()
    else:
        audit_store.refresh_stale()
    findings, verified, recorded = check_claims()
    stored = audit_store.stored_lint()
    lint_branches = [
        BranchLint(
            branch.repository,
            branch.name,
            branch_imported(branch),
            gates(branch, gate),
            stored.get(branch.pk, []),
            recorded.get((branch.repository, branch.name), frozenset()),
        )
        for branch in Branch.objects.all()
    ]
    return AuditResult(findings=findings, verified=verified, lint=lint_branches)


# ---------------------------------------------------------------- lint records


def branch_imported(branch: Branch) -> bool:
    """Whether a branch was read from a build repository rather than seeded: the one place that
    asks (Branch.is_imported where the model records its origin; seeded otherwise)."""
    return bool(getattr(branch, "is_imported", False))


def gates(branch: Branch, gate: Iterable[str]) -> bool:
    """Whether the branch's lint findings count against the audit's result."""
    gate = set(gate)
    if "none" in gate:
        return False
    return (
        "all" in gate
        or ("imported" if branch_imported(branch) else "seeded") in gate
        or f"{branch.repository}:{branch.name}" in gate
    )


def architecture_facts() -> dict[str, lint.ArchFacts]:
    """Each architecture's CUDA bounds and host CPU architecture, from its row."""
    from catalog.models import GpuArchitecture

    return {
        arch.sm: lint.ArchFacts(arch.sm, arch.min_cuda, arch.max_cuda, arch.host_arch)
        for arch in GpuArchitecture.objects.all()
    }


def lint_records(variants=None) -> list[lint.VariantRecord]:
    """One record per variant (of `variants`, with branch, gpu_arch, cpu_isa and
    depends_on__branch joined; every variant by default): the facts of its recipe next to the
    catalogue's fields.

    An imported variant brings the facts read from its own source (with its file name); a
    seeded one is checked as the recipe the catalogue renders for it (`recipe_facts`)."""
    from pathlib import PurePosixPath

    from catalog.models import Variant
    from catalog.recipes.exporting.nix import recipe_facts
    from catalog.recipes.importing.recipes import facts_from_json

    if variants is None:
        variants = Variant.objects.select_related(
            "branch", "gpu_arch", "cpu_isa", "depends_on__branch"
        )
    records = []
    for v in variants:
        if v.origin == "imported" and v.recipe_facts:
            stem = PurePosixPath(v.recipe_path).stem if v.recipe_path else v.pname
            records.append(_lint_record(v, facts_from_json(v.recipe_facts), file_name=stem))
        else:
            records.append(_lint_record(v, recipe_facts(v), file_name=v.pname))
    return records


def _lint_record(variant, facts, file_name: str) -> lint.VariantRecord:
    source = facts.pytorch_source
    return lint.VariantRecord(
        repository=variant.branch.repository,
        branch=variant.branch.name,
        pname=facts.pname,
        file_name=file_name,
        library=variant.library,
        backend=variant.backend,
        cuda_version=variant.cuda_version,
        sm=variant.gpu_arch.sm if variant.gpu_arch_id else "",
        isa=variant.cpu_isa.slug if variant.cpu_isa_id else "",
        platforms=tuple(facts.platforms),
        gpu_targets=tuple(facts.gpu_targets),
        nixpkgs_pin=facts.nixpkgs_pin,
        planned=variant.status == "planned",
        pytorch_recipe=source.sibling if source and source.kind == "sibling" else "",
    )
