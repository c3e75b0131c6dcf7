"""/wizard/ without a browser: the steps, htmx partials, change links, the paste shortcut, the
result page, 400s with the message beside the field — and that the API, the CLI (--json) and the
web wizard give the same variant for every case of tests/test_wizard_api.py."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.urls import reverse

from tests.test_which_variant import case_args, cli
from tests.test_wizard_api import CASES, Case, api_json, host_texts

WIZARD = "/wizard/"
PICK = re.compile(r'class="wizard-pick" href="([^"]+)"><code>([^<]+)</code>')


def web_picks(client, case: Case) -> list[str]:
    """Walk the web wizard for a case: pasted hosts through the paste form, answers by URL."""
    extra = dict(case.params)
    if case.host:
        texts = host_texts(case.host)
        paste = {"nvidia_smi": texts.pop("nvidia_smi", ""), "lscpu": texts.pop("lscpu", "")}
        paste["paste"] = "\n".join(texts.values())
        paste["workload"] = extra.pop("workload", "general")
        response = client.post(WIZARD, paste)
        assert response.status_code == 302, response.content[:2000]
        query = parse_qsl(urlsplit(response["Location"]).query, keep_blank_values=True)
    else:
        query = [("library", "")]
        extra.setdefault("workload", "general")
    if extra.get("gpu") == "none":
        extra.pop("gpu")
        extra["has_gpu"] = "no"
    query = [(k, v) for k, v in query if k not in extra] + list(extra.items())
    response = client.get(WIZARD, query)
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="result"' in body, re.sub(r"<[^>]+>", " ", body)[:3000]
    return [pname for _url, pname in PICK.findall(body)]


@pytest.mark.django_db
@pytest.mark.parametrize("case", CASES, ids=str)
def test_api_cli_and_web_give_the_same_variant(client, case, tmp_path):
    api = api_json(client, case).json()
    _code, out, _err = cli(*case_args(case, tmp_path), "--json")
    from_cli = json.loads(out)
    expected = list(case.per_gpu) or ([case.pname] if case.pname else [])

    def picks(body):
        results = body["per_gpu"] if body["variant"] is None and body.get("per_gpu") else [body]
        return [r["variant"]["pname"] for r in results if r["variant"]]

    assert picks(api) == picks(from_cli) == expected
    assert web_picks(client, case) == expected
    assert from_cli == api


# =================================================================================================
# Steps
# =================================================================================================


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query, question, field",
    [
        ({}, "Which operating system", 'name="os"'),
        ({"os": "linux"}, "Which CPU architecture", 'name="arch"'),
        ({"os": "linux", "arch": "x86_64"}, "Do you have an NVIDIA GPU?", 'name="has_gpu"'),
        (
            {"os": "linux", "arch": "x86_64", "has_gpu": "yes"},
            "Which NVIDIA GPU",
            'name="compute_cap"',
        ),
        (
            {"os": "linux", "arch": "x86_64", "has_gpu": "yes", "compute_cap": "9.0"},
            "Which CPU features",
            'name="isa"',
        ),
        (
            {"os": "linux", "arch": "x86_64", "has_gpu": "no", "isa": "avx2"},
            "What will you mostly run?",
            'name="workload"',
        ),
        (
            {
                "os": "linux",
                "arch": "x86_64",
                "has_gpu": "no",
                "isa": "avx2",
                "workload": "general",
            },
            "Any constraints",
            'name="python"',
        ),
        ({"os": "darwin", "arch": "aarch64"}, "Any constraints", 'name="library"'),
    ],
)
def test_each_step_is_a_get_form_carrying_the_answers_so_far(client, query, question, field):
    response = client.get(WIZARD, query)
    body = response.content.decode()
    assert response.status_code == 200
    assert question in body and field in body
    assert 'method="get"' in body and 'hx-push-url="true"' in body
    for key, value in query.items():
        assert f'<input type="hidden" name="{key}" value="{value}">' in body


@pytest.mark.django_db
def test_htmx_gets_only_the_wizard_fragment(client):
    full = client.get(WIZARD, {"os": "linux"}).content.decode()
    partial = client.get(WIZARD, {"os": "linux"}, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" in full and "<html" not in partial
    assert partial.strip().startswith('<section id="wizard"')
    assert "Which CPU architecture" in partial


@pytest.mark.django_db
def test_the_cpu_step_offers_only_the_isas_of_the_architecture(client):
    body = client.get(WIZARD, {"os": "linux", "arch": "aarch64", "has_gpu": "no"}).content.decode()
    assert 'value="armv9"' in body and 'value="avx2"' not in body


@pytest.mark.django_db
def test_answered_steps_have_change_links_that_keep_earlier_answers(client):
    body = client.get(
        WIZARD, {"os": "linux", "arch": "x86_64", "has_gpu": "yes", "compute_cap": "8.6"}
    ).content.decode()
    links = re.findall(r'class="wizard-change" href="([^"]+)"', body)
    assert len(links) == 4
    change_gpu = dict(parse_qsl(urlsplit(links[3].replace("&amp;", "&")).query))
    assert change_gpu == {
        "os": "linux",
        "arch": "x86_64",
        "has_gpu": "yes",
        "compute_cap": "8.6",
        "step": "gpu_model",
    }
    again = client.get(links[3].replace("&amp;", "&")).content.decode()
    assert "Which NVIDIA GPU" in again and '<option value="8.6" selected>' in again


@pytest.mark.django_db
def test_an_empty_answer_to_a_required_step_is_400_with_a_message(client):
    response = client.get(
        WIZARD,
        {
            "os": "linux",
            "arch": "x86_64",
            "has_gpu": "yes",
            "asked": "gpu_model",
            "compute_cap": "",
        },
    )
    assert response.status_code == 400
    assert "Choose or type an answer" in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query, question, words",
    [
        ({"os": "windows"}, "Which operating system", "no Windows builds"),
        ({"os": "linux", "arch": "x86_64", "gpu": "Voodoo 5"}, "Which NVIDIA GPU", "Unknown GPU"),
        (
            {"os": "linux", "arch": "x86_64", "has_gpu": "no", "isa": "sse9"},
            "Which CPU features",
            "Unknown CPU ISA",
        ),
        (
            {"os": "linux", "arch": "x86_64", "has_gpu": "no", "isa": "avx2", "workload": "gaming"},
            "What will you mostly run",
            "Unknown workload",
        ),
        (
            {"os": "linux", "arch": "x86_64", "has_gpu": "no", "isa": "avx2", "python": "3.10"},
            "Any constraints",
            "No branch builds Python 3.10",
        ),
    ],
)
def test_bad_answers_are_400_with_the_message_beside_the_step(client, query, question, words):
    response = client.get(WIZARD, query)
    body = response.content.decode()
    assert response.status_code == 400
    assert question in body and words in body and 'role="alert"' in body


# =================================================================================================
# Result page
# =================================================================================================

RESULT = {
    "os": "linux",
    "arch": "x86_64",
    "has_gpu": "yes",
    "compute_cap": "9.0",
    "isa": "avx512",
    "workload": "general",
    "library": "",
}


@pytest.mark.django_db
def test_result_links_the_variant_reasons_alternatives_and_commands(client):
    body = client.get(WIZARD, RESULT).content.decode()
    assert 'href="/variants/build-pytorch/main/pytorch-python313-cuda12_8-sm90-avx512/"' in body
    assert "SM90 (Hopper)" in body and "default branch" in body
    assert (
        'href="/variants/build-pytorch/pytorch-2.9-python313/pytorch-python313-cuda12_9-sm90-avx512/"'
        in body
    )
    for command in (
        "git checkout main",
        "flox build pytorch-python313-cuda12_8-sm90-avx512",
        "flox install &lt;your-org&gt;/pytorch-python313-cuda12_8-sm90-avx512",
    ):
        assert command in body
    # the same five steps as the selector and the variant page, after the status
    assert body.count('class="copy"') == 5 and "js/wizard.js" in body
    assert "git clone " in body and "flox publish -o &lt;your-org&gt; " in body
    assert body.index('data-testid="build-status"') < body.index("git clone ")
    assert "/api/recommend?os=linux" in body and "which-variant --os linux" in body


@pytest.mark.django_db
def test_several_gpu_models_give_one_result_each(client):
    query = [
        ("os", "linux"),
        ("arch", "x86_64"),
        ("gpu", "NVIDIA GeForce RTX 4090"),
        ("compute_cap", "8.9"),
        ("gpu", "NVIDIA GeForce RTX 3090"),
        ("compute_cap", "8.6"),
        ("cpu_flags", "avx avx2 fma f16c"),
        ("workload", "general"),
        ("library", ""),
    ]
    body = client.get(WIZARD, query).content.decode()
    assert [p for _u, p in PICK.findall(body)] == [
        "pytorch-python313-cuda12_8-sm89-avx2",
        "pytorch-python313-cuda12_8-sm86-avx2",
    ]
    assert body.count("For NVIDIA GeForce RTX") >= 2


# =================================================================================================
# Paste shortcut
# =================================================================================================


@pytest.mark.django_db
def test_paste_redirects_to_a_short_url_of_the_derived_answers(client):
    texts = host_texts("h100-xeon")
    response = client.post(
        WIZARD, {"nvidia_smi": texts["nvidia_smi"], "lscpu": texts["lscpu"], "workload": "general"}
    )
    assert response.status_code == 302
    location = response["Location"]
    query = parse_qsl(urlsplit(location).query, keep_blank_values=True)
    # Derived answers only: the GPU, driver, ISA level and microarchitecture, never the flags.
    assert query == [
        ("os", "linux"),
        ("arch", "x86_64"),
        ("compute_cap", "9.0"),
        ("gpu", "NVIDIA H100 80GB HBM3"),
        ("driver", "580.159.04"),
        ("driver_cuda", "13.0"),
        ("isa", "avx512bf16"),
        ("cpu", "sapphirerapids"),
        ("workload", "general"),
        ("library", ""),
    ]
    assert len(location) < 200 and "cpu_flags" not in location
    body = client.get(location).content.decode()
    assert "pytorch-python313-cuda12_8-sm90-avx512</code>" in body
    assert "Detected" in body and "Intel Sapphire Rapids" in body and "580.159.04" in body


@pytest.mark.django_db
def test_paste_on_a_mac_does_not_answer_the_linux_gpu_question(client):
    response = client.post(
        WIZARD, {"paste": host_texts("apple-m3")["sysctl"] + "\n" + host_texts("apple-m3")["uname"]}
    )
    query = dict(parse_qsl(urlsplit(response["Location"]).query, keep_blank_values=True))
    assert "has_gpu" not in query


@pytest.mark.django_db
def test_paste_of_an_eight_gpu_server_lists_its_gpu_once_with_the_count(client):
    texts = host_texts("b300-xeon")
    response = client.post(WIZARD, {"nvidia_smi": texts["nvidia_smi"], "lscpu": texts["lscpu"]})
    body = client.get(response["Location"]).content.decode()
    detected = body.split('id="detected"')[1].split("</div>")[0]
    assert detected.count("NVIDIA B300 SXM6 AC") == 1 and "×8" in detected
    summary = body.split('id="answer-gpu_model"')[1].split("</div>")[0]
    assert (
        summary.count("NVIDIA B300 SXM6 AC") == 1
        and "NVIDIA B300 SXM6 AC ×8 (compute capability 10.3)" in summary
    )


@pytest.mark.django_db
def test_paste_needs_a_csrf_token(client):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    assert strict.post(WIZARD, {"lscpu": "x"}).status_code == 403


@pytest.mark.django_db
@pytest.mark.parametrize(
    "data, field, words",
    [
        ({"nvidia_smi": "this is not nvidia-smi output"}, "nvidia_smi", "could not be used"),
        ({"lscpu": "\x00\x01binary"}, "lscpu", "binary"),
        ({"lscpu": "Architecture: x86_64\nFlags: " + "avx " * 70_000}, "lscpu", "256 KB"),
        ({}, "nvidia_smi", "Paste the output"),
        (
            {"lscpu": "Architecture: x86_64\nFlags: avx avx2", "workload": "gaming"},
            "workload",
            "Unknown workload",
        ),
    ],
)
def test_bad_paste_is_400_with_the_message_beside_the_field(client, data, field, words):
    response = client.post(WIZARD, data)
    body = response.content.decode()
    assert response.status_code == 400
    assert words in body
    if field != "workload":
        assert (
            f'id="p-{field}-error"' in body
            and f'aria-invalid="true" aria-describedby="p-{field}-error"' in body
        )


@pytest.mark.django_db
def test_paste_error_keeps_the_chosen_workload_and_drops_nuls(client):
    response = client.post(
        reverse("catalog:wizard"), {"lscpu": "not\x00 a tool output", "workload": "int8-inference"}
    )
    assert response.status_code == 400
    body = response.content.decode()
    assert '<option value="int8-inference" selected>' in body
    assert "\x00" not in body


@pytest.mark.django_db
def test_unknown_paste_workload_is_reported_beside_the_workload_field(client):
    response = client.post(
        reverse("catalog:wizard"), {"lscpu": "Architecture: x86_64", "workload": "mining"}
    )
    assert response.status_code == 400
    body = response.content.decode()
    beside = body.split('id="p-workload"')[1]
    assert "Unknown workload" in beside and "mining" in beside


@pytest.mark.django_db
def test_a_refused_nul_is_not_echoed_into_the_cpu_flags_box(client):
    response = client.get(
        reverse("catalog:wizard"),
        {"os": "linux", "arch": "x86_64", "has_gpu": "no", "cpu_flags": "avx\x00avx2"},
    )
    assert response.status_code == 400
    assert "\x00" not in response.content.decode()
