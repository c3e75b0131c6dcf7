"""The home page grows with what a reader can pick, not with the catalogue: at sixteen times the
seed its selector folds the branches and its table lists a few per repository, and both reach
every branch without JavaScript."""

import re

import pytest

from catalog.browse import selector_engine
from catalog.browse.views.pages import HOME_BRANCHES
from catalog.models import Branch, Variant
from tests.conftest import clear_caches
from tests.test_matrix_queries import grow_catalogue

pytestmark = pytest.mark.django_db
LIMIT = 150 * 1024  # no default page is over 150 KB


def branch_buttons(html: str) -> list[str]:
    facet = html.split('data-dimension="branch"')[1].split('<div class="facet"')[0]
    return re.findall(r'class="option[^"]*" data-value="([^"]+)"', facet)


def test_the_seed_home_page_shows_every_branch_unfolded(client):
    html = client.get("/").content.decode()
    assert len(branch_buttons(html)) == Branch.objects.count()
    assert "Show" not in html.split('data-dimension="branch"')[1].split("</div>")[0]
    assert "All 11 branches" not in html


def test_at_sixteen_times_the_seed_the_home_page_stays_small_and_reaches_every_branch(client):
    grow_catalogue(15)
    clear_caches()
    total = Branch.objects.count()
    response = client.get("/")
    html = response.content.decode()
    assert len(response.content) < LIMIT
    shown = branch_buttons(html)
    assert len(shown) == selector_engine.FOLD_AFTER
    more = f"Show {total - selector_engine.FOLD_AFTER} more…"
    assert more in html
    # Without JavaScript: the link is a plain address that lists them all.
    expanded = client.get("/?more=branch").content.decode()
    assert len(branch_buttons(expanded)) == total
    # The table: each repository's first few and the recommended, then a link to all.
    rows = html.split('id="branches"')[1].split("</tbody>")[0].count("<tr>") - 1
    repositories = Branch.objects.values("repository").distinct().count()
    recommended = Branch.objects.filter(is_recommended=True).count()
    assert rows <= repositories * HOME_BRANCHES + recommended
    assert f'href="/branches/">All {total} branches</a>' in html
    assert len(client.get("/branches/").content.decode().split("<tbody>")[1].split("<tr")) > total


def test_a_chosen_branch_beyond_the_fold_stays_shown(client):
    grow_catalogue(15)
    clear_caches()
    last = Branch.objects.order_by("-repository", "-preference", "-name").first()
    key = f"{last.repository}/{last.name}"
    html = client.get(f"/?branch={key}").content.decode()
    assert key in branch_buttons(html)
    assert 'aria-current="true"' in html.split(f'data-value="{key}"')[1][:400]


def test_the_other_choices_decide_which_branches_are_shown(client):
    grow_catalogue(15)
    clear_caches()
    html = client.get("/?library=torchvision").content.decode()
    shown = branch_buttons(html)
    having = {
        f"{r}/{n}"
        for r, n in Variant.objects.filter(library="torchvision").values_list(
            "branch__repository", "branch__name"
        )
    }
    assert len(shown) == selector_engine.FOLD_AFTER and set(shown) <= having
    assert len(having) > len(shown)  # folded: more branches have it than are shown
