"""Imported branches for the export tests: a checkout of real recipes read into the catalogue.

`import_tree` turns every recipe of a checkout into an imported Variant straight from
`catalog.nix.read.read_recipe` (the text, the facts as read, the values as written), replacing
the branch's variants, so the export side can be tested on the repositories' own files.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

from catalog import naming
from catalog.exporters.nix import isa_table
from catalog.exporters.recipe_text import cuda_of_set, isa_of_flags, sm_of_targets
from catalog.models import Branch, CpuIsa, GpuArchitecture, Variant
from catalog.nix.read import read_recipe

from .nix_data import REAL, need_real

PYTORCH_2_8 = ("build-pytorch", "pytorch-2.8-python312")
TORCHVISION_12_9 = ("build-torchvision", "cuda-12_9")
BLAS = {"cuda": "cublas", "cpu": "openblas", "mps": "veclib"}


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def real_checkout(tmp_path: Path, repository: str, branch: str) -> Path:
    """A git checkout in tmp of one real branch folder, everything committed."""
    need_real()
    root = tmp_path / repository / branch
    shutil.copytree(REAL / repository / branch, root)
    git(root, "init", "-q", "-b", branch)
    git(root, "add", "-A")
    git(
        root,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.org",
        "commit",
        "-qm",
        "recipes as the repository has them",
    )
    return root


def facts_json(facts) -> dict:
    data = dataclasses.asdict(facts)
    data.pop("spans")
    return data


def _cuda_version(facts, branch: Branch) -> str:
    if facts.backend != "cuda":
        return ""
    written = cuda_of_set(facts.cuda_packages_attr)
    return written if "." in written else branch.cuda_versions[0]


def import_tree(root: Path, repository: str, branch_name: str) -> Branch:
    """Every `.flox/pkgs/*.nix` of `root` as an imported variant of the branch (its variants,
    and the variants that depend on them, are replaced); the checkout's HEAD is the branch's
    source commit."""
    branch = Branch.objects.get(repository=repository, name=branch_name)
    Variant.objects.filter(depends_on__branch=branch).delete()
    Variant.objects.filter(branch=branch).delete()
    archs = {a.sm: a for a in GpuArchitecture.objects.all()}
    isas = {i.slug: i for i in CpuIsa.objects.all()}
    table = isa_table(isas.values())
    for path in sorted((root / ".flox" / "pkgs").glob("*.nix")):
        text = path.read_text(encoding="utf-8")
        facts = read_recipe(text)
        isa = isas.get(isa_of_flags(facts.cpu_flags, table))
        Variant.objects.create(
            branch=branch,
            pname=facts.pname,
            library=facts.library,
            backend=facts.backend,
            cuda_version=_cuda_version(facts, branch),
            gpu_arch=archs.get(sm_of_targets(facts.gpu_targets)),
            cpu_isa=isa,
            platform=facts.platforms[0] if facts.platforms else "",
            python_version=branch.python_version,
            blas=BLAS[facts.backend],
            disabled_features=list(facts.disabled_features),
            extra_cmake_flags=list(facts.extra_cmake_flags),
            metadata_rev=facts.metadata_rev if facts.metadata_rev is not None else 1,
            origin="imported",
            recipe_form=facts.form,
            recipe_path=naming.recipe_path(path.stem),
            recipe_text=text,
            recipe_facts=facts_json(facts),
            nixpkgs_pin=facts.nixpkgs_pin,
            cuda_packages_attr=facts.cuda_packages_attr,
            python_attr=facts.python_attr,
            gpu_targets=list(facts.gpu_targets),
            cpu_flags=list(facts.cpu_flags),
            platforms=list(facts.platforms),
            torch_version_override=facts.torch_version_override,
            passthru=dict(facts.passthru),
        )
    if (root / ".git").exists():
        branch.source_commit = git(root, "rev-parse", "HEAD").strip()
        branch.save(update_fields=["source_commit"])
    return branch
