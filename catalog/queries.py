"""Read queries, each with the joins its page needs, so page query counts stay constant."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count, F, Q, QuerySet
from django.shortcuts import get_object_or_404

from catalog import naming, vocabulary
from catalog.models import (
    LIBRARIES,
    Branch,
    BuildRecord,
    CpuIsa,
    DocPage,
    GpuArchitecture,
    GpuModel,
    Variant,
)
from catalog.wizard.snapshot import Catalogue


def branches_with_counts() -> QuerySet[Branch]:
    return Branch.objects.annotate(
        variant_count=Count("variants"),
        gpu_count=Count("variants", filter=Q(variants__backend="cuda")),
    ).order_by("repository", "preference", "name")


# Django leaves a model's Meta.ordering out of GROUP BY queries, so every annotated list below
# states its order: architectures oldest first (SM61 before SM100, not by name), ISAs x86_64
# first and oldest hardware first, as the matrix's filters and grid columns show them.
ARCHITECTURE_ORDER = ("arch_number",)
ISA_ORDER = ("-arch", "rank", "slug")  # "x86_64" sorts after "aarch64": descending puts it first


def architectures_with_counts() -> QuerySet[GpuArchitecture]:
    return (
        GpuArchitecture.objects.annotate(variant_count=Count("variants"))
        .prefetch_related("models")
        .order_by(*ARCHITECTURE_ORDER)
    )


def isas_with_counts() -> QuerySet[CpuIsa]:
    return CpuIsa.objects.annotate(variant_count=Count("variants")).order_by(*ISA_ORDER)


def doc_pages() -> QuerySet[DocPage]:
    return DocPage.objects.only("slug", "title", "summary", "order")


# --- Reference pages (catalog/browse/views/pages.py) ---------------------------------------------
_LIBRARY_COUNTS = {
    f"{lib}_count": Count("variants", filter=Q(variants__library=lib)) for lib, _ in LIBRARIES
}
_BACKEND_COUNTS = {
    f"{backend}_count": Count("variants", filter=Q(variants__backend=backend))
    for backend in vocabulary.BACKENDS
}


def branches_overview() -> QuerySet[Branch]:
    """Every branch with its actual variant count, per library and per backend."""
    return (
        Branch.objects.select_related("pytorch_branch")
        .annotate(variant_count=Count("variants"), **_LIBRARY_COUNTS, **_BACKEND_COUNTS)
        .order_by("repository", "preference", "name")
    )


def branch_detail(repository: str, name: str) -> Branch:
    qs = branches_overview().prefetch_related("companion_branches")
    return get_object_or_404(qs, repository=repository, name=name)


def branch_variants(branch: Branch) -> QuerySet[Variant]:
    """A branch's variants with what a grid cell or a list row shows."""
    return (
        Variant.objects.filter(branch=branch)
        .select_related("branch", "gpu_arch", "cpu_isa")
        .order_by(
            "library", "gpu_arch__arch_number", "cpu_isa__arch", "cpu_isa__rank", "cuda_version"
        )
    )


def variant_detail(repository: str, branch: str, pname: str) -> Variant:
    qs = Variant.objects.select_related(
        "branch", "gpu_arch", "cpu_isa", "depends_on__branch"
    ).prefetch_related("gpu_arch__models")
    return get_object_or_404(qs, branch__repository=repository, branch__name=branch, pname=pname)


def variant_companions(variant: Variant) -> QuerySet[Variant]:
    return variant.companions.select_related("branch").order_by("library", "pname")


def variant_builds(variant: Variant) -> QuerySet[BuildRecord]:
    return BuildRecord.objects.filter(variant=variant)


def architectures_overview() -> QuerySet[GpuArchitecture]:
    return (
        GpuArchitecture.objects.annotate(
            variant_count=Count("variants"), branch_count=Count("variants__branch", distinct=True)
        )
        .prefetch_related("models")
        .order_by(*ARCHITECTURE_ORDER)
    )


def architecture_detail(sm: str) -> GpuArchitecture:
    return get_object_or_404(GpuArchitecture.objects.prefetch_related("models"), sm=sm)


def isa_detail(slug: str) -> CpuIsa:
    return get_object_or_404(CpuIsa.objects.all(), slug=slug)


def isas_overview() -> QuerySet[CpuIsa]:
    return CpuIsa.objects.annotate(
        variant_count=Count("variants"), branch_count=Count("variants__branch", distinct=True)
    ).order_by(*ISA_ORDER)


def variants_by_branch(**filters: object) -> list[tuple[Branch, list[Variant]]]:
    """Variants matching `filters`, grouped per branch: [(branch, [variants])], branch order."""
    variants = (
        Variant.objects.filter(**filters)
        .select_related("branch", "gpu_arch", "cpu_isa")
        .order_by(
            "branch__repository",
            "branch__preference",
            "branch__name",
            "library",
            "gpu_arch__arch_number",
            "cpu_isa__rank",
            "cuda_version",
            "pname",
        )
    )
    groups = []
    for v in variants:
        if not groups or groups[-1][0].pk != v.branch_id:
            groups.append((v.branch, []))
        groups[-1][1].append(v)
    return groups


def doc_page(slug: str) -> DocPage:
    return get_object_or_404(DocPage.objects.all(), slug=slug)


# --- Variant matrix (/variants/, /api/variants) ---------------------------------------------
# Branch, then library, then hardware from oldest to newest: the order people read the matrix in.
MATRIX_ORDER = (
    "branch__repository",
    "branch__preference",
    "branch__name",
    "library",
    F("gpu_arch__arch_number").asc(nulls_last=True),
    "backend",
    "cpu_isa__arch",
    "cpu_isa__rank",
    F("cuda_version").desc(),
)


# What a matrix row, grid cell, API record or CSV line reads; the rest (recipe text, JSON facts)
# would cost most of the matrix's rendering time to load and decode.
MATRIX_FIELDS = (
    "pname",
    "library",
    "backend",
    "cuda_version",
    "platform",
    "python_version",
    "status",
    "branch__repository",
    "branch__name",
    "branch__preference",
    "gpu_arch__sm",
    "gpu_arch__arch_number",
    "gpu_arch__compute_capability",
    "gpu_arch__name",
    "gpu_arch__label",
    "cpu_isa__slug",
    "cpu_isa__label",
    "cpu_isa__description",
    "cpu_isa__arch",
    "cpu_isa__rank",
)


def matrix_variants() -> QuerySet[Variant]:
    """Every variant with what a matrix row, grid cell, API record or CSV line shows: one query."""
    return (
        Variant.objects.select_related("branch", "gpu_arch", "cpu_isa")
        .only(*MATRIX_FIELDS)
        .order_by(*MATRIX_ORDER)
    )


def matrix_choices() -> dict:
    """The values the matrix's filters accept that come from the data (four small queries)."""
    from catalog.naming import version_key

    branches = list(
        Branch.objects.order_by("repository", "preference", "name").values_list(
            "repository", "name", "python_version"
        )
    )
    pythons = {python for _, _, python in branches}
    cudas = set(
        Variant.objects.exclude(cuda_version="")
        .order_by()
        .values_list("cuda_version", flat=True)
        .distinct()
    )
    return {
        # Qualified ("build-pytorch/main", what the page offers), then bare names (any repository).
        "branch": [(f"{r}/{n}", f"{r} · {n}") for r, n, _ in branches]
        + [(n, n) for n in sorted({n for _, n, _ in branches})],
        "gpu": [(a.sm, f"{a.sm.upper()} {a.label}") for a in GpuArchitecture.objects.all()]
        + [("none", "None (CPU / MPS)")],
        "isa": [
            (i.slug, i.label)
            for i in sorted(CpuIsa.objects.all(), key=lambda i: (i.arch != "x86_64", i.rank))
        ]
        + [("none", "None (MPS)")],
        "cuda": [(c, c) for c in sorted(cudas, key=version_key)],
        "python": [(p, p) for p in sorted(pythons, key=version_key)],
    }


# --- The "which variant?" engine's catalogue (catalog/wizard/views.py, which-variant) -------
_RECOMMEND_MEMO: dict = {}  # {"version": ..., "catalogue": ...}: this process's copy


def _build_recommend_catalogue() -> Catalogue:
    return Catalogue.from_objects(
        variants=Variant.objects.select_related("branch", "gpu_arch", "cpu_isa").order_by("pk"),
        branches=Branch.objects.order_by("repository", "preference", "name"),
        architectures=GpuArchitecture.objects.all(),
        gpu_models=GpuModel.objects.select_related("architecture").order_by("pk"),
        isas=CpuIsa.objects.all(),
    )


def recommend_catalogue() -> Catalogue:
    """The engine's snapshot of the catalogue (plain records), built with 5 queries and cached
    per catalogue version (catalog.cache), so every write retires it; kept in-process too."""
    from catalog import cache

    version = cache.catalogue_version()
    if _RECOMMEND_MEMO.get("version") != version:
        _RECOMMEND_MEMO["catalogue"] = cache.cached(
            "recommend-catalogue", _build_recommend_catalogue
        )
        _RECOMMEND_MEMO["version"] = version
    return _RECOMMEND_MEMO["catalogue"]


def branch_sources(branch: Branch) -> dict:
    """What a branch's recipes are built from: CUDA versions and nixpkgs pins with their variant
    counts (a branch may hold several of each), and the commit it was imported from."""
    rows = (
        Variant.objects.filter(branch=branch)
        .values("cuda_version", "nixpkgs_pin")
        .annotate(n=Count("id"))
    )
    cuda: dict[str, int] = {}
    pins: dict[str, int] = {}
    for row in rows:
        if row["cuda_version"]:
            cuda[row["cuda_version"]] = cuda.get(row["cuda_version"], 0) + row["n"]
        pin = row["nixpkgs_pin"] or branch.nixpkgs_pin
        pins[pin] = pins.get(pin, 0) + row["n"]
    return {
        "cuda": sorted(cuda.items(), key=lambda item: naming.version_key(item[0]), reverse=True),
        "pins": sorted(pins.items(), key=lambda item: (-item[1], item[0])),
        "repository_url": vocabulary.REPOSITORIES[branch.repository].url,
    }


# --- The one-screen selector (browse/selector_engine.py, browse/views/select.py) ----------
def selector_records() -> list[dict]:
    """Every variant as the plain record `selector_engine.rows_from_records` reads: one query."""
    return list(
        Variant.objects.order_by(*MATRIX_ORDER).values(
            "pname",
            "library",
            "backend",
            "platform",
            repository=F("branch__repository"),
            branch_name=F("branch__name"),
            preference=F("branch__preference"),
            pytorch_version=F("branch__pytorch_version"),
            python=F("python_version"),
            cuda=F("cuda_version"),
            sm=F("gpu_arch__sm"),
            arch_number=F("gpu_arch__arch_number"),
            host_arch=F("gpu_arch__host_arch"),
            gpu_name=F("gpu_arch__name"),
            gpu_models=F("gpu_arch__short_models"),
            isa=F("cpu_isa__slug"),
            isa_label=F("cpu_isa__label"),
            isa_arch=F("cpu_isa__arch"),
            isa_rank=F("cpu_isa__rank"),
        )
    )


# --- Compare (catalog/browse/views/compare.py) ----------------------------------------------
def compare_variants(ids: Iterable[tuple[str, str, str]]) -> QuerySet[Variant]:
    """The variants named by (repository, branch, pname) triples, with what a recipe needs: one
    query, whatever the number of ids."""
    match = Q(pk__in=[])
    for repository, branch, pname in ids:
        match |= Q(branch__repository=repository, branch__name=branch, pname=pname)
    return Variant.objects.filter(match).select_related(
        "branch",
        "gpu_arch",
        "cpu_isa",
        "depends_on__branch",
        "depends_on__gpu_arch",
        "depends_on__cpu_isa",
    )


def compare_candidates(variant: Variant) -> QuerySet[Variant]:
    """Variants worth comparing with `variant`: on its branch with its GPU architecture (or, for
    GPU-less builds, its platform), and the same build on other branches."""
    hardware = (
        Q(gpu_arch_id=variant.gpu_arch_id) if variant.gpu_arch_id else Q(platform=variant.platform)
    )
    same_build = Q(
        library=variant.library,
        backend=variant.backend,
        gpu_arch_id=variant.gpu_arch_id,
        cpu_isa_id=variant.cpu_isa_id,
    )
    return (
        Variant.objects.filter((Q(branch_id=variant.branch_id) & hardware) | same_build)
        .exclude(pk=variant.pk)
        .select_related("branch")
        .order_by(*MATRIX_ORDER)
    )
