"""One format per branch value: "<repository>/<branch>" in links, forms, the selector and the API;
older spellings are read, and pages redirect them to that form so the branch shows ticked."""

import pytest

from catalog import naming

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url, location",
    [
        ("/variants/?branch=build-pytorch:main", "/variants/?branch=build-pytorch/main"),
        (
            "/variants/?branch=pytorch-2.9-python313&status=recipe",
            "/variants/?branch=build-pytorch/pytorch-2.9-python313&status=recipe",
        ),
        (
            "/variants/?repository=build-pytorch&branch=main",
            "/variants/?repository=build-pytorch&branch=build-pytorch/main",
        ),
        ("/?gpu=sm90&branch=build-pytorch:main", "/?gpu=sm90&branch=build-pytorch/main"),
    ],
)
def test_older_spellings_redirect_to_repository_slash_branch(client, url, location):
    response = client.get(url)
    assert response.status_code == 302 and response["Location"] == location


def test_redirected_branch_is_ticked_and_counts_agree(client):
    html = client.get(
        "/variants/?branch=pytorch-2.9-python313&status=recipe", follow=True
    ).content.decode()
    assert (
        'name="branch" value="build-pytorch/pytorch-2.9-python313" id="id_branch_1" checked>'
        in html
    )
    assert 'Recipe <span class="n" id="n-status-recipe">66' in html
    assert 'data-testid="result-count">66<' in html


def test_a_bare_name_in_several_repositories_is_left_alone(client):
    assert client.get("/variants/?branch=main").status_code == 200


def test_api_reads_the_old_spelling_in_place(client):
    old = client.get("/api/variants?branch=build-pytorch:main").json()
    new = client.get("/api/variants?branch=build-pytorch/main").json()
    assert old["count"] == new["count"] > 0


def test_links_write_the_branch_one_way(client):
    body = client.get("/branches/build-pytorch/pytorch-2.9-python313/").content.decode()
    assert 'href="/variants/?branch=build-pytorch/pytorch-2.9-python313"' in body
    home = client.get("/").content.decode()
    assert "branch=build-pytorch/main" in home and "build-pytorch:main" not in home


def test_canonical_branch():
    known = ["build-pytorch/main", "build-torchvision/main", "build-torchvision/cuda-13_0"]
    assert naming.canonical_branch("build-pytorch:main", known) == "build-pytorch/main"
    assert naming.canonical_branch("cuda-13_0", known) == "build-torchvision/cuda-13_0"
    assert naming.canonical_branch("main", known) == "main"
    assert naming.canonical_branch("build-pytorch/main", known) == "build-pytorch/main"


def test_folded_selector_does_not_claim_to_count_the_list_beside_it(client):
    html = client.get("/variants/", {"q": "H100"}).content.decode()
    assert 'data-testid="result-count">89<' in html
    assert "variants match" not in html.split('id="results"')[0]
    assert "variants in the whole catalogue" in html
