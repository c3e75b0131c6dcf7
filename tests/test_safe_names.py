"""Repository, branch and variant names become paths in a checkout: unsafe ones are refused by
the model itself — in the admin (full_clean, shown beside the field) and on any ORM save."""

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.urls import reverse

from catalog import naming
from catalog.models import Branch, Variant

pytestmark = pytest.mark.django_db

UNSAFE = ["../../../../outside", "/etc", "a/b", ".hidden", "-flag", "", "a b", "x" * 121, "é"]


@pytest.mark.parametrize("name", UNSAFE)
def test_unsafe_names_have_a_reason(name):
    assert "not a safe name" in naming.unsafe_name_reason(name)


@pytest.mark.parametrize("name", ["main", "pytorch-2.10-python313", "cuda-12_9", "x" * 120])
def test_real_names_are_safe(name):
    assert naming.unsafe_name_reason(name) == ""


@pytest.mark.parametrize("name", ["../../../../outside", "/tmp/abs"])
def test_branch_save_refuses_a_path(name):
    branch = Branch.objects.get(repository="build-pytorch", name="main")
    branch.name = name
    with pytest.raises(ValidationError) as caught:
        branch.save()
    assert "name" in caught.value.message_dict
    assert Branch.objects.filter(name=name).count() == 0
    with pytest.raises(ValidationError) as caught:
        branch.full_clean()
    assert "not a safe name" in caught.value.message_dict["name"][0]


def test_variant_save_refuses_a_path_in_its_pname():
    variant = Variant.objects.filter(branch__name="main").first()
    variant.pname = "../escape"
    with pytest.raises(ValidationError):
        variant.save()
    assert not Variant.objects.filter(pname="../escape").exists()


def test_admin_branch_form_shows_the_reason_and_saves_nothing(client):
    user = get_user_model().objects.create_superuser("admin", "admin@example.com", "pw")
    client.force_login(user)
    branch = Branch.objects.get(repository="build-pytorch", name="main")
    url = reverse("admin:catalog_branch_change", args=[branch.pk])
    form = client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and not isinstance(v, list)}
    data.update(name="../../../../outside", cuda_versions='["12.8"]')
    response = client.post(url, data)
    assert response.status_code == 200  # the form again, not a redirect
    assert "is not a safe name" in response.content.decode()
    branch.refresh_from_db()
    assert branch.name == "main"
