"""The variant matrix (/variants/) and its data out (/api/variants, ?format=csv).

One FilterSet reads the query string for all three. Rendered results and API bodies are cached
per catalogue version (catalog/cache.py), and every successful answer carries an ETag, so a
repeat request costs neither queries nor rendering.
"""

from __future__ import annotations

import base64
import csv
import io
import json
from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import (
    HttpResponse,
    HttpResponseNotModified,
    JsonResponse,
    QueryDict,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from catalog import cache, naming, queries
from catalog.availability import NOT_BUILT
from catalog.browse.filters import (
    FACETS,
    SHOWN_WHEN_FOUND,
    SORT_LABELS,
    MatrixForm,
    VariantFilter,
)
from catalog.browse.grid import build_grid
from catalog.models import STATUSES

RECORD_FIELDS = [
    "pname",
    "repository",
    "branch",
    "library",
    "backend",
    "gpu",
    "isa",
    "cuda",
    "python",
    "platform",
    "status",
    "impossible_pairing",
    "url",
]
# The list view's columns, by sort key (headings from filters.SORT_LABELS).
LIST_COLUMNS = ["pname", "branch", "library", "gpu", "isa", "cuda", "python", "platform", "status"]
GRID_BRANCHES_PER_PAGE = 3  # the grid pages by branch: ~30 KB of HTML each at seed size
# Every parameter the matrix reads; anything else is dropped (see cache.normalised_query).
KNOWN = frozenset(VariantFilter.base_filters) | frozenset(MatrixForm.base_fields)
# The page, and the results alone (what htmx swaps in): one template, one fragment mechanism.
PAGE = "catalog/variants.html"
RESULTS = "catalog/variants.html#results"
# Those read as one value (the rest are checkbox lists).
SINGLE = frozenset({"q", "sort", *MatrixForm.base_fields})
# Filters shown as checkboxes with counts, in the panel's order.
CHECKBOX_FILTERS = list(FACETS)


def _filterset(data):
    choices = cache.cached(
        "matrix-choices", queries.matrix_choices, version=cache.structure_version()
    )
    return VariantFilter(data, choices=choices)


def _record(variant, absolute_url, summary=None) -> dict:
    # The paged JSON carries build/cache fields; streamed exports (CSV, JSONL) leave them out.
    branch = variant.branch
    return {
        "pname": variant.pname,
        "repository": branch.repository,
        "branch": branch.name,
        "library": variant.library,
        "backend": variant.backend,
        "gpu": variant.gpu_arch.sm if variant.gpu_arch_id else None,
        "isa": variant.cpu_isa.slug if variant.cpu_isa_id else None,
        "cuda": variant.cuda_version or None,
        "python": variant.python_version,
        "platform": variant.platform,
        "status": variant.status,
        # Why no machine runs it (a GPU built into a system of another CPU architecture).
        "impossible_pairing": variant.impossible_pairing or None,
        "url": absolute_url(
            reverse("catalog:variant", args=[branch.repository, branch.name, variant.pname])
        ),
        **(summary.as_json() if summary is not None else {}),
    }


def _with_availability(variants) -> list:
    """The variants, each with `.availability` (one summary query for all of them)."""
    variants = list(variants)
    summaries = queries.availability(v.pk for v in variants)
    for variant in variants:
        variant.availability = summaries.get(variant.pk, NOT_BUILT)
    return variants


def _errors(filterset) -> dict:
    return {name: [str(m) for m in messages] for name, messages in filterset.errors.items()}


def _query(data: QueryDict, **changes) -> str:
    """`data` with `changes` applied (None removes a key), as a query string."""
    query = data.copy()
    for key, value in changes.items():
        query.pop(key, None)
        if value is not None:
            query[key] = value
    return query.urlencode()


def _sort_headers(data: QueryDict, current: str) -> list[dict]:
    """Each list column's link: sort by it, or reverse the order if it already sorts."""
    headers = []
    for key in LIST_COLUMNS:
        state = "ascending" if current == key else "descending" if current == f"-{key}" else ""
        query = _query(
            data, format=None, page=None, sort=f"-{key}" if state == "ascending" else key
        )
        headers.append({"heading": SORT_LABELS[key], "state": state, "query": query})
    return headers


def _pagination(data: QueryDict, page) -> dict:
    def link(number):
        return "?" + _query(data, format=None, page=None if number == 1 else str(number))

    return {
        "page": page,
        "previous": link(page.previous_page_number()) if page.has_previous() else "",
        "next": link(page.next_page_number()) if page.has_next() else "",
        "first": link(1),
        "last": link(page.paginator.num_pages),
    }


def _results_context(data: QueryDict, filterset) -> dict:
    variants = filterset.qs
    form = filterset.form.cleaned_data
    context = {
        "view": filterset.view,
        "statuses": STATUSES,
        "csv_query": _query(data, format="csv", page=None, per_page=None),
        "query": _query(data, page=None, per_page=None, view=None),
        "all_query": _query(data, page=None, per_page="all", view="list"),
    }
    if filterset.view == "grid":
        # A page of branches (a grid is laid out per branch), so the page's size follows what
        # it shows, not the catalogue's.
        branch_ids = queries.branch_ids_of(variants)
        page = Paginator(branch_ids, GRID_BRANCHES_PER_PAGE).get_page(form["page"])
        shown = _with_availability(variants.filter(branch_id__in=list(page.object_list)))
        context.update(
            count=variants.count(),
            grid=build_grid(shown),
            pagination=_pagination(data, page) if page.paginator.num_pages > 1 else None,
            page_unit="branches",
        )
        return context
    per_page = form["per_page"]
    paginator = Paginator(variants, 1_000_000 if per_page == "all" else int(per_page))
    page = paginator.get_page(form["page"])
    context.update(
        count=paginator.count,
        variants=_with_availability(page.object_list),
        grouped=not form.get("sort"),
        headers=_sort_headers(data, (form.get("sort") or [""])[0]),
        pagination=_pagination(data, page) if paginator.num_pages > 1 else None,
    )
    return context


def _facets(filterset, counts: dict | None = None) -> list[dict]:
    """The checkbox filters, each value with its count when `counts` is given (an invalid
    selection has none to show)."""
    form = filterset.form
    facets = []
    for name in CHECKBOX_FILTERS:
        bound, chosen = form[name], set(form.data.getlist(name))
        options = [
            {
                "value": value,
                "label": label,
                "count": counts[name].get(value, 0) if counts else None,
                "checked": value in chosen,
            }
            for value, label in bound.field.choices
            if not (name == "branch" and "/" not in value)  # bare names: for links and the API
        ]
        options = [
            o for o in options if o["value"] not in SHOWN_WHEN_FOUND or o["count"] or o["checked"]
        ]
        facets.append({"name": name, "label": bound.label, "options": options, "field": bound})
    return facets


def _render_matrix(request, data: QueryDict, partial: bool) -> HttpResponse:
    data.setdefault("view", "list")  # so the form shows which view is on
    filterset = _filterset(data)
    if not filterset.is_valid():
        context = {"filterset": filterset, "errors": _errors(filterset), "count": None}
        if partial:
            return render(request, RESULTS, context, status=400)
        context["facets"] = _facets(filterset)
        return render(request, PAGE, context, status=400)

    if filterset.format == "csv":
        response = HttpResponse(_csv(request, filterset), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="variants.csv"'
        return response
    context = {"filterset": filterset, **_results_context(data, filterset)}
    facets = _facets(filterset, filterset.facet_counts())
    if partial:  # the form stays; its counts travel out of band with the results
        return render(request, RESULTS, {**context, "oob_facets": facets})
    context["facets"] = facets
    return render(request, PAGE, context)


@require_safe
def canonical_branch_redirect(request):
    """A redirect to the same address with each branch written "<repository>/<branch>" when it
    was written otherwise ("build-pytorch:main", or a bare name only one repository has, or one
    `repository=` names); None when every branch is already written so."""
    values = request.GET.getlist("branch")
    if not values:
        return None
    known = queries.branch_keys()
    repositories = request.GET.getlist("repository")
    if len(repositories) == 1:
        known = [k for k in known if k.startswith(naming.branch_key(repositories[0], ""))]
    fixed = [naming.canonical_branch(v, known) for v in values]
    if fixed == values:
        return None
    pairs = [(k, v) for k, vs in request.GET.lists() for v in (fixed if k == "branch" else vs)]
    return redirect(request.path + "?" + urlencode(pairs, safe="/"))


@vary_on_headers("HX-Request", "HX-History-Restore-Request")  # the results alone for htmx
def variant_matrix(request):
    """The matrix page; its results fragment alone for htmx; the selection as CSV with ?format=csv.

    Only known, non-empty parameters count: a plain GET carrying others is redirected to the
    URL without them (so a form sent without JavaScript leaves a clean address), and htmx
    requests simply ignore them. Whole responses are cached per catalogue version and
    normalised query."""
    partial = bool(request.htmx) and not request.htmx.history_restore_request
    canonical = canonical_branch_redirect(request)
    if canonical is not None:
        return canonical
    pairs = cache.normalised_query(request, KNOWN, SINGLE)
    if not request.htmx and len(pairs) != sum(len(values) for _, values in request.GET.lists()):
        return redirect(request.path + ("?" + urlencode(pairs) if pairs else ""))
    # Only the CSV holds absolute URLs: the Host is part of its key alone.
    host = request.get_host() if ("format", "csv") in pairs else ""
    key = (request.path, cache.query_key(pairs), "partial" if partial else "page", host)
    version = cache.catalogue_version()
    tag = cache.etag(*key, version=version)
    if cache.is_not_modified(request, tag):
        return cache.mark_cacheable(HttpResponseNotModified(), tag)
    data = QueryDict(mutable=True)
    for name, value in pairs:
        data.appendlist(name, value)
    if cache.free_text(pairs):
        response = _render_matrix(request, data, partial)
    else:
        response = cache.cached_response(
            "matrix", lambda: _render_matrix(request, data, partial), *key, version=version
        )
    if response.status_code != 200:
        return response
    return cache.mark_cacheable(response, tag)


def _csv(request, filterset) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=RECORD_FIELDS, lineterminator="\n")
    writer.writeheader()
    for variant in filterset.qs:
        writer.writerow(
            {
                k: ("" if v is None else v)
                for k, v in _record(variant, request.build_absolute_uri).items()
                if k in RECORD_FIELDS
            }
        )
    return out.getvalue()


API_FORMATS = ("json", "jsonl", "csv")
API_PAGE_SIZE = 100  # a default answer stays small whatever the catalogue's size
API_MAX_PAGE_SIZE = 1000
API_KNOWN = KNOWN | {"cursor", "page_size"}
EXPORT_CHUNK = 500  # rows per database round trip of a streamed export


class BadApiParameter(ValueError):
    """An API-only parameter (format, cursor, page_size) that cannot be used."""


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o{offset}".encode()).decode().rstrip("=")


def _offset(cursor: str) -> int:
    """The position a cursor from a `next` link stands for (opaque to clients)."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        text = ""
    if len(cursor) > 16 or not text.startswith("o") or not text[1:].isdigit():
        raise BadApiParameter("The cursor is not one this API gave out; start without it.")
    return int(text[1:])


def _api_options(data: QueryDict) -> tuple[str, int, int]:
    """(format, offset, page size), taken out of `data` so the filters never see them."""
    fmt = data.pop("format", ["json"])[-1]
    if fmt not in API_FORMATS:
        raise BadApiParameter(f"Format must be one of {', '.join(API_FORMATS)}, not {fmt!r}.")
    offset = _offset(data.pop("cursor")[-1]) if "cursor" in data else 0
    size = data.pop("page_size", [str(API_PAGE_SIZE)])[-1]
    if not (size.isascii() and size.isdigit() and 1 <= int(size) <= API_MAX_PAGE_SIZE):
        raise BadApiParameter(f"page_size must be a whole number from 1 to {API_MAX_PAGE_SIZE}.")
    return fmt, offset, int(size)


def _export(request, filterset, fmt: str) -> StreamingHttpResponse:
    """Every matching variant, streamed row by row (`.iterator()`): memory and time to the first
    byte stay flat however many variants match."""
    absolute = request.build_absolute_uri
    records = (_record(v, absolute) for v in filterset.qs.iterator(chunk_size=EXPORT_CHUNK))
    if fmt == "jsonl":
        lines = (json.dumps(r) + "\n" for r in records)
        response = StreamingHttpResponse(lines, content_type="application/x-ndjson")
    else:
        response = StreamingHttpResponse(
            _csv_lines(records), content_type="text/csv; charset=utf-8"
        )
    response["Content-Disposition"] = f'attachment; filename="variants.{fmt}"'
    return response


def _csv_lines(records):
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=RECORD_FIELDS, lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({k: ("" if v is None else v) for k, v in record.items()})
        yield out.getvalue()
        out.seek(0)
        out.truncate()
    yield out.getvalue()


@require_safe
def api_variants(request):
    """`{"count": N, "next": URL or null, "results": [...]}` for /variants/' parameters, a page
    of `page_size` (default 100) at a time, the next one at `next`; every match streamed with
    `format=jsonl` or `format=csv`; 400 with the reasons.

    Programs are not redirected: an old branch spelling ("build-pytorch:main") is read as
    "build-pytorch/main" in place, and a bare name keeps meaning that branch in every repository."""
    pairs = [
        (k, naming.canonical_branch(v) if k == "branch" else v)
        for k, v in cache.normalised_query(request, API_KNOWN, SINGLE | {"cursor", "page_size"})
    ]
    data = QueryDict(mutable=True)
    for name, value in pairs:
        data.appendlist(name, value)
    try:
        fmt, offset, size = _api_options(data)
    except BadApiParameter as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    filterset = _filterset(data)
    if not filterset.is_valid():
        fields = _errors(filterset)
        return JsonResponse(
            {"error": f"Invalid value for {', '.join(sorted(fields))}.", "fields": fields},
            status=400,
        )
    if fmt != "json":
        return _export(request, filterset, fmt)
    key = (request.path, cache.query_key(pairs), request.get_host())
    tag = cache.etag(*key)
    if cache.is_not_modified(request, tag):
        return cache.mark_cacheable(HttpResponseNotModified(), tag, vary=())

    def body():
        count = filterset.qs.count()
        page = _with_availability(filterset.qs[offset : offset + size])
        results = [_record(v, request.build_absolute_uri, v.availability) for v in page]
        following = offset + size
        next_url = None
        if following < count:
            kept_size = None if size == API_PAGE_SIZE else str(size)
            query = _query(data, cursor=_cursor(following), page_size=kept_size)
            next_url = request.build_absolute_uri(f"{request.path}?{query}")
        return json.dumps({"count": count, "next": next_url, "results": results})

    payload = body() if cache.free_text(pairs) else cache.cached("api-variants", body, *key)
    return cache.mark_cacheable(
        HttpResponse(payload, content_type="application/json"), tag, vary=()
    )
