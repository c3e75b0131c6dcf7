"""Shared fixtures: the test database holds the full seed catalogue, loaded once per session.

Each test runs in a transaction that is rolled back, so tests may change the data freely.
Transactional tests (live_server, browser) flush the database; they reload it themselves
(see `seeded_live_server` in tests/browser/conftest.py). pytest-django runs them last.
"""

import pytest
from django.core.cache import cache

from catalog.seeding import load_catalogue


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        load_catalogue()


@pytest.fixture(autouse=True)
def fresh_cache():
    """Rendered fragments are cached per catalogue version; rolled-back test writes would leave
    entries keyed on versions a later test reaches again."""
    cache.clear()
    yield
    cache.clear()
