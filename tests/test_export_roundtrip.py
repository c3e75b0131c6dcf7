"""Exporting imported recipes: no churn on a round trip, a changed field as its own line, and
README / BUILD_MATRIX only between markers — on the real repositories' files."""

from __future__ import annotations

import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from catalog.models import CpuIsa, GpuArchitecture, Variant
from catalog.recipes.exporting.recipe_text import (
    CatalogueValues,
    IsaFlags,
    changed_fields,
    isa_of_flags,
    recipe_text,
    sm_of_targets,
    wanted_facts,
)
from catalog.recipes.nix.errors import EditError
from catalog.recipes.nix.read import read_recipe

from .export_data import PYTORCH_2_8, TORCHVISION_12_9, git, import_tree, real_checkout
from .export_data import export_tree as export
from .nix_data import BUILD_PYTORCH, real_text

NEW_PIN = "0123456789abcdef0123456789abcdef01234567"
SM90_AVX512 = "pytorch-python312-cuda12_8-sm90-avx512"
CPU_AVX2 = "pytorch-python312-cpu-avx2"


def changed_lines(root: Path) -> dict[str, tuple[list[str], list[str]]]:
    """File -> (removed lines, added lines) of the work tree against HEAD."""
    files: dict[str, tuple[list[str], list[str]]] = {}
    current = None
    for line in git(root, "diff", "-U0", "--no-color").splitlines():
        if line.startswith("+++ b/"):
            current = line[len("+++ b/") :]
            files[current] = ([], [])
        elif line.startswith(("---", "+++", "@@", "diff ", "index ")):
            continue
        elif line.startswith("-"):
            files[current][0].append(line[1:])
        elif line.startswith("+"):
            files[current][1].append(line[1:])
    return files


# ---------------------------------------------------------------- the engine, without Django


ISAS = [
    IsaFlags("avx2", "x86_64", 20, ("-mavx2", "-mfma", "-mf16c")),
    IsaFlags("avx512", "x86_64", 30, ("-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw")),
]


def test_equal_facts_give_the_stored_text_itself():
    text = real_text(BUILD_PYTORCH / f"{SM90_AVX512}.nix")
    facts = {"pname": SM90_AVX512, "nixpkgs_pin": "abc", "cpu_flags": ["-mfma"]}
    assert recipe_text(text, facts, dict(facts)) is text


def test_only_changed_fields_are_edited():
    text = real_text(BUILD_PYTORCH / f"{SM90_AVX512}.nix")
    old_pin = "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3"
    imported = {"pname": SM90_AVX512, "nixpkgs_pin": old_pin}
    assert changed_fields(imported, {**imported, "nixpkgs_pin": NEW_PIN}) == {
        "nixpkgs_pin": NEW_PIN
    }
    edited = recipe_text(text, imported, {**imported, "nixpkgs_pin": NEW_PIN})
    assert edited == text.replace(old_pin, NEW_PIN)


def test_a_change_that_has_no_place_in_the_text_names_its_field():
    text = real_text(BUILD_PYTORCH / f"{SM90_AVX512}.nix")
    with pytest.raises(EditError) as error:
        recipe_text(text, {"disabled_features": []}, {"disabled_features": ["nnpack"]})
    assert error.value.field == "disabled_features" and "by hand" in error.value.reason


def test_written_flags_and_targets_name_their_isa_and_architecture():
    assert isa_of_flags(["-mavx2", "-mfma", "-mf16c"], ISAS) == "avx2"
    guarded = ["-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw", "-mfma", "-mno-avx512fp16"]
    assert isa_of_flags(guarded, ISAS) == "avx512"
    assert isa_of_flags(["-msse4.2"], ISAS) == "" and isa_of_flags([], ISAS) == ""
    assert sm_of_targets(["9.0"]) == sm_of_targets(["sm_90"]) == "sm90"
    assert sm_of_targets(["8.9", "9.0"]) == ""


def catalogue_values(**changes) -> CatalogueValues:
    """The values of the real sm90/avx512 recipe as imported, with `changes`."""
    values = {
        "pname": SM90_AVX512,
        "backend": "cuda",
        "cuda_version": "12.8",
        "sm": "sm90",
        "isa": "avx512",
        "platform": "x86_64-linux",
        "metadata_rev": None,
        "disabled_features": (),
        "extra_cmake_flags": (),
        "nixpkgs_pin": "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3",
        "cuda_packages_attr": "cudaPackages_12_8",
        "python_attr": "python312Packages",
        "gpu_targets": ("9.0",),
        "cpu_flags": ISAS[1].flags + ("-mfma",),
        "platforms": ("x86_64-linux", "aarch64-linux"),
        "torch_version_override": "",
        "passthru": {},
    }
    return CatalogueValues(**{**values, **changes})


def test_catalogue_choices_fold_into_the_values_as_written():
    imported = wanted_facts(catalogue_values(), {}, ISAS)
    assert imported["cpu_flags"] == [*ISAS[1].flags, "-mfma"]  # the ISA the flags name: kept
    changed = wanted_facts(
        catalogue_values(isa="avx2", sm="sm89", cuda_version="12.9", platform="aarch64-darwin"),
        {"gpu_arch_num": "90"},
        ISAS,
    )
    assert changed["cpu_flags"] == list(ISAS[0].flags)
    assert changed["gpu_targets"] == ["8.9"] and changed["gpu_arch_num"] == "89"
    assert changed["cuda_packages_attr"] == "cudaPackages_12_9"
    assert changed["platforms"] == ["aarch64-darwin"]
    major_only = catalogue_values(cuda_packages_attr="cudaPackages_13", cuda_version="13.1")
    assert wanted_facts(major_only, {}, ISAS)["cuda_packages_attr"] == "cudaPackages_13"


def test_a_metadata_revision_past_the_first_adds_the_line_to_a_recipe_without_one():
    text = real_text(BUILD_PYTORCH / f"{SM90_AVX512}.nix")
    imported = read_recipe(text)
    assert imported.metadata_rev is None
    facts = {"metadata_rev": None}
    assert recipe_text(text, facts, {"metadata_rev": None}) is text
    bumped = recipe_text(text, facts, {"metadata_rev": 2})
    assert read_recipe(bumped).metadata_rev == 2
    added = [line for line in bumped.splitlines() if line not in text.splitlines()]
    assert any("echo 2 > $out/.metadata-rev" in line for line in added)


# ---------------------------------------------------------------- the real branches


@pytest.fixture
def pytorch_checkout(tmp_path, db):
    root = real_checkout(tmp_path, *PYTORCH_2_8)
    import_tree(root, *PYTORCH_2_8)
    return root


@pytest.mark.django_db
@pytest.mark.parametrize("where", [PYTORCH_2_8, TORCHVISION_12_9])
def test_exporting_a_just_imported_real_branch_changes_nothing(tmp_path, where):
    root = real_checkout(tmp_path, *where)
    import_tree(root, *where)
    out = export(root, *where)
    assert "\n0 created, 0 updated, " in out and ", 0 stale" in out
    assert git(root, "status", "--porcelain") == ""
    export(root, *where, check=True)  # exits 0: raises nothing


@pytest.mark.django_db
def test_a_pin_and_cpu_flags_changed_in_the_catalogue_are_two_one_line_changes(pytorch_checkout):
    branch = {"branch__repository": PYTORCH_2_8[0], "branch__name": PYTORCH_2_8[1]}
    pinned = Variant.objects.get(pname=SM90_AVX512, **branch)
    pinned.nixpkgs_pin = NEW_PIN
    pinned.save()
    cpu = Variant.objects.get(pname=CPU_AVX2, **branch)
    cpu.cpu_flags = ["-mavx2", "-mfma", "-mbmi2"]  # as the admin's JSON field takes it
    cpu.save()
    with pytest.raises(CommandError) as check:
        export(pytorch_checkout, *PYTORCH_2_8, check=True)
    assert check.value.returncode == 1
    export(pytorch_checkout, *PYTORCH_2_8)
    changes = changed_lines(pytorch_checkout)
    assert sorted(changes) == [f".flox/pkgs/{CPU_AVX2}.nix", f".flox/pkgs/{SM90_AVX512}.nix"]
    removed, added = changes[f".flox/pkgs/{SM90_AVX512}.nix"]
    assert len(removed) == len(added) == 1
    assert removed[0].replace("fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3", NEW_PIN) == added[0]
    removed, added = changes[f".flox/pkgs/{CPU_AVX2}.nix"]
    assert len(removed) == len(added) == 1
    assert removed[0].replace('"-mf16c"', '"-mbmi2"') == added[0]
    assert "\n0 created, 0 updated" in export(pytorch_checkout, *PYTORCH_2_8)  # settled


@pytest.mark.django_db
def test_a_cpu_isa_chosen_in_the_catalogue_writes_its_flags(pytorch_checkout):
    name = "pytorch-python312-cuda12_8-sm89-avx512"
    variant = Variant.objects.get(branch__name=PYTORCH_2_8[1], pname=name)
    variant.cpu_isa = CpuIsa.objects.get(slug="avx512vnni")  # the admin's ISA choice
    variant.save()
    export(pytorch_checkout, *PYTORCH_2_8)
    removed, added = changed_lines(pytorch_checkout)[f".flox/pkgs/{name}.nix"]
    assert removed == [] and [line.split("#")[0].strip() for line in added] == ['"-mavx512vnni"']


@pytest.mark.django_db
def test_an_architecture_changed_in_the_catalogue_rewrites_its_targets(pytorch_checkout):
    variant = Variant.objects.get(branch__name=PYTORCH_2_8[1], pname=SM90_AVX512)
    variant.gpu_arch = GpuArchitecture.objects.get(sm="sm89")
    variant.save()
    export(pytorch_checkout, *PYTORCH_2_8)
    removed, added = changed_lines(pytorch_checkout)[f".flox/pkgs/{SM90_AVX512}.nix"]
    assert [line.split("#")[0].strip() for line in added] == [
        'gpuArchNum = "89";',
        'gpuArchSM = "8.9";',
    ]
    assert len(removed) == 2


@pytest.mark.django_db
def test_two_lines_changed_in_an_imported_copy_come_out_as_those_two_lines(
    tmp_path, pytorch_checkout
):
    copy = tmp_path / "copy"
    shutil.copytree(pytorch_checkout, copy, ignore=shutil.ignore_patterns(".git"))
    pinned = copy / ".flox/pkgs" / f"{SM90_AVX512}.nix"
    pinned.write_text(
        pinned.read_text().replace("fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3", NEW_PIN)
    )
    flags = copy / ".flox/pkgs" / f"{CPU_AVX2}.nix"
    flags.write_text(flags.read_text().replace('"-mf16c"', '"-mbmi2"', 1))
    import_tree(copy, *PYTORCH_2_8)
    export(pytorch_checkout, *PYTORCH_2_8)
    changes = changed_lines(pytorch_checkout)
    assert sorted(changes) == [f".flox/pkgs/{CPU_AVX2}.nix", f".flox/pkgs/{SM90_AVX512}.nix"]
    assert all(len(removed) == len(added) == 1 for removed, added in changes.values())
    assert '"-mbmi2"' in changes[f".flox/pkgs/{CPU_AVX2}.nix"][1][0]


@pytest.mark.django_db
def test_a_change_that_cannot_be_made_in_place_writes_nothing_for_that_file(pytorch_checkout):
    variant = Variant.objects.get(branch__name=PYTORCH_2_8[1], pname=CPU_AVX2)
    variant.disabled_features = [*variant.disabled_features, "nnpack"]
    variant.save()
    pinned = Variant.objects.get(branch__name=PYTORCH_2_8[1], pname=SM90_AVX512)
    pinned.nixpkgs_pin = NEW_PIN
    pinned.save()
    errors = StringIO()
    with pytest.raises(CommandError, match="1 recipes were not written") as refused:
        call_command(
            "export-recipes",
            into=str(pytorch_checkout),
            repository=[PYTORCH_2_8[0]],
            branch=[PYTORCH_2_8[1]],
            stdout=StringIO(),
            stderr=errors,
        )
    assert refused.value.returncode == 3
    assert f"{CPU_AVX2}.nix: the catalogue changed disabled_features" in errors.getvalue()
    assert "edit disabled_features in that file by hand" in errors.getvalue()
    assert list(changed_lines(pytorch_checkout)) == [f".flox/pkgs/{SM90_AVX512}.nix"]


# ---------------------------------------------------------------- README and BUILD_MATRIX


@pytest.mark.django_db
def test_a_real_readme_without_markers_is_left_alone_and_the_markers_are_printed(
    pytorch_checkout,
):
    before = (pytorch_checkout / "README.md").read_bytes()
    out = export(pytorch_checkout, *PYTORCH_2_8)
    assert (pytorch_checkout / "README.md").read_bytes() == before
    assert "README.md has no generated-section markers, so it was left alone" in out
    assert "<!-- BEGIN GENERATED: variant-matrix -->\n<!-- END GENERATED: variant-matrix -->" in out
    assert "BUILD_MATRIX.md does not exist, so it was not created" in out
    assert not (pytorch_checkout / "BUILD_MATRIX.md").exists()


@pytest.mark.django_db
def test_added_markers_get_their_section_and_a_second_export_is_a_no_op(pytorch_checkout):
    readme = pytorch_checkout / "README.md"
    prose = readme.read_text()
    head, _, tail = prose.partition("\n## ")
    markers = "<!-- BEGIN GENERATED: variant-matrix -->\n<!-- END GENERATED: variant-matrix -->\n"
    readme.write_text(f"{head}\n{markers}\n## {tail}")
    export(pytorch_checkout, *PYTORCH_2_8)
    text = readme.read_text()
    count = Variant.objects.filter(branch__name=PYTORCH_2_8[1], library="pytorch").count()
    intro = f"\n<!-- BEGIN GENERATED: variant-matrix -->\n{count} PyTorch variants on this branch."
    assert text.startswith(head + intro)
    assert text.endswith("<!-- END GENERATED: variant-matrix -->\n\n## " + tail)
    assert f"`{SM90_AVX512}`" in text and "BEGIN GENERATED: companions" not in text
    assert "\n0 created, 0 updated" in export(pytorch_checkout, *PYTORCH_2_8)
    assert readme.read_text() == text


# ---------------------------------------------------------------- files no variant claims


@pytest.mark.django_db
def test_prune_removes_only_a_deleted_variants_unchanged_file(pytorch_checkout):
    pkgs = pytorch_checkout / ".flox/pkgs"
    own = pkgs / "pytorch-python312-maintainers-own.nix"
    own.write_text(real_text(BUILD_PYTORCH / f"{CPU_AVX2}.nix"))
    Variant.objects.get(branch__name=PYTORCH_2_8[1], pname=CPU_AVX2).delete()
    edited = "pytorch-python312-cpu-avx512"
    Variant.objects.get(branch__name=PYTORCH_2_8[1], pname=edited).delete()
    (pkgs / f"{edited}.nix").write_text((pkgs / f"{edited}.nix").read_text() + "# kept\n")
    out = export(pytorch_checkout, *PYTORCH_2_8)
    assert "3 stale" in out and (pkgs / f"{CPU_AVX2}.nix").exists()
    out = export(pytorch_checkout, *PYTORCH_2_8, prune=True)
    assert f"pruned: {pkgs / f'{CPU_AVX2}.nix'}" in out and "2 stale, 1 pruned" in out
    assert not (pkgs / f"{CPU_AVX2}.nix").exists()
    assert own.exists() and (pkgs / f"{edited}.nix").read_text().endswith("# kept\n")


# ---------------------------------------------------------------- through the admin


@pytest.mark.django_db
def test_a_pin_changed_in_the_admin_is_exported_as_one_line(pytorch_checkout, admin_client):
    variant = Variant.objects.get(branch__name=PYTORCH_2_8[1], pname=SM90_AVX512)
    url = reverse("admin:catalog_variant_change", args=[variant.pk])
    page = admin_client.get(url)
    form = page.context["adminform"].form
    values = {name: form[name].value() for name in form.fields}  # as the page's inputs hold them
    data = {name: "" if value is None else value for name, value in values.items()}
    for formset in page.context["inline_admin_formsets"]:
        management = formset.formset.management_form
        data |= {management.add_prefix(k): v for k, v in management.initial.items()}
    data["nixpkgs_pin"] = NEW_PIN
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    export(pytorch_checkout, *PYTORCH_2_8)
    changes = changed_lines(pytorch_checkout)
    assert list(changes) == [f".flox/pkgs/{SM90_AVX512}.nix"]
    removed, added = changes[f".flox/pkgs/{SM90_AVX512}.nix"]
    assert len(removed) == len(added) == 1 and NEW_PIN in added[0]


@pytest.mark.django_db
def test_pages_show_what_export_writes_for_a_changed_imported_recipe(pytorch_checkout, client):
    """The variant page and compare show an imported recipe with the catalogue's change edited
    in, the same text export writes."""
    branch = {"branch__repository": PYTORCH_2_8[0], "branch__name": PYTORCH_2_8[1]}
    variant = Variant.objects.get(pname=SM90_AVX512, **branch)
    variant.nixpkgs_pin = NEW_PIN
    variant.save()
    page = client.get(variant.get_absolute_url()).content.decode()
    assert NEW_PIN in page and "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3" not in page
    other = Variant.objects.get(pname=CPU_AVX2, **branch)
    ids = [f"{PYTORCH_2_8[0]}/{PYTORCH_2_8[1]}/{v.pname}" for v in (variant, other)]
    compare = client.get(reverse("catalog:compare"), {"v": ids}).content.decode()
    assert NEW_PIN in compare
