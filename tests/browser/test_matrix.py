"""The variant matrix in Chromium: htmx filtering, history, grid links, no-JS, labels."""

import re

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from catalog.models import Variant


@pytest.fixture
def matrix(page, seeded_live_server):
    cache.clear()
    page.csp_violations = []
    page.on(
        "console",
        lambda m: "Content Security Policy" in m.text and page.csp_violations.append(m.text),
    )
    page.goto(f"{seeded_live_server.url}/variants/")
    expect(page.get_by_test_id("result-count")).to_have_text(str(Variant.objects.count()))
    return page


def rows(page):
    return page.locator("table.matrix-list tbody tr:not(.group)")


def torchvision(page):
    # The label carries the value's count: "torchvision 111".
    return page.get_by_role("checkbox", name=re.compile(r"^torchvision \d+$"))


def test_filter_by_gpu_swaps_the_results_and_updates_the_url(matrix):
    page = matrix
    form_before = page.locator("#matrix-filters").element_handle()
    page.get_by_label("SM90 Hopper").check()
    expected = Variant.objects.filter(gpu_arch__sm="sm90").count()
    expect(page.get_by_test_id("result-count")).to_have_text(str(expected))
    expect(page).to_have_url(re.compile(r"/variants/\?.*gpu=sm90"))
    expect(rows(page)).to_have_count(min(expected, 50))  # the first page
    # Only the results were swapped: the form element is the same node.
    assert page.evaluate("(f) => document.contains(f)", form_before)
    assert page.csp_violations == []  # htmx runs under the site's Content-Security-Policy


def test_back_restores_the_previous_selection(matrix):
    page = matrix
    page.get_by_label("SM90 Hopper").check()
    expect(page).to_have_url(re.compile(r"gpu=sm90"))
    torchvision(page).check()
    both = Variant.objects.filter(gpu_arch__sm="sm90", library="torchvision").count()
    expect(page.get_by_test_id("result-count")).to_have_text(str(both))
    page.go_back()
    expect(page).not_to_have_url(re.compile(r"library=torchvision"))
    expect(page.get_by_test_id("result-count")).to_have_text(
        str(Variant.objects.filter(gpu_arch__sm="sm90").count())
    )
    expect(torchvision(page)).not_to_be_checked()


def test_back_restores_the_form_too_so_the_next_change_keeps_the_selection(matrix):
    # A history snapshot keeps the form's markup, not what was checked or typed: the form
    # must show the URL's selection after back, or the next change would drop it.
    page = matrix
    page.get_by_label("SM90 Hopper").check()
    expect(page).to_have_url(re.compile(r"gpu=sm90"))
    page.get_by_label("Search", exact=True).fill("4090")
    expect(page).to_have_url(re.compile(r"q=4090"))
    torchvision(page).check()
    expect(page).to_have_url(re.compile(r"library=torchvision"))
    page.go_back()
    expect(page).not_to_have_url(re.compile(r"library=torchvision"))
    expect(page.get_by_label("SM90 Hopper")).to_be_checked()
    expect(page.get_by_label("Search", exact=True)).to_have_value("4090")
    page.get_by_label("Grid").check()
    expect(page).to_have_url(re.compile(r"view=grid"))
    expect(page).to_have_url(re.compile(r"gpu=sm90"))
    expect(page).to_have_url(re.compile(r"q=4090"))


def test_grid_cell_opens_the_variant_page(page, seeded_live_server):
    cache.clear()
    page.goto(
        f"{seeded_live_server.url}/variants/?view=grid&branch=main&repository=build-pytorch&library=pytorch"
    )
    cell = page.get_by_role("link", name="pytorch-python313-cuda12_8-sm90-avx512", exact=True)
    cell.click()
    expect(page).to_have_url(
        re.compile(r"/variants/build-pytorch/main/pytorch-python313-cuda12_8-sm90-avx512/$")
    )
    expect(page.locator("h1")).to_contain_text("pytorch-python313-cuda12_8-sm90-avx512")


def test_switching_to_the_grid_view_keeps_the_filters(matrix):
    page = matrix
    page.get_by_label("cuda-13_0").check()
    count = str(Variant.objects.filter(branch__name="cuda-13_0").count())
    expect(page.get_by_test_id("result-count")).to_have_text(count)
    page.get_by_label("Grid").check()
    expect(page.locator("table.grid")).to_have_count(1)
    expect(page).to_have_url(re.compile(r"view=grid"))
    expect(page.get_by_test_id("result-count")).to_have_text(count)


def test_works_without_javascript(browser, seeded_live_server):
    cache.clear()
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{seeded_live_server.url}/variants/")
    page.get_by_label("SM121 DGX Spark").check()
    page.get_by_role("button", name="Apply filters").click()
    expect(page).to_have_url(re.compile(r"gpu=sm121"))
    expected = Variant.objects.filter(gpu_arch__sm="sm121").count()
    expect(page.get_by_test_id("result-count")).to_have_text(str(expected))
    expect(rows(page)).to_have_count(expected)
    expect(page.get_by_label("SM121 DGX Spark")).to_be_checked()
    context.close()


def test_a_bad_value_shows_the_error_beside_the_field(page, seeded_live_server):
    page.goto(f"{seeded_live_server.url}/variants/?gpu=sm999")
    expect(page.locator("#filter-gpu .field-error")).to_contain_text(
        "sm999 is not one of the available choices"
    )


def test_every_form_control_has_a_label(matrix):
    unlabelled = matrix.evaluate(
        """() => [...document.querySelectorAll('#matrix-filters input, #matrix-filters select')]
               .filter(el => el.type !== 'hidden' && el.labels.length === 0)
               .map(el => el.name + '=' + el.value)"""
    )
    assert unlabelled == []
    assert matrix.locator("#matrix-filters input, #matrix-filters select").count() > 40


def test_pushed_url_carries_no_empty_or_default_parameters(matrix):
    page = matrix
    page.get_by_label("SM90 Hopper").check()
    expect(page).to_have_url(re.compile(r"/variants/\?gpu=sm90$"))
    page.get_by_label("Search", exact=True).fill("python3.12")
    expect(page).to_have_url(re.compile(r"/variants/\?q=python3\.12&gpu=sm90$"))
    page.get_by_label("Search", exact=True).fill("")
    expect(page).to_have_url(re.compile(r"/variants/\?gpu=sm90$"))


def test_free_text_combines_terms(matrix):
    page = matrix
    page.get_by_label("Search", exact=True).fill("h100 python3.12")
    expected = Variant.objects.filter(gpu_arch__sm="sm90", python_version="3.12").count()
    expect(page.get_by_test_id("result-count")).to_have_text(str(expected))


def test_sort_header_shows_the_direction_and_reverses_it(matrix):
    page = matrix
    header = page.locator("table.matrix-list th", has_text="GPU architecture")
    header.get_by_role("link").click()
    expect(page).to_have_url(re.compile(r"sort=gpu"))
    header = page.locator("table.matrix-list th", has_text="GPU architecture")
    expect(header).to_have_attribute("aria-sort", "ascending")
    expect(page.get_by_label("Sort by")).to_have_value("gpu")
    header.get_by_role("link").click()
    expect(page).to_have_url(re.compile(r"sort=-gpu"))
    expect(page.locator("table.matrix-list th", has_text="GPU architecture")).to_have_attribute(
        "aria-sort", "descending"
    )
    assert "GPU architecture (descending)" in page.get_by_label("Sort by").inner_text()


def test_pagination_moves_through_pages_and_shows_all(matrix):
    page = matrix
    total = Variant.objects.count()
    pages = -(-total // 50)
    expect(page.locator(".pagination")).to_contain_text(f"Page 1 of {pages}")
    page.get_by_role("link", name="Next").click()
    expect(page.locator(".pagination")).to_contain_text(f"Page 2 of {pages}")
    expect(page).to_have_url(re.compile(r"page=2"))
    expect(rows(page)).to_have_count(50)
    page.get_by_role("link", name=f"Show all {total}").click()
    expect(page).to_have_url(re.compile(r"per_page=all"))
    expect(rows(page)).to_have_count(total)


def test_keyboard_focus_is_visible_and_skips_to_results(matrix):
    page = matrix
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to results")
    expect(skip).to_be_focused()
    outline = page.evaluate(
        "() => getComputedStyle(document.activeElement).outlineStyle + ' ' + "
        "getComputedStyle(document.activeElement).outlineWidth"
    )
    assert outline == "solid 3px"
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"#results$"))
    page.keyboard.press("Tab")
    # The next stop is inside the results, not the 60 filter checkboxes before them.
    assert page.evaluate("() => !!document.activeElement.closest('#results')")


def test_busy_indicator_shows_while_a_filter_change_is_on_its_way(matrix):
    page = matrix
    form = page.locator("#matrix-filters")
    expect(form).to_have_attribute("hx-indicator", "#matrix-busy")
    busy = page.locator("#matrix-busy")
    expect(busy).to_be_hidden()
    # Hold the answer back so the indicator can be seen.
    page.route("**/variants/?*", lambda route: (page.wait_for_timeout(600), route.continue_()))
    page.get_by_label("SM90 Hopper").check()
    expect(busy).to_be_visible()
    expect(page.get_by_test_id("result-count")).not_to_have_text(str(Variant.objects.count()))
    expect(busy).to_be_hidden()
