"""The audit's stored per-branch findings stay equal to what computing them now gives, after an
import, an edit, a delete and a build record, through the real commands and pages."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command

from catalog import audit_store, services
from catalog.models import AuditedBranch, AuditFinding, Branch, Variant
from tests.nix_data import BUILD_PYTORCH, need_real

pytestmark = pytest.mark.django_db
REAL_BRANCH = ("build-pytorch", "pytorch-2.8-python312")
FIELDS = ("branch_id", "kind", "position", "rule", "variant_name", "variant_id", "key", "subject")


def as_tuples(rows) -> list[tuple]:
    return sorted(tuple(getattr(r, f) for f in FIELDS) + (r.message,) for r in rows)


def assert_stored_equals_computed():
    assert not audit_store.stale_branch_ids()
    every = list(Branch.objects.values_list("pk", flat=True))
    assert as_tuples(AuditFinding.objects.all()) == as_tuples(audit_store.compute(every))


def audit_text(*gate) -> str:
    out = StringIO()
    try:
        call_command("audit-catalogue", gate=list(gate) or None, stdout=out, no_color=True)
    except Exception:  # exit 1 while findings gate: the listing is what is compared
        pass
    return out.getvalue()


def page_text(client, url="/audit/") -> str:
    response = client.get(url)
    assert response.status_code == 200
    return re.sub(r"\s+", " ", response.content.decode())


def import_real():
    need_real()
    call_command(
        "import-recipes",
        str(BUILD_PYTORCH.parent.parent),
        repository=REAL_BRANCH[0],
        branch=REAL_BRANCH[1],
        stdout=StringIO(),
        stderr=StringIO(),
    )
    return Branch.objects.get(repository=REAL_BRANCH[0], name=REAL_BRANCH[1])


def test_the_seeded_catalogue_has_its_findings_stored():
    assert AuditFinding.objects.filter(kind="impossible").exists()  # cuda-13_0's recorded ones
    assert_stored_equals_computed()


def test_an_import_stores_its_branch_findings_in_the_same_write(client):
    branch = import_real()
    assert AuditedBranch.objects.filter(branch=branch).exists()  # computed by the import
    assert AuditFinding.objects.filter(branch=branch, kind="lint").exists()
    assert_stored_equals_computed()
    before = audit_text("none")
    assert f"- {':'.join(REAL_BRANCH)} (imported;" in before
    # The command computes everything anew and lists exactly what was stored.
    assert audit_text("none") == before
    assert_stored_equals_computed()
    body = page_text(client, "/audit/")
    total = AuditFinding.objects.filter(kind="lint").count()
    assert f"{total} lint finding" in body


def edit(*args: str) -> None:
    call_command(
        "edit-variants",
        "--repository",
        REAL_BRANCH[0],
        "--branch",
        REAL_BRANCH[1],
        *args,
        stdout=StringIO(),
        stderr=StringIO(),
    )


SM90_AVX = "pytorch-python312-cuda12_8-sm90-avx"


def test_an_edit_stores_the_findings_it_changes(client):
    branch = import_real()
    page_text(client)  # the page as it was
    assert not AuditFinding.objects.filter(branch=branch, variant_name=SM90_AVX).exists()
    edit("--where", f"pname={SM90_AVX}", "--set", "gpu_arch=sm89")
    # The recipe still targets 9.0: the lint finds it, stored by the edit itself.
    assert AuditedBranch.objects.filter(branch=branch).exists()
    found = AuditFinding.objects.filter(branch=branch, variant_name=SM90_AVX)
    assert "gpu-targets" in {f.rule for f in found}
    assert_stored_equals_computed()
    assert '"9.0" is SM90, not SM89' in page_text(client, "/audit/?page=1").replace("&quot;", '"')


def test_a_dry_run_edit_stores_nothing():
    import_real()
    before = as_tuples(AuditFinding.objects.all())
    edit("--where", f"pname={SM90_AVX}", "--set", "gpu_arch=sm89", "--dry-run")
    assert as_tuples(AuditFinding.objects.all()) == before
    assert_stored_equals_computed()


def test_a_delete_unmarks_the_branch_and_the_page_stores_it_anew(client):
    branch = import_real()
    finding = AuditFinding.objects.filter(branch=branch, kind="lint").first()
    doomed = Variant.objects.get(branch=branch, pname=finding.variant_name)
    doomed.delete()  # as the admin deletes: signals, no import to store the findings
    assert not AuditedBranch.objects.filter(branch=branch).exists()
    body = page_text(client)
    assert AuditedBranch.objects.filter(branch=branch).exists()  # computed on reading
    assert_stored_equals_computed()
    assert not AuditFinding.objects.filter(branch=branch, variant_name=doomed.pname).exists()
    assert f"{AuditFinding.objects.filter(kind='lint').count()} lint finding" in body


def test_a_build_record_unmarks_a_branch_only_when_a_variant_stops_being_planned(client):
    planned = Variant.objects.filter(status="planned").select_related("branch").first()
    built = Variant.objects.exclude(status="planned").select_related("branch").first()
    assert planned and built
    where = {"repository": built.branch.repository, "branch": built.branch.name}
    services.record_build(**where, pname=built.pname, status="failed")
    assert not audit_store.stale_branch_ids()  # a build outcome changes no finding
    where = {"repository": planned.branch.repository, "branch": planned.branch.name}
    services.record_build(**where, pname=planned.pname, status="failed")
    # Its pin is now required: its branch, and the companion branches built against it.
    companions = set(Branch.objects.filter(pytorch_branch=planned.branch_id).values_list("pk"))
    assert set(audit_store.stale_branch_ids()) == {planned.branch_id} | {c for (c,) in companions}
    page_text(client)
    assert_stored_equals_computed()


def test_an_architecture_change_unmarks_every_branch():
    from catalog.models import GpuArchitecture

    arch = GpuArchitecture.objects.get(sm="sm90")
    arch.save()
    assert len(audit_store.stale_branch_ids()) == Branch.objects.count()
    assert audit_store.refresh_stale() == Branch.objects.count()
    assert_stored_equals_computed()
