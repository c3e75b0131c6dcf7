"""A variant can never break a listing: recipes of every real form, with fields missing, unknown
or absurd, imported through `import-recipes`, leave every page type answering 200.

The forms are the real recipes in ../shared/real-recipes (examples/ and the two branch
checkouts); the test skips with the reason when that folder is absent. Each example is imported
inside a transaction that is rolled back, so examples do not see each other's variants.
"""

from __future__ import annotations

import re
import tempfile
from io import StringIO
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.core.cache import cache as django_cache
from django.core.management import CommandError, call_command
from django.db import transaction
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from catalog import cache, queries
from catalog.browse import selector_engine
from catalog.models import Variant
from tests.page_types import PAGES, SM90, WIZARD_RESULT

pytestmark = pytest.mark.django_db

REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "real-recipes"
BRANCHES = {
    "build-pytorch": REAL / "build-pytorch" / "pytorch-2.8-python312",
    "build-torchvision": REAL / "build-torchvision" / "cuda-12_9",
}


def _forms() -> list[tuple[str, str, str]]:
    """(repository, file name, text) of every real recipe."""
    forms = []
    for repository, root in BRANCHES.items():
        for path in sorted((root / ".flox" / "pkgs").glob("*.nix")):
            forms.append((repository, path.name, path.read_text()))
    for path in sorted((REAL / "examples").glob("*.nix")):
        repository, _branch, name = path.name.split("--", 2)
        forms.append((repository, name, path.read_text()))
    return forms


FORMS = _forms() if REAL.is_dir() else []
if not FORMS:
    pytest.skip(
        f"{REAL} is absent: the real recipes this test varies are not on this machine.",
        allow_module_level=True,
    )

# Values a field may hold that the catalogue does not expect.
ODD = st.sampled_from(
    [
        "",
        "99.9",
        "sm_999",
        "12.1a+PTX",
        "banana",
        "0",
        "x" * 300,
        "<script>alert(1)</script>",
        "²",
        "9" * 25,
        "a b",
        "ℵ",
    ]
)


def _sub(pattern: str, replacement: str):
    return lambda text, value: re.sub(pattern, replacement.replace("VALUE", value), text)


def _drop(pattern: str):
    return lambda text, _value: re.sub(pattern, "", text)


# (what it does, text -> text): each is a change a plausible or hostile recipe makes.
MUTATIONS = {
    "no gpuTargets": _drop(r"gpuTargets\s*=\s*[^;]*;"),
    "no GPU arch bindings": _drop(r"gpuArch(SM|Num)\s*=\s*\"[^\"]*\";"),
    "odd gpuArchSM": _sub(r'gpuArchSM\s*=\s*"[^"]*"', 'gpuArchSM = "VALUE"'),
    "odd gpuArchNum": _sub(r'gpuArchNum\s*=\s*"[^"]*"', 'gpuArchNum = "VALUE"'),
    "odd literal targets": _sub(r"gpuTargets\s*=\s*\[[^\]]*\]", 'gpuTargets = [ "VALUE" ]'),
    "odd passthru.gpuArch": _sub(r"gpuArch\s*=\s*[^;]*;", 'gpuArch = "VALUE";'),
    "odd CUDA set": _sub(r"cudaPackages_\d+(_\d+)?", "cudaPackages_VALUE"),
    "no CUDA set": _sub(r"cudaPackages_\d+(_\d+)?", "cudaPackages"),
    "unversioned Python": _sub(r"python3\d+Packages", "python3Packages"),
    "odd Python set": _sub(r"python3\d*Packages", "python2Packages"),
    "odd cpuFlags": _sub(r"cpuFlags\s*=\s*\[[^\]]*\]", 'cpuFlags = [ "-mVALUE" ]'),
    "no cpuFlags": _sub(r"cpuFlags\s*=\s*\[[^\]]*\]", "cpuFlags = [ ]"),
    "odd cpuISA": _sub(r'cpuISA\s*=\s*"[^"]*"', 'cpuISA = "VALUE"'),
    "odd blasProvider": _sub(r'blasProvider\s*=\s*"[^"]*"', 'blasProvider = "VALUE"'),
    "odd platforms": _sub(r"platforms\s*=\s*\[[^\]]*\]", 'platforms = [ "VALUE" ]'),
    "no platforms": _sub(r"platforms\s*=\s*\[[^\]]*\]", "platforms = [ ]"),
    "odd pname": _sub(r'pname\s*=\s*"[^"]*"', 'pname = "VALUE"'),
    "huge metadata-rev": _sub(r"echo \d+ > \$out", "echo 9999999999999999999999 > $out"),
    "odd torch version": _sub(r'version\s*=\s*"[^"]*"', 'version = "VALUE"'),
    "short pin": _sub(r"archive/[0-9a-f]{40}", "archive/abc"),
    "CUDA switched on": _sub(r"cudaSupport\s*=\s*false", "cudaSupport = true"),
    "CUDA switched off": _sub(r"cudaSupport\s*=\s*true", "cudaSupport = false"),
    "odd header": lambda text, value: (
        f"# Use case: {value * 3}\n# Built against: {value} x y\n" + text
    ),
}

BRANCH_NAMES = st.sampled_from(["main", "hypothesis-new", "pytorch-2.99-python399"])


@st.composite
def recipes(draw):
    repository, name, text = draw(st.sampled_from(FORMS))
    applied = draw(st.lists(st.sampled_from(sorted(MUTATIONS)), max_size=4, unique=True))
    for key in applied:
        text = MUTATIONS[key](text, draw(ODD))
    file_name = draw(st.sampled_from([name, "odd name.nix", "x" * 150 + ".nix"]))
    return repository, file_name, text, applied


def import_recipe(repository: str, branch: str, file_name: str, text: str) -> str:
    """import-recipes on a checkout holding this one recipe: its output, or the refusal."""
    with tempfile.TemporaryDirectory() as root:
        pkgs = Path(root) / ".flox" / "pkgs"
        pkgs.mkdir(parents=True)
        (pkgs / file_name).write_text(text)
        out = StringIO()
        try:
            call_command(
                "import-recipes",
                root,
                repository=repository,
                branch=branch,
                skip_invalid=True,
                stdout=out,
                stderr=StringIO(),
            )
        except CommandError as exc:
            assert exc.returncode in (1, 2) and str(exc).endswith(".")
            return str(exc)
        return out.getvalue()


def pages_of(variant: Variant | None) -> list[str]:
    """Every page type, and the pages that show this variant: its own, its branch's, its
    selection on the home page and the selector, the compare table, the API and the CSV."""
    paths = [path for _name, path, status in PAGES if status == 200]
    paths += [
        "/select/",
        "/variants/?format=csv",
        "/api/variants",
        "/api/variants?per_page=all",
        WIZARD_RESULT,
    ]
    if variant is None:
        return paths
    paths += [variant.get_absolute_url(), variant.branch.get_absolute_url()]
    row = next(
        r
        for r in selector_engine.rows_from_records(queries.selector_records())
        if (r.repository, r.branch, r.pname)
        == (variant.branch.repository, variant.branch.name, variant.pname)
    )
    chosen = {key: choice.value for key, choice in row.choices.items()}
    paths += [
        f"/?{urlencode(chosen)}",
        f"/select/?{urlencode(chosen)}",
        f"/variants/?gpu={chosen['gpu']}",
    ]
    other = Variant.objects.exclude(pk=variant.pk).select_related("branch").first()
    ids = [f"{v.branch.repository}/{v.branch.name}/{v.pname}" for v in (variant, other)]
    paths.append("/compare/?" + urlencode([("v", i) for i in ids]))
    if variant.gpu_arch_id:
        paths.append(f"/architectures/{variant.gpu_arch.sm}/")
    if variant.cpu_isa_id:
        paths.append(f"/isas/{variant.cpu_isa.slug}/")
    return paths


# The catalogue the examples import into: three variants of build-pytorch:main (the page types'
# own variant among them) and one companion built on it. Every branch stays, most of them now
# empty, which pages must draw too; a small catalogue keeps an example well under a second.
KEPT = (
    SM90.rstrip("/").rsplit("/", 1)[-1],
    "pytorch-python313-cpu-avx2",
    "pytorch-python313-darwin-mps",
)


def trim_catalogue() -> None:
    pytorch = Variant.objects.filter(branch__repository="build-pytorch", branch__name="main")
    kept = list(pytorch.filter(pname__in=KEPT).values_list("pk", flat=True))
    kept += list(
        Variant.objects.filter(depends_on__in=kept).order_by("pk").values_list("pk", flat=True)[:1]
    )
    Variant.objects.exclude(pk__in=kept).exclude(depends_on=None).delete()
    Variant.objects.exclude(pk__in=kept).delete()
    assert Variant.objects.count() == len(KEPT) + 1


class Rollback(Exception):
    """Ends an example's transaction: the next example starts from the seeded catalogue."""


@settings(
    max_examples=30,
    deadline=None,
    # No shrinking: an example costs ~0.5 s, and the failure message already names the
    # changes, the import's output and the failing pages.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    report_multiple_bugs=False,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(recipe=recipes(), branch=BRANCH_NAMES)
def test_no_imported_recipe_breaks_a_page(client, recipe, branch):
    repository, file_name, text, applied = recipe
    client.raise_request_exception = False
    if Variant.objects.count() > len(KEPT) + 1:  # the first example (the test's transaction)
        trim_catalogue()
    django_cache.clear()
    try:
        with transaction.atomic():
            output = import_recipe(repository, branch, file_name, text)
            variant = Variant.objects.filter(
                branch__repository=repository,
                branch__name=branch,
                recipe_path=f".flox/pkgs/{file_name}",
            ).first()
            cache.bump_version()
            failed = [
                (path, response.status_code)
                for path in pages_of(variant)
                # The selector answers htmx; a plain visit is sent to the home page.
                if (response := client.get(path, HTTP_HX_REQUEST="true")).status_code != 200
            ]
            assert not failed, (applied, output[-500:], failed)
            raise Rollback
    except Rollback:
        pass
