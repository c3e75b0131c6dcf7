"""Time exporting the whole catalogue (every branch tree) and the second, no-op run.

Usage: .venv/bin/python bench/export.py   (run by `make bench`; uses the development database)
"""
import os
import sys
import tempfile
import time
from pathlib import Path

import django

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "catalogue_site.settings")
django.setup()

from catalog import recipe_sync  # noqa: E402


def main():
    with tempfile.TemporaryDirectory() as out:
        targets = [(Path(out) / b.repository / b.name, b) for b in recipe_sync.select_branches()]
        start = time.perf_counter()
        first = recipe_sync.export_recipes(targets)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        second = recipe_sync.export_recipes(targets)
        noop = time.perf_counter() - start
    print(f"export, whole catalogue ({len(targets)} branches): {cold * 1000:.0f} ms — {first.summary()}")
    print(f"export, second no-op run:                 {noop * 1000:.0f} ms — {second.summary()}")


if __name__ == "__main__":
    main()
