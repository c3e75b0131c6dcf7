"""Package names at their edges: every refusal names its reason, and every helper reads exactly
the forms it documents."""

from __future__ import annotations

import pytest

from catalog import naming
from catalog.naming import InvalidName


def test_compose_refuses_an_unknown_library_or_backend():
    with pytest.raises(InvalidName, match="unknown library 'tensorflow'; expected one of pytorch"):
        naming.compose("tensorflow", "3.13", "cpu", isa="avx2")
    with pytest.raises(InvalidName, match="unknown backend 'rocm'; expected one of cuda, cpu"):
        naming.compose("pytorch", "3.13", "rocm", isa="avx2")


@pytest.mark.parametrize("missing", ["cuda_version", "sm", "isa"])
def test_a_cuda_build_needs_each_of_its_three_parts(missing):
    parts = {"cuda_version": "12.8", "sm": "sm90", "isa": "avx2"} | {missing: ""}
    with pytest.raises(InvalidName, match="a CUDA build needs"):
        naming.compose("pytorch", "3.13", "cuda", **parts)


def test_each_backend_composes_its_own_form():
    assert naming.compose("pytorch", "3.13", "cuda", "12.8.1", "sm90", "avx2") == (
        "pytorch-python313-cuda12_8-sm90-avx2"
    )
    assert naming.compose("pytorch", "3.11", "cpu", isa="avx512") == "pytorch-python311-cpu-avx512"
    assert naming.compose("pytorch", "3.12", "mps") == "pytorch-python312-darwin-mps"
    with pytest.raises(InvalidName, match="a CPU build needs a CPU ISA"):
        naming.compose("pytorch", "3.13", "cpu")


@pytest.mark.parametrize("version", ["3", "3.x", "x.13", "", "  "])
def test_versions_must_be_major_dot_minor(version):
    with pytest.raises(InvalidName, match="Python version .* is not of the form MAJOR.MINOR"):
        naming.python_tag(version)


def test_version_tags_keep_major_and_minor_only():
    assert naming.python_tag(" 3.13 ") == "python313"
    assert naming.cuda_tag("12.10.2") == "cuda12_10"
    assert naming.cuda_major_minor("12.9.1") == "12.9"
    with pytest.raises(InvalidName, match="CUDA version"):
        naming.cuda_major_minor("12")


def test_parse_reads_each_form_and_normalises_the_cuda_version():
    assert naming.parse("pytorch-python313-cuda12_08-sm100-avx2") == naming.NameParts(
        "pytorch", "3.13", "cuda", "12.8", "sm100", "avx2"
    )
    assert naming.parse("pytorch-python310-cpu-armv8_2") == naming.NameParts(
        "pytorch", "3.10", "cpu", isa="armv8_2"
    )
    mps = naming.NameParts("pytorch", "3.12", "mps")
    assert naming.parse("pytorch-python312-darwin-mps") == mps
    with pytest.raises(InvalidName, match="None does not follow <library>-python<NN>"):
        naming.parse(None)


def test_compose_parts_is_compose_of_the_fields():
    parts = naming.NameParts("pytorch", "3.13", "cuda", "12.8", "sm90", "avx2")
    assert naming.compose_parts(parts) == "pytorch-python313-cuda12_8-sm90-avx2"


@pytest.mark.parametrize("slug", ["sm9", "sm1000", "xx90", "sm_90", "sm90a", "", None, "90"])
def test_sm_number_refuses_anything_but_an_architecture_slug(slug):
    with pytest.raises(InvalidName, match="is not a GPU architecture slug like 'sm90'"):
        naming.sm_number(slug)


def test_sm_helpers_convert_both_ways():
    assert naming.sm_number("sm121") == "121"
    assert naming.sm_underscore("sm90") == "sm_90"
    assert naming.compute_capability_from_sm("sm121") == "12.1"
    assert naming.gpu_target("sm75") == "7.5"
    assert naming.sm_from_compute_capability("12.1") == "sm121"
    with pytest.raises(InvalidName, match="compute capability version"):
        naming.sm_from_compute_capability("12")


@pytest.mark.parametrize(
    ("entry", "sm"), [("9.0", "sm90"), ("9.0a", "sm90"), ("10.0f+PTX", "sm100"), ("08.6", "sm86")]
)
def test_gpu_targets_name_their_architecture(entry, sm):
    assert naming.gpu_target_sm(entry) == sm


def test_only_the_sm_underscore_spelling_gets_the_dot_notation_hint():
    with pytest.raises(InvalidName) as underscore:
        naming.gpu_target_sm("sm_90")
    assert str(underscore.value) == (
        "'sm_90' is not a TORCH_CUDA_ARCH_LIST entry"
        ' (write compute capabilities in dot notation, e.g. "9.0")'
    )
    with pytest.raises(InvalidName) as other:
        naming.gpu_target_sm("hopper")
    assert str(other.value) == "'hopper' is not a TORCH_CUDA_ARCH_LIST entry"


def test_lenient_targets_read_both_spellings_and_nothing_else():
    assert naming.gpu_target_sm_lenient("sm_90a") == "sm90"
    assert naming.gpu_target_sm_lenient("8.9") == "sm89"
    assert naming.gpu_target_sm_lenient("hopper") == ""
    assert naming.gpu_target_sm_lenient(None) == ""


def test_unsafe_names_get_a_reason_and_safe_ones_none():
    assert naming.unsafe_name_reason("pytorch-2.9_x") == ""
    assert naming.unsafe_name_reason("a" * 120) == ""
    for bad in ("../x", ".hidden", "a" * 121, "", None, "a b"):
        assert "is not a safe name" in naming.unsafe_name_reason(bad)


def test_cuda_sets_read_major_and_optional_minor():
    assert naming.cuda_set_parts("cudaPackages_12_8") == (12, 8)
    assert naming.cuda_set_parts("cudaPackages_13") == (13, None)
    assert naming.cuda_set_parts("cudaPackages_12_0") == (12, 0)
    assert naming.cuda_set_parts("cudaPackages") is None
    assert naming.cuda_set_parts(None) is None
    assert naming.cuda_set_attr("12.9") == "cudaPackages_12_9"


def test_recipe_paths_live_under_flox_pkgs():
    assert naming.recipe_path("pytorch-python313-mps") == ".flox/pkgs/pytorch-python313-mps.nix"
    assert naming.recipe_path_problem(".flox/pkgs/sub/a.nix") == ""
    for bad in (".flox/pkgs.nix", "pkgs/.flox/a.nix", ".flox/pkgs/a.txt", ".flox/other/a.nix"):
        assert naming.recipe_path_problem(bad) == "not a .nix file under .flox/pkgs"
    assert naming.recipe_path_problem(".flox/pkgs/../a.nix").startswith("not a safe file name")
    assert naming.recipe_path_problem(".flox/pkgs/.a.nix").startswith("not a safe file name")


def test_a_recipe_path_may_be_exactly_the_longest_the_field_holds():
    at_limit = ".flox/pkgs/" + "/".join(["a" * 100, "b" * 100, "c" * 38]) + ".nix"
    assert len(at_limit) == naming.MAX_RECIPE_PATH
    assert naming.recipe_path_problem(at_limit) == ""
    over = at_limit.replace(".nix", "c.nix")
    assert naming.recipe_path_problem(over) == "the path is over 255 characters"


def test_shown_paths_are_quoted_only_when_not_plain():
    assert naming.shown_path("a/b.nix") == "a/b.nix"
    assert naming.shown_path("a\nb") == "'a\\nb'"
    assert naming.shown_path("é.nix") == "'\\xe9.nix'"
    assert naming.shown_path(" a") == "' a'"


def test_version_keys_stop_at_the_first_non_numeric_part():
    assert naming.version_key(" 12.9.1 ") == (12, 9, 1)
    assert naming.version_key("12.x.1") == (12,)
    assert naming.version_key("١٢.1") == ()
    assert naming.version_key("12.10") > naming.version_key("12.9")


def test_lenient_parsing_drops_release_numbers_and_dots():
    assert naming.parse_lenient("pytorch210-python313-cpu-armv8.2") == naming.NameParts(
        "pytorch", "3.13", "cpu", isa="armv8_2"
    )
    assert naming.parse_lenient("not a name") is None
    assert naming.parse_lenient(None) is None


def test_isa_slugs_are_lower_case_with_underscores():
    assert naming.isa_slug(" ARMv8.2-A ") == "armv8_2_a"
    assert naming.isa_slug(None) == ""
