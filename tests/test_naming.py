import pytest

from catalog import naming
from catalog.models import Variant


@pytest.mark.parametrize(
    "parts, name",
    [
        (
            ("pytorch", "3.13", "cuda", "12.8", "sm90", "avx512"),
            "pytorch-python313-cuda12_8-sm90-avx512",
        ),
        (
            ("torchvision", "3.13", "cuda", "12.9", "sm103", "armv8_2"),
            "torchvision-python313-cuda12_9-sm103-armv8_2",
        ),
        (("pytorch", "3.11", "cpu", "", "", "avx2"), "pytorch-python311-cpu-avx2"),
        (("pytorch", "3.12", "mps", "", "", ""), "pytorch-python312-darwin-mps"),
        (
            ("torchaudio", "3.13", "cuda", "13.0", "sm121", "armv9"),
            "torchaudio-python313-cuda13_0-sm121-armv9",
        ),
    ],
)
def test_compose_and_parse_are_inverse(parts, name):
    assert naming.compose(*parts) == name
    assert naming.compose_parts(naming.parse(name)) == name


@pytest.mark.parametrize(
    "bad",
    [
        # the seeds' publishing example: CPU names have no CUDA part
        "pytorch-python313-cuda12_8-cpu-avx2",
        "python313Packages.pytorch-sm90-avx512",  # the proof of concept's naming
        "pytorch-python313-sm90-avx512",
        "tensorflow-python313-cpu-avx2",
        "",
    ],
)
def test_parse_rejects_names_off_the_convention(bad):
    with pytest.raises(naming.InvalidName):
        naming.parse(bad)


def test_compose_refuses_incomplete_cuda_parts():
    with pytest.raises(naming.InvalidName, match="CUDA build needs"):
        naming.compose("pytorch", "3.13", "cuda", "12.8", "", "avx2")


def test_cuda_tag_drops_the_patch_level():
    assert naming.cuda_tag("12.9.1") == "cuda12_9"
    assert naming.cuda_major_minor("12.9.1") == "12.9"


def test_sm_helpers():
    assert naming.sm_number("sm121") == "121"
    assert naming.sm_underscore("sm90") == "sm_90"
    assert naming.sm_from_compute_capability("12.1") == "sm121"
    assert naming.compute_capability_from_sm("sm75") == "7.5"


@pytest.mark.django_db
def test_every_variant_name_round_trips_through_naming():
    variants = Variant.objects.select_related("gpu_arch", "cpu_isa", "branch")
    assert variants.exists()
    for v in variants:
        parts = naming.parse(v.pname)
        assert parts.library == v.library
        assert parts.python_version == v.python_version
        assert parts.backend == v.backend
        assert parts.cuda_version == v.cuda_version
        assert parts.sm == (v.gpu_arch.sm if v.gpu_arch else "")
        assert parts.isa == (v.cpu_isa.slug if v.cpu_isa else "")
        assert naming.compose_parts(parts) == v.pname == v.composed_pname()


def test_gpu_targets_are_compute_capabilities_in_dot_notation():
    assert naming.gpu_target("sm90") == "9.0"
    assert naming.gpu_target("sm121") == "12.1"
    for entry, sm in (
        ("9.0", "sm90"),
        ("10.3", "sm103"),
        ("12.1", "sm121"),
        ("9.0a", "sm90"),
        ("10.0f", "sm100"),
        ("8.9+PTX", "sm89"),
    ):
        assert naming.gpu_target_sm(entry) == sm


def test_sm_underscore_targets_are_refused_with_a_hint_but_readable_leniently():
    import pytest

    with pytest.raises(naming.InvalidName, match="dot notation"):
        naming.gpu_target_sm("sm_90")
    with pytest.raises(naming.InvalidName):
        naming.gpu_target_sm("Hopper")
    assert naming.gpu_target_sm_lenient("sm_90") == "sm90"
    assert naming.gpu_target_sm_lenient("Hopper") == ""


@pytest.mark.parametrize(
    "attr, parts",
    [
        ("cudaPackages_12_8", (12, 8)),
        ("cudaPackages_13", (13, None)),
        ("cudaPackages", None),
        ("cudaPackages_12_8x", None),
        ("", None),
    ],
)
def test_cuda_package_sets_are_read_in_one_place(attr, parts):
    assert naming.cuda_set_parts(attr) == parts


def test_a_cuda_version_names_its_package_set():
    assert naming.cuda_set_attr("12.9") == "cudaPackages_12_9"
    assert naming.cuda_set_parts(naming.cuda_set_attr("13.0")) == (13, 0)
