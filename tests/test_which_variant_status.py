"""`which-variant` prints a build's status before its commands, as the web wizard does: the same
status note, the nearest variant further along for one that is not built, and the same five
steps (catalog.queries.build_answer behind both)."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command

from catalog import services
from catalog.build_commands import STATUS_NOTES

PLANNED = ["--os", "linux", "--arch", "x86_64", "--gpu", "none", "--isa", "avx2"]
PLANNED_BRANCH = "pytorch-2.10-python313"
PNAME = "pytorch-python313-cpu-avx2"
WIZARD = "/wizard/?os=linux&arch=x86_64&has_gpu=no&isa=avx2&workload=general&library=pytorch"


def which_variant(*args) -> str:
    out = io.StringIO()
    call_command("which-variant", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def web_text(client, url: str) -> str:
    html = client.get(url).content.decode()
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def position(text: str, *needles: str) -> list[int]:
    found = [text.find(n) for n in needles]
    assert -1 not in found, [n for n, i in zip(needles, found, strict=True) if i == -1]
    return found


@pytest.mark.django_db
def test_a_planned_variant_says_so_and_names_the_nearest_built_one_first(client):
    out = which_variant(*PLANNED, "--branch", PLANNED_BRANCH)
    assert f"Use: {PNAME}  (build-pytorch branch {PLANNED_BRANCH})" in out
    status = f"Status: Planned — {STATUS_NOTES['planned']}"
    nearest = (
        f"Nearest variant further along: {PNAME} (recipe): branch main instead of {PLANNED_BRANCH}."
    )
    clone = "git clone https://github.com/barstoolbluz/build-pytorch"
    publish = f"flox publish -o <your-org> {PNAME}"
    # Status, then the nearest variant, then the five steps, in that order.
    s, n, c, p = position(out, status, nearest, clone, publish)
    assert s < n < c < p
    assert "Commands (status: Planned):" in out
    # The web wizard shows the same status and the same nearest variant for the same question.
    web = web_text(client, f"{WIZARD}&branch={PLANNED_BRANCH}")
    assert STATUS_NOTES["planned"] in web
    assert f"Nearest variant further along: {PNAME} (recipe): branch main instead of" in web


@pytest.mark.django_db
def test_a_built_variant_says_built_and_names_no_other(client):
    services.record_build(
        repository="build-pytorch", branch="main", pname=PNAME, status="built", host="ci"
    )
    out = which_variant(*PLANNED)
    assert f"Use: {PNAME}  (build-pytorch branch main)" in out
    status = f"Status: Built — {STATUS_NOTES['built']}"
    s, c = position(out, status, "git clone https://github.com/barstoolbluz/build-pytorch")
    assert s < c
    assert "Nearest variant further along" not in out
    assert "No variant for this hardware is further along yet." not in out
    assert STATUS_NOTES["built"] in web_text(client, WIZARD)
    # The planned one on the newer branch now points at this built build.
    planned = which_variant(*PLANNED, "--branch", PLANNED_BRANCH)
    assert f"Nearest variant further along: {PNAME} (built): branch main instead of" in planned


@pytest.mark.django_db
def test_a_planned_variant_with_nothing_further_along_says_that_too():
    out = which_variant("--os", "linux", "--arch", "aarch64", "--gpu", "GB10", "--isa", "armv9")
    assert "Use: pytorch-python313-cuda13_0-sm121-armv9" in out
    s, none, c = position(
        out,
        "Status: Planned",
        "No variant for this hardware is further along yet.",
        "git clone",
    )
    assert s < none < c
