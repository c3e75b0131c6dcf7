"""The whole-response cache across server processes (catalog.cache).

Each process keeps its last responses in memory, keyed by the catalogue version; another
process's write reaches it only as a new version in the shared cache. So every request must read
the version from the shared cache, never from memory: simulated here by writing the version
straight into the cache, as another process's `bump_version()` does (tests/test_two_hosts.py
does it with two real servers).
"""

import json
import sys
import types
import uuid

import pytest

from catalog.cache import STRUCTURE_KEY, cached, version_store
from catalog.models import Variant

URL = "/api/variants?gpu=sm90"


def status_of(client, variant: Variant) -> str:
    key = (variant.branch.repository, variant.branch.name, variant.pname)
    rows = json.loads(client.get(URL).content)["results"]
    return next(r["status"] for r in rows if (r["repository"], r["branch"], r["pname"]) == key)


@pytest.mark.django_db
def test_a_version_written_by_another_process_retires_this_process_s_memo(client):
    variant = (
        Variant.objects.select_related("branch").filter(gpu_arch__sm="sm90").order_by("pk").first()
    )
    before = status_of(client, variant)
    # Another process changes the database; its bump has not reached the shared cache yet.
    Variant.objects.filter(pk=variant.pk).update(status="failed")
    assert status_of(client, variant) == before  # still the cached answer
    version_store().set(STRUCTURE_KEY, uuid.uuid4().hex, None)  # its bump arrives
    assert status_of(client, variant) == "failed"


def test_an_entry_pickled_by_code_that_is_gone_is_rendered_anew(monkeypatch):
    # An earlier release cached an object of a class that has since moved (catalog.facets →
    # catalog.browse): reading it must not fail the page, only miss.
    module = types.ModuleType("catalog_old_release")

    class Snapshot:
        pass

    Snapshot.__module__, Snapshot.__qualname__ = module.__name__, "Snapshot"
    module.Snapshot = Snapshot
    monkeypatch.setitem(sys.modules, module.__name__, module)
    assert isinstance(cached("snapshot", Snapshot), Snapshot)
    monkeypatch.delitem(sys.modules, module.__name__)
    assert cached("snapshot", lambda: "rendered anew") == "rendered anew"
