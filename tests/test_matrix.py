"""/variants/: the page, its htmx fragment, list and grid, errors beside fields, CSV, ETags."""

import csv
import gzip
import io
import re

import pytest
from django.core.cache import cache

from catalog.models import Variant

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "results"}


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


def count_shown(html):
    return int(re.search(r'data-testid="result-count">(\d+)<', html)[1])


def test_full_list_shows_every_variant_with_the_count(client):
    response = client.get("/variants/?view=list&per_page=all")
    html = response.content.decode()
    assert response.status_code == 200
    assert "<form" in html and 'id="results"' in html
    total = Variant.objects.count()
    assert count_shown(html) == total
    assert html.count("<tr>") - 1 == total  # one header row, one row per variant
    assert 'href="/variants/build-pytorch/main/pytorch-python313-darwin-mps/"' in html
    assert 'rel="next"' not in html


def test_default_page_is_compact_paginated_and_grouped_by_branch(client):
    response = client.get("/variants/")
    html = response.content.decode()
    assert len(response.content) <= 64_000  # with the search box and the cached column
    total = Variant.objects.count()
    assert count_shown(html) == total
    assert html.count("<tr>") - 1 == 50  # the first page of 50
    assert '<tr class="group"><th scope="colgroup" colspan="11">' in html
    assert f"Page 1 of {-(-total // 50)}" in html and 'href="?view=list&amp;page=2"' in html
    assert re.search(rf'href="/variants/\?[^"]*per_page=all[^"]*">Show all {total}<', html)


def test_a_later_page_and_a_page_past_the_end(client):
    last = -(-Variant.objects.count() // 50)
    second = client.get("/variants/?page=2").content.decode()
    assert f"Page 2 of {last}" in second and "(variants 51–100)" in second
    assert f"Page {last} of {last}" in client.get("/variants/?page=999").content.decode()
    bad = client.get("/variants/?page=0")
    assert bad.status_code == 400
    assert "Ensure this value is greater than or equal to 1" in bad.content.decode()


def test_branch_values_are_qualified_by_repository_with_counts(client):
    html = client.get("/variants/?gpu=sm90").content.decode()
    boxes = dict(
        re.findall(
            r'name="branch" value="([^"]+)"[^>]*> [^<]+ <span class="n[^"]*"[^>]*>(\d+)</span>',
            html,
        )
    )
    assert "build-pytorch/main" in boxes and "build-torchvision/main" in boxes
    assert (
        int(boxes["build-pytorch/main"])
        == Variant.objects.filter(
            branch__repository="build-pytorch", branch__name="main", gpu_arch__sm="sm90"
        ).count()
    )
    # A facet's own choice does not narrow its counts: every GPU keeps its number.
    gpus = dict(
        re.findall(r'name="gpu" value="(\w+)"[^>]*> [^<]+ <span class="n[^"]*"[^>]*>(\d+)<', html)
    )
    assert int(gpus["sm89"]) == Variant.objects.filter(gpu_arch__sm="sm89").count()
    # A variant without an architecture counts for `none` and for its kind.
    assert int(gpus["none"]) == Variant.objects.filter(gpu_arch=None).count()
    assert int(gpus["mps"]) == Variant.objects.filter(backend="mps").count() > 0
    assert "unknown" not in gpus  # shown only while some variant has it
    stray = Variant.objects.filter(backend="cuda").first()
    Variant.objects.filter(pk=stray.pk).update(gpu_arch=None)
    cache.clear()
    html = client.get("/variants/?gpu=unknown").content.decode()
    boxes = re.findall(
        r'name="gpu" value="(\w+)"[^>]*?( checked)?> [^<]+ <span class="n[^"]*"[^>]*>(\d+)<', html
    )
    assert ("unknown", " checked", "1") in boxes
    assert count_shown(html) == 1 and stray.pname in html
    only_pytorch_main = client.get("/api/variants?branch=build-pytorch/main").json()
    assert {r["repository"] for r in only_pytorch_main["results"]} == {"build-pytorch"}


def test_free_text_matches_every_term(client):
    html = client.get("/variants/?q=h100+python3.12").content.decode()
    expected = Variant.objects.filter(gpu_arch__sm="sm90", python_version="3.12").count()
    assert expected > 0 and count_shown(html) == expected
    assert count_shown(client.get("/variants/?q=avx512+torchvision").content.decode()) == (
        Variant.objects.filter(pname__contains="avx512", library="torchvision").count()
    )


def test_sort_menu_and_headers_read_as_words(client):
    html = client.get("/variants/?sort=gpu").content.decode()
    assert '<option value="gpu" selected>GPU architecture</option>' in html
    assert '<option value="pname">Name</option>' in html
    assert (
        'aria-sort="ascending"><a href="/variants/?view=list&amp;sort=-gpu">GPU architecture ▲'
        in html
    )


def test_unknown_and_empty_parameters_redirect_to_the_clean_address(client):
    response = client.get("/variants/?q=&gpu=sm90&utm_source=x&sort=")
    assert response.status_code == 302 and response["Location"] == "/variants/?gpu=sm90"
    assert client.get("/variants/?foo=1")["Location"] == "/variants/"


def test_unknown_parameters_share_the_cached_response_of_an_htmx_request(client):
    plain = client.get("/variants/?gpu=sm90", **HTMX)
    noisy = client.get("/variants/?gpu=sm90&cachebust=123&q=", **HTMX)
    assert noisy.status_code == 200 and noisy["ETag"] == plain["ETag"]
    assert noisy.content == plain.content


def test_filters_shrink_the_list(client):
    html = client.get("/variants/?gpu=sm90&branch=main").content.decode()
    assert (
        count_shown(html)
        == Variant.objects.filter(gpu_arch__sm="sm90", branch__name="main").count()
    )
    assert "-sm61-" not in html  # no SM61 package listed
    assert "pytorch-python313-cuda12_8-sm90-avx2" in html


def test_chosen_filters_stay_checked_in_the_form(client):
    html = client.get("/variants/?gpu=sm89&gpu=sm90").content.decode()
    checked = re.findall(r'<input type="checkbox" name="gpu" value="(\w+)"[^>]*checked', html)
    assert checked == ["sm89", "sm90"]


def test_htmx_request_gets_only_the_results_fragment(client):
    response = client.get("/variants/?gpu=sm90", **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html and "matrix-filters" not in html  # the compare form only
    assert count_shown(html) == Variant.objects.filter(gpu_arch__sm="sm90").count()
    assert "HX-Request" in response["Vary"]


def test_htmx_fragment_carries_every_facet_count_out_of_band(client):
    # htmx swaps only the results: the counts beside the checkboxes must come along, or they
    # would keep describing the previous selection.
    url = "/variants/?branch=build-pytorch/pytorch-2.9-python313&status=recipe"
    in_page = dict(re.findall(r'id="(n-[^"]+)">(\d+)<', client.get(url).content.decode()))
    fragment = client.get(url, **HTMX).content.decode()
    out_of_band = dict(re.findall(r'id="(n-[^"]+)" hx-swap-oob="true">(\d+)<', fragment))
    assert out_of_band == in_page and len(out_of_band) > 40
    assert out_of_band["n-branch-build-pytorch/pytorch-2.10-python313"] == "0"
    assert out_of_band["n-status-planned"] == str(
        Variant.objects.filter(branch__name="pytorch-2.9-python313", status="planned").count()
    )


def test_history_restore_gets_the_full_page(client):
    response = client.get(
        "/variants/?gpu=sm90", HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    )
    assert "<form" in response.content.decode()


def test_list_sorts_by_a_column_and_links_the_reverse_order(client):
    html = client.get("/variants/?library=torchvision&sort=-cuda&per_page=all").content.decode()
    cudas = [
        c.replace("—", "") for c in re.findall(r"<td>(1\d\.\d|—)</td>\s*<td>3\.\d+</td>", html)
    ]
    assert len(cudas) == Variant.objects.filter(library="torchvision").count()
    assert cudas == sorted(cudas, reverse=True) and cudas[0] == "13.0" and cudas[-1] == ""
    assert 'aria-sort="descending"' in html
    assert "sort=cuda" in html  # the CUDA heading now sorts ascending


def test_grid_lays_out_architectures_by_isa_with_empty_cells(client):
    html = client.get(
        "/variants/?view=grid&branch=build-pytorch/main&library=pytorch"
    ).content.decode()
    assert (
        count_shown(html)
        == 58
        == Variant.objects.filter(
            branch__repository="build-pytorch", branch__name="main", library="pytorch"
        ).count()
    )
    assert html.count('class="grid-group"') == 1
    headers = re.findall(r'<th scope="col"><abbr[^>]*>([^<]+)</abbr>', html)
    assert headers == ["AVX", "AVX2", "AVX-512", "AVX-512 BF16", "AVX-512 VNNI", "ARMv8.2", "ARMv9"]
    rows = re.findall(r'<th scope="row"[^>]*>(\w+)', html)
    assert rows[0] == "SM61" and rows[-2:] == ["CPU", "Apple"]
    assert 'aria-label="pytorch-python313-cuda12_8-sm90-avx512"' in html
    # SM61 is built only for the legacy ISAs: the rest of its row is visibly empty.
    assert html.count('class="empty"') > 0 and "no variant" in html


def test_grid_groups_per_branch_and_library(client):
    html = client.get("/variants/?view=grid&branch=main").content.decode()
    # build-pytorch main builds pytorch, torchvision and torchaudio; build-torchvision main one.
    assert html.count('class="grid-group"') == 4


def test_status_badges_have_text_and_a_legend(client):
    html = client.get("/variants/?branch=build-torchvision/cuda-13_0").content.decode()
    assert '<span class="status status-planned">Planned</span>' in html
    legend = re.search(r'<p class="legend".*?</p>', html, re.S)[0]
    for label in ("Planned", "Recipe", "Building", "Built", "Failed", "Published"):
        assert label in legend


def test_no_match_says_so(client):
    html = client.get("/variants/?status=published").content.decode()
    assert count_shown(html) == 0
    assert "No variant matches this selection" in html


@pytest.mark.parametrize(
    "query, field, value",
    [
        ("gpu=sm999", "gpu", "sm999"),
        ("python=abc", "python", "abc"),
        ("view=zzz", "view", "zzz"),
        ("sort=bogus", "sort", "bogus"),
        ("format=xml", "format", "xml"),
    ],
)
def test_bad_values_answer_400_with_the_error_beside_the_field(client, query, field, value):
    response = client.get(f"/variants/?{query}")
    html = response.content.decode()
    assert response.status_code == 400
    assert f"{value} is not one of the available choices" in html
    assert "<form" in html  # the page, so the value can be corrected
    if field not in ("view", "sort", "format"):
        fieldset = re.search(rf'<fieldset[^>]*id="filter-{field}".*?</fieldset>', html, re.S)[0]
        assert "field-error" in fieldset and value in fieldset


def test_bad_value_in_an_htmx_request_returns_the_message_fragment(client):
    response = client.get("/variants/?gpu=sm999", **HTMX)
    assert response.status_code == 400
    html = response.content.decode()
    assert "<form" not in html and "sm999 is not one of the available choices" in html


def test_csv_downloads_the_current_selection(client):
    response = client.get("/variants/?branch=build-torchvision/cuda-13_0&format=csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == Variant.objects.filter(branch__name="cuda-13_0").count()
    assert {r["branch"] for r in rows} == {"cuda-13_0"}
    marked = {r["pname"] for r in rows if r["impossible_pairing"]}
    assert marked == {r["pname"] for r in rows if r["platform"] == "x86_64-linux"}
    assert len(marked) == 8
    assert rows[0]["url"].startswith("http://testserver/variants/build-torchvision/cuda-13_0/")


def test_results_link_the_csv_and_json_of_the_selection(client):
    html = client.get("/variants/?gpu=sm90").content.decode()
    assert re.search(
        r'href="/variants/\?gpu=sm90&amp;view=list&amp;format=csv"|href="/variants/\?gpu=sm90&amp;format=csv"',
        html,
    )
    assert 'href="/api/variants?gpu=sm90"' in html


def test_repeat_request_answers_304_and_a_write_invalidates_it(client):
    first = client.get("/variants/?branch=main")
    tag = first["ETag"]
    assert first["Cache-Control"] == "public, max-age=60"
    repeat = client.get("/variants/?branch=main", HTTP_IF_NONE_MATCH=tag)
    assert repeat.status_code == 304 and repeat.content == b""
    # The page and its htmx fragment differ, so they never share an ETag.
    assert client.get("/variants/?branch=main", HTTP_IF_NONE_MATCH=tag, **HTMX).status_code == 200

    variant = Variant.objects.filter(branch__name="main").first()
    variant.status = "built"
    variant.save()
    after = client.get("/variants/?branch=main", HTTP_IF_NONE_MATCH=tag)
    assert after.status_code == 200
    assert '<span class="status status-built">Built</span>' in after.content.decode()


def test_repeat_request_costs_no_query(client, django_assert_num_queries):
    client.get("/variants/?view=grid")
    with django_assert_num_queries(0):
        response = client.get("/variants/?view=grid")
    assert count_shown(response.content.decode()) == Variant.objects.count()


def test_form_fields_all_have_labels(client):
    html = client.get("/variants/").content.decode()
    # the matrix's form, not the header's search box
    form = re.search(r'<form(?![^>]*role="search").*?</form>', html, re.S)[0]
    ids = re.findall(r'<(?:input|select)[^>]*\sid="([^"]+)"', form)
    assert len(ids) > 40
    for field_id in ids:
        assert f'for="{field_id}"' in form, field_id


def test_overlong_search_is_400_beside_the_search_box(client):
    response = client.get("/variants/", {"q": "x" * 500})
    assert response.status_code == 400
    field = re.search(r'<label for="id_q">.*?</div>', response.content.decode(), re.S)[0]
    assert "at most 100 characters" in field


def test_matrix_refuses_post(client):
    assert client.post("/variants/", {"gpu": "sm90"}).status_code == 405


def test_pages_are_the_same_for_everyone_and_compressed(client):
    response = client.get("/variants/", HTTP_ACCEPT_ENCODING="gzip")
    assert response["Content-Encoding"] == "gzip"
    assert response["Cache-Control"] == "public, max-age=60"
    html = gzip.decompress(response.content).decode()
    assert "csrf" not in html.lower() and "hx-headers" not in html
    assert "csrftoken" not in response.cookies and "Cookie" not in response.get("Vary", "")
    # A conditional request with the (weakened) ETag of the compressed answer is still a 304.
    again = client.get(
        "/variants/", HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=response["ETag"]
    )
    assert again.status_code == 304


@pytest.mark.parametrize("path", ["/", "/branches/", "/docs/overview/", "/architectures/sm90/"])
def test_get_pages_carry_no_per_user_token(client, path):
    response = client.get(path)
    assert response.status_code == 200
    assert "csrfmiddlewaretoken" not in response.content.decode()
    assert "csrftoken" not in response.cookies


def test_the_wizard_paste_form_keeps_its_token(client):
    assert 'name="csrfmiddlewaretoken"' in client.get("/wizard/").content.decode()


def test_grid_shows_three_branches_a_page_with_links_to_the_rest(client):
    from catalog.browse.views.matrix import GRID_BRANCHES_PER_PAGE
    from catalog.models import Branch

    branches = Branch.objects.order_by("repository", "preference", "name")
    first = client.get("/variants/?view=grid").content.decode()
    assert count_shown(first) == Variant.objects.count()
    shown = set(re.findall(r'class="cell-link" href="/variants/([^/]+/[^/]+)/', first))
    expected = {f"{b.repository}/{b.name}" for b in branches[:GRID_BRANCHES_PER_PAGE]}
    assert shown == expected
    assert "(branches 1–3)" in first
    pages = -(-branches.count() // GRID_BRANCHES_PER_PAGE)
    assert f"Page 1 of {pages}" in first
    last = client.get(f"/variants/?view=grid&page={pages}").content.decode()
    shown = set(re.findall(r'class="cell-link" href="/variants/([^/]+/[^/]+)/', last))
    tail = branches[(pages - 1) * GRID_BRANCHES_PER_PAGE :]
    assert shown == {f"{b.repository}/{b.name}" for b in tail}


THOR_X86 = "torchvision-python313-cuda13_0-sm110-avx512"


def test_an_impossible_pairing_is_marked_on_its_row(client):
    url = "/variants/?branch=build-torchvision/cuda-13_0&per_page=all"
    html = client.get(url).content.decode()
    rows = re.findall(r"<tr><td><a href.*?</tr>", html, re.S)
    assert len(rows) == 12
    marked = [r for r in rows if 'class="tag tag-impossible"' in r]
    assert len(marked) == 8 and all("-avx" in r for r in marked)
    row = next(r for r in rows if f"<code>{THOR_X86}</code>" in r)
    assert (
        'title="SM110 is built into an aarch64 system, so an x86_64 ISA (avx512) cannot run '
        'beside it.">impossible pairing</span>'
    ) in row
    arm = next(r for r in rows if "<code>torchvision-python313-cuda13_0-sm110-armv9</code>" in r)
    assert "impossible" not in arm


def test_the_api_gives_each_variant_its_impossible_pairing(client):
    results = client.get("/api/variants?branch=cuda-13_0").json()["results"]
    reasons = {r["pname"]: r["impossible_pairing"] for r in results}
    assert reasons[THOR_X86] == (
        "SM110 is built into an aarch64 system, so an x86_64 ISA (avx512) cannot run beside it."
    )
    assert reasons["torchvision-python313-cuda13_0-sm121-armv9"] is None
    assert sum(1 for why in reasons.values() if why) == 8
