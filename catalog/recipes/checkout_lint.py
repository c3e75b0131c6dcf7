"""Lint a build repository's checkout with no database and no network: `lint-recipes PATH`.

Every `.nix` under PATH/.flox/pkgs is read (catalog.recipes.nix.read), named (catalog.naming:
the file name says library, Python, CUDA, architecture and ISA), checked by the catalogue's lint
rules (catalog.lint) and, unless skipped, evaluated against the stand-in nixpkgs
(catalog.recipes.nix.verify). The architecture facts and ISA compiler flags come from the seed
TOML files (fixtures/catalogue/), so a build repository's CI needs only a plain checkout of
this project. Each finding carries the line of the value it is about.

Pure Python, no Django.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from catalog import lint, naming
from catalog.recipes.nix import evaluate, verify
from catalog.recipes.nix.errors import RecipeError
from catalog.recipes.nix.facts import RecipeFacts
from catalog.recipes.nix.read import read_recipe

# Which value of the recipe a rule is about: the finding points at that value's line.
RULE_FIELDS = {
    "cuda-bounds": "cuda_packages_attr",
    "arm-only-gpu": "platforms",
    "gpu-targets": "gpu_targets",
    "file-name": "pname",
    "name-parts": "pname",
    "platforms-as-written": "platforms",
    "nixpkgs-pin": "nixpkgs_pin",
    "library": "pname",
    "cuda": "cuda_packages_attr",
    "python": "python_attr",
    "cxxflags": "cpu_flags",
}
SEED_FILES = ("architectures.toml", "isas.toml")


class CannotLint(Exception):
    """lint-recipes cannot run (no recipes, unreadable seeds, no nix-instantiate): one sentence."""


@dataclass(frozen=True, order=True)
class Finding:
    path: str  # as given on the command line, joined with the recipe's place under it
    line: int
    rule: str
    message: str

    def text(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}: {self.message}"

    def github(self) -> str:
        """A GitHub Actions workflow annotation (newlines and % escaped as the runner wants)."""
        message = self.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        path = self.path.replace("%", "%25").replace(",", "%2C").replace(":", "%3A")
        return f"::error file={path},line={self.line},title={self.rule}::{message}"


@dataclass(frozen=True)
class Seeds:
    archs: dict[str, lint.ArchFacts]
    isa_flags: dict[str, list[str]]


def read_seeds(folder: Path) -> Seeds:
    """Architecture facts and ISA compiler flags from the seed TOML files."""
    data = {}
    for name in SEED_FILES:
        try:
            with (Path(folder) / name).open("rb") as fh:
                data[name] = tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise CannotLint(f"Cannot read the seed file {Path(folder) / name}: {exc}.") from None
    try:
        archs = {
            a["sm"]: lint.ArchFacts(
                a["sm"], a["min_cuda"], a.get("max_cuda", ""), a.get("host_arch", "")
            )
            for a in data["architectures.toml"]["architecture"]
        }
        isa_flags = {i["slug"]: list(i["compiler_flags"]) for i in data["isas.toml"]["isa"]}
    except (KeyError, TypeError) as exc:
        raise CannotLint(f"The seed files lack a field the lint needs: {exc}.") from None
    return Seeds(archs, isa_flags)


def _line(facts: RecipeFacts | None, rule: str) -> int:
    if facts is None:
        return 1
    span = facts.spans.get(RULE_FIELDS.get(rule, ""))
    return span.line if span else 1


def _record(branch: str, stem: str, facts: RecipeFacts, name: naming.NameParts):
    source = facts.pytorch_source
    return lint.VariantRecord(
        repository="",
        branch=branch,
        pname=facts.pname,
        file_name=stem,
        library=name.library,
        backend=name.backend,
        cuda_version=name.cuda_version,
        sm=name.sm,
        isa=name.isa,
        platforms=tuple(facts.platforms),
        gpu_targets=tuple(facts.gpu_targets),
        nixpkgs_pin=facts.nixpkgs_pin,
        pytorch_recipe=source.sibling if source and source.kind == "sibling" else "",
    )


def _read(files: Sequence[Path], shown: Mapping[Path, str]):
    """(facts by file, lint records, findings for files that cannot be read or named)."""
    facts: dict[Path, RecipeFacts] = {}
    records, findings = [], []
    for path in files:
        try:
            facts[path] = read_recipe(path.read_text(encoding="utf-8"))
        except (RecipeError, UnicodeDecodeError, OSError) as exc:
            line = getattr(exc, "line", 1) or 1
            findings.append(Finding(shown[path], line, "reads", f"Cannot read the recipe: {exc}"))
            continue
        name = naming.parse_lenient(path.stem)
        if name is None:
            findings.append(
                Finding(
                    shown[path],
                    _line(facts[path], "file-name"),
                    "name",
                    f"The file name {path.stem!r} is not a package name "
                    "({library}-python{PY}-cuda{X}_{Y}-{sm}-{isa}, -cpu-{isa} or -darwin-mps).",
                )
            )
            continue
        records.append((path, _record(str(path.parent), path.stem, facts[path], name)))
    return facts, records, findings


def lint_checkout(
    path: Path,
    seeds: Seeds,
    *,
    evaluate_recipes: bool = True,
    jobs: int = 2,
    shown_root: str | None = None,
) -> tuple[list[Finding], int]:
    """Findings over every recipe under PATH (sorted, one per file, line and rule) and how many
    recipes were checked. CannotLint when PATH holds no recipes or evaluation cannot run."""
    try:
        folder, files = verify.recipe_files(Path(path))
    except verify.VerifyInputError as exc:
        raise CannotLint(str(exc)) from None
    root = shown_root if shown_root is not None else str(path)
    shown = {f: str(Path(root) / f.relative_to(Path(path))) for f in files}
    facts, records, findings = _read(files, shown)
    by_stem = {record.file_name: file for file, record in records}
    for found in lint.lint([record for _, record in records], seeds.archs):
        file = by_stem[found.variant]
        findings.append(
            Finding(shown[file], _line(facts.get(file), found.rule), found.rule, found.message)
        )
    if evaluate_recipes:
        findings += _evaluate(folder, facts, shown, seeds, jobs)
    # The lint and the evaluation share some rules (file-name, platforms, GPU targets): once.
    unique: dict[tuple[str, str], Finding] = {}
    for finding in sorted(findings):
        unique.setdefault((finding.path, finding.rule), finding)
    return sorted(unique.values()), len(files)


def _evaluate(folder, facts, shown, seeds: Seeds, jobs: int) -> list[Finding]:
    try:
        report = verify.verify(folder, seeds.isa_flags, jobs=jobs)
    except evaluate.EvaluatorUnavailable as exc:
        raise CannotLint(f"{exc} (or run with --skip-evaluation).") from None
    return [
        Finding(shown[f.path], _line(facts.get(f.path), f.rule), f.rule, f.message)
        for f in report.findings
        if f.path in shown
    ]
