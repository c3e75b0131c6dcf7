"""Recipe edits at their edges: a change that repeats the recipe's value leaves the others to be
made, flags added anywhere land there, and a list too long to match is written anew."""

from __future__ import annotations

import pytest

from catalog.recipes.nix.edit import edit_recipe
from catalog.recipes.nix.errors import EditError
from catalog.recipes.nix.read import read_recipe

from .nix_data import fixture_text


def test_an_unchanged_field_first_does_not_stop_the_changes_after_it():
    text = fixture_text("pytorch-pinned-cuda.nix")
    facts = read_recipe(text)
    edited = edit_recipe(text, {"pname": facts.pname, "description": "Changed in place"})
    after = read_recipe(edited)
    assert (after.pname, after.description) == (facts.pname, "Changed in place")


def test_flags_added_at_each_place_land_there_on_their_own_line():
    text = fixture_text("pytorch-pinned-cuda.nix")
    flags = read_recipe(text).cpu_flags
    for at in range(len(flags) + 1):
        new = [*flags[:at], "-mnew", *flags[at:]]
        edited = edit_recipe(text, {"cpu_flags": new})
        assert read_recipe(edited).cpu_flags == new
        assert '\n    "-mnew"\n' in edited
    first_two = edit_recipe(text, {"cpu_flags": ["-ma", "-mb", *flags]})
    assert '\n  cpuFlags = [\n    "-ma"\n    "-mb"\n    "-mavx"' in first_two


def test_a_list_too_long_to_match_is_written_anew_one_element_a_line():
    text = fixture_text("pytorch-pinned-cuda.nix")
    new = [f"-mflag{i}" for i in range(401)]
    edited = edit_recipe(text, {"cpu_flags": new})
    assert read_recipe(edited).cpu_flags == new
    assert '\n    "-mflag0"\n    "-mflag1"\n' in edited and '"-mflag400"\n  ];' in edited


def test_targets_in_a_build_script_cannot_be_emptied():
    text = fixture_text("companion-own-torch.nix")
    with pytest.raises(EditError, match="'an empty list' cannot go in TORCH_CUDA_ARCH_LIST"):
        edit_recipe(text, {"gpu_targets": []})


def test_a_replaced_flag_with_one_added_after_it_keeps_the_order():
    text = fixture_text("pytorch-pinned-cuda.nix")
    flags = read_recipe(text).cpu_flags
    new = [flags[0], "-mX", "-mY", *flags[2:]]
    assert read_recipe(edit_recipe(text, {"cpu_flags": new})).cpu_flags == new


def test_a_longer_flag_keeps_its_comment_in_its_column():
    text = fixture_text("pytorch-pinned-cuda.nix")
    assert '\n    "-mavx"        # AVX\n' in text
    flags = read_recipe(text).cpu_flags
    edited = edit_recipe(text, {"cpu_flags": ["-mavx512f", *flags[1:]]})
    assert '\n    "-mavx512f"    # AVX\n' in edited


def test_passthru_must_be_a_mapping():
    text = fixture_text("pytorch-pinned-cuda.nix")
    with pytest.raises(EditError, match="passthru must be a mapping of field names to text"):
        edit_recipe(text, {"passthru": ["cpuISA"]})


def test_a_binding_removed_from_a_one_line_set_takes_its_leading_space():
    multi_line = (
        "{\n"
        + "".join(
            f"      {b}\n"
            for b in ("gpuArch = gpuArchSM;", 'blasProvider = "cublas";', 'cpuISA = "avx";')
        )
        + "    };"
    )
    text = fixture_text("pytorch-pinned-cuda.nix")
    assert multi_line in text
    one_line = text.replace(
        multi_line, '{ gpuArch = gpuArchSM; blasProvider = "cublas"; cpuISA = "avx"; };'
    )
    edited = edit_recipe(one_line, {"passthru": {"cpuISA": "avx"}})
    assert '// { gpuArch = gpuArchSM; cpuISA = "avx"; };\n' in edited


FLAGS = """cpuFlags = [
    "-mavx"        # AVX
    "-mno-fma"     # no FMA3
    "-mno-avx2"    # no AVX2
  ];"""
PASSTHRU = """    passthru = oldAttrs.passthru // {
      gpuArch = gpuArchSM;
      blasProvider = "cublas";
      cpuISA = "avx";
    };"""


def pinned_with(old: str, new: str) -> str:
    text = fixture_text("pytorch-pinned-cuda.nix")
    assert old in text
    return text.replace(old, new)


def test_a_pin_written_with_escapes_is_refused_not_rewritten():
    text = pinned_with("github.com/NixOS", "github.com/Nix\\OS")
    assert read_recipe(text).nixpkgs_pin  # read through the escape …
    with pytest.raises(EditError, match="written with escapes; edit it by hand"):
        edit_recipe(text, {"nixpkgs_pin": "a" * 40})  # … but not spliced into


def test_a_one_line_list_emptied_is_written_as_an_empty_list():
    text = pinned_with(FLAGS, 'cpuFlags = [ "-mavx" "-mno-fma" ];')
    edited = edit_recipe(text, {"cpu_flags": []})
    assert "\n  cpuFlags = [ ];\n" in edited
    assert read_recipe(edited).cpu_flags == []


def test_an_empty_laid_out_list_gets_its_elements_one_a_line_indented_past_its_line():
    text = pinned_with(FLAGS, "cpuFlags = [\n  ];")
    edited = edit_recipe(text, {"cpu_flags": ["-mavx"]})
    assert '\n  cpuFlags = [\n    "-mavx"\n  ];\n' in edited
    many = [f"-m{i}" for i in range(401)]  # past MAX_MATCHED_ELEMENTS: written anew
    edited = edit_recipe(text, {"cpu_flags": many})
    assert '\n  cpuFlags = [\n    "-m0"\n    "-m1"\n' in edited and '\n    "-m400"\n  ];' in edited
    assert read_recipe(edited).cpu_flags == many


def test_a_binding_added_to_an_empty_laid_out_set_is_indented_past_its_brace():
    text = pinned_with(PASSTHRU, "    passthru = oldAttrs.passthru // {\n    };")
    edited = edit_recipe(text, {"passthru": {"cpuISA": "avx"}})
    assert '\n    passthru = oldAttrs.passthru // {\n      cpuISA = "avx";\n    };\n' in edited


def test_a_binding_added_takes_the_indentation_of_bindings_that_start_their_line():
    laid_out = '    passthru = oldAttrs.passthru // { blasProvider = "cublas";\n'
    laid_out += '        cpuISA = "avx";\n    };'
    text = pinned_with(PASSTHRU, laid_out)
    wanted = {"blasProvider": "cublas", "cpuISA": "avx", "extra": "x"}
    edited = edit_recipe(text, {"passthru": wanted})
    assert '\n        cpuISA = "avx";\n        extra = "x";\n    };\n' in edited
    assert read_recipe(edited).passthru == wanted


def test_added_cmake_flags_are_set_off_by_blank_lines_only_where_the_recipe_does_so():
    compact = fixture_text("pytorch-pinned-mps.nix")
    added = '  cmakeFlags = (oldAttrs.cmakeFlags or []) ++ [ "-DUSE_X=OFF" ];\n'
    edited = edit_recipe(compact, {"extra_cmake_flags": ["-DUSE_X=OFF"]})
    assert "  '';\n" + added + "  meta = " in edited
    spaced = compact.replace("  '';\n  meta", "  '';\n\n  meta")
    edited = edit_recipe(spaced, {"extra_cmake_flags": ["-DUSE_X=OFF"]})
    assert "  '';\n\n" + added + "\n  meta = " in edited


def test_revision_zero_is_a_revision():
    edited = edit_recipe(fixture_text("pytorch-pinned-mps.nix"), {"metadata_rev": 0})
    assert "echo 0 > $out/.metadata-rev" in edited
    with pytest.raises(EditError, match="whole number of 0 or more"):
        edit_recipe(fixture_text("pytorch-pinned-mps.nix"), {"metadata_rev": -1})


def test_a_one_line_list_keeps_its_spacing_when_an_element_is_added():
    text = pinned_with(FLAGS, 'cpuFlags = [ "-mavx"   "-mno-fma" ];')
    edited = edit_recipe(text, {"cpu_flags": ["-mavx", "-mno-fma", "-mfma"]})
    assert '\n  cpuFlags = [ "-mavx"   "-mno-fma" "-mfma" ];\n' in edited


def test_a_laid_out_list_emptied_keeps_its_brackets_on_their_lines():
    edited = edit_recipe(fixture_text("pytorch-pinned-cuda.nix"), {"cpu_flags": []})
    assert "\n  cpuFlags = [\n  ];\n" in edited
    assert read_recipe(edited).cpu_flags == []


def test_a_block_cannot_go_into_a_one_line_attribute_set():
    mps = fixture_text("pytorch-pinned-mps.nix")
    start, end = mps.index("overrideAttrs (oldAttrs: {") + 26, mps.rindex("})")
    one_line = mps[:start] + ' pname = "pytorch-python312-darwin-mps"; ' + mps[end:]
    assert read_recipe(one_line).pname == "pytorch-python312-darwin-mps"
    many = [f"-DUSE_FEATURE_{i}=OFF" for i in range(6)]  # past 80 columns: one a line
    with pytest.raises(EditError, match="written on one line; edit it by hand"):
        edit_recipe(one_line, {"extra_cmake_flags": many})


def test_a_passthru_key_added_to_a_spaced_set_gets_no_blank_line_of_its_own():
    spaced = PASSTHRU.replace("      blasProvider", "\n      blasProvider")
    text = pinned_with(PASSTHRU, spaced)
    wanted = {**read_recipe(text).passthru, "extra": "x"}
    edited = edit_recipe(text, {"passthru": wanted})
    assert '\n      cpuISA = "avx";\n      extra = "x";\n    };\n' in edited


def test_an_attribute_added_before_meta_goes_above_the_comments_over_meta():
    mps = fixture_text("pytorch-pinned-mps.nix")
    text = mps.replace("  '';\n  meta", "  '';\n  # What the catalogue shows\n  meta")
    edited = edit_recipe(text, {"extra_cmake_flags": ["-DUSE_X=OFF"]})
    added = '  cmakeFlags = (oldAttrs.cmakeFlags or []) ++ [ "-DUSE_X=OFF" ];\n'
    assert "  '';\n" + added + "  # What the catalogue shows\n  meta = " in edited


def test_two_targets_bound_to_one_literal_must_stay_equal():
    text = pinned_with("gpuTargets = [ gpuArchSM ];", "gpuTargets = [ gpuArchSM gpuArchSM ];")
    with pytest.raises(EditError, match="two targets share one binding and cannot differ"):
        edit_recipe(text, {"gpu_targets": ["8.6", "9.0"]})
    edited = edit_recipe(text, {"gpu_targets": ["8.6", "8.6"]})
    assert 'gpuArchSM = "8.6";' in edited and read_recipe(edited).gpu_targets == ["8.6", "8.6"]


def test_a_binding_cannot_go_before_a_closing_brace_that_shares_a_line():
    text = pinned_with('      cpuISA = "avx";\n    };', '      cpuISA = "avx"; };')
    wanted = {**read_recipe(text).passthru, "extra": "x"}
    with pytest.raises(EditError, match="closing brace shares a line; edit it by hand"):
        edit_recipe(text, {"passthru": wanted})


def test_a_group_added_before_meta_gets_a_blank_line_only_where_meta_has_one_above():
    # The set separates some bindings by blank lines, but not meta from what precedes it.
    mps = fixture_text("pytorch-pinned-mps.nix")
    text = mps.replace("  };\n  preConfigure", "  };\n\n  preConfigure")
    edited = edit_recipe(text, {"extra_cmake_flags": ["-DUSE_X=OFF"]})
    added = '  cmakeFlags = (oldAttrs.cmakeFlags or []) ++ [ "-DUSE_X=OFF" ];\n'
    assert "  '';\n" + added + "  meta = " in edited


def test_a_passthru_key_written_as_an_expression_is_named_in_the_refusal():
    text = fixture_text("pytorch-pinned-cuda.nix")
    with pytest.raises(EditError, match=r"written as an expression \(gpuArchSM\), not a literal"):
        edit_recipe(text, {"passthru": {**read_recipe(text).passthru, "gpuArch": "9.0"}})


@pytest.mark.parametrize("value", ["-mavx", b"-mavx", 3, ["-mavx", 3]])
def test_flags_must_be_a_list_of_text(value):
    with pytest.raises(EditError, match="cpu_flags must be|cpu_flags must be text"):
        edit_recipe(fixture_text("pytorch-pinned-cuda.nix"), {"cpu_flags": value})


@pytest.mark.parametrize("key", ["bad key", "1st", 7])
def test_a_passthru_key_must_be_a_nix_attribute_name(key):
    with pytest.raises(EditError, match="is not a Nix attribute name"):
        edit_recipe(fixture_text("pytorch-pinned-cuda.nix"), {"passthru": {key: "x"}})
