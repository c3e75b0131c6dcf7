"""Time exporting the whole catalogue (every branch tree), the second, no-op run, and
verifying every exported recipe against the stand-in nixpkgs (verify-recipes); then the no-op
export into a checkout of imported recipes: a real branch (../shared/real-recipes, when present)
and a generated tree of 1,000+ recipes. The imports run in a transaction that is rolled back,
so the development database is left as it was.

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

from django.db import transaction  # noqa: E402

from catalog.recipes import verify as recipe_verify  # noqa: E402
from catalog.recipes.exporting import sync  # noqa: E402
from catalog.recipes.nix import evaluate, verify  # noqa: E402
from catalog.recipes.nix.edit import edit_recipe  # noqa: E402
from tests.export_data import PYTORCH_2_8, import_tree, real_checkout  # noqa: E402
from tests.nix_data import REAL  # noqa: E402

GENERATED_COPIES = 17  # 62 real recipes x 17 = 1,054 recipes in one generated tree


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
        targets = [(Path(out) / b.repository / b.name, b) for b in sync.select_branches()]
        start = time.perf_counter()
        first = sync.export_recipes(targets)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        second = sync.export_recipes(targets)
        noop = time.perf_counter() - start
        checked = verify_trees([root for root, _ in targets])
    print(
        f"export, whole catalogue ({len(targets)} branches): {cold * 1000:.0f} ms — "
        f"{first.summary()}"
    )
    print(f"export, second no-op run:                 {noop * 1000:.0f} ms — {second.summary()}")
    print(f"verify-recipes, every exported recipe:    {checked}")
    if not REAL.is_dir():
        print(f"imported checkouts: skipped, {REAL} is absent")
        return
    with tempfile.TemporaryDirectory() as tmp, transaction.atomic():
        imported_noop(Path(tmp))
        transaction.set_rollback(True)


def timed_export(root: Path, branch, **options) -> tuple[float, sync.ExportReport]:
    start = time.perf_counter()
    report = sync.export_recipes([(root, branch)], checkout=True, **options)
    return time.perf_counter() - start, report


def generated_tree(real: Path, root: Path) -> int:
    """Every real recipe GENERATED_COPIES times, each copy renamed in place (pname edited);
    imported from its files, as import-recipes reads a checkout."""
    pkgs = root / ".flox" / "pkgs"
    pkgs.mkdir(parents=True)
    count = 0
    for path in sorted((real / ".flox" / "pkgs").glob("*.nix")):
        text = path.read_text(encoding="utf-8")
        for copy in range(GENERATED_COPIES):
            name = f"{path.stem}-copy{copy}"
            (pkgs / f"{name}.nix").write_text(edit_recipe(text, {"pname": name}), encoding="utf-8")
            count += 1
    (root / "README.md").write_text("# Generated tree\n")
    return count


def imported_noop(tmp: Path) -> None:
    real = real_checkout(tmp, *PYTORCH_2_8)
    start = time.perf_counter()
    branch = import_tree(real, *PYTORCH_2_8)
    imported = time.perf_counter() - start
    seconds, report = timed_export(real, branch)
    recipes = report.count("unchanged")  # the README has no markers: not a planned file
    print(
        f"no-op export, imported real branch ({recipes} recipes): {seconds * 1000:.0f} ms — "
        f"{report.summary()} (import-recipes --git: {imported * 1000:.0f} ms)"
    )
    seconds, report = timed_export(real, branch, check=True)
    print(f"--check of the same branch:               {seconds * 1000:.0f} ms — {report.summary()}")
    big = tmp / "generated"
    count = generated_tree(real, big)
    # A branch of its own: import-recipes creates it, so no seeded variant is mixed in.
    branch = import_tree(big, PYTORCH_2_8[0], "bench-generated")
    seconds, report = timed_export(big, branch)
    print(
        f"no-op export, generated tree ({count} recipes): {seconds * 1000:.0f} ms — "
        f"{report.summary()}"
    )
    branch.variants.update(nixpkgs_pin="0123456789abcdef0123456789abcdef01234567")
    seconds, report = timed_export(big, branch, check=True)
    print(
        f"--check, every pin of that tree changed:  {seconds * 1000:.0f} ms — {report.summary()} "
        "(each recipe edited in place)"
    )


if __name__ == "__main__":
    main()
