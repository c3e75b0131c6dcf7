"""Work and side effects bounded by the input: export touches only its own temporary files and
runs nothing from the target's git config; pages, paste parsers and recipe reading stay within
a CPU budget on hostile input; cache keys stay normalised and bounded; request errors under
/api/ are JSON; `verify-recipes` is bounded as a whole; weak secret keys are refused."""

from __future__ import annotations

import shlex
from io import StringIO
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.management import call_command

from catalog.cache import catalogue_version
from catalog.models import Variant

from .export_data import PYTORCH_2_8, git, import_tree, real_checkout

# ---------------------------------------------------------------- export


def export(root: Path, **options) -> str:
    out = StringIO()
    call_command(
        "export-recipes",
        into=str(root),
        repository=[PYTORCH_2_8[0]],
        branch=[PYTORCH_2_8[1]],
        stdout=out,
        stderr=StringIO(),
        **options,
    )
    return out.getvalue()


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
