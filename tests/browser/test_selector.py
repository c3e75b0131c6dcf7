"""The selector, the variant page and compare in Chromium, at 1440 px and on a 390 px phone."""

import re

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

SM90 = "pytorch-python313-cuda12_8-sm90-avx512"
SM90_URL = f"/variants/build-pytorch/main/{SM90}/"
# The clicks that narrow the catalogue to SM90 / AVX-512 / CUDA 12.8 / build-pytorch/main PyTorch.
CLICKS = [
    ("gpu", "sm90"),
    ("isa", "avx512"),
    ("cuda", "12.8"),
    ("branch", "build-pytorch/main"),
    ("library", "pytorch"),
]
WIDTHS = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
def site(seeded_live_server):
    cache.clear()  # the live server's data was just reloaded; drop cached fragments
    return seeded_live_server.url


def no_sideways_scroll(page):
    width, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= inner, f"{page.url} is {width} px wide in a {inner} px window"


def selector_fits(page):
    """The selector and its commands stay inside the window (the rest of the home page, its
    branch table, is the phone layout's concern and checked with every page type)."""
    right, scroll, client, inner = page.evaluate(
        "(() => { const s = document.getElementById('selector');"
        " return [s.getBoundingClientRect().right, s.scrollWidth, s.clientWidth,"
        " window.innerWidth]; })()"
    )
    assert right <= inner and scroll <= client, f"the selector overflows: {right}, {scroll}"


def option(page, dimension, value):
    return page.locator(f'[data-dimension="{dimension}"] .option[data-value="{value}"]')


def narrow_by_clicks(page):
    for dimension, value in CLICKS:
        option(page, dimension, value).click()
        expect(option(page, dimension, value)).to_have_attribute("aria-current", "true")
    expect(page.locator("#selector-pname")).to_have_text(SM90)


@pytest.mark.parametrize("width", WIDTHS)
def test_selector_narrows_to_one_variant_by_clicks(browser, site, width):
    context = browser.new_context(viewport=WIDTHS[width])
    page = context.new_page()
    page.goto(f"{site}/")
    expect(page.locator(".selector-count")).to_contain_text("variants match")
    narrow_by_clicks(page)
    # The URL holds every choice, and loading it again shows the same answer.
    for dimension, value in CLICKS:
        assert f"{dimension}={value}" in page.url
    expect(page.locator("#cmd-sel-checkout")).to_have_text("git checkout main")
    expect(page.locator("#cmd-sel-build")).to_have_text(f"flox build {SM90}")
    expect(page.locator("#cmd-sel-clone")).to_contain_text(
        "git clone https://github.com/barstoolbluz/build-pytorch"
    )
    expect(page.locator('button.copy[data-copy="cmd-sel-build"]')).to_be_visible()
    selector_fits(page)
    page.reload()
    expect(page.locator("#selector-pname")).to_have_text(SM90)
    context.close()


def test_selector_swaps_in_place_with_htmx(page, site):
    page.goto(f"{site}/")
    page.evaluate("window.__kept = true")  # survives only if the page is not reloaded
    option(page, "gpu", "sm90").click()
    expect(page).to_have_url(f"{site}/?gpu=sm90")
    expect(option(page, "gpu", "sm90")).to_have_attribute("aria-current", "true")
    assert page.evaluate("window.__kept") is True


def test_selector_works_without_javascript(browser, site):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(f"{site}/")
    narrow_by_clicks(page)
    assert page.url.startswith(f"{site}/?gpu=sm90&isa=avx512")
    expect(page.locator("#cmd-sel-install")).to_have_text(f"flox install <your-org>/{SM90}")
    selector_fits(page)
    context.close()


def test_impossible_options_are_disabled_with_the_reason(page, site):
    page.goto(f"{site}/")
    option(page, "gpu", "sm61").click()
    expect(page).to_have_url(f"{site}/?gpu=sm61")
    cuda13 = option(page, "cuda", "13.0")
    expect(cuda13).to_have_attribute("aria-disabled", "true")
    expect(cuda13).to_contain_text("No build for CUDA 13.0 with Pascal (SM61)")
    cuda13.click(force=True)  # not a link: nothing happens
    expect(page).to_have_url(f"{site}/?gpu=sm61")


def test_i_dont_know_my_hardware_leads_to_the_paste_form(page, site):
    page.goto(f"{site}/")
    page.get_by_role("link", name="I don't know my hardware").click()
    expect(page).to_have_url(f"{site}/wizard/#paste")
    expect(page.locator("#paste")).to_be_visible()


@pytest.mark.parametrize("width", WIDTHS)
def test_variant_page_puts_the_commands_above_the_facts(browser, site, width):
    context = browser.new_context(viewport=WIDTHS[width])
    page = context.new_page()
    page.goto(f"{site}{SM90_URL}")
    commands = page.locator("#commands").bounding_box()
    fields = page.locator("#fields").bounding_box()
    recipe = page.locator("#recipe").bounding_box()
    assert commands["y"] < fields["y"] < recipe["y"]
    assert commands["y"] < WIDTHS[width]["height"]  # on the first screen
    expect(page.locator("#cmd-clone")).to_contain_text("github.com/barstoolbluz/build-pytorch")
    no_sideways_scroll(page)
    context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_with_from_a_variant_page(browser, site, width):
    context = browser.new_context(viewport=WIDTHS[width])
    page = context.new_page()
    page.goto(f"{site}{SM90_URL}")
    other = "build-pytorch/main/pytorch-python313-cuda12_8-sm90-avx2"
    page.get_by_label("Another variant").select_option(other)
    page.get_by_role("button", name="Compare", exact=True).click()
    expect(page).to_have_url(re.compile(r"/compare/\?v=build-pytorch%2Fmain%2F.*avx512&v=.*avx2$"))
    isa_row = page.locator("tr.differs", has_text="CPU ISA")
    expect(isa_row).to_contain_text("AVX2")
    expect(page.locator("tr", has_text="Repository").first).not_to_have_class("differs")
    expect(page.locator(".diff-add").first).to_be_visible()
    no_sideways_scroll(page)
    context.close()


def test_compare_by_ticking_variants(page, site):
    page.goto(f"{site}/branches/build-pytorch/main/")
    page.locator("details.variant-list > summary").click()
    page.get_by_label(f"Compare {SM90}", exact=True).check()
    page.get_by_label("Compare pytorch-python313-cuda12_8-sm61-avx", exact=True).check()
    page.get_by_role("button", name="Compare ticked variants").click()
    expect(page).to_have_url(re.compile(r"/compare/\?v=.*&v=.*"))
    expect(page.locator("table.compare-table thead th")).to_have_count(3)
    expect(page.locator("tr.differs", has_text="GPU architecture")).to_contain_text("SM61")
