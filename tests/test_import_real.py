"""import-recipes on the recipes the build repositories really hold: one fixture per form, the
whole of ../shared/real-recipes/, files that are not recipes, --dry-run, --git, and the pages,
API and wizard over an imported branch."""

from __future__ import annotations

import shutil
import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from catalog.models import Branch, Variant
from tests.nix_data import BUILD_PYTORCH, BUILD_TORCHVISION, EXAMPLES, need_real

pytestmark = pytest.mark.django_db

FORMS = Path(__file__).parent / "data" / "recipes" / "forms"


def checkout(root: Path, files) -> Path:
    """A checkout at root whose .flox/pkgs holds files (paths, or name -> text)."""
    pkgs = root / ".flox" / "pkgs"
    pkgs.mkdir(parents=True, exist_ok=True)
    items = files.items() if isinstance(files, dict) else ((p.name, p) for p in files)
    for name, content in items:
        target = pkgs / name
        if isinstance(content, Path):
            shutil.copyfile(content, target)
        else:
            target.write_text(content)
    return root


def run(*args, **options) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("import-recipes", *[str(a) for a in args], stdout=out, stderr=err, **options)
    return out.getvalue(), err.getvalue()


def imported(branch: str, stem: str, repository: str = "build-pytorch") -> Variant:
    return Variant.objects.select_related("gpu_arch", "cpu_isa", "depends_on").get(
        branch__repository=repository,
        branch__name=branch,
        recipe_path=f".flox/pkgs/{stem}.nix",
    )


# ---------------------------------------------------------------- one fixture per form


def test_every_form_imports_with_its_fields(tmp_path, client):
    root = checkout(tmp_path / "forms", sorted(FORMS.glob("*.nix")))
    out, _ = run(root, repository="build-pytorch", branch="forms")
    assert "branch created; recipes: 11 created" in out
    cuda = imported("forms", "pytorch-pinned-cuda")
    assert (cuda.recipe_form, cuda.backend, cuda.cuda_version) == ("pytorch-pinned", "cuda", "12.8")
    assert (cuda.gpu_arch.sm, cuda.cpu_isa.slug, cuda.platform) == ("sm61", "avx", "x86_64-linux")
    assert (
        cuda.origin == "imported"
        and cuda.recipe_text == (FORMS / "pytorch-pinned-cuda.nix").read_text()
    )
    mps = imported("forms", "pytorch-pinned-mps")
    assert (mps.backend, mps.platform, mps.blas, mps.cpu_isa) == (
        "mps",
        "aarch64-darwin",
        "veclib",
        None,
    )
    cpu = imported("forms", "pytorch-pinned-cpu")
    assert (cpu.backend, cpu.cpu_isa.slug, cpu.python_version) == ("cpu", "avx2", "3.12")
    unpinned = imported("forms", "pytorch-callpackage")
    assert unpinned.recipe_form == "pytorch-callpackage" and unpinned.nixpkgs_pin == ""
    # A CUDA set named by its major only is that major's .0 release.
    inline = imported("forms", "companion-inline")
    assert (inline.cuda_packages_attr, inline.cuda_version) == ("cudaPackages_13", "13.0")
    assert inline.depends_on is None and inline.torch_version_override == "2.10.0"
    assert imported("forms", "companion-callpackage").gpu_targets == ["sm_90"]
    assert imported("forms", "companion-callpackage").gpu_arch.sm == "sm90"
    remote = imported("forms", "companion-remote")
    assert remote.recipe_form == "companion-remote" and remote.depends_on is None
    # The least a recipe can be is still a variant: no metadata-rev, no ISA, no platforms.
    bare = imported("forms", "bare")
    assert (bare.metadata_rev, bare.cpu_isa, bare.platforms) == (None, None, [])
    # Pages lay out what the grid cannot place (no known ISA) in a row of its own.
    branch_page = client.get(bare.branch.get_absolute_url()).content.decode()
    assert "grid-row-other" in branch_page and "pytorch-bare" in branch_page
    matrix = client.get("/variants/?repository=build-pytorch&branch=build-pytorch/forms&view=grid")
    assert matrix.status_code == 200 and "grid-row-other" in matrix.content.decode()
    assert client.get(bare.get_absolute_url()).status_code == 200


def test_a_sibling_companion_links_to_the_pytorch_it_imports(tmp_path):
    need_real()
    stems = ("pytorch-python312-cuda12_8-sm75-avx", "torchaudio-python312-cuda12_8-sm75-avx")
    root = checkout(tmp_path / "c", [BUILD_PYTORCH / f"{s}.nix" for s in stems])
    run(root, repository="build-pytorch", branch="sibling")
    audio = imported("sibling", stems[1])
    assert audio.recipe_form == "companion-sibling" and audio.depends_on.pname == stems[0]


def test_a_remote_companion_links_to_the_build_pytorch_commit_it_fetches(tmp_path):
    mps = (FORMS / "pytorch-pinned-mps.nix").read_text()
    run(
        checkout(tmp_path / "p", {"pytorch-python313-darwin-mps.nix": mps}),
        repository="build-pytorch",
        branch="pytorch-2.9-remote",
    )
    Branch.objects.filter(name="pytorch-2.9-remote").update(source_commit="72b3d51" + "0" * 33)
    root = checkout(tmp_path / "v", [FORMS / "companion-remote.nix"])
    run(root, repository="build-torchvision", branch="remote")
    companion = imported("remote", "companion-remote", repository="build-torchvision")
    assert companion.depends_on.branch.name == "pytorch-2.9-remote"


# ---------------------------------------------------------------- the real repositories


def real_checkouts(tmp_path: Path) -> list[tuple[Path, str, str]]:
    """(checkout, repository, branch): the two whole branches and one per examples prefix."""
    need_real()
    result = [
        (BUILD_PYTORCH.parent.parent, "build-pytorch", "pytorch-2.8-python312"),
        (BUILD_TORCHVISION.parent.parent, "build-torchvision", "cuda-12_9"),
    ]
    groups: dict[tuple[str, str], list] = {}
    for path in sorted(EXAMPLES.glob("*.nix")):
        repository, branch, name = path.name.split("--")
        groups.setdefault((repository, branch), []).append((name, path))
    for (repository, branch), files in groups.items():
        root = checkout(tmp_path / repository / branch, dict(files))
        result.append((root, repository, f"real-{branch}"))
    return result


def test_the_whole_of_the_real_recipes_imports_with_nothing_refused(tmp_path):
    checkouts = real_checkouts(tmp_path)
    total = 0
    for root, repository, branch in checkouts:
        out, err = run(root, repository=repository, branch=branch)
        assert "skipped" not in out and err == ""
        total += len(list((root / ".flox/pkgs").glob("*.nix")))
    assert total == 62 + 57 + 8
    assert Variant.objects.filter(origin="imported").count() == total
    staging = imported("real-pytorch-2.10-python313", "pytorch-python313-cuda13_1-sm121-armv9")
    assert (staging.cuda_version, staging.gpu_arch.sm, staging.cpu_isa.slug) == (
        "13.1",
        "sm121",
        "armv9",
    )
    assert staging.pname == "pytorch210-python313-cuda13_1-sm121-armv9"  # as written
    both = imported("cuda-12_9", "torchvision-python313-cpu-armv9", "build-torchvision")
    assert both.platforms == ["x86_64-linux", "aarch64-linux"] and both.platform == "aarch64-linux"
    # Idempotent: a second import changes nothing.
    for root, repository, branch in checkouts:
        out, _ = run(root, repository=repository, branch=branch)
        assert "0 created, 0 updated" in out and "0 removed" in out
        assert "branch unchanged" in out


def test_audit_reports_the_real_inconsistencies_of_an_imported_branch(tmp_path, client):
    for root, repository, branch in real_checkouts(tmp_path):
        run(root, repository=repository, branch=branch)
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("audit-catalogue", gate=["imported"], stdout=out)
    text = out.getvalue()
    assert "build-torchvision:cuda-12_9 (imported" in text
    assert "[platforms-as-written] torchvision-python313-cpu-armv9" in text
    assert '[file-name] pytorch-python313-cuda13_1-sm121-armv9: pname is "pytorch210-' in text
    assert "[gpu-targets] torchaudio-python313-cuda12_8-sm90-avx512: 'sm_90'" in text
    page = client.get("/audit/").content.decode()
    assert "real-pytorch-2.10-python313" in page and "pytorch210-python313-cuda13_1" in page


def test_a_recipe_whose_file_is_gone_is_removed_on_reimport(tmp_path):
    need_real()
    root = checkout(tmp_path / "c", sorted(BUILD_PYTORCH.glob("*cuda12_8-sm61*.nix")))
    run(root, repository="build-pytorch", branch="gone")
    count = Variant.objects.filter(branch__name="gone").count()
    victim = sorted((root / ".flox/pkgs").glob("torchvision-*.nix"))[0]
    victim.unlink()
    out, _ = run(root, repository="build-pytorch", branch="gone")
    assert f"removed: .flox/pkgs/{victim.name} — its file is gone" in out and "1 removed" in out
    assert Variant.objects.filter(branch__name="gone").count() == count - 1


# ---------------------------------------------------------------- files that are not recipes


def broken_checkout(tmp_path: Path) -> Path:
    good = (FORMS / "pytorch-pinned-cpu.nix").read_text()
    return checkout(
        tmp_path / "broken",
        {
            "pytorch-pinned-cpu.nix": good,
            "syntax.nix": "{ pkgs }:\nlet\n  x = [ 1 2\nin x\n",
            "not-a-recipe.nix": "{ pkgs }:\n{\n  hello = 1;\n}\n",
            "latin1.nix": "# caf\xe9\n",
        },
    )


def test_every_file_that_is_not_a_recipe_is_reported_and_nothing_imported(tmp_path):
    root = broken_checkout(tmp_path)
    (root / ".flox/pkgs/latin1.nix").write_bytes(b"{ x }:\n# caf\xe9\n")
    with pytest.raises(CommandError) as exc:
        run(root, repository="build-pytorch", branch="broken")
    assert exc.value.returncode == 2
    assert "3 of 4 files in build-pytorch:broken are not recipes" in str(exc.value)
    assert "nothing was imported" in str(exc.value)
    err = StringIO()
    with pytest.raises(CommandError):
        call_command(
            "import-recipes", str(root), repository="build-pytorch", branch="broken", stderr=err
        )
    lines = err.getvalue().splitlines()
    assert [line.split(":")[0] for line in lines] == [
        ".flox/pkgs/latin1.nix",
        ".flox/pkgs/not-a-recipe.nix",
        ".flox/pkgs/syntax.nix",
    ]
    assert lines[0] == ".flox/pkgs/latin1.nix:2: not UTF-8 text"
    assert all(line.split(":")[1].isdigit() for line in lines)
    assert not Branch.objects.filter(name="broken").exists()


def test_skip_invalid_imports_the_recipes_and_lists_the_rest(tmp_path):
    root = broken_checkout(tmp_path)
    out, _ = run(root, repository="build-pytorch", branch="broken", skip_invalid=True)
    assert "skipped: .flox/pkgs/syntax.nix:" in out and "3 skipped (not recipes)" in out
    assert list(Variant.objects.filter(branch__name="broken").values_list("pname", flat=True)) == [
        "pytorch-python312-cpu-avx2"
    ]


def test_dry_run_saves_nothing(tmp_path):
    root = checkout(tmp_path / "c", sorted(FORMS.glob("pytorch-*.nix")))
    out, _ = run(root, repository="build-pytorch", branch="dry", dry_run=True)
    assert out.splitlines()[-1].startswith(
        "dry run (nothing saved): build-pytorch:dry: branch created"
    )
    assert not Branch.objects.filter(name="dry").exists()
    assert not Variant.objects.filter(recipe_path__startswith=".flox/pkgs/pytorch-pinned").exists()


@pytest.mark.parametrize(
    "args, options, message",
    [
        (
            ["/nonexistent/checkout"],
            {"repository": "build-pytorch", "branch": "x"},
            "is not a directory",
        ),
        (["."], {"repository": "build-jax", "branch": "x"}, "Unknown repository 'build-jax'"),
        (["."], {"repository": "build-pytorch", "branch": "x"}, "has no .flox/pkgs directory"),
        (["."], {"branch": "x"}, "Name the checkout's repository and branch"),
    ],
)
def test_command_errors_are_one_sentence(tmp_path, args, options, message):
    with pytest.raises(CommandError, match=message) as exc:
        run(*[tmp_path if a == "." else a for a in args], **options)
    assert exc.value.returncode == 2


# ---------------------------------------------------------------- from git objects


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def two_branch_clone(tmp_path: Path) -> Path:
    """build-pytorch with pytorch-2.8-python312 (real, whole) and pytorch-2.10-python313 (its
    examples), cloned bare; returns the bare clone."""
    need_real()
    src = tmp_path / "build-pytorch"
    src.mkdir()
    git(src, "init", "-q", "-b", "pytorch-2.8-python312")
    shutil.copytree(BUILD_PYTORCH.parent.parent, src, dirs_exist_ok=True)
    git(src, "add", "-A")
    git(src, "commit", "-qm", "2.8")
    git(src, "checkout", "-q", "--orphan", "pytorch-2.10-python313")
    git(src, "rm", "-rqf", ".")
    for path in EXAMPLES.glob("build-pytorch--pytorch-2.10-python313--*.nix"):
        checkout(src, {path.name.split("--")[2]: path.read_text()})
    git(src, "add", "-A")
    git(src, "commit", "-qm", "2.10")
    bare = tmp_path / "clones" / "build-pytorch.git"
    git(tmp_path, "clone", "-q", "--bare", str(src), str(bare))
    return bare


def test_git_import_reads_two_branches_from_a_bare_clone(tmp_path, client):
    bare = two_branch_clone(tmp_path)
    src = tmp_path / "build-pytorch"
    status_before = git(src, "status", "--porcelain")
    out, err = run(bare, git=True)  # repository from the remote URL, every branch
    # The seeded branch gains the three real recipes (their pnames differ from the seeded
    # names); its seeded variants have no file and are kept.
    assert (
        "build-pytorch:pytorch-2.10-python313: branch updated; recipes: 3 created, 0 updated, "
        "0 unchanged, 0 removed, 68 kept" in out
    )
    assert (
        "build-pytorch:pytorch-2.8-python312: branch updated; recipes: 0 created, 62 updated" in out
    )
    assert err == ""  # progress goes to a terminal only
    head = git(bare, "rev-parse", "pytorch-2.10-python313")
    branch = Branch.objects.get(name="pytorch-2.10-python313", repository="build-pytorch")
    assert branch.source_commit == head and {"13.1", "13.0"} <= set(branch.cuda_major_minors)
    page = client.get(branch.get_absolute_url()).content.decode()
    assert head in page and "6a030d535719c5190187c4cec156f335e95e3211" in page
    assert "(2 variants)" in page  # the pin two of its three recipes share
    # Nothing in the source's work tree moved, and a second import changes nothing.
    assert git(src, "status", "--porcelain") == status_before
    again, _ = run(bare, git=True, branch=["pytorch-2.10-python313"])
    assert "branch unchanged; recipes: 0 created, 0 updated, 3 unchanged" in again
    assert again.count("branch unchanged") == 1  # only the branch asked for


def test_git_import_of_a_non_bare_clone_by_branch_with_repository(tmp_path):
    bare = two_branch_clone(tmp_path)
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", "-b", "pytorch-2.8-python312", str(bare), str(work))
    git(work, "remote", "set-url", "origin", "https://example.org/someone/fork.git")
    out, _ = run(work, git=True, repository="build-pytorch", branch=["pytorch-2.10-python313"])
    assert "build-pytorch:pytorch-2.10-python313: branch updated; recipes: 3 created" in out
    assert "pytorch-2.8-python312" not in out
    with pytest.raises(CommandError, match="Cannot tell which repository"):
        run(work, git=True)


@pytest.mark.parametrize(
    "target, options, message",
    [
        ("plain", {}, "is not a git repository"),
        ("clone", {"branch": ["no-such-branch"]}, "has no branch 'no-such-branch'"),
        ("missing", {}, "is not a directory"),
    ],
)
def test_git_errors_are_one_sentence(tmp_path, target, options, message):
    paths = {"plain": tmp_path, "missing": tmp_path / "missing"}
    path = paths.get(target) or two_branch_clone(tmp_path)
    with pytest.raises(CommandError, match=message) as exc:
        run(path, git=True, **options)
    assert exc.value.returncode == 2


# ---------------------------------------------------------------- the rest of the site


def test_an_imported_branch_is_in_the_matrix_api_csv_and_wizard(tmp_path, client):
    need_real()
    root = checkout(tmp_path / "c", sorted(BUILD_PYTORCH.glob("*.nix")))
    run(root, repository="build-pytorch", branch="imported-2.8")
    pname = "pytorch-python312-cuda12_8-sm75-avx2"
    query = "repository=build-pytorch&branch=build-pytorch/imported-2.8"
    assert pname in client.get(f"/variants/?{query}&gpu=sm75").content.decode()
    results = client.get(f"/api/variants?{query}&gpu=sm75&isa=avx2").json()["results"]
    assert [r["pname"] for r in results] == [pname]
    csv = client.get(f"/variants/?{query}&format=csv")
    assert csv["Content-Type"].startswith("text/csv") and pname in csv.content.decode()
    answer = client.get(
        "/api/recommend",
        {
            "gpu": "RTX 2080",
            "cpu_flags": "avx avx2 fma f16c",
            "os": "linux",
            "arch": "x86_64",
            "branch": "imported-2.8",
        },
    ).json()
    assert answer["variant"]["pname"] == pname and answer["variant"]["branch"] == "imported-2.8"
    page = client.get(imported("imported-2.8", pname).get_absolute_url()).content.decode()
    assert 'id="as-written"' in page and 'class="highlight"' in page
    assert "cudaPackages_12_8" in page


class Terminal(StringIO):
    def isatty(self) -> bool:
        return True


def test_git_import_shows_progress_on_a_terminal(tmp_path):
    bare = two_branch_clone(tmp_path)
    err = Terminal()
    call_command("import-recipes", str(bare), git=True, stdout=StringIO(), stderr=err)
    progress = err.getvalue()
    assert "\r\033[K[1/2] build-pytorch:pytorch-2.10-python313 reading…" in progress
    assert "[2/2] build-pytorch:pytorch-2.8-python312 importing…" in progress


def test_a_changed_pname_updates_the_variant_of_that_file(tmp_path):
    root = checkout(tmp_path / "c", sorted(FORMS.glob("pytorch-pinned-*.nix")))
    run(root, repository="build-pytorch", branch="renamed")
    recipe = root / ".flox/pkgs/pytorch-pinned-cpu.nix"
    recipe.write_text(
        recipe.read_text().replace('"pytorch-python312-cpu-avx2"', '"pytorch28-python312-cpu-avx2"')
    )
    out, _ = run(root, repository="build-pytorch", branch="renamed")
    assert "0 created, 1 updated, 2 unchanged, 0 removed" in out
    assert imported("renamed", "pytorch-pinned-cpu").pname == "pytorch28-python312-cpu-avx2"
