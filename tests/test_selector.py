"""The one-screen selector through its real entry points: the home page, /select/ for htmx, and
its folded copy atop /variants/."""

import re
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.conf import settings

from catalog.models import Variant

pytestmark = pytest.mark.django_db

SM90_CHOICES = {
    "os": "linux",
    "arch": "x86_64",
    "gpu": "sm90",
    "isa": "avx512",
    "cuda": "12.8",
    "python": "3.13",
    "branch": "build-pytorch/main",
    "library": "pytorch",
}
SM90 = "pytorch-python313-cuda12_8-sm90-avx512"


def text(response):
    return response.content.decode()


def selector_html(body):
    return body[body.index('<section id="selector"') :]


def test_home_shows_every_dimension_with_counts(client):
    body = selector_html(text(client.get("/")))
    for key in ("os", "arch", "gpu", "isa", "cuda", "python", "branch", "library"):
        assert f'data-dimension="{key}"' in body
    assert f"<strong>{Variant.objects.count()}</strong> variants match" in body
    linux = Variant.objects.filter(platform__endswith="-linux").count()
    assert re.search(
        rf'data-value="linux"[^>]*>\s*<span class="option-label">Linux</span>'
        rf'<span class="option-count">{linux}</span>',
        body,
    )
    assert 'href="/wizard/#paste"' in body
    assert "build-torchvision/main" in body and "build-pytorch/main" in body


def test_choices_narrow_to_one_variant_with_its_commands(client):
    body = text(client.get("/?" + urlencode(SM90_CHOICES)))
    assert f'id="selector-pname">{SM90}</code>' in body
    assert (
        "git clone https://github.com/barstoolbluz/build-pytorch\ncd build-pytorch</code>" in body
    )
    assert "git checkout main</code>" in body
    assert f"flox build {SM90}</code>" in body
    assert f"flox install &lt;your-org&gt;/{SM90}</code>" in body
    assert f'href="/variants/build-pytorch/main/{SM90}/"' in body


def test_fewer_choices_suffice_when_they_leave_one(client):
    # GPU, ISA, CUDA, branch and library: OS, architecture and Python follow.
    query = {k: SM90_CHOICES[k] for k in ("gpu", "isa", "cuda", "branch", "library")}
    assert f'id="selector-pname">{SM90}' in text(client.get("/", query))


def test_chosen_options_link_to_dropping_them_and_others_keep_the_choice(client):
    body = selector_html(text(client.get("/", {"gpu": "sm90"})))
    assert re.search(
        r'class="option selected" data-value="sm90" href="/#selector" aria-current="true"', body
    )
    assert 'href="/?gpu=sm90&amp;isa=avx512#selector"' in body
    assert 'hx-get="/select/?gpu=sm90&amp;isa=avx512"' in body
    assert 'hx-push-url="/?gpu=sm90&amp;isa=avx512"' in body


def test_impossible_options_are_disabled_with_the_reason(client):
    body = selector_html(text(client.get("/", {"gpu": "sm61"})))
    disabled = re.search(
        r'<span class="option disabled" data-value="13.0" aria-disabled="true">(.*?)</span></span>',
        body,
        re.S,
    )
    assert disabled, "CUDA 13.0 should be disabled for SM61"
    assert "No build for CUDA 13.0 with Pascal (SM61)" in disabled.group(1)
    assert 'href="/?gpu=sm61&amp;cuda=13.0' not in body


def test_conflicting_choices_say_so(client):
    response = client.get("/", {"gpu": "sm61", "cuda": "13.0"})
    assert response.status_code == 200
    assert "<strong>No variant</strong> has all of these" in text(response)


@pytest.mark.parametrize(
    "query, message",
    [
        ({"gpu": "sm999"}, "There is no GPU &#x27;sm999&#x27; in the catalogue"),
        ({"branch": "main"}, "There is no PyTorch version / branch &#x27;main&#x27;"),
        ("gpu=sm90&gpu=sm80", "Choose one GPU, not 2."),
        ({"library": "<script>"}, "&lt;script&gt;"),
    ],
)
def test_bad_values_are_a_400_with_the_reason(client, query, message):
    response = client.get("/", query) if isinstance(query, dict) else client.get(f"/?{query}")
    assert response.status_code == 400
    body = text(response)
    assert 'id="selector-error"' in body and message in body
    assert "<script>" not in body.split('id="selector-error"')[1]


def test_select_answers_htmx_with_the_selector_alone(client):
    response = client.get("/select/", SM90_CHOICES, headers={"HX-Request": "true"})
    body = text(response)
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="selector"') and "<html" not in body
    assert f'id="selector-pname">{SM90}' in body
    bad = client.get("/select/", {"gpu": "x"}, headers={"HX-Request": "true"})
    assert bad.status_code == 400 and 'id="selector-error"' in text(bad)


def test_the_htmx_answer_is_the_home_pages_own_selector_partial(client):
    """One fragment mechanism: /select/ answers with the home page's `{% partialdef selector %}`,
    the very section the page shows for the same choices."""
    fragment = text(client.get("/select/", SM90_CHOICES, headers={"HX-Request": "true"})).strip()
    page = text(client.get("/", SM90_CHOICES))
    assert fragment.endswith("</section>") and fragment in page
    template = Path(settings.BASE_DIR, "templates/catalog/home.html").read_text()
    assert "{% partialdef selector %}" in template


def test_select_without_htmx_goes_to_the_home_page(client):
    response = client.get("/select/", {"gpu": "sm90"})
    assert response.status_code == 302 and response["Location"] == "/?gpu=sm90"


def test_variants_page_carries_the_selector_leading_home(client):
    body = text(client.get("/variants/"))
    panel = selector_html(body)
    assert "selector-embedded" in panel and 'href="/?gpu=sm90#selector"' in panel
    assert "hx-get=" not in panel.split("</section>")[0]


ANSWER_QUERIES = 9


@pytest.mark.parametrize("query", [{}, {"gpu": "sm61"}, SM90_CHOICES])
def test_select_query_count_is_constant(client, django_assert_max_num_queries, query):
    # 1 for the rows; one build left adds 5 for the engine's snapshot (its status and the nearest
    # variant further along) and its build summary, nearest cached stand-in and the branch's
    # build-time estimate: a bounded number whatever the catalogue's size.
    unique = query is SM90_CHOICES
    with django_assert_max_num_queries(1 + (5 + ANSWER_QUERIES if unique else 0)):
        client.get("/select/", query, headers={"HX-Request": "true"})
    with django_assert_max_num_queries(0):  # both are cached per catalogue version
        client.get("/select/", query, headers={"HX-Request": "true"})


def test_selector_records_hold_what_the_engine_reads():
    from catalog import queries
    from catalog.browse import selector_engine

    records = queries.selector_records()
    assert len(records) == Variant.objects.count()
    assert set(records[0]) == set(selector_engine.RECORD_KEYS)


def test_select_varies_on_htmx(client):
    assert "HX-Request" in client.get("/select/", {"gpu": "sm90"})["Vary"]
    response = client.get("/select/", {"gpu": "sm90"}, headers={"HX-Request": "true"})
    assert "HX-Request" in response["Vary"]


def test_a_catalogue_write_retires_the_cached_selector(client):
    def torchaudio_count():
        body = text(
            client.get("/select/", {"library": "torchaudio"}, headers={"HX-Request": "true"})
        )
        return int(re.search(r"<strong>(\d+)</strong> variants? match", body).group(1))

    before = torchaudio_count()
    assert before == Variant.objects.filter(library="torchaudio").count() > 1
    Variant.objects.filter(library="torchaudio").first().delete()
    assert torchaudio_count() == before - 1


THOR_X86 = "torchvision-python313-cuda13_0-sm110-avx2"


def test_an_impossible_pairing_is_listed_marked_and_not_recommended(client):
    query = {"gpu": "sm110", "isa": "avx2", "library": "torchvision"}
    body = selector_html(text(client.get("/", query))).split("</section>")[0]
    assert 'id="selector-pname"' not in body and f"flox build {THOR_X86}" not in body
    assert "the one variant left is an impossible pairing" in body
    assert f'href="/variants/build-torchvision/cuda-13_0/{THOR_X86}/"' in body
    assert (
        "impossible pairing: SM110 is built into an aarch64 system, so an x86_64 ISA (avx2) "
        "cannot run beside it."
    ) in body
    # The Arm pairing of the same GPU is the answer, unmarked.
    arm = {"gpu": "sm110", "isa": "armv9", "library": "torchvision"}
    body = selector_html(text(client.get("/", arm))).split("</section>")[0]
    assert 'id="selector-pname">torchvision-python313-cuda13_0-sm110-armv9</code>' in body
    assert "impossible pairing" not in body
