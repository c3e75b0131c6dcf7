"""The vocabulary lives only in catalog/vocabulary.py: a second copy anywhere in catalog/ fails
here. A copy is (1) a table pairing a vocabulary key with what its record already says (a
label, an attribute, a provider, a switch: `{"pytorch": "PyTorch", …}`, `[("planned",
"Planned"), …]`), (2) a literal list of every key of a table (`["pytorch", "torchvision",
"torchaudio"]`), or (3) the recipe folder written out. Tables keyed by the vocabulary that add
their own data (an order, a colour, a recipe line) are not copies.
"""

from __future__ import annotations

import ast
from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest

from catalog import vocabulary

CATALOG = Path(__file__).resolve().parent.parent / "catalog"
TABLES = {
    name: table
    for name in dir(vocabulary)
    if name.isupper()
    and isinstance(table := getattr(vocabulary, name), dict)
    and table
    and all(isinstance(key, str) and is_dataclass(record) for key, record in table.items())
}


def said_by(record) -> set[str]:
    """Every text a vocabulary record holds (its fields, and the items of tuple fields)."""
    out: set[str] = set()
    for f in fields(record):
        value = getattr(record, f.name)
        items = value if isinstance(value, tuple) else (value,)
        out |= {item for item in items if isinstance(item, str) and item}
    return out


def _text(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _pairs(node) -> list[tuple[str, str]]:
    """(key, value) text pairs of a dict literal, or of a list/tuple of 2-tuples."""
    if isinstance(node, ast.Dict):
        items = zip(node.keys, node.values, strict=True)
    elif isinstance(node, (ast.List, ast.Tuple)):
        items = [tuple(e.elts) for e in node.elts if isinstance(e, ast.Tuple) and len(e.elts) == 2]
    else:
        return []
    return [(k, v) for a, b in items if (k := _text(a)) and (v := _text(b))]


def copies_in(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if _text(node) == vocabulary.PKGS_DIR:
            found.append(f"line {node.lineno}: {vocabulary.PKGS_DIR!r}")
        pairs = _pairs(node)
        elements = (
            {_text(e) for e in node.elts}
            if isinstance(node, (ast.List, ast.Tuple, ast.Set))
            else set()
        )
        for name, table in TABLES.items():
            repeated = [(k, v) for k, v in pairs if k in table and v in said_by(table[k])]
            if len(repeated) >= 2:
                found.append(f"line {node.lineno}: {name} {repeated}")
            if len(table) >= 3 and set(table) <= elements:
                found.append(f"line {node.lineno}: every key of {name}")
    return found


SOURCES = sorted(
    p for p in CATALOG.rglob("*.py") if p.name != "vocabulary.py" and "migrations" not in p.parts
)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(CATALOG)))
def test_no_module_repeats_the_vocabulary(path):
    assert copies_in(path.read_text()) == []


@pytest.mark.parametrize(
    "source",
    [
        'LIBRARY_DISPLAY = {"pytorch": "PyTorch", "torchvision": "TorchVision"}',
        'FEATURE_ENV = {"cudnn": "USE_CUDNN", "fbgemm": "USE_FBGEMM"}',
        'STATUSES = [("planned", "Planned"), ("recipe", "Recipe")]',
        'BLAS = {"cuda": "cublas", "cpu": "openblas"}',
        'choices = ["pytorch", "torchvision", "torchaudio"]',
        'PKGS_DIR = ".flox/pkgs"',
    ],
)
def test_each_kind_of_copy_is_found(source):
    assert copies_in(source)


@pytest.mark.parametrize(
    "source",
    [
        'RANK = {"cpu": 0, "cuda": 1, "mps": 2}',  # the keys with data of its own
        'if status in ("planned", "failed"): pass',  # some keys, read in a rule
        'MESSAGE = "give a checkout or its .flox/pkgs folder"',  # prose
    ],
)
def test_tables_of_their_own_are_not_copies(source):
    assert copies_in(source) == []


# -- architecture facts only in the model --------------------------------------------------------


@pytest.mark.django_db
def test_the_host_architecture_is_a_field_loaded_from_the_seed():
    from catalog.models import GpuArchitecture
    from catalog.seeding import fixtures_dir, read_toml

    rows = read_toml(fixtures_dir() / "catalogue" / "architectures.toml")["architecture"]
    seeded = {row["sm"]: row["host_arch"] for row in rows if row.get("host_arch")}
    assert seeded, "the seed names GPUs built into Arm systems"
    assert dict(GpuArchitecture.objects.exclude(host_arch="").values_list("sm", "host_arch")) == (
        seeded
    )


@pytest.mark.django_db
def test_the_audit_reads_the_host_architecture_from_the_row():
    from catalog import audit
    from catalog.models import GpuArchitecture

    GpuArchitecture.objects.filter(sm="sm90").update(host_arch="aarch64")
    assert audit.architecture_facts()["sm90"].host_arch == "aarch64"
