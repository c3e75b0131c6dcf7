"""Shared fixtures: the test database holds the full seed catalogue between any two tests.

The catalogue is loaded once per test process and a snapshot of it is taken. Each test
that uses `db` runs in a transaction that is rolled back, so tests may change the data freely.
Transactional tests (live_server, browser, `transaction=True`) commit, and Django empties the
database after each of them; the snapshot is put back at once (`pytest_runtest_teardown`), so
the order in which tests run does not matter: pytest-xdist may hand any test to any worker.
"""

import os
import sqlite3
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings as django_settings
from django.contrib.auth.hashers import reset_hashers
from django.core.cache import caches
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection, transaction
from hypothesis import settings

from catalog.seeding import load_catalogue

# Property tests draw new examples on every local run, to find what no one thought of; CI
# (.ci/run sets CI=1) draws the same ones each time, so its verdict depends only on the code.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_configure(config):
    # Django's default hasher costs most of a second of CPU per password set or checked, by
    # design; the tests create and log in users dozens of times, and test no hasher's strength.
    django_settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    reset_hashers(setting="PASSWORD_HASHERS")  # in case anything hashed before


class Snapshot:
    """The loaded catalogue, put back after a transactional test's flush.

    SQLite: the whole database file, copied page by page with SQLite's backup API (0.02 s, and
    safe while the live server's thread has the file open). PostgreSQL: a copy of every table
    in a schema of its own, copied back with INSERT … SELECT (Django's foreign keys are checked
    at commit, so the order does not matter). Elsewhere: a dump of the catalog app, loaded again
    with loaddata (2.5 s)."""

    SCHEMA = "seed_snapshot"

    def __init__(self, folder: Path, blocker):
        self.blocker = blocker
        self.vendor = connection.vendor
        self.path = folder / "catalogue.sqlite3"
        if self.vendor == "sqlite":
            connection.ensure_connection()
            with sqlite3.connect(self.path) as target:
                connection.connection.backup(target)
        elif self.vendor == "postgresql":
            self.tables = connection.introspection.django_table_names(only_existing=True)
            with connection.cursor() as cursor:
                cursor.execute(f"CREATE SCHEMA {self.SCHEMA}")
                for table in map(connection.ops.quote_name, self.tables):
                    cursor.execute(f"CREATE TABLE {self.SCHEMA}.{table} AS TABLE {table}")
        else:
            self.path = folder / "catalogue.json"
            call_command("dumpdata", "catalog", output=str(self.path), verbosity=0)

    def restore(self) -> None:
        with self.blocker.unblock():
            if self.vendor == "sqlite":
                connection.ensure_connection()
                with sqlite3.connect(self.path) as source:
                    source.backup(connection.connection)
            elif self.vendor == "postgresql":
                self.copy_tables_back()
            else:
                call_command("loaddata", str(self.path), verbosity=0)
            # Closed here, as Django closes a connection after a transactional test: the hook
            # that runs this may not see the connection the next test or the final teardown
            # sees, and an open one left behind keeps PostgreSQL from dropping the database.
            connection.close()

    def copy_tables_back(self) -> None:
        names = [connection.ops.quote_name(table) for table in self.tables]
        resets = connection.ops.sequence_reset_sql(no_style(), apps.get_models())
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"TRUNCATE {', '.join(names)}")
            for table in names:
                cursor.execute(f"INSERT INTO {table} SELECT * FROM {self.SCHEMA}.{table}")
            for sql in resets:
                cursor.execute(sql)


# The snapshot of this process (each xdist worker has its own database and its own snapshot).
SNAPSHOT: list[Snapshot] = []


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker, tmp_path_factory):
    with django_db_blocker.unblock():
        load_catalogue()
        SNAPSHOT.append(Snapshot(tmp_path_factory.mktemp("seed"), django_db_blocker))
    yield SNAPSHOT[0]
    with django_db_blocker.unblock():
        end_other_sessions()


def end_other_sessions() -> None:
    """On PostgreSQL, end every other session on the test database before it is dropped: one
    a server or thread left behind would make the drop fail ("being accessed by other users")."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture
def seeded_db(transactional_db):
    """A transactional test's database; it holds the seed catalogue, as every test's does."""


def is_transactional(item: pytest.Item) -> bool:
    """Whether the test commits (and so is followed by a flush), as pytest-django decides."""
    marker = item.get_closest_marker("django_db")
    names = getattr(item, "fixturenames", ())
    return (
        "live_server" in names
        or "transactional_db" in names
        or bool(
            marker and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences"))
        )
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After a transactional test's teardown (which flushed the database), the catalogue again;
    not after the last test, whose teardown has destroyed the test database."""
    try:
        return (yield)
    finally:
        if SNAPSHOT and nextitem is not None and is_transactional(item):
            SNAPSHOT[0].restore()


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
