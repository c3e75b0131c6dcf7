"""One meaning of "recommended", and the wording fixes: through /api/recommend, the CLI, the
wizard and the catalogue pages over the seeded catalogue."""

from __future__ import annotations

import pytest

from catalog.models import Branch, Variant
from tests.test_wizard_api import ZEN4, Case, api_json

H100 = dict(os="linux", arch="x86_64", gpu="H100", cpu_flags=ZEN4, cpu_vendor="AuthenticAMD")


@pytest.mark.django_db
def test_unconstrained_answer_names_the_recommended_branch_and_offers_it_first(client):
    body = api_json(client, Case("h100", H100)).json()
    assert body["variant"]["branch"] == "main"
    recommended = Branch.objects.get(is_recommended=True, repository="build-pytorch")
    first = body["alternatives"][0]
    assert first["branch"] == recommended.name
    status = Variant.objects.get(pname=first["pname"], branch=recommended).status
    assert first["status"] == status
    assert any(
        f"recommends {recommended.name}" in r and f"status: {status}" in r for r in body["reasons"]
    )


@pytest.mark.django_db
def test_answer_on_the_recommended_branch_says_nothing_more(client):
    body = api_json(client, Case("h100-2.9", {**H100, "pytorch": "2.9", "python": "3.13"})).json()
    assert body["variant"]["branch"] == "pytorch-2.9-python313"
    assert not any("recommends" in r for r in body["reasons"])


@pytest.mark.django_db
def test_mac_answer_does_not_mention_cuda(client):
    body = api_json(client, Case("mac", host="apple-m3")).json()
    assert body["variant"]["backend"] == "mps"
    assert not any("CUDA" in r for r in body["reasons"]), body["reasons"]


@pytest.mark.django_db
def test_branches_page_tags_the_recommended_branch(client):
    html = client.get("/branches/").content.decode()
    row = next(r for r in html.split("<tr>") if "<code>pytorch-2.9-python313</code>" in r)
    assert ">recommended</span>" in row
    main = next(r for r in html.split("<tr>") if "<code>main</code>" in r)
    assert ">recommended</span>" not in main


@pytest.mark.django_db
def test_wizard_page_shows_alternative_status(client):
    query = {**H100, "library": "", "workload": "general"}
    html = client.get("/wizard/", query).content.decode()
    alternatives = html.split('class="wizard-alternatives"')[1].split("</ul>")[0]
    assert "pytorch-2.9-python313" in alternatives.split("</li>")[0]
    assert 'class="status status-' in alternatives.split("</li>")[0]


@pytest.mark.django_db
def test_architecture_family_is_not_doubled(client):
    html = client.get("/architectures/sm121/").content.decode()
    assert "(DGX Spark) (DGX Spark)" not in html
    assert "Blackwell (DGX Spark, GB10)" in html


@pytest.mark.django_db
def test_system_line_without_architecture_has_no_question_mark(client):
    html = client.get("/wizard/", {"os": "linux", "gpu": "H100"}).content.decode()
    assert "System: <strong>linux</strong>" in html
    assert "on <strong>?</strong>" not in html
