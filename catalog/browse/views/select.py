"""The one-screen selector: rows of buttons that narrow the catalogue to one variant.

The narrowing is `catalog.browse.selector_engine` (pure); this module fetches the rows (one query,
cached per structure version), reads the choices from the query string and hands the template what
it shows. The selector lives on the home page (`/?gpu=sm90&…`); /select/ answers htmx with the
selector alone, so a click swaps it in place and pushes the home page URL."""

from __future__ import annotations

from django.http import HttpResponse, HttpResponseRedirect
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from catalog import cache, naming, queries
from catalog.browse import selector_engine

BadChoice = selector_engine.BadChoice
MAX_LISTED = 6  # with this few variants left, list them by name
# The partial in the home page that shows the selector; /select/ answers with it alone.
PANEL = "catalog/home.html#selector"


_MEMO: dict = {}  # {"version": ..., "rows": ...}: this process's copy, unpickled once


def _build_index() -> selector_engine.Index:
    return selector_engine.index_rows(selector_engine.rows_from_records(queries.selector_records()))


cache.register_snapshot("selector-index", _build_index)


def rows() -> selector_engine.Index:
    """Every variant as a selector row, indexed by value: stored in the database when the
    catalogue is written (one query and a millisecond's unpickling when cold), per structure
    version (a build outcome does not retire it; the selector shows no status), and kept
    in-process too."""
    version = cache.structure_version()
    if _MEMO.get("version") != version:
        _MEMO["rows"] = cache.snapshot("selector-index")
        _MEMO["version"] = version
    return _MEMO["rows"]


def _context(chosen: dict[str, str], embedded: bool, expand: tuple[str, ...] = ()) -> dict:
    narrowed = selector_engine.narrow(rows(), chosen, expand)
    unique = narrowed.unique
    return {
        "narrowed": narrowed,
        "count": narrowed.count,
        # Listed by name when few are left, or when the one left is an impossible pairing.
        "listed": narrowed.matches if 0 < narrowed.count <= MAX_LISTED and not unique else [],
        "unique": unique,
        "answer": (
            queries.build_answer(unique.repository, unique.branch, unique.pname) if unique else None
        ),
        "embedded": embedded,
        "availability": (
            queries.variant_availability_by_name(unique.repository, unique.branch, unique.pname)
            if unique
            else None
        ),
    }


def _resolvers() -> dict:
    """A GPU or ISA as the site writes it elsewhere, read by catalog.naming (names looked up
    only when a value is not a slug)."""

    def reader(key, resolve):
        return lambda value: resolve(value, queries.written_names()[key])

    return {"gpu": reader("gpu", naming.resolve_gpu), "isa": reader("isa", naming.resolve_name)}


def _render(context: dict) -> SafeString:
    return render_to_string(PANEL, {"selector": context})


def panel(params, embedded: bool = False) -> tuple[SafeString, int]:
    """(html, status) of the selector for these query parameters ({name: [values]} or a
    QueryDict): cached per catalogue version and choices, so parameters the selector does not
    read share one entry; or, for a value it cannot use, the untouched selector with the reason
    and a 400 (not cached: it echoes the request)."""
    if hasattr(params, "lists"):
        params = dict(params.lists())
    try:
        chosen = selector_engine.parse_choices(rows(), params, _resolvers())
    except BadChoice as exc:
        return _render({**_context({}, embedded), "error": str(exc)}), 400
    # A folded facet shown whole (?more=branch); other values are ignored like unknown keys.
    more = params.get(selector_engine.MORE, [])
    expand = tuple(sorted({k for k in more if k in selector_engine.DIMENSION_BY_KEY}))
    html = cache.cached(
        "selector-panel",
        lambda: _render(_context(chosen, embedded, expand)),
        selector_engine.query_string(chosen),
        embedded,
        expand,
        version=cache.structure_version(),
    )
    # Rendered with autoescaping; marked again since a cache may hand back a plain str.
    return mark_safe(html), 200


@require_safe
@vary_on_headers("HX-Request")  # the selector alone for htmx, a redirect otherwise
def selector(request):
    """The selector alone, for htmx; a plain visit goes to the home page with the same choices."""
    home = reverse("catalog:home")
    if not request.htmx:
        query = request.GET.urlencode()
        return HttpResponseRedirect(f"{home}?{query}" if query else home)
    html, status = panel(request.GET)
    return HttpResponse(html, status=status)
