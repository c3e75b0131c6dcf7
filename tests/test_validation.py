"""Each validation rule refuses a bad record with a message naming what is wrong."""

import pytest
from django.core.exceptions import ValidationError

from catalog.models import Branch, CpuIsa, GpuArchitecture, Variant

pytestmark = pytest.mark.django_db


def variant(pname, branch=("build-pytorch", "main")):
    return Variant.objects.select_related("branch", "gpu_arch", "cpu_isa").get(
        branch__repository=branch[0], branch__name=branch[1], pname=pname
    )


def assert_invalid(obj, field, text):
    with pytest.raises(ValidationError) as info:
        obj.full_clean()
    messages = " ".join(info.value.message_dict.get(field, []))
    assert text in messages, info.value.message_dict


def test_seeded_variants_are_valid():
    variant("pytorch-python313-cuda12_8-sm90-avx512").full_clean()


def test_pname_must_be_the_composed_name():
    v = variant("pytorch-python313-cuda12_8-sm90-avx512")
    v.pname = "pytorch-python313-cuda12_8-sm90-avx2"
    assert_invalid(v, "pname", "compose the name 'pytorch-python313-cuda12_8-sm90-avx512'")


def test_sm103_needs_cuda_12_9():
    v = variant(
        "pytorch-python313-cuda12_9-sm103-avx512", ("build-pytorch", "pytorch-2.9-vllm-0.15.1")
    )
    v.cuda_version = "12.8"
    v.pname = v.composed_pname()
    assert_invalid(v, "cuda_version", "SM103 needs CUDA ≥ 12.9")


@pytest.mark.parametrize(
    "sm, pname, branch, minimum",
    [
        ("sm110", "pytorch-python313-cuda12_9-sm90-armv9", "pytorch-2.9-python313", "13.0"),
        ("sm121", "pytorch-python313-cuda12_8-sm90-armv9", "main", "12.9"),
    ],
)
def test_sm110_needs_cuda_13_and_sm121_cuda_12_9(sm, pname, branch, minimum):
    v = variant(pname, ("build-pytorch", branch))
    v.gpu_arch = GpuArchitecture.objects.get(sm=sm)
    v.pname = v.composed_pname()
    assert_invalid(v, "cuda_version", f"{sm.upper()} needs CUDA ≥ {minimum}")


def test_cuda_13_cannot_build_pascal():
    v = variant("pytorch-python313-cuda13_0-sm75-avx2", ("build-pytorch", "pytorch-2.10-python313"))
    v.gpu_arch = GpuArchitecture.objects.get(sm="sm61")
    v.disabled_features = ["cudnn"]
    v.pname = v.composed_pname()
    assert_invalid(v, "cuda_version", "≤ 12.9")


def test_cuda_version_must_be_one_of_the_branch():
    v = variant("pytorch-python313-cuda12_8-sm90-avx512")
    v.cuda_version = "12.9"
    v.pname = v.composed_pname()
    assert_invalid(v, "cuda_version", "builds CUDA 12.8, not 12.9")


def test_pre_turing_builds_must_switch_cudnn_off():
    v = variant("pytorch-python313-cuda12_8-sm61-avx2")
    v.disabled_features = []
    assert_invalid(v, "disabled_features", "cudnn")


def test_avx_builds_must_switch_off_fbgemm_mkldnn_nnpack():
    v = variant("pytorch-python313-cuda12_8-sm80-avx")
    v.disabled_features = ["fbgemm"]
    assert_invalid(v, "disabled_features", "mkldnn, nnpack")


def test_arm_isa_only_on_aarch64_linux():
    v = variant("pytorch-python313-cuda12_8-sm90-armv9")
    v.platform = "x86_64-linux"
    assert_invalid(v, "platform", "must be aarch64-linux")


def test_x86_isa_only_on_x86_64_linux():
    v = variant("pytorch-python313-cpu-avx2")
    v.platform = "aarch64-linux"
    assert_invalid(v, "platform", "must be x86_64-linux")


def test_mps_only_on_aarch64_darwin():
    v = variant("pytorch-python313-darwin-mps")
    v.platform = "aarch64-linux"
    assert_invalid(v, "platform", "aarch64-darwin")


def test_mps_has_no_isa():
    v = variant("pytorch-python313-darwin-mps")
    v.cpu_isa = CpuIsa.objects.get(slug="armv9")
    assert_invalid(v, "cpu_isa", "no CPU ISA")


def test_cpu_variant_has_no_gpu_architecture():
    v = variant("pytorch-python313-cpu-avx2")
    v.gpu_arch = GpuArchitecture.objects.get(sm="sm90")
    assert_invalid(v, "gpu_arch", "no GPU architecture")


def test_companion_must_name_its_pytorch():
    v = variant("torchvision-python313-cuda12_8-sm61-avx")
    v.depends_on = None
    assert_invalid(v, "depends_on", "must name the PyTorch variant")


CUDA13 = ("build-torchvision", "cuda-13_0")


def test_an_impossible_pairing_may_name_no_pytorch_and_only_it():
    # DGX Spark + an x86 ISA: no machine runs it, so no PyTorch of it exists to name.
    x86 = variant("torchvision-python313-cuda13_0-sm121-avx512", CUDA13)
    assert x86.depends_on_id is None and x86.impossible_pairing
    x86.full_clean()
    # Its Arm sibling runs on DGX Spark: it must still name its PyTorch.
    arm = variant("torchvision-python313-cuda13_0-sm121-armv9", CUDA13)
    assert arm.impossible_pairing == ""
    arm.depends_on = None
    assert_invalid(arm, "depends_on", "must name the PyTorch variant")
    # And an impossible pairing that names a PyTorch must match it like any companion.
    x86.depends_on = variant(
        "pytorch-python313-cuda13_0-sm121-armv9", ("build-pytorch", "pytorch-2.10-python313")
    )
    assert_invalid(x86, "depends_on", "differs in CPU ISA")


def test_companion_must_match_its_pytorch():
    v = variant("torchvision-python313-cuda12_8-sm61-avx")
    v.depends_on = variant("pytorch-python313-cuda12_8-sm75-avx")
    assert_invalid(v, "depends_on", "differs in GPU architecture")


def test_companion_cannot_depend_on_a_companion():
    v = variant("torchaudio-python313-cuda12_8-sm61-avx")
    v.depends_on = variant("torchvision-python313-cuda12_8-sm61-avx")
    assert_invalid(v, "depends_on", "is not a PyTorch variant")


def test_pytorch_depends_on_nothing():
    v = variant("pytorch-python313-cuda12_8-sm61-avx")
    v.depends_on = variant("pytorch-python313-cuda12_8-sm75-avx")
    assert_invalid(v, "depends_on", "does not depend")


def test_python_version_follows_the_branch():
    v = variant("pytorch-python313-cpu-avx2")
    v.python_version = "3.12"
    v.pname = v.composed_pname()
    assert_invalid(v, "python_version", "builds Python 3.13, not 3.12")


def test_torchvision_repo_builds_only_torchvision():
    v = variant("torchvision-python313-cpu-avx2", ("build-torchvision", "main"))
    v.library = "pytorch"
    v.depends_on = None
    v.pname = v.composed_pname()
    assert_invalid(v, "library", "does not build pytorch")


def test_isa_required_features_must_cover_its_flags():
    isa = CpuIsa.objects.get(slug="avx512vnni")
    isa.required_features = ["avx512f", "avx512dq", "avx512vl", "avx512bw", "fma"]
    assert_invalid(isa, "required_features", "avx512_vnni")


def test_isa_flags_must_be_known():
    isa = CpuIsa.objects.get(slug="avx2")
    isa.compiler_flags = ["-mavx2", "-mfancy"]
    assert_invalid(isa, "compiler_flags", "-mfancy")


def test_architecture_compute_capability_matches_sm():
    arch = GpuArchitecture.objects.get(sm="sm90")
    arch.compute_capability = "8.9"
    assert_invalid(arch, "compute_capability", "sm90 is compute capability 9.0")


def test_branch_unique_per_repository():
    main = Branch.objects.get(repository="build-pytorch", name="main")
    clone = Branch(
        repository="build-pytorch",
        name="main",
        pytorch_version="2.8.0",
        python_version="3.13",
        cuda_versions=["12.8"],
    )
    with pytest.raises(ValidationError, match="already exists"):
        clone.full_clean()
    # The same branch name in another repository is fine.
    clone.repository = "build-torchaudio"
    clone.full_clean()
    assert main.pk


def test_pname_unique_per_branch():
    v = variant("pytorch-python313-cpu-avx2")
    dup = Variant(
        **{f.attname: getattr(v, f.attname) for f in Variant._meta.fields if f.name != "id"}
    )
    with pytest.raises(ValidationError, match="already exists"):
        dup.full_clean()
