"""The catalogue audit: seed claims checked against the data, counts, and validation.

`evaluate_claim` is pure (plain values in, a verdict out); `run_audit` gathers the data. A
finding is *known* when its claim is acknowledged (recorded with a resolution) and *new*
otherwise; `audit-catalogue` exits 1 while any new finding remains.
"""
from __future__ import annotations

from dataclasses import dataclass

import archspec.cpu
from django.core.exceptions import ValidationError

from catalog import hardware, naming


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


@dataclass
class AuditResult:
    findings: list
    verified: list

    @property
    def new(self):
        return [f for f in self.findings if not f.known]

    @property
    def known(self):
        return [f for f in self.findings if f.known]

    @property
    def ok(self):
        return not self.new


@dataclass(frozen=True)
class CatalogueFacts:
    """The plain facts claims are checked against."""

    isa_flags: dict  # slug -> compiler flags
    arch_fields: dict  # sm -> {"min_cuda": ..., "max_cuda": ..., ...}
    model_arch: dict  # GPU model name -> sm
    variant_names: dict  # (repository, branch) -> set of pnames
    counts: dict  # (repository, branch) -> number of variants


def _cpu_features(check):
    if "features" in check:
        return set(check["features"])
    target = archspec.cpu.TARGETS.get(check.get("microarch", ""))
    if target is None:
        return None
    return set(target.features)


def _arch_buildable(fields, cuda):
    v = naming.version_key(cuda)[:2]
    if v < naming.version_key(fields["min_cuda"])[:2]:
        return False
    return not (fields.get("max_cuda") and v > naming.version_key(fields["max_cuda"])[:2])


def evaluate_claim(kind: str, check: dict, facts: CatalogueFacts) -> str | None:
    """None when the claim holds; otherwise a sentence saying how the catalogue differs."""
    if kind == "statement":
        return "The seed documents disagree here (a recorded contradiction)."
    if kind == "cpu-generation":
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
    if kind == "architecture":
        sms = check["sm"] if isinstance(check["sm"], list) else [check["sm"]]
        unknown = [sm for sm in sms if sm not in facts.arch_fields]
        if unknown:
            return f"No architecture {', '.join(unknown)} in the catalogue."
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
    if kind == "gpu-model":
        actual = facts.model_arch.get(check["model"])
        if actual is None:
            return f"No GPU model {check['model']!r} in the catalogue (claimed {check['sm'].upper()})."
        if actual != check["sm"]:
            return f"The catalogue resolves {check['model']} to {actual.upper()}, not {check['sm'].upper()}."
        return None
    if kind == "count":
        key = (check["repository"], check["branch"])
        actual = facts.counts.get(key, 0)
        if actual != check["count"]:
            return f"{key[0]}:{key[1]} has {actual} variants, not {check['count']}."
        return None
    if kind == "name":
        name = check["name"]
        try:
            naming.parse(name)
        except naming.InvalidName as exc:
            return f"Not a valid package name: {exc}."
        key = (check["repository"], check["branch"])
        if name not in facts.variant_names.get(key, set()):
            return f"{name} is not a variant of {key[0]}:{key[1]}."
        return None
    if kind == "isa-slug":
        if check["slug"] not in facts.isa_flags:
            return f"No ISA slug {check['slug']!r}; the catalogue's slugs are {', '.join(sorted(facts.isa_flags))}."
        return None
    if kind == "isa-flags":
        actual = facts.isa_flags.get(check["isa"])
        if actual != check["flags"]:
            return f"The {check['isa']} recipes compile with {' '.join(actual or [])}, not {' '.join(check['flags'])}."
        return None
    return f"Unknown claim kind {kind!r}."


def gather_facts() -> CatalogueFacts:
    from django.db.models import Count

    from catalog.models import Branch, CpuIsa, GpuArchitecture, GpuModel, Variant

    names: dict = {}
    for repo, branch, pname in Variant.objects.values_list("branch__repository", "branch__name", "pname"):
        names.setdefault((repo, branch), set()).add(pname)
    return CatalogueFacts(
        isa_flags=dict(CpuIsa.objects.values_list("slug", "compiler_flags")),
        arch_fields={
            a["sm"]: a for a in GpuArchitecture.objects.values("sm", "min_cuda", "max_cuda", "min_driver", "compute_capability")
        },
        model_arch=dict(GpuModel.objects.values_list("name", "architecture__sm")),
        variant_names=names,
        counts={
            (b.repository, b.name): b.n
            for b in Branch.objects.annotate(n=Count("variants"))
        },
    )


def _validation_findings():
    from catalog.models import Branch, CpuIsa, GpuArchitecture, GpuModel, Variant
    from catalog.services import validation_message

    querysets = [
        CpuIsa.objects.all(),
        GpuArchitecture.objects.all(),
        GpuModel.objects.select_related("architecture"),
        Branch.objects.select_related("pytorch_branch"),
        Variant.objects.select_related("branch", "gpu_arch", "cpu_isa", "depends_on"),
    ]
    for qs in querysets:
        relations = [f.name for f in qs.model._meta.fields if f.is_relation]
        for obj in qs:
            try:
                # Uniqueness and foreign keys are enforced by the database; checking them here
                # would cost a query per record. The rules in clean() are what the audit adds.
                obj.full_clean(exclude=relations, validate_unique=False, validate_constraints=False)
            except ValidationError as exc:
                detail = validation_message(exc)
                yield Finding(
                    key=f"invalid-{qs.model._meta.model_name}-{obj.pk}",
                    kind="validation",
                    subject=f"{qs.model._meta.verbose_name}:{obj}",
                    message=f"Fails validation — {detail}",
                )


def run_audit() -> AuditResult:
    from catalog.models import Branch, SourceClaim

    facts = gather_facts()
    findings, verified = [], []
    for claim in SourceClaim.objects.all():
        problem = evaluate_claim(claim.kind, claim.criteria or {}, facts)
        if problem is None:
            verified.append(Verified(claim.key, claim.subject, claim.statement, claim.source))
            continue
        findings.append(
            Finding(
                key=claim.key, kind=claim.kind, subject=claim.subject, message=problem,
                source=claim.source, statement=claim.statement, resolution=claim.resolution,
                known=claim.acknowledged,
            )
        )
    for branch in Branch.objects.all():
        actual = facts.counts.get((branch.repository, branch.name), 0)
        if branch.stated_variant_count is not None and actual != branch.stated_variant_count:
            findings.append(
                Finding(
                    key=f"count-{branch.repository}-{branch.name}",
                    kind="count",
                    subject=f"branch:{branch}",
                    message=f"The seeds state {branch.stated_variant_count} variants; the catalogue has {actual}.",
                )
            )
    findings.extend(_validation_findings())
    return AuditResult(findings=findings, verified=verified)
