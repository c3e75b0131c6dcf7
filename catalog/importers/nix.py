"""Read a recipe's facts from its Nix text.

Recipes are read by the attributes the seeds' families use (pname, gpuArchNum, cpuFlags, the
nixpkgs pin, the CUDA overlay, passthru, postInstall, meta.platforms), not evaluated: the
importer must work without Nix and report exactly which line it could not follow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from catalog.exporters import profiles as P

from .errors import ParseError

STRING = r'"((?:[^"\\]|\\.)*)"'
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


def unescape(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


@dataclass
class RecipeFacts:
    pname: str
    pname_line: int
    library: str
    python_version: str
    backend: str
    cuda_version: str = ""
    sm: str = ""
    cpu_flags: list[str] = field(default_factory=list)
    cpu_isa: str = ""  # passthru.cpuISA
    platforms: list[str] = field(default_factory=list)
    blas: str = ""
    nixpkgs_pin: str | None = None  # None: the build environment's nixpkgs
    disabled_features: list[str] = field(default_factory=list)
    switched_off_env: set[str] = field(default_factory=set)  # USE_X=0 seen anywhere
    extra_cmake_flags: list[str] = field(default_factory=list)
    metadata_rev: int = 1
    use_case: str = ""
    notes: str = ""
    built_against: tuple[str, str, str] | None = None  # (repository, branch, pname)
    imports: str = ""  # pname of a PyTorch recipe imported from the same directory


def check_brackets(text: str) -> None:
    """Balanced (), [], {} outside comments and strings; unterminated strings are errors."""
    pairs = {")": "(", "]": "[", "}": "{"}
    stack: list[tuple[str, int]] = []
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        elif c == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif c == '"':
            start = line
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\":
                    i += 1
                elif text[i] == "\n":
                    line += 1
                i += 1
            if i >= n:
                raise ParseError(start, "a double-quoted string is never closed")
        elif text.startswith("''", i):
            start = line
            i += 2
            while i < n:
                if text.startswith("'''", i) or text.startswith("''$", i):
                    i += 3
                    continue
                if text.startswith("''", i):
                    break
                if text[i] == "\n":
                    line += 1
                i += 1
            if i >= n:
                raise ParseError(start, "an indented ('') string is never closed")
            i += 1
        elif c in "([{":
            stack.append((c, line))
        elif c in ")]}":
            if not stack or stack[-1][0] != pairs[c]:
                raise ParseError(line, f"unmatched {c!r}")
            stack.pop()
        i += 1
    if stack:
        raise ParseError(stack[-1][1], f"{stack[-1][0]!r} is never closed")


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _strings(list_body: str) -> list[str]:
    body = re.sub(r"#[^\n]*", "", list_body)
    return [unescape(s) for s in re.findall(STRING, body)]


def _find(pattern, text, flags=0):
    return re.search(pattern, text, flags)


def _list_attr(name: str, text: str) -> tuple[list[str], int] | None:
    m = re.search(rf"\b{name}\s*=\s*(?:\(oldAttrs\.{name} or \[ \]\) \+\+ )?\[(.*?)\];", text, re.S)
    if not m:
        return None
    return _strings(m.group(1)), _line_of(text, m.start())


PYTHON_BY_ATTR = {attr: version for version, attr in P.PYTHON_PACKAGES.items()}
LIBRARY_BY_ATTR = {attr: lib for lib, attr in P.LIBRARY_ATTRS.items()}
BLAS_BY_PROVIDER = {b.provider: key for key, b in P.BLAS.items()}


def parse_recipe(text: str) -> RecipeFacts:
    check_brackets(text)
    m = _find(r"^\s*pname\s*=\s*" + STRING + r"\s*;", text, re.M)
    if not m:
        raise ParseError(1, 'no `pname = "...";` attribute, so the variant cannot be named')
    pname, pname_line = unescape(m.group(1)), _line_of(text, m.start())
    in_m = _find(r"^in\b", text, re.M)
    if not in_m:
        raise ParseError(len(text.splitlines()) or 1, "no `let ... in` expression")
    body = text[in_m.end() :]
    body_offset = _line_of(text, in_m.end()) - 1

    m = _find(r"\.(python\d*Packages)\.(torch|pytorch|torchvision|torchaudio)\b", body)
    if not m:
        raise ParseError(
            body_offset + 1,
            "no python<NN>Packages.<torch|torchvision|torchaudio> derivation after `in`",
        )
    py_attr, lib_attr = m.groups()
    if lib_attr == "pytorch":
        lib_attr = "torch"
    if py_attr in PYTHON_BY_ATTR:
        python_version = PYTHON_BY_ATTR[py_attr]
    else:
        digits = re.fullmatch(r"python(\d)(\d+)Packages", py_attr)
        if not digits:
            raise ParseError(
                body_offset + _line_of(body, m.start()), f"{py_attr} names no Python version"
            )
        python_version = f"{digits.group(1)}.{digits.group(2)}"

    facts = RecipeFacts(
        pname=pname,
        pname_line=pname_line,
        library=LIBRARY_BY_ATTR[lib_attr],
        python_version=python_version,
        backend="cpu",
    )

    m = _find(r"\bgpuArchNum\s*=\s*\"(\d+)\"", text)
    if m:
        facts.backend = "cuda"
        facts.sm = f"sm{m.group(1)}"
        sm_m = _find(r"\bgpuArchSM\s*=\s*\"sm_(\d+)\"", text)
        if sm_m and sm_m.group(1) != m.group(1):
            raise ParseError(
                _line_of(text, sm_m.start()),
                f"gpuArchSM sm_{sm_m.group(1)} contradicts gpuArchNum {m.group(1)}",
            )
        cuda_m = _find(r"cudaPackages\s*=\s*final\.cudaPackages_(\d+)_(\d+)", text)
        if not cuda_m:
            raise ParseError(
                _line_of(text, m.start()),
                "a CUDA recipe without the `cudaPackages = final.cudaPackages_<M>_<m>` overlay",
            )
        facts.cuda_version = f"{int(cuda_m.group(1))}.{int(cuda_m.group(2))}"

    m = _find(r"\bcpuFlags\s*=\s*\[(.*?)\];", text, re.S)
    if m:
        facts.cpu_flags = _strings(m.group(1))

    url_m = _find(
        r"url\s*=\s*\"https://github\.com/NixOS/nixpkgs/archive/([0-9a-f]+)\.tar\.gz\"", text
    )
    if url_m:
        facts.nixpkgs_pin = url_m.group(1)
    elif not _find(r"import\s+pkgs\.path\b", text):
        raise ParseError(
            1, "no nixpkgs source: neither a fetchTarball of NixOS/nixpkgs nor `import pkgs.path`"
        )

    plat = _list_attr("platforms", body)
    if not plat or not plat[0]:
        raise ParseError(body_offset + 1, "no `platforms = [ ... ];` in meta")
    facts.platforms = plat[0]

    m = _find(r"\bblasProvider\s*=\s*" + STRING, body)
    if not m:
        raise ParseError(body_offset + 1, "no passthru.blasProvider")
    provider = unescape(m.group(1))
    if provider not in BLAS_BY_PROVIDER:
        raise ParseError(
            body_offset + _line_of(body, m.start()), f"unknown blasProvider {provider!r}"
        )
    facts.blas = BLAS_BY_PROVIDER[provider]

    m = _find(r"\bcpuISA\s*=\s*(?:" + STRING + r"|null)\s*;", body)
    facts.cpu_isa = unescape(m.group(1)) if m and m.group(1) is not None else ""
    if _find(r"\bgpuArch\s*=\s*\"mps\"", body) or facts.platforms == ["aarch64-darwin"]:
        if facts.backend == "cuda":
            raise ParseError(pname_line, "a recipe with gpuArchNum cannot target Apple MPS")
        facts.backend = "mps"

    disabled = _list_attr("disabledFeatures", body)
    facts.disabled_features = disabled[0] if disabled else []
    facts.switched_off_env = set(re.findall(r"export (USE_[A-Z_]+)=0\b", text))
    own_cmake = _list_attr("cmakeFlags", body[body.find("pname") :] if "pname" in body else body)
    facts.extra_cmake_flags = own_cmake[0] if own_cmake else []

    m = _find(r"echo (\d+) > \$out/\.metadata-rev", body)
    if not m:
        raise ParseError(
            body_offset + 1, "no `.metadata-rev` postInstall (echo N > $out/.metadata-rev)"
        )
    facts.metadata_rev = int(m.group(1))

    notes = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        if line.startswith("# Use case: "):
            facts.use_case = line[len("# Use case: ") :]
        elif line == "# Note:" or line.startswith("# Note: "):
            notes.append(line[len("# Note: ") :])
        elif line.startswith("# Built against: "):
            parts = line[len("# Built against: ") :].split()
            if len(parts) != 3:
                raise ParseError(
                    text[: text.find(line)].count("\n") + 1,
                    "`# Built against:` needs <repository> <branch> <pname>",
                )
            facts.built_against = tuple(parts)
    facts.notes = "\n".join(notes)
    m = _find(r"import\s+\./([A-Za-z0-9_.-]+)\.nix\b", text)
    if m:
        facts.imports = m.group(1)
    return facts
