"""Work and side effects bounded by the input: export touches only its own temporary files and
runs nothing from the target's git config; pages, paste parsers and recipe reading stay within
a CPU budget on hostile input; cache keys stay normalised and bounded; request errors under
/api/ are JSON; `verify-recipes` is bounded as a whole; weak secret keys are refused."""

from __future__ import annotations

import io
import re
import shlex
import time
import tracemalloc
from html import unescape
from pathlib import Path

import pytest
from django.core.cache import cache
from django.test import Client, RequestFactory

from catalog.cache import catalogue_version
from catalog.models import Variant
from catalog.recipes.nix import evaluate
from catalog.recipes.nix.errors import RecipeError
from catalog.recipes.nix.highlight import highlight_nix
from catalog.recipes.nix.read import read_recipe
from catalog.wizard import detect
from catalog.wizard.views import api_recommend

from .export_data import PYTORCH_2_8, export_tree, git, import_tree, real_checkout
from .test_settings_security import manage
from .wsgi_client import SiteClient

# ---------------------------------------------------------------- export


def export(root: Path, **options) -> str:
    return export_tree(root, *PYTORCH_2_8, **options)


@pytest.fixture
def checkout(tmp_path, db) -> Path:
    root = real_checkout(tmp_path, *PYTORCH_2_8)
    import_tree(root, *PYTORCH_2_8)
    return root


class TestExportTouchesOnlyItsOwn:
    CPU_AVX2 = "pytorch-python312-cpu-avx2"

    def test_temporary_looking_files_without_the_marker_are_kept(self, checkout):
        pkgs = checkout / ".flox/pkgs"
        theirs = [checkout / ".README.md.k2_9xq7a.tmp", pkgs / ".draft.nix.ab12cd34.tmp"]
        ours = pkgs / ".draft.nix.variant-catalogue-ab12cd34.tmp"
        for path in [*theirs, ours]:
            path.write_text("x\n")
        out = export(checkout)
        assert all(p.read_text() == "x\n" for p in theirs)
        assert f"removed: {ours}" in out and not ours.exists()

    def test_prune_runs_no_clean_filter_from_the_target(self, checkout, tmp_path):
        witness = tmp_path / "filter-ran"
        command = f"touch {shlex.quote(str(witness))}; cat"
        git(checkout, "config", "filter.planted.clean", command)
        (checkout / ".gitattributes").write_text("*.nix filter=planted\n")
        Variant.objects.get(branch__name=PYTORCH_2_8[1], pname=self.CPU_AVX2).delete()
        stale = checkout / f".flox/pkgs/{self.CPU_AVX2}.nix"
        out = export(checkout, prune=True)
        assert not witness.exists()
        # The file is unchanged since the import: still proven git's, so pruned.
        assert f"pruned: {stale}" in out and not stale.exists()


# ---------------------------------------------------------------- cache keys


def entries() -> int:
    return len(cache._cache)  # LocMemCache under pytest: its entries


@pytest.mark.django_db
class TestCacheKeys:
    def test_a_repeated_single_valued_parameter_counts_by_its_last_value(self, client):
        first = client.get("/variants/?format=csv&format=html", follow=True)
        second = client.get("/variants/?format=html&format=csv", follow=True)
        assert first["Content-Type"].startswith("text/html")
        assert second["Content-Type"].startswith("text/csv")
        assert client.get("/variants/?sort=pname&sort=-pname").url == "/variants/?sort=-pname"

    def test_the_host_port_does_not_split_the_html_cache(self, client):
        client.get("/variants/", HTTP_HOST="localhost:8000")
        before = entries()
        for port in range(1, 30):
            assert client.get("/variants/", HTTP_HOST=f"localhost:{port}").status_code == 200
        assert entries() == before

    def test_free_text_searches_add_no_cache_entries(self, client):
        client.get("/variants/?q=h100")
        before = entries()
        for i in range(30):
            assert client.get(f"/variants/?q=word{i}").status_code == 200
            assert client.get(f"/api/variants?q=word{i}").status_code == 200
        assert entries() == before

    def test_culling_the_fragments_cannot_drop_the_catalogue_version(self, client):
        version = catalogue_version()
        cache.clear()  # what MAX_ENTRIES culling may do to any fragment
        assert catalogue_version() == version
        Variant.objects.first().save()
        assert catalogue_version() != version


# ---------------------------------------------------------------- recipes: parsing and highlighting

RECIPE = (Path(__file__).parent / "data/recipes/forms/pytorch-pinned-cuda.nix").read_text()


def dotted(parts: int) -> str:
    """The recipe with a binding whose value is a dotted run of `parts` parts (`x.a.a…`)."""
    return RECIPE.replace("  gpuArchNum =", f"  long = x{'.a' * (parts - 1)};\n  gpuArchNum =")


def cpu_ms(work) -> tuple[float, object]:
    start = time.process_time()
    result = work()
    return (time.process_time() - start) * 1000, result


class TestRecipeBounds:
    def test_a_long_dotted_run_is_refused_with_its_line_before_parsing(self):
        assert read_recipe(dotted(33)).pname  # 32 dots: read
        with pytest.raises(RecipeError) as error:
            read_recipe(dotted(4_000))
        assert error.value.line == 13 and "3,999 dots" in error.value.reason
        assert "at most 32" in error.value.reason

    def test_a_recipe_over_16_kib_is_refused(self):
        with pytest.raises(RecipeError, match="over 16 KiB"):
            read_recipe(RECIPE + "#" * 16 * 1024)

    @pytest.mark.parametrize(
        "text",
        [
            "x" + ".a" * 8_000,
            "1" + ".1" * 8_000,
            '"\\"' * 5_000,
            "''x" * 5_000,
            "/*" * 8_000,
            "<" * 16_000,
            "in " * 5_000,
            '"' + "${" * 8_000,
        ],
        ids=["dotted", "numbers", "escapes", "indented", "comments", "angles", "words", "interp"],
    )
    def test_highlighting_is_linear_and_keeps_every_character(self, text):
        ms, html = cpu_ms(lambda: highlight_nix(text))
        assert ms < 100  # about 30 ms at worst here; Pygments took 6 s on the dotted run
        assert unescape(re.sub(r"<[^>]+>", "", html)) == text

    def test_text_past_the_limit_is_shown_plain(self):
        text = "let a = 1; in a\n" * 1_500
        html = highlight_nix(text)
        assert "<span" not in html and html.count("\n") == 1_500


@pytest.mark.django_db
class TestVariantPageBudget:
    def test_a_stored_recipe_with_a_long_dotted_run_is_shown_within_budget(self, client):
        variant = Variant.objects.filter(backend="cuda").first()
        text = dotted(12_000)  # stored before the import refused such runs
        Variant.objects.filter(pk=variant.pk).update(
            recipe_text=text, recipe_facts={"pname": "something-else"}
        )
        url = variant.get_absolute_url()
        first, response = cpu_ms(lambda: client.get(url))
        assert response.status_code == 200 and ".a.a.a.a" in response.content.decode()
        assert first < 400  # the page itself (tens of ms) and one highlighting pass
        again, response = cpu_ms(lambda: client.get(url))
        assert response.status_code == 200 and again < 100


# ---------------------------------------------------------------- pastes

PASTE_FIELDS = ["uname", "sysctl", "lscpu", "cpuinfo", "nvidia_smi", "paste"]


def lines_of(line: str, count: int, size: int, head: str = "Architecture: x86_64\n") -> str:
    """`head`, then `count` lines of `line` repeated to fill about `size` bytes."""
    width = max(len(line), (size - len(head)) // count - 1)
    return head + ((line * (width // len(line) + 1))[:width] + "\n") * count


def post_cpu_ms(data) -> tuple[float, object]:
    """The server's CPU for one POST /api/recommend (the body is encoded beforehand, and the
    catalogue the engine reads is loaded by a first request)."""
    api_recommend(RequestFactory().post("/api/recommend", {"gpu": "H100"}))
    request = RequestFactory().post("/api/recommend", data)
    return cpu_ms(lambda: api_recommend(request))


@pytest.mark.django_db
class TestPasteBudget:
    @pytest.mark.parametrize("line", ["x", "a,b", "Key: value"])
    def test_six_pastes_at_the_field_limit_are_refused_cheaply(self, line):
        text = lines_of(line, 256 * 1024 // (len(line) + 1) - 30, 256 * 1024)
        data = {field: text for field in PASTE_FIELDS}
        ms, response = post_cpu_ms(data)
        assert response.status_code == 400 and b"at most 384 KB" in response.content
        assert ms < 100

    def test_too_many_lines_together_are_refused_with_the_limit(self, client):
        data = {"lscpu": lines_of("x", 1_600, 20_000), "cpuinfo": lines_of("y", 1_600, 20_000)}
        response = client.post("/api/recommend", data)
        assert response.status_code == 400
        assert "3,204 lines together; at most 3,000" in response.json()["error"]

    def test_detect_refuses_a_paste_of_too_many_lines_before_parsing(self):
        text = "Architecture: x86_64\n" + "Key: value\n" * 20_000
        ms, facts = cpu_ms(lambda: detect.detect(text))
        assert facts.errors and "20,002 lines; at most 2,500" in facts.errors[0]
        assert ms < 20


# ---------------------------------------------------------------- unreadable request bodies


class NoMoreData(OSError):
    """What gunicorn raises when a chunked body's connection closes before the last chunk."""


class EndsEarly(io.BytesIO):
    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        if not chunk:
            raise NoMoreData("No more data after: b''")
        return chunk


@pytest.mark.django_db
class TestUnreadableBodies:
    @pytest.mark.parametrize("path", ["/api/recommend", "/api/builds", "/wizard/", "/"])
    def test_a_truncated_chunked_body_is_a_400_not_a_500(self, path):
        client = SiteClient(raise_request_exception=False)
        meta = {
            "CONTENT_TYPE": "application/json",
            "wsgi.input": EndsEarly(b'{"gpu": "H1'),
            "HTTP_TRANSFER_ENCODING": "chunked",
            "CONTENT_LENGTH": "",
            "wsgi.input_terminated": True,
        }
        response = client.generic("POST", path, b"", **meta)
        assert response.status_code == 400
        if path.startswith("/api/"):
            assert "ended before its end" in response.json()["error"]

    @pytest.mark.parametrize(
        ("content_type", "body", "message"),
        [
            ("multipart/form-data", b"gpu=H100", "multipart body cannot be read"),
            ("multipart/form-data; boundary=" + "b" * 5_000, b"--b\r\n", "boundary of 1 to 70"),
            (
                "application/x-www-form-urlencoded; charset=utf-16",
                "gpu=H100".encode("utf-16"),
                "must be UTF-8 encoded",
            ),
        ],
        ids=["no-boundary", "long-boundary", "utf-16"],
    )
    def test_api_errors_for_unreadable_forms_are_json(self, content_type, body, message):
        client = Client(raise_request_exception=False)
        response = client.generic("POST", "/api/recommend", body, content_type=content_type)
        assert response.status_code == 400 and response["Content-Type"] == "application/json"
        assert message in response.json()["error"]


# ---------------------------------------------------------------- secret key


@pytest.mark.parametrize("key", ["changeme" * 7, "password1234" * 5, "0123456789" * 6])
def test_a_long_but_guessable_secret_key_is_refused_with_debug_off(key):
    result = manage("check", DJANGO_DEBUG="0", DJANGO_SECRET_KEY=key)
    assert result.returncode != 0 and "bits of randomness" in result.stderr


# ---------------------------------------------------------------- verify-recipes

needs_nix = pytest.mark.skipif(
    evaluate.nix_instantiate() is None, reason="nix-instantiate is not installed"
)
FLOOD = """let
  line = builtins.concatStringsSep "" (builtins.genList (x: "0123456789abcdef") 262144);
in builtins.foldl' (acc: i: builtins.trace line acc) 0 (builtins.genList (x: x) 24)
"""


@needs_nix
class TestVerifyBounded:
    def test_a_trace_flood_is_cut_off_and_the_python_side_stays_small(self, tmp_path):
        recipe = tmp_path / "pytorch-python313-cpu-avx.nix"
        recipe.write_text(FLOOD)  # 24 traces of 4 MiB: 96 MiB of stderr
        tracemalloc.start()
        try:
            [result] = evaluate.evaluate([recipe], jobs=1)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert result.record is None and "wrote more than 64 MiB" in result.error
        assert peak < 32 * 1024**2  # the stream was 96 MiB

    def test_the_whole_verification_has_a_deadline(self, tmp_path):
        endless = "let f = n: if n == 0 then 0 else f (n - 1) + f (n - 1); in f 200"
        paths = [tmp_path / f"pytorch-python313-cpu-{isa}.nix" for isa in ("avx", "avx2", "x")]
        for path in paths:
            path.write_text(endless)
        start = time.monotonic()
        results = evaluate.evaluate(paths, jobs=1, file_timeout=20, total_timeout=1.5)
        assert time.monotonic() - start < 8
        assert all("overall limit (1.5 s)" in r.error for r in results)
