"""catalog.recipes.nix.read on what the catalogue exports: every seeded variant's rendered recipe
reads back with the catalogue's own values (the only test of the Nix package that needs the
database, for the seed catalogue)."""

import pytest

from catalog import naming
from catalog.models import Variant
from catalog.recipes.exporting import profiles, render_recipe
from catalog.recipes.nix.edit import edit_recipe
from catalog.recipes.nix.read import read_recipe

pytestmark = pytest.mark.django_db

PYTHON_BY_SET = {attr: version for version, attr in profiles.PYTHON_PACKAGES.items()}


def cuda_version(attr: str) -> str:
    """ "cudaPackages_12_8" -> "12.8"."""
    return ".".join(attr.removeprefix("cudaPackages_").split("_"))


def test_every_exported_recipe_reads_with_the_catalogues_values():
    variants = Variant.objects.select_related("branch", "gpu_arch", "cpu_isa", "depends_on__branch")
    checked = 0
    for variant in variants:
        text = render_recipe(variant)
        facts = read_recipe(text)
        where = f"{variant.branch} {variant.pname}"
        assert (facts.pname, facts.library, facts.backend) == (
            variant.pname,
            variant.library,
            variant.backend,
        ), where
        assert (
            PYTHON_BY_SET.get(facts.python_attr, variant.python_version) == variant.python_version
        )
        assert facts.platforms == [variant.platform], where
        assert facts.cpu_flags == (
            list(variant.cpu_isa.compiler_flags) if variant.cpu_isa_id else []
        )
        assert facts.metadata_rev == variant.metadata_rev, where
        assert set(facts.disabled_features) == set(variant.disabled_features), where
        assert facts.extra_cmake_flags == list(variant.extra_cmake_flags), where
        pin = getattr(variant, "nixpkgs_pin", None) or variant.branch.nixpkgs_pin
        if facts.nixpkgs_pin:
            assert facts.nixpkgs_pin == pin, where
        if variant.backend == "cuda":
            assert cuda_version(facts.cuda_packages_attr) == variant.cuda_version, where
            assert [naming.gpu_target_sm_lenient(t) for t in facts.gpu_targets] == [
                variant.gpu_arch.sm
            ], where
        else:
            assert facts.gpu_targets == [] and facts.cuda_packages_attr == "", where
        if variant.library == "pytorch":
            assert facts.form == "pytorch-pinned" and facts.pytorch_source is None, where
        else:
            source = facts.pytorch_source
            assert source is not None and facts.form == f"companion-{source.kind}", where
            if source.kind == "sibling":
                assert source.sibling == variant.depends_on.pname, where
        assert f"Package name: {variant.pname}" in facts.header, where
        assert edit_recipe(text, {}) is text
        checked += 1
    assert checked == Variant.objects.count() > 800
