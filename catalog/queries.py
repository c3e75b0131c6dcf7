"""Read queries, each with the joins its page needs, so page query counts stay constant."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Case, Count, F, IntegerField, Q, QuerySet, Value, When
from django.shortcuts import get_object_or_404

from catalog import cache, naming, vocabulary
from catalog.availability import NOT_BUILT, Estimate, Summary, estimate, nearest, summarise
from catalog.models import (
    LIBRARIES,
    Branch,
    BuildRecord,
    CacheEntry,
    CpuIsa,
    DocPage,
    GpuArchitecture,
    GpuModel,
    Variant,
)
from catalog.wizard.snapshot import Catalogue, VariantInfo, VariantTable


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


def branch_count() -> int:
    return Branch.objects.count()


def home_branch_ids(per_repository: int) -> tuple[list[int], int]:
    """The branches the home page lists: each repository's first `per_repository` in the
    catalogue's order, and every recommended or default one (one narrow query); with the
    number of branches."""
    shown, seen = [], {}
    rows = Branch.objects.values_list("pk", "repository", "is_recommended", "is_default")
    for pk, repository, recommended, default in rows:
        seen[repository] = seen.get(repository, 0) + 1
        if recommended or default or seen[repository] <= per_repository:
            shown.append(pk)
    return shown, sum(seen.values())


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
    return BuildRecord.objects.filter(variant=variant).prefetch_related("outputs")


def variant_availability(variant: Variant) -> dict:
    """What the availability partial shows: the summary and, when the variant is cached
    nowhere, the nearest cached stand-in and the branch's build-time estimate."""
    summary = availability([variant.pk]).get(variant.pk, NOT_BUILT)
    if summary.cached:
        return {"availability": summary, "stand_in": None, "estimate": None}
    return {
        "availability": summary,
        "stand_in": nearest_cached(variant),
        "estimate": build_estimate(variant.branch_id),
    }


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
    "gpu_arch__host_arch",  # the impossible-pairing mark
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
        + [("mps", "Apple GPU (MPS)"), ("unknown", "Unknown GPU (CUDA, not catalogued)")]
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


# A variant's columns in snapshot.VARIANT_FIELDS order.
INFO_COLUMNS = (
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


def _info_row(row: tuple) -> tuple:
    return (*row[:7], row[7] or "", row[8] or "", row[9] or "", row[10])


def _recommend_variant_rows() -> list[tuple]:
    """Every variant as a VariantInfo row (snapshot.VARIANT_FIELDS order) and its id last: only
    the columns the engine reads, as tuples, so no model instance (nor JSON field) is built."""
    rows = Variant.objects.order_by("pk").values_list(*INFO_COLUMNS, "pk")
    return [(*_info_row(row), row[-1]) for row in rows]


def _build_recommend_rows(status_version: str) -> dict:
    rows = _recommend_variant_rows()
    small = Catalogue.from_objects(
        variants=[],
        branches=Branch.objects.order_by("repository", "preference", "name"),
        architectures=GpuArchitecture.objects.all(),
        gpu_models=GpuModel.objects.select_related("architecture").order_by("pk"),
        isas=CpuIsa.objects.all(),
    )
    return {
        **small.to_rows(),
        "variants": VariantTable.of(
            (VariantInfo(*row[:-1]) for row in rows), (row[-1] for row in rows)
        ).to_rows(),
        "status_version": status_version,
    }


def _live_statuses(hardware: tuple[str, str, str] | None) -> dict[int, str]:
    """The current status of each variant of this hardware (backend, sm, platform; of every
    variant for None), by id: what the snapshot's records of that hardware are built with."""
    rows = Variant.objects.all()
    if hardware is not None:
        backend, sm, platform = hardware
        rows = rows.filter(backend=backend, platform=platform)
        rows = rows.filter(gpu_arch__sm=sm) if sm else rows.filter(gpu_arch__isnull=True)
    return dict(rows.values_list("pk", "status"))


def _stored_recommend_rows() -> dict:
    # Stored by writers, whose build records come later: the statuses are always laid on top.
    return _build_recommend_rows(status_version="")


# Named for its form: rows an earlier release stored (every variant as a tuple) are never read.
cache.register_snapshot("recommend-table", _stored_recommend_rows)


def recommend_catalogue() -> Catalogue:
    """The engine's snapshot of the catalogue (plain records), built with 5 narrow queries and
    stored as plain tuples in the database by the writers, per structure revision
    (`cache.snapshot`; a build outcome does not retire it). The current statuses are laid on
    top per hardware as the engine reads it (one query per hardware an answer asks about, not
    one over every variant). Kept in-process per full version."""
    structure, status = cache.structure_version(), cache.status_version()
    if _RECOMMEND_MEMO.get("version") == (structure, status):
        return _RECOMMEND_MEMO["catalogue"]
    if _RECOMMEND_MEMO.get("structure") != structure:
        rows = cache.snapshot("recommend-table")
        _RECOMMEND_MEMO.update(
            structure=structure, base=Catalogue.from_rows(rows), built_at=rows["status_version"]
        )
    catalogue = _RECOMMEND_MEMO["base"]
    if _RECOMMEND_MEMO["built_at"] != status:
        if Variant.objects.count() == len(catalogue.variants):
            catalogue = catalogue.with_status_source(_live_statuses)
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
# What the variant page reads of each candidate: its link, its label and _same_build's fields.
COMPARE_CANDIDATE_FIELDS = (
    "pname",
    "library",
    "backend",
    "gpu_arch_id",
    "cpu_isa_id",
    "platform",
    "cuda_version",
    "python_version",
    "branch__repository",
    "branch__name",
    "branch__preference",
)


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
    candidates = (
        Variant.objects.exclude(pk=variant.pk)
        .select_related("branch")
        .only(*COMPARE_CANDIDATE_FIELDS)  # not the recipe text and facts of every row sorted
    )
    here = candidates.filter(Q(branch_id=variant.branch_id) & (hardware | same_build))
    elsewhere = candidates.filter(same_build).exclude(branch_id=variant.branch_id)
    return sorted(  # stable: each branch's variants keep the matrix's order
        [*here.order_by(*MATRIX_ORDER), *elsewhere.order_by(*MATRIX_ORDER)[:OTHER_BRANCHES_SHOWN]],
        key=lambda v: (v.branch.repository, v.branch.preference, v.branch.name),
    )


# --- The site search's index (catalog/browse/search.py) ------------------------------------------
_SEARCH_MEMO: dict = {}  # {"version": ..., "index": ...}: this process's copy


def search_index():
    """The search index for the current catalogue version: built from the engine's snapshot and
    the guides once per version in each process (a write retires it), never per query."""
    from catalog.browse import search

    version = cache.catalogue_version()
    if _SEARCH_MEMO.get("version") != version:
        architectures = [
            search.ArchitectureText(sm, label, models)
            for sm, label, models in GpuArchitecture.objects.values_list(
                "sm", "label", "short_models"
            )
        ]
        guides = [
            search.GuideText(*row) for row in DocPage.objects.values_list("slug", "title", "body")
        ]
        _SEARCH_MEMO["index"] = search.build_index(recommend_catalogue(), architectures, guides)
        _SEARCH_MEMO["version"] = version
    return _SEARCH_MEMO["index"]


# --- The build answer: status first, then the commands (partials/build_answer.html) --------------


def build_answer(repository: str, branch: str, pname: str, status: str = "", org: str = "") -> dict:
    """What every place that names a build with commands shows: its status and what that means,
    the nearest variant further along when it is not built, and the commands."""
    from catalog import build_commands

    catalogue = recommend_catalogue()
    record = catalogue.variant_named(repository, branch, pname)
    status = status or (record.status if record else "")
    # Only the same hardware can be nearer (nearest_further's rule): those records alone.
    same_hardware = (
        catalogue.variants_for(record.backend, record.sm, record.platform) if record else ()
    )
    found = build_commands.nearest_further(record, same_hardware) if record else None
    return _answer(repository, branch, pname, status, org, found)


def variant_build_answer(variant: Variant, org: str = "") -> dict:
    """build_answer for a variant read from the database (the variant page): the nearest
    variant further along comes from one narrow query, so the engine's snapshot of the whole
    catalogue is not loaded for one page."""
    found = nearest_further(variant)
    branch = variant.branch
    return _answer(branch.repository, branch.name, variant.pname, variant.status, org, found)


def _variant_info(variant: Variant) -> VariantInfo:
    return VariantInfo(
        variant.pname,
        variant.branch.repository,
        variant.branch.name,
        variant.library,
        variant.backend,
        variant.platform,
        variant.python_version,
        variant.cuda_version or "",
        variant.gpu_arch.sm if variant.gpu_arch_id else "",
        variant.cpu_isa.slug if variant.cpu_isa_id else "",
        variant.status,
    )


def _differs(same: Q) -> Case:
    return Case(When(same, then=Value(0)), default=Value(1), output_field=IntegerField())


def nearest_further(variant: Variant) -> tuple[VariantInfo, list[str]] | None:
    """build_commands.nearest_further(variant, every variant), read narrowly: the database picks
    the one variant for the same library and hardware that is further along with the fewest
    differing fields (ties: furthest along, then pname, then the snapshot's order), and the
    engine's rule then checks it and words the differences. One query; none when it is built."""
    from catalog import build_commands

    progress = build_commands.PROGRESS.get(variant.status, 0)
    if progress >= build_commands.BUILT:
        return None
    further = [s for s, p in build_commands.PROGRESS.items() if p > progress]
    differences = (
        _differs(Q(branch__name=variant.branch.name))
        + _differs(Q(cuda_version=variant.cuda_version))
        + _differs(Q(python_version=variant.python_version))
        + _differs(Q(cpu_isa_id=variant.cpu_isa_id))  # None: IS NULL
    )
    progress_of = Case(
        *(When(status=s, then=Value(p)) for s, p in build_commands.PROGRESS.items()),
        default=Value(0),
        output_field=IntegerField(),
    )
    best = (
        Variant.objects.filter(
            library=variant.library,
            backend=variant.backend,
            gpu_arch_id=variant.gpu_arch_id,
            platform=variant.platform,
            status__in=further,
        )
        .annotate(differences=differences, progress=progress_of)
        .order_by("differences", "-progress", "pname", "pk")
        .values_list(*INFO_COLUMNS)
        .first()
    )
    if best is None:
        return None
    return build_commands.nearest_further(_variant_info(variant), [VariantInfo(*_info_row(best))])


def _answer(repository, branch, pname, status, org, found) -> dict:
    from django.urls import reverse

    from catalog import build_commands
    from catalog.models import STATUSES

    nearest = None
    if found:
        other, diffs = found
        nearest = {
            "pname": other.pname,
            "status": other.status,
            "url": reverse("catalog:variant", args=[other.repository, other.branch, other.pname]),
            "difference": "; ".join(diffs) or "the same fields",
        }
    return {
        "status": status,
        "status_label": dict(STATUSES).get(status, status),
        "note": build_commands.STATUS_NOTES.get(status, ""),
        "built": build_commands.PROGRESS.get(status, 0) >= build_commands.BUILT,
        "nearest": nearest,
        "url": reverse("catalog:variant", args=[repository, branch, pname]),
        "org": org,
        "commands": build_commands.variant_commands(
            repository, branch, pname, org or build_commands.DEFAULT_ORG
        ),
    }


def branch_keys() -> list[str]:
    """Every branch as "<repository>/<branch>" (from the engine's snapshot, cached per version)."""
    return recommend_catalogue().memo(
        "branch-keys", lambda c: [naming.branch_key(b.repository, b.name) for b in c.branches]
    )


# --- built, published, cached (catalog.availability holds the rules) --------------------------
BUILD_SUMMARY_FIELDS = (
    "id",
    "variant_id",
    "started_at",
    "nar_size",
    "closure_size",
    "flox_catalog",
    "flox_package",
    "flox_version",
    "published_cache_url",
)
ENTRY_FIELDS = (
    "output__build_id",
    "cache__name",
    "cache__url",
    "cache__priority",
    "present",
    "file_size",
    "nar_size",
    "checked_at",
    "present_since",
    "error",
)


MAX_ID_PARAMETERS = 900


def availability(variant_ids: Iterable[int] | None = None) -> dict[int, Summary]:
    """Each listed variant's build summary (all variants when None); variants never built are
    left out (callers use availability.NOT_BUILT). Two queries: built records with their output
    counts, then the cache entries of each variant's latest build with outputs."""
    builds = BuildRecord.objects.filter(status="built")
    wanted_ids = None if variant_ids is None else set(variant_ids)
    # A page's worth goes in the query; a whole listing reads every built record instead of
    # sending thousands of parameters (SQLite caps them), then keeps the listed ones.
    if wanted_ids is not None and len(wanted_ids) <= MAX_ID_PARAMETERS:
        builds = builds.filter(variant_id__in=wanted_ids)
    rows = (
        builds.annotate(outputs_count=Count("outputs"))
        .order_by("variant_id", "-started_at", "-id")
        .values(*BUILD_SUMMARY_FIELDS, "outputs_count")
    )
    by_variant: dict[int, list[dict]] = {}
    for row in rows:
        if wanted_ids is None or row["variant_id"] in wanted_ids:
            by_variant.setdefault(row["variant_id"], []).append(row)
    if not by_variant:
        return {}
    counts = {row["id"]: row["outputs_count"] for rows in by_variant.values() for row in rows}
    latest_with_outputs = {
        variant_id: next((r["id"] for r in rows if r["outputs_count"]), None)
        for variant_id, rows in by_variant.items()
    }
    wanted = {build_id for build_id in latest_with_outputs.values() if build_id}
    entries: dict[int, list[dict]] = {}
    if wanted:
        entry_rows = CacheEntry.objects.values(*ENTRY_FIELDS)
        if len(wanted) <= MAX_ID_PARAMETERS:
            entry_rows = entry_rows.filter(output__build_id__in=wanted)
        for entry in entry_rows:
            if entry["output__build_id"] in wanted:
                entries.setdefault(entry["output__build_id"], []).append(entry)
    return {
        variant_id: summarise(rows, counts, entries.get(latest_with_outputs[variant_id], []))
        for variant_id, rows in by_variant.items()
    }


def cached_variant_ids() -> list[int]:
    return sorted(vid for vid, summary in availability().items() if summary.cached)


def build_estimate(branch_id: int) -> Estimate:
    """The branch's recorded build durations, summarised (one query)."""
    durations = BuildRecord.objects.filter(
        variant__branch_id=branch_id, status="built", duration_seconds__isnull=False
    ).values_list("duration_seconds", flat=True)
    return estimate(list(durations))


def _stand_in_row(row: dict) -> dict:
    cc = row["gpu_arch__compute_capability"]
    return {
        "id": row["id"],
        "pname": row["pname"],
        "branch_id": row["branch_id"],
        "library": row["library"],
        "backend": row["backend"],
        "platform": row["platform"],
        "python": row["python_version"],
        "family": row["gpu_arch__name"],
        "cc": tuple(int(p) for p in cc.split(".")[:2]) if cc else None,
        "isa_arch": row["cpu_isa__arch"],
        "isa_rank": row["cpu_isa__rank"],
    }


STAND_IN_FIELDS = (
    "id",
    "pname",
    "branch_id",
    "library",
    "backend",
    "platform",
    "python_version",
    "gpu_arch__name",
    "gpu_arch__compute_capability",
    "cpu_isa__arch",
    "cpu_isa__rank",
)


def nearest_cached(variant: Variant, cached_ids: list[int] | None = None) -> Variant | None:
    """The cached variant that runs where `variant` would (catalog.availability.nearest)."""
    cached_ids = cached_variant_ids() if cached_ids is None else cached_ids
    if not cached_ids:
        return None
    fields = Variant.objects.filter(pk=variant.pk).values(*STAND_IN_FIELDS).first()
    if fields is None:
        return None
    candidates = Variant.objects.filter(
        pk__in=cached_ids,
        library=variant.library,
        backend=variant.backend,
        platform=variant.platform,
        python_version=variant.python_version,
    ).values(*STAND_IN_FIELDS)
    found = nearest(_stand_in_row(fields), (_stand_in_row(row) for row in candidates))
    if found is None:
        return None
    return Variant.objects.select_related("branch").get(pk=found["id"])


def availability_json(keys: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str, str], dict]:
    """For each (repository, branch, pname): the /api/variants availability fields, and, when
    it is cached nowhere, `nearest_cached` and `build_estimate` — for the JSON answers."""
    keys = list(dict.fromkeys(keys))
    if not keys:
        return {}
    q = Q(pk__in=[])
    for repository, branch, pname in keys:
        q |= Q(branch__repository=repository, branch__name=branch, pname=pname)
    variants = {
        (v.branch.repository, v.branch.name, v.pname): v
        for v in Variant.objects.filter(q).select_related("branch")
    }
    summaries = availability(v.pk for v in variants.values())
    cached_ids: list[int] | None = None
    found = {}
    for key, variant in variants.items():
        summary = summaries.get(variant.pk, NOT_BUILT)
        fields = summary.as_json()
        if not summary.cached:
            if cached_ids is None:
                cached_ids = cached_variant_ids()
            stand_in = nearest_cached(variant, cached_ids)
            fields["nearest_cached"] = (
                {
                    "pname": stand_in.pname,
                    "repository": stand_in.branch.repository,
                    "branch": stand_in.branch.name,
                    "url": stand_in.get_absolute_url(),
                }
                if stand_in
                else None
            )
            fields["build_estimate"] = build_estimate(variant.branch_id).as_json()
        found[key] = fields
    return found


def variant_availability_by_name(repository: str, branch: str, pname: str) -> dict:
    """variant_availability for a variant named by its keys (the selector's answer)."""
    variant = (
        Variant.objects.select_related("branch")
        .filter(branch__repository=repository, branch__name=branch, pname=pname)
        .first()
    )
    if variant is None:
        return {"availability": NOT_BUILT, "stand_in": None, "estimate": None}
    return {**variant_availability(variant), "branch_id": variant.branch_id}
