"""export-recipes: the recipe families against the seeds' examples, docs, and the command."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from catalog.models import Branch, Variant
from catalog.recipes.exporting import readme, render_recipe, sync

pytestmark = pytest.mark.django_db
GOLDEN = Path(__file__).parent / "data" / "recipes"
NIX = shutil.which("nix-instantiate")


def variant(repo, branch, pname):
    return Variant.objects.select_related(
        "branch", "gpu_arch", "cpu_isa", "depends_on__branch"
    ).get(branch__repository=repo, branch__name=branch, pname=pname)


def attr(text, name):
    """The string value of `name = "...";` (first occurrence)."""
    m = re.search(rf'\b{name} = "((?:[^"\\]|\\.)*)";', text)
    return m and m.group(1)


def string_list(text, name):
    m = re.search(rf"\b{name} = \[(.*?)\];", text, re.S)
    return m and re.findall(r'"([^"]*)"', re.sub(r"#[^\n]*", "", m.group(1)))


def long_description(text):
    m = re.search(r"longDescription = ''\n(.*?)\n\s*'';", text, re.S)
    return [line.strip() for line in m.group(1).splitlines()]


def lines_of(text):
    return {line.strip() for line in text.splitlines()}


# ---------------------------------------------------------------- golden: the seeds' examples


def test_cuda_family_matches_the_001_sm89_avx512_example_field_by_field():
    seed = (GOLDEN / "seed001-pytorch-python313-cuda12_8-sm89-avx512.nix").read_text()
    ours = render_recipe(variant("build-pytorch", "main", "pytorch-python313-cuda12_8-sm89-avx512"))
    for name in ("gpuArchNum", "pname", "description"):
        assert attr(ours, name) == attr(seed, name), name
    # The seed's gpuArchSM = "sm_89" is refused by PyTorch (claim seed-gpu-targets-sm-prefix);
    # the target is the compute capability, as in the real recipes.
    assert attr(seed, "gpuArchSM") == "sm_89" and attr(ours, "gpuArchSM") == "8.9"
    assert "sm_" not in ours
    assert string_list(ours, "cpuFlags") == string_list(seed, "cpuFlags")
    assert string_list(ours, "platforms") == string_list(seed, "platforms") == ["x86_64-linux"]
    # Two-stage override: .override { cudaSupport; gpuTargets } then .overrideAttrs.
    assert re.search(
        r"\.torch\.override \{\n\s+cudaSupport = true;\n\s+gpuTargets = \[ gpuArchSM \];", ours
    )
    assert "}).overrideAttrs (oldAttrs: {" in ours and "}).overrideAttrs (oldAttrs: {" in seed
    assert "export TORCH_CUDA_ARCH_LIST" not in ours  # 001: left to nixpkgs' gpuTargets
    seed_ld, our_ld = long_description(seed), long_description(ours)
    assert our_ld[0] == seed_ld[0]
    assert our_ld[2:6] == seed_ld[2:6]  # CPU, CUDA, BLAS, Python lines
    assert our_ld[1].startswith("- GPU: NVIDIA Ada Lovelace architecture (SM89) - RTX 4090")
    # 001's `.metadata-rev` section.
    assert (
        "postInstall = (oldAttrs.postInstall or \"\") + ''\n"
        "      echo 1 > $out/.metadata-rev\n    '';" in ours
    )
    assert 'requiredSystemFeatures = [ "big-parallel" ];' in ours and "export MAX_JOBS=32" in ours
    for key, value in (
        ("gpuArch", "gpuArchSM"),
        ("blasProvider", '"cublas"'),
        ("cpuISA", '"avx512"'),
    ):
        assert f"{key} = {value};" in ours


def test_cpu_family_matches_the_002_template_for_cpu_avx2_python311():
    template = (GOLDEN / "seed002-cpu-template.nix.in").read_text()
    for key, value in {
        "{PYTHON_PACKAGES}": "python311Packages",
        "{PYTHON}": "python311",
        "{PYTHON_VERSION}": "3.11",
        "{CPU_ISA}": "avx2",
        "{CPU_ISA_DESC}": "AVX2",
        "{PLATFORMS}": "x86_64-linux",
        "{CPU_FLAGS}": '"-mavx2" "-mfma" "-mf16c"',
    }.items():
        template = template.replace(key, value)
    ours = render_recipe(
        variant("build-pytorch", "pytorch-2.8-python311", "pytorch-python311-cpu-avx2")
    )
    for name in ("pname", "description", "blasProvider"):
        assert attr(ours, name) == attr(template, name), name
    assert string_list(ours, "cpuFlags") == string_list(template, "cpuFlags")
    assert string_list(ours, "platforms") == ["x86_64-linux"]
    assert long_description(ours) == long_description(template)
    assert "gpuArch = null;" in ours
    assert ".python311Packages.torch.overrideAttrs" in ours and "cudaSupport" not in ours
    assert 'hasPrefix "cuda" (p.pname or "")' in ours and '!= "addDriverRunpath"' in ours
    assert "++ [ nixpkgs_pinned.openblas ]" in ours
    exports = {
        line
        for line in lines_of(template)
        if line.startswith("export USE_") or line.startswith("export BLAS")
    }
    assert exports <= lines_of(ours)


def test_torchvision_family_matches_the_003_sm89_avx512_example_field_by_field():
    seed = (GOLDEN / "seed003-torchvision-python313-cuda12_9-sm89-avx512.nix").read_text()
    ours = render_recipe(
        variant("build-torchvision", "cuda-12_9", "torchvision-python313-cuda12_9-sm89-avx512")
    )
    for name in ("url", "gpuArchNum", "pname", "description"):
        assert attr(ours, name) == attr(seed, name), name
    assert attr(seed, "gpuArchSM") == "sm_89" and attr(ours, "gpuArchSM") == "8.9"
    for name in ("cpuFlags", "ninjaFlags", "requiredSystemFeatures", "platforms"):
        assert string_list(ours, name) == string_list(seed, name), name
    same_lines = [
        "(final: prev: { cudaPackages = final.cudaPackages_12_9; })",
        "allowUnfree = true;",
        "cudaSupport = true;",
        "customPytorch = (nixpkgs_pinned.python3Packages.torch.override {",
        "gpuTargets = [ gpuArchSM ];",
        "(nixpkgs_pinned.python3Packages.torchvision.override {",
        "torch = customPytorch;",
        'export CXXFLAGS="${nixpkgs_pinned.lib.concatStringsSep " " cpuFlags} $CXXFLAGS"',
        'export CFLAGS="${nixpkgs_pinned.lib.concatStringsSep " " cpuFlags} $CFLAGS"',
        "export MAX_JOBS=32",
    ]
    for line in same_lines:
        assert line in lines_of(seed) and line in lines_of(ours), line
    seed_ld, our_ld = long_description(seed), long_description(ours)
    assert our_ld[0] == seed_ld[0] and our_ld[2:6] == seed_ld[2:6]


# ---------------------------------------------------------------- the other families


def test_sm61_switches_cudnn_off_and_avx_switches_fbgemm_mkldnn_nnpack_off():
    avx = render_recipe(variant("build-pytorch", "main", "pytorch-python313-cuda12_8-sm61-avx"))
    avx2 = render_recipe(variant("build-pytorch", "main", "pytorch-python313-cuda12_8-sm61-avx2"))
    for env in ("USE_CUDNN", "USE_FBGEMM", "USE_MKLDNN", "USE_NNPACK"):
        assert f"export {env}=0" in avx
    assert "export USE_CUDNN=0" in avx2 and "USE_FBGEMM" not in avx2
    sm70 = render_recipe(
        variant("build-pytorch", "pytorch-2.9-python311", "pytorch-python311-cuda12_9-sm70-avx2")
    )
    assert "export USE_CUDNN=0" in sm70 and ".python311Packages.torch.override" in sm70


def test_disabled_features_come_from_the_variant_not_the_name():
    v = variant("build-pytorch", "main", "pytorch-python313-cuda12_8-sm89-avx512")
    assert "USE_NNPACK" not in render_recipe(v)
    v.disabled_features = ["nnpack"]
    assert "export USE_NNPACK=0" in render_recipe(v)


def test_cpu_avx_recipe_replaces_mkldnn_on_with_off():
    text = render_recipe(
        variant("build-pytorch", "pytorch-2.9-python313", "pytorch-python313-cpu-avx")
    )
    assert (
        "export USE_MKLDNN=0" in text
        and "USE_MKLDNN=1" not in text
        and "USE_MKLDNN_CBLAS" not in text
    )


def test_darwin_mps_uses_veclib_and_mps():
    text = render_recipe(variant("build-pytorch", "main", "pytorch-python313-darwin-mps"))
    assert string_list(text, "platforms") == ["aarch64-darwin"]
    assert "export USE_MPS=1" in text and "export BLAS=vecLib" in text
    assert (
        'blasProvider = "veclib";' in text and "cudaSupport" not in text and "cpuFlags" not in text
    )


def test_build_pytorch_companion_imports_its_pytorch_recipe():
    text = render_recipe(variant("build-pytorch", "main", "torchaudio-python313-cuda12_8-sm75-avx"))
    assert (
        "customPytorch = import ./pytorch-python313-cuda12_8-sm75-avx.nix { inherit pkgs; };"
        in text
    )
    assert "(nixpkgs_pinned.python3Packages.torchaudio.override {" in text


def test_short_and_missing_pins_are_explicit():
    short = render_recipe(
        variant("build-pytorch", "pytorch-2.9-vllm-0.15.1", "pytorch-python313-cpu-avx2")
    )
    assert attr(short, "url") == "https://github.com/NixOS/nixpkgs/archive/0182a36.tar.gz"
    assert "only the short commit 0182a36" in short
    tbd = render_recipe(
        variant("build-pytorch", "pytorch-2.10-python313", "pytorch-python313-cuda13_0-sm121-armv9")
    )
    assert (
        "fetchTarball" not in tbd and "nixpkgs_env = import pkgs.path {" in tbd and "(TBD)" in tbd
    )
    assert "cudaPackages = final.cudaPackages_13_0;" in tbd
    # python3Packages is 3.13 only in the seeds' pinned nixpkgs; the environment's nixpkgs may
    # default to another Python, so an unpinned recipe names its Python explicitly.
    assert "(nixpkgs_env.python313Packages.torch.override {" in tbd and "python3Packages" not in tbd
    tv = render_recipe(
        variant("build-torchvision", "cuda-13_0", "torchvision-python313-cuda13_0-sm121-armv9")
    )
    assert "customPytorch = (nixpkgs_env.python313Packages.torch.override {" in tv
    assert (
        "(nixpkgs_env.python313Packages.torchvision.override {" in tv
        and "python3Packages" not in tv
    )


def test_catalogue_text_is_escaped_for_nix():
    v = variant("build-pytorch", "main", "pytorch-python313-cuda12_8-sm89-avx512")
    v.gpu_arch.label = 'A"da ${x} \\'
    text = render_recipe(v)
    assert (
        attr(text, "description")
        == 'PyTorch for NVIDIA RTX 4090 (SM89, A\\"da \\${x} \\\\) + AVX-512'
    )
    assert (
        "(A\\\"da \\''${x} \\\\: RTX 4090/L40)" in text
    )  # shell-quoted inside the '' build script
    if NIX:
        parsed = subprocess.run([NIX, "--parse", "-"], input=text, capture_output=True, text=True)
        assert parsed.returncode == 0, parsed.stderr


@pytest.mark.skipif(NIX is None, reason="Debian's nix-bin provides nix-instantiate")
def test_every_generated_recipe_parses_with_nix_instantiate(tmp_path):
    branches = sync.select_branches()
    report = sync.export_recipes([(tmp_path / b.repository / b.name, b) for b in branches])
    files = sorted(str(o.path) for o in report.outcomes if o.path.suffix == ".nix")
    assert len(files) == Variant.objects.count() > 0
    # One process per 200 files keeps the argument list short and the run well under a second.
    for i in range(0, len(files), 200):
        result = subprocess.run(
            [NIX, "--parse", *files[i : i + 200]], capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------- docs

SECTIONS = {"variant-matrix": "new matrix\n", "companions": "new companions\n"}


def test_prose_outside_markers_survives_byte_for_byte():
    existing = (
        "# Title\r\n\nIntro  with trailing spaces  \n"
        "<!-- BEGIN GENERATED: variant-matrix -->\nold\n"
        "<!-- END GENERATED: variant-matrix -->\nMiddle prose\n\n"
    )
    merged = readme.merge_sections(existing, SECTIONS, "t")
    before, _, rest = merged.partition("<!-- BEGIN GENERATED: variant-matrix -->")
    assert before == "# Title\r\n\nIntro  with trailing spaces  \n"
    assert rest.startswith("\nnew matrix\n<!-- END GENERATED: variant-matrix -->\nMiddle prose\n\n")
    assert "old" not in merged


def test_a_document_without_markers_is_returned_unchanged_and_a_new_one_gets_every_section():
    assert readme.merge_sections("# Mine\nprose", SECTIONS, "t") == "# Mine\nprose"
    new = readme.merge_sections(None, SECTIONS, "t")
    assert new.startswith("# t\n") and new.count("BEGIN GENERATED: companions") == 1
    assert readme.merge_sections(new, SECTIONS, "t") == new


def test_sections_without_markers_are_not_appended():
    text = "<!-- BEGIN GENERATED: companions -->\nold\n<!-- END GENERATED: companions -->\n"
    merged = readme.merge_sections(text, SECTIONS, "t")
    assert merged == text.replace("old\n", "new companions\n")
    assert "variant-matrix" not in merged


def test_unbalanced_markers_are_refused():
    with pytest.raises(readme.MarkerError):
        readme.merge_sections("<!-- BEGIN GENERATED: companions -->\nx\n", SECTIONS, "t")


def test_readme_in_a_checkout_keeps_its_prose(tmp_path):
    checkout = tmp_path / "build-pytorch"
    (checkout / ".git").mkdir(parents=True)
    (checkout / ".flox").mkdir()
    prose = (
        "# build-pytorch\n\nHand-written intro.\n\n<!-- BEGIN GENERATED: branch-table -->\n"
        "stale\n<!-- END GENERATED: branch-table -->\n\nOutro.\n"
    )
    (checkout / "README.md").write_text(prose)
    call_command(
        "export-recipes",
        into=str(checkout),
        repository=["build-pytorch"],
        branch=["main"],
        stdout=open(os.devnull, "w"),
    )
    text = (checkout / "README.md").read_text()
    assert text.startswith(
        "# build-pytorch\n\nHand-written intro.\n\n"
        "<!-- BEGIN GENERATED: branch-table -->\n| Branch |"
    )
    assert "<!-- END GENERATED: branch-table -->\n\nOutro.\n" in text
    assert "stale" not in text and "BEGIN GENERATED: variant-matrix" not in text
    main = Variant.objects.filter(branch__repository="build-pytorch", branch__name="main")
    assert len(list((checkout / ".flox/pkgs").glob("*.nix"))) == main.count()
    assert not (checkout / "BUILD_MATRIX.md").exists()  # a checkout's files are never created


# ---------------------------------------------------------------- the command


def run(*args, **kwargs):
    out = open(os.devnull, "w")
    from io import StringIO

    buf = StringIO()
    call_command("export-recipes", *args, stdout=buf, stderr=out, **kwargs)
    return buf.getvalue()


def test_second_run_writes_nothing_and_keeps_mtimes(tmp_path):
    first = run(output=str(tmp_path), repository=["build-torchvision"])
    torchvision = Branch.objects.filter(repository="build-torchvision")
    files = Variant.objects.filter(branch__in=torchvision).count() + 2 * torchvision.count()
    assert f"{files} created" in first  # every recipe, and README + BUILD_MATRIX per branch
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    second = run(output=str(tmp_path), repository=["build-torchvision"])
    assert "0 created, 0 updated" in second
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()} == before


def test_dry_run_writes_nothing(tmp_path):
    out = run(
        output=str(tmp_path / "x"), branch=["main"], repository=["build-pytorch"], dry_run=True
    )
    assert "would create" in out and not (tmp_path / "x").exists()


def test_check_catches_one_changed_byte(tmp_path):
    run(output=str(tmp_path), repository=["build-pytorch"], branch=["main"])
    run(
        output=str(tmp_path), repository=["build-pytorch"], branch=["main"], check=True
    )  # clean: no exit
    target = tmp_path / "build-pytorch/main/.flox/pkgs/pytorch-python313-cpu-avx2.nix"
    data = bytearray(target.read_bytes())
    data[-2] = ord("X") if data[-2] != ord("X") else ord("Y")
    target.write_bytes(bytes(data))
    with pytest.raises(CommandError, match="1 files differ") as exc:
        run(output=str(tmp_path), repository=["build-pytorch"], branch=["main"], check=True)
    assert exc.value.returncode == 1
    assert target.read_bytes() == bytes(data)  # --check writes nothing


def test_stale_recipes_are_reported_and_only_the_catalogues_own_are_pruned(tmp_path):
    args = {"output": str(tmp_path), "repository": ["build-torchvision"], "branch": ["cuda-13_0"]}
    run(**args)
    pkgs = tmp_path / "build-torchvision/cuda-13_0/.flox/pkgs"
    mine = pkgs / "torchvision-python313-cuda13_0-sm61-avx.nix"
    mine.write_text("{ }\n")  # a maintainer's own file: no variant, not the catalogue's
    gone = Variant.objects.get(branch__name="cuda-13_0", pname__endswith="sm121-armv9")
    gone.delete()  # its exported file is now claimed by no variant
    stale = pkgs / f"{gone.pname}.nix"
    out = run(**args)
    assert f"stale: {mine}" in out and f"stale: {stale}" in out and "2 stale" in out
    assert mine.exists() and stale.exists()
    out = run(**args, prune=True)
    assert f"pruned: {stale}" in out and "1 stale, 1 pruned" in out
    assert not stale.exists() and mine.read_text() == "{ }\n"


def test_library_filter_exports_only_those_recipes(tmp_path):
    run(output=str(tmp_path), repository=["build-pytorch"], branch=["main"], library=["torchaudio"])
    names = sorted(p.name for p in (tmp_path / "build-pytorch/main/.flox/pkgs").glob("*.nix"))
    assert names == [
        "torchaudio-python313-cuda12_8-sm61-avx.nix",
        "torchaudio-python313-cuda12_8-sm75-avx.nix",
    ]


def test_interrupted_write_leaves_the_old_file(tmp_path, monkeypatch):
    run(output=str(tmp_path), repository=["build-pytorch"], branch=["main"])
    target = tmp_path / "build-pytorch/main/.flox/pkgs/pytorch-python313-cpu-avx2.nix"
    target.write_text("old content\n")

    def interrupted(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sync.os, "replace", interrupted)
    with pytest.raises(CommandError, match="No space left on device"):
        run(output=str(tmp_path), repository=["build-pytorch"], branch=["main"])
    assert target.read_text() == "old content\n"
    assert not list(target.parent.glob(".*.tmp"))  # the temporary file is cleaned up


def test_unknown_branch_is_one_clear_sentence():
    with pytest.raises(
        CommandError, match="Unknown branch 'nope' in build-pytorch; known branches: main,"
    ):
        run(repository=["build-pytorch"], branch=["nope"])


def test_into_a_directory_that_is_not_a_checkout_is_refused(tmp_path):
    (tmp_path / ".git").mkdir()
    with pytest.raises(CommandError, match=r"is not a build-repo checkout \(no \.flox\)"):
        run(into=str(tmp_path), repository=["build-pytorch"], branch=["main"])
    assert list(tmp_path.iterdir()) == [tmp_path / ".git"]


def test_unwritable_target_is_refused_before_writing(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("keep me\n")
    with pytest.raises(CommandError, match="is a file, not a directory"):
        run(output=str(blocker / "export"))
    assert blocker.read_text() == "keep me\n"


def test_manage_py_check_exits_1_in_a_subprocess(tmp_path):
    root = Path(__file__).resolve().parent.parent
    base = [
        sys.executable,
        str(root / "manage.py"),
        "export-recipes",
        "--output",
        str(tmp_path),
        "--repository",
        "build-torchvision",
        "--branch",
        "cuda-13_0",
    ]
    # The subprocess reads the development database, which `make setup` loads from the same seeds.
    done = subprocess.run(base, capture_output=True, text=True, cwd=root)
    assert done.returncode == 0, done.stderr
    assert "14 created" in done.stdout  # 12 recipes, README, BUILD_MATRIX
    matrix = tmp_path / "build-torchvision/cuda-13_0/BUILD_MATRIX.md"
    matrix.write_text(matrix.read_text().replace("12 variants.", "13 variants."))
    checked = subprocess.run(base + ["--check"], capture_output=True, text=True, cwd=root)
    assert checked.returncode == 1 and "would update" in checked.stdout
    bad = subprocess.run(base[:-1] + ["missing"], capture_output=True, text=True, cwd=root)
    assert bad.returncode == 2 and "Unknown branch 'missing'" in bad.stderr


def test_an_impossible_pairing_is_rendered_with_its_own_torch_configuration():
    from catalog.recipes.exporting.nix import render_recipe

    variant = Variant.objects.select_related("branch", "gpu_arch", "cpu_isa").get(
        branch__name="cuda-13_0", pname="torchvision-python313-cuda13_0-sm110-avx2"
    )
    assert variant.depends_on is None
    text = render_recipe(variant)
    assert "# Built against:" not in text
    assert (
        "# Custom PyTorch with the configuration of pytorch-python313-cuda13_0-sm110-avx2" in text
    )
    assert "-mavx2" in text and '"11.0"' in text
