"""catalog.recipes.nix.read: every recipe form reads, as written; only non-recipes are refused.

Fixtures in tests/data/recipes/forms are small recipes written for these tests, one per form
and per optional part worth naming as absent. The real recipes are read from
../shared/real-recipes when that folder exists.
"""

import dataclasses
from pathlib import Path

import pytest

from catalog import vocabulary
from catalog.recipes.nix.edit import edit_recipe
from catalog.recipes.nix.errors import RecipeError
from catalog.recipes.nix.facts import PytorchSource, RecipeFacts
from catalog.recipes.nix.read import read_recipe

from .nix_data import (
    BUILD_PYTORCH,
    BUILD_TORCHVISION,
    EXAMPLES,
    FORMS,
    fixture_text,
    real_paths,
    real_text,
)

PIN_FE5 = "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3"
PIN_6A0 = "6a030d535719c5190187c4cec156f335e95e3211"
FIELDS = [f.name for f in dataclasses.fields(RecipeFacts) if f.name not in ("spans", "header")]
DEFAULTS = {
    name: (f.default if f.default is not dataclasses.MISSING else f.default_factory())
    for f in dataclasses.fields(RecipeFacts)
    if (name := f.name) not in ("form", "pname", "library", "backend", "python_attr", "spans")
}

EXPECTED = {
    "pytorch-pinned-cuda.nix": dict(
        form="pytorch-pinned",
        pname="pytorch-python313-cuda12_8-sm61-avx",
        library="pytorch",
        backend="cuda",
        python_attr="python3Packages",
        nixpkgs_pin=PIN_FE5,
        cuda_packages_attr="cudaPackages_12_8",
        gpu_targets=["6.1"],
        gpu_arch_num="61",
        cpu_flags=["-mavx", "-mno-fma", "-mno-avx2"],
        platforms=["x86_64-linux"],
        metadata_rev=4,
        passthru={"blasProvider": "cublas", "cpuISA": "avx"},
        # USE_CUDNN=0, USE_FBGEMM=0, -DUSE_NNPACK=OFF; the commented USE_MKLDNN=0 is not read
        disabled_features=["cudnn", "fbgemm", "nnpack"],
        extra_cmake_flags=["-DCXX_AVX2_FOUND=FALSE", "-DUSE_NNPACK=OFF"],
        description='PyTorch for GTX 1080 (SM61) with "AVX" ${literally}',
    ),
    "pytorch-pinned-cpu.nix": dict(
        form="pytorch-pinned",
        pname="pytorch-python312-cpu-avx2",
        library="pytorch",
        backend="cpu",
        python_attr="python312Packages",
        nixpkgs_pin=PIN_6A0,
        cpu_flags=["-mavx2", "-mfma", "-mf16c"],
        platforms=["x86_64-linux", "aarch64-linux"],
        description="PyTorch CPU-only optimized for AVX2",  # USE_CUDNN=0 without CUDA: not listed
    ),
    "pytorch-pinned-mps.nix": dict(
        form="pytorch-pinned",
        pname="pytorch-python312-darwin-mps",
        library="pytorch",
        backend="mps",
        python_attr="python312Packages",
        nixpkgs_pin=PIN_FE5,
        platforms=["aarch64-darwin"],
        passthru={"gpuArch": "mps", "blasProvider": "veclib", "cpuISA": None},
        description="PyTorch with MPS for Apple Silicon",
    ),
    "pytorch-callpackage.nix": dict(
        form="pytorch-callpackage",
        pname="pytorch-python313-cuda12_8-sm90-avx512",
        library="pytorch",
        backend="cuda",
        python_attr="python3Packages",
        gpu_targets=["9.0"],
        gpu_arch_num="90",
        cpu_flags=["-mavx512f", "-mfma"],
        platforms=["x86_64-linux"],
        description="PyTorch for H100 (SM90) + AVX-512",
    ),
    "pytorch-environment-nixpkgs.nix": dict(
        form="pytorch-pinned",
        pname="pytorch-python313-cuda13_0-sm80-armv9",
        library="pytorch",
        backend="cuda",
        python_attr="python313Packages",
        cuda_packages_attr="cudaPackages_13_0",
        gpu_targets=["sm_80"],
        gpu_arch_num="80",
        platforms=["aarch64-linux"],
        metadata_rev=1,
        passthru={"blasProvider": "cublas", "cpuISA": None},
        disabled_features=["fbgemm", "mkldnn"],
        description="PyTorch for A100 (SM80) + ARMv9",
    ),
    "bare.nix": dict(
        form="pytorch-pinned",
        pname="pytorch-bare",
        library="pytorch",
        backend="cpu",
        python_attr="python3Packages",
        nixpkgs_pin="0182a361324364ae3f436a63005877674cf45efb",
    ),
    "companion-inline.nix": dict(
        form="companion-inline",
        pname="torchvision-python313-cuda13_0-sm90-avx512",
        library="torchvision",
        backend="cuda",
        python_attr="python3Packages",
        nixpkgs_pin=PIN_6A0,
        cuda_packages_attr="cudaPackages_13",
        gpu_targets=["sm_90"],
        cpu_flags=["-mavx512f", "-mavx512dq", "-mfma"],
        platforms=["x86_64-linux", "aarch64-linux"],
        platforms_fallback=True,
        torch_version_override="2.10.0",
        pytorch_source=PytorchSource("inline", pname="pytorch210-for-torchvision-sm90-avx512"),
        metadata_rev=1,
        disabled_features=["nnpack"],
        description="TorchVision for H100 (SM90) + AVX-512 with PyTorch 2.10.0",
    ),
    "companion-sibling.nix": dict(
        form="companion-sibling",
        pname="torchaudio-python312-cuda12_8-sm75-avx",
        library="torchaudio",
        backend="cuda",
        python_attr="python312Packages",
        nixpkgs_pin=PIN_FE5,
        cuda_packages_attr="cudaPackages_12_8",
        gpu_targets=["7.5"],
        cpu_flags=["-mavx", "-mno-avx2"],
        platforms=["x86_64-linux"],
        pytorch_source=PytorchSource("sibling", sibling="pytorch-python312-cuda12_8-sm75-avx"),
        passthru={"cpuISA": "avx"},
        description="Torchaudio for T4 (SM75) with AVX",
    ),
    "companion-remote.nix": dict(
        form="companion-remote",
        pname="torchvision-python313-darwin-mps",
        library="torchvision",
        backend="mps",
        python_attr="python3Packages",
        nixpkgs_pin=PIN_6A0,
        platforms=["aarch64-darwin"],
        metadata_rev=2,
        pytorch_source=PytorchSource(
            "remote",
            url="https://github.com/barstoolbluz/build-pytorch/archive/72b3d51.tar.gz",
            path=".flox/pkgs/pytorch-python313-darwin-mps.nix",
        ),
        description="TorchVision with MPS for Apple Silicon",
    ),
    "companion-callpackage.nix": dict(
        form="companion-callpackage",
        pname="torchaudio-python313-cuda12_8-sm90-avx512",
        library="torchaudio",
        backend="cuda",
        python_attr="python3Packages",
        gpu_targets=["sm_90"],
        gpu_arch_num="90",
        cpu_flags=["-mavx512f", "-mfma"],
        platforms=["x86_64-linux"],
        pytorch_source=PytorchSource("inline"),
        description="TorchAudio for Hopper (SM90) + AVX-512",
    ),
    "companion-own-torch.nix": dict(
        form="companion-inline",
        pname="torchvision-python312-cuda12_8-multi",
        library="torchvision",
        backend="cuda",
        python_attr="python312Packages",
        nixpkgs_pin=PIN_FE5,
        gpu_targets=["8.6", "9.0"],
        description="TorchVision for SM86 and SM90",
    ),
}


def mismatches(facts: RecipeFacts, expected: dict) -> dict:
    want = {**DEFAULTS, **expected}
    return {
        name: (getattr(facts, name), want[name])
        for name in FIELDS
        if getattr(facts, name) != want[name]
    }


def test_every_fixture_is_described_and_every_form_has_one():
    assert sorted(EXPECTED) == sorted(p.name for p in FORMS.glob("*.nix"))
    assert {e["form"] for e in EXPECTED.values()} == set(vocabulary.RECIPE_FORMS)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_reads_field_by_field(name):
    facts = read_recipe((FORMS / name).read_text())
    assert mismatches(facts, EXPECTED[name]) == {}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_spans_point_at_the_values_they_edit(name):
    text = (FORMS / name).read_text()
    data = text.encode()
    facts = read_recipe(text)
    for field, span in facts.spans.items():
        written = data[span.start : span.end].decode()
        assert data[: span.start].count(b"\n") + 1 == span.line, field
        if field in ("pname", "description"):
            assert written.startswith('"') and written.endswith('"'), field
        elif field in ("nixpkgs_pin", "cuda_packages_attr", "python_attr", "gpu_arch_num"):
            assert getattr(facts, field) in written, field
        elif field == "metadata_rev":
            assert written == str(facts.metadata_rev)
        elif field in ("cpu_flags", "platforms", "extra_cmake_flags"):
            assert written.startswith("[") and written.endswith("]"), field
        elif field.startswith("passthru."):
            key = field.removeprefix("passthru.")
            assert written == (
                "null" if facts.passthru[key] is None else f'"{facts.passthru[key]}"'
            )


def test_a_value_used_twice_is_one_binding_and_its_span_is_the_binding():
    text = (FORMS / "companion-inline.nix").read_text()
    facts = read_recipe(text)
    data = text.encode()
    # gpuTargets = [ gpuArchSM ] in the inline PyTorch: the span is `gpuArchSM = "sm_90";`'s literal
    span = facts.spans["gpu_targets"]
    line = data.splitlines()[span.line - 1].decode()
    assert line.strip() == 'gpuArchSM = "sm_90";'
    # cpuFlags feeds both derivations; its span is the one list
    span = facts.spans["cpu_flags"]
    assert data.splitlines()[span.line - 1].decode().strip().startswith("cpuFlags = [")


def test_the_header_comments_are_kept_line_by_line():
    assert read_recipe(fixture_text("pytorch-pinned-cuda.nix")).header == [
        "Pinned two-stage CUDA recipe: every optional part present.",
        "Package name: pytorch-python313-cuda12_8-sm61-avx",
    ]
    assert read_recipe(fixture_text("pytorch-pinned-mps.nix")).header == [
        "Darwin MPS: no CPU flags, no GPU targets; MPS switched on in the script."
    ]
    assert read_recipe(
        '# a\n#b\n\n#  c\nx: x.python3Packages.torch.overrideAttrs (o: { pname = "p"; })  # after\n'
    ).header == ["a", "b", " c"]


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    "text, line, reason",
    [
        ("{ pkgs }:\nlet\n  x = 1;\n  y = [ 1 2\nin x\n", 4, "`[` opened here is never closed"),
        ('{ a = "never closed;\n}\n', 1, "never closed"),
        ("", 1, "no Nix expression"),
        ("# only a comment\n", 1, "no Nix expression"),
        ("{ pkgs }:\n\npkgs.hello\n", 3, "not a torch, torchvision or torchaudio"),
        ("let\n  x = 1;\nin\n  x\n", 4, "not a torch"),
        ("{ pkgs }:\n\n{ a = 1; }\n", 3, "not a torch"),
        (
            '{ p }:\np.python3Packages.torch.overrideAttrs (old: {\n  version = "1";\n})\n',
            2,
            "no pname",
        ),
        ("{ p }:\np.python3Packages.torch\n", 2, "no pname"),
        (
            '{ p, n }:\np.python3Packages.torch.overrideAttrs (old: {\n  pname = "a-${n}";\n})\n',
            3,
            "not a plain string",
        ),
    ],
)
def test_what_is_not_a_recipe_is_refused_with_line_and_reason(text, line, reason):
    with pytest.raises(RecipeError) as refused:
        read_recipe(text)
    assert refused.value.line == line
    assert reason in refused.value.reason
    assert str(refused.value).startswith(f"line {line}: ")


def test_a_syntax_error_gives_its_column_too():
    with pytest.raises(RecipeError) as refused:
        read_recipe("{ a = 1; b = 2 }")
    assert (refused.value.line, refused.value.column) == (1, 15)


# ---------------------------------------------------------------- the real recipes


def real(path: Path) -> RecipeFacts:
    return read_recipe(real_text(path))


def test_every_real_recipe_reads_and_together_they_cover_every_form():
    files = real_paths()
    assert len(files) >= 127
    forms = set()
    for path in files:
        facts = read_recipe(path.read_text(encoding="utf-8"))
        forms.add(facts.form)
        assert facts.pname and facts.library in vocabulary.LIBRARIES, path
    assert forms == set(vocabulary.RECIPE_FORMS)


def test_the_two_real_branches_name_every_recipe_after_its_file():
    files = [p for p in real_paths() if ".flox" in p.parts]
    assert len(files) == 62 + 57
    for path in files:
        facts = read_recipe(path.read_text(encoding="utf-8"))
        assert facts.pname == path.stem
        assert facts.backend == (
            "cuda" if "cuda" in path.stem else "mps" if "mps" in path.stem else "cpu"
        )


def test_real_pinned_cuda_recipe_with_switched_off_libraries():
    facts = real(BUILD_PYTORCH / "pytorch-python312-cuda12_8-sm61-avx.nix")
    assert (
        mismatches(
            facts,
            dict(
                form="pytorch-pinned",
                pname="pytorch-python312-cuda12_8-sm61-avx",
                library="pytorch",
                backend="cuda",
                python_attr="python312Packages",
                nixpkgs_pin=PIN_FE5,
                cuda_packages_attr="cudaPackages_12_8",
                gpu_targets=["6.1"],
                gpu_arch_num="61",
                cpu_flags=["-mavx", "-mno-fma", "-mno-bmi", "-mno-bmi2", "-mno-avx2"],
                platforms=["x86_64-linux"],
                passthru={"blasProvider": "cublas", "cpuISA": "avx"},
                disabled_features=["cudnn", "fbgemm", "mkldnn", "nnpack"],
                extra_cmake_flags=[
                    "-DCXX_AVX2_FOUND=FALSE",
                    "-DC_AVX2_FOUND=FALSE",
                    "-DCXX_AVX512_FOUND=FALSE",
                    "-DC_AVX512_FOUND=FALSE",
                    "-DCAFFE2_COMPILER_SUPPORTS_AVX512_EXTENSIONS=OFF",
                    "-DUSE_NNPACK=OFF",
                ],
                description="PyTorch for NVIDIA GTX 1070/1080 Ti (SM61, Pascal) with AVX",
            ),
        )
        == {}
    )


def test_real_cuda13_recipe_with_torch_override_and_a_pname_unlike_its_file():
    facts = real(
        EXAMPLES
        / "build-pytorch--pytorch-2.10-python313--pytorch-python313-cuda13_0-sm90-avx512.nix"
    )
    assert facts.pname == "pytorch210-python313-cuda13_0-sm90-avx512"
    assert facts.cuda_packages_attr == "cudaPackages_13"
    assert facts.torch_version_override == "2.10.0"
    assert facts.nixpkgs_pin == PIN_6A0
    assert facts.gpu_targets == ["9.0"] and facts.gpu_arch_num == ""
    assert facts.extra_cmake_flags == [
        "-DTORCH_BUILD_VERSION=2.10.0",
        "-DCMAKE_CUDA_FLAGS=-I/build/cccl-compat",
        "-DCUDA_VERSION=13.0",
    ]
    facts = real(
        EXAMPLES
        / "build-pytorch--pytorch-2.10-python313--pytorch-python313-cuda13_1-sm121-armv9.nix"
    )
    assert (facts.cuda_packages_attr, facts.gpu_targets, facts.nixpkgs_pin[:7]) == (
        "cudaPackages_13_1",
        ["12.1"],
        "2017d6d",
    )
    assert facts.platforms == ["aarch64-linux"] and facts.cpu_flags == ["-march=armv9-a+sve+sve2"]


def test_real_cpu_recipe_with_torch_override_and_no_gpu():
    facts = real(
        EXAMPLES / "build-pytorch--pytorch-2.10-python313--pytorch-python313-cpu-armv8_2.nix"
    )
    assert (facts.form, facts.backend, facts.pname) == (
        "pytorch-pinned",
        "cpu",
        "pytorch210-python313-cpu-armv8_2",
    )
    assert facts.torch_version_override == "2.10.0" and facts.cuda_packages_attr == ""
    assert facts.passthru == {"gpuArch": None, "blasProvider": "openblas", "cpuISA": "armv8_2"}


def test_real_vllm_pin_and_python313_set():
    facts = real(
        EXAMPLES
        / "build-pytorch--pytorch-2.9-vllm-0.15.1--pytorch-python313-cuda12_8-sm90-avx512.nix"
    )
    assert facts.python_attr == "python313Packages"
    assert facts.nixpkgs_pin == "0182a361324364ae3f436a63005877674cf45efb"
    assert facts.cuda_packages_attr == "cudaPackages_12_8" and facts.gpu_arch_num == "90"


def test_real_unpinned_callpackage_recipes():
    facts = real(
        EXAMPLES / "build-pytorch--main-staging--pytorch-python313-cuda12_8-sm90-avx512.nix"
    )
    assert (facts.form, facts.library, facts.nixpkgs_pin, facts.cuda_packages_attr) == (
        "pytorch-callpackage",
        "pytorch",
        "",
        "",
    )
    assert facts.gpu_targets == ["9.0"] and facts.backend == "cuda" and facts.metadata_rev is None
    facts = real(EXAMPLES / "build-torchaudio--main--torchaudio-python313-cuda12_8-sm90-avx512.nix")
    assert (facts.form, facts.library, facts.pytorch_source) == (
        "companion-callpackage",
        "torchaudio",
        PytorchSource("inline"),
    )
    assert facts.gpu_targets == ["sm_90"]  # as written; the audit reports it


def test_real_companions_on_sibling_inline_and_remote_pytorch():
    facts = real(BUILD_PYTORCH / "torchvision-python312-cuda12_8-sm61-avx.nix")
    assert facts.form == "companion-sibling"
    assert facts.pytorch_source == PytorchSource(
        "sibling", sibling="pytorch-python312-cuda12_8-sm61-avx"
    )
    assert facts.gpu_targets == ["6.1"]  # TORCH_CUDA_ARCH_LIST="${gpuArchSM}"
    facts = real(
        EXAMPLES / "build-torchvision--pytorch-2.10--torchvision-python313-cuda13_0-sm90-avx512.nix"
    )
    assert facts.form == "companion-inline"
    assert facts.pytorch_source == PytorchSource(
        "inline", pname="pytorch210-for-torchvision-sm90-avx512"
    )
    assert (
        facts.cuda_packages_attr == "cudaPackages_13" and facts.torch_version_override == "2.10.0"
    )
    facts = real(EXAMPLES / "build-torchvision--pytorch-2.9--torchvision-python313-darwin-mps.nix")
    assert facts.form == "companion-remote" and facts.backend == "mps"
    assert facts.pytorch_source == PytorchSource(
        "remote",
        url="https://github.com/barstoolbluz/build-pytorch/archive/72b3d51.tar.gz",
        path=".flox/pkgs/pytorch-python313-darwin-mps.nix",
    )
    assert facts.metadata_rev == 1


def test_real_cpu_recipes_for_both_linux_systems():
    facts = real(BUILD_PYTORCH / "pytorch-python312-cpu-avx2.nix")
    assert facts.platforms == ["x86_64-linux", "aarch64-linux"] and not facts.platforms_fallback
    assert facts.backend == "cpu" and facts.disabled_features == []
    facts = real(BUILD_TORCHVISION / "torchvision-python313-cpu-avx2.nix")
    assert facts.platforms == ["x86_64-linux", "aarch64-linux"] and facts.platforms_fallback
    assert facts.form == "companion-inline" and facts.metadata_rev == 1
    assert facts.pytorch_source == PytorchSource("inline")
    facts = real(BUILD_TORCHVISION / "torchvision-python313-cuda12_9-sm61-avx.nix")
    assert facts.disabled_features == [
        "cudnn",
        "fbgemm",
        "mkldnn",
        "nnpack",
    ]  # the inline PyTorch's
    assert facts.extra_cmake_flags == []  # those cmakeFlags belong to the inline PyTorch


def test_a_pname_bound_in_let_reads_and_edits_through_the_binding():
    text = (
        'let\n  name = "pytorch-x";\n  np = import <nixpkgs> { };\nin\n'
        "np.python3Packages.torch.overrideAttrs (old: { pname = name; })\n"
    )
    facts = read_recipe(text)
    assert facts.pname == "pytorch-x" and facts.spans["pname"].line == 2
    edited = edit_recipe(text, {"pname": "pytorch-y"})
    assert edited == text.replace('"pytorch-x"', '"pytorch-y"')
