"""Catalogue version, fragment and whole-response cache, ETags.

The catalogue changes rarely and is read often, so rendered matrix responses and API bodies are
cached whole under a catalogue version, and repeat requests are answered 304 from their ETag.
GET pages hold nothing per user (no CSRF token, no session), so one cached response serves
everyone, and browsers and proxies may keep it for CACHE_SECONDS. Every
save or delete of a catalogue model bumps the version (signals below), which retires every cached
fragment and ETag at once; nothing has to know which pages a write affects.

Two versions make up the catalogue version. The *structure* version covers what variants
exist and how they are built; the *status* version covers only build outcomes (a BuildRecord,
a variant's `status`). A build record from CI bumps the status version alone, so whatever
depends on structure only (the selector, filter choices, the wizard's snapshot, whose statuses
are laid on top per status version) stays warm; pages that show statuses key on both.

Bulk writes (`QuerySet.update`, `bulk_create`) send no signals: call `bump_version()` after them.
The version lives in its own cache (the `catalogue-version` alias, of the same kind as the
default, holding nothing else) so that culling the fragments can never drop it (with Redis, the
default cache, whose eviction policy spares it); with several server processes, configure a
shared cache (REDIS_URL, or the file cache on one host) so a write in one retires the fragments
of all. Every request reads the version from that cache, never from memory, and the in-process
memo below is keyed by it: another process's write retires this one's memo at its next request.
Keys are bounded: a whole response is cached per normalised query (single-valued parameters by
their last value, as Django reads them), never per free-text search or per Host header.
"""

from __future__ import annotations

import hashlib
import pickle
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Collection

from django.core.cache import cache, caches
from django.core.cache.backends.base import InvalidCacheBackendError
from django.db.models import F, Subquery
from django.db.models.signals import post_delete, post_save
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers
from django.utils.http import parse_etags

from catalog.models import (
    Branch,
    BuildRecord,
    CpuIsa,
    DocPage,
    GpuArchitecture,
    GpuModel,
    SourceClaim,
    StoredSnapshot,
    StructureRevision,
    Variant,
)

STRUCTURE_KEY = "catalogue:structure"
STATUS_KEY = "catalogue:status"
FRAGMENT_TIMEOUT = 24 * 3600  # a version's fragments are useless after a bump; let them expire
CACHE_SECONDS = 60  # how long a client may reuse a page without asking (a write shows within it)
KEPT_HEADERS = ("Content-Type", "Content-Disposition")
# This process's most recent whole responses, so a hit skips the shared cache's read and
# unpickling; keyed by catalogue version like the shared entries, so a bump retires them too.
LOCAL_RESPONSES = 32
_local: OrderedDict = OrderedDict()
_local_lock = threading.Lock()  # threaded servers (runserver, gthread workers) share it
CATALOGUE_MODELS = (
    Branch,
    BuildRecord,
    CpuIsa,
    DocPage,
    GpuArchitecture,
    GpuModel,
    SourceClaim,
    Variant,
)


VERSION_CACHE = "catalogue-version"
# Parameters that are free text: a response to one is not kept whole (each value would be a new
# entry, and entries without bound push out the others).
FREE_TEXT = frozenset({"q"})


def version_store():
    """The cache holding the versions: its own alias when configured, else the default."""
    try:
        return caches[VERSION_CACHE]
    except InvalidCacheBackendError:
        return cache


def _version(key: str) -> str:
    store = version_store()
    version = store.get(key)
    if version is None:
        # Lost (a cleared cache): a new version retires every fragment, which is always safe.
        store.add(key, uuid.uuid4().hex, None)
        version = store.get(key)
    return version


def structure_version() -> str:
    """Changes with every write except build outcomes."""
    return _version(STRUCTURE_KEY)


def status_version() -> str:
    """Changes with every build outcome (and with every structure change)."""
    return _version(STATUS_KEY)


def catalogue_version() -> str:
    """Both versions: for whatever shows statuses."""
    return f"{structure_version()}.{status_version()}"


def bump_status(**_signal_kwargs) -> str:
    version = uuid.uuid4().hex
    version_store().set(STATUS_KEY, version, None)
    return version


def bump_version(**_signal_kwargs) -> str:
    """Retire everything: structure and status (and the stored snapshots, in the database)."""
    version = uuid.uuid4().hex
    version_store().set(STRUCTURE_KEY, version, None)
    bump_status()
    _bump_revision()
    return version


# ---------------------------------------------------------------- stored snapshots

# name -> build(): what is derived from the whole catalogue's structure and stored in the
# database (StoredSnapshot), registered by the module that reads it.
SNAPSHOTS: dict[str, Callable] = {}


def register_snapshot(name: str, build: Callable) -> Callable:
    SNAPSHOTS[name] = build
    return build


def _bump_revision() -> None:
    """In the writer's transaction, so a snapshot built from rows read before it commits
    carries the older revision and is never taken for current."""
    if not StructureRevision.objects.filter(pk=1).update(number=F("number") + 1):
        StructureRevision.objects.get_or_create(pk=1, defaults={"number": 1})


def _revision() -> int:
    return StructureRevision.objects.filter(pk=1).values_list("number", flat=True).first() or 0


def _store(name: str, revision: int, value) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    StoredSnapshot.objects.update_or_create(
        name=name, defaults={"revision": revision, "data": data}
    )


def snapshot(name: str):
    """The registered snapshot `name` as stored for the current structure revision (one query
    and an unpickling); built and stored when missing or older."""
    current = StructureRevision.objects.filter(pk=1).values("number")[:1]
    data = (
        StoredSnapshot.objects.filter(name=name, revision=Subquery(current))
        .values_list("data", flat=True)
        .first()
    )
    if data is not None:
        try:
            return pickle.loads(data)
        except (ImportError, AttributeError, pickle.UnpicklingError):
            pass  # written by another release: built anew
    revision = _revision()  # read before the rows: a write meanwhile makes the result older
    value = SNAPSHOTS[name]()
    _store(name, revision, value)
    return value


def store_derived() -> None:
    """What a writer (seeding, an import, an edit) calls before it commits: the audit findings
    of the branches it changed (catalog/audit_store.py) and the snapshots, stored with the
    write itself."""
    from catalog import audit_store

    audit_store.refresh_stale()
    store_snapshots()


def store_snapshots() -> None:
    """What a writer calls before it commits: every registered snapshot built from the rows as
    written and stored at the revision they bumped, so no visitor pays for building them."""
    revision = _revision()
    for name, build in SNAPSHOTS.items():
        _store(name, revision, build())


def _bump_on_save(sender, update_fields=None, **kwargs):
    # record_build saves a variant with update_fields=["status"]: a build outcome, not a
    # change of what the variant is.
    if sender is Variant and update_fields is not None and set(update_fields) <= STATUS_FIELDS:
        bump_status()
    else:
        bump_version()


STATUS_FIELDS = {"status"}
STATUS_MODELS = (BuildRecord,)
for _model in CATALOGUE_MODELS:
    on_save = bump_status if _model in STATUS_MODELS else _bump_on_save
    on_delete = bump_status if _model in STATUS_MODELS else bump_version
    post_save.connect(
        on_save, sender=_model, dispatch_uid=f"catalogue-version-save-{_model.__name__}"
    )
    post_delete.connect(
        on_delete, sender=_model, dispatch_uid=f"catalogue-version-delete-{_model.__name__}"
    )


def _digest(parts) -> str:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:32]


def normalised_query(
    request: HttpRequest, known: Collection[str], single: Collection[str] = ()
) -> list[tuple[str, str]]:
    """The query's known, non-empty parameters in their order: what a response depends on.
    Unknown parameters (tracking tags, cache-busters) and empty fields change nothing, so they
    neither reach the filters nor split the cache. A `single`-valued parameter given several
    times counts by its last value, the one Django's `QueryDict` reads, whatever the order."""
    pairs = []
    for k, values in request.GET.lists():
        if k not in known:
            continue
        for v in values[-1:] if k in single else values:
            if v != "":
                pairs.append((k, v))
    return pairs


def free_text(pairs: list[tuple[str, str]]) -> bool:
    """Whether the query holds free text (never cached whole)."""
    return any(k in FREE_TEXT for k, _ in pairs)


def query_key(pairs: list[tuple[str, str]]) -> str:
    return "&".join(f"{k}={v}" for k, v in sorted(pairs))


def _stored(key: str):
    """The shared cache's entry for `key`, or None when it is missing or was written by other
    code: an entry pickled by an earlier release may name a class that moved or no longer exists
    (during a rolling deploy, or from a file cache kept across an upgrade); it is rendered anew."""
    try:
        return cache.get(key)
    except (ImportError, AttributeError, pickle.UnpicklingError):
        return None


def cached_response(
    name: str, build: Callable[[], HttpResponse], *parts, version: str | None = None
) -> HttpResponse:
    """`build()`'s response, kept whole (status 200 only: body and content headers) for the
    catalogue version (the current one unless given) and the given parts; a hit costs no query
    and no rendering."""
    key = f"catalogue:{version or catalogue_version()}:{name}:{_digest(parts)}"
    stored = _local.get(key) or _stored(key)
    if stored is None:
        response = build()
        if response.status_code != 200:
            return response
        stored = ([(h, response[h]) for h in KEPT_HEADERS if h in response], response.content)
        cache.set(key, stored, FRAGMENT_TIMEOUT)
    with _local_lock:
        _local[key] = stored
        _local.move_to_end(key)
        while len(_local) > LOCAL_RESPONSES:
            _local.popitem(last=False)
    headers, body = stored
    response = HttpResponse(body)
    for header, value in headers:
        response[header] = value
    return response


def cached(name: str, build, *parts, version: str | None = None):
    """`build()`'s result, cached for the catalogue version (the current one unless given, e.g.
    `structure_version()` for what shows no status) and the given parts."""
    key = f"catalogue:{version or catalogue_version()}:{name}:{_digest(parts)}"
    value = _stored(key)
    if value is None:
        value = build()
        cache.set(key, value, FRAGMENT_TIMEOUT)
    return value


def by_content(name: str, build: Callable[[str], str], text: str) -> str:
    """`build(text)`, cached by the text's hash (valid across catalogue versions)."""
    key = f"content:{name}:{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()}"
    value = _stored(key)
    if value is None:
        value = build(text)
        cache.set(key, value, FRAGMENT_TIMEOUT)
    return value


def etag(*parts, version: str | None = None) -> str:
    return f'"{_digest((version or catalogue_version(), *parts))}"'


def is_not_modified(request, tag: str) -> bool:
    """Whether the client already holds the response `tag` names (a conditional GET)."""
    header = request.headers.get("If-None-Match")
    if not header or request.method not in ("GET", "HEAD"):
        return False
    tags = parse_etags(header)
    return (
        "*" in tags or tag in tags or tag.removeprefix("W/") in [t.removeprefix("W/") for t in tags]
    )


def mark_cacheable(response, tag: str, vary=("HX-Request", "HX-History-Restore-Request")):
    """Let clients and shared caches keep the response for CACHE_SECONDS, then revalidate it
    (cheap: a 304 costs no query)."""
    response["ETag"] = tag
    response["Cache-Control"] = f"public, max-age={CACHE_SECONDS}"
    patch_vary_headers(response, vary)
    return response
