"""Compare 2–4 variants side by side: /compare/?v=<repository>/<branch>/<pname>&v=…

Every field in one table (rows that differ are marked), then each recipe's differences from the
first variant's (difflib over the text `export-recipes` writes, or the imported text). The
selection is the URL; ticked `compare` checkboxes are redirected to it. An id that is malformed
or unknown, a repeat, or fewer than 2 / more than 4 ids is a 400 with the reason.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from urllib.parse import urlencode

from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from catalog import cache, queries
from catalog.recipes.exporting import sync

MIN_VARIANTS, MAX_VARIANTS = 2, 4
MAX_ID_LENGTH = 300


def variant_id(variant) -> str:
    """The id a compare URL names a variant by."""
    return f"{variant.branch.repository}/{variant.branch.name}/{variant.pname}"


class BadSelection(ValueError):
    """The ?v= list cannot be compared; the message is one sentence for the reader."""


def parse_ids(values: list[str]) -> list[tuple[str, str, str]]:
    """(repository, branch, pname) per ?v= value, in order; BadSelection when unusable."""
    if not MIN_VARIANTS <= len(values) <= MAX_VARIANTS:
        raise BadSelection(
            f"Compare {MIN_VARIANTS} to {MAX_VARIANTS} variants (?v=<repository>/<branch>/<name>), "
            f"not {len(values)}."
        )
    ids = []
    for value in values:
        parts = tuple(value.split("/"))
        if len(value) > MAX_ID_LENGTH or len(parts) != 3 or not all(parts):
            shown = value[:60] + ("…" if len(value) > 60 else "")
            raise BadSelection(f"{shown!r} is not a variant id like repository/branch/name.")
        if parts in ids:
            raise BadSelection(f"{value!r} is listed twice.")
        ids.append(parts)
    return ids


# The table's rows: (label, how to read the value from a variant), in the variant page's order.
FIELDS = (
    ("Package name", lambda v: v.pname),
    ("Repository", lambda v: v.branch.repository),
    ("Branch", lambda v: v.branch.name),
    ("PyTorch", lambda v: v.branch.pytorch_version),
    ("Library", lambda v: v.get_library_display()),
    ("Backend", lambda v: v.get_backend_display()),
    ("CUDA", lambda v: v.cuda_version or "—"),
    (
        "GPU architecture",
        lambda v: f"{v.gpu_arch.sm.upper()} {v.gpu_arch.name}" if v.gpu_arch_id else "—",
    ),
    ("CPU ISA", lambda v: v.cpu_isa.label if v.cpu_isa_id else "—"),
    ("Compiler flags", lambda v: " ".join(v.cpu_isa.compiler_flags) if v.cpu_isa_id else "—"),
    ("Platform", lambda v: v.platform),
    ("Python", lambda v: v.python_version),
    ("BLAS", lambda v: v.get_blas_display()),
    ("Status", lambda v: v.get_status_display()),
    ("Use case", lambda v: v.use_case or "—"),
    ("Switched off", lambda v: ", ".join(v.disabled_features) or "nothing"),
    ("Extra CMake flags", lambda v: " ".join(v.extra_cmake_flags) or "none"),
    ("Built against", lambda v: v.depends_on.pname if v.depends_on_id else "—"),
    ("nixpkgs", lambda v: v.nixpkgs_pin or v.branch.nixpkgs_pin or "—"),
    ("Origin", lambda v: v.get_origin_display()),
    ("Metadata revision", lambda v: str(v.metadata_rev)),
)


@dataclass(frozen=True)
class FieldRow:
    label: str
    values: list[str]

    @property
    def differs(self) -> bool:
        return len(set(self.values)) > 1


def recipe_diff(base: str, other: str, base_name: str, other_name: str) -> list[tuple[str, str]]:
    """(kind, line) of a unified diff: kind is "add", "del", "hunk" or "same"."""
    kinds = {"+": "add", "-": "del", "@": "hunk"}
    lines = difflib.unified_diff(
        base.splitlines(), other.splitlines(), base_name, other_name, n=2, lineterm=""
    )
    return [(kinds.get(line[:1], "same"), line) for line in list(lines)[2:]]


def _diffs(variants) -> list[list[tuple[str, str]]]:
    texts = sync.exported_texts(variants)
    base = variants[0]
    return [
        recipe_diff(texts[0], text, base.pname, v.pname)
        for v, text in zip(variants[1:], texts[1:], strict=True)
    ]


def _compare_context(variants) -> dict:
    # Parsing the recipes and diffing them is the page's cost: done once per catalogue version.
    diffs = cache.cached("compare-diffs", lambda: _diffs(variants), *(v.pk for v in variants))
    base = variants[0]
    ids = [variant_id(v) for v in variants]

    def without(i):  # the URL with one variant left out, while at least two stay
        return urlencode([("v", other) for other in ids if other != i]) if len(ids) > 2 else ""

    return {
        "variants": [
            {"variant": v, "id": i, "without": without(i)}
            for v, i in zip(variants, ids, strict=True)
        ],
        "rows": [FieldRow(label, [read(v) for v in variants]) for label, read in FIELDS],
        "diffs": [
            {"variant": v, "lines": lines} for v, lines in zip(variants[1:], diffs, strict=True)
        ],
        "base": base,
    }


@require_safe
def compare(request):
    if "compare" in request.GET:
        # Ticked checkboxes (name="compare") land on the one URL form of the selection.
        ids = request.GET.getlist("v") + request.GET.getlist("compare")
        return HttpResponseRedirect(
            f"{reverse('catalog:compare')}?{urlencode([('v', i) for i in ids])}"
        )
    values = request.GET.getlist("v")
    try:
        ids = parse_ids(values)
        found = {
            (v.branch.repository, v.branch.name, v.pname): v for v in queries.compare_variants(ids)
        }
        missing = ["/".join(i) for i in ids if i not in found]
        if missing:
            raise BadSelection(f"No variant {', '.join(missing)} in the catalogue.")
    except BadSelection as exc:
        return render(request, "catalog/compare.html", {"error": str(exc)}, status=400)
    return render(request, "catalog/compare.html", _compare_context([found[i] for i in ids]))
