"""The lint of every branch: each rule with a variant that breaks it, the seeded catalogue passing
its own lint, and the lint in audit-catalogue and on /audit/."""

import re
import shutil
from dataclasses import replace
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from catalog import audit, audit_store, naming
from catalog.lint import RULES, ArchFacts, VariantRecord, expected_platforms, lint
from catalog.models import Branch, GpuArchitecture, Variant
from catalog.recipes.nix import evaluate

ARCHS = {
    "sm61": ArchFacts("sm61", "8.0", "12.9"),
    "sm90": ArchFacts("sm90", "11.8"),
    "sm103": ArchFacts("sm103", "12.9"),
    "sm121": ArchFacts("sm121", "12.9", "", "aarch64"),
}
PNAME = "pytorch-python313-cuda12_8-sm90-avx512"
GOOD = VariantRecord(
    "build-pytorch",
    "main",
    PNAME,
    PNAME,
    "pytorch",
    "cuda",
    "12.8",
    "sm90",
    "avx512",
    ("x86_64-linux",),
    ("9.0",),
    "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3",
)
AUDIO = "torchaudio-python313-cuda12_8-sm90-avx512"
COMPANION = replace(GOOD, pname=AUDIO, file_name=AUDIO, library="torchaudio", pytorch_recipe=PNAME)


def named(record: VariantRecord) -> VariantRecord:
    """The record under the name its fields compose (so only the rule under test breaks)."""
    name = naming.compose(
        record.library, "3.13", record.backend, record.cuda_version, record.sm, record.isa
    )
    return replace(record, pname=name, file_name=name)


def rules_of(*records, archs=ARCHS):
    return {(f.variant, f.rule) for f in lint(records, archs)}


def test_a_good_variant_and_its_companion_pass():
    assert lint([GOOD, COMPANION], ARCHS) == []


BROKEN = [
    (
        "cuda-bounds",
        named(replace(GOOD, sm="sm103", gpu_targets=("10.3",))),
        "SM103 needs CUDA 12.9 or newer; CUDA 12.8 cannot target it.",
    ),
    (
        "cuda-bounds",
        named(replace(GOOD, sm="sm61", cuda_version="13.0", gpu_targets=("6.1",))),
        "CUDA 13.0 no longer targets SM61 (the last CUDA for it is 12.9).",
    ),
    (
        "cuda-bounds",
        named(replace(GOOD, sm="sm999", gpu_targets=("99.9",))),
        "No architecture 'sm999' in the catalogue.",
    ),
    (
        "arm-only-gpu",
        named(replace(GOOD, sm="sm121", cuda_version="13.0", gpu_targets=("12.1",))),
        "SM121 is built into an aarch64 system, so an x86_64 ISA (avx512) cannot run beside it.",
    ),
    (
        "file-name",
        replace(GOOD, pname="pytorch210-python313-cuda12_8-sm90-avx512"),
        f'pname is "pytorch210-python313-cuda12_8-sm90-avx512" in {PNAME}.nix.',
    ),
    (
        "platforms-as-written",
        replace(GOOD, platforms=("x86_64-linux", "aarch64-linux")),
        "It lists x86_64-linux, aarch64-linux; its avx512 build runs only on x86_64-linux.",
    ),
    (
        "gpu-targets",
        replace(GOOD, gpu_targets=("sm_90",)),
        "'sm_90' is not a TORCH_CUDA_ARCH_LIST entry",
    ),
    ("gpu-targets", replace(GOOD, gpu_targets=("9.0", "8.9")), '"8.9" is SM89, not SM90.'),
    ("gpu-targets", replace(GOOD, gpu_targets=()), "The recipe sets no GPU target."),
    ("nixpkgs-pin", replace(GOOD, nixpkgs_pin=""), "No nixpkgs pin"),
    (
        "name-parts",
        replace(GOOD, sm="sm61", gpu_targets=("6.1",)),
        "The name says GPU architecture sm90 but the recipe builds sm61.",
    ),
    (
        "name-parts",
        replace(GOOD, file_name="pytorch-py313-sm90", pname="pytorch-py313-sm90"),
        "pytorch-py313-sm90.nix does not follow the naming convention.",
    ),
    (
        "companion-pytorch",
        replace(COMPANION, pytorch_recipe="pytorch-python313-cuda12_8-sm90-avx2"),
        "It imports pytorch-python313-cuda12_8-sm90-avx2.nix, which the branch does not have.",
    ),
]


@pytest.mark.parametrize(
    "rule, record, message", BROKEN, ids=[f"{b[0]}-{i}" for i, b in enumerate(BROKEN)]
)
def test_each_rule_reports_a_variant_that_breaks_it(rule, record, message):
    findings = lint([GOOD, record] if record.library != "pytorch" else [record], ARCHS)
    assert [(f.variant, f.rule) for f in findings] == [(record.file_name, rule)]
    assert message in findings[0].message


def test_an_arm_system_gpu_on_an_x86_platform_breaks_two_rules():
    record = named(
        replace(
            GOOD,
            sm="sm121",
            cuda_version="13.0",
            isa="armv9",
            gpu_targets=("12.1",),
            platforms=("x86_64-linux",),
        )
    )
    name = record.file_name
    assert rules_of(record) == {(name, "arm-only-gpu"), (name, "platforms-as-written")}


def test_a_planned_variant_may_wait_for_its_pin():
    assert lint([replace(GOOD, nixpkgs_pin="", planned=True)], ARCHS) == []


def test_mps_and_cpu_platforms():
    mps = replace(
        GOOD,
        pname="pytorch-python313-darwin-mps",
        file_name="pytorch-python313-darwin-mps",
        backend="mps",
        cuda_version="",
        sm="",
        isa="",
        gpu_targets=(),
        platforms=("aarch64-darwin",),
    )
    assert expected_platforms("mps", "") == ("aarch64-darwin",) and lint([mps], ARCHS) == []
    assert rules_of(replace(mps, platforms=("aarch64-linux",))) == {
        (mps.file_name, "platforms-as-written")
    }
    assert expected_platforms("cpu", "armv8_2") == ("aarch64-linux",)


# ---------------------------------------------------------------- the catalogue's own lint

pytestmark = pytest.mark.django_db


def test_the_seeded_catalogue_passes_its_own_lint():
    result = audit.run_audit()
    # Its only findings are cuda-13_0's eight x86 pairings of SM110/SM121, which the repository
    # holds and a claim records: shown, and none gates.
    assert result.ok and result.gating_lint == []
    found = [(b.name, f.rule) for b in result.lint for f in b.findings]
    assert found == [("build-torchvision:cuda-13_0", "arm-only-gpu")] * 8
    assert len(result.lint) == Branch.objects.count() and all(b.gates for b in result.lint)


def test_lint_records_are_the_rendered_recipes():
    records = {(r.repository, r.branch, r.file_name): r for r in audit.lint_records()}
    assert len(records) == Variant.objects.count()
    sm121 = records[
        ("build-pytorch", "pytorch-2.10-python313", "pytorch-python313-cuda13_0-sm121-armv9")
    ]
    assert (sm121.gpu_targets, sm121.platforms, sm121.planned) == (
        ("12.1",),
        ("aarch64-linux",),
        True,
    )
    audio = records[("build-pytorch", "main", "torchaudio-python313-cuda12_8-sm75-avx")]
    assert audio.pytorch_recipe == "pytorch-python313-cuda12_8-sm75-avx"
    assert audio.nixpkgs_pin == "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3"


def test_architecture_facts_carry_the_bounds_and_arm_hosts():
    facts = audit.architecture_facts()
    assert (facts["sm121"].min_cuda, facts["sm121"].host_arch) == ("12.9", "aarch64")
    assert (facts["sm110"].min_cuda, facts["sm110"].host_arch) == ("13.0", "aarch64")
    assert (facts["sm61"].max_cuda, facts["sm70"].max_cuda, facts["sm103"].min_cuda) == (
        "12.9",
        "12.9",
        "12.9",
    )
    assert facts["sm90"].host_arch == ""
    assert set(facts) == set(GpuArchitecture.objects.values_list("sm", flat=True))


PLANTED = "pytorch-python313-cuda12_9-sm121-avx"


def plant_arm_gpu_with_x86():
    """pytorch-2.9-python313's SM120 + AVX variant turned into SM121 + AVX: valid for the model
    (CUDA 12.9 targets SM121), but DGX Spark has no x86 CPU. Nothing depends on the AVX build."""
    Variant.objects.filter(
        branch__name="pytorch-2.9-python313", pname="pytorch-python313-cuda12_9-sm120-avx"
    ).update(
        gpu_arch=GpuArchitecture.objects.get(sm="sm121"),
        pname=PLANTED,
    )
    audit_store.refresh_all()  # a bulk update sends no signals: store the findings anew


def audit_command(*gate):
    out, err = StringIO(), StringIO()
    options = {"gate": list(gate)} if gate else {}
    try:
        call_command("audit-catalogue", stdout=out, stderr=err, no_color=True, **options)
        code = 0
    except CommandError as exc:
        code, err = exc.returncode, StringIO(str(exc))
    return code, out.getvalue(), err.getvalue()


def test_a_lint_finding_in_a_seeded_branch_fails_the_audit():
    plant_arm_gpu_with_x86()
    code, out, err = audit_command()
    assert code == 1
    assert "New findings: 0" in out  # nothing else is wrong: the variant validates
    assert "- build-pytorch:pytorch-2.9-python313 (seeded; gates the exit code): 1" in out
    assert (
        f"[arm-only-gpu] {PLANTED}: SM121 is built into an aarch64 system, so an x86_64 ISA (avx)"
        in out
    )
    assert "1 lint finding(s) in gating branches" in err


def test_an_imported_branchs_findings_are_shown_without_failing_the_audit(monkeypatch):
    plant_arm_gpu_with_x86()
    monkeypatch.setattr(
        audit, "branch_imported", lambda branch: branch.name == "pytorch-2.9-python313"
    )
    code, out, _ = audit_command()
    assert code == 0
    assert (
        "- build-pytorch:pytorch-2.9-python313 (imported; shown, does not gate the exit code): 1"
        in out
    )
    assert audit_command("all")[0] == 1
    assert audit_command("imported")[0] == 1
    assert audit_command("build-pytorch:pytorch-2.9-python313")[0] == 1
    assert audit_command("build-pytorch:main")[0] == 0


def test_gate_none_and_an_unknown_gate():
    plant_arm_gpu_with_x86()
    assert audit_command("none")[0] == 0
    code, _, err = audit_command("build-pytorch:no-such-branch")
    assert code == 2 and "is neither seeded, imported, all, none nor a REPOSITORY:BRANCH" in err


def test_the_audit_page_names_each_variant_of_each_branch(client):
    plant_arm_gpu_with_x86()
    body = client.get("/audit/").content.decode()
    assert "9 lint findings." in re.sub(r"\s+", " ", body)  # and cuda-13_0's recorded eight
    section = body.split('id="lint"')[1].split('id="known-findings"')[0]
    assert 'id="lint-build-pytorch-pytorch-2.9-python313"' in section
    assert f'href="/variants/build-pytorch/pytorch-2.9-python313/{PLANTED}/"' in section
    assert "arm-only-gpu" in section and "seeded" in section
    assert all(f"<code>{rule.key}</code>" in section for rule in RULES)


def test_the_audit_page_says_when_every_branch_passes(client):
    # Without the recorded impossible pairings, every variant passes.
    Variant.objects.filter(branch__name="cuda-13_0", platform="x86_64-linux").delete()
    body = re.sub(r"\s+", " ", client.get("/audit/").content.decode())
    assert f"Every variant of the {Branch.objects.count()} branches passes." in body


# ---------------------------------------------------------------- a real branch

REAL = Path(__file__).resolve().parents[1].parent / "shared" / "real-recipes"


def records_of_checkout(folder: Path, repository: str, branch: str):
    """A real branch's lint records, from what its recipes evaluate to (the stand-in's records)
    and what their names say."""
    records = []
    for result in evaluate.evaluate(sorted(folder.glob("*.nix"))):
        name, record = naming.parse(result.path.stem), result.record
        records.append(
            VariantRecord(
                repository,
                branch,
                record["pname"],
                result.path.stem,
                name.library,
                name.backend,
                name.cuda_version,
                name.sm,
                name.isa,
                tuple(record["platforms"] or ()),
                tuple(record["targets"]),
                record["pin"] or "",
            )
        )
    return records


@pytest.mark.skipif(
    shutil.which("nix-instantiate") is None, reason="nix-instantiate (nix-bin) is not installed"
)
@pytest.mark.skipif(not REAL.is_dir(), reason=f"{REAL} (the real recipes) is not here")
def test_the_lint_of_real_recipes_names_their_real_defects(tmp_path):
    archs = audit.architecture_facts()
    branch = REAL / "build-pytorch" / "pytorch-2.8-python312" / ".flox" / "pkgs"
    assert rules_of(
        *records_of_checkout(branch, "build-pytorch", "pytorch-2.8-python312"), archs=archs
    ) == {
        ("pytorch-python312-cpu-avx2", "platforms-as-written"),
    }
    examples = {}
    for path in (REAL / "examples").glob("*.nix"):
        checkout, _, name = path.name.rpartition("--")
        (tmp_path / checkout).mkdir(exist_ok=True)
        shutil.copy(path, tmp_path / checkout / name)
        examples[checkout] = tmp_path / checkout
    found = set()
    for checkout, folder in examples.items():
        repository, _, branch = checkout.partition("--")
        found |= rules_of(*records_of_checkout(folder, repository, branch), archs=archs)
    assert found == {
        (
            "pytorch-python313-cuda12_8-sm90-avx512",
            "nixpkgs-pin",
        ),  # main-staging: callPackage, unpinned
        ("torchaudio-python313-cuda12_8-sm90-avx512", "nixpkgs-pin"),
        ("torchaudio-python313-cuda12_8-sm90-avx512", "gpu-targets"),  # "sm_90"
        ("pytorch-python313-cpu-armv8_2", "file-name"),  # pytorch210-… in pytorch-….nix
        ("pytorch-python313-cuda13_0-sm90-avx512", "file-name"),
        ("pytorch-python313-cuda13_1-sm121-armv9", "file-name"),
    }
