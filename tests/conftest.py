"""Shared fixtures: the test database holds the full seed catalogue, loaded once per session.

Each test runs in a transaction that is rolled back, so tests may change the data freely.
Transactional tests (live_server, browser) flush the database; they restore the catalogue with
the `seeded_db` fixture, which loads a dump taken once per session (about 1 s, where loading
the seed files again takes 4–5 s). pytest-django runs them last.
"""

import os

import pytest
from django.core.cache import cache, caches
from django.core.management import call_command
from hypothesis import settings

from catalog.seeding import load_catalogue

# Property tests draw new examples on every local run, to find what no one thought of; CI
# (.ci/run sets CI=1) draws the same ones each time, so its verdict depends only on the code.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker, tmp_path_factory):
    with django_db_blocker.unblock():
        load_catalogue()
        dump = tmp_path_factory.mktemp("seed") / "catalogue.json"
        call_command("dumpdata", "catalog", output=str(dump), verbosity=0)
    return dump


@pytest.fixture
def seeded_db(django_db_setup, transactional_db):
    """The seed catalogue in a transactional test's database (which starts from a flush)."""
    call_command("loaddata", str(django_db_setup), verbosity=0)
    cache.clear()


@pytest.fixture(autouse=True)
def fresh_cache():
    """Rendered fragments are cached per catalogue version; rolled-back test writes would leave
    entries keyed on versions a later test reaches again."""
    clear_caches()
    yield
    clear_caches()


def clear_caches():
    """Every cache alias: the catalogue's version lives in one of its own."""
    for alias in caches:
        caches[alias].clear()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """Transactional tests flush the database, so every test that reads the seeded catalogue must
    run before them. pytest-django orders them so, but pytest regroups tests by session-scoped
    parameters afterwards (a test that borrows a Playwright fixture name joins the browser tests):
    refuse such an order at collection rather than fail hundreds of tests on an empty database."""
    flushed = None
    for item in items:
        marker = item.get_closest_marker("django_db")
        names = item.fixturenames
        transactional = "live_server" in names or "transactional_db" in names
        transactional = transactional or bool(marker and marker.kwargs.get("transaction"))
        if transactional:
            flushed = flushed or item.nodeid
        elif flushed and (marker is not None or "db" in names):
            raise pytest.UsageError(
                f"{item.nodeid} reads the database but runs after {flushed}, which flushes it: "
                "rename whatever parameter gives it a browser's parameter."
            )
