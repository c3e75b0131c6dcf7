"""Imported branches for the export tests: git checkouts of real recipes, read into the
catalogue by `import-recipes` itself."""

from __future__ import annotations

import shutil
import subprocess
from io import StringIO
from pathlib import Path

from django.core.management import call_command

from catalog.models import Branch

from .nix_data import REAL, need_real

PYTORCH_2_8 = ("build-pytorch", "pytorch-2.8-python312")
TORCHVISION_12_9 = ("build-torchvision", "cuda-12_9")


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", message)


def real_checkout(tmp_path: Path, repository: str, branch: str) -> Path:
    """A git checkout in tmp of one real branch folder, everything committed, on a git branch
    of the same name."""
    need_real()
    root = tmp_path / repository / branch
    shutil.copytree(REAL / repository / branch, root)
    git(root, "init", "-q", "-b", branch)
    commit_all(root, "recipes as the repository has them")
    return root


def import_tree(root: Path, repository: str, branch_name: str) -> Branch:
    """`import-recipes` of the checkout: from its git objects when it is a git repository (so
    the branch records the commit it was imported from), else from its files."""
    if (root / ".git").exists():
        args = ["--git", str(root)]
    else:
        args = [str(root)]
    call_command(
        "import-recipes",
        *args,
        repository=repository,
        branch=[branch_name],
        stdout=StringIO(),
        stderr=StringIO(),
    )
    return Branch.objects.get(repository=repository, name=branch_name)


def export_tree(root: Path, repository: str, branch: str, **options) -> str:
    """`export-recipes --into` the checkout for one branch: what it printed."""
    out = StringIO()
    call_command(
        "export-recipes",
        into=str(root),
        repository=[repository],
        branch=[branch],
        stdout=out,
        stderr=StringIO(),
        **options,
    )
    return out.getvalue()
