"""The wizard in Chromium: a walk by clicks (htmx), the back button, the paste shortcut, copy
buttons, and a full walk with JavaScript off."""

import re
from pathlib import Path

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

HOSTS = Path(__file__).resolve().parent.parent / "data" / "hosts"
H100 = "pytorch-python313-cuda12_8-sm90-avx512"


@pytest.fixture
def site(seeded_live_server):
    cache.clear()  # the live server's data was just reloaded; drop cached fragments
    return seeded_live_server.url


def question(page):
    return page.locator(".wizard-step legend")


def test_walk_the_wizard_by_clicks(page, site):
    page.goto(f"{site}/wizard/")
    expect(question(page)).to_contain_text("Which operating system")
    page.get_by_label("Linux").check()
    page.get_by_role("button", name="Next").click()
    expect(question(page)).to_contain_text("Which CPU architecture")
    page.get_by_label("x86-64").check()
    page.get_by_role("button", name="Next").click()
    expect(question(page)).to_contain_text("Do you have an NVIDIA GPU?")
    page.get_by_label("Yes").check()
    page.get_by_role("button", name="Next").click()
    expect(question(page)).to_contain_text("Which NVIDIA GPU")
    expect(page).to_have_url(re.compile(r"has_gpu=yes"))
    page.get_by_label("GPU (compute capability)").select_option("9.0")
    page.get_by_role("button", name="Next").click()
    expect(question(page)).to_contain_text("Which CPU features")
    page.get_by_label("AVX-512 (x86_64)", exact=False).first.check()
    page.get_by_role("button", name="Next").click()
    expect(question(page)).to_contain_text("What will you mostly run?")
    page.get_by_role("button", name="Next").click()  # general is preselected
    expect(question(page)).to_contain_text("Any constraints")
    page.get_by_role("button", name="Show the recommendation").click()
    pick = page.locator("a.wizard-pick")
    expect(pick).to_have_text(H100)
    expect(page).to_have_url(
        re.compile(
            r"os=linux.*arch=x86_64.*has_gpu=yes.*compute_cap=9\.0.*isa=avx512.*workload=general"
        )
    )
    # The copy buttons of the swapped-in result work.
    expect(page.locator("button.copy").first).to_be_visible()
    # Back: the previous step again.
    page.go_back()
    expect(question(page)).to_contain_text("Any constraints")
    expect(page).not_to_have_url(re.compile(r"library="))
    # The variant link leads to its page.
    page.go_forward()
    page.locator("a.wizard-pick").click()
    expect(page).to_have_url(re.compile(f"/variants/build-pytorch/main/{H100}/$"))


def test_change_an_answer(page, site):
    page.goto(
        f"{site}/wizard/?os=linux&arch=x86_64&has_gpu=yes&compute_cap=9.0&isa=avx512&workload=general&library="
    )
    expect(page.locator("a.wizard-pick")).to_have_text(H100)
    page.get_by_role("link", name="Change the answer to: What will you mostly run?").click()
    expect(question(page)).to_contain_text("What will you mostly run?")
    page.get_by_label("INT8 quantized inference").check()
    page.get_by_role("button", name="Next").click()
    page.get_by_role("button", name="Show the recommendation").click()
    expect(page.locator("a.wizard-pick")).to_have_text(
        "pytorch-python313-cuda12_8-sm90-avx512"
    )  # the CPU claim is AVX-512 only
    expect(page).to_have_url(re.compile(r"workload=int8-inference"))


def test_paste_nvidia_smi_and_lscpu(page, site):
    page.goto(f"{site}/wizard/")
    page.get_by_label("Output of nvidia-smi").fill(
        (HOSTS / "h100-xeon" / "nvidia-smi.txt").read_text()
    )
    page.get_by_label("Output of lscpu").fill((HOSTS / "h100-xeon" / "lscpu.txt").read_text())
    page.get_by_role("button", name="Detect and recommend").click()
    expect(page.locator("a.wizard-pick")).to_have_text(H100)
    expect(page.locator("#result")).to_contain_text("build-pytorch · branch main")
    detected = page.locator("#detected")
    expect(detected).to_contain_text("NVIDIA H100 80GB HBM3")
    expect(detected).to_contain_text("compute capability 9.0")
    expect(detected).to_contain_text("580.159.04")
    expect(detected).to_contain_text("Sapphire Rapids")
    # A short URL of what was derived: the GPU, the ISA level; never the flag list.
    expect(page).to_have_url(re.compile(r"gpu=NVIDIA\+H100.*isa=avx512bf16"))
    assert "cpu_flags" not in page.url and len(page.url) < 250


def test_a_bad_paste_shows_the_message_beside_the_field(page, site):
    page.goto(f"{site}/wizard/")
    page.get_by_label("Output of nvidia-smi").fill("hello world, no tool here")
    page.get_by_role("button", name="Detect and recommend").click()
    expect(page.locator("#p-nvidia_smi-error")).to_contain_text("could not be used")


def test_full_walk_without_javascript(browser, seeded_live_server):
    cache.clear()
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    site = seeded_live_server.url
    page.goto(f"{site}/wizard/")
    steps = [("Linux", None), ("x86-64", None), ("No", None)]
    for label, _ in steps:
        page.get_by_label(label, exact=False).first.check()
        page.get_by_role("button", name="Next").click()
    expect(question(page)).to_contain_text("Which CPU features")
    page.get_by_label("or paste the CPU flags", exact=False).fill("avx avx2 fma f16c")
    page.get_by_role("button", name="Next").click()
    page.get_by_label("INT8 quantized inference").check()
    page.get_by_role("button", name="Next").click()
    page.get_by_label("Python").select_option("3.12")
    page.get_by_role("button", name="Show the recommendation").click()
    expect(page.locator("a.wizard-pick")).to_have_text("pytorch-python312-cpu-avx2")
    expect(page).to_have_url(
        re.compile(r"has_gpu=no.*cpu_flags=avx.*workload=int8-inference.*python=3\.12")
    )
    expect(page.locator("button.copy").first).to_be_hidden()
    expect(page.locator("#result")).to_contain_text("flox build pytorch-python312-cpu-avx2")
    context.close()


def test_on_a_phone_the_paste_form_comes_first_and_folds_away_once_there_is_a_result(browser, site):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(f"{site}/wizard/#paste")  # the home page's "I don't know my hardware" link
    paste = page.locator("details#paste")
    expect(paste).to_have_js_property("open", True)
    paste_top = paste.bounding_box()["y"]
    assert paste_top < page.locator("form.wizard-step").bounding_box()["y"]
    assert paste_top < 400  # the fastest path is on the first screen
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.get_by_label("Output of lscpu").fill((HOSTS / "graviton2" / "lscpu.txt").read_text())
    page.get_by_role("button", name="Detect and recommend").click()
    expect(page.locator("a.wizard-pick")).to_have_text("pytorch-python313-cpu-armv8_2")
    # No nvidia-smi: the CPU-only build, with the warning saying what to paste.
    expect(page.locator(".wizard-warnings")).to_contain_text("give the output of nvidia-smi")
    expect(paste).to_have_js_property("open", False)
    assert page.locator("a.wizard-pick").bounding_box()["y"] < 844 * 2
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.locator("details#paste > summary").click()  # it is still there, one tap away
    expect(page.get_by_label("Output of lscpu")).to_be_visible()
    context.close()


def test_on_a_wide_screen_the_paste_form_sits_beside_the_questions(page, site):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{site}/wizard/")
    paste, step = (
        page.locator("details#paste").bounding_box(),
        page.locator("form.wizard-step").bounding_box(),
    )
    assert paste["x"] > step["x"] + step["width"] - 1 and abs(paste["y"] - step["y"]) < 300
