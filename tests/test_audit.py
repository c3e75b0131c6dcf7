import pytest
from django.core.management import CommandError, call_command

from catalog.audit import CatalogueFacts, evaluate_claim, run_audit
from catalog.models import Branch, SourceClaim, Variant

pytestmark = pytest.mark.django_db


def run_command(capsys):
    """(exit status, captured output, the CommandError's sentence) as manage.py would end."""
    code, error = 0, ""
    try:
        call_command("audit-catalogue")
    except CommandError as exc:
        code, error = exc.returncode, str(exc)
    return code, capsys.readouterr(), error


def test_seed_catalogue_has_only_known_findings(capsys):
    result = run_audit()
    assert result.ok
    keys = {f.key for f in result.known}
    # The contradictions the seeds are known for are all found and recorded.
    assert {
        "sm121-min-cuda-13",
        "vnni-on-skylake-sp",
        "armv9-on-graviton3",
        "avx512-on-i9-12900k",
        "l40s-is-sm90",
        "armv8-2-slug",
        "publish-cpu-name-with-cuda",
        "torchvision-plan-60",
        "blackwell-driver-570",
        "cpu-platforms-both",
        "publish-push-master",
        "gpu-targets-sm-prefix",
        "dgx-spark-is-arm",
        "example-sm121-avx512",
        "torchvision-cuda-13-0-x86-pairings",
    } <= keys
    # Claims that hold are verified, not findings.
    verified = {v.key for v in result.verified}
    assert {
        "vnni-on-cascade-lake",
        "bf16-on-zen4",
        "armv9-on-neoverse-v2",
        "sm121-min-cuda-12-9",
        "torchvision-cuda-13-0-count",  # the catalogue holds the 12 the repository holds
    } <= verified
    code, out, _ = run_command(capsys)
    assert code == 0
    assert "New findings: 0" in out.out and "armv9-on-graviton3" in out.out


def test_planted_contradiction_is_a_new_finding(capsys):
    SourceClaim.objects.create(
        key="planted-avx512-on-haswell",
        kind="cpu-generation",
        subject="isa:avx512",
        statement="AVX-512 hardware: Intel Haswell+",
        source="test fixture",
        criteria={"isa": "avx512", "microarch": "haswell", "cpu": "Intel Haswell"},
    )
    result = run_audit()
    assert [f.key for f in result.new] == ["planted-avx512-on-haswell"]
    assert "lacks avx512bw, avx512dq, avx512f, avx512vl" in result.new[0].message
    code, out, error = run_command(capsys)
    assert code == 1
    assert "planted-avx512-on-haswell" in out.out and "1 new finding" in error


def test_count_mismatch_is_a_new_finding():
    Variant.objects.filter(
        branch__repository="build-pytorch", pname="pytorch-python313-cuda12_8-sm90-avx"
    ).delete()
    keys = {f.key for f in run_audit().new}
    assert "count-build-pytorch-main" in keys


def test_a_recorded_count_contradiction_goes_stale_when_the_catalogue_changes():
    # A claim records that the catalogue derives fewer variants than a seed states.
    Branch.objects.filter(name="cuda-13_0").update(stated_variant_count=13)
    SourceClaim.objects.create(
        key="planted-count-13",
        kind="count",
        subject="branch:build-torchvision/cuda-13_0",
        statement="13 variants",
        source="test",
        criteria={
            "repository": "build-torchvision",
            "branch": "cuda-13_0",
            "count": 13,
            "catalogue": 12,
        },
        acknowledged=True,
        resolution="One of the 13 was never built.",
    )
    result = run_audit()
    assert "planted-count-13" in {f.key for f in result.known}
    assert "count-build-torchvision-cuda-13_0" not in {f.key for f in result.findings}
    Variant.objects.filter(
        branch__name="cuda-13_0", gpu_arch__sm="sm121", cpu_isa__slug="armv9"
    ).delete()
    new = {f.key: f for f in run_audit().new}
    assert "count-build-torchvision-cuda-13_0" in new
    assert "The recorded resolution expects 12." in new["planted-count-13"].message


X86_PAIRINGS = [
    f"torchvision-python313-cuda13_0-{sm}-{isa}"
    for sm in ("sm110", "sm121")
    for isa in ("avx2", "avx512", "avx512bf16", "avx512vnni")
]


def test_each_impossible_pairing_is_a_recorded_finding_with_its_reason(capsys):
    result = run_audit()
    assert result.ok
    finding = next(f for f in result.known if f.key == "torchvision-cuda-13-0-x86-pairings")
    assert "build-torchvision:cuda-13_0 holds 8 impossible pairing(s)" in finding.message
    for pname in X86_PAIRINGS:
        assert pname in finding.message
    assert (
        "torchvision-python313-cuda13_0-sm110-avx2: SM110 is built into an aarch64 system, so an "
        "x86_64 ISA (avx2) cannot run beside it. No PyTorch pytorch-python313-cuda13_0-sm110-avx2 "
        "on build-pytorch:pytorch-2.10-python313 to build against."
    ) in finding.message
    assert "-armv9" not in finding.message and "-armv8_2" not in finding.message
    branch = next(b for b in result.lint if b.name == "build-torchvision:cuda-13_0")
    assert sorted(f.variant for f in branch.findings) == X86_PAIRINGS
    assert branch.gates and branch.gating == []
    code, out, _ = run_command(capsys)
    assert code == 0
    assert (
        "- build-torchvision:cuda-13_0 (seeded; gates the exit code; 8 recorded, which do not): 8"
        in out.out
    )
    assert (
        "[arm-only-gpu] torchvision-python313-cuda13_0-sm121-avx512: SM121 is built into an "
        "aarch64 system, so an x86_64 ISA (avx512) cannot run beside it. (recorded: does not gate)"
    ) in out.out


def test_the_audit_page_marks_the_recorded_impossible_pairings(client):
    body = client.get("/audit/").content.decode()
    section = body.split('id="lint-build-torchvision-cuda-13_0"')[1].split("</article>")[0]
    assert section.count("impossible pairing, recorded") == 8
    assert "finding-new" not in body.split('id="lint-build-torchvision-cuda-13_0"')[0][-80:]


def test_a_changed_set_of_impossible_pairings_is_no_longer_explained(capsys):
    # One more x86 pairing than recorded: the claim goes stale and the lint findings gate.
    Variant.objects.filter(branch__name="cuda-13_0", pname=X86_PAIRINGS[0]).delete()
    result = run_audit()
    stale = next(f for f in result.new if f.key == "torchvision-cuda-13-0-x86-pairings")
    assert "holds 7 impossible pairing(s)" in stale.message
    assert "The recorded resolution expects 8." in stale.message
    assert len(result.gating_lint) == 7 and not result.ok
    assert run_command(capsys)[0] == 1


def test_invalid_record_is_a_new_finding():
    # A write that bypasses validation (as a raw update would) is still caught by the audit.
    Variant.objects.filter(
        pname="pytorch-python313-cuda12_8-sm61-avx2", branch__name="main"
    ).update(disabled_features=[])
    findings = [f for f in run_audit().new if f.kind == "validation"]
    assert len(findings) == 1 and "cudnn" in findings[0].message


def test_acknowledging_a_finding_makes_it_known():
    Branch.objects.filter(name="cuda-13_0").update(stated_variant_count=12)
    claim = SourceClaim.objects.create(
        key="planted-count",
        kind="count",
        subject="branch:x",
        statement="13 variants",
        source="test",
        criteria={"repository": "build-torchvision", "branch": "cuda-13_0", "count": 13},
        acknowledged=True,
        resolution="The later README states 12.",
    )
    result = run_audit()
    assert result.ok and claim.key in {f.key for f in result.known}


FACTS = CatalogueFacts(
    isa_flags={"armv9": ["-march=armv9-a+sve+sve2"]},
    arch_fields={"sm121": {"min_cuda": "13.0", "max_cuda": ""}},
    model_arch={"L40S": "sm89"},
    variant_names={("build-pytorch", "main"): {"pytorch-python313-cpu-avx2"}},
    counts={("build-pytorch", "main"): 62},
)


@pytest.mark.parametrize(
    "kind, criteria, holds",
    [
        ("cpu-generation", {"isa": "armv9", "microarch": "neoverse_v2"}, True),
        ("cpu-generation", {"isa": "armv9", "microarch": "neoverse_v1"}, False),
        ("cpu-generation", {"isa": "armv9", "features": ["sve", "sve2"]}, True),
        ("architecture", {"sm": "sm121", "field": "min_cuda", "value": "13.0"}, True),
        ("architecture", {"sm": "sm121", "buildable_with": "12.9"}, False),
        ("architecture", {"sm": "sm121", "gpu_target": "12.1"}, True),
        ("architecture", {"sm": "sm121", "gpu_target": "sm_121"}, False),
        ("architecture", {"sm": "sm121", "gpu_target": "12.0"}, False),
        ("gpu-model", {"model": "L40S", "sm": "sm90"}, False),
        ("count", {"repository": "build-pytorch", "branch": "main", "count": 62}, True),
        (
            "name",
            {"name": "pytorch-python313-cpu-avx2", "repository": "build-pytorch", "branch": "main"},
            True,
        ),
        (
            "name",
            {"name": "pytorch-python313-cpu-avx", "repository": "build-pytorch", "branch": "main"},
            False,
        ),
        ("isa-slug", {"slug": "armv8.2"}, False),
        ("isa-flags", {"isa": "armv9", "flags": ["-march=armv9-a+sve+sve2"]}, True),
        ("statement", {}, False),
    ],
)
def test_evaluate_claim(kind, criteria, holds):
    assert (evaluate_claim(kind, criteria, FACTS) is None) is holds
