"""Phones: at 390 px no page scrolls sideways; the matrix's filters fold behind a button."""

import re

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from tests.page_types import PAGES

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def phone(browser, seeded_live_server):
    cache.clear()
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    yield page, seeded_live_server.url
    context.close()


def wide_elements(page) -> list[str]:
    """The elements that stick out of the viewport, for a readable failure."""
    return page.evaluate(
        """() => [...document.querySelectorAll('body *')]
             .filter(el => el.getBoundingClientRect().right > innerWidth + 1)
             .filter(el => !el.closest('.table-wrap, pre'))
             .slice(0, 5).map(el => el.tagName + '.' + el.className + ' ' +
                              Math.round(el.getBoundingClientRect().right))"""
    )


def test_no_page_scrolls_sideways(phone):
    page, site = phone
    wide = {}
    for name, path, _ in PAGES:
        page.goto(site + path)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            wide[name] = (width, wide_elements(page))
    assert wide == {}


def test_matrix_filters_fold_behind_a_button_on_a_phone(phone):
    page, site = phone
    page.goto(site + "/variants/")
    toggle = page.locator("details.filters-panel > summary")
    expect(toggle).to_have_text("Filters and sort")
    expect(page.get_by_label("SM90 Hopper")).to_be_hidden()
    # Folded, the filters leave the results on the first screen.
    assert page.locator("#results").bounding_box()["y"] < PHONE["height"]
    toggle.click()
    expect(page.get_by_label("SM90 Hopper")).to_be_visible()
    page.get_by_label("SM90 Hopper").check()
    expect(page).to_have_url(re.compile(r"/variants/\?gpu=sm90$"))


def test_on_a_wide_screen_the_filters_are_always_open(page, seeded_live_server):
    cache.clear()
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(seeded_live_server.url + "/variants/")
    expect(page.locator("details.filters-panel > summary")).to_be_hidden()
    expect(page.get_by_label("SM90 Hopper")).to_be_visible()
