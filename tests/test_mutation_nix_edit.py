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
