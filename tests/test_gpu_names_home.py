"""GPU model names have one home: a GPU of an architecture the catalogue has is a model in
fixtures/catalogue/architectures.toml (loaded into GpuModel), and catalog/wizard/gpus.py keeps
only GPUs of other compute capabilities. A second table of the seed's GPU names anywhere in
catalog/ fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from catalog.wizard import gpus

CATALOG = Path(__file__).resolve().parent.parent / "catalog"
MODELS = gpus.seed_models()
SEED_CCS = {cc for _, _, cc in MODELS}
SEED_NAMES = {gpus.normalise_gpu_name(s) for name, aliases, _ in MODELS for s in (name, *aliases)}
COPY_AT = 3  # a literal with this many of the seed's GPU names is a second table of them


def gpu_name_tables(source: str) -> list[int]:
    """Lines of dict, list, tuple and set literals holding COPY_AT or more seed GPU names."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            items = node.keys
        elif isinstance(node, ast.List | ast.Tuple | ast.Set):
            items = node.elts
        else:
            continue
        names = {
            gpus.normalise_gpu_name(item.value)
            for item in items
            if isinstance(item, ast.Constant) and isinstance(item.value, str)
        }
        if len(names & SEED_NAMES) >= COPY_AT:
            found.append(node.lineno)
    return found


def test_unbuilt_gpus_are_only_of_compute_capabilities_the_catalogue_lacks():
    misplaced = {name: cc for name, cc in gpus.UNBUILT_GPUS.items() if cc in SEED_CCS}
    assert not misplaced, f"add these as models in architectures.toml instead: {misplaced}"
    again = [n for n in gpus.UNBUILT_GPUS if gpus.normalise_gpu_name(n) in SEED_NAMES]
    assert not again


@pytest.mark.parametrize(
    "path", sorted(CATALOG.rglob("*.py")), ids=lambda p: str(p.relative_to(CATALOG))
)
def test_no_module_repeats_the_seeds_gpu_names(path):
    assert gpu_name_tables(path.read_text(encoding="utf-8")) == [], path


def test_a_copied_table_is_found():
    assert gpu_name_tables('KNOWN = {"H100": "9.0", "NVIDIA A10": "8.6", "RTX 3060": "8.6"}')
    assert gpu_name_tables('PICKS = ["H100", "A100"]') == []  # two are an example, not a table


@pytest.mark.parametrize(
    ("name", "cc", "source"),
    [
        ("NVIDIA A10", "8.6", "catalogue"),  # a model the seeds did not list, now in the TOML
        ("NVIDIA H100 80GB HBM3", "9.0", "catalogue"),
        ("Tesla K80", "3.7", "unbuilt"),
    ],
)
def test_a_paste_read_on_its_own_resolves_through_the_seed(name, cc, source):
    match = gpus.resolve_gpu_name(name)
    assert match is not None
    assert (match.compute_capability, match.source) == (cc, source)


@pytest.mark.django_db
def test_the_catalogue_holds_every_seed_model():
    from catalog.models import GpuModel

    loaded = set(GpuModel.objects.values_list("name", "architecture__compute_capability"))
    assert loaded == {(name, cc) for name, _, cc in MODELS}
