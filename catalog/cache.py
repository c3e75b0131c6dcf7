"""Catalogue version, fragment and whole-response cache, ETags.

The catalogue changes rarely and is read often, so rendered matrix responses and API bodies are
cached whole under a catalogue version, and repeat requests are answered 304 from their ETag.
GET pages hold nothing per user (no CSRF token, no session), so one cached response serves
everyone, and browsers and proxies may keep it for CACHE_SECONDS. Every
save or delete of a catalogue model bumps the version (signals below), which retires every cached
fragment and ETag at once; nothing has to know which pages a write affects.

Bulk writes (`QuerySet.update`, `bulk_create`) send no signals: call `bump_version()` after them.
The version lives in Django's default cache; with several server processes, configure a shared
cache (REDIS_URL, or the file cache on one host) so a write in one retires the fragments of all.
Every request reads the version from that cache, never from memory, and the in-process memo
below is keyed by it: another process's write retires this one's memo at its next request.
"""

from __future__ import annotations

import hashlib
import pickle
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Collection

from django.core.cache import cache
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
    Variant,
)

VERSION_KEY = "catalogue:version"
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


def catalogue_version() -> str:
    version = cache.get(VERSION_KEY)
    if version is None:
        cache.add(VERSION_KEY, uuid.uuid4().hex, None)
        version = cache.get(VERSION_KEY)
    return version


def bump_version(**_signal_kwargs) -> str:
    version = uuid.uuid4().hex
    cache.set(VERSION_KEY, version, None)
    return version


for _model in CATALOGUE_MODELS:
    post_save.connect(
        bump_version, sender=_model, dispatch_uid=f"catalogue-version-save-{_model.__name__}"
    )
    post_delete.connect(
        bump_version, sender=_model, dispatch_uid=f"catalogue-version-delete-{_model.__name__}"
    )


def _digest(parts) -> str:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:32]


def normalised_query(request: HttpRequest, known: Collection[str]) -> list[tuple[str, str]]:
    """The query's known, non-empty parameters in their order: what a response depends on.
    Unknown parameters (tracking tags, cache-busters) and empty fields change nothing, so they
    neither reach the filters nor split the cache."""
    return [(k, v) for k, values in request.GET.lists() if k in known for v in values if v != ""]


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


def cached(name: str, build, *parts):
    """`build()`'s result, cached for the current catalogue version and the given parts."""
    key = f"catalogue:{catalogue_version()}:{name}:{_digest(parts)}"
    value = _stored(key)
    if value is None:
        value = build()
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
