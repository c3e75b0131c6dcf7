"""Check evaluated recipes against their file names: what `verify-recipes` reports.

A recipe's file name is its package name (`pytorch-python313-cuda12_8-sm90-avx512.nix`), and
the name promises a library, a Python, a CUDA version, a GPU architecture and a CPU ISA. The
stand-in (`evaluate.py`) records what the recipe really builds; `check_record` compares the two.
Each rule is one entry of RULES. Pure Python: the ISAs' compiler flags are passed in.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from catalog import lint, naming, vocabulary

from . import evaluate as nix_eval

PKGS_DIR = Path(vocabulary.PKGS_DIR)

# rule -> what it checks (the README and the command's help list them from here)
RULES = {
    "evaluates": "the recipe evaluates with nix-instantiate against the stand-in nixpkgs",
    "name": "the file name is a package name",
    "library": "it builds the library its name says",
    "file-name": "its pname equals its file name",
    "gpu-targets": "every GPU target is a TORCH_CUDA_ARCH_LIST entry for the name's architecture",
    "cuda": "the CUDA package set it ends up with is the name's CUDA version",
    "python": "its Python package set is the name's Python",
    "cxxflags": "CXXFLAGS carry the compiler flags of the name's CPU ISA",
    "platforms-as-written": "meta.platforms lists only the platform the ISA (or MPS) builds for",
}


class VerifyInputError(ValueError):
    """A PATH verify-recipes cannot read; the message is one sentence."""


@dataclass(frozen=True)
class Finding:
    path: Path
    rule: str
    message: str


@dataclass
class Report:
    root: Path
    paths: list[Path]
    findings: list[Finding] = field(default_factory=list)
    notes: list[Finding] = field(default_factory=list)  # what could not be checked, and why
    seconds: float = 0.0  # the evaluation (shared by the folders verified together)

    @property
    def ok(self) -> bool:
        return not self.findings

    def files_with_findings(self) -> int:
        return len({f.path for f in self.findings})


def recipe_files(path: Path) -> tuple[Path, list[Path]]:
    """The folder of recipes PATH names and its `.nix` files, sorted: PATH/.flox/pkgs of a
    checkout or export tree, or PATH itself when it holds the recipes."""
    path = Path(path)
    if not path.exists():
        raise VerifyInputError(f"{path} does not exist; give a checkout or its .flox/pkgs folder.")
    if not path.is_dir():
        raise VerifyInputError(f"{path} is not a folder; give a checkout or its .flox/pkgs folder.")
    folder = path / PKGS_DIR if (path / PKGS_DIR).is_dir() else path
    files = sorted(p for p in folder.glob("*.nix") if p.is_file())
    if not files:
        where = "" if folder != path else " and has no .flox/pkgs folder"
        raise VerifyInputError(
            f"{folder} holds no .nix recipes{where}; give a checkout or its .flox/pkgs folder."
        )
    return folder, files


def verify_folders(
    paths: Sequence[Path],
    isa_flags: Mapping[str, Sequence[str]],
    *,
    jobs: int = 2,
    file_timeout: float = nix_eval.FILE_TIMEOUT_S,
) -> list[Report]:
    """Evaluate every recipe under each PATH and check each against its file name: one Report
    per PATH. All recipes share the same `jobs` nix-instantiate processes."""
    folders = [recipe_files(path) for path in paths]  # every PATH checked before evaluating
    start = time.perf_counter()
    evaluations = iter(
        nix_eval.evaluate(
            [file for _, files in folders for file in files], jobs=jobs, file_timeout=file_timeout
        )
    )
    seconds = time.perf_counter() - start
    reports = []
    for folder, files in folders:
        report = Report(folder, files, seconds=seconds)
        for path in files:
            evaluation = next(evaluations)
            if evaluation.record is None:
                report.findings.append(Finding(path, "evaluates", evaluation.error))
                continue
            findings, notes = check_record(path.stem, evaluation.record, isa_flags)
            report.findings += [Finding(path, rule, text) for rule, text in findings]
            report.notes += [Finding(path, rule, text) for rule, text in notes]
        reports.append(report)
    return reports


def verify(
    path: Path,
    isa_flags: Mapping[str, Sequence[str]],
    *,
    jobs: int = 2,
    file_timeout: float = nix_eval.FILE_TIMEOUT_S,
) -> Report:
    """verify_folders for one PATH."""
    return verify_folders([path], isa_flags, jobs=jobs, file_timeout=file_timeout)[0]


# ---------------------------------------------------------------- the rules

Problem = tuple[str, str]  # (rule, sentence)


def check_record(
    stem: str, record: dict, isa_flags: Mapping[str, Sequence[str]]
) -> tuple[list[Problem], list[Problem]]:
    """(findings, notes) for one evaluated recipe named `stem`."""
    try:
        name = naming.parse(stem)
    except naming.InvalidName as exc:
        return [("name", f"The file name is not a package name: {exc}.")], []
    if record.get("kind") == "other":
        return [
            (
                "library",
                f"It evaluates to a {record.get('type')}, not a PyTorch, torchvision "
                "or torchaudio package.",
            )
        ], []
    findings: list[Problem] = []
    notes: list[Problem] = []
    library_attr = vocabulary.LIBRARIES[name.library].attr
    if record["kind"] != library_attr:
        findings.append(("library", f"It builds {record['kind']}; the name says {name.library}."))
    if record.get("pname") != stem:
        findings.append(
            ("file-name", f'pname is {_quoted(record.get("pname"))}, not the file name "{stem}".')
        )
    parts = [("It", record)]
    torch = record.get("torch")
    if torch and torch.get("remote"):
        notes.append(
            (
                "library",
                f"Its PyTorch comes from {torch['remote']}, which is not "
                "evaluated (it would need the network).",
            )
        )
    elif torch:
        parts.append(("Its PyTorch", torch))
    findings += _python(name, parts)
    findings += _cuda(name, record, parts)
    if name.isa:
        findings += _cxxflags(name, record, isa_flags)
    findings += _platforms(name, record)
    return findings, notes


def _quoted(value) -> str:
    return "not set" if value is None else f'"{value}"'


def _python(name: naming.NameParts, parts) -> list[Problem]:
    return [
        (
            "python",
            f"{label} comes from the Python {rec['python']} package set; the name says "
            f"Python {name.python_version}.",
        )
        for label, rec in parts
        if rec.get("python") and rec["python"] != name.python_version
    ]


def _cuda(name: naming.NameParts, record: dict, parts) -> list[Problem]:
    if name.backend != "cuda":
        if record.get("cudaSupport"):
            return [("cuda", f"CUDA support is on in a {name.backend.upper()} build.")]
        return []
    if not record.get("cudaSupport"):
        return [("cuda", f"CUDA support is off; the name says CUDA {name.cuda_version}.")]
    return _cuda_sets(name, parts) + _gpu_targets(name, record)


def _cuda_sets(name: naming.NameParts, parts) -> list[Problem]:
    """The CUDA package set each evaluated package is built with, against the name's."""
    problems = []
    attr = naming.cuda_set_attr(name.cuda_version)
    for label, rec in parts:
        if rec.get("cudaSet") == "cudaPackages":
            problems.append(
                (
                    "cuda",
                    f"{label} uses nixpkgs' default CUDA package set "
                    f"(cudaPackages), which changes with nixpkgs; the name says "
                    f"CUDA {name.cuda_version}: select {attr}.",
                )
            )
        elif rec.get("cuda") and rec["cuda"] != name.cuda_version:
            problems.append(
                (
                    "cuda",
                    f"{label} is built with CUDA {rec['cuda']} ({rec['cudaSet']}); "
                    f"the name says CUDA {name.cuda_version}.",
                )
            )
    return problems


def _gpu_targets(name: naming.NameParts, record: dict) -> list[Problem]:
    """The GPU targets the build compiles for (a TORCH_CUDA_ARCH_LIST exported in preConfigure,
    else gpuTargets), against the name's architecture."""
    targets = _exported(record.get("preConfigure", ""), "TORCH_CUDA_ARCH_LIST")
    entries = re.split(r"[;\s]+", targets.strip()) if targets is not None else record["targets"]
    entries = [e for e in entries if e]
    if not entries:
        return [("gpu-targets", "It sets no GPU target.")]
    problems = []
    for entry in dict.fromkeys(entries):
        try:
            sm = naming.gpu_target_sm(entry)
        except naming.InvalidName as exc:
            problems.append(("gpu-targets", f"{exc}: PyTorch refuses it, so the build fails."))
            continue
        if sm != name.sm:
            problems.append(
                (
                    "gpu-targets",
                    f'GPU target "{entry}" is {sm.upper()}; the name says {name.sm.upper()}.',
                )
            )
    return problems


_ASSIGN = r"(?:^|[\s;])(?:export\s+)?{var}=(?:\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)'|(?P<bare>\S*))"


def _assignments(script: str, var: str) -> list[str]:
    pattern = re.compile(_ASSIGN.format(var=re.escape(var)), re.M)
    return [
        m["dq"] if m["dq"] is not None else m["sq"] if m["sq"] is not None else m["bare"]
        for m in pattern.finditer(script)
    ]


def _exported(script: str, var: str) -> str | None:
    """The last value a build script gives `var`, None when it gives none."""
    values = _assignments(script, var)
    return values[-1] if values else None


def _cxxflags(name: naming.NameParts, record: dict, isa_flags) -> list[Problem]:
    flags = isa_flags.get(name.isa)
    if flags is None:
        return [
            ("cxxflags", f'The catalogue has no CPU ISA "{name.isa}", so its flags are unknown.')
        ]
    values = _assignments(record.get("preConfigure", ""), "CXXFLAGS")
    if not values:
        return [
            (
                "cxxflags",
                f"preConfigure sets no CXXFLAGS; the {name.isa} ISA needs {' '.join(flags)}.",
            )
        ]
    given = {token for value in values for token in value.split()}
    missing = [f for f in flags if f not in given]
    if missing:
        return [
            (
                "cxxflags",
                f"CXXFLAGS lack {' '.join(missing)} (the {name.isa} ISA compiles with "
                f"{' '.join(flags)}).",
            )
        ]
    return []


def _platforms(name: naming.NameParts, record: dict) -> list[Problem]:
    expected = lint.expected_platforms(name.backend, name.isa)
    listed = record.get("platforms")
    if not expected:
        return []  # an ISA the vocabulary does not know: the cxxflags rule says so
    what = f"the {name.isa} flags build" if name.isa else "MPS builds"
    if listed is None:
        return [
            (
                "platforms-as-written",
                f"meta.platforms is not set; {what} only for {', '.join(expected)}.",
            )
        ]
    wrong = [p for p in listed if p not in expected]
    if wrong or not listed:
        shown = ", ".join(listed[:4]) + (f" and {len(listed) - 4} more" if len(listed) > 4 else "")
        return [
            (
                "platforms-as-written",
                f"meta.platforms lists {shown or 'nothing'}; {what} only for "
                f"{', '.join(expected)}.",
            )
        ]
    return []
