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


def variants_by_branch(
    branch_ids: Iterable[int] | None = None, **filters: object
) -> list[tuple[Branch, list[Variant]]]:
    """Variants matching `filters` (on the given branches only, when given), grouped per branch:
    [(branch, [variants])], branch order."""
    matching = Variant.objects.filter(**filters)
    if branch_ids is not None:
        matching = matching.filter(branch_id__in=list(branch_ids))
    variants = matching.select_related("branch", "gpu_arch", "cpu_isa").order_by(
        "branch__repository",
        "branch__preference",
        "branch__name",
        "library",
        "gpu_arch__arch_number",
        "cpu_isa__rank",
        "cuda_version",
        "pname",
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


def branch_ids_of(variants: QuerySet[Variant]) -> list[int]:
    """The branches these variants are on, in the matrix's branch order: one query."""
    branches = Branch.objects.filter(id__in=variants.order_by().values("branch_id"))
    return list(branches.order_by("repository", "preference", "name").values_list("id", flat=True))


def planned_variant_ids() -> tuple[int, ...]:
    """The variants whose status is "planned": the one status the audit's lint reads."""
    planned = Variant.objects.filter(status="planned").order_by("pk")
    return tuple(planned.values_list("pk", flat=True))


# --- The "which variant?" engine's catalogue (catalog/wizard/views.py, which-variant) -------
_RECOMMEND_MEMO: dict = {}  # {"version": ..., "catalogue": ...}: this process's copy


def _recommend_variant_rows() -> list[tuple]:
    """Every variant as a VariantInfo row (snapshot.VARIANT_FIELDS order): only the columns the
    engine reads, as tuples, so no model instance (nor JSON field) is built."""
    rows = Variant.objects.order_by("pk").values_list(
        "pname",
        "branch__repository",
        "branch__name",
        "library",
        "backend",
        "platform",
        "python_version",
        "cuda_version",
        "gpu_arch__sm",
        "cpu_isa__slug",
        "status",
    )
    return [(*row[:7], row[7] or "", row[8] or "", row[9] or "", row[10]) for row in rows]


def _build_recommend_rows(status_version: str) -> dict:
    small = Catalogue.from_objects(
        variants=[],
        branches=Branch.objects.order_by("repository", "preference", "name"),
        architectures=GpuArchitecture.objects.all(),
        gpu_models=GpuModel.objects.select_related("architecture").order_by("pk"),
        isas=CpuIsa.objects.all(),
    )
    return {
        **small.to_rows(),
        "variants": tuple(_recommend_variant_rows()),
        "status_version": status_version,
    }


def _recommend_statuses() -> tuple:
    return tuple(Variant.objects.order_by("pk").values_list("status", flat=True))


def recommend_catalogue() -> Catalogue:
    """The engine's snapshot of the catalogue (plain records), built with 5 narrow queries and
    cached as plain tuples per structure version (a build outcome does not retire it). When
    build outcomes came since, the current statuses are laid on top (one one-column query,
    cached per status version). Kept in-process per full version."""
    from catalog import cache

    structure, status = cache.structure_version(), cache.status_version()
    if _RECOMMEND_MEMO.get("version") == (structure, status):
        return _RECOMMEND_MEMO["catalogue"]
    if _RECOMMEND_MEMO.get("structure") != structure:
        rows = cache.cached(
            "recommend-rows", lambda: _build_recommend_rows(status), version=structure
        )
        _RECOMMEND_MEMO.update(
            structure=structure, base=Catalogue.from_rows(rows), built_at=rows["status_version"]
        )
    catalogue = _RECOMMEND_MEMO["base"]
    if _RECOMMEND_MEMO["built_at"] != status:
        statuses = cache.cached("recommend-statuses", _recommend_statuses, version=status)
        if len(statuses) == len(catalogue.variants):
            catalogue = catalogue.with_statuses(statuses)
        else:  # rows written without a version bump (bulk writes): read everything again
            catalogue = Catalogue.from_rows(_build_recommend_rows(status))
    _RECOMMEND_MEMO.update(version=(structure, status), catalogue=catalogue)
    return catalogue


def written_names() -> dict[str, tuple]:
    """Every name the site shows for each GPU architecture and CPU ISA, for catalog.naming's
    resolvers (from the engine's snapshot, so cached the same way)."""
    catalogue = recommend_catalogue()
    return {"gpu": catalogue.gpu_names(), "isa": catalogue.isa_names()}


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


OTHER_BRANCHES_SHOWN = 30  # of the same build on other branches, the preferred ones


def compare_candidates(variant: Variant) -> list[Variant]:
    """Variants worth comparing with `variant`: on its branch with its GPU architecture (or, for
    GPU-less builds, its platform), and the same build on at most OTHER_BRANCHES_SHOWN other
    branches (their number grows with every release; a branch's own variants do not). Two
    queries, whatever the catalogue's size."""
    hardware = (
        Q(gpu_arch_id=variant.gpu_arch_id) if variant.gpu_arch_id else Q(platform=variant.platform)
    )
    same_build = Q(
        library=variant.library,
        backend=variant.backend,
        gpu_arch_id=variant.gpu_arch_id,
        cpu_isa_id=variant.cpu_isa_id,
    )
    candidates = Variant.objects.exclude(pk=variant.pk).select_related("branch")
    here = candidates.filter(Q(branch_id=variant.branch_id) & (hardware | same_build))
    elsewhere = candidates.filter(same_build).exclude(branch_id=variant.branch_id)
    return sorted(  # stable: each branch's variants keep the matrix's order
        [*here.order_by(*MATRIX_ORDER), *elsewhere.order_by(*MATRIX_ORDER)[:OTHER_BRANCHES_SHOWN]],
        key=lambda v: (v.branch.repository, v.branch.preference, v.branch.name),
    )
