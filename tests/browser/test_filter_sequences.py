"""Filters that keep what was chosen: from every link into the matrix, tick filters one after
another and, after each step, check the boxes, the count against the rows listed, every facet
count against what ticking that value gives (the JSON API's count for that selection) and the
address."""

import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.core.cache import cache
from django.test import Client
from playwright.sync_api import expect

from catalog.browse.filters import FACETS

CHECKBOX_FACETS = tuple(FACETS)  # the checkbox filters, in the panel's order
NOT_FILTERS = {"view", "sort", "per_page", "page"}  # how the list is shown, not what it holds


def rows(page):
    return page.locator("table.matrix-list tbody tr:not(.group)")


def api_count(selection: list[tuple[str, str]]) -> int:
    pairs = [(k, v) for k, v in selection if k not in NOT_FILTERS] + [("page_size", "1")]
    response = Client().get("/api/variants", pairs)
    assert response.status_code == 200, response.content
    return response.json()["count"]


def url_pattern(pair, plain_form: bool) -> re.Pattern:
    name, value = pair
    value = re.escape(value)
    if plain_form:  # the browser encodes the slash of a submitted form; links and htmx do not
        value = value.replace("/", "(/|%2F)")
    return re.compile(rf"[?&]{re.escape(name)}={value}(&|$)")


def facet_values(page, name: str) -> list[str]:
    return page.locator(f"#filter-{name} input[type=checkbox]").evaluate_all(
        "boxes => boxes.map(b => b.value)"
    )


def count_of(page, name: str, value: str):
    return page.locator(f'#filter-{name} label:has(input[value="{value}"]) .n')


def box(page, name: str, value: str):
    return page.locator(f'#filter-{name} input[value="{value}"]')


def check_state(page, selection: list[tuple[str, str]], plain_form: bool = False) -> int:
    """Boxes, count, rows, facet counts and address all agree with `selection`."""
    for pair in selection:
        expect(page).to_have_url(url_pattern(pair, plain_form))
    # ... and nothing else, but the view the plain form always sends (htmx drops it)
    shown = [pair for pair in parse_qsl(urlsplit(page.url).query) if pair != ("view", "list")]
    assert sorted(shown) == sorted(selection)
    chosen = [(k, v) for k, v in selection if k in CHECKBOX_FACETS]
    for name, value in chosen:
        expect(box(page, name, value)).to_be_checked()
    expect(page.locator("#matrix-filters input[type=checkbox]:checked")).to_have_count(len(chosen))
    total = api_count(selection)
    assert total > 0, selection  # a sequence that empties the list proves little
    expect(page.get_by_test_id("result-count")).to_have_text(str(total))
    if ("per_page", "all") in selection:
        expect(rows(page)).to_have_count(total)
    else:  # the first page, and the link to the rest names the same count
        expect(rows(page)).to_have_count(min(total, 50))
        if total > 50:
            expect(page.get_by_role("link", name=f"Show all {total}")).to_be_visible()
    for name in CHECKBOX_FACETS:
        others = [(k, v) for k, v in selection if k != name]
        for value in facet_values(page, name):
            expected = api_count(others + [(name, value)])
            expect(count_of(page, name, value)).to_have_text(str(expected))
    return total


def pick(page, name: str, total: int) -> str:
    """The first unticked value of a facet that narrows the list without emptying it, else the
    first that keeps it (a branch whose variants all have one status)."""
    counts = {
        value: int(count_of(page, name, value).inner_text())
        for value in facet_values(page, name)
        if not box(page, name, value).is_checked()
    }
    narrowing = [v for v, n in counts.items() if 0 < n < total]
    keeping = [v for v, n in counts.items() if n == total]
    if not narrowing + keeping:
        pytest.fail(f"no value of {name} keeps any of this selection")
    return (narrowing + keeping)[0]


def tick_in_sequence(page, entry_pairs, facets):
    """Show all rows, then tick each facet's first narrowing value, checking after each step."""
    selection = list(entry_pairs)
    total = check_state(page, selection)
    page.get_by_label("Rows per page").select_option("all")
    selection.append(("per_page", "all"))
    check_state(page, selection)
    for name in facets:
        value = pick(page, name, total)
        shown = int(count_of(page, name, value).inner_text())
        box(page, name, value).check()
        selection.append((name, value))
        total = check_state(page, selection)
        # Ticking a value gives the count that stood beside it (no value of this facet was
        # ticked before, so it alone decides).
        assert total == shown


def landed(page, entry_pairs):
    """The matrix was reached with exactly the entry link's selection."""
    expect(page).to_have_url(re.compile(r"/variants/\?"))
    assert sorted(parse_qsl(urlsplit(page.url).query)) == sorted(entry_pairs)


@pytest.fixture
def site(page, seeded_live_server):
    cache.clear()
    page.set_default_timeout(10_000)
    page.base = seeded_live_server.url
    return page


def test_from_the_branch_page(site):
    page = site
    page.goto(f"{page.base}/branches/build-pytorch/pytorch-2.9-python313/")
    page.get_by_role("link", name="Open this branch in the variant matrix").click()
    entry = [("branch", "build-pytorch/pytorch-2.9-python313")]
    landed(page, entry)
    tick_in_sequence(page, entry, ["status", "python"])


# Each test walks several entries one after another: a test's seeded database costs more than
# a walk.
REFERENCE_PAGES = [
    # (page, the link into the matrix on it, the filters to tick after landing)
    (
        "/architectures/sm90/",
        [("gpu", "sm90"), ("branch", "build-pytorch/main")],
        ["isa", "status"],
    ),
    ("/isas/avx512/", [("isa", "avx512"), ("branch", "build-pytorch/main")], ["gpu", "status"]),
]
HOME_LINKS = [
    ("/variants/?gpu=sm90", [("gpu", "sm90")], ["status", "python"]),  # a GPU's quick link
    ("/variants/?gpu=none", [("gpu", "none")], ["library", "backend"]),  # CPU only and Apple MPS
    ("/variants/?branch=build-pytorch/main", [("branch", "build-pytorch/main")], ["cuda", "isa"]),
]


def href(entry) -> str:
    return "/variants/?" + "&".join(f"{k}={v}" for k, v in entry)


def test_from_the_architecture_and_isa_pages(site):
    page = site
    for address, entry, facets in REFERENCE_PAGES:
        page.goto(f"{page.base}{address}")
        page.locator(f'a[href="{href(entry)}"]').click()
        landed(page, entry)
        tick_in_sequence(page, entry, facets)


def test_from_the_home_page(site):
    page = site
    for link, entry, facets in HOME_LINKS:
        page.goto(f"{page.base}/")
        page.locator(f'a[href="{link}"]').first.click()
        landed(page, entry)
        tick_in_sequence(page, entry, facets)


def test_from_a_search_result(site):
    # The search leads to the architecture page, whose per-branch links open the matrix.
    page = site
    page.goto(f"{page.base}/search/?q=Hopper")
    page.locator(".search-results a", has_text="SM90").first.click()
    expect(page).to_have_url(re.compile(r"/architectures/sm90/$"))
    entry = [("gpu", "sm90"), ("branch", "build-pytorch/pytorch-2.9-python313")]
    page.locator(f'a[href="{href(entry)}"]').click()
    landed(page, entry)
    tick_in_sequence(page, entry, ["status", "isa"])


def test_from_the_matrix_search_box(site):
    page = site
    page.goto(f"{page.base}/variants/")
    page.get_by_label("Search", exact=True).fill("H100")
    entry = [("q", "H100")]
    expect(page).to_have_url(re.compile(r"/variants/\?q=H100$"))
    tick_in_sequence(page, entry, ["status", "python"])


def test_without_javascript(browser, seeded_live_server):
    cache.clear()
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.goto(f"{seeded_live_server.url}/branches/build-pytorch/pytorch-2.9-python313/")
    page.get_by_role("link", name="Open this branch in the variant matrix").click()
    selection = [("branch", "build-pytorch/pytorch-2.9-python313")]
    landed(page, selection)
    page.get_by_label("Rows per page").select_option("all")
    page.get_by_role("button", name="Apply filters").click()
    selection.append(("per_page", "all"))
    total = check_state(page, selection, plain_form=True)
    for name in ("status", "python"):
        value = pick(page, name, total)
        shown = int(count_of(page, name, value).inner_text())
        box(page, name, value).check()
        page.get_by_role("button", name="Apply filters").click()
        selection.append((name, value))
        total = check_state(page, selection, plain_form=True)
        assert total == shown
    context.close()
