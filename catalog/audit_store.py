"""The audit's per-branch findings, stored when a branch is written.

Checking every variant (its recipe's lint, its validation, its impossible pairing) grows with the
catalogue, so it is done per branch when the branch changes, and the audit page, /pending/ and
`audit-catalogue` read the stored rows. A branch's findings are current while it has an
AuditedBranch mark; every write that can change them deletes the mark in the same transaction
(the signals below), and the writers (seeding, import, edits) compute the unmarked branches again
before they commit (`refresh_stale`). A write that skips that (an admin form, a build record)
leaves its branch unmarked: its findings are computed when they are next read, one branch's work.

What a branch's findings depend on: its own fields and variants, the PyTorch branch its
companions are built against (a companion's validation and recipe name its PyTorch), and the
architectures and ISAs (the lint's bounds, the rendered recipes' flags), whose change unmarks
every branch.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from django.db.models.signals import post_delete, post_save, pre_save

from catalog import audit, cache, lint
from catalog.models import (
    AuditedBranch,
    AuditFinding,
    Branch,
    CpuIsa,
    GpuArchitecture,
    Variant,
)

REFRESH_CHUNK = 50  # branches computed per pass: bounds the variants held in memory


def _variants(branch_ids):
    related = ("branch__pytorch_branch", "gpu_arch", "cpu_isa", "depends_on__branch")
    return list(Variant.objects.filter(branch_id__in=branch_ids).select_related(*related))


def compute(branch_ids) -> list[AuditFinding]:
    """The findings of these branches as unsaved rows, computed from the catalogue now."""
    branches = list(Branch.objects.filter(pk__in=branch_ids).select_related("pytorch_branch"))
    by_name = {(b.repository, b.name): b for b in branches}
    variants = _variants(branch_ids)
    rows: list[AuditFinding] = []
    positions: dict = {}

    def add(branch, kind, **fields):
        position = positions.get((branch.pk, kind), 0)
        positions[(branch.pk, kind)] = position + 1
        rows.append(AuditFinding(branch=branch, kind=kind, position=position, **fields))

    for f in lint.lint(audit.lint_records(variants), audit.architecture_facts()):
        branch = by_name[(f.repository, f.branch)]
        add(branch, "lint", rule=f.rule, variant_name=f.variant, message=f.message)
    for v, why in audit.impossible_pairings(variants):
        add(v.branch, "impossible", variant=v, variant_name=v.pname, message=why)
    sizes: dict = {}
    for v in variants:
        sizes[v.branch_id] = sizes.get(v.branch_id, 0) + 1
    for branch in branches:
        finding = audit.count_finding(branch, sizes.get(branch.pk, 0))
        if finding:
            add(branch, "count", key=finding.key, subject=finding.subject, message=finding.message)
    # Validation last: clean() may normalise the instances the lint has already read.
    for obj in [*branches, *variants]:
        finding = audit.validation_finding(obj)
        if finding:
            add(
                obj if isinstance(obj, Branch) else obj.branch,
                "validation",
                variant=None if isinstance(obj, Branch) else obj,
                key=finding.key,
                subject=finding.subject,
                message=finding.message,
            )
    return rows


@transaction.atomic
def refresh(branch_ids) -> None:
    """Compute and store these branches' findings and mark them current."""
    branch_ids = sorted(set(branch_ids))
    for i in range(0, len(branch_ids), REFRESH_CHUNK):
        chunk = branch_ids[i : i + REFRESH_CHUNK]
        rows = compute(chunk)
        AuditFinding.objects.filter(branch_id__in=chunk).delete()
        AuditFinding.objects.bulk_create(rows, batch_size=500)
        AuditedBranch.objects.bulk_create(
            [AuditedBranch(branch_id=pk) for pk in chunk], ignore_conflicts=True
        )


def stale_branch_ids() -> list[int]:
    return list(Branch.objects.filter(audited__isnull=True).values_list("pk", flat=True))


def refresh_stale() -> int:
    """Compute the findings of every branch written since they were stored; how many."""
    stale = stale_branch_ids()
    if stale:
        refresh(stale)
    return len(stale)


def refresh_all() -> int:
    """Compute every branch's findings again (after a bulk write, which sends no signals)."""
    AuditedBranch.objects.all().delete()
    return refresh_stale()


# ---------------------------------------------------------------- reading


def _lint_finding(row: AuditFinding) -> lint.LintFinding:
    return lint.LintFinding(
        row.branch.repository, row.branch.name, row.variant_name, row.rule, row.message
    )


def stored_lint(branch_ids=None) -> dict[int, list[lint.LintFinding]]:
    """Branch pk -> its lint findings in order (of these branches; all by default)."""
    rows = AuditFinding.objects.filter(kind="lint").select_related("branch")
    if branch_ids is not None:
        rows = rows.filter(branch_id__in=branch_ids)
    found: dict = {}
    for row in rows.order_by("branch", "position"):
        found.setdefault(row.branch_id, []).append(_lint_finding(row))
    return found


def lint_page(offset: int, limit: int) -> list[tuple[Branch, lint.LintFinding]]:
    """Lint findings offset … offset+limit in the audit's order (branches as listed, then each
    branch's findings in order), with their branches."""
    order = [f"branch__{f}" for f in Branch._meta.ordering] + ["position"]
    rows = AuditFinding.objects.filter(kind="lint").select_related("branch").order_by(*order)
    return [(row.branch, _lint_finding(row)) for row in rows[offset : offset + limit]]


def lint_count(branch_ids=None) -> dict[int, int]:
    """Branch pk -> its number of lint findings."""
    from django.db.models import Count

    rows = AuditFinding.objects.filter(kind="lint")
    if branch_ids is not None:
        rows = rows.filter(branch_id__in=branch_ids)
    counted = rows.values("branch").annotate(n=Count("pk")).order_by()
    return {r["branch"]: r["n"] for r in counted}


def recorded_count(branches, recorded: dict) -> dict[int, int]:
    """Branch pk -> how many of its lint findings are impossible pairings an acknowledged claim
    records (`recorded`: (repository, branch) -> variant names); they do not gate."""
    wanted = [b.pk for b in branches if (b.repository, b.name) in recorded]
    rows = AuditFinding.objects.filter(
        kind="lint", rule=audit.IMPOSSIBLE_RULE, branch_id__in=wanted
    )
    names = {b.pk: recorded.get((b.repository, b.name), frozenset()) for b in branches}
    counted: dict = {}
    for pk, variant in rows.values_list("branch_id", "variant_name"):
        if variant in names[pk]:
            counted[pk] = counted.get(pk, 0) + 1
    return counted


def stored_counts(explained: set) -> list[audit.Finding]:
    """The branches whose seeds state another number of variants, in the branches' order, less
    those an acknowledged claim explains ((repository, branch, stated count))."""
    rows = AuditFinding.objects.filter(kind="count").select_related("branch")
    return [
        audit.Finding(key=row.key, kind="count", subject=row.subject, message=row.message)
        for row in rows.order_by(*[f"branch__{f}" for f in Branch._meta.ordering])
        if (row.branch.repository, row.branch.name, row.branch.stated_variant_count)
        not in explained
    ]


def stored_validation():
    """The validation findings of branches, then of variants, each in its model's order."""
    rows = AuditFinding.objects.filter(kind="validation")
    branch_order = [f"branch__{f}" for f in Branch._meta.ordering]
    variant_order = [f"variant__{f}" for f in Variant._meta.ordering]
    for row in [
        *rows.filter(variant__isnull=True).order_by(*branch_order, "position"),
        *rows.filter(variant__isnull=False).order_by(*variant_order, "position"),
    ]:
        yield audit.Finding(
            key=row.key, kind="validation", subject=row.subject, message=row.message
        )


# ---------------------------------------------------------------- keeping them current


def _unmark_branch(branch_id) -> None:
    """The branch and the companion branches built against it."""
    AuditedBranch.objects.filter(
        Q(branch_id=branch_id) | Q(branch__pytorch_branch_id=branch_id)
    ).delete()


def _on_variant(sender, instance, update_fields=None, **kwargs):
    if update_fields is None or not set(update_fields) <= cache.STATUS_FIELDS:
        _unmark_branch(instance.branch_id)


def _on_variant_status(sender, instance, update_fields=None, **kwargs):
    """A build outcome (a status-only save) changes the findings only when the variant becomes
    or stops being planned (the lint excuses a planned recipe's missing pin)."""
    if update_fields is None or not set(update_fields) <= cache.STATUS_FIELDS:
        return
    before = Variant.objects.filter(pk=instance.pk).values_list("status", flat=True).first()
    if (before == "planned") != (instance.status == "planned"):
        _unmark_branch(instance.branch_id)


def _on_branch(sender, instance, **kwargs):
    _unmark_branch(instance.pk)


def _on_reference(sender, **kwargs):
    AuditedBranch.objects.all().delete()


for _model, _handler in (
    (Variant, _on_variant),
    (Branch, _on_branch),
    (GpuArchitecture, _on_reference),
    (CpuIsa, _on_reference),
):
    for _signal, _name in ((post_save, "save"), (post_delete, "delete")):
        _signal.connect(_handler, sender=_model, dispatch_uid=f"audit-{_name}-{_model.__name__}")
pre_save.connect(_on_variant_status, sender=Variant, dispatch_uid="audit-status-Variant")
