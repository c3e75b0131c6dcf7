"""Reference pages: home, variant detail, architectures, ISAs, branches, docs and the audit.

Each view parses its URL, asks `catalog.queries` for the rows (with the joins the template
needs, so query counts stay constant) and renders one template.
"""

import re
from dataclasses import dataclass

from django.http import HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_safe

from catalog import audit_store, cache, doc_render, lint, naming, queries, vocabulary
from catalog.audit import DEFAULT_GATE, branch_imported, check_claims, gates
from catalog.browse.grid import build_grid
from catalog.browse.views import compare, matrix, select
from catalog.build_commands import DEFAULT_ORG
from catalog.recipes.exporting import sync
from catalog.recipes.nix.highlight import highlight_nix

# `flox publish -o <org>`: the reader's Flox organisation, filled in from ?org= when valid.
ORG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


# Branches the home page's table lists per repository (and every recommended or default one);
# /branches/ lists them all.
HOME_BRANCHES = 8


@require_safe
def home(request):
    canonical = matrix.canonical_branch_redirect(request)
    if canonical is not None:
        return canonical
    shown, branch_count = queries.home_branch_ids(HOME_BRANCHES)
    branches = list(queries.branches_overview().filter(pk__in=shown))
    architectures = list(queries.architectures_overview())
    selector_html, status = select.panel(request.GET)
    return render(
        request,
        "catalog/home.html",
        {
            "branches": branches,
            "branch_count": branch_count,
            "home_branches": HOME_BRANCHES,
            "total_variants": select.rows().size,  # the selector's index holds every variant
            "architectures": architectures,
            "gpu_links": [a for a in architectures if a.variant_count],
            "isas": queries.isas_with_counts(),
            "docs": queries.doc_pages(),
            "selector_html": selector_html,
        },
        status=status,
    )


def _recipe_html(variant):
    """The variant's .nix recipe exactly as export-recipes writes it (same function), highlighted:
    an imported variant's own source, with the catalogue's changes edited in. Both steps are
    done once: the text per catalogue version, the HTML per text."""
    [text] = cache.cached("recipe-text", lambda: sync.exported_texts([variant]), variant.pk)
    return cache.by_content("recipe-html", highlight_nix, text)


@require_safe
def variant_detail(request, repository, branch, pname):
    variant = queries.variant_detail(repository, branch, pname)
    org = request.GET.get("org", "").strip()
    org_error = ""
    if org and not ORG_RE.match(org):
        org_error = "An organisation name has letters, digits, '.', '_' or '-'."
        org = ""
    org = org or DEFAULT_ORG
    answer = queries.variant_build_answer(variant, "" if org == DEFAULT_ORG else org)
    isa = variant.cpu_isa
    # One query serves "the same variant on other branches" and "compare with…".
    candidates = list(queries.compare_candidates(variant))
    return render(
        request,
        "catalog/variant_detail.html",
        {
            "variant": variant,
            "branch": variant.branch,
            "gpu_models": list(variant.gpu_arch.models.all()) if variant.gpu_arch_id else [],
            "isa": isa,
            "answer": answer,
            "commands": answer["commands"],
            "org": "" if org == DEFAULT_ORG else org,
            "org_error": org_error,
            "recipe_path": variant.recipe_path or naming.recipe_path(variant.pname),
            "companions": list(queries.variant_companions(variant)),
            "other_branches": [c for c in candidates if _same_build(c, variant)],
            "builds": list(queries.variant_builds(variant)),
            "recipe_html": _recipe_html(variant),
            "clone_url": vocabulary.REPOSITORIES[variant.branch.repository].url,
            "variant_id": compare.variant_id(variant),
            "compare_candidates": _compare_groups(variant, candidates),
            **queries.variant_availability(variant),
        },
    )


def _same_build(other, variant) -> bool:
    """The same library for the same hardware on another branch (any CUDA, any Python)."""
    return other.branch_id != variant.branch_id and all(
        getattr(other, f) == getattr(variant, f)
        for f in ("library", "backend", "gpu_arch_id", "cpu_isa_id", "platform")
    )


def _compare_groups(variant, candidates):
    """The "compare with…" choices: this branch first, then the same build elsewhere."""
    here, elsewhere = [], []
    for other in candidates:
        same_branch = other.branch_id == variant.branch_id
        label = other.pname if same_branch else f"{other.pname} ({other.branch})"
        (here if same_branch else elsewhere).append((compare.variant_id(other), label))
    groups = [("On this branch", here), ("On other branches", elsewhere)]
    return [(name, options) for name, options in groups if options]


@require_safe
def architectures(request):
    return render(
        request,
        "catalog/architectures.html",
        {"architectures": queries.architectures_overview()},
    )


BRANCHES_PER_PAGE = 20  # branch groups per architecture or ISA page


def _paged_groups(request, **filters):
    """(context, None) with a page of branch groups and its links, or (None, a 400 response)
    for a page number the list does not have."""
    from django.core.paginator import Paginator

    from catalog.models import Variant

    raw = request.GET.get("page", "1")
    branch_ids = queries.branch_ids_of(Variant.objects.filter(**filters))
    paginator = Paginator(branch_ids, BRANCHES_PER_PAGE)
    if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= paginator.num_pages):
        return None, HttpResponseBadRequest(
            f"The page must be a whole number from 1 to {paginator.num_pages}.\n"
        )
    page = paginator.page(int(raw))
    groups = _branch_groups(queries.variants_by_branch(page.object_list, **filters))
    links = {
        "page": page,
        "previous": f"?page={page.number - 1}" if page.has_previous() else "",
        "next": f"?page={page.number + 1}" if page.has_next() else "",
    }
    return {"groups": groups, "branch_pages": links if paginator.num_pages > 1 else None}, None


@require_safe
def architecture_detail(request, sm):
    arch = queries.architecture_detail(sm)
    paged, refusal = _paged_groups(request, gpu_arch=arch)
    if refusal:
        return refusal
    return render(
        request,
        "catalog/architecture_detail.html",
        {
            "arch": arch,
            "models": list(arch.models.all()),
            **paged,
            "matrix_param": f"gpu={arch.sm}",
        },
    )


@require_safe
def isas(request):
    return render(request, "catalog/isas.html", {"isas": queries.isas_overview()})


@require_safe
def isa_detail(request, slug):
    isa = queries.isa_detail(slug)
    paged, refusal = _paged_groups(request, cpu_isa=isa)
    if refusal:
        return refusal
    return render(
        request,
        "catalog/isa_detail.html",
        {"isa": isa, **paged, "matrix_param": f"isa={isa.slug}"},
    )


def _branch_groups(groups):
    """Per branch: its variants plus the libraries and CUDA versions among them."""
    return [
        {
            "branch": branch,
            "variants": variants,
            "libraries": sorted({v.library for v in variants}),
            "cuda_versions": sorted(
                {v.cuda_version for v in variants if v.cuda_version}, key=naming.version_key
            ),
        }
        for branch, variants in groups
    ]


@require_safe
def branches(request):
    return render(request, "catalog/branches.html", {"branches": queries.branches_overview()})


@require_safe
def branch_detail(request, repository, branch):
    branch = queries.branch_detail(repository, branch)
    variants = list(queries.branch_variants(branch))
    return render(
        request,
        "catalog/branch_detail.html",
        {
            "branch": branch,
            "companion_branches": list(branch.companion_branches.all()),
            "variants": variants,
            "grid": build_grid(variants),
            "sources": queries.branch_sources(branch),
            "count_matches": branch.stated_variant_count in (None, branch.variant_count),
        },
    )


@require_safe
def docs(request):
    return render(request, "catalog/docs.html", {"docs": queries.doc_pages()})


@require_safe
def doc(request, slug):
    page = queries.doc_page(slug)
    return render(
        request,
        "catalog/doc.html",
        {"page": page, "rendered": doc_render.render(page.body), "docs": queries.doc_pages()},
    )


LINT_PER_PAGE = 100  # lint findings per audit page: the page stays small as branches multiply


@dataclass(frozen=True)
class _LintGroup:
    """One branch's findings on an audit page, with what its heading says of the branch."""

    branch: object
    imported: bool
    count: int  # all its lint findings, on every page
    gating: bool  # any of them counts against the audit's result
    recorded: frozenset  # variants whose impossible pairing an acknowledged claim records
    findings: list


def _lint_groups(rows, recorded: dict) -> list[_LintGroup]:
    """The page's findings grouped by branch: two queries for the page's branches."""
    branches = {b.pk: b for b, _ in rows}
    counts = audit_store.lint_count(list(branches))
    recorded_counts = audit_store.recorded_count(list(branches.values()), recorded)
    groups: list[_LintGroup] = []
    for branch, finding in rows:
        if not groups or groups[-1].branch.pk != branch.pk:
            known = recorded.get((branch.repository, branch.name), frozenset())
            groups.append(
                _LintGroup(
                    branch,
                    branch_imported(branch),
                    counts.get(branch.pk, 0),
                    gates(branch, DEFAULT_GATE)
                    and counts.get(branch.pk, 0) > recorded_counts.get(branch.pk, 0),
                    known,
                    [],
                )
            )
        groups[-1].findings.append(finding)
    return groups


@require_safe
def audit(request):
    """The claims checked now (a constant few dozen) and one page of the stored lint findings:
    the cost follows the page, not the catalogue. Kept whole per structure version and the set
    of planned variants (the one status the findings read): a build record that plans or
    unplans nothing leaves it in place."""
    raw = request.GET.get("page", "1")
    if not (raw.isascii() and raw.isdigit() and 0 < int(raw) <= 100_000):
        return HttpResponseBadRequest("The page must be a whole number from 1.\n")
    page = int(raw)
    planned = queries.planned_variant_ids()
    return cache.cached_response(
        "audit-page",
        lambda: _audit_page(request, page),
        page,
        planned,
        version=cache.structure_version(),
    )


def _audit_page(request, page: int):
    audit_store.refresh_stale()
    total = sum(audit_store.lint_count().values())
    pages = max(1, -(-total // LINT_PER_PAGE))
    if page > pages:
        return HttpResponseBadRequest(f"The audit's lint has {pages} page(s), not {page}.\n")
    findings, verified, recorded = check_claims()
    rows = audit_store.lint_page((page - 1) * LINT_PER_PAGE, LINT_PER_PAGE)
    return render(
        request,
        "catalog/audit.html",
        {
            "new": [f for f in findings if not f.known],
            "known": [f for f in findings if f.known],
            "verified": verified,
            "branch_count": queries.branch_count(),
            "lint_groups": _lint_groups(rows, recorded),
            "lint_count": total,
            "lint_rules": lint.RULES,
            "lint_page": {
                "number": page,
                "pages": pages,
                "first": (page - 1) * LINT_PER_PAGE + 1,
                "last": min(page * LINT_PER_PAGE, total),
                "previous": f"?page={page - 1}#lint" if page > 1 else "",
                "next": f"?page={page + 1}#lint" if page < pages else "",
            },
        },
    )
