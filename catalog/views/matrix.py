"""The variant matrix (/variants/) and its data out (/api/variants, ?format=csv).

One FilterSet reads the query string for all three. Rendered results and API bodies are cached
per catalogue version (catalog/cache.py), and every successful answer carries an ETag, so a
repeat request costs neither queries nor rendering.
"""

from __future__ import annotations

import csv
import io
import json

from django.http import HttpResponse, HttpResponseNotModified, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_safe

from catalog import cache, selectors
from catalog.filters import VariantFilter
from catalog.grid import build_grid
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
    "url",
]
# The list view's columns: (heading, sort key).
LIST_COLUMNS = [
    ("Package", "pname"),
    ("Branch", "branch"),
    ("Library", "library"),
    ("GPU", "gpu"),
    ("ISA", "isa"),
    ("CUDA", "cuda"),
    ("Python", "python"),
    ("Platform", "platform"),
    ("Status", "status"),
]


def _filterset(request, data=None):
    choices = cache.cached("matrix-choices", selectors.matrix_choices)
    return VariantFilter(data if data is not None else request.GET, choices=choices)


def _record(variant, absolute_url) -> dict:
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
        "url": absolute_url(
            reverse("catalog:variant", args=[branch.repository, branch.name, variant.pname])
        ),
    }


def _errors(filterset) -> dict:
    return {name: [str(m) for m in messages] for name, messages in filterset.errors.items()}


def _sort_headers(request, current):
    """Each list column's link: sort by it, or reverse the order if it already sorts."""
    headers = []
    for heading, key in LIST_COLUMNS:
        query = request.GET.copy()
        query.pop("format", None)
        state = "ascending" if current == key else "descending" if current == f"-{key}" else ""
        query["sort"] = f"-{key}" if state == "ascending" else key
        headers.append({"heading": heading, "key": key, "state": state, "query": query.urlencode()})
    return headers


def _results_context(request, filterset) -> dict:
    variants = list(filterset.qs)
    sort = (filterset.form.cleaned_data.get("sort") or [""])[0]
    csv_query = request.GET.copy()
    csv_query["format"] = "csv"
    context = {
        "variants": variants,
        "count": len(variants),
        "view": filterset.view,
        "statuses": STATUSES,
        "csv_query": csv_query.urlencode(),
        "query": request.GET.urlencode(),
    }
    if filterset.view == "grid":
        context["grid"] = build_grid(variants)
    else:
        context["headers"] = _sort_headers(request, sort)
    return context


@require_safe
def variant_matrix(request):
    """The matrix page; its results fragment alone for htmx; the selection as CSV with ?format=csv."""
    partial = bool(request.htmx) and not request.htmx.history_restore_request
    tag = cache.etag(*cache.request_key(request, "partial" if partial else "page"))
    if cache.is_not_modified(request, tag):
        return cache.mark_cacheable(HttpResponseNotModified(), tag)

    data = request.GET.copy()
    data.setdefault("view", "list")  # so the form shows which view is on
    filterset = _filterset(request, data)
    if not filterset.is_valid():
        context = {"filterset": filterset, "errors": _errors(filterset), "count": None}
        if partial:
            return render(request, "partials/variant_results.html", context, status=400)
        context["results_html"] = render_to_string(
            "partials/variant_results.html", context, request
        )
        return render(request, "catalog/variants.html", context, status=400)

    if filterset.format == "csv":
        body = cache.cached(
            "matrix-csv",
            lambda: _csv(request, filterset),
            *cache.request_key(request, request.get_host()),
        )
        response = HttpResponse(body, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="variants.csv"'
        return cache.mark_cacheable(response, tag)

    results_html = cache.cached(
        "matrix-results",
        lambda: render_to_string(
            "partials/variant_results.html", _results_context(request, filterset)
        ),
        *cache.request_key(request),
    )
    if partial:
        response = HttpResponse(results_html)
    else:
        response = render(
            request, "catalog/variants.html", {"filterset": filterset, "results_html": results_html}
        )
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
            }
        )
    return out.getvalue()


@require_safe
def api_variants(request):
    """`{"count": N, "results": [...]}` for the same parameters as /variants/; 400 with the reasons."""
    tag = cache.etag(*cache.request_key(request, request.get_host()))
    if cache.is_not_modified(request, tag):
        return cache.mark_cacheable(HttpResponseNotModified(), tag, vary=())
    filterset = _filterset(request)
    if not filterset.is_valid():
        fields = _errors(filterset)
        return JsonResponse(
            {"error": f"Invalid value for {', '.join(sorted(fields))}.", "fields": fields},
            status=400,
        )

    def body():
        results = [_record(v, request.build_absolute_uri) for v in filterset.qs]
        return json.dumps({"count": len(results), "results": results})

    payload = cache.cached("api-variants", body, *cache.request_key(request, request.get_host()))
    return cache.mark_cacheable(
        HttpResponse(payload, content_type="application/json"), tag, vary=()
    )
