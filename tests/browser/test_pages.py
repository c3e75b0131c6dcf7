"""The reference pages in Chromium: copy buttons, links between pages, the docs' contents."""

import re

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

SM90 = "/variants/build-pytorch/main/pytorch-python313-cuda12_8-sm90-avx512/"


@pytest.fixture
def site(seeded_live_server):
    cache.clear()  # the live server's data was just reloaded; drop cached fragments
    return seeded_live_server.url


def test_copy_button_copies_the_build_command(page, site):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site)
    page.goto(f"{site}{SM90}")
    button = page.locator('button.copy[data-copy="cmd-build"]')
    expect(button).to_be_visible()
    button.click()
    expect(button).to_have_text("Copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == "flox build pytorch-python313-cuda12_8-sm90-avx512"


def test_copy_button_copies_the_publish_command_with_the_organisation(page, site):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site)
    page.goto(f"{site}{SM90}")
    page.get_by_label("Your Flox organisation").fill("acme-ml")
    page.get_by_role("button", name="Fill in").click()
    expect(page).to_have_url(re.compile(r"\?org=acme-ml"))
    page.locator('button.copy[data-copy="cmd-publish"]').click()
    assert page.evaluate("navigator.clipboard.readText()") == (
        "flox publish -o acme-ml pytorch-python313-cuda12_8-sm90-avx512"
    )


def test_without_javascript_the_commands_are_plain_selectable_text(browser, site):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{site}{SM90}")
    expect(page.locator("#cmd-build")).to_have_text(
        "flox build pytorch-python313-cuda12_8-sm90-avx512"
    )
    expect(page.locator("button.copy").first).to_be_hidden()
    context.close()


def test_detail_page_links_lead_to_the_branch_architecture_isa_and_other_branches(page, site):
    page.goto(f"{site}{SM90}")
    page.locator("table.fields").get_by_role("link", name="SM90 Hopper").click()
    expect(page).to_have_url(f"{site}/architectures/sm90/")
    expect(page.get_by_role("heading", level=1)).to_have_text("SM90 — Hopper")

    page.go_back()
    page.locator("table.fields").get_by_role("link", name="AVX-512", exact=True).click()
    expect(page).to_have_url(f"{site}/isas/avx512/")

    page.go_back()
    page.locator("ul.other-branches").get_by_role(
        "link", name="pytorch-python313-cuda12_9-sm90-avx512"
    ).first.click()
    expect(page).to_have_url(
        re.compile(
            r"/variants/build-pytorch/pytorch-2\.9-python313/pytorch-python313-cuda12_9-sm90-avx512/$"
        )
    )
    expect(page.locator("#cmd-checkout")).to_have_text("git checkout pytorch-2.9-python313")

    page.locator("nav.crumbs").get_by_role(
        "link", name="build-pytorch:pytorch-2.9-python313"
    ).click()
    expect(page).to_have_url(f"{site}/branches/build-pytorch/pytorch-2.9-python313/")
    expect(page.locator(".versions")).to_contain_text("12.9")


def test_companion_link_leads_to_its_pytorch(page, site):
    page.goto(f"{site}/variants/build-pytorch/main/torchvision-python313-cuda12_8-sm61-avx/")
    page.get_by_role("link", name="pytorch-python313-cuda12_8-sm61-avx").click()
    expect(page).to_have_url(
        f"{site}/variants/build-pytorch/main/pytorch-python313-cuda12_8-sm61-avx/"
    )
    expect(page.locator("ul.companions")).to_contain_text("torchvision-python313-cuda12_8-sm61-avx")


def test_docs_page_shows_its_table_of_contents_and_anchors_work(page, site):
    page.goto(f"{site}/docs/publishing/")
    toc = page.get_by_role("navigation", name="Contents")
    expect(toc).to_be_visible()
    links = toc.get_by_role("link")
    expect(links.nth(2)).to_be_attached()  # at least three entries
    target = links.nth(1)
    href = target.get_attribute("href")
    target.click()
    expect(page).to_have_url(re.compile(re.escape(href) + "$"))
    expect(page.locator(f"h2{href}")).to_be_in_viewport()


def test_branch_grid_cell_opens_its_variant(page, site):
    page.goto(f"{site}/branches/build-pytorch/main/")
    page.locator(f'table.grid a.cell-link[href="{SM90}"]').click()
    expect(page).to_have_url(f"{site}{SM90}")
