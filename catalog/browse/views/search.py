"""The site search: /search/?q= for people, /api/search?q= for programs."""

from django.http import JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from catalog import queries
from catalog.browse import search


def _results(request) -> tuple[str, list[search.Result]]:
    query = search.check_query(request.GET.get("q", ""))
    return query, queries.search_index().search(query)


@require_safe
def search_page(request):
    query = " ".join(request.GET.get("q", "").split())
    context = {"query": query[: search.MAX_QUERY], "groups": [], "error": ""}
    status = 200
    if query or "q" in request.GET:
        try:
            _query, results = _results(request)
            context["groups"] = search.grouped_by_kind(results)
            context["count"] = len(results)
        except search.SearchError as exc:
            context["error"], status = str(exc), 400
    return render(request, "catalog/search.html", context, status=status)


@require_safe
def api_search(request):
    """`{"query": q, "results": [{"kind", "title", "url", "why"}, …]}`, best first; 400 JSON."""
    try:
        query, results = _results(request)
    except search.SearchError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return JsonResponse({"query": query, "results": [r.as_dict() for r in results]})
