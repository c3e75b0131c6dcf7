"""verify-recipes: recipes evaluated against the stand-in nixpkgs and checked against their names.

Each rule has a recipe that breaks it, run through the command. Evaluation needs Debian's
nix-bin (nix-instantiate); without it those tests skip and the pure checks still run.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from catalog.models import CpuIsa, Variant
from catalog.recipes.nix import evaluate, verify

pytestmark = pytest.mark.django_db
NIX = shutil.which("nix-instantiate")
needs_nix = pytest.mark.skipif(
    NIX is None, reason="nix-instantiate (Debian's nix-bin) is not installed"
)
REAL = Path(__file__).resolve().parents[1].parent / "shared" / "real-recipes"
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason=f"{REAL} (the real recipes) is not here")

NAME = "pytorch-python313-cuda12_8-sm90-avx512"
GOOD = """{ pkgs ? import <nixpkgs> {} }:
let
  np = import (builtins.fetchTarball {
    url = "https://github.com/NixOS/nixpkgs/archive/fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3.tar.gz";
  }) {
    config = { allowUnfree = true; cudaSupport = true; };
    overlays = [ (final: prev: { cudaPackages = final.cudaPackages_12_8; }) ];
  };
  gpuArchSM = "9.0";
  cpuFlags = [ "-mavx512f" "-mavx512dq" "-mavx512vl" "-mavx512bw" "-mfma" ];
in
(np.python3Packages.torch.override {
  cudaSupport = true;
  gpuTargets = [ gpuArchSM ];
}).overrideAttrs (oldAttrs: {
  pname = "pytorch-python313-cuda12_8-sm90-avx512";
  passthru = oldAttrs.passthru // { gpuArch = gpuArchSM; };
  preConfigure = (oldAttrs.preConfigure or "") + ''
    export CXXFLAGS="${np.lib.concatStringsSep " " cpuFlags} $CXXFLAGS"
  '';
  meta = oldAttrs.meta // { platforms = [ "x86_64-linux" ]; };
})
"""


def tree(root: Path, recipes: dict) -> Path:
    pkgs = root / ".flox" / "pkgs"
    pkgs.mkdir(parents=True, exist_ok=True)
    for name, text in recipes.items():
        (pkgs / f"{name}.nix").write_text(text)
    return root


def changed(*replacements) -> str:
    text = GOOD
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new)
    return text


def run(*args, **options):
    """(exit code, stdout) of verify-recipes."""
    from io import StringIO

    out = StringIO()
    try:
        call_command(
            "verify-recipes", *[str(a) for a in args], stdout=out, no_color=True, **options
        )
    except CommandError as exc:
        return exc.returncode, out.getvalue() + str(exc)
    return 0, out.getvalue()


def finding_rules(output: str, file_name: str) -> set:
    prefix = f"{file_name}.nix: ["
    return {
        line[len(prefix) :].split("]")[0] for line in output.splitlines() if line.startswith(prefix)
    }


# ---------------------------------------------------------------- each rule, broken


@needs_nix
def test_a_good_recipe_passes(tmp_path):
    code, out = run(tree(tmp_path, {NAME: GOOD}))
    assert code == 0, out
    assert "1 recipes evaluated" in out and "0 with findings" in out


BROKEN = [
    (
        "evaluates",
        NAME,
        [('pname = "', 'pname = undefinedName + "')],
        "undefined variable 'undefinedName'",
    ),
    (
        "evaluates",
        NAME,
        [
            (
                "cudaSupport = true;\n  gpuTargets",
                "cudaArch = 1;\n  cudaSupport = true;\n  gpuTargets",
            )
        ],
        "nixpkgs' torch takes no argument 'cudaArch'",
    ),
    ("evaluates", NAME, [("in\n(np.", "in\n(np.(")], "syntax error"),
    ("name", "my-torch", [], "not a package name"),
    (
        "library",
        "torchvision-python313-cuda12_8-sm90-avx512",
        [('pname = "pytorch-', 'pname = "torchvision-')],
        "It builds torch; the name says torchvision",
    ),
    (
        "file-name",
        NAME,
        [('pname = "pytorch-python313', 'pname = "pytorch210-python313')],
        'pname is "pytorch210-python313-cuda12_8-sm90-avx512", not the file name',
    ),
    (
        "gpu-targets",
        NAME,
        [('gpuArchSM = "9.0"', 'gpuArchSM = "sm_90"')],
        "'sm_90' is not a TORCH_CUDA_ARCH_LIST entry",
    ),
    (
        "gpu-targets",
        NAME,
        [('gpuArchSM = "9.0"', 'gpuArchSM = "8.9"')],
        'GPU target "8.9" is SM89; the name says SM90',
    ),
    # No gpuTargets: nixpkgs builds its default list of architectures.
    ("gpu-targets", NAME, [("  gpuTargets = [ gpuArchSM ];\n", "")], 'GPU target "7.5" is SM75'),
    (
        "cuda",
        NAME,
        [("final.cudaPackages_12_8", "final.cudaPackages_12_9")],
        "built with CUDA 12.9 (cudaPackages_12_9); the name says CUDA 12.8",
    ),
    (
        "cuda",
        NAME,
        [("    overlays = [ (final: prev: { cudaPackages = final.cudaPackages_12_8; }) ];\n", "")],
        "nixpkgs' default CUDA package set (cudaPackages)",
    ),
    (
        "cuda",
        NAME,
        [("cudaSupport = true;\n  gpuTargets", "cudaSupport = false;\n  gpuTargets")],
        "CUDA support is off; the name says CUDA 12.8",
    ),
    (
        "python",
        NAME,
        [("np.python3Packages", "np.python312Packages")],
        "Python 3.12 package set; the name says Python 3.13",
    ),
    ("cxxflags", NAME, [('"-mavx512bw" ', "")], "CXXFLAGS lack -mavx512bw"),
    (
        "cxxflags",
        NAME,
        [('    export CXXFLAGS="${np.lib.concatStringsSep " " cpuFlags} $CXXFLAGS"\n', "")],
        "preConfigure sets no CXXFLAGS",
    ),
    (
        "platforms-as-written",
        NAME,
        [('platforms = [ "x86_64-linux" ]', 'platforms = [ "x86_64-linux" "aarch64-linux" ]')],
        "meta.platforms lists x86_64-linux, aarch64-linux; "
        "the avx512 flags build only for x86_64-linux",
    ),
    # Left to nixpkgs' torch, meta.platforms is every Linux system.
    (
        "platforms-as-written",
        NAME,
        [('  meta = oldAttrs.meta // { platforms = [ "x86_64-linux" ]; };\n', "")],
        "meta.platforms lists aarch64-linux, armv5tel-linux",
    ),
]


@needs_nix
@pytest.mark.parametrize(
    "rule, name, replacements, message", BROKEN, ids=[f"{b[0]}-{i}" for i, b in enumerate(BROKEN)]
)
def test_each_rule_reports_a_recipe_that_breaks_it(tmp_path, rule, name, replacements, message):
    code, out = run(
        tree(tmp_path, {name: changed(*replacements), "pytorch-python313-cpu-avx2": CPU_AVX2})
    )
    assert code == 1, out
    assert finding_rules(out, name) == {rule}, out
    assert message in out
    assert not finding_rules(out, "pytorch-python313-cpu-avx2")  # the other recipe still passes
    assert "1 finding(s) in 1 recipe(s)" in out or rule == "gpu-targets"


CPU_AVX2 = """{ python3Packages, lib }:
python3Packages.torch.overrideAttrs (old: {
  pname = "pytorch-python313-cpu-avx2";
  preConfigure = (old.preConfigure or "") + ''
    export CXXFLAGS="${lib.concatStringsSep " " [ "-mavx2" "-mfma" "-mf16c" ]} $CXXFLAGS"
  '';
  meta = old.meta // { platforms = [ "x86_64-linux" ]; };
})
"""


# ---------------------------------------------------------------- what the stand-in models


def evaluated(tmp_path, recipes: dict) -> dict:
    root = tree(tmp_path, recipes)
    paths = sorted((root / ".flox" / "pkgs").glob("*.nix"))
    return {e.path.stem: e for e in evaluate.evaluate(paths)}


@needs_nix
def test_callpackage_recipes_get_the_stand_in_as_arguments(tmp_path):
    result = evaluated(tmp_path, {"pytorch-python313-cpu-avx2": CPU_AVX2})[
        "pytorch-python313-cpu-avx2"
    ]
    assert result.error == ""
    assert (result.record["kind"], result.record["python"], result.record["pin"]) == (
        "torch",
        "3.13",
        "",
    )
    assert result.record["cudaSupport"] is False


@needs_nix
def test_overlays_apply_and_override_attrs_merge_old_attributes(tmp_path):
    source_override = changed(
        (
            "    overlays = [ (final: prev: { cudaPackages = final.cudaPackages_12_8; }) ];\n",
            """    overlays = [
      (final: prev: { cudaPackages = final.cudaPackages_13; })
      (final: prev: {
        python3Packages = prev.python3Packages.override {
          overrides = pfinal: pprev: {
            torch = pprev.torch.overrideAttrs (old: { version = "2.10.0"; });
          };
        };
      })
    ];
""",
        )
    )
    record = evaluated(tmp_path, {NAME: source_override})[NAME].record
    assert record["version"] == "2.10.0"  # the python3Packages override took effect
    assert (record["cuda"], record["cudaSet"]) == ("13.0", "cudaPackages_13_0")
    assert record["pin"] == "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3"
    assert record["overrideArgs"] == ["cudaSupport", "gpuTargets"]
    # nixpkgs' own preConfigure (gpuTargets into TORCH_CUDA_ARCH_LIST) comes first, then the
    # recipe's.
    script = record["preConfigure"]
    assert script.index('export TORCH_CUDA_ARCH_LIST="9.0"') < script.index(
        'export CXXFLAGS="-mavx512f'
    )


@needs_nix
def test_override_after_override_attrs_keeps_the_attribute_overrides(tmp_path):
    text = changed(
        (
            "(np.python3Packages.torch.override {",
            '((np.python3Packages.torch.overrideAttrs (o: { version = "9"; })).override {',
        ),
    )
    result = evaluated(tmp_path, {NAME: text})[NAME]
    assert (
        result.error == ""
        and result.record["version"] == "9"
        and result.record["targets"] == ["9.0"]
    )


@needs_nix
def test_companions_import_siblings_through_the_same_scope(tmp_path):
    audio = "torchaudio-python313-cuda12_8-sm90-avx512"
    companion = f"""{{ pkgs ? import <nixpkgs> {{}} }}:
let
  np = import (builtins.fetchTarball {{
    url = "https://github.com/NixOS/nixpkgs/archive/fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3.tar.gz";
  }}) {{
    config.cudaSupport = true;
    overlays = [ (final: prev: {{ cudaPackages = final.cudaPackages_12_8; }}) ];
  }};
  customPytorch = import ./{NAME}.nix {{ inherit pkgs; }};
in
(np.python3Packages.torchaudio.override {{ torch = customPytorch; }}).overrideAttrs (old: {{
  pname = "{audio}";
  preConfigure = ''export CXXFLAGS="-mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma"'';
  meta = old.meta // {{ platforms = [ "x86_64-linux" ]; }};
}})
"""
    record = evaluated(tmp_path, {NAME: GOOD, audio: companion})[audio].record
    assert record["kind"] == "torchaudio" and record["targets"] == ["9.0"]
    assert record["torch"]["pname"] == NAME and record["torch"]["cuda"] == "12.8"
    code, out = run(tmp_path)
    assert code == 0, out
    (tmp_path / ".flox" / "pkgs" / f"{NAME}.nix").unlink()
    code, out = run(tmp_path)
    assert code == 1 and finding_rules(out, audio) == {"evaluates"}


@needs_nix
def test_companion_override_arguments_nixpkgs_lacks_are_refused(tmp_path):
    text = (
        "{ pkgs ? import <nixpkgs> {} }: "
        'pkgs.python3Packages.torchvision.override { gpuTargets = [ "9.0" ]; }'
    )
    result = evaluated(tmp_path, {"torchvision-python313-cuda12_8-sm90-avx512": text})
    assert (
        "nixpkgs' torchvision takes no argument 'gpuTargets'"
        in result["torchvision-python313-cuda12_8-sm90-avx512"].error
    )


@needs_nix
def test_a_pytorch_fetched_from_another_repository_is_noted_not_fetched(tmp_path):
    text = """{ pkgs ? import <nixpkgs> {} }:
let
  np = import (builtins.fetchTarball {
    url = "https://github.com/NixOS/nixpkgs/archive/6a030d535719c5190187c4cec156f335e95e3211.tar.gz";
  }) {};
  src = builtins.fetchTarball {
    url = "https://github.com/barstoolbluz/build-pytorch/archive/72b3d51.tar.gz";
  };
  customPytorch = import "${src}/.flox/pkgs/pytorch-python313-darwin-mps.nix" {};
in
(np.python3Packages.torchvision.override { torch = customPytorch; }).overrideAttrs (old: {
  pname = "torchvision-python313-darwin-mps";
  meta = old.meta // { platforms = [ "aarch64-darwin" ]; };
})
"""
    code, out = run(tree(tmp_path, {"torchvision-python313-darwin-mps": text}))
    assert code == 0, out
    assert (
        "not checked: Its PyTorch comes from https://github.com/barstoolbluz/build-pytorch/archive/72b3d51"
        in out
    )


# ---------------------------------------------------------------- bounded, isolated, offline


@needs_nix
def test_failures_are_reported_per_file_and_the_rest_still_evaluate(tmp_path):
    names = [
        f"pytorch-python313-cpu-{isa}" for isa in ("avx", "avx2", "avx512", "avx512bf16", "armv9")
    ]
    recipes = {name: CPU_AVX2.replace("pytorch-python313-cpu-avx2", name) for name in names}
    recipes[names[0]] = 'throw "broken on purpose"'
    recipes[names[2]] = "{ pkgs ? import <nixpkgs> {} }: pkgs.nothingHere"
    recipes[names[4]] = "let x = x; in x"
    by_name = {
        e.path.stem: e
        for e in evaluate.evaluate(
            [tree(tmp_path, recipes) / ".flox" / "pkgs" / f"{n}.nix" for n in names], jobs=1
        )
    }
    assert "broken on purpose" in by_name[names[0]].error
    assert "attribute 'nothingHere' missing" in by_name[names[2]].error
    assert "infinite recursion" in by_name[names[4]].error
    assert (
        by_name[names[1]].record["pname"] == names[1]
        and by_name[names[3]].record["pname"] == names[3]
    )


@needs_nix
def test_a_recipe_that_never_finishes_is_stopped_and_the_next_one_still_checked(tmp_path):
    endless = "let f = n: if n == 0 then 0 else f (n - 1) + f (n - 1); in f 200"
    code, out = run(
        tree(
            tmp_path, {"pytorch-python313-cpu-avx": endless, "pytorch-python313-cpu-avx2": CPU_AVX2}
        ),
        timeout=1,
        jobs=1,
    )
    assert code == 1
    assert "pytorch-python313-cpu-avx.nix: [evaluates] evaluation did not finish within 1 s" in out
    assert not finding_rules(out, "pytorch-python313-cpu-avx2")


@needs_nix
def test_recipes_cannot_read_outside_their_folder_or_fetch(tmp_path):
    recipes = {
        "pytorch-python313-cpu-avx": "builtins.readFile /etc/passwd",
        "pytorch-python313-cpu-avx2": 'builtins.fetchurl "https://example.invalid/x"',
        "pytorch-python313-cpu-avx512": "import <other>",
    }
    results = evaluated(tmp_path, recipes)
    assert "forbidden in restricted mode" in results["pytorch-python313-cpu-avx"].error
    # Fetches become markers: nothing is downloaded, and a string is not a package.
    assert results["pytorch-python313-cpu-avx2"].record == {"kind": "other", "type": "string"}
    assert (
        "<other> is not in the stand-in's search path"
        in results["pytorch-python313-cpu-avx512"].error
    )


@pytest.mark.parametrize(
    "args, options, message",
    [
        (["/nonexistent/checkout"], {}, "does not exist"),
        ([__file__], {}, "is not a folder"),
        (["{empty}"], {}, "holds no .nix recipes and has no .flox/pkgs folder"),
        (["{empty}"], {"jobs": 0}, "--jobs takes a number from 1 to 64"),
        (["{empty}"], {"timeout": -1}, "--timeout takes seconds"),
    ],
)
def test_bad_input_exits_2_with_a_sentence(tmp_path, args, options, message):
    args = [a.replace("{empty}", str(tmp_path)) for a in args]
    code, out = run(*args, **options)
    assert code == 2 and message in out


def test_an_empty_catalogue_cannot_check_flags(tmp_path):
    Variant.objects.exclude(library="pytorch").delete()
    Variant.objects.all().delete()
    CpuIsa.objects.all().delete()
    code, out = run(tree(tmp_path, {NAME: GOOD}))
    assert code == 2 and "run load-catalogue first" in out


def test_without_nix_instantiate_the_command_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(evaluate, "nix_instantiate", lambda: None)
    code, out = run(tree(tmp_path, {NAME: GOOD}))
    assert code == 2 and "install Nix (Debian: apt-get install nix-bin)" in out


# ---------------------------------------------------------------- the pure checks

FLAGS = {
    "avx512": ["-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw", "-mfma"],
    "avx2": ["-mavx2"],
}
RECORD = {
    "kind": "torch",
    "pname": NAME,
    "python": "3.13",
    "cudaSupport": True,
    "cuda": "12.8",
    "cudaSet": "cudaPackages_12_8",
    "targets": ["9.0"],
    "platforms": ["x86_64-linux"],
    "torch": None,
    "preConfigure": 'export TORCH_CUDA_ARCH_LIST="9.0"\n'
    'export CXXFLAGS="-mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma $CXXFLAGS"',
}


@pytest.mark.parametrize(
    "change, rule",
    [
        ({}, None),
        ({"kind": "torchvision"}, "library"),
        ({"pname": None}, "file-name"),
        ({"python": "3.11"}, "python"),
        ({"cuda": "13.0", "cudaSet": "cudaPackages_13_0"}, "cuda"),
        (
            {
                "preConfigure": 'export TORCH_CUDA_ARCH_LIST="9.0+PTX;10.0"\n'
                'CXXFLAGS="-mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma"'
            },
            "gpu-targets",
        ),
        (
            {"preConfigure": 'export TORCH_CUDA_ARCH_LIST="9.0a"\nexport CXXFLAGS="-mavx2"'},
            "cxxflags",
        ),
        ({"platforms": None}, "platforms-as-written"),
        ({"platforms": []}, "platforms-as-written"),
    ],
)
def test_check_record_rules(change, rule):
    findings, notes = verify.check_record(NAME, {**RECORD, **change}, FLAGS)
    assert [r for r, _ in findings] == ([rule] if rule else [])


def test_a_recipes_last_torch_cuda_arch_list_wins():
    record = {
        **RECORD,
        "targets": ["7.5", "8.0"],
        "preConfigure": RECORD["preConfigure"] + '\nexport TORCH_CUDA_ARCH_LIST="9.0"',
    }
    assert verify.check_record(NAME, record, FLAGS) == ([], [])


def test_every_rule_is_documented_in_the_command_help():
    from django.core.management import load_command_class

    help_text = load_command_class("catalog", "verify-recipes").help
    assert all(description in help_text for description in verify.RULES.values())


# ---------------------------------------------------------------- real trees


@needs_nix
def test_a_full_export_verifies_with_no_findings(tmp_path):
    from io import StringIO

    out = StringIO()
    call_command("export-recipes", output=str(tmp_path), verify=True, stdout=out, no_color=True)
    lines = [line for line in out.getvalue().splitlines() if "recipes evaluated" in line]
    assert len(lines) == 11 and all("0 with findings" in line for line in lines)
    assert sum(int(line.split(": ")[1].split()[0]) for line in lines) == Variant.objects.count()


@needs_nix
def test_export_recipes_verify_fails_on_a_broken_recipe(tmp_path):
    call_command(
        "export-recipes", output=str(tmp_path), repository=["build-pytorch"], branch=["main"]
    )
    recipe = (
        tmp_path
        / "build-pytorch"
        / "main"
        / ".flox"
        / "pkgs"
        / "pytorch-python313-cuda12_8-sm90-avx512.nix"
    )
    recipe.write_text(recipe.read_text().replace('gpuArchSM = "9.0"', 'gpuArchSM = "sm_90"'))
    with pytest.raises(CommandError) as exc:
        call_command(
            "export-recipes",
            output=str(tmp_path),
            repository=["build-pytorch"],
            branch=["main"],
            check=True,
            verify=True,
            stdout=open("/dev/null", "w"),
        )
    assert exc.value.returncode == 1 and "1 finding(s) in 1 recipe(s)" in str(exc.value)


@needs_nix
@needs_real
def test_the_real_pytorch_2_8_python312_branch_has_one_defect():
    code, out = run(REAL / "build-pytorch" / "pytorch-2.8-python312")
    assert code == 1
    assert "62 recipes evaluated" in out and "1 with findings (1 findings)" in out
    assert finding_rules(out, "pytorch-python312-cpu-avx2") == {"platforms-as-written"}


@needs_nix
@needs_real
def test_the_real_torchvision_cuda_12_9_branch_inherits_every_platform():
    code, out = run(REAL / "build-torchvision" / "cuda-12_9")
    rules = {line.split(": [")[1].split("]")[0] for line in out.splitlines() if ".nix: [" in line}
    assert code == 1 and rules == {"platforms-as-written"}
    assert "57 recipes evaluated" in out and "55 with findings" in out


@needs_nix
@needs_real
def test_the_real_examples_show_their_defects(tmp_path):
    # examples/ names each file <repository>--<branch>--<file>: lay them out as checkouts.
    for path in (REAL / "examples").glob("*.nix"):
        checkout, _, name = path.name.rpartition("--")
        pkgs = tmp_path / checkout / ".flox" / "pkgs"
        pkgs.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, pkgs / name)
    isa_flags = dict(CpuIsa.objects.values_list("slug", "compiler_flags"))
    found = {
        (checkout.name, finding.path.stem, finding.rule)
        for checkout in tmp_path.iterdir()
        for finding in verify.verify(checkout, isa_flags).findings
    }
    assert found == {
        # callPackage recipes get whatever CUDA the caller's nixpkgs defaults to
        ("build-pytorch--main-staging", "pytorch-python313-cuda12_8-sm90-avx512", "cuda"),
        ("build-torchaudio--main", "torchaudio-python313-cuda12_8-sm90-avx512", "cuda"),
        # gpuArchSM = "sm_90": PyTorch refuses it
        ("build-torchaudio--main", "torchaudio-python313-cuda12_8-sm90-avx512", "gpu-targets"),
        # pname "pytorch210-…" in pytorch-python313-….nix
        ("build-pytorch--pytorch-2.10-python313", "pytorch-python313-cpu-armv8_2", "file-name"),
        (
            "build-pytorch--pytorch-2.10-python313",
            "pytorch-python313-cuda13_0-sm90-avx512",
            "file-name",
        ),
        (
            "build-pytorch--pytorch-2.10-python313",
            "pytorch-python313-cuda13_1-sm121-armv9",
            "file-name",
        ),
    }


@needs_nix
@needs_real
@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv"),
    reason="needs root and setpriv to switch users",
)
def test_evaluation_works_as_an_unprivileged_user_without_a_home():
    python = shutil.which("python3", path="/usr/bin:/bin")
    if (
        python is None
        or subprocess.run(
            [python, "-c", "import sys; assert sys.version_info >= (3, 11)"]
        ).returncode
    ):
        pytest.skip("no system Python 3.11+ that the unprivileged user can run")
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; "
        "from catalog.recipes.nix import evaluate; "
        "results = evaluate.evaluate(sorted(Path(sys.argv[2]).glob('*.nix'))); "
        "print(sum(r.record is not None for r in results), len(results))"
    )
    recipes = REAL / "build-pytorch" / "pytorch-2.8-python312" / ".flox" / "pkgs"
    result = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "env",
            "-i",
            "PATH=/usr/bin:/bin",
            "HOME=/nonexistent",
            python,
            "-c",
            script,
            str(Path(__file__).resolve().parents[1]),
            str(recipes),
        ],
        capture_output=True,
        text=True,
        cwd="/",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["62", "62"]


@needs_nix
def test_a_checkout_path_with_an_equals_sign_and_spaces_is_read(tmp_path):
    root = tmp_path / "a=b c"
    code, out = run(tree(root, {NAME: GOOD}))
    assert code == 0, out
