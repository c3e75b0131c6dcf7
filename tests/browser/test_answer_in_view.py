"""On a 390×844 phone the answer stays in the first screen: the selector's count or build after
every tap, the wizard's next question or answer after every step and after a paste, and every
compared variant's column."""

from pathlib import Path

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from tests.browser.test_selector import CLICKS, SM90

PHONE = {"width": 390, "height": 844}
HOSTS = Path(__file__).resolve().parent.parent / "data" / "hosts"


@pytest.fixture
def phone(browser, seeded_live_server):
    cache.clear()  # the live server's data was just reloaded; drop cached fragments
    context = browser.new_context(viewport=PHONE)
    yield context.new_page(), seeded_live_server.url
    context.close()


def in_first_screen(locator) -> dict:
    """The element's box, asserted to lie wholly inside the viewport."""
    box = locator.bounding_box()
    assert box is not None, "not rendered"
    assert 0 <= box["y"] and box["y"] + box["height"] <= PHONE["height"], box
    return box


def test_selector_count_and_build_stay_in_view_after_every_tap(phone):
    page, site = phone
    page.goto(f"{site}/")
    summary = page.locator("#selector-summary")
    for dimension, value in CLICKS:
        chosen = page.locator(f'[data-dimension="{dimension}"] .option[data-value="{value}"]')
        chosen.scroll_into_view_if_needed()
        chosen.click()
        expect(chosen).to_have_attribute("aria-current", "true")
        in_first_screen(summary)
        count = page.locator(".selector-count strong")
        if count.count():  # not narrowed to one yet: the same count as the list below
            expect(summary.locator("strong")).to_have_text(count.inner_text())
    expect(summary).to_contain_text(f"Your build: {SM90}")
    in_first_screen(summary)


def test_wizard_shows_each_next_question_and_the_answer_in_view(phone):
    page, site = phone
    page.goto(f"{site}/wizard/")
    question = page.locator(".wizard-step legend")
    steps = [
        ("Linux", "Which CPU architecture"),
        ("x86-64", "Do you have an NVIDIA GPU?"),
        ("Yes", "Which NVIDIA GPU"),
    ]
    for label, next_question in steps:
        page.get_by_label(label, exact=False).first.check()
        page.get_by_role("button", name="Next").click()
        expect(question).to_contain_text(next_question)
        in_first_screen(question)
    page.get_by_label("GPU (compute capability)").select_option("9.0")
    page.get_by_role("button", name="Next").click()
    expect(question).to_contain_text("Which CPU features")
    in_first_screen(question)
    page.get_by_label("or the CPU model", exact=False).fill("Xeon Platinum 8480+")
    page.get_by_role("button", name="Next").click()
    expect(question).to_contain_text("What will you mostly run?")
    page.get_by_role("button", name="Next").click()
    page.get_by_role("button", name="Show the recommendation").click()
    pick = page.locator("a.wizard-pick")
    expect(pick).to_have_text(SM90)
    in_first_screen(pick)


def test_after_a_paste_the_answer_is_in_the_first_screen(phone):
    page, site = phone
    page.goto(f"{site}/wizard/")
    page.get_by_label("Output of nvidia-smi").fill(
        (HOSTS / "h100-xeon" / "nvidia-smi.txt").read_text()
    )
    page.get_by_label("Output of lscpu").fill((HOSTS / "h100-xeon" / "lscpu.txt").read_text())
    page.get_by_role("button", name="Detect and recommend").click()
    pick = page.locator("a.wizard-pick")
    expect(pick).to_have_text(SM90)
    in_first_screen(pick)


def test_compare_shows_every_column_on_a_phone(phone):
    page, site = phone
    ids = [
        f"build-pytorch/main/{SM90}",
        "build-pytorch/main/pytorch-python313-cuda12_8-sm90-avx2",
    ]
    page.goto(f"{site}/compare/?" + "&".join(f"v={i}" for i in ids))
    headers = page.locator(".compare-table thead th")
    expect(headers).to_have_count(3)
    for i in range(3):
        box = headers.nth(i).bounding_box()
        assert box["x"] + box["width"] <= PHONE["width"], (i, box)
