"""Catalogue version, fragment cache and ETags.

The catalogue changes rarely and is read often, so rendered matrix fragments and API bodies are
cached under a catalogue version, and repeat requests are answered 304 from their ETag. Every
save or delete of a catalogue model bumps the version (signals below), which retires every cached
fragment and ETag at once; nothing has to know which pages a write affects.

Bulk writes (`QuerySet.update`, `bulk_create`) send no signals: call `bump_version()` after them.
The version lives in Django's default cache; with several server processes, configure a shared
cache (e.g. Redis or the database cache) so a write in one retires the fragments of all.
"""

from __future__ import annotations

import hashlib
import uuid

from django.core.cache import cache
from django.db.models.signals import post_delete, post_save
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


def request_key(request, *extra) -> tuple:
    """What a response depends on besides the catalogue: path, query (order-insensitive), extras."""
    query = "&".join(f"{k}={v}" for k, values in sorted(request.GET.lists()) for v in values)
    return (request.path, query, *extra)


def cached(name: str, build, *parts):
    """`build()`'s result, cached for the current catalogue version and the given parts."""
    key = f"catalogue:{catalogue_version()}:{name}:{_digest(parts)}"
    value = cache.get(key)
    if value is None:
        value = build()
        cache.set(key, value, FRAGMENT_TIMEOUT)
    return value


def etag(*parts) -> str:
    return f'"{_digest((catalogue_version(), *parts))}"'


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
    """Let clients keep the response but revalidate it every time (cheap: a 304 costs no query)."""
    response["ETag"] = tag
    response["Cache-Control"] = "no-cache"
    patch_vary_headers(response, vary)
    return response
