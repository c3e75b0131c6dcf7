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
