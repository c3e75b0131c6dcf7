import pytest
from django.core.management import call_command

from catalog.audit import CatalogueFacts, evaluate_claim, run_audit
from catalog.models import Branch, SourceClaim, Variant

pytestmark = pytest.mark.django_db


def run_command(capsys):
    code = 0
    try:
        call_command("audit-catalogue")
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr()


def test_seed_catalogue_has_only_known_findings(capsys):
    result = run_audit()
    assert result.ok
    keys = {f.key for f in result.known}
    # The contradictions the seeds are known for are all found and recorded.
    assert {
        "sm121-min-cuda-12-9", "vnni-on-skylake-sp", "armv9-on-graviton3", "avx512-on-i9-12900k",
        "l40s-is-sm90", "armv8-2-slug", "publish-cpu-name-with-cuda", "torchvision-plan-60",
        "blackwell-driver-570", "cpu-platforms-both", "publish-push-master",
    } <= keys
    # Claims that hold are verified, not findings.
    assert {"vnni-on-cascade-lake", "bf16-on-zen4", "armv9-on-neoverse-v2"} <= {v.key for v in result.verified}
    code, out = run_command(capsys)
    assert code == 0
    assert "New findings: 0" in out.out and "armv9-on-graviton3" in out.out


def test_planted_contradiction_is_a_new_finding(capsys):
    SourceClaim.objects.create(
        key="planted-avx512-on-haswell", kind="cpu-generation", subject="isa:avx512",
        statement="AVX-512 hardware: Intel Haswell+", source="test fixture",
        criteria={"isa": "avx512", "microarch": "haswell", "cpu": "Intel Haswell"},
    )
    result = run_audit()
    assert [f.key for f in result.new] == ["planted-avx512-on-haswell"]
    assert "lacks avx512bw, avx512dq, avx512f, avx512vl" in result.new[0].message
    code, out = run_command(capsys)
    assert code == 1
    assert "planted-avx512-on-haswell" in out.out and "1 new finding" in out.err


def test_count_mismatch_is_a_new_finding():
    Variant.objects.filter(branch__name="cuda-13_0", gpu_arch__sm="sm121", cpu_isa__slug="armv9").delete()
    keys = {f.key for f in run_audit().new}
    assert "count-build-torchvision-cuda-13_0" in keys


def test_invalid_record_is_a_new_finding():
    # A write that bypasses validation (as a raw update would) is still caught by the audit.
    Variant.objects.filter(pname="pytorch-python313-cuda12_8-sm61-avx2", branch__name="main").update(disabled_features=[])
    findings = [f for f in run_audit().new if f.kind == "validation"]
    assert len(findings) == 1 and "cudnn" in findings[0].message


def test_acknowledging_a_finding_makes_it_known():
    Branch.objects.filter(name="cuda-13_0").update(stated_variant_count=12)
    claim = SourceClaim.objects.create(
        key="planted-count", kind="count", subject="branch:x", statement="13 variants", source="test",
        criteria={"repository": "build-torchvision", "branch": "cuda-13_0", "count": 13}, acknowledged=True,
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
        ("gpu-model", {"model": "L40S", "sm": "sm90"}, False),
        ("count", {"repository": "build-pytorch", "branch": "main", "count": 62}, True),
        ("name", {"name": "pytorch-python313-cpu-avx2", "repository": "build-pytorch", "branch": "main"}, True),
        ("name", {"name": "pytorch-python313-cpu-avx", "repository": "build-pytorch", "branch": "main"}, False),
        ("isa-slug", {"slug": "armv8.2"}, False),
        ("isa-flags", {"isa": "armv9", "flags": ["-march=armv9-a+sve+sve2"]}, True),
        ("statement", {}, False),
    ],
)
def test_evaluate_claim(kind, criteria, holds):
    assert (evaluate_claim(kind, criteria, FACTS) is None) is holds
