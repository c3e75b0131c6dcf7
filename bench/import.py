"""Time import-recipes over a whole repository: a git clone built in a temporary directory with
12 branches, each holding the real build-pytorch pytorch-2.8-python312 and build-torchvision
cuda-12_9 recipes (119 files), 1,428 recipes in all — the size of the build repositories today.
Prints the first import (every recipe created), the re-import (nothing changes) and the reading
of the git objects alone. Goal: a whole repository in under 10 s.

Usage: .venv/bin/python bench/import.py   (run by `make bench`; the development database is
left as it was: the imports run in a transaction that is rolled back)
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from io import StringIO
from pathlib import Path

import django

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "catalogue_site.settings")
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402

from catalog.recipes import git_source  # noqa: E402

REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "real-recipes"
SOURCES = [
    REAL / "build-pytorch" / "pytorch-2.8-python312" / ".flox" / "pkgs",
    REAL / "build-torchvision" / "cuda-12_9" / ".flox" / "pkgs",
]
BRANCHES = 12


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.org", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def build_clone(root: Path) -> Path:
    repo = root / "build-pytorch"
    pkgs = repo / ".flox" / "pkgs"
    pkgs.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "bench-00")
    for source in SOURCES:
        for path in source.glob("*.nix"):
            shutil.copyfile(path, pkgs / path.name)
    for number in range(BRANCHES):
        if number:
            git(repo, "checkout", "-q", "-b", f"bench-{number:02d}")
            # Each branch differs from the last in one recipe, as real branches do.
            first = sorted(pkgs.glob("*.nix"))[number]
            first.write_text(first.read_text() + f"# branch {number}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"branch {number}")
    return repo


def timed(label: str, action) -> float:
    start = time.perf_counter()
    result = action()
    seconds = time.perf_counter() - start
    print(f"{label}: {seconds:.2f} s")
    return result


def main() -> int:
    if not all(source.is_dir() for source in SOURCES):
        print(f"skipped: {REAL} is absent (the real recipes are not shipped with the project)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        repo = build_clone(Path(tmp))
        recipes = sum(
            len(git_source.read_branch(repo, b.commit)[0]) for b in git_source.branches(repo)
        )
        print(f"{BRANCHES} branches, {recipes} recipes in one clone")

        def read_all():
            for branch in git_source.branches(repo):
                git_source.read_branch(repo, branch.commit)

        timed("read every branch's recipes from git objects", read_all)
        out = StringIO()
        with transaction.atomic():
            timed(
                "first import of the whole repository (all created)",
                lambda: call_command(
                    "import-recipes", str(repo), git=True, repository="build-pytorch", stdout=out
                ),
            )
            timed(
                "re-import of the whole repository (0 changed)",
                lambda: call_command(
                    "import-recipes", str(repo), git=True, repository="build-pytorch", stdout=out
                ),
            )
            transaction.set_rollback(True)
        summaries = [line for line in out.getvalue().splitlines() if "branch " in line]
        print("last summary:", summaries[-1] if summaries else "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
