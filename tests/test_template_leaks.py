"""No template syntax reaches the browser: every page type rendered, searched for `{#`, `{%` …"""

import re

import pytest

from tests.page_types import PAGES, PARTIAL

pytestmark = pytest.mark.django_db
LEAK = re.compile(r"\{#|#\}|\{%|%\}|\{\{|\}\}")


def leaks(html: str) -> list[str]:
    return [html[max(m.start() - 40, 0) : m.end() + 40] for m in LEAK.finditer(html)]


@pytest.mark.parametrize(("name", "path", "status"), PAGES, ids=[p[0] for p in PAGES])
def test_page_shows_no_template_syntax(client, name, path, status):
    response = client.get(path)
    assert response.status_code == status
    html = response.content.decode()
    assert "</html>" in html
    assert leaks(html) == []


def test_matrix_fragment_shows_no_template_syntax(client):
    response = client.get(PARTIAL, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert leaks(response.content.decode()) == []


def test_the_check_catches_a_multi_line_comment():
    # Django strips only single-line {# #}; the multi-line form is printed as text.
    from django.template import engines

    html = engines["django"].from_string("<p>{# one\ntwo #}</p>").render({})
    assert leaks(html) != []
