"""import-recipes on the catalogue's own export: the whole-catalogue round trip, re-import,
changed fields, files that are not recipes, and inconsistencies imported as findings."""

import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from catalog.models import Branch, Variant
from catalog.recipes.exporting import sync
from catalog.recipes.importing import store

pytestmark = pytest.mark.django_db


def export_all(root: Path) -> dict[str, bytes]:
    targets = [(root / b.repository / b.name, b) for b in sync.select_branches()]
    sync.export_recipes(targets)
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def import_(path, repository, branch, **kwargs):
    out = StringIO()
    call_command(
        "import-recipes",
        str(path),
        repository=repository,
        branch=branch,
        stdout=out,
        stderr=StringIO(),
        **kwargs,
    )
    return out.getvalue()


def main_count():
    return Variant.objects.filter(branch__repository="build-pytorch", branch__name="main").count()


def test_round_trip_into_an_empty_catalogue_gives_identical_bytes(tmp_path):
    first = export_all(tmp_path / "a")
    totals = (Variant.objects.count(), Branch.objects.count())
    order = [(b.repository, b.name) for b in Branch.objects.order_by("repository", "preference")]
    # Empty the catalogue's branches and variants (companions and dependants first: PROTECT).
    Variant.objects.exclude(depends_on=None).delete()
    Variant.objects.all().delete()
    Branch.objects.exclude(pytorch_branch=None).delete()
    Branch.objects.all().delete()
    assert Variant.objects.count() == 0
    # build-pytorch first: build-torchvision variants build against its PyTorch.
    for repository, name in order:
        out = import_(tmp_path / "a" / repository / name, repository, name)
        assert "branch created" in out and "0 removed" in out
        assert "inferred for the new branch: branch facts from BUILD_MATRIX.md" in out
    assert (Variant.objects.count(), Branch.objects.count()) == totals
    assert set(Variant.objects.values_list("origin", flat=True)) == {"imported"}
    second = export_all(tmp_path / "b")
    assert sorted(first) == sorted(second)
    differing = [name for name in first if first[name] != second[name]]
    assert differing == []


def test_reimport_of_an_unchanged_checkout_changes_nothing(tmp_path):
    export_all(tmp_path)
    n = main_count()
    first = import_(tmp_path / "build-pytorch/main", "build-pytorch", "main")
    # The seeded variants become imported ones: same rows, now with their recipe text.
    assert f"0 created, {n} updated, 0 unchanged, 0 removed" in first
    out = import_(tmp_path / "build-pytorch/main", "build-pytorch", "main", verbosity=2)
    assert f"branch unchanged; recipes: 0 created, 0 updated, {n} unchanged, 0 removed" in out


def test_changed_fields_are_imported_and_dry_run_saves_nothing(tmp_path):
    export_all(tmp_path)
    import_(tmp_path / "build-pytorch/main", "build-pytorch", "main")
    recipe = tmp_path / "build-pytorch/main/.flox/pkgs/pytorch-python313-cuda12_8-sm90-avx2.nix"
    recipe.write_text(
        recipe.read_text().replace("echo 1 > $out/.metadata-rev", "echo 3 > $out/.metadata-rev")
    )
    out = import_(tmp_path / "build-pytorch/main", "build-pytorch", "main", dry_run=True)
    assert "updated: .flox/pkgs/pytorch-python313-cuda12_8-sm90-avx2.nix" in out
    assert "nothing saved" in out and "1 updated" in out
    v = Variant.objects.get(
        branch__name="main",
        branch__repository="build-pytorch",
        pname="pytorch-python313-cuda12_8-sm90-avx2",
    )
    assert v.metadata_rev == 1
    import_(tmp_path / "build-pytorch/main", "build-pytorch", "main")
    v.refresh_from_db()
    assert v.metadata_rev == 3 and "echo 3 > $out/.metadata-rev" in v.recipe_text


def test_unparseable_file_aborts_everything_with_file_and_line(tmp_path):
    export_all(tmp_path)
    pkgs = tmp_path / "build-pytorch/main/.flox/pkgs"
    good = pkgs / "pytorch-python313-cpu-avx2.nix"
    good.write_text(good.read_text().replace("echo 1 > $out", "echo 7 > $out"))
    broken = pkgs / "pytorch-python313-cuda12_8-sm90-avx512.nix"
    lines = broken.read_text().splitlines(keepends=True)
    lines[20] = lines[20].replace("[", "", 1) if "[" in lines[20] else "  oops = [\n"
    broken.write_text("".join(lines))
    err = StringIO()
    with pytest.raises(CommandError) as exc:
        call_command(
            "import-recipes",
            str(tmp_path / "build-pytorch/main"),
            repository="build-pytorch",
            branch="main",
            stdout=StringIO(),
            stderr=err,
        )
    assert exc.value.returncode == 2
    message = str(exc.value)
    assert f"1 of {main_count()} files" in message and "nothing was imported" in message
    assert ".flox/pkgs/pytorch-python313-cuda12_8-sm90-avx512.nix:" in err.getvalue()
    assert (
        Variant.objects.get(
            branch__name="main",
            branch__repository="build-pytorch",
            pname="pytorch-python313-cpu-avx2",
        ).metadata_rev
        == 1
    )


def test_recipe_that_contradicts_its_name_is_imported_as_written_and_linted(tmp_path):
    export_all(tmp_path)
    pkgs = tmp_path / "build-pytorch/main/.flox/pkgs"
    target = pkgs / "pytorch-python313-cuda12_8-sm89-avx512.nix"
    target.write_text(
        target.read_text()
        .replace('gpuArchNum = "89"', 'gpuArchNum = "90"')
        .replace('"8.9"', '"9.0"')
    )
    import_(tmp_path / "build-pytorch/main", "build-pytorch", "main")
    v = Variant.objects.get(
        branch__repository="build-pytorch",
        branch__name="main",
        pname="pytorch-python313-cuda12_8-sm89-avx512",
    )
    assert v.gpu_arch.sm == "sm90" and v.gpu_targets == ["9.0"]
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("audit-catalogue", gate=["imported"], stdout=out)
    assert (
        "[name-parts] pytorch-python313-cuda12_8-sm89-avx512: The name says GPU architecture "
        "sm89 but the recipe builds sm90." in out.getvalue()
    )


def test_flags_that_match_no_isa_are_a_finding_not_a_refusal(tmp_path):
    export_all(tmp_path)
    target = tmp_path / "build-pytorch/main/.flox/pkgs/pytorch-python313-cpu-avx2.nix"
    target.write_text(target.read_text().replace('"-mf16c"', '"-mavx512f"'))
    report = store.import_checkout(tmp_path / "build-pytorch/main", "build-pytorch", "main")
    assert report.findings == [
        (
            ".flox/pkgs/pytorch-python313-cpu-avx2.nix",
            "cpuFlags -mavx2 -mfma -mavx512f match no catalogued ISA; avx2 is taken from the name.",
        )
    ]
    v = Variant.objects.get(branch__name="main", pname="pytorch-python313-cpu-avx2")
    assert v.cpu_isa.slug == "avx2" and v.cpu_flags == ["-mavx2", "-mfma", "-mavx512f"]


def test_missing_pkgs_directory_is_one_sentence(tmp_path):
    with pytest.raises(CommandError, match=r"has no \.flox/pkgs directory"):
        import_(tmp_path, "build-pytorch", "main")


def test_new_branch_without_facts_is_created_from_the_recipes(tmp_path):
    export_all(tmp_path)
    tree = tmp_path / "build-pytorch/main"
    (tree / "BUILD_MATRIX.md").unlink()
    shutil.move(str(tree), str(tmp_path / "copy"))
    out = import_(tmp_path / "copy", "build-pytorch", "experimental")
    assert "inferred for the new branch: PyTorch unknown (set it in the admin), Python 3.13" in out
    branch = Branch.objects.get(repository="build-pytorch", name="experimental")
    assert branch.python_version == "3.13" and branch.is_imported
    assert branch.cuda_versions == ["12.8"]
    assert branch.variants.count() == main_count()
