"""The one-screen selector: rows of buttons that narrow the catalogue to one variant.

The narrowing is `catalog.facets` (pure); this module fetches the rows (one query, cached per
catalogue version), reads the choices from the query string and hands the template what it
shows. The selector lives on the home page (`/?gpu=sm90&…`); /select/ answers htmx with the
selector alone, so a click swaps it in place and pushes the home page URL.
"""

from __future__ import annotations

from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_safe

from catalog import cache, facets, selectors
from catalog.build_commands import variant_commands

BadChoice = facets.BadChoice
MAX_LISTED = 6  # with this few variants left, list them by name


_MEMO: dict = {}  # {"version": ..., "rows": ...}: this process's copy, unpickled once


def rows() -> list[facets.Row]:
    """Every variant as a selector row: one query, cached per catalogue version (every write
    retires it) and kept in-process too."""
    version = cache.catalogue_version()
    if _MEMO.get("version") != version:
        _MEMO["rows"] = cache.cached(
            "selector-rows", lambda: facets.rows_from_records(selectors.selector_records())
        )
        _MEMO["version"] = version
    return _MEMO["rows"]


def selection(params, embedded: bool = False) -> dict:
    """The selector's template context for these query parameters ({name: [values]} or a
    QueryDict); BadChoice when unusable."""
    if hasattr(params, "lists"):
        params = dict(params.lists())
    all_rows = rows()
    narrowed = facets.narrow(all_rows, facets.parse_choices(all_rows, params))
    unique = narrowed.unique
    return {
        "narrowed": narrowed,
        "count": len(narrowed.matches),
        "listed": narrowed.matches if 1 < len(narrowed.matches) <= MAX_LISTED else [],
        "unique": unique,
        "commands": (
            variant_commands(unique.repository, unique.branch, unique.pname) if unique else []
        ),
        "embedded": embedded,
    }


def selection_or_error(params, embedded: bool = False) -> tuple[dict, int]:
    """(context, status): the selection, or the untouched selector with the reason and a 400."""
    try:
        return selection(params, embedded), 200
    except BadChoice as exc:
        return {**selection({}, embedded), "error": str(exc)}, 400


@require_safe
def selector(request):
    """The selector alone, for htmx; a plain visit goes to the home page with the same choices."""
    home = reverse("catalog:home")
    if not request.htmx:
        query = request.GET.urlencode()
        response = HttpResponseRedirect(f"{home}?{query}" if query else home)
    else:
        context, status = selection_or_error(request.GET)
        response = render(
            request, "catalog/_selector_panel.html", {"selector": context}, status=status
        )
    patch_vary_headers(response, ("HX-Request",))
    return response
