import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from catalog.models import Variant

pytestmark = pytest.mark.django_db

MODELS = [
    "gpuarchitecture",
    "gpumodel",
    "cpuisa",
    "branch",
    "variant",
    "buildrecord",
    "docpage",
    "sourceclaim",
]
# The management form of the variant page's empty build-record inline.
NO_BUILDS = {
    "builds-TOTAL_FORMS": 0,
    "builds-INITIAL_FORMS": 0,
    "builds-MIN_NUM_FORMS": 0,
    "builds-MAX_NUM_FORMS": 1000,
}


@pytest.fixture
def staff_client(client):
    user = get_user_model().objects.create_superuser("admin", "admin@example.com", "pw-for-tests")
    client.force_login(user)
    return client


@pytest.mark.parametrize("model", MODELS)
def test_changelists_load_for_staff(staff_client, model):
    response = staff_client.get(reverse(f"admin:catalog_{model}_changelist"))
    assert response.status_code == 200


def test_variant_changelist_filters_and_searches(staff_client):
    url = reverse("admin:catalog_variant_changelist")
    response = staff_client.get(url, {"q": "sm121-armv9"})
    assert response.status_code == 200
    assert "pytorch-python313-cuda13_0-sm121-armv9" in response.content.decode()
    assert staff_client.get(url, {"status__exact": "planned"}).status_code == 200


def test_variant_change_page_shows_computed_name(staff_client):
    v = Variant.objects.get(
        branch__repository="build-pytorch",
        branch__name="main",
        pname="pytorch-python313-cuda12_8-sm90-avx512",
    )
    response = staff_client.get(reverse("admin:catalog_variant_change", args=[v.pk]))
    assert response.status_code == 200
    body = response.content.decode()
    assert (
        "name composed from the fields" in body and "pytorch-python313-cuda12_8-sm90-avx512" in body
    )


def test_admin_edit_applies_model_validation(staff_client):
    v = Variant.objects.get(
        branch__repository="build-pytorch",
        branch__name="main",
        pname="pytorch-python313-cuda12_8-sm61-avx2",
    )
    url = reverse("admin:catalog_variant_change", args=[v.pk])
    form = {
        "pname": v.pname,
        "branch": v.branch_id,
        "library": v.library,
        "backend": v.backend,
        "status": v.status,
        "gpu_arch": v.gpu_arch_id,
        "cuda_version": v.cuda_version,
        "cpu_isa": v.cpu_isa_id,
        "platform": v.platform,
        "python_version": v.python_version,
        "blas": v.blas,
        "disabled_features": "[]",
        "extra_cmake_flags": "[]",
        "metadata_rev": 1,
        "use_case": v.use_case,
        "notes": "",
        "depends_on": "",
        **NO_BUILDS,
    }
    response = staff_client.post(url, form)
    assert response.status_code == 200  # re-rendered with the error, not saved
    assert "cuDNN ≥ 9.11 has no SM &lt; 7.5 support" in response.content.decode()
    v.refresh_from_db()
    assert v.disabled_features == ["cudnn"]


def test_admin_fills_an_empty_name_from_the_fields(staff_client):
    # pytorch-2.8-python312's CPU variants have no companions depending on them.
    v = Variant.objects.get(
        branch__name="pytorch-2.8-python312", pname="pytorch-python312-cpu-avx2"
    )
    v.delete()
    form = {
        "pname": "",
        "branch": v.branch_id,
        "library": "pytorch",
        "backend": "cpu",
        "status": "recipe",
        "gpu_arch": "",
        "cuda_version": "",
        "cpu_isa": v.cpu_isa_id,
        "platform": "x86_64-linux",
        "python_version": "3.12",
        "blas": "openblas",
        "disabled_features": "[]",
        "extra_cmake_flags": "[]",
        "metadata_rev": 1,
        "use_case": "",
        "notes": "",
        "depends_on": "",
        **NO_BUILDS,
    }
    response = staff_client.post(reverse("admin:catalog_variant_add"), form)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Variant.objects.filter(branch=v.branch, pname="pytorch-python312-cpu-avx2").exists()


def test_admin_requires_login(client):
    response = client.get(reverse("admin:catalog_variant_changelist"))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


# ---------------------------------------------------------------- imported recipes


@pytest.fixture
def imported(tmp_path):
    """One imported variant: a pinned CUDA form fixture read into build-pytorch main."""
    from .export_data import import_tree
    from .nix_data import FORMS

    pkgs = tmp_path / ".flox" / "pkgs"
    pkgs.mkdir(parents=True)
    (pkgs / "pytorch-pinned-cuda.nix").write_bytes((FORMS / "pytorch-pinned-cuda.nix").read_bytes())
    import_tree(tmp_path, "build-pytorch", "main")
    return Variant.objects.get(branch__name="main", origin="imported")


def test_an_imported_recipe_is_shown_read_only_with_nothing_to_export(staff_client, imported):
    response = staff_client.get(reverse("admin:catalog_variant_change", args=[imported.pk]))
    page = response.content.decode()
    assert response.status_code == 200
    assert '<pre class="recipe-source">' in page and imported.pname in page
    assert 'name="recipe_text"' not in page  # read-only: no form field for the text
    assert "Nothing: export writes the recipe exactly as imported." in page


def test_the_change_page_previews_the_export_diff_of_a_changed_pin(staff_client, imported):
    old = imported.nixpkgs_pin
    imported.nixpkgs_pin = "0123456789abcdef0123456789abcdef01234567"
    imported.save()
    response = staff_client.get(reverse("admin:catalog_variant_change", args=[imported.pk]))
    page = response.content.decode()
    diff = page.split('<pre class="export-diff">')[1].split("</pre>")[0]
    removed = [line for line in diff.splitlines() if line.startswith("-") and "---" not in line]
    added = [line for line in diff.splitlines() if line.startswith("+") and "+++" not in line]
    assert len(removed) == len(added) == 1
    assert old in removed[0] and "0123456789abcdef0123456789abcdef01234567" in added[0]


def test_a_change_export_cannot_make_is_named_on_the_change_page(staff_client, imported):
    imported.disabled_features = [*imported.disabled_features, "nnpack"]
    imported.save()
    response = staff_client.get(reverse("admin:catalog_variant_change", args=[imported.pk]))
    page = response.content.decode()
    assert "Export cannot write this recipe: disabled_features cannot be edited in place" in page


def test_a_seeded_variant_has_no_imported_recipe_section(staff_client):
    v = Variant.objects.filter(origin="seeded").first()
    response = staff_client.get(reverse("admin:catalog_variant_change", args=[v.pk]))
    assert response.status_code == 200 and "Imported recipe" not in response.content.decode()


def test_admin_writes_store_the_audit_findings_at_once(staff_client):
    """An edit in the admin computes its branches' findings before it answers (the next visitor
    of /audit/ pays nothing): a deleted variant, and an architecture's bulk delete, which
    changes every branch's findings."""
    from catalog import audit_store
    from catalog.models import GpuArchitecture
    from tests.test_audit_store import assert_stored_equals_computed

    v = Variant.objects.get(
        branch__name="pytorch-2.8-python312", pname="pytorch-python312-cpu-avx2"
    )
    url = reverse("admin:catalog_variant_delete", args=[v.pk])
    assert staff_client.post(url, {"post": "yes"}).status_code == 302
    assert not Variant.objects.filter(pk=v.pk).exists()
    assert_stored_equals_computed()

    unused = GpuArchitecture.objects.get(sm="sm61")
    unused.pk, unused.sm, unused.compute_capability = None, "sm999", "99.9"
    unused.save()  # outside the admin: every branch waits to be computed again
    assert audit_store.stale_branch_ids()
    response = staff_client.post(
        reverse("admin:catalog_gpuarchitecture_changelist"),
        {"action": "delete_selected", "_selected_action": [unused.pk], "post": "yes"},
    )
    assert response.status_code == 302
    assert not GpuArchitecture.objects.filter(pk=unused.pk).exists()
    assert_stored_equals_computed()
