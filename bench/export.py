"""Time exporting the whole catalogue (every branch tree), the second, no-op run, and
verifying every exported recipe against the stand-in nixpkgs (verify-recipes).

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

from catalog import recipe_sync, recipe_verify  # noqa: E402
from catalog.nix import evaluate, verify  # noqa: E402


def verify_trees(roots) -> str:
    if evaluate.nix_instantiate() is None:
        return "skipped: nix-instantiate is not installed (apt-get install nix-bin)"
    isa_flags = recipe_verify.catalogue_isa_flags()
    start = time.perf_counter()
    reports = verify.verify_folders(roots, isa_flags, jobs=2)
    seconds = time.perf_counter() - start
    recipes = sum(len(r.paths) for r in reports)
    findings = sum(len(r.findings) for r in reports)
    return f"{seconds:.1f} s — {recipes} recipes, {findings} findings (2 nix-instantiate runs)"


def main():
    with tempfile.TemporaryDirectory() as out:
        targets = [(Path(out) / b.repository / b.name, b) for b in recipe_sync.select_branches()]
        start = time.perf_counter()
        first = recipe_sync.export_recipes(targets)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        second = recipe_sync.export_recipes(targets)
        noop = time.perf_counter() - start
        checked = verify_trees([root for root, _ in targets])
    print(
        f"export, whole catalogue ({len(targets)} branches): {cold * 1000:.0f} ms — "
        f"{first.summary()}"
    )
    print(f"export, second no-op run:                 {noop * 1000:.0f} ms — {second.summary()}")
    print(f"verify-recipes, every exported recipe:    {checked}")


if __name__ == "__main__":
    main()
