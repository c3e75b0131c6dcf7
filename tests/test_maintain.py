"""Maintainers' jobs on a real branch (../shared/real-recipes, pytorch-2.8-python312, in a tmp git
checkout): nothing set in the catalogue is lost on re-import, and each edit exports as exactly
its own lines."""

from __future__ import annotations

import re
from html import unescape
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils.html import escape

from catalog.audit import run_audit
from catalog.models import Branch, Variant

from .export_data import PYTORCH_2_8, commit_all, export_tree, git, import_tree, real_checkout

OLD_PIN = "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3"
NEW_PIN = "0123456789abcdef0123456789abcdef01234567"
THEIR_PIN = "89abcdef0123456789abcdef0123456789abcdef"
SM90_AVX512 = "pytorch-python312-cuda12_8-sm90-avx512"

pytestmark = pytest.mark.django_db


@pytest.fixture
def checkout(tmp_path):
    root = real_checkout(tmp_path, *PYTORCH_2_8)
    import_tree(root, *PYTORCH_2_8)
    return root


def variant(pname: str) -> Variant:
    return Variant.objects.get(
        branch__repository=PYTORCH_2_8[0], branch__name=PYTORCH_2_8[1], pname=pname
    )


def reimport(root: Path, **options) -> str:
    out = StringIO()
    call_command(
        "import-recipes",
        str(root),
        repository=PYTORCH_2_8[0],
        branch=[PYTORCH_2_8[1]],
        stdout=out,
        stderr=StringIO(),
        **options,
    )
    return out.getvalue()


def export(root: Path, **options) -> str:
    return export_tree(root, *PYTORCH_2_8, **options)


def diff_lines(root: Path) -> dict[str, list[str]]:
    """File -> its changed lines ("-old", "+new") in the work tree against HEAD."""
    files: dict[str, list[str]] = {}
    current = ""
    for line in git(root, "diff", "-U0", "--no-color").splitlines():
        if line.startswith("+++ b/"):
            current = line[len("+++ b/") :]
            files[current] = []
        elif not line.startswith(("---", "+++", "@@", "diff ", "index ")):
            files[current].append(line)
    return files


def edit_file(root: Path, pname: str, old: str, new: str) -> None:
    path = root / ".flox" / "pkgs" / f"{pname}.nix"
    path.write_text(path.read_text().replace(old, new, 1))


# ---------------------------------------------------------------- re-import keeps edits


def test_notes_use_case_and_status_set_in_the_catalogue_survive_a_reimport(checkout):
    chosen = variant(SM90_AVX512)
    chosen.notes, chosen.use_case, chosen.status = "Tested on H100.", "H100 training", "built"
    chosen.save()
    out = reimport(checkout)
    assert "0 updated, 62 unchanged" in out and "conflict" not in out
    chosen.refresh_from_db()
    assert (chosen.notes, chosen.use_case, chosen.status) == (
        "Tested on H100.",
        "H100 training",
        "built",
    )


def test_a_pin_changed_in_the_catalogue_stays_and_exports_as_its_one_line(checkout):
    chosen = variant(SM90_AVX512)
    chosen.nixpkgs_pin = NEW_PIN
    chosen.metadata_rev = 7
    chosen.save()
    assert "62 unchanged" in reimport(checkout)  # the checkout changed neither
    chosen.refresh_from_db()
    assert (chosen.nixpkgs_pin, chosen.metadata_rev) == (NEW_PIN, 7)


def test_a_field_changed_only_in_the_checkout_is_taken(checkout):
    edit_file(checkout, SM90_AVX512, OLD_PIN, THEIR_PIN)
    out = reimport(checkout)
    assert f"updated: .flox/pkgs/{SM90_AVX512}.nix" in out and "1 updated" in out
    assert variant(SM90_AVX512).nixpkgs_pin == THEIR_PIN
    assert export(checkout, check=True)  # the catalogue now says what the checkout holds


def test_a_field_changed_on_both_sides_keeps_the_catalogue_value_and_exits_3(checkout):
    chosen = variant(SM90_AVX512)
    chosen.nixpkgs_pin = NEW_PIN
    chosen.save()
    edit_file(checkout, SM90_AVX512, OLD_PIN, THEIR_PIN)
    expected = (
        f"conflict: .flox/pkgs/{SM90_AVX512}.nix: nixpkgs_pin: catalogue {NEW_PIN}, "
        f"checkout {THEIR_PIN} (the catalogue's value kept)"
    )
    for options in ({"dry_run": True}, {}):
        out = StringIO()
        with pytest.raises(CommandError, match="1 fields were changed both") as failed:
            call_command(
                "import-recipes",
                str(checkout),
                repository=PYTORCH_2_8[0],
                branch=[PYTORCH_2_8[1]],
                stdout=out,
                stderr=StringIO(),
                **options,
            )
        assert failed.value.returncode == 3
        assert expected in out.getvalue().splitlines()
        assert variant(SM90_AVX512).nixpkgs_pin == NEW_PIN
    # The checkout's text is the new base: exporting writes the kept value over theirs.
    commit_all(checkout, "their pin")
    export(checkout)
    line = pin_line(checkout, SM90_AVX512, THEIR_PIN)
    assert diff_lines(checkout) == {
        f".flox/pkgs/{SM90_AVX512}.nix": [f"-{line}", f"+{line.replace(THEIR_PIN, NEW_PIN)}"]
    }


def test_edits_survive_reloading_the_seeds_and_reimporting_and_export_as_their_lines(checkout):
    out = edit(
        *("--where", f"pname={SM90_AVX512}"),
        *("--set", f"nixpkgs_pin={NEW_PIN}", "--set", "metadata_rev=3"),
        *("--set", "use_case=H100 fine-tuning", "--set", "notes=Tested.", "--set", "status=built"),
        *("--set", 'cpu_flags=["-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw"]'),
    )
    assert "1 variants matched, 1 changed" in out
    loaded = StringIO()
    call_command("load-catalogue", verbosity=2, stdout=loaded)
    assert f"kept (differs from the seeds): {':'.join(PYTORCH_2_8)}: {SM90_AVX512}: use_case" in (
        loaded.getvalue().splitlines()
    )
    assert "62 unchanged" in reimport(checkout)
    chosen = variant(SM90_AVX512)
    assert (chosen.nixpkgs_pin, chosen.metadata_rev, chosen.use_case, chosen.notes) == (
        NEW_PIN,
        3,
        "H100 fine-tuning",
        "Tested.",
    )
    assert (chosen.status, chosen.cpu_flags[-1]) == ("built", "-mavx512bw")
    export(checkout)
    line = pin_line(checkout, SM90_AVX512, OLD_PIN)
    assert diff_lines(checkout) == {
        f".flox/pkgs/{SM90_AVX512}.nix": [
            f"-{line}",
            f"+{line.replace(OLD_PIN, NEW_PIN)}",
            '-    "-mfma"        # Fused multiply-add',
            "+    postInstall = (oldAttrs.postInstall or \"\") + ''",
            "+      echo 3 > $out/.metadata-rev",
            "+    '';",
            "+",
        ]
    }


def pin_line(root: Path, pname: str, pin: str) -> str:
    """The line of the recipe at HEAD that holds pin."""
    text = git(root, "show", f"HEAD:.flox/pkgs/{pname}.nix")
    return next(line for line in text.splitlines() if pin in line)


# ---------------------------------------------------------------- edit-variants


def edit(*args: str) -> str:
    out = StringIO()
    call_command(
        "edit-variants",
        "--repository",
        PYTORCH_2_8[0],
        "--branch",
        PYTORCH_2_8[1],
        *args,
        stdout=out,
        stderr=StringIO(),
    )
    return out.getvalue()


def test_a_pin_bump_on_the_sm90_variants_exports_as_one_line_per_recipe(checkout):
    out = edit(
        "--where",
        "gpu_arch=sm90",
        "--where",
        "cuda_version=12.8",
        "--set",
        f"nixpkgs_pin={NEW_PIN}",
    )
    sm90 = sorted(
        Variant.objects.filter(branch__name=PYTORCH_2_8[1], gpu_arch__sm="sm90").values_list(
            "pname", flat=True
        )
    )
    assert len(sm90) > 1
    assert out.splitlines()[:-1] == [f"{p}: nixpkgs_pin: {OLD_PIN} → {NEW_PIN}" for p in sm90]
    assert out.splitlines()[-1].endswith(f"{len(sm90)} variants matched, {len(sm90)} changed")
    export(checkout)
    expected = {}
    for pname in sm90:
        line = pin_line(checkout, pname, OLD_PIN)
        expected[f".flox/pkgs/{pname}.nix"] = [f"-{line}", f"+{line.replace(OLD_PIN, NEW_PIN)}"]
    assert diff_lines(checkout) == expected


def test_metadata_rev_and_status_edits_and_a_second_run_changes_nothing(checkout):
    out = edit(
        "--where", f"pname={SM90_AVX512}", "--set", "metadata_rev=2", "--set", "status=built"
    )
    assert (
        f"{SM90_AVX512}: metadata_rev: (none) → 2" in out
        and f"{SM90_AVX512}: status: recipe → built" in out
    )
    assert "1 variants matched, 0 changed" in edit(
        "--where", f"pname={SM90_AVX512}", "--set", "metadata_rev=2"
    )
    export(checkout)
    assert list(diff_lines(checkout)) == [f".flox/pkgs/{SM90_AVX512}.nix"]


SEEDED = ("build-pytorch", "pytorch-2.10-python313")  # CUDA 13.0, from the seeds


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "colour=red"], "'colour', which is not a variant field"),
        (
            ["--where", "backend=cuda", "--set", "gpu_arch=sm61"],
            "SM61 needs CUDA ≥ 8.0 and ≤ 12.9; CUDA 13.0 cannot",
        ),
        (["--set", "status=shipped"], "'shipped' is not a valid choice"),
        (["--set", "metadata_rev=two"], "metadata_rev=two"),
        (["--set", "cpu_flags=-mavx2"], "cpu_flags takes JSON"),
        (["--where", "cuda_version=9.9", "--set", "status=built"], "No variant of"),
        (["--where", "cuda_version", "--set", "status=built"], "is not FIELD=VALUE"),
        ([], "Nothing to set"),
    ],
)
def test_refused_edits_say_why_and_write_nothing(args, message):
    fields = ("pname", "gpu_arch", "status", "metadata_rev", "cpu_flags")
    before = sorted(Variant.objects.values_list(*fields))
    with pytest.raises(CommandError, match=message) as refused:
        call_command(
            "edit-variants",
            *("--repository", SEEDED[0], "--branch", SEEDED[1], *args),
            stdout=StringIO(),
            stderr=StringIO(),
        )
    assert refused.value.returncode == 2
    assert sorted(Variant.objects.values_list(*fields)) == before


def test_a_change_export_cannot_write_in_place_is_refused(checkout):
    with pytest.raises(CommandError, match="export could not write") as refused:
        edit("--where", "cuda_version=12.8", "--set", "gpu_arch=sm61")
    assert refused.value.returncode == 2
    assert variant("pytorch-python312-cuda12_8-sm120-armv8_2").gpu_arch.sm == "sm120"
    assert variant(SM90_AVX512).gpu_arch.sm == "sm90"


# ---------------------------------------------------------------- add / drop an architecture


def arch_command(name: str, *args: str) -> str:
    out = StringIO()
    call_command(
        name,
        *("--repository", PYTORCH_2_8[0], "--branch", PYTORCH_2_8[1], *args),
        stdout=out,
        stderr=StringIO(),
    )
    return out.getvalue()


def against_sibling(root: Path, new: str, sibling: str) -> list[str]:
    """The lines of the new file that differ from its sibling's: ("-old", "+new")."""
    import difflib

    old = (root / ".flox" / "pkgs" / f"{sibling}.nix").read_text().splitlines()
    text = (root / ".flox" / "pkgs" / f"{new}.nix").read_text().splitlines()
    return [
        line
        for line in difflib.unified_diff(old, text, lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("---", "+++"))
    ]


SM75_AVX2 = "pytorch-python312-cuda12_8-sm75-avx2"
SM70_AVX2 = SM75_AVX2.replace("sm75", "sm70")
# How the SM70 AVX2 recipe derived from SM75's differs from it, line by line.
SM70_AVX2_CHANGES = [
    "-# PyTorch optimized for NVIDIA Turing (SM75: T4, RTX 2080 Ti) + AVX2",
    f"-# Package name: {SM75_AVX2}",
    "+# PyTorch optimized for NVIDIA Volta (SM70: Quadro GV100, Titan V, V100) + AVX2",
    f"+# Package name: {SM70_AVX2}",
    "-  # GPU target: SM75 (Turing architecture - T4, RTX 2080 Ti, Quadro RTX 8000)",
    "-  # PyTorch's CMake accepts numeric format (7.5) not sm_75",
    '-  gpuArchNum = "7.5";',
    "+  # GPU target: SM70 (Volta architecture - Quadro GV100, Titan V, V100)",
    "+  # PyTorch's CMake accepts numeric format (7.0) not sm_70",
    '+  gpuArchNum = "7.0";',
    f'-    pname = "{SM75_AVX2}";',
    f'+    pname = "{SM70_AVX2}";',
    '-      echo "GPU Target: ${gpuArchNum} (Turing: T4, RTX 2080 Ti, Quadro RTX 8000)"',
    '+      echo "GPU Target: ${gpuArchNum} (Volta: Quadro GV100, Titan V, V100)"',
    '-      description = "PyTorch for NVIDIA T4/RTX 2080 Ti (SM75, Turing) + AVX2";',
    '+      description = "PyTorch for NVIDIA V100 (SM70, Volta) + AVX2";',
    "-        - GPU: NVIDIA Turing architecture (SM75) - T4, RTX 2080 Ti, Quadro RTX 8000",
    "+        - GPU: NVIDIA Volta architecture (SM70) - Quadro GV100, Titan V, V100",
    "-        - CUDA: 12.8 with compute capability 7.5",
    "+        - CUDA: 12.8 with compute capability 7.0",
    "-        - GPU: T4, RTX 2080 Ti, RTX 2080 Super, Quadro RTX 8000, or other SM75 GPUs",
    "+        - GPU: Quadro GV100, Titan V, V100, or other SM70 GPUs",
    "-        - Driver: NVIDIA 418+ required",
    "+        - Driver: NVIDIA 384+ required",
    "-        Choose this if: You have T4/RTX 2080 Ti-class GPU and want maximum CPU",
    "+        Choose this if: You have V100-class GPU and want maximum CPU",
]


def test_an_added_architecture_differs_from_its_sibling_only_in_the_lines_naming_it(checkout):
    out = arch_command("add-architecture", "sm70", "--like", "sm75")
    assert out.splitlines()[-1].startswith(f"{PYTORCH_2_8[0]}:{PYTORCH_2_8[1]}: 9 variants added")
    assert "9 created, 0 updated, 62 unchanged" in export(checkout)
    assert against_sibling(checkout, SM70_AVX2, SM75_AVX2) == SM70_AVX2_CHANGES
    companion = "torchvision-python312-cuda12_8-sm75-avx"
    assert against_sibling(checkout, companion.replace("sm75", "sm70"), companion)[4:] == [
        '-  gpuArchSM = "7.5";',
        '+  gpuArchSM = "7.0";',
        "-  customPytorch = import ./pytorch-python312-cuda12_8-sm75-avx.nix {};",
        "+  customPytorch = import ./pytorch-python312-cuda12_8-sm70-avx.nix {};",
        f'-    pname = "{companion}";',
        f'+    pname = "{companion.replace("sm75", "sm70")}";',
        '-      echo "GPU Target: ${gpuArchSM} (Turing: T4, RTX 2080 Ti, Quadro RTX 8000)"',
        '+      echo "GPU Target: ${gpuArchSM} (Volta: Quadro GV100, Titan V, V100)"',
        '-      echo "PyTorch: custom AVX-only build (sm75-avx)"',
        '+      echo "PyTorch: custom AVX-only build (sm70-avx)"',
        '-      description = "Torchvision for NVIDIA T4/RTX 2080 Ti (SM75, Turing) with AVX";',
        '+      description = "Torchvision for NVIDIA V100 (SM70, Volta) with AVX";',
        "-        Custom torchvision build matching the pytorch-python312-cuda12_8-sm75-avx"
        " variant:",
        "-        - GPU: NVIDIA Turing architecture (SM75) - T4, RTX 2080 Ti, Quadro RTX 8000",
        "+        Custom torchvision build matching the pytorch-python312-cuda12_8-sm70-avx"
        " variant:",
        "+        - GPU: NVIDIA Volta architecture (SM70) - Quadro GV100, Titan V, V100",
        "-        - CUDA: 12.8 with compute capability 7.5",
        "+        - CUDA: 12.8 with compute capability 7.0",
        "-        This build imports and links against the corresponding PyTorch SM75-AVX recipe,",
        "+        This build imports and links against the corresponding PyTorch SM70-AVX recipe,",
    ]
    # Every file: each removed line names SM75 and each added line SM70 (by SM token, compute
    # capability, family, GPU model or driver); no other line differs.
    old_words = ("SM75", "sm75", "sm_75", "7.5", "Turing", "T4", "418")
    new_words = ("SM70", "sm70", "sm_70", "7.0", "Volta", "V100", "384")
    for new in Variant.objects.filter(branch__name=PYTORCH_2_8[1], gpu_arch__sm="sm70"):
        changed = against_sibling(checkout, new.pname, new.pname.replace("sm70", "sm75"))
        assert changed
        for line in changed:
            words = old_words if line[0] == "-" else new_words
            assert any(word in line for word in words), line
        assert new.depends_on is None or new.depends_on.gpu_arch.sm == "sm70"
    # Read back, the new files are what the catalogue holds.
    assert "0 updated, 71 unchanged" in reimport(checkout)


def test_an_architecture_the_branch_cuda_cannot_build_is_refused(checkout):
    with pytest.raises(CommandError, match=r"SM103 needs CUDA ≥ 12.9; .* builds CUDA 12.8") as e:
        arch_command("add-architecture", "sm103", "--like", "sm90")
    assert e.value.returncode == 2
    assert not Variant.objects.filter(branch__name=PYTORCH_2_8[1], gpu_arch__sm="sm103").exists()
    with pytest.raises(CommandError, match="already has SM90 variants"):
        arch_command("add-architecture", "sm90", "--like", "sm89")


def test_a_dropped_architecture_leaves_stale_files_that_prune_deletes(checkout):
    # A dry run with -v 2 prints each deletion --prune would make, and removes nothing.
    dry = arch_command("drop-architecture", "sm61", "--dry-run", "-v", "2").splitlines()
    source = (checkout / ".flox/pkgs/torchvision-python312-cuda12_8-sm61-avx.nix").read_text()
    start = dry.index("--- a/.flox/pkgs/torchvision-python312-cuda12_8-sm61-avx.nix")
    assert dry[start + 1 : start + 3] == [
        "+++ /dev/null",
        f"@@ -1,{len(source.splitlines())} +0,0 @@",
    ]
    assert dry[-1].startswith("dry run (nothing saved): ") and dry[-1].endswith(
        "4 variants dropped"
    )
    assert Variant.objects.filter(branch__name=PYTORCH_2_8[1], gpu_arch__sm="sm61").count() == 4
    out = arch_command("drop-architecture", "sm61")
    assert out.splitlines()[-1].endswith("4 variants dropped")
    assert "4 stale" in export(checkout)
    export(checkout, prune=True)
    deleted = sorted(
        line[3:] for line in git(checkout, "status", "--porcelain").splitlines() if line[:2] == " D"
    )
    assert deleted == [
        f".flox/pkgs/{lib}-python312-cuda12_8-sm61-{isa}.nix"
        for lib, isa in (
            ("pytorch", "avx"),
            ("pytorch", "avx2"),
            ("torchaudio", "avx"),
            ("torchvision", "avx"),
        )
    ]


# ---------------------------------------------------------------- derive a branch

NEW_BRANCH = "pytorch-2.11-python313"
SM90_AVX512_313 = SM90_AVX512.replace("python312", "python313")
# How the derived branch's SM90 AVX-512 recipe differs from its source, line by line.
DERIVED_SM90_CHANGES = [
    f"-# Package name: {SM90_AVX512}",
    f"+# Package name: {SM90_AVX512_313}",
    f'-    url = "https://github.com/NixOS/nixpkgs/archive/{OLD_PIN}.tar.gz";',
    f'+    url = "https://github.com/NixOS/nixpkgs/archive/{NEW_PIN}.tar.gz";',
    "-  (nixpkgs_pinned.python312Packages.torch.override {",
    "+  (nixpkgs_pinned.python313Packages.torch.override {",
    f'-    pname = "{SM90_AVX512}";',
    f'+    pname = "{SM90_AVX512_313}";',
    "-        - Python: 3.12",
    "+        - Python: 3.13",
]


def test_a_derived_branch_is_the_source_texts_with_names_python_and_pins_edited(checkout):
    out = StringIO()
    call_command(
        "derive-branch",
        *("--repository", PYTORCH_2_8[0], "--branch", PYTORCH_2_8[1], NEW_BRANCH),
        *("--set", "pytorch_version=2.11", "--set", "python_version=3.13"),
        *("--pin", f"12.8={NEW_PIN}", "--drop-architecture", "sm61"),
        stdout=out,
        stderr=StringIO(),
    )
    assert (
        out.getvalue()
        .strip()
        .endswith(
            "58 variants, 4 dropped; export-recipes --into a checkout of the new branch writes them"
        )
    )
    # A checkout of the new git branch, its recipes removed: export writes every one anew.
    git(checkout, "checkout", "-q", "-b", NEW_BRANCH)
    git(checkout, "rm", "-q", "-r", ".flox/pkgs")
    (checkout / ".flox" / "pkgs").mkdir(parents=True)
    commit_all(checkout, "start")
    call_command(
        "export-recipes",
        into=str(checkout),
        repository=[PYTORCH_2_8[0]],
        branch=[NEW_BRANCH],
        stdout=StringIO(),
        stderr=StringIO(),
    )
    files = sorted(p.name for p in (checkout / ".flox" / "pkgs").glob("*.nix"))
    assert len(files) == 58 and all("python313" in f and "sm61" not in f for f in files)
    new = SM90_AVX512.replace("python312", "python313")
    source = git(checkout, "show", f"HEAD~1:.flox/pkgs/{SM90_AVX512}.nix").splitlines()
    import difflib

    text = (checkout / ".flox" / "pkgs" / f"{new}.nix").read_text().splitlines()
    changed = [
        line
        for line in difflib.unified_diff(source, text, lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("---", "+++"))
    ]
    assert changed == DERIVED_SM90_CHANGES
    # Every file: each changed line names the Python version or the pin, nothing else differs.
    for name in files:
        before = git(checkout, "show", f"HEAD~1:.flox/pkgs/{name.replace('313', '312')}")
        after = (checkout / ".flox" / "pkgs" / name).read_text()
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), n=0):
            if line[:1] in "+-" and not line.startswith(("---", "+++")):
                words = ("python312", "3.12", OLD_PIN) if line[0] == "-" else ("python313", "3.13")
                assert any(word in line for word in (*words, NEW_PIN)), (name, line)
    derived = Variant.objects.get(branch__name=NEW_BRANCH, pname=new)
    assert (derived.python_version, derived.nixpkgs_pin, derived.branch.pytorch_version) == (
        "3.13",
        NEW_PIN,
        "2.11",
    )
    companion = Variant.objects.get(
        branch__name=NEW_BRANCH, pname="torchvision-python313-cuda12_8-sm75-avx"
    )
    assert companion.depends_on.pname == "pytorch-python313-cuda12_8-sm75-avx"
    assert "import ./pytorch-python313-cuda12_8-sm75-avx.nix {};" in companion.recipe_text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "python_version=three"], "Enter a Python version like 3.13"),
        (["--set", "colour=red"], "--set colour is not a branch field"),
        (["--pin", "12.9=abc1234"], "builds CUDA 12.8, not 12.9"),
        (["--drop-architecture", "sm99"], "sm99 is not a catalogued GPU architecture"),
    ],
)
def test_a_refused_derivation_says_why_and_writes_nothing(args, message):
    with pytest.raises(CommandError, match=message) as refused:
        call_command(
            "derive-branch",
            *("--repository", "build-pytorch", "--branch", "pytorch-2.8-python312", NEW_BRANCH),
            *args,
            stdout=StringIO(),
            stderr=StringIO(),
        )
    assert refused.value.returncode == 2
    assert not Variant.objects.filter(branch__name=NEW_BRANCH).exists()


# ---------------------------------------------------------------- pending changes


def test_check_diff_prints_the_diff_export_would_write_and_writes_nothing(checkout):
    edit("--where", f"pname={SM90_AVX512}", "--set", f"nixpkgs_pin={NEW_PIN}")
    out = StringIO()
    with pytest.raises(CommandError) as check:
        call_command(
            "export-recipes",
            into=str(checkout),
            repository=[PYTORCH_2_8[0]],
            branch=[PYTORCH_2_8[1]],
            check=True,
            diff=True,
            stdout=out,
            stderr=StringIO(),
        )
    assert check.value.returncode == 1
    line = pin_line(checkout, SM90_AVX512, OLD_PIN)
    changed = [
        text
        for text in out.getvalue().splitlines()
        if text[:1] in "+-" and not text.startswith(("---", "+++"))
    ]
    assert changed == [f"-{line}", f"+{line.replace(OLD_PIN, NEW_PIN)}"]
    assert f"--- a/.flox/pkgs/{SM90_AVX512}.nix" in out.getvalue()
    assert git(checkout, "status", "--porcelain") == ""


def test_the_pending_page_shows_the_diff_and_the_branch_findings_to_staff_only(
    checkout, client, admin_client
):
    edit("--where", f"pname={SM90_AVX512}", "--set", f"nixpkgs_pin={NEW_PIN}")
    url = f"/branches/{PYTORCH_2_8[0]}/{PYTORCH_2_8[1]}/pending/"
    assert client.get(url).status_code == 302  # to the admin's login
    page = admin_client.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    line = pin_line(checkout, SM90_AVX512, OLD_PIN)
    assert escape(f"-{line}") in html and escape(f"+{line.replace(OLD_PIN, NEW_PIN)}") in html
    assert "1 edited, 0 that cannot be edited in place" in html
    branch_lint = next(b for b in run_audit().lint if b.name == ":".join(PYTORCH_2_8))
    assert branch_lint.findings  # the real branch has defects the audit names
    assert all(escape(f.message) in html for f in branch_lint.findings)
    assert (
        admin_client.get(f"/branches/{PYTORCH_2_8[0]}/no-such-branch/pending/").status_code == 404
    )


# ---------------------------------------------------------------- the admin's action


def test_the_admin_action_previews_then_saves_on_confirm(admin_client):
    chosen = list(
        Variant.objects.filter(
            branch__repository=SEEDED[0], branch__name=SEEDED[1], gpu_arch__sm="sm90"
        ).order_by("pname")[:2]
    )
    url = "/admin/catalog/variant/"
    base = {"action": "edit_selected", "_selected_action": [v.pk for v in chosen]}
    job = {**base, "_job": "1"}
    form = admin_client.post(url, base)
    assert form.status_code == 200 and b"Preview the changes" in form.content
    preview = admin_client.post(url, {**job, "field": "metadata_rev", "value": "5", "preview": "1"})
    html = preview.content.decode()
    assert "2 of 2 variants change" in html and f"<h2>{chosen[0].pname}</h2>" in html
    assert all(Variant.objects.get(pk=v.pk).metadata_rev == v.metadata_rev for v in chosen)
    done = admin_client.post(url, {**job, "field": "metadata_rev", "value": "5", "confirm": "1"})
    assert done.status_code == 302
    assert [Variant.objects.get(pk=v.pk).metadata_rev for v in chosen] == [5, 5]


def test_the_admin_action_shows_a_refusal_and_saves_nothing(admin_client):
    chosen = Variant.objects.filter(
        branch__repository=SEEDED[0], branch__name=SEEDED[1], gpu_arch__sm="sm90"
    ).first()
    page = admin_client.post(
        "/admin/catalog/variant/",
        {
            "action": "edit_selected",
            "_job": "1",
            "_selected_action": [chosen.pk],
            "field": "gpu_arch",
            "value": "sm61",
            "confirm": "1",
        },
    )
    assert page.status_code == 200
    assert escape("SM61 needs CUDA ≥ 8.0 and ≤ 12.9; CUDA 13.0 cannot build it") in (
        page.content.decode()
    )
    assert Variant.objects.get(pk=chosen.pk).gpu_arch.sm == "sm90"


def test_an_added_isa_differs_from_its_sibling_in_flags_name_comments_and_descriptions(checkout):
    # The real branch has AVX-512 VNNI already: drop it, then derive it from AVX-512 again.
    Variant.objects.filter(branch__name=PYTORCH_2_8[1], cpu_isa__slug="avx512vnni").delete()
    out = arch_command("add-architecture", "--isa", "avx512vnni", "--like", "avx512")
    assert out.splitlines()[-1].startswith(f"{PYTORCH_2_8[0]}:{PYTORCH_2_8[1]}: 8 variants added")
    export(checkout)
    new = SM90_AVX512 + "vnni"
    assert against_sibling(checkout, new, SM90_AVX512) == [
        "-# PyTorch optimized for NVIDIA Hopper (SM90: H100, L40S) + AVX-512",
        f"-# Package name: {SM90_AVX512}",
        "+# PyTorch optimized for NVIDIA Hopper (SM90: H100, L40S) + AVX-512 VNNI",
        f"+# Package name: {new}",
        "-  # CPU optimization: AVX-512",
        "+  # CPU optimization: AVX-512 VNNI",
        '+    "-mavx512vnni"',
        f'-    pname = "{SM90_AVX512}";',
        f'+    pname = "{new}";',
        '-      cpuISA = "avx512";',
        '+      cpuISA = "avx512vnni";',
        '-      echo "CPU Features: AVX-512"',
        '+      echo "CPU Features: AVX-512 VNNI"',
        "-        - CPU: x86-64 with AVX-512 instruction set",
        "+        - CPU: x86-64 with AVX-512 VNNI instruction set",
        "-        - CPU: Intel Skylake-X+ (2017+), AMD Zen 4+ (2022+) with AVX-512",
        "+        - CPU: Intel Cascade Lake+ (2019+), AMD Zen 4+ (2022+) with AVX-512 VNNI",
        "-        Choose this if: You have H100/L40S datacenter GPUs with AVX-512 CPUs",
        "+        Choose this if: You have H100/L40S datacenter GPUs with AVX-512 VNNI CPUs",
    ]
    # Every file: each removed line names AVX-512 and each added one AVX-512 VNNI (slug, label,
    # hardware or the added flag); no other line differs.
    for derived in Variant.objects.filter(branch__name=PYTORCH_2_8[1], cpu_isa__slug="avx512vnni"):
        changed = against_sibling(checkout, derived.pname, derived.pname.removesuffix("vnni"))
        assert changed
        for line in changed:
            words = (
                ("avx512", "AVX-512", "Skylake-X")
                if line[0] == "-"
                else ("vnni", "VNNI", "Cascade Lake")
            )
            assert any(word in line for word in words), (derived.pname, line)
    assert variant(new).cpu_flags == [
        "-mavx512f",
        "-mavx512dq",
        "-mavx512vl",
        "-mavx512bw",
        "-mavx512vnni",
        "-mfma",
    ]
    with pytest.raises(CommandError, match="avx2 is an x86_64 ISA and armv9 an aarch64 one"):
        arch_command("add-architecture", "--isa", "avx2", "--like", "armv9")


# ---------------------------------------------------------------- the branch jobs in the admin

BRANCH_ADMIN = "/admin/catalog/branch/"


def branch_job(admin_client, action: str, **fields):
    """POST the branch admin's action for the real branch: no fields is the form, fields with
    preview=1 the preview, with confirm=1 the write."""
    branch = Branch.objects.get(repository=PYTORCH_2_8[0], name=PYTORCH_2_8[1])
    data = {"action": action, "_selected_action": [branch.pk]}
    if fields:
        data = {**data, "_job": "1", **fields}
    return admin_client.post(BRANCH_ADMIN, data)


def previewed(page, path: str) -> list[str]:
    """The changed lines ("-old", "+new") of the diff the preview shows under a file."""
    html = page.content.decode()
    heading = html.index(f"<h2>{path}</h2>")
    diff = re.search(r'<pre class="export-diff">(.*?)</pre>', html[heading:], re.S)[1]
    return [
        line
        for line in unescape(diff).splitlines()
        if line[:1] in "+-" and not line.startswith(("---", "+++"))
    ]


def test_the_admin_adds_an_architecture_after_a_preview_of_each_new_recipe(checkout, admin_client):
    form = branch_job(admin_client, "add_architecture")
    assert form.status_code == 200 and b"Preview the changes" in form.content
    fields = {"kind": "architecture", "new": "sm70", "like": "sm75"}
    preview = branch_job(admin_client, "add_architecture", **fields, preview="1")
    assert preview.status_code == 200
    assert "9 variants added" in preview.content.decode()
    assert previewed(preview, f".flox/pkgs/{SM70_AVX2}.nix") == SM70_AVX2_CHANGES
    assert f"--- a/.flox/pkgs/{SM75_AVX2}.nix" in preview.content.decode()
    assert not Variant.objects.filter(gpu_arch__sm="sm70", branch__name=PYTORCH_2_8[1]).exists()
    done = branch_job(admin_client, "add_architecture", **fields, confirm="1")
    assert done.status_code == 302
    assert "9 variants added" in admin_client.get(BRANCH_ADMIN).content.decode()
    assert "9 created, 0 updated, 62 unchanged" in export(checkout)
    assert against_sibling(checkout, SM70_AVX2, SM75_AVX2) == SM70_AVX2_CHANGES


def test_the_admin_shows_a_refused_job_on_its_form_and_writes_nothing(checkout, admin_client):
    before = Variant.objects.count()
    page = branch_job(
        admin_client, "add_architecture", kind="architecture", new="sm103", like="sm90", confirm="1"
    )
    assert page.status_code == 200
    assert escape(
        "SM103 needs CUDA ≥ 12.9; build-pytorch:pytorch-2.8-python312 builds CUDA 12.8"
    ) in (page.content.decode())
    page = branch_job(admin_client, "drop_architecture", sm="sm99", confirm="1")
    assert page.status_code == 200 and "sm99 is not a catalogued GPU architecture" in (
        page.content.decode()
    )
    page = branch_job(
        admin_client,
        "derive_branch",
        name=NEW_BRANCH,
        pytorch_version="2.11",
        python_version="three",
        confirm="1",
    )
    assert page.status_code == 200 and "Enter a Python version like 3.13" in page.content.decode()
    page = branch_job(
        admin_client, "derive_branch", name=NEW_BRANCH, pytorch_version="2.11", pins="12.9=abc1234"
    )
    assert "builds CUDA 12.8, not 12.9" in page.content.decode()
    assert Variant.objects.count() == before
    assert not Branch.objects.filter(name=NEW_BRANCH).exists()
    # One branch at a time: two selected is a message on the list.
    both = Branch.objects.filter(repository="build-pytorch")[:2]
    listed = admin_client.post(
        BRANCH_ADMIN,
        {"action": "drop_architecture", "_selected_action": [b.pk for b in both]},
        follow=True,
    )
    assert "Select exactly one branch for this job." in listed.content.decode()


def test_the_admin_drops_an_architecture_after_a_preview_of_the_stale_recipes(
    checkout, admin_client
):
    preview = branch_job(admin_client, "drop_architecture", sm="sm61", preview="1")
    path = ".flox/pkgs/pytorch-python312-cuda12_8-sm61-avx.nix"
    source = (checkout / path).read_text().splitlines()
    assert previewed(preview, path) == [f"-{line}" for line in source]
    assert "+++ /dev/null" in preview.content.decode()
    assert Variant.objects.filter(gpu_arch__sm="sm61", branch__name=PYTORCH_2_8[1]).count() == 4
    assert branch_job(admin_client, "drop_architecture", sm="sm61", confirm="1").status_code == 302
    assert not Variant.objects.filter(gpu_arch__sm="sm61", branch__name=PYTORCH_2_8[1]).exists()
    assert "4 stale" in export(checkout)


def test_the_admin_derives_a_branch_after_a_preview_of_each_recipe(checkout, admin_client):
    fields = {
        "name": NEW_BRANCH,
        "pytorch_version": "2.11",
        "python_version": "3.13",
        "pins": f"12.8={NEW_PIN}",
        "drop": "sm61",
    }
    preview = branch_job(admin_client, "derive_branch", **fields, preview="1")
    assert "58 variants, 4 dropped" in preview.content.decode()
    assert previewed(preview, f".flox/pkgs/{SM90_AVX512_313}.nix") == DERIVED_SM90_CHANGES
    assert not Branch.objects.filter(name=NEW_BRANCH).exists()
    assert branch_job(admin_client, "derive_branch", **fields, confirm="1").status_code == 302
    derived = Variant.objects.get(branch__name=NEW_BRANCH, pname=SM90_AVX512_313)
    assert (derived.nixpkgs_pin, derived.branch.pytorch_version) == (NEW_PIN, "2.11")
    assert Variant.objects.filter(branch__name=NEW_BRANCH).count() == 58


def test_a_staff_member_who_may_only_view_branches_cannot_run_a_job(checkout, client):
    from django.contrib.auth.models import Permission, User

    viewer = User.objects.create_user("viewer", password="x", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_branch"))
    client.force_login(viewer)
    assert client.get(BRANCH_ADMIN).status_code == 200
    page = branch_job(client, "drop_architecture", sm="sm61", confirm="1")
    assert page.status_code in (200, 302)
    assert Variant.objects.filter(gpu_arch__sm="sm61", branch__name=PYTORCH_2_8[1]).count() == 4
