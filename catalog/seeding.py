"""Load the catalogue's source data (fixtures/) into the database.

The sources are reviewable files: `fixtures/catalogue/*.toml` (architectures, ISAs, branches
with their variant matrices, seed claims) and `fixtures/docs/*.md` (guide pages). Loading is
an idempotent upsert in one transaction: every record goes through `full_clean`, nothing is
deleted, and a second load reports everything unchanged.
"""

from __future__ import annotations

import tomllib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from catalog import cache, lint, naming, vocabulary
from catalog.models import (
    Branch,
    CpuIsa,
    DocPage,
    GpuArchitecture,
    GpuModel,
    SourceClaim,
    Variant,
)
from catalog.services import assign_changed, validation_message

BACKEND_BLAS = {key: backend.blas[0] for key, backend in vocabulary.BACKENDS.items()}
MPS_USE_CASE = "Apple Silicon (M1–M4) with Metal GPU"


class SeedError(Exception):
    """Source data that cannot be loaded; the message names the file and the record."""


@dataclass(frozen=True)
class VariantSpec:
    """One variant a branch's matrix asks for, before it is tied to database rows."""

    library: str
    backend: str
    cuda_version: str = ""
    sm: str = ""
    isa: str = ""
    # A seed's own wording, where it differs from what the architecture and ISA compose.
    use_case: str = field(default="", compare=False)


@dataclass
class LoadReport:
    counts: dict = field(default_factory=dict)  # model name -> Counter(created/updated/unchanged)
    # "<branch>: <pname>: <fields>" per existing variant whose fields differ from the seeds
    kept: list[str] = field(default_factory=list)

    def add(self, model_name: str, outcome: str) -> None:
        self.counts.setdefault(model_name, Counter())[outcome] += 1

    @property
    def changed(self) -> int:
        return sum(c["created"] + c["updated"] for c in self.counts.values())

    def lines(self) -> Iterator[str]:
        for name, c in self.counts.items():
            kept = f", {c['kept']} kept as the catalogue has them" if c["kept"] else ""
            yield (
                f"{name}: {c['created']} created, {c['updated']} updated, "
                f"{c['unchanged']} unchanged{kept}"
            )


def fixtures_dir() -> Path:
    return Path(settings.CATALOGUE_FIXTURES_DIR)


def read_toml(path: Path) -> dict:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as exc:
        raise SeedError(f"{path} is missing.") from exc
    except tomllib.TOMLDecodeError as exc:
        raise SeedError(f"{path} is not valid TOML: {exc}") from exc


def _require(spec, keys, where: str) -> None:
    """Refuse a record that lacks a key the loader needs to identify or build it."""
    if not isinstance(spec, dict):
        raise SeedError(f"{where}: expected a table of key = value pairs, got {spec!r}")
    missing = [key for key in keys if key not in spec]
    if missing:
        raise SeedError(
            f"{where}: a record has no {', '.join(missing)}; every record needs {', '.join(keys)}."
        )


def _resolve_set(value, sets, what, where):
    if isinstance(value, str):
        if value not in sets:
            raise SeedError(f"{where}: unknown {what} set {value!r}")
        return list(sets[value])
    return list(value or [])


def expand_matrix(branch_spec: dict, isa_sets: dict, gpu_sets: dict) -> list[VariantSpec]:
    """A branch's matrix groups as the list of variants they describe (pure)."""
    where = f"branch {branch_spec.get('repository')}:{branch_spec.get('name')}"
    specs = []
    for group in branch_spec.get("matrix", []):
        _require(group, ("library", "backend"), f"{where} matrix")
        library, backend = group["library"], group["backend"]
        if backend not in BACKEND_BLAS:
            raise SeedError(
                f"{where} matrix: unknown backend {backend!r}; "
                f"use one of {', '.join(BACKEND_BLAS)}."
            )
        # A group without its dimensions would silently describe no variants.
        _require(
            group,
            {"cuda": ("cuda", "gpus", "isas"), "cpu": ("isas",), "mps": ()}[backend],
            f"{where} {backend} matrix group",
        )
        if backend == "mps":
            specs.append(VariantSpec(library, backend))
            continue
        isas = _resolve_set(group.get("isas"), isa_sets, "ISA", where)
        use_cases = group.get("use_cases", {})
        unknown = set(use_cases) - set(isas)
        if unknown:
            raise SeedError(
                f"{where} matrix: use_cases names ISAs the group does not build: "
                f"{', '.join(sorted(unknown))}"
            )
        if backend == "cpu":
            specs.extend(
                VariantSpec(library, backend, isa=isa, use_case=use_cases.get(isa, ""))
                for isa in isas
            )
            continue
        gpus = _resolve_set(group.get("gpus"), gpu_sets, "GPU", where)
        for cuda in group.get("cuda", []):
            for sm in gpus:
                specs.extend(
                    VariantSpec(library, backend, cuda, sm, isa, use_cases.get(isa, ""))
                    for isa in isas
                )
    seen = Counter(specs)
    dupes = [s for s, n in seen.items() if n > 1]
    if dupes:
        raise SeedError(f"{where}: the matrix lists {dupes[0]} more than once")
    return specs


def parse_doc(path: Path) -> dict:
    """A guide page: a `---` front-matter block of `key: value` lines, then Markdown."""
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise SeedError(f"{path.name}: a doc page starts with a '---' front-matter block")
    try:
        header, body = text[4:].split("\n---\n", 1)
    except ValueError as exc:
        raise SeedError(f"{path.name}: the front-matter block is not closed with '---'") from exc
    meta = {}
    for line in header.splitlines():
        if line.strip():
            key, sep, value = line.partition(":")
            if not sep:
                raise SeedError(f"{path.name}: front-matter line {line!r} is not 'key: value'")
            meta[key.strip()] = value.strip()
    order, _, slug = path.stem.partition("-")
    if not order.isdigit() or not slug or "title" not in meta:
        raise SeedError(f"{path.name}: name it NN-slug.md and give it a title")
    return {
        "slug": slug,
        "order": int(order),
        "title": meta["title"],
        "summary": meta.get("summary", ""),
        "sources": meta.get("sources", ""),
        "body": body.strip() + "\n",
    }


def _upsert(report, model, lookup: dict, values: dict, where: str):
    """Create or update one row; full_clean first, so the loader enforces model validation."""
    obj = model.objects.filter(**lookup).first()
    if obj is None:
        obj, outcome = model(**lookup, **values), "created"
    else:
        outcome = "updated" if assign_changed(obj, values) else "unchanged"
    if outcome != "unchanged":
        try:
            obj.full_clean()
        except ValidationError as exc:
            raise SeedError(f"{where}: {validation_message(exc)}") from exc
        obj.save()
    report.add(model.__name__, outcome)
    return obj


def _load_isas(report, data):
    fields = [f.name for f in CpuIsa._meta.fields if f.name not in ("id", "slug")]
    for spec in data.get("isa", []):
        _require(spec, ("slug",), "isas.toml [[isa]]")
    return {
        spec["slug"]: _upsert(
            report,
            CpuIsa,
            {"slug": spec["slug"]},
            {k: spec[k] for k in fields if k in spec},
            f"isas.toml {spec['slug']}",
        )
        for spec in data.get("isa", [])
    }


def _load_architectures(report, data):
    archs = {}
    fields = [
        f.name for f in GpuArchitecture._meta.fields if f.name not in ("id", "sm", "arch_number")
    ]
    for spec in data.get("architecture", []):
        _require(spec, ("sm",), "architectures.toml [[architecture]]")
        where = f"architectures.toml {spec['sm']}"
        arch = _upsert(
            report, GpuArchitecture, {"sm": spec["sm"]}, {k: spec.get(k, "") for k in fields}, where
        )
        archs[arch.sm] = arch
        for model in spec.get("models", []):
            _require(model, ("name",), f"{where} models")
            _upsert(
                report,
                GpuModel,
                {"name": model["name"]},
                {
                    "architecture": arch,
                    "aliases": model.get("aliases", []),
                    "segment": model.get("segment", ""),
                },
                f"{where} model {model['name']}",
            )
    return archs


BRANCH_FIELDS = [
    "pytorch_version",
    "torchvision_version",
    "python_version",
    "vllm_version",
    "cuda_versions",
    "cudnn_version",
    "min_driver",
    "nixpkgs_pin",
    "purpose",
    "key_additions",
    "is_default",
    "is_recommended",
    "preference",
    "stated_variant_count",
    "default_status",
    "derivation",
]


def _load_branches(report, data):
    branches = {}
    for spec in data.get("branch", []):
        _require(spec, ("repository", "name"), "branches.toml [[branch]]")
    # build-pytorch first: build-torchvision branches point at them.
    specs = sorted(data.get("branch", []), key=lambda s: s["repository"] != "build-pytorch")
    for spec in specs:
        where = f"branches.toml {spec['repository']}:{spec['name']}"
        values = {k: spec[k] for k in BRANCH_FIELDS if k in spec}
        values["derivation"] = values.get("derivation", "").strip()
        values["pytorch_branch"] = None
        if spec.get("pytorch_branch"):
            key = ("build-pytorch", spec["pytorch_branch"])
            if key not in branches:
                raise SeedError(
                    f"{where}: pytorch_branch {spec['pytorch_branch']!r} "
                    "is not a build-pytorch branch"
                )
            values["pytorch_branch"] = branches[key]
        branch = _upsert(
            report, Branch, {"repository": spec["repository"], "name": spec["name"]}, values, where
        )
        branches[(branch.repository, branch.name)] = branch
    return specs, branches


def variant_values(spec: VariantSpec, branch: Branch, archs: dict, isas: dict) -> dict:
    """Every field of a seeded variant, derived from the branch, architecture and ISA."""
    arch = archs.get(spec.sm) if spec.sm else None
    isa = isas.get(spec.isa) if spec.isa else None
    where = f"{branch}: {spec}"
    if spec.sm and arch is None:
        raise SeedError(f"{where}: unknown GPU architecture {spec.sm!r}")
    if spec.isa and isa is None:
        raise SeedError(f"{where}: unknown CPU ISA {spec.isa!r}")
    platform = "aarch64-darwin" if spec.backend == "mps" else isa.linux_platform
    if spec.use_case:
        use_case = spec.use_case
    elif spec.backend == "cuda":
        use_case = f"{arch.short_models} + {isa.gpu_pairing}"
    elif spec.backend == "cpu":
        use_case = isa.cpu_use_case
    else:
        use_case = MPS_USE_CASE
    values = {
        "library": spec.library,
        "backend": spec.backend,
        "cuda_version": spec.cuda_version,
        "gpu_arch": arch,
        "cpu_isa": isa,
        "platform": platform,
        "python_version": branch.python_version,
        "blas": BACKEND_BLAS[spec.backend],
        "use_case": use_case,
    }
    probe = Variant(branch=branch, **values)
    values["disabled_features"] = sorted(probe.required_disabled_features())
    values["pname"] = probe.composed_pname()
    return values


def _impossible(values: dict) -> str:
    arch, isa = values["gpu_arch"], values["cpu_isa"]
    if values["backend"] != "cuda" or arch is None or isa is None:
        return ""
    return lint.impossible_pairing(arch.sm, arch.host_arch, isa.slug)


def _load_variants(report, data, branch_specs, branches, archs, isas):
    isa_sets, gpu_sets = data.get("isa_sets", {}), data.get("gpu_sets", {})
    planned = []
    for spec in branch_specs:
        branch = branches[(spec["repository"], spec["name"])]
        for vspec in expand_matrix(spec, isa_sets, gpu_sets):
            planned.append((branch, variant_values(vspec, branch, archs, isas)))
    # PyTorch first, so companions can point at it.
    planned.sort(key=lambda item: item[1]["library"] != "pytorch")
    related = ("branch", "gpu_arch", "cpu_isa", "depends_on")
    existing = {(v.branch_id, v.pname): v for v in Variant.objects.select_related(*related)}
    pytorch = {}
    for branch, values in planned:
        where = f"branches.toml {branch}: {values['pname']}"
        if values["library"] != "pytorch":
            target_branch = branch.pytorch_branch or branch
            key = (
                target_branch.pk,
                naming.compose(
                    "pytorch",
                    values["python_version"],
                    values["backend"],
                    values["cuda_version"],
                    values["gpu_arch"].sm if values["gpu_arch"] else "",
                    values["cpu_isa"].slug if values["cpu_isa"] else "",
                ),
            )
            values["depends_on"] = pytorch.get(key)
            # An impossible pairing's PyTorch is not built either (no machine runs it); the
            # audit says so. Any other companion must find its PyTorch.
            if values["depends_on"] is None and not _impossible(values):
                raise SeedError(
                    f"{where}: no PyTorch variant {key[1]} on {target_branch} to build against"
                )
        else:
            values["depends_on"] = None
        current = existing.get((branch.pk, values["pname"]))
        if current is not None:
            variant = _keep(report, current, values)
        else:
            values["status"] = branch.default_status
            lookup = {"branch": branch, "pname": values.pop("pname")}
            variant = _upsert(report, Variant, lookup, values, where)
        if variant.library == "pytorch":
            pytorch[(branch.pk, variant.pname)] = variant


def _keep(report, variant: Variant, values: dict) -> Variant:
    """An existing variant stays as the catalogue has it: the seeds make a variant, and what a
    maintainer set since (in the admin, with edit-variants, by importing its recipe) is never
    reverted by reloading them. Where its fields differ from the seeds, it is reported."""
    differing = [
        name
        for name, value in values.items()
        if name != "pname" and getattr(variant, name) != value
    ]
    report.add(Variant.__name__, "kept" if differing else "unchanged")
    if differing:
        report.kept.append(f"{variant.branch}: {variant.pname}: {', '.join(differing)}")
    return variant


def _load_claims(report, data):
    fields = ["kind", "subject", "statement", "source", "resolution", "acknowledged"]
    defaults = {"resolution": "", "acknowledged": False}
    for spec in data.get("claim", []):
        _require(spec, ("key",), "claims.toml [[claim]]")
        values = {k: spec.get(k, defaults.get(k)) for k in fields}
        values["criteria"] = spec.get("check", {})
        _upsert(report, SourceClaim, {"key": spec["key"]}, values, f"claims.toml {spec['key']}")


def _load_docs(report, docs_dir: Path):
    for path in sorted(docs_dir.glob("*.md")):
        doc = parse_doc(path)
        slug = doc.pop("slug")
        _upsert(report, DocPage, {"slug": slug}, doc, f"docs/{path.name}")


def load_catalogue(root: Path | None = None) -> LoadReport:
    root = Path(root) if root else fixtures_dir()
    catalogue = root / "catalogue"
    isa_data = read_toml(catalogue / "isas.toml")
    arch_data = read_toml(catalogue / "architectures.toml")
    branch_data = read_toml(catalogue / "branches.toml")
    claim_data = read_toml(catalogue / "claims.toml")
    report = LoadReport()
    with transaction.atomic():
        isas = _load_isas(report, isa_data)
        archs = _load_architectures(report, arch_data)
        specs, branches = _load_branches(report, branch_data)
        _load_variants(report, branch_data, specs, branches, archs, isas)
        _load_claims(report, claim_data)
        _load_docs(report, root / "docs")
        # The audit's findings of whatever the load changed and the snapshots, with the load.
        cache.store_derived()
    return report
