"""Browser tests: Playwright drives Debian's Chromium (/usr/bin/chromium) against live_server.

`playwright install` cannot download browsers here, so the system Chromium is used, headless,
with the flags that keep it off the network.
"""

import os
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in the test thread; Django's ORM guard would refuse
# database access from it.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium).")
    return {
        **browser_type_launch_args,
        "executable_path": str(CHROMIUM),
        "args": CHROMIUM_ARGS,
        "headless": True,
    }


@pytest.fixture
def seeded_live_server(live_server, seeded_db):
    """A live server over the full seed catalogue (put back after each browser test's flush)."""
    return live_server
