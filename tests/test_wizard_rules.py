"""The wizard's rules, each through the three front ends — the web wizard, /api/recommend and
`which-variant` — over the seeded catalogue:

1. implied features (a picked ISA implies the ones below it; typed flags are completed from
   archspec's data and the answer says what was assumed; a tool's flags are taken as they are);
2. one inference rule (an lscpu or /proc/cpuinfo paste implies Linux and the architecture; no
   GPU information means the CPU-only build with a warning);
3. short result URLs, the pasted text kept after an error;
4. labels without repeated brackets, help text outside code;
5. one home per question (every Step field is an API field, a CLI option and a form input),
   errors that carry their field, the branch order read from branch data.
"""

from __future__ import annotations

import html
import json
import re
import shlex
from urllib.parse import parse_qsl, urlsplit

import pytest

from catalog.wizard import rules, steps
from tests.test_which_variant import cli
from tests.test_wizard_api import HASWELL, host_texts

API, WIZARD = "/api/recommend", "/wizard/"
PICK = re.compile(r'class="wizard-pick" href="[^"]+"><code>([^<]+)</code>')
NO_GPU = rules.NO_GPU_INFORMATION
LINUX = {"os": "linux", "arch": "x86_64"}


def page_text(response) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode())).replace(
        "&#x27;", "'"
    )


def web(client, **answers):
    """The wizard's result page for these answers (every step answered)."""
    query = {"workload": "general", "library": "", **answers}
    response = client.get(WIZARD, query)
    assert response.status_code == 200, page_text(response)[:2000]
    return response


def cli_args(**answers) -> list[str]:
    args = []
    for key, value in answers.items():
        for one in value if isinstance(value, list) else [value]:
            args += [steps.FIELDS[key].cli, one]
    return args


# =================================================================================================
# 1. Implied features
# =================================================================================================

ISA_PICK = {**LINUX, "gpu": "GTX 1080 Ti", "isa": "avx512"}  # SM61 is built with AVX and AVX2 only
ISA_PICKED = "pytorch-python313-cuda12_8-sm61-avx2"
IMPLIES = "AVX-512 implies AVX, AVX2"


@pytest.mark.django_db
class TestAPickedIsaImpliesTheOnesBelowIt:
    def test_api(self, client):
        body = client.get(API, ISA_PICK).json()
        assert body["variant"]["pname"] == ISA_PICKED
        assert any(IMPLIES in r for r in body["reasons"])
        assert not any("lacks avx" in r for r in body["reasons"])

    def test_web(self, client):
        response = web(client, **ISA_PICK)
        assert PICK.findall(response.content.decode()) == [ISA_PICKED]
        assert IMPLIES in page_text(response)

    def test_cli(self):
        code, out, _err = cli(*cli_args(**ISA_PICK))
        assert code == 0 and f"Use: {ISA_PICKED}" in out and IMPLIES in out

    def test_vnni_does_not_imply_bf16_because_a_cascade_lake_has_vnni_without_it(self, client):
        body = client.get(
            API, {**LINUX, "has_gpu": "no", "isa": "avx512vnni", "workload": "bf16-training"}
        ).json()
        assert body["variant"]["pname"] == "pytorch-python313-cpu-avx512"
        assert any("does not imply avx512_bf16" in r for r in body["reasons"])


TYPED = {**LINUX, "gpu": "none", "cpu_flags": "avx avx2 fma"}
ASSUMED = "Assumed f16c: every CPU archspec knows with avx, avx2, fma also has it."


@pytest.mark.django_db
class TestTypedFlagsAreCompletedAndTheAnswerSaysWhatWasAssumed:
    def test_api(self, client):
        body = client.get(API, TYPED).json()
        assert body["variant"]["pname"] == "pytorch-python313-cpu-avx2"
        assert ASSUMED in body["reasons"]
        assert body["detected"]["cpu"]["assumed_features"] == ["f16c"]

    def test_web(self, client):
        answers = {k: v for k, v in TYPED.items() if k != "gpu"}
        response = web(client, has_gpu="no", **answers)
        text = page_text(response)
        assert PICK.findall(response.content.decode()) == ["pytorch-python313-cpu-avx2"]
        assert ASSUMED in text and "Assumed: f16c" in text

    def test_cli(self):
        code, out, _err = cli(*cli_args(**TYPED))
        assert code == 0 and "Use: pytorch-python313-cpu-avx2" in out and ASSUMED in out


# lscpu of a CPU whose flags lack f16c: a tool's complete list, so AVX2 stays out.
LSCPU_NO_F16C = "Architecture: x86_64\nVendor ID: GenuineIntel\nFlags: fpu sse sse2 avx avx2 fma\n"


@pytest.mark.django_db
class TestAToolsFlagsAreTakenAsTheyAre:
    def test_api(self, client):
        body = client.post(API, {"lscpu": LSCPU_NO_F16C, "gpu": "none"}).json()
        assert body["variant"]["pname"] == "pytorch-python313-cpu-avx"
        assert not any("Assumed" in r for r in body["reasons"])
        assert any("AVX2 (it lacks f16c)" in r for r in body["reasons"])

    def test_web(self, client):
        response = client.post(WIZARD, {"lscpu": LSCPU_NO_F16C})
        result = client.get(response["Location"])
        assert PICK.findall(result.content.decode()) == ["pytorch-python313-cpu-avx"]
        assert "Assumed" not in page_text(result)

    def test_cli(self, tmp_path):
        path = tmp_path / "lscpu.txt"
        path.write_text(LSCPU_NO_F16C)
        code, out, _err = cli("--lscpu", str(path), "--gpu", "none")
        assert code == 0 and "Use: pytorch-python313-cpu-avx " in out and "Assumed" not in out


# =================================================================================================
# 2. One inference rule: a CPU paste implies Linux and the architecture; no GPU information
#    means the CPU-only build with a warning
# =================================================================================================


@pytest.mark.django_db
class TestACpuPasteAloneIsTheCpuBuildWithAWarning:
    @pytest.mark.parametrize("tool", ["lscpu", "cpuinfo"])
    def test_api_200_with_the_warning(self, client, tool):
        response = client.post(API, {tool: host_texts("h100-xeon")[tool]})
        assert response.status_code == 200
        body = response.json()
        assert (body["detected"]["os"], body["detected"]["arch"]) == ("linux", "x86_64")
        assert body["variant"]["pname"] == "pytorch-python313-cpu-avx512"
        assert body["warnings"] == [NO_GPU]

    @pytest.mark.parametrize("tool", ["lscpu", "cpuinfo"])
    def test_cli_exit_0_with_the_warning_on_standard_error(self, tmp_path, tool):
        path = tmp_path / "out.txt"
        path.write_text(host_texts("graviton2")[tool])
        code, out, err = cli(f"--{tool}", str(path))
        assert code == 0 and "Use: pytorch-python313-cpu-armv8_2" in out
        assert f"Warning: {NO_GPU}" in err and NO_GPU not in out

    def test_cli_json_keeps_the_warning_in_the_body_too(self, tmp_path):
        path = tmp_path / "lscpu.txt"
        path.write_text(host_texts("graviton2")["lscpu"])
        code, out, err = cli("--lscpu", str(path), "--json")
        assert code == 0 and NO_GPU in out and f"Warning: {NO_GPU}" in err

    def test_web_paste_form_shows_the_warning_on_the_result(self, client):
        response = client.post(
            WIZARD, {"nvidia_smi": "", "lscpu": host_texts("graviton2")["lscpu"]}
        )
        assert response.status_code == 302
        assert dict(parse_qsl(urlsplit(response["Location"]).query))["has_gpu"] == "unknown"
        result = client.get(response["Location"])
        assert PICK.findall(result.content.decode()) == ["pytorch-python313-cpu-armv8_2"]
        assert NO_GPU in page_text(result)

    def test_web_step_walk_answer_i_dont_know_is_the_same_rule(self, client):
        response = web(client, **LINUX, has_gpu="unknown", isa="avx2")
        assert PICK.findall(response.content.decode()) == ["pytorch-python313-cpu-avx2"]
        assert NO_GPU in page_text(response)

    def test_an_explicit_no_gpu_has_no_warning(self, client):
        body = client.get(API, {**LINUX, "gpu": "none", "cpu_flags": HASWELL}).json()
        assert body["warnings"] == [] and body["variant"]["pname"] == "pytorch-python313-cpu-avx2"

    def test_typed_flags_still_need_the_os(self, client):
        response = client.get(API, {"cpu_flags": "avx avx2"})
        assert response.status_code == 400
        assert (
            response.json()["field"] == "os"
            and "Which operating system" in response.json()["error"]
        )


# =================================================================================================
# 3. Short result URLs; the pasted text kept after an error
# =================================================================================================


@pytest.mark.django_db
@pytest.mark.parametrize(
    "host",
    [
        "h100-xeon",
        "b300-xeon",
        "mixed-4090-3090",
        "k80-broadwell",
        "intel-mac",
        "apple-m3",
        "gh200-grace",
    ],
)
def test_a_paste_redirects_to_a_short_url_of_derived_answers_only(client, host):
    texts = host_texts(host)
    paste = {
        "nvidia_smi": texts.pop("nvidia_smi", ""),
        "lscpu": texts.pop("lscpu", ""),
        "paste": "\n".join(texts.values()),
    }
    response = client.post(WIZARD, paste)
    assert response.status_code == 302
    location = response["Location"]
    names = {k for k, _v in parse_qsl(urlsplit(location).query, keep_blank_values=True)}
    assert names <= {
        "os",
        "arch",
        "has_gpu",
        "gpu",
        "compute_cap",
        "gpu_count",
        "driver",
        "driver_cuda",
        "isa",
        "cpu",
        "workload",
        "library",
    }
    assert len(location) < 300


@pytest.mark.django_db
def test_after_a_paste_error_every_box_keeps_its_text(client):
    smi = "name, driver_version\nNVIDIA Voodoo 5 6000, 550.54.15\n"  # a GPU nobody knows
    lscpu = host_texts("h100-xeon")["lscpu"]
    response = client.post(
        WIZARD, {"nvidia_smi": smi, "lscpu": lscpu, "workload": "int8-inference"}
    )
    assert response.status_code == 400
    body = response.content.decode()
    assert "Unknown GPU" in body and 'id="p-nvidia_smi-error"' in body
    assert "NVIDIA Voodoo 5 6000, 550.54.15" in body and "Model name:" in body
    assert '<option value="int8-inference" selected>' in body


# =================================================================================================
# 4. Labels
# =================================================================================================


@pytest.mark.django_db
def test_gpu_choices_say_no_name_twice_and_no_brackets_twice(client):
    body = client.get(WIZARD, {**LINUX, "has_gpu": "yes"}).content.decode()
    options = re.findall(r'<option value="[\d.]+"[^>]*>([^<]+)</option>', body)
    assert len(options) >= 12
    assert not [o for o in options if ") (" in o or o.count("(") > 1]
    thor = next(o for o in options if o.startswith("11.0"))
    spark = next(o for o in options if o.startswith("12.1"))
    # "Blackwell (Thor): DRIVE Thor, Jetson Thor": each model once after the family.
    family, _, models = thor.partition(": ")
    assert family.endswith("Blackwell (Thor)") and "DRIVE Thor" in models.split(", ")
    assert len(models.split(", ")) == len(set(models.split(", ")))
    assert spark.count("DGX Spark") == 1


def _nests_brackets(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth > 1:
            return True
        depth = max(depth, 0)
    return ") (" in text


@pytest.mark.django_db
def test_no_sentence_of_any_answer_nests_or_repeats_brackets(client):
    from tests.test_wizard_api import CASES, api_json

    for case in CASES:
        body = api_json(client, case).json()
        for result in [body, *body.get("per_gpu", [])]:
            for text in (
                result["reasons"] + result["warnings"] + [a["why"] for a in result["alternatives"]]
            ):
                assert not _nests_brackets(text), (case.id, text)


@pytest.mark.django_db
@pytest.mark.parametrize("step", steps.STEPS, ids=lambda s: s.id)
def test_code_spans_hold_commands_only(client, step):
    query = {
        **LINUX,
        "has_gpu": "yes",
        "step": step.id,
        "compute_cap": "9.0",
        "isa": "avx2",
        "workload": "general",
        "library": "",
    }
    body = client.get(WIZARD, query).content.decode()
    form = body.split('class="wizard-step"')[1].split("</form>")[0]
    commands = {*step.commands, *(f.command for f in step.fields if f.command)}
    assert {html.unescape(c) for c in re.findall(r"<code>([^<]*)</code>", form)} == commands


# =================================================================================================
# 5. One home per question; errors carry their field; the branch order is branch data
# =================================================================================================

PUBLIC = [f for f in steps.FIELDS.values() if f.public]


@pytest.mark.django_db
@pytest.mark.parametrize("field", PUBLIC, ids=lambda f: f.name)
def test_every_step_field_is_an_api_field_a_cli_option_and_a_form_input(client, field):
    unknown = client.get(API, {"zzz": "1"}).json()["error"]
    assert f" {field.name}," in unknown or f" {field.name}." in unknown
    _code, _out, err = cli(field.cli)  # the option exists: argparse asks for its value
    assert "expected one argument" in err or "expected" in err
    step = steps.STEP_OF[field.name]
    values = {
        **LINUX,
        "has_gpu": "yes",
        "compute_cap": "9.0",
        "isa": "avx2",
        "workload": "general",
        "library": "",
        field.name: "x",
    }
    form = (
        client.get(WIZARD, {**values, "step": step.id})
        .content.decode()
        .split('class="wizard-step"')[1]
    )
    assert f'name="{field.name}"' in form


@pytest.mark.django_db
@pytest.mark.parametrize(
    "params, field",
    [
        ({"os": "windows"}, "os"),
        ({**LINUX, "gpu": "Voodoo 5", "cpu_flags": "avx2"}, "gpu"),
        ({**LINUX, "gpu": "Tesla T4", "compute_cap": "8.6", "cpu_flags": "avx2"}, "compute_cap"),
        ({"os": "linux", "arch": "aarch64", "gpu": "none", "cpu_flags": "avx avx2"}, "cpu_flags"),
        ({**LINUX, "gpu": "none", "isa": "armv9"}, "isa"),
        ({**LINUX, "gpu": "none", "cpu_flags": "avx2", "workload": "gaming"}, "workload"),
        ({**LINUX, "gpu": "none", "cpu_flags": "avx2", "python": "3.10"}, "python"),
        ({**LINUX, "gpu": "T4", "cpu_flags": "avx2", "driver": "latest"}, "driver"),
        ({**LINUX, "has_gpu": "no", "gpu": "T4", "cpu_flags": "avx2"}, "has_gpu"),
        ({"os": "darwin", "arch": "aarch64", "gpu": "H100"}, "os"),
        ({**LINUX, "gpu": "none"}, "isa"),  # the missing CPU answer
    ],
)
def test_errors_carry_their_field_to_the_api_the_web_and_the_cli(client, params, field):
    response = client.get(API, params)
    assert response.status_code == 400 and response.json()["field"] == field
    message = response.json()["error"]
    page = client.get(WIZARD, {"workload": "general", "library": "", **params})
    step = steps.STEP_OF[field]
    if page.status_code == 400:  # a bad answer: shown at its question
        assert step.question in page_text(page) and 'role="alert"' in page.content.decode()
    else:  # a missing one: the wizard asks it
        assert f"Step {steps.STEPS.index(step) + 1} of" in page_text(page)
    code, _out, err = cli(*cli_args(**params))
    assert code == 2 and message.split(":")[0] in err


@pytest.mark.django_db
def test_a_branch_imported_later_takes_its_place_by_its_own_data(client):
    from catalog.models import Branch, CpuIsa, GpuArchitecture, Variant

    main = Branch.objects.get(repository="build-pytorch", name="main")
    newer = Branch.objects.create(
        repository="build-pytorch",
        name="imported-cuda-13",
        pytorch_version="2.11.0",
        python_version="3.13",
        cuda_versions=["13.0"],
        preference=1,
        is_default=False,
    )
    Variant.objects.create(
        pname="pytorch-python313-cuda13_0-sm90-avx512",
        branch=newer,
        library="pytorch",
        backend="cuda",
        cuda_version="13.0",
        gpu_arch=GpuArchitecture.objects.get(sm="sm90"),
        cpu_isa=CpuIsa.objects.get(slug="avx512"),
        platform="x86_64-linux",
        python_version="3.13",
        blas="cublas",
    )
    # Odd imported data: a companion with no catalogued PyTorch, a pname that does not compose.
    Variant.objects.create(
        pname="torchvision-custom-local-build",
        branch=newer,
        library="torchvision",
        backend="cpu",
        cpu_isa=CpuIsa.objects.get(slug="avx2"),
        platform="x86_64-linux",
        python_version="3.13",
        blas="openblas",
    )
    h100 = {**LINUX, "gpu": "H100", "cpu_flags": HASWELL + " avx512f avx512dq avx512vl avx512bw"}
    body = client.get(API, h100).json()
    assert body["variant"]["branch"] == "main"  # the default branch comes before preference
    main.is_default, newer.is_default = False, True  # saves bump the catalogue version
    main.save()
    newer.save()
    body = client.get(API, h100).json()
    assert (body["variant"]["branch"], body["variant"]["pname"]) == (
        "imported-cuda-13",
        "pytorch-python313-cuda13_0-sm90-avx512",
    )
    assert (
        client.get(
            API, {**LINUX, "gpu": "none", "cpu_flags": HASWELL, "library": "torchvision"}
        ).status_code
        == 200
    )


@pytest.mark.django_db
def test_a_gpu_list_keeps_its_pairs_in_the_result_links(client):
    query = [
        ("os", "linux"),
        ("arch", "x86_64"),
        ("gpu", "NVIDIA GeForce RTX 4090"),
        ("compute_cap", ""),
        ("gpu", ""),
        ("compute_cap", "8.6"),
        ("cpu_flags", "avx avx2 fma f16c"),
        ("workload", "general"),
        ("library", ""),
    ]
    expected = ["pytorch-python313-cuda12_8-sm89-avx2", "pytorch-python313-cuda12_8-sm86-avx2"]
    body = client.get(WIZARD, query).content.decode()
    assert PICK.findall(body) == expected
    api = html.unescape(re.search(r"curl '[^']*?(/api/recommend\?[^']+)'", body).group(1))
    assert [r["variant"]["pname"] for r in client.get(api).json()["per_gpu"]] == expected
    line = html.unescape(
        re.search(r"<code>(python manage.py which-variant[^<]+)</code>", body).group(1)
    )
    code, out, _err = cli(*shlex.split(line)[3:], "--json")
    assert code == 0 and [r["variant"]["pname"] for r in json.loads(out)["per_gpu"]] == expected
