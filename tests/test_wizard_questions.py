"""A wizard question is a record: a Step (catalog.wizard.steps) plus its rule (a row of a table in
catalog.wizard.rules). The API, the web wizard, the paste shortcut and `which-variant` all read the
records, so a question added here (a CUDA version constraint) works through each of them with no
other code. And a record says which earlier answers imply it: an NVIDIA GPU implies Linux.
"""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qsl, urlsplit

import pytest

from catalog import queries
from catalog.wizard import readers, rules, steps
from tests.test_which_variant import cli
from tests.test_wizard_api import host_texts

API, WIZARD = "/api/recommend", "/wizard/"
PICK = re.compile(r'class="wizard-pick" href="[^"]+"><code>([^<]+)</code>')

CUDA_STEP = steps.Step(
    "cuda",
    "Which CUDA version must the build use?",
    (steps.Field("cuda", "CUDA version", readers.text, max_length=10, placeholder="12.8"),),
    when=(("os", ("linux",)), ("has_gpu", ("yes",))),
    required=False,
)
CUDA_RULE = rules.Constraint("cuda", "variant", "cuda_version", "prefix", "CUDA")


@pytest.fixture
def cuda_question(monkeypatch):
    """The CUDA question added before the last step, and its rule: nothing else changes."""
    all_steps = (*steps.STEPS[:-1], CUDA_STEP, steps.STEPS[-1])
    monkeypatch.setattr(steps, "STEPS", all_steps)
    tables = steps.index(all_steps)
    for name, table in zip(("STEP_BY_ID", "FIELDS", "STEP_OF", "NAMES"), tables, strict=True):
        monkeypatch.setattr(steps, name, table)
    monkeypatch.setattr(rules, "CONSTRAINTS", (*rules.CONSTRAINTS, CUDA_RULE))


H100 = {"gpu": "H100", "isa": "avx512"}  # no os: the GPU implies Linux


def post(client, body: dict):
    return client.post(API, json.dumps(body), content_type="application/json")


def cuda_versions_of_the_pick(client) -> tuple[str, list[str]]:
    """The CUDA of the default pick for an H100, and the other CUDA versions it is built with."""
    pick = post(client, H100).json()["variant"]
    others = sorted(
        {
            v.cuda_version
            for v in queries.recommend_catalogue().variants
            if (v.library, v.sm, v.isa, v.platform) == ("pytorch", "sm90", "avx512", "x86_64-linux")
        }
        - {pick["cuda_version"]}
    )
    assert others, "the test needs H100 builds with two CUDA versions"
    return pick["cuda_version"], others


# -- implied answers ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_nvidia_gpu_implies_linux_through_the_api(client):
    response = post(client, H100)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["variant"]["backend"] == "cuda" and body["variant"]["platform"] == "x86_64-linux"
    why = steps.FIELDS["os"].implied_by[0].why
    assert why in body["reasons"]
    assert body["detected"]["os"] == "linux"


@pytest.mark.django_db
def test_an_nvidia_gpu_implies_linux_through_the_cli():
    code, out, err = cli("--gpu", "H100", "--isa", "avx512", "--json")
    assert code == 0, err
    assert json.loads(out)["variant"]["platform"] == "x86_64-linux"


@pytest.mark.django_db
def test_an_implied_answer_never_overrides_a_given_one(client):
    response = post(client, {**H100, "os": "darwin"})
    assert response.status_code == 400
    assert "macOS with an NVIDIA GPU" in response.json()["error"]


@pytest.mark.django_db
def test_without_a_gpu_nothing_is_implied(client):
    response = post(client, {"isa": "avx512"})
    assert response.status_code == 400
    assert "operating system" in response.json()["error"]


# -- a question added as a record plus its rule ------------------------------------------------


@pytest.mark.django_db
def test_the_added_question_narrows_the_api_answer(client, cuda_question):
    default, others = cuda_versions_of_the_pick(client)
    body = post(client, {**H100, "cuda": others[0]}).json()
    assert body["variant"]["cuda_version"] == others[0] != default
    assert any(f"CUDA {others[0]}" in reason for reason in body["reasons"])


@pytest.mark.django_db
def test_a_value_no_build_has_is_a_400_naming_the_field(client, cuda_question):
    response = post(client, {**H100, "cuda": "99.9"})
    assert response.status_code == 400
    assert response.json()["field"] == "cuda" and "CUDA 99.9" in response.json()["error"]


@pytest.mark.django_db
def test_without_the_record_the_field_is_unknown(client):
    response = post(client, {**H100, "cuda": "12.8"})
    assert response.status_code == 400 and "Unknown field 'cuda'" in response.json()["error"]


@pytest.mark.django_db
def test_the_web_wizard_asks_the_added_question_in_its_place(client, cuda_question):
    _default, others = cuda_versions_of_the_pick(client)
    before = {**H100, "os": "linux", "arch": "x86_64", "workload": "general"}
    page = client.get(WIZARD, before).content.decode()
    assert CUDA_STEP.question in page and 'name="cuda"' in page
    page = client.get(WIZARD, {**before, "cuda": others[0]}).content.decode()
    # Answered: it reads among "Your answers", and the next step is asked.
    assert f'wizard-answer-text">{others[0]}<' in page
    assert steps.STEP_BY_ID["constraints"].question in page
    page = client.get(WIZARD, {**before, "cuda": others[0], "library": ""}).content.decode()
    (pname,) = PICK.findall(page)
    assert f"cuda{others[0].replace('.', '_')}" in pname


@pytest.mark.django_db
def test_the_paste_shortcut_answers_the_added_optional_question(client, cuda_question):
    texts = host_texts("h100-xeon")
    response = client.post(
        WIZARD, {"nvidia_smi": texts["nvidia_smi"], "lscpu": texts["lscpu"], "workload": "general"}
    )
    assert response.status_code == 302
    query = parse_qsl(urlsplit(response["Location"]).query, keep_blank_values=True)
    assert ("cuda", "") in query and ("library", "") in query
    assert PICK.findall(client.get(response["Location"]).content.decode())


@pytest.mark.django_db
def test_which_variant_has_an_option_for_the_added_question(client, cuda_question):
    _default, others = cuda_versions_of_the_pick(client)
    code, out, err = cli("--gpu", "H100", "--isa", "avx512", "--cuda", others[0], "--json")
    assert code == 0, err
    assert json.loads(out)["variant"]["cuda_version"] == others[0]
