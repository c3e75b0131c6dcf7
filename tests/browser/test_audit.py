"""The audit page in Chromium: the lint of every branch, readable and clickable without
JavaScript on a phone-width screen."""

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from catalog import audit_store
from catalog.models import GpuArchitecture, Variant

PLANTED = "pytorch-python313-cuda12_9-sm121-avx"


@pytest.fixture
def site(seeded_live_server):
    cache.clear()
    return seeded_live_server.url


def test_lint_findings_name_and_link_each_variant_at_phone_width_without_javascript(browser, site):
    # DGX Spark (SM121) paired with an x86 ISA: valid for the model, caught by the lint.
    Variant.objects.filter(
        branch__name="pytorch-2.9-python313", pname="pytorch-python313-cuda12_9-sm120-avx"
    ).update(
        gpu_arch=GpuArchitecture.objects.get(sm="sm121"),
        pname=PLANTED,
    )
    audit_store.refresh_all()  # a bulk update sends no signals: store the findings anew
    cache.clear()
    context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(f"{site}/audit/")
    section = page.locator("section.audit-lint")
    branch = section.locator("#lint-build-pytorch-pytorch-2\\.9-python313")
    expect(branch).to_contain_text("1 finding")
    expect(branch).to_contain_text("SM121 is built into an aarch64 system")
    # Nothing spills sideways at 390 px.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # The rules are behind a native <details>: it opens without JavaScript.
    rules = section.locator("dl.rules")
    expect(rules).to_be_hidden()
    section.get_by_text("The rules").click()
    expect(rules).to_contain_text("arm-only-gpu")
    branch.get_by_role("link", name=PLANTED).click()
    expect(page).to_have_url(f"{site}/variants/build-pytorch/pytorch-2.9-python313/{PLANTED}/")
    expect(page.get_by_role("heading", level=1)).to_contain_text(PLANTED)
    context.close()
