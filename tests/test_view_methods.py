"""Every view declares its methods (`@require_safe`, `@require_http_methods`; the JSON APIs answer a
405 of their own), and a view that answers both a page and an htmx fragment says so in `Vary`."""

from __future__ import annotations

import pytest
from django.urls import URLPattern, get_resolver, reverse

pytestmark = pytest.mark.django_db

PAGES = [
    reverse("catalog:home"),
    reverse("catalog:architectures"),
    reverse("catalog:architecture", args=["sm90"]),
    reverse("catalog:isas"),
    reverse("catalog:isa", args=["avx512"]),
    reverse("catalog:branches"),
    reverse("catalog:branch", args=["build-pytorch", "main"]),
    reverse("catalog:docs"),
    reverse("catalog:audit"),
    reverse("catalog:variants"),
    reverse("catalog:compare"),
    reverse("catalog:selector"),
]


@pytest.mark.parametrize("url", PAGES)
@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_read_only_pages_refuse_other_methods(client, url, method):
    response = getattr(client, method)(url)
    assert response.status_code == 405
    assert set(response["Allow"].replace(" ", "").split(",")) == {"GET", "HEAD"}


@pytest.mark.parametrize("method", ["put", "delete", "patch"])
def test_the_wizard_takes_get_and_post_only(client, method):
    response = getattr(client, method)(reverse("catalog:wizard"))
    assert response.status_code == 405
    assert set(response["Allow"].replace(" ", "").split(",")) == {"GET", "HEAD", "POST"}


@pytest.mark.parametrize("htmx", [False, True])
def test_the_wizard_varies_on_htmx(client, htmx):
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = client.get(reverse("catalog:wizard"), {"os": "linux"}, **headers)
    assert response.status_code == 200
    assert "HX-Request" in response["Vary"]
    assert ("<html" in response.content.decode()) is not htmx


@pytest.mark.parametrize(
    "url, query",
    [
        (reverse("catalog:variants"), {"gpu": "sm90"}),
        (reverse("catalog:variants"), {"gpu": "sm999"}),  # a refusal varies too
        (reverse("catalog:selector"), {"gpu": "sm90"}),
    ],
)
@pytest.mark.parametrize("htmx", [False, True])
def test_views_answering_htmx_vary_on_it(client, url, query, htmx):
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = client.get(url, query, **headers)
    assert "HX-Request" in response.get("Vary", ""), (response.status_code, response.headers)


def test_every_catalogue_view_declares_its_methods():
    """A view without a declaration would take any method; the decorators leave a trace."""
    undeclared = []
    for pattern in get_resolver().url_patterns:
        for inner in getattr(pattern, "url_patterns", [pattern]):
            if not isinstance(inner, URLPattern):
                continue
            view = inner.callback
            module = getattr(view, "__module__", "")
            if not module.startswith("catalog."):
                continue
            wrapped = getattr(view, "__wrapped__", None)
            if wrapped is None and not getattr(view, "csrf_exempt", False):
                undeclared.append(inner.name)
    assert undeclared == []
