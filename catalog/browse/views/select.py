"""The one-screen selector: rows of buttons that narrow the catalogue to one variant.

The narrowing is `catalog.browse.selector_engine` (pure); this module fetches the rows (one query,
cached per catalogue version), reads the choices from the query string and hands the template what
it shows. The selector lives on the home page (`/?gpu=sm90&…`); /select/ answers htmx with the
selector alone, so a click swaps it in place and pushes the home page URL."""

from __future__ import annotations

from django.http import HttpResponse, HttpResponseRedirect
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_safe

from catalog import cache, queries
from catalog.browse import selector_engine
from catalog.build_commands import variant_commands

BadChoice = selector_engine.BadChoice
MAX_LISTED = 6  # with this few variants left, list them by name
PANEL = "catalog/_selector_panel.html"


_MEMO: dict = {}  # {"version": ..., "rows": ...}: this process's copy, unpickled once


def rows() -> list[selector_engine.Row]:
    """Every variant as a selector row: one query, cached per catalogue version (every write
    retires it) and kept in-process too."""
    version = cache.catalogue_version()
    if _MEMO.get("version") != version:
        _MEMO["rows"] = cache.cached(
            "selector-rows", lambda: selector_engine.rows_from_records(queries.selector_records())
        )
        _MEMO["version"] = version
    return _MEMO["rows"]


def _context(chosen: dict[str, str], embedded: bool) -> dict:
    narrowed = selector_engine.narrow(rows(), chosen)
    unique = narrowed.unique
    return {
        "narrowed": narrowed,
        "count": len(narrowed.matches),
        # Listed by name when few are left, or when the one left is an impossible pairing.
        "listed": narrowed.matches
        if 0 < len(narrowed.matches) <= MAX_LISTED and not unique
        else [],
        "unique": unique,
        "commands": (
            variant_commands(unique.repository, unique.branch, unique.pname) if unique else []
        ),
        "embedded": embedded,
    }


def _render(context: dict) -> str:
    return render_to_string(PANEL, {"selector": context})


def panel(params, embedded: bool = False) -> tuple[str, int]:
    """(html, status) of the selector for these query parameters ({name: [values]} or a
    QueryDict): cached per catalogue version and choices, so parameters the selector does not
    read share one entry; or, for a value it cannot use, the untouched selector with the reason
    and a 400 (not cached: it echoes the request)."""
    if hasattr(params, "lists"):
        params = dict(params.lists())
    try:
        chosen = selector_engine.parse_choices(rows(), params)
    except BadChoice as exc:
        return _render({**_context({}, embedded), "error": str(exc)}), 400
    html = cache.cached(
        "selector-panel",
        lambda: _render(_context(chosen, embedded)),
        selector_engine.query_string(chosen),
        embedded,
    )
    return html, 200


@require_safe
def selector(request):
    """The selector alone, for htmx; a plain visit goes to the home page with the same choices."""
    home = reverse("catalog:home")
    if not request.htmx:
        query = request.GET.urlencode()
        response = HttpResponseRedirect(f"{home}?{query}" if query else home)
    else:
        html, status = panel(request.GET)
        response = HttpResponse(html, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response
