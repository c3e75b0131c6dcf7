"""GET /branches/<repository>/<branch>/pending/ (staff only): what export would change in the
branch's recipes, and the audit's findings for the branch, before anything is written.

Each imported recipe is shown as the unified diff from its text as imported to what export
writes now (the same edit `export-recipes --check --diff` prints against a checkout); a recipe
export cannot edit in place names its field; a variant with no imported text is written from
the template, so it is listed as such.
"""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.shortcuts import get_object_or_404, render

from catalog import audit_store
from catalog.models import Branch, Variant
from catalog.recipes.exporting import sync
from catalog.recipes.nix.errors import EditError


@staff_member_required
def pending(request, repository, branch):
    branch = get_object_or_404(Branch, repository=repository, name=branch)
    changes, refused, templated = [], [], []
    for variant in sync.branch_variants(branch):
        if not variant.recipe_text:
            templated.append(variant)
            continue
        try:
            diff = sync.export_diff(variant)
        except EditError as exc:
            refused.append((variant, exc))
            continue
        if diff:
            changes.append((variant, diff))
    # The branch's stored findings (computed now only if it was written without them).
    audit_store.refresh_stale()
    findings = audit_store.stored_lint([branch.pk]).get(branch.pk, [])
    return render(
        request,
        "catalog/pending.html",
        {
            "branch": branch,
            "changes": changes,
            "refused": refused,
            "templated": templated,
            "unchanged": Variant.objects.filter(branch=branch).count()
            - len(changes)
            - len(refused)
            - len(templated),
            "findings": findings,
        },
    )
