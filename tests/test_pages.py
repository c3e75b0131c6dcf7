"""The reference pages through their real URLs: content, 404s, error pages and query counts."""

import re
from datetime import UTC, datetime

import pytest
from django.test import override_settings
from django.urls import path
from django.utils.html import escape

from catalog.models import (
    Branch,
    BuildRecord,
    CpuIsa,
    DocPage,
    GpuArchitecture,
    SourceClaim,
    Variant,
)

pytestmark = pytest.mark.django_db

SM90 = "/variants/build-pytorch/main/pytorch-python313-cuda12_8-sm90-avx512/"
SM61_AVX = "/variants/build-pytorch/main/pytorch-python313-cuda12_8-sm61-avx/"
TV_SM61 = "/variants/build-pytorch/main/torchvision-python313-cuda12_8-sm61-avx/"
MPS = "/variants/build-pytorch/main/pytorch-python313-darwin-mps/"
CPU_ARM = "/variants/build-torchvision/main/torchvision-python313-cpu-armv9/"


def text(response):
    return response.content.decode()


def variant(url):
    _, _, repository, branch, pname, _ = url.split("/")
    return Variant.objects.get(branch__repository=repository, branch__name=branch, pname=pname)


# --- variant detail -------------------------------------------------------------------------


def test_variant_page_shows_every_field(client):
    body = text(client.get(SM90))
    for expected in (
        "pytorch-python313-cuda12_8-sm90-avx512",
        "build-pytorch",
        "12.8",
        "SM90 Hopper",
        "compute capability 9.0",
        "AVX-512",
        "x86_64-linux",
        "3.13",
        "cuBLAS",
        "Recipe",
        ".flox/pkgs/pytorch-python313-cuda12_8-sm90-avx512.nix",
        "-mavx512bw",
    ):
        assert expected in body, expected


def test_variant_page_names_the_hardware(client):
    body = text(client.get(SM90))
    for model in GpuArchitecture.objects.get(sm="sm90").models.values_list("name", flat=True):
        assert f"<li>{model}" in body
    isa = CpuIsa.objects.get(slug="avx512")
    assert isa.hardware in body
    for feature in isa.required_features:
        assert f"<code>{feature}</code>" in body


def test_variant_page_commands(client):
    body = text(client.get(SM90))
    assert "git checkout main</code>" in body
    assert "flox build pytorch-python313-cuda12_8-sm90-avx512</code>" in body
    assert "flox publish -o &lt;your-org&gt; pytorch-python313-cuda12_8-sm90-avx512</code>" in body
    assert "flox install &lt;your-org&gt;/pytorch-python313-cuda12_8-sm90-avx512</code>" in body
    assert body.count('class="copy"') == 5
    assert "js/copy.js" in body
    assert "<script>" not in body  # no inline scripts (a CSP without them comes later)


def test_variant_page_fills_in_the_organisation(client):
    body = text(client.get(SM90, {"org": "acme-ml"}))
    assert "flox publish -o acme-ml pytorch-python313-cuda12_8-sm90-avx512</code>" in body
    assert "flox install acme-ml/pytorch-python313-cuda12_8-sm90-avx512</code>" in body


def test_variant_page_rejects_a_bad_organisation_without_using_it(client):
    response = client.get(SM90, {"org": "<b>x; rm -rf /"})
    body = text(response)
    assert response.status_code == 200
    assert "rm -rf" not in body.split('id="cmd-publish"')[1].split("</code>")[0]
    assert 'id="org-error"' in body


def test_pytorch_variant_lists_its_companions(client):
    body = text(client.get(SM61_AVX))
    companions = variant(SM61_AVX).companions.all()
    assert companions.count() >= 2
    for c in companions:
        assert f'href="{c.get_absolute_url()}"' in body


def test_companion_links_to_the_pytorch_it_depends_on(client):
    body = text(client.get(TV_SM61))
    assert f'href="{SM61_AVX}"' in body
    assert "Built against PyTorch" in body


def test_variant_page_lists_the_same_variant_on_other_branches(client):
    body = text(client.get(SM90))
    others = Variant.objects.filter(
        library="pytorch", gpu_arch__sm="sm90", cpu_isa__slug="avx512"
    ).exclude(branch__name="main", branch__repository="build-pytorch")
    assert others.count() >= 5
    for other in others:
        assert f'href="{other.get_absolute_url()}"' in body
    # Other ISAs of the same architecture are not "the same variant".
    assert "/pytorch-python313-cuda12_9-sm90-avx2/" not in body


def test_build_history_empty_and_filled(client):
    assert "No builds recorded." in text(client.get(SM90))
    BuildRecord.objects.create(
        variant=variant(SM90),
        status="failed",
        started_at=datetime(2025, 11, 2, 8, 30, tzinfo=UTC),
        duration_seconds=5400,
        host="builder-7",
        commit="0123456789abcdef",
        log_url="https://logs.example.org/42",
    )
    body = text(client.get(SM90))
    assert "No builds recorded." not in body
    assert "2025-11-02 08:30" in body
    assert "builder-7" in body
    assert "5400 s" in body
    assert 'href="https://logs.example.org/42"' in body


def test_mps_and_cpu_variants_render(client):
    mps = text(client.get(MPS))
    assert "Apple Silicon" in mps
    assert "aarch64-darwin" in mps
    arm = text(client.get(CPU_ARM))
    assert "No GPU: CPU-only build." in arm
    assert CpuIsa.objects.get(slug="armv9").hardware in arm


@pytest.mark.parametrize(
    "url",
    [
        "/variants/build-pytorch/main/pytorch-python313-cuda12_8-sm999-avx512/",
        "/variants/build-pytorch/no-such-branch/pytorch-python313-cuda12_8-sm90-avx512/",
        "/variants/build-nothing/main/pytorch-python313-cuda12_8-sm90-avx512/",
        # A real name on the wrong branch.
        "/variants/build-torchvision/main/pytorch-python313-cuda12_8-sm90-avx512/",
        "/architectures/sm999/",
        "/isas/avx1024/",
        "/branches/build-pytorch/no-such-branch/",
        "/branches/build-nothing/main/",
        "/docs/no-such-guide/",
    ],
)
def test_unknown_objects_are_404(client, url):
    assert client.get(url).status_code == 404


# --- architectures and ISAs ------------------------------------------------------------------


def test_architecture_list_shows_every_architecture(client):
    body = text(client.get("/architectures/"))
    for arch in GpuArchitecture.objects.all():
        assert f'href="/architectures/{arch.sm}/"' in body
        assert arch.compute_capability in body


@pytest.mark.parametrize("sm", ["sm61", "sm90", "sm121"])
def test_architecture_page(client, sm):
    arch = GpuArchitecture.objects.get(sm=sm)
    body = text(client.get(f"/architectures/{sm}/"))
    assert f"{sm.upper()} — {arch.name}" in body
    assert f"<td>{arch.compute_capability}</td>" in body
    assert f"<td>{arch.min_driver}</td>" in body
    assert f"<td>{arch.min_cuda}</td>" in body
    for model in arch.models.all():
        assert f"<td>{model.name}</td>" in body
        for alias in model.aliases:
            assert f"<code>{alias}</code>" in body
    branches = Branch.objects.filter(variants__gpu_arch=arch).distinct()
    assert branches.exists()
    for branch in branches:
        n = Variant.objects.filter(branch=branch, gpu_arch=arch).count()
        link = f"/variants/?gpu={sm}&amp;branch={branch.repository}/{branch.name}"
        row = body.split(link)[0].rsplit("<tr>", 1)[1]
        assert f'<td class="num">{n}</td>' in row


def test_architecture_lists_go_from_oldest_to_newest(client):
    # Annotated (GROUP BY) queries drop Meta.ordering: SM100 must not come before SM61.
    expected = [
        f'href="/architectures/{sm}/"'
        for sm in GpuArchitecture.objects.order_by("arch_number").values_list("sm", flat=True)
    ]
    body = text(client.get("/architectures/"))
    assert sorted(expected, key=body.index) == expected
    home = text(client.get("/"))
    links = re.findall(r'href="/variants/\?gpu=(sm\d+)"', home)
    assert links == sorted(links, key=lambda sm: int(sm[2:])) and links[0] == "sm61"


def test_isa_list_goes_x86_64_first_oldest_first(client):
    body = text(client.get("/isas/"))
    order = ["avx", "avx2", "avx512", "avx512bf16", "avx512vnni", "armv8_2", "armv9"]
    links = [f'href="/isas/{slug}/"' for slug in order]
    assert sorted(links, key=body.index) == links


def test_isa_list_shows_every_isa(client):
    body = text(client.get("/isas/"))
    for isa in CpuIsa.objects.all():
        assert f'href="/isas/{isa.slug}/"' in body


@pytest.mark.parametrize("slug", ["avx", "avx512vnni", "armv9"])
def test_isa_page(client, slug):
    isa = CpuIsa.objects.get(slug=slug)
    body = text(client.get(f"/isas/{slug}/"))
    for value in (isa.hardware, isa.use_for, isa.choose_when, isa.detection):
        assert value in body
    for flag in isa.compiler_flags + isa.required_features + isa.disabled_libraries:
        assert f"<code>{flag}</code>" in body
    for v in Variant.objects.filter(cpu_isa=isa)[:20]:
        assert f'href="{v.get_absolute_url()}"' in body
    assert f"/variants/?isa={slug}&amp;branch=build-pytorch/main" in body


def test_avx_page_says_what_it_switches_off(client):
    body = text(client.get("/isas/avx/"))
    assert re.search(
        r"Switches off</th><td><code>fbgemm</code>, <code>mkldnn</code>, <code>nnpack</code>", body
    )


# --- branches ----------------------------------------------------------------------------------


def test_branch_list_is_a_version_matrix(client):
    body = text(client.get("/branches/"))
    for branch in Branch.objects.all():
        assert f'href="{branch.get_absolute_url()}"' in body
        if branch.nixpkgs_pin:
            assert f'href="https://github.com/NixOS/nixpkgs/tree/{branch.nixpkgs_pin}"' in body
    assert body.count("<td>TBD</td>") >= Branch.objects.filter(nixpkgs_pin="").count()


@pytest.mark.parametrize(
    "repository,name",
    [
        ("build-pytorch", "main"),
        ("build-pytorch", "pytorch-2.9-python311"),
        ("build-torchvision", "cuda-13_0"),
    ],
)
def test_branch_page(client, repository, name):
    branch = Branch.objects.get(repository=repository, name=name)
    body = text(client.get(f"/branches/{repository}/{name}/"))
    assert branch.purpose in body
    assert f"<td>{branch.pytorch_version}</td>" in body
    assert f"<td>{branch.python_version}</td>" in body
    assert f"<td>{', '.join(branch.cuda_versions)}</td>" in body
    if branch.nixpkgs_pin:
        assert f'href="https://github.com/NixOS/nixpkgs/tree/{branch.nixpkgs_pin}"' in body
    else:
        assert "nixpkgs pin</th><td>TBD</td>" in body
    actual = branch.variants.count()
    assert f'In the catalogue</th><td class="num">{actual}</td>' in body
    assert f'Stated by the README</th><td class="num">{branch.stated_variant_count}' in body
    for library in ("pytorch", "torchvision", "torchaudio"):
        n = branch.variants.filter(library=library).count()
        assert re.search(rf'<th scope="row">{library}</th><td class="num">{n}</td>', body, re.I)
    for v in branch.variants.all():
        assert f'href="{v.get_absolute_url()}"' in body
    first_line = branch.derivation.strip().splitlines()[0]
    assert escape(first_line) in body


def test_branch_page_flags_a_count_that_differs_from_the_readme(client):
    Branch.objects.filter(repository="build-pytorch", name="main").update(stated_variant_count=99)
    body = text(client.get("/branches/build-pytorch/main/"))
    assert "differs — see the" in body


# --- docs --------------------------------------------------------------------------------------


def test_docs_index_and_home_link_every_guide(client):
    docs_body = text(client.get("/docs/"))
    home_body = text(client.get("/"))
    assert DocPage.objects.count() >= 5
    for page in DocPage.objects.all():
        assert f'href="/docs/{page.slug}/"' in docs_body
        assert f'href="/docs/{page.slug}/"' in home_body


@pytest.mark.parametrize("slug", ["overview", "publishing", "cpu-variants"])
def test_doc_page_renders_markdown_with_contents(client, slug):
    page = DocPage.objects.get(slug=slug)
    body = text(client.get(f"/docs/{slug}/"))
    assert f"<h1>{page.title}</h1>" in body
    headings = re.findall(r"^## (.+)$", page.body, re.M)
    assert headings
    toc = body.split('id="toc-heading"')[1].split("</nav>")[0]
    doc_body = body.split('class="doc-body"')[1]
    anchors = re.findall(r'<h2 id="([^"]+)">', doc_body)
    assert len(anchors) == len(headings)
    for anchor in anchors:
        assert f'href="#{anchor}"' in toc
        assert f'<a class="headerlink" href="#{anchor}"' in doc_body


def test_doc_page_highlights_code(client):
    page = DocPage.objects.create(
        slug="code-sample", title="Code sample", body="## Run\n\n```python\nimport torch\n```\n"
    )
    body = text(client.get(page.get_absolute_url()))
    assert '<div class="highlight">' in body
    assert '<span class="kn">import</span>' in body
    assert "css/pygments.css" in body


def test_doc_page_is_sanitised(client):
    page = DocPage.objects.create(
        slug="hostile",
        title="Hostile",
        body=(
            '## Hi\n\n<script>alert("doc")</script>\n\n<img src="x" onerror="alert(1)">\n\n'
            "[click](javascript:alert(2))\n"
        ),
    )
    body = text(client.get(page.get_absolute_url()))
    doc_body = body.split('class="doc-body"')[1].split("</article>")[0]
    assert "<script" not in doc_body
    assert "onerror" not in body
    assert "javascript:" not in body
    assert 'alert("doc")' not in body


# --- audit ---------------------------------------------------------------------------------------


def test_audit_page_shows_known_findings_with_resolutions(client):
    body = text(client.get("/audit/"))
    assert "None: every contradiction the audit finds is known and resolved." in body
    claim = SourceClaim.objects.get(key="l40s-is-sm90")
    assert f'id="{claim.key}"' in body
    assert claim.source in body
    assert "The catalogue resolves L40S to SM89, not SM90." in body
    assert "Verified claims" in body


def test_audit_page_puts_new_findings_first(client):
    claim = SourceClaim.objects.get(key="l40s-is-sm90")
    claim.acknowledged = False
    claim.save()  # a write retires the cached audit
    body = text(client.get("/audit/"))
    new_section = body.split('id="new-findings"')[1].split('id="known-findings"')[0]
    assert "gpu:L40S" in new_section
    assert "The catalogue resolves L40S to SM89, not SM90." in new_section
    assert "1 new finding," in body


def test_audit_page_is_cached_until_the_catalogue_changes(client, django_assert_max_num_queries):
    client.get("/audit/")
    with django_assert_max_num_queries(2):
        assert client.get("/audit/").status_code == 200


def test_audit_page_lists_verified_claims(client):
    verified = SourceClaim.objects.get(key="vnni-on-cascade-lake")
    body = text(client.get("/audit/"))
    section = body.split('id="verified"')[1]
    assert verified.statement in section


# --- home ----------------------------------------------------------------------------------------


def test_home_has_search_quick_links_and_branch_counts(client):
    body = text(client.get("/"))
    assert re.search(r'<form class="search" method="get" action="/variants/"', body)
    assert 'name="q"' in body
    assert 'href="/wizard/"' in body
    assert 'href="/variants/?gpu=sm90"' in body
    assert f"{Variant.objects.count()} variants" in body
    for branch in Branch.objects.all():
        link = f"/variants/?branch={branch.repository}/{branch.name}"
        assert f'href="{link}">{branch.variants.count()}</a>' in body


# --- query counts -------------------------------------------------------------------------


AVAILABILITY_QUERIES = 9


@pytest.mark.parametrize("url", [SM90, SM61_AVX, TV_SM61, MPS, CPU_ARM])
def test_variant_page_query_count_is_constant(client, django_assert_max_num_queries, url):
    from catalog import queries

    # The status block reads the engine's snapshot, built once per catalogue version (5 queries).
    queries.recommend_catalogue()
    # The variant with its joins, models, companions, builds, and two for "compare with…";
    # + built/published/cached: the summary, the nearest cached stand-in, the branch's estimate
    # and the build history's outputs (queries.variant_availability), whatever the catalogue size.
    with django_assert_max_num_queries(6 + AVAILABILITY_QUERIES):
        assert client.get(url).status_code == 200


@pytest.mark.parametrize(
    "url",
    [
        "/architectures/",
        "/architectures/sm61/",
        "/architectures/sm90/",
        "/isas/",
        "/isas/avx/",
        "/isas/armv9/",
        "/branches/",
        "/branches/build-pytorch/main/",
        "/branches/build-pytorch/pytorch-2.9-python311/",
        "/docs/",
        "/docs/overview/",
    ],
)
def test_reference_page_query_count_is_constant(client, django_assert_max_num_queries, url):
    with django_assert_max_num_queries(5):
        assert client.get(url).status_code == 200


@pytest.mark.parametrize(
    "query",
    [
        "",
        "?gpu=sm90",
        "?gpu=sm61&cuda=13.0",
        "?gpu=sm90&isa=avx512&cuda=12.8&python=3.13&branch=build-pytorch/main&library=pytorch",
    ],
)
def test_home_page_query_count_is_constant(client, django_assert_max_num_queries, query):
    # Six for the overview (the table's branches are chosen by one narrow query), one for the
    # selector's stored index (then kept per catalogue version); one build left reads the
    # engine's snapshot too, built once per version, and adds that variant's availability
    # (bounded).
    from catalog import queries

    queries.recommend_catalogue()
    unique = query.endswith("library=pytorch")
    with django_assert_max_num_queries(7 + (AVAILABILITY_QUERIES if unique else 0)):
        assert client.get(f"/{query}").status_code == 200


def test_branch_page_query_count_does_not_grow_with_builds_or_variants(
    client, django_assert_num_queries
):
    url = "/branches/build-pytorch/main/"
    client.get(url)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as before:
        client.get(url)
    for v in Variant.objects.filter(branch__name="main", branch__repository="build-pytorch")[:10]:
        BuildRecord.objects.create(
            variant=v, status="built", started_at=datetime(2025, 1, 1, tzinfo=UTC)
        )
    with django_assert_num_queries(len(before.captured_queries)):
        client.get(url)


# --- error pages ---------------------------------------------------------------------------------


def boom(request):
    raise RuntimeError("deliberate failure for the 500 page test")


urlpatterns = [path("boom/", boom)]


@override_settings(DEBUG=False)
def test_404_page_is_in_the_site_style(client):
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    body = text(response)
    assert "Page not found" in body
    assert "<code>/no/such/page/</code>" in body
    assert 'class="site-header"' in body


@override_settings(DEBUG=False, ROOT_URLCONF=__name__)
def test_500_page_is_in_the_site_style(client):
    client.raise_request_exception = False
    response = client.get("/boom/")
    assert response.status_code == 500
    body = text(response)
    assert "Something went wrong" in body
    assert 'class="site-header"' in body
    assert "deliberate failure" not in body


# --- recipe and grid (other modules' functions, shown on these pages) -----------------------------


@pytest.mark.parametrize("url", [SM90, TV_SM61, MPS, CPU_ARM])
def test_variant_page_shows_exactly_the_exported_recipe_highlighted(client, url):
    import html as html_lib

    from catalog.recipes.exporting import render_recipe

    body = text(client.get(url))
    recipe = body.split('<div class="recipe">')[1].split("</pre></div>")[0]
    assert '<span class="' in recipe  # Pygments' Nix tokens
    shown = html_lib.unescape(re.sub(r"<[^>]+>", "", recipe))
    assert shown.strip() == render_recipe(variant(url)).strip()


def test_branch_page_shows_the_grid_with_every_variant_in_a_cell(client):
    body = text(client.get("/branches/build-pytorch/main/"))
    grid = body.split('class="variant-grid"')[1].split("</div>\n</div>")[0]
    branch = Branch.objects.get(repository="build-pytorch", name="main")
    for v in branch.variants.all():
        assert f'<a class="cell-link" href="{v.get_absolute_url()}"' in grid
    assert 'class="empty"' in grid  # e.g. SM61 has only AVX and AVX2


def test_audit_lint_is_paged_a_hundred_findings_at_a_time(client, monkeypatch):
    from catalog import audit, audit_store, lint

    def many_findings(records, facts):
        return [
            lint.LintFinding(r.repository, r.branch, r.pname, "file-name", "planted for paging")
            for r in records[:250]
        ]

    monkeypatch.setattr(audit.lint, "lint", many_findings)
    audit_store.refresh_all()  # the findings are stored when branches are written
    first = text(client.get("/audit/"))
    assert "Lint findings 1–100 of 250 (page 1 of 3)" in first
    assert first.count("planted for paging") == 100
    assert 'href="?page=2#lint"' in first
    last = text(client.get("/audit/?page=3"))
    assert "Lint findings 201–250 of 250 (page 3 of 3)" in last
    assert last.count("planted for paging") == 50
    assert 'href="?page=2#lint"' in last


# Not `page`: that name is Playwright's fixture, and borrowing it would group this test with the
# browser tests (pytest orders tests by the browser parameter), ahead of database tests.
@pytest.mark.parametrize("number", ["0", "x", "-1", "99"])
def test_audit_refuses_a_page_it_does_not_have(client, number):
    response = client.get(f"/audit/?page={number}")
    assert response.status_code == 400
    assert b"page" in response.content


def test_audit_stays_cached_across_a_build_record(client, django_assert_max_num_queries):
    from catalog import services

    client.get("/audit/")
    services.record_build(
        repository="build-pytorch",
        branch="main",
        pname="pytorch-python313-cpu-avx2",
        status="failed",
    )
    with django_assert_max_num_queries(2):
        assert client.get("/audit/").status_code == 200


def test_variant_page_offers_at_most_thirty_other_branches(client, monkeypatch):
    from catalog import queries

    monkeypatch.setattr(queries, "OTHER_BRANCHES_SHOWN", 2)
    body = client.get(SM90).content.decode()
    variant = Variant.objects.get(
        branch__repository="build-pytorch",
        branch__name="main",
        pname="pytorch-python313-cuda12_8-sm90-avx512",
    )
    same_build = Variant.objects.filter(
        library=variant.library,
        backend=variant.backend,
        gpu_arch=variant.gpu_arch,
        cpu_isa=variant.cpu_isa,
    ).exclude(branch=variant.branch)
    assert same_build.count() > 2
    offered = re.findall(r'<option value="[^"]+">([^<]+) \(([^)]+)\)</option>', body)
    assert len(offered) == 2


def test_architecture_page_lists_branches_a_page_at_a_time(client, monkeypatch):
    from catalog.browse.views import pages

    monkeypatch.setattr(pages, "BRANCHES_PER_PAGE", 4)
    with_sm90 = (
        Branch.objects.filter(variants__gpu_arch__sm="sm90")
        .distinct()
        .order_by("repository", "preference", "name")
    )
    total = with_sm90.count()
    assert total > 4
    first = text(client.get("/architectures/sm90/"))
    assert f"Branches 1–4 of {total}" in first
    assert 'href="?page=2" rel="next"' in first
    second = text(client.get("/architectures/sm90/?page=2"))
    assert f"Branches 5–{min(8, total)} of {total}" in second
    fifth = with_sm90[4]
    assert f"{fifth.repository}:{fifth.name} —" in second
    assert f"{fifth.repository}:{fifth.name} —" not in first


@pytest.mark.parametrize("url", ["/architectures/sm90/?page=9", "/isas/avx2/?page=x"])
def test_architecture_and_isa_pages_refuse_pages_they_do_not_have(client, url):
    response = client.get(url)
    assert response.status_code == 400
    assert b"The page must be a whole number from 1 to 1." in response.content


def test_variant_page_marks_an_impossible_pairing(client):
    body = client.get(
        "/variants/build-torchvision/cuda-13_0/torchvision-python313-cuda13_0-sm121-avx2/"
    ).content.decode()
    note = body.split('id="impossible-pairing"')[1].split("</div>")[0]
    assert (
        "<strong>Impossible pairing:</strong> SM121 is built into an aarch64 system, so an "
        "x86_64 ISA (avx2) cannot run beside it."
    ) in note
    assert "No PyTorch of this pairing is built" in note
    assert "Built against PyTorch" not in body
    arm = client.get(
        "/variants/build-torchvision/cuda-13_0/torchvision-python313-cuda13_0-sm121-armv9/"
    ).content.decode()
    assert 'id="impossible-pairing"' not in arm and "Built against PyTorch" in arm
