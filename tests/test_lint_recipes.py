"""lint-recipes PATH: lint and stand-in evaluation over a build repository checkout with no
database (these tests have no database access: any query would fail them) and no network."""

import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

REAL = Path(__file__).resolve().parents[1].parent / "shared" / "real-recipes"
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason=f"{REAL} (the real recipes) is not here")
PYTORCH_28 = REAL / "build-pytorch" / "pytorch-2.8-python312"
CLEAN = "pytorch-python312-cuda12_8-sm90-avx512"
HAS_NIX = shutil.which("nix-instantiate") is not None


def run(*args: str) -> tuple[int, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("lint-recipes", *map(str, args), stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode, out.getvalue() + str(exc)
    return 0, out.getvalue() + err.getvalue()


def checkout(tmp_path: Path, files: dict[str, str]) -> Path:
    pkgs = tmp_path / "repo" / ".flox" / "pkgs"
    pkgs.mkdir(parents=True)
    for name, text in files.items():
        (pkgs / f"{name}.nix").write_text(text)
    return tmp_path / "repo"


def clean_text() -> str:
    return (PYTORCH_28 / ".flox" / "pkgs" / f"{CLEAN}.nix").read_text()


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


@needs_real
@pytest.mark.skipif(not HAS_NIX, reason="nix-instantiate is not installed")
def test_the_real_pytorch_branch_has_one_finding_at_its_line():
    code, output = run(PYTORCH_28)
    assert code == 1
    path = PYTORCH_28 / ".flox" / "pkgs" / "pytorch-python312-cpu-avx2.nix"
    line = line_of(path.read_text(), "platforms = [")
    assert (
        f"{path}:{line}: platforms-as-written: It lists x86_64-linux, aarch64-linux; its avx2 "
        "build runs only on x86_64-linux." in output
    )
    assert "62 recipe(s) checked, 1 finding(s) in 1 file(s)." in output


@needs_real
def test_github_format_gives_workflow_annotations():
    code, output = run(PYTORCH_28, "--format", "github", "--skip-evaluation")
    assert code == 1
    [annotation] = [line for line in output.splitlines() if line.startswith("::")]
    assert annotation.startswith("::error file=") and "pytorch-python312-cpu-avx2.nix" in annotation
    assert ",line=" in annotation and ",title=platforms-as-written::It lists" in annotation


@needs_real
@pytest.mark.skipif(not HAS_NIX, reason="nix-instantiate is not installed")
def test_a_clean_checkout_exits_0(tmp_path):
    code, output = run(checkout(tmp_path, {CLEAN: clean_text()}))
    assert code == 0, output
    assert "1 recipe(s) checked, 0 finding(s)" in output


@needs_real
def test_a_gpu_target_no_architecture_has_is_found_at_its_line(tmp_path):
    text = clean_text().replace('gpuArchSM = "9.0";', 'gpuArchSM = "9.9";')
    code, output = run(checkout(tmp_path, {CLEAN: text}), "--skip-evaluation")
    assert code == 1
    assert f"{CLEAN}.nix:{line_of(text, 'gpuArchSM = ')}: gpu-targets: " in output


@needs_real
def test_a_name_that_disagrees_with_the_recipe_is_found(tmp_path):
    other = CLEAN.replace("sm90", "sm89")
    code, output = run(checkout(tmp_path, {other: clean_text()}), "--skip-evaluation")
    assert code == 1
    text = clean_text()
    assert f"{other}.nix:{line_of(text, 'pname = ')}: file-name: " in output


@needs_real
def test_a_cuda_version_that_cannot_build_the_architecture_is_found(tmp_path):
    name = "pytorch-python312-cuda13_0-sm61-avx512"
    text = (
        clean_text()
        .replace(CLEAN, name)
        .replace("cudaPackages_12_8", "cudaPackages_13_0")
        .replace('gpuArchSM = "9.0";', 'gpuArchSM = "6.1";')
    )
    code, output = run(checkout(tmp_path, {name: text}), "--skip-evaluation")
    assert code == 1
    assert f"{name}.nix:{line_of(text, 'cudaPackages_13_0')}: cuda-bounds: " in output
    assert "13.0" in output


def test_a_file_that_is_not_a_recipe_is_a_finding_with_its_line(tmp_path):
    code, output = run(
        checkout(tmp_path, {"pytorch-python313-cpu-avx2": "{ pkgs }:\n\n  let x = 1; in\n  x )\n"}),
        "--skip-evaluation",
    )
    assert code == 1
    assert "pytorch-python313-cpu-avx2.nix:4: reads: Cannot read the recipe" in output
    assert "`)` closes nothing opened before it" in output


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: tmp, "holds no .nix recipes"),
        (lambda tmp: tmp / "missing", "does not exist"),
    ],
)
def test_no_recipes_exits_2(tmp_path, make, message):
    code, output = run(make(tmp_path))
    assert code == 2 and message in output


@needs_real
def test_unreadable_seeds_exit_2(tmp_path):
    code, output = run(PYTORCH_28, "--seeds", tmp_path, "--skip-evaluation")
    assert code == 2 and "Cannot read the seed file" in output


@needs_real
def test_without_nix_instantiate_it_exits_2_and_says_how_to_skip(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    code, output = run(checkout(tmp_path, {CLEAN: clean_text()}))
    assert code == 2 and "--skip-evaluation" in output
