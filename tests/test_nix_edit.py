"""catalog.recipes.nix.edit: fields change in place, every other byte is kept.

Checked on the form fixtures and on the real recipes (../shared/real-recipes, skipped with
a reason when absent): no-op identity, one-line diffs for a pin and a CPU flag, insertions
in the recipe's own style, refusals with a sentence, escaping, and every field's round trip
through read_recipe.
"""

import difflib
import shutil
import subprocess
from pathlib import Path

import pytest

from catalog.recipes.nix.edit import EDITORS, edit_recipe
from catalog.recipes.nix.errors import EditError, RecipeError
from catalog.recipes.nix.read import read_recipe

from .nix_data import BUILD_PYTORCH, FORMS, REAL, fixture_text, real_paths, real_text

NIX = shutil.which("nix-instantiate")
NEW_PIN = "0123456789abcdef0123456789abcdef01234567"


def diff(before: str, after: str) -> tuple[list[str], list[str]]:
    """(removed lines, added lines)."""
    old, new = before.splitlines(), after.splitlines()
    removed, added = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
        None, old, new, autojunk=False
    ).get_opcodes():
        if tag != "equal":
            removed += old[i1:i2]
            added += new[j1:j2]
    return removed, added


def current_values(text: str) -> dict:
    facts = read_recipe(text)
    return {name: getattr(facts, name) for name in EDITORS}


def parses(text: str) -> bool:
    result = subprocess.run([NIX, "--parse", "-"], input=text, capture_output=True, text=True)
    return result.returncode == 0


# ---------------------------------------------------------------- identity


def test_no_changes_return_the_text_itself():
    for path in sorted(FORMS.glob("*.nix")):
        text = path.read_text()
        assert edit_recipe(text, {}) is text


def test_every_real_recipe_is_unchanged_by_no_changes_and_by_its_own_values():
    for path in real_paths():
        text = path.read_text(encoding="utf-8")
        assert edit_recipe(text, {}) == text, path
        assert edit_recipe(text, current_values(text)) == text, path


def test_fixtures_are_unchanged_by_their_own_values():
    for path in sorted(FORMS.glob("*.nix")):
        text = path.read_text()
        assert edit_recipe(text, current_values(text)) == text, path.name


# ---------------------------------------------------------------- one-line diffs


def test_a_pin_change_rewrites_only_the_hex_in_every_pinned_real_recipe():
    edited = 0
    for path in real_paths():
        text = path.read_text(encoding="utf-8")
        old = read_recipe(text).nixpkgs_pin
        if not old:
            continue
        result = edit_recipe(text, {"nixpkgs_pin": NEW_PIN})
        removed, added = diff(text, result)
        assert len(removed) == len(added) == 1, path
        assert added[0] == removed[0].replace(old, NEW_PIN), path
        assert read_recipe(result).nixpkgs_pin == NEW_PIN
        edited += 1
    assert edited >= 120


def test_a_cpu_flag_change_rewrites_only_that_elements_line_in_every_real_recipe():
    edited = 0
    for path in real_paths():
        text = path.read_text(encoding="utf-8")
        flags = read_recipe(text).cpu_flags
        if len(flags) < 2:
            continue
        wanted = [*flags[:1], "-mchanged", *flags[2:]]
        result = edit_recipe(text, {"cpu_flags": wanted})
        removed, added = diff(text, result)
        assert len(removed) == len(added) == 1, path
        assert f'"{flags[1]}"' in removed[0] and '"-mchanged"' in added[0]
        assert read_recipe(result).cpu_flags == wanted
        edited += 1
    assert edited >= 80


def test_a_commented_element_keeps_its_comment_and_column():
    text = real_text(BUILD_PYTORCH / "pytorch-python312-cuda12_8-sm90-avx512.nix")
    flags = read_recipe(text).cpu_flags
    result = edit_recipe(
        text, {"cpu_flags": [f if f != "-mavx512bw" else "-mavx512bw2" for f in flags]}
    )
    removed, added = diff(text, result)
    assert removed == ['    "-mavx512bw"   # Byte and Word instructions']
    assert added == ['    "-mavx512bw2"  # Byte and Word instructions']


def test_an_added_flag_gets_its_own_line_and_a_removed_one_takes_its_line():
    text = real_text(BUILD_PYTORCH / "pytorch-python312-cuda12_8-sm90-avx512.nix")
    flags = read_recipe(text).cpu_flags
    added_text = edit_recipe(text, {"cpu_flags": [*flags[:2], "-mnew", *flags[2:]]})
    assert diff(text, added_text) == ([], ['    "-mnew"'])
    removed_text = edit_recipe(text, {"cpu_flags": [f for f in flags if f != "-mavx512dq"]})
    assert diff(text, removed_text) == (
        ['    "-mavx512dq"   # Doubleword and Quadword instructions'],
        [],
    )
    emptied = edit_recipe(text, {"cpu_flags": []})
    assert read_recipe(emptied).cpu_flags == []
    refilled = edit_recipe(emptied, {"cpu_flags": ["-ma", "-mb"]})
    assert read_recipe(refilled).cpu_flags == ["-ma", "-mb"]
    assert '\n    "-ma"\n    "-mb"\n  ];' in refilled


def test_one_line_lists_stay_on_one_line():
    text = fixture_text("pytorch-pinned-cpu.nix")
    result = edit_recipe(text, {"cpu_flags": ["-mavx2", "-mf16c", "-mbmi2"]})
    assert diff(text, result) == (
        ['  cpuFlags = [ "-mavx2" "-mfma" "-mf16c" ];'],
        ['  cpuFlags = [ "-mavx2" "-mf16c" "-mbmi2" ];'],
    )
    result = edit_recipe(text, {"platforms": ["aarch64-linux"]})
    assert diff(text, result)[1] == ['    platforms = [ "aarch64-linux" ];']
    result = edit_recipe(text, {"platforms": []})
    assert diff(text, result)[1] == ["    platforms = [ ];"]


def test_several_changes_at_once_each_on_its_line():
    text = fixture_text("pytorch-pinned-cuda.nix")
    changes = {
        "nixpkgs_pin": NEW_PIN,
        "cuda_packages_attr": "cudaPackages_12_9",
        "gpu_targets": ["6.0"],
        "gpu_arch_num": "60",
        "pname": "pytorch-python313-cuda12_9-sm60-avx",
        "metadata_rev": 5,
        "platforms": ["x86_64-linux", "aarch64-linux"],
        "passthru": {"blasProvider": "cublas", "cpuISA": "avx2"},
    }
    result = edit_recipe(text, changes)
    removed, added = diff(text, result)
    assert len(removed) == len(added) == len(changes)
    facts = read_recipe(result)
    for name, value in changes.items():
        assert getattr(facts, name) == value, name
    assert facts.cpu_flags == read_recipe(text).cpu_flags


def test_targets_shared_through_a_binding_change_the_binding_once():
    text = fixture_text("companion-inline.nix")
    result = edit_recipe(text, {"gpu_targets": ["9.0"]})
    assert diff(text, result) == (['  gpuArchSM = "sm_90";'], ['  gpuArchSM = "9.0";'])
    sibling = real_text(BUILD_PYTORCH / "torchvision-python312-cuda12_8-sm61-avx.nix")
    result = edit_recipe(sibling, {"gpu_targets": ["6.0"]})
    assert diff(sibling, result) == (['  gpuArchSM = "6.1";'], ['  gpuArchSM = "6.0";'])


def test_targets_written_in_the_build_script_are_rewritten_there():
    text = fixture_text("companion-own-torch.nix")
    result = edit_recipe(text, {"gpu_targets": ["8.9", "9.0", "10.0"]})
    assert diff(text, result) == (
        ['      export TORCH_CUDA_ARCH_LIST="8.6;9.0"'],
        ['      export TORCH_CUDA_ARCH_LIST="8.9;9.0;10.0"'],
    )
    with pytest.raises(EditError, match="cannot go in TORCH_CUDA_ARCH_LIST"):
        edit_recipe(text, {"gpu_targets": ['9.0" rm -rf /']})


def test_python_set_is_renamed_everywhere_it_is_chosen():
    text = real_text(
        REAL
        / "examples"
        / "build-pytorch--pytorch-2.10-python313--pytorch-python313-cpu-armv8_2.nix"
    )
    result = edit_recipe(text, {"python_attr": "python312Packages"})
    removed, added = diff(text, result)
    # the overlay that swaps the torch source, and the derivation itself
    assert len(removed) == len(added) == 2
    assert all("python312Packages" in line and "python3Packages" not in line for line in added)
    text = fixture_text("companion-callpackage.nix")
    result = edit_recipe(text, {"python_attr": "python312Packages"})
    assert "python3Packages" not in result  # the formal argument and both uses
    assert read_recipe(result).python_attr == "python312Packages"


# ---------------------------------------------------------------- insertions


def test_a_missing_metadata_rev_is_inserted_before_meta_in_the_recipes_style():
    text = real_text(BUILD_PYTORCH / "torchvision-python312-cuda12_8-sm61-avx.nix")
    result = edit_recipe(text, {"metadata_rev": 2})
    assert diff(text, result) == (
        [],
        [
            "    postInstall = (oldAttrs.postInstall or \"\") + ''",
            "      echo 2 > $out/.metadata-rev",
            "    '';",
            "",
        ],
    )
    assert "    '';\n\n    postInstall" in result and "    '';\n\n    meta = " in result
    assert read_recipe(result).metadata_rev == 2


def test_a_metadata_rev_line_is_added_to_an_existing_post_install():
    text = fixture_text("pytorch-pinned-cpu.nix").replace(
        "  meta = ",
        "  postInstall = (oldAttrs.postInstall or \"\") + ''\n    touch $out/x\n  '';\n  meta = ",
    )
    result = edit_recipe(text, {"metadata_rev": 7})
    assert diff(text, result) == ([], ["    echo 7 > $out/.metadata-rev"])
    assert read_recipe(result).metadata_rev == 7


def test_passthru_fields_are_changed_added_and_removed_one_line_each():
    text = fixture_text("pytorch-pinned-cuda.nix")
    result = edit_recipe(text, {"passthru": {"blasProvider": "cublas", "note": None}})
    assert diff(text, result) == (['      cpuISA = "avx";'], ["      note = null;"])
    assert read_recipe(result).passthru == {"blasProvider": "cublas", "note": None}
    result = edit_recipe(text, {"passthru.cpuISA": "avx2"})
    assert diff(text, result) == (['      cpuISA = "avx";'], ['      cpuISA = "avx2";'])
    with pytest.raises(EditError, match="written as an expression"):
        edit_recipe(text, {"passthru.gpuArch": "9.0"})  # gpuArch = gpuArchSM


def test_a_passthru_block_is_inserted_where_there_is_none():
    text = fixture_text("companion-inline.nix")
    result = edit_recipe(text, {"passthru": {"cpuISA": "avx512"}})
    assert (
        '    passthru = (oldAttrs.passthru or { }) // {\n      cpuISA = "avx512";\n    };\n'
        in result
    )
    assert read_recipe(result).passthru == {"cpuISA": "avx512"}


def test_meta_entries_are_inserted_into_an_existing_meta():
    text = fixture_text("companion-own-torch.nix")  # meta on one line, without platforms
    result = edit_recipe(text, {"platforms": ["x86_64-linux"]})
    assert diff(text, result)[1] == [
        '    meta = old.meta // { description = "TorchVision for SM86 and SM90"; '
        'platforms = [ "x86_64-linux" ]; };'
    ]
    text = fixture_text("pytorch-pinned-cpu.nix").replace(
        '    description = "PyTorch CPU-only optimized for AVX2";\n', ""
    )
    result = edit_recipe(text, {"description": "Added"})
    assert diff(text, result) == ([], ['    description = "Added";'])
    assert result.index("description") < result.index("platforms")


def test_added_cmake_flags_are_inserted_and_then_edited_as_a_list():
    text = real_text(BUILD_PYTORCH / "pytorch-python312-cuda12_8-sm90-avx512.nix")
    result = edit_recipe(text, {"extra_cmake_flags": ["-DUSE_FOO=OFF"]})
    assert diff(text, result) == (
        [],
        ['    cmakeFlags = (oldAttrs.cmakeFlags or []) ++ [ "-DUSE_FOO=OFF" ];', ""],
    )
    again = edit_recipe(result, {"extra_cmake_flags": ["-DUSE_FOO=ON", "-DUSE_BAR=OFF"]})
    assert read_recipe(again).extra_cmake_flags == ["-DUSE_FOO=ON", "-DUSE_BAR=OFF"]


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    "name, changes, reason",
    [
        ("bare.nix", {"platforms": ["x86_64-linux"]}, "has no meta.platforms; edit it by hand"),
        ("bare.nix", {"description": "x"}, "has no meta attribute set"),
        ("bare.nix", {"metadata_rev": 1}, "takes no old attributes"),
        ("bare.nix", {"cpu_flags": ["-mavx"]}, "has no `cpuFlags"),
        ("bare.nix", {"gpu_targets": ["9.0"]}, "names no GPU targets"),
        ("bare.nix", {"torch_version_override": "2.10.0"}, "no torch source override"),
        ("pytorch-callpackage.nix", {"nixpkgs_pin": NEW_PIN}, "imports no pinned nixpkgs"),
        ("pytorch-pinned-cpu.nix", {"cuda_packages_attr": "cudaPackages_12_8"}, "no `cudaPackages"),
        ("pytorch-pinned-cpu.nix", {"gpu_arch_num": "90"}, "sets no gpuArchNum"),
        ("companion-inline.nix", {"gpu_targets": ["9.0", "10.0"]}, "come from gpuArchSM"),
        ("companion-inline.nix", {"metadata_rev": None}, "cannot be removed in place"),
        ("companion-inline.nix", {"torch_version_override": ""}, "cannot be emptied"),
        ("pytorch-pinned-cuda.nix", {"version": "1"}, "not a field recipes can be edited in"),
        ("pytorch-pinned-cuda.nix", {"disabled_features": []}, "read from the recipe's structure"),
        ("pytorch-pinned-cuda.nix", {"cpu_flags": "-mavx"}, "must be a list of text"),
        ("pytorch-pinned-cuda.nix", {"metadata_rev": True}, "whole number"),
        ("pytorch-pinned-cuda.nix", {"metadata_rev": -1}, "whole number"),
        ("pytorch-pinned-cuda.nix", {"nixpkgs_pin": "main"}, "not a valid nixpkgs_pin"),
        ("pytorch-pinned-cuda.nix", {"cuda_packages_attr": "cuda 12"}, "not a valid"),
        ("pytorch-pinned-cuda.nix", {"python_attr": "python3"}, "not a valid"),
        ("pytorch-pinned-cuda.nix", {"pname": ""}, "cannot be emptied"),
        ("pytorch-pinned-cuda.nix", {"passthru": {"bad key": "x"}}, "not a Nix attribute name"),
        ("pytorch-pinned-cuda.nix", {"passthru": {"cpuISA": 1}}, "must be text"),
        (
            "pytorch-pinned-cuda.nix",
            {"passthru": {"cpuISA": "a"}, "passthru.cpuISA": "b"},
            "change the same text",
        ),
    ],
)
def test_changes_that_have_no_place_are_refused_with_a_sentence(name, changes, reason):
    text = fixture_text(name)
    with pytest.raises(EditError) as refused:
        edit_recipe(text, changes)
    assert reason in refused.value.reason
    assert refused.value.field in {
        *changes,
        *(f"passthru.{k}" for k in changes.get("passthru", {})),
    }


def test_an_unreadable_text_is_a_recipe_error_not_an_edit():
    with pytest.raises(RecipeError):
        edit_recipe("{ a = ", {"pname": "x"})


# ---------------------------------------------------------------- escaping


@pytest.mark.parametrize(
    "value",
    ['with "quotes"', "back\\slash", "dollar ${not.interpolated}", "$ and ''", "line\nbreak"],
)
def test_values_are_escaped_for_nix(value):
    text = fixture_text("pytorch-pinned-cuda.nix")
    result = edit_recipe(text, {"description": value, "pname": value, "passthru.cpuISA": value})
    facts = read_recipe(result)
    assert (facts.description, facts.pname, facts.passthru["cpuISA"]) == (value, value, value)
    if NIX:
        assert parses(result)


def test_list_elements_are_escaped_too():
    text = fixture_text("pytorch-pinned-cuda.nix")
    flags = ['-DX="${y}"', "-a\\b"]
    result = edit_recipe(text, {"cpu_flags": flags, "platforms": ['x"']})
    assert read_recipe(result).cpu_flags == flags
    assert read_recipe(result).platforms == ['x"']


# ---------------------------------------------------------------- every field round-trips


def new_value(name: str, current):
    """A different value of the field's type."""
    candidates = {
        "passthru": lambda: {**current, "added": "yes"},
        "pname": lambda: f"{current}-new",
        "nixpkgs_pin": lambda: NEW_PIN,
        "cuda_packages_attr": lambda: (
            "cudaPackages_13" if current == "cudaPackages_12_4" else "cudaPackages_12_4"
        ),
        "python_attr": lambda: "python311Packages",
        "gpu_targets": lambda: ["8.0" if current[:1] == ["8.9"] else "8.9"] * (len(current) or 1),
        "gpu_arch_num": lambda: "80" if current == "89" else "89",
        "cpu_flags": lambda: [*current[:-1], "-mchanged"],
        "platforms": lambda: (
            ["x86_64-linux"] if current == ["aarch64-linux"] else ["aarch64-linux"]
        ),
        "torch_version_override": lambda: "2.11.0",
        "metadata_rev": lambda: (current or 0) + 1,
        "description": lambda: 'New "text" ${x}',
        "extra_cmake_flags": lambda: [*current, "-DNEW=ON"],
    }
    return candidates[name]()


def round_trip_files() -> list[str]:
    files = sorted(FORMS.glob("*.nix"))
    if REAL.is_dir():
        every = sorted(REAL.rglob("*.nix"))
        files += [p for p in every if "examples" in p.parts] + every[::12]
    return [str(p) for p in files]


@pytest.mark.parametrize("path", round_trip_files())
def test_every_field_with_a_place_round_trips_through_read(path):
    text = Path(path).read_text(encoding="utf-8")
    facts = read_recipe(text)
    for name in EDITORS:
        wanted = new_value(name, getattr(facts, name))
        try:
            result = edit_recipe(text, {name: wanted})
        except EditError as refused:
            # Only a field with no value in the recipe may be refused (none to change in place).
            assert name not in facts.spans, refused
            continue
        assert getattr(read_recipe(result), name) == wanted, name
        if name in facts.spans and name not in ("python_attr", "passthru"):
            removed, added = diff(text, result)
            # one line changed; an element appended to a list of one per line is one line added
            assert (len(removed), len(added)) in ((1, 1), (0, 1)), (name, removed, added)
