"""Hardening: property-based tests over every query parameter of the matrix, the variant API and
the wizard (hypothesis), plus oversized / binary input, unknown URLs and wrong methods.

No response may be a 500; a value that is not one of a parameter's choices answers 400 with a
message. Every endpoint named here must be routed: a renamed route fails these tests.
"""

import pytest
from django.test import Client
from django.urls import Resolver404, resolve
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog.models import (
    BACKENDS,
    LIBRARIES,
    PLATFORMS,
    REPOSITORIES,
    STATUSES,
    Branch,
    CpuIsa,
    GpuArchitecture,
    Variant,
)

MATRIX, API_VARIANTS, WIZARD, API_RECOMMEND = (
    "/variants/",
    "/api/variants",
    "/wizard/",
    "/api/recommend",
)
HYPOTHESIS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
)

# Values that break naive code: NUL (PostgreSQL refuses it in text), lone surrogates' UTF-8
# lookalikes, SQL and HTML metacharacters, very long strings, format specifiers.
NASTY = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "a\x00b",
        "%00",
        "'",
        '"',
        "\\",
        "' OR 1=1 --",
        "<script>alert(1)</script>",
        "../../etc/passwd",
        "%s%n",
        "{}",
        "[]",
        "null",
        "-1",
        "0",
        "1e309",
        "NaN",
        "ｓｍ９０",
        "ǅ",
        "\u202e",
        "\ufeff",
        "x" * 5000,
        "sm" + "9" * 100,
        "😀",
        "\r\nSet-Cookie: a=b",
    ]
)
TEXT = st.one_of(
    NASTY, st.text(max_size=60), st.text(alphabet=st.characters(codec="latin-1"), max_size=30)
)


def routed(url):
    try:
        resolve(url)
    except Resolver404:
        pytest.fail(f"{url} is not routed: a renamed route must be renamed here too")


def valid_choices():
    return {
        "repository": [r for r, _ in REPOSITORIES],
        "branch": sorted(set(Branch.objects.values_list("name", flat=True))),
        "library": [v for v, _ in LIBRARIES],
        "backend": [v for v, _ in BACKENDS],
        "gpu": list(GpuArchitecture.objects.values_list("sm", flat=True)) + ["none"],
        "isa": list(CpuIsa.objects.values_list("slug", flat=True)) + ["none"],
        "platform": [v for v, _ in PLATFORMS],
        "cuda": sorted(
            set(Variant.objects.exclude(cuda_version="").values_list("cuda_version", flat=True))
        ),
        "python": sorted(set(Variant.objects.values_list("python_version", flat=True))),
        "status": [v for v, _ in STATUSES],
        "view": ["list", "grid"],
    }


# Parameters whose values form a closed set: anything else is a 400.
CLOSED = (
    "repository",
    "branch",
    "library",
    "backend",
    "gpu",
    "isa",
    "platform",
    "cuda",
    "python",
    "status",
    "view",
)


@st.composite
def matrix_params(draw, choices):
    """A query: each parameter absent, one or more valid values, or something arbitrary."""
    params = {}
    for name in (*CLOSED, "q", "sort", "format", "page", "hx"):
        kind = draw(st.sampled_from(["absent", "absent", "valid", "invalid"]))
        if kind == "absent":
            continue
        if kind == "valid" and name in choices and choices[name]:
            params[name] = draw(st.lists(st.sampled_from(choices[name]), min_size=1, max_size=3))
        else:
            params[name] = draw(st.lists(TEXT, min_size=1, max_size=2))
    return params


def invalid_closed_values(params, choices):
    return [
        name
        for name in CLOSED
        if name in params
        and any(v not in choices[name] for v in params[name])
        # "" means "any" for a choice field in a plain GET form
        and not all(v == "" for v in params[name] if v not in choices[name])
    ]


def assert_clean(response, url, params):
    assert response.status_code != 500, (url, params)
    assert response.status_code < 500, (url, params, response.status_code)
    if response.status_code == 400:
        body = response.content.decode("utf-8", "replace")
        assert body.strip(), f"400 without a message for {url} {params!r}"


def get(client, url, params, **headers):
    # A plain GET with empty or unknown parameters is redirected to its clean address first.
    return client.get(url, params, follow=True, **headers)


@pytest.mark.django_db
@pytest.mark.parametrize("url", [MATRIX, API_VARIANTS])
def test_matrix_and_api_never_500_and_reject_invalid_values(url):
    routed(url)
    choices = valid_choices()
    client = Client()

    @HYPOTHESIS
    @given(params=matrix_params(choices), htmx=st.booleans())
    def check(params, htmx):
        headers = {"HTTP_HX_REQUEST": "true"} if htmx and url == MATRIX else {}
        response = get(client, url, params, **headers)
        assert_clean(response, url, params)
        bad = invalid_closed_values(params, choices)
        if bad:
            assert response.status_code == 400, (url, params, bad, response.status_code)
            if url == API_VARIANTS:
                assert response.json()["error"]
        elif (
            response.status_code == 200
            and url == API_VARIANTS
            and params.get("format") in (None, ["json"])
        ):
            assert "results" in response.json()

    check()


@pytest.mark.django_db
@pytest.mark.parametrize("url", [MATRIX, API_VARIANTS])
@pytest.mark.parametrize(
    "name", ["library", "platform", "status", "gpu", "isa", "repository", "view"]
)
def test_one_unknown_choice_is_400_with_a_message(client, url, name):
    routed(url)
    response = client.get(url, {name: "no-such-value"})
    assert response.status_code == 400
    assert (
        b"no-such-value" in response.content
        or b"choice" in response.content.lower()
        or (url == API_VARIANTS and response.json()["error"])
    )


@pytest.mark.django_db
@pytest.mark.parametrize("url", [MATRIX, API_VARIANTS])
def test_nul_and_huge_search_text_is_not_a_500(client, url):
    routed(url)
    for q in ["\x00", "a\x00b", "x" * 100_000, "%" * 1000, "_" * 1000]:
        response = client.get(url, {"q": q})
        assert response.status_code in (200, 400), (q[:20], response.status_code)


WIZARD_KEYS = (
    "os",
    "arch",
    "has_gpu",
    "gpu",
    "compute_capability",
    "gpus",
    "driver_version",
    "driver_cuda",
    "cpu_flags",
    "isa",
    "cpu_vendor",
    "cpu_model",
    "cpu_parts",
    "workload",
    "library",
    "repository",
    "branch",
    "python",
    "pytorch",
    "vllm",
    "paste",
    "hardware",
    "step",
    "format",
)
WIZARD_VALUES = st.one_of(
    TEXT,
    st.sampled_from(
        [
            "linux",
            "darwin",
            "x86_64",
            "aarch64",
            "yes",
            "no",
            "sm90",
            "9.0",
            "H100",
            "RTX 4090",
            "avx512",
            "general",
            "bf16-training",
            "int8-inference",
            "pytorch",
            "torchvision",
            "build-pytorch",
            "main",
            "3.13",
            "2.9",
            "0.15.1",
            "570.86",
        ]
    ),
)


@pytest.mark.django_db
@pytest.mark.parametrize("url", [WIZARD, API_RECOMMEND])
def test_wizard_and_recommend_never_500(url):
    routed(url)
    client = Client()

    @HYPOTHESIS
    @given(
        params=st.dictionaries(st.sampled_from(WIZARD_KEYS), WIZARD_VALUES, max_size=8),
        htmx=st.booleans(),
    )
    def check(params, htmx):
        headers = {"HTTP_HX_REQUEST": "true"} if htmx and url == WIZARD else {}
        response = client.get(url, params, **headers)
        assert_clean(response, url, params)
        if url == API_RECOMMEND and response.status_code == 400:
            assert response.json().get("error") or response.json().get("errors")

    check()


@pytest.mark.django_db
@pytest.mark.parametrize("url", [WIZARD, API_RECOMMEND])
@pytest.mark.parametrize(
    "paste",
    [
        "x" * 3_000_000,  # over Django's 2.5 MB request limit
        "nvidia-smi\n" + "GPU 0: " + "A" * 300_000,  # long, but under it
    ],
)
def test_oversized_pasted_input_is_a_clean_4xx(url, paste):
    routed(url)
    response = Client().post(url, {"paste": paste, "hardware": paste})
    assert 400 <= response.status_code < 500, response.status_code


@pytest.mark.django_db
@pytest.mark.parametrize("url", [WIZARD, API_RECOMMEND])
def test_binary_pasted_input_is_not_a_500(url):
    routed(url)
    binary = bytes(range(256)).decode("latin-1") * 8
    for data in ({"paste": binary, "hardware": binary}, {"paste": "\x00" * 1000}):
        response = Client().post(url, data)
        assert response.status_code < 500, response.status_code
    raw = Client().post(url, bytes(range(256)) * 16, content_type="application/octet-stream")
    assert raw.status_code < 500, raw.status_code
    raw_json = Client().post(url, b"\xff\xfe{\x00", content_type="application/json")
    assert raw_json.status_code < 500, raw_json.status_code


@pytest.mark.django_db
@pytest.mark.parametrize("url", [API_VARIANTS, API_RECOMMEND])
@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_read_apis_refuse_wrong_methods_with_405(client, url, method):
    routed(url)
    response = getattr(client, method)(url)
    assert response.status_code == 405


@pytest.mark.django_db
def test_api_variants_refuses_post_with_405(client):
    routed(API_VARIANTS)
    assert client.post(API_VARIANTS, {"library": "pytorch"}).status_code == 405


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "/nope/",
        "/variants/build-pytorch/main/nope/",
        "/variants/nope/nope/nope/",
        "/branches/build-pytorch/nope/",
        "/architectures/sm999/",
        "/isas/nope/",
        "/docs/nope/",
        "/api/nope",
        "/static/nope.css",
    ],
)
def test_unknown_urls_are_404(client, url):
    response = client.get(url)
    assert response.status_code == 404


@pytest.mark.django_db
@given(path=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40))
@HYPOTHESIS
def test_arbitrary_paths_are_never_500(path):
    from urllib.parse import quote

    response = Client().get("/" + quote(path, safe="/"))
    assert response.status_code < 500, (path, response.status_code)


@pytest.mark.django_db
def test_doc_page_and_variant_notes_cannot_carry_script(client):
    """Text people edit in the admin is sanitised (Markdown) or escaped (notes, use case)."""
    import re

    from catalog.models import DocPage

    payload = (
        '<script>alert(1)</script><img src=x onerror="alert(2)"><a href="javascript:alert(3)">x</a>'
    )
    doc = DocPage.objects.order_by("pk").first()
    doc.body += "\n\n" + payload
    doc.save()
    variant = Variant.objects.select_related("branch").order_by("pk").first()
    variant.notes, variant.use_case = payload, "<script>alert(4)</script>"
    variant.save()  # save(), not update(): the page cache's version follows saves
    for url in (doc.get_absolute_url(), variant.get_absolute_url()):
        routed(url)
        html = client.get(url).content.decode()
        assert "<script>alert" not in html, url
        assert not re.search(r"<[a-zA-Z][^>]*\son[a-z]+\s*=", html), url
        assert not re.search(r"""<a\b[^>]*href\s*=\s*["']?\s*javascript:""", html, re.I), url
