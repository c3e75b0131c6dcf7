"""The one place that composes and parses package names.

Names follow the build repos' convention (RECIPE_TEMPLATE.md):

    {library}-python{PY}-cuda{MAJOR}_{MINOR}-{sm}-{isa}   CUDA builds
    {library}-python{PY}-cpu-{isa}                         CPU-only builds
    {library}-python{PY}-darwin-mps                        Apple Silicon (MPS)

Export, import, pages, the wizard and the audit all go through this module, so a name means
the same thing everywhere. Pure Python: no Django import.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from catalog import vocabulary

LIBRARIES = tuple(vocabulary.LIBRARIES)
BACKENDS = tuple(vocabulary.BACKENDS)

_NAME_RE = re.compile(
    rf"^(?P<library>{'|'.join(LIBRARIES)})"
    r"-python(?P<py>3\d{1,2})"
    r"-(?:"
    r"cuda(?P<cuda_major>\d{1,2})_(?P<cuda_minor>\d{1,2})-(?P<sm>sm\d{2,3})-(?P<isa_gpu>[a-z0-9_]+)"
    r"|cpu-(?P<isa_cpu>[a-z0-9_]+)"
    r"|(?P<mps>darwin-mps)"
    r")$"
)


class InvalidName(ValueError):
    """A package name (or a part of one) that does not follow the convention."""


@dataclass(frozen=True)
class NameParts:
    library: str
    python_version: str  # "3.13"
    backend: str  # cuda | cpu | mps
    cuda_version: str = ""  # "12.8" for CUDA builds, "" otherwise
    sm: str = ""  # "sm90" for CUDA builds, "" otherwise
    isa: str = ""  # "avx512", "" for MPS


def python_tag(python_version: str) -> str:
    """'3.13' -> 'python313'."""
    major, minor = _split_version(python_version, "Python")
    return f"python{major}{minor}"


def cuda_tag(cuda_version: str) -> str:
    """'12.8' (or '12.8.1') -> 'cuda12_8'."""
    major, minor = _split_version(cuda_version, "CUDA")
    return f"cuda{major}_{minor}"


def cuda_major_minor(cuda_version: str) -> str:
    """'12.9.1' -> '12.9'."""
    major, minor = _split_version(cuda_version, "CUDA")
    return f"{major}.{minor}"


def _split_version(version: str, what: str) -> tuple[int, int]:
    parts = str(version).strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        raise InvalidName(f"{what} version {version!r} is not of the form MAJOR.MINOR")
    return int(parts[0]), int(parts[1])


def compose(
    library: str,
    python_version: str,
    backend: str,
    cuda_version: str = "",
    sm: str = "",
    isa: str = "",
) -> str:
    """Compose a package name from a variant's fields."""
    if library not in LIBRARIES:
        raise InvalidName(f"unknown library {library!r}; expected one of {', '.join(LIBRARIES)}")
    prefix = f"{library}-{python_tag(python_version)}"
    if backend == "cuda":
        if not (cuda_version and sm and isa):
            raise InvalidName("a CUDA build needs a CUDA version, a GPU architecture and a CPU ISA")
        return f"{prefix}-{cuda_tag(cuda_version)}-{sm}-{isa}"
    if backend == "cpu":
        if not isa:
            raise InvalidName("a CPU build needs a CPU ISA")
        return f"{prefix}-cpu-{isa}"
    if backend == "mps":
        return f"{prefix}-darwin-mps"
    raise InvalidName(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")


def parse(pname: str) -> NameParts:
    """Parse a package name back into its parts; raises InvalidName with a reason."""
    match = _NAME_RE.match(pname or "")
    if not match:
        raise InvalidName(
            f"{pname!r} does not follow "
            "<library>-python<NN>-(cuda<M>_<m>-<sm>-<isa>|cpu-<isa>|darwin-mps)"
        )
    py = match["py"]
    python_version = f"{py[0]}.{py[1:]}"
    if match["mps"]:
        return NameParts(match["library"], python_version, "mps")
    if match["isa_cpu"]:
        return NameParts(match["library"], python_version, "cpu", isa=match["isa_cpu"])
    return NameParts(
        match["library"],
        python_version,
        "cuda",
        cuda_version=f"{int(match['cuda_major'])}.{int(match['cuda_minor'])}",
        sm=match["sm"],
        isa=match["isa_gpu"],
    )


def compose_parts(parts: NameParts) -> str:
    return compose(
        parts.library, parts.python_version, parts.backend, parts.cuda_version, parts.sm, parts.isa
    )


def sm_number(sm: str) -> str:
    """'sm90' -> '90' (gpuArchNum in the recipes)."""
    if not re.fullmatch(r"sm\d{2,3}", sm or ""):
        raise InvalidName(f"{sm!r} is not a GPU architecture slug like 'sm90'")
    return sm[2:]


def sm_underscore(sm: str) -> str:
    """'sm90' -> 'sm_90': the seeds' (wrong) spelling of a GPU target, kept to recognise it."""
    return f"sm_{sm_number(sm)}"


# A TORCH_CUDA_ARCH_LIST entry: a compute capability in dot notation, optionally with an
# architecture-specific suffix (`a`, or `f` for family-portable code) and/or `+PTX`. This is
# what PyTorch's extension builder and CMake arch selection accept; "sm_90" is refused there.
_GPU_TARGET_RE = re.compile(r"^(?P<major>\d{1,2})\.(?P<minor>\d)(?P<suffix>[af]?)(?P<ptx>\+PTX)?$")
_SM_TARGET_RE = re.compile(r"^sm_(?P<number>\d{2,3})[af]?$")


def gpu_target(sm: str) -> str:
    """'sm90' -> '9.0': the gpuTargets / TORCH_CUDA_ARCH_LIST entry for an architecture."""
    return compute_capability_from_sm(sm)


def gpu_target_sm(entry: str) -> str:
    """The architecture a GPU target names: '9.0' / '9.0a' / '9.0+PTX' -> 'sm90'.

    Raises InvalidName, with the reason, for anything PyTorch would refuse, including the
    'sm_90' spelling (use `gpu_target_sm_lenient` to read that spelling anyway)."""
    match = _GPU_TARGET_RE.match(entry or "")
    if not match:
        hint = (
            ' (write compute capabilities in dot notation, e.g. "9.0")'
            if _SM_TARGET_RE.match(entry or "")
            else ""
        )
        raise InvalidName(f"{entry!r} is not a TORCH_CUDA_ARCH_LIST entry{hint}")
    return f"sm{int(match['major'])}{match['minor']}"


def gpu_target_sm_lenient(entry: str) -> str:
    """Like gpu_target_sm, but also reads the 'sm_90' spelling; '' when neither form."""
    try:
        return gpu_target_sm(entry)
    except InvalidName:
        match = _SM_TARGET_RE.match(entry or "")
        return f"sm{match['number']}" if match else ""


def sm_from_compute_capability(cc: str) -> str:
    """'9.0' -> 'sm90', '12.1' -> 'sm121'."""
    major, minor = _split_version(cc, "compute capability")
    return f"sm{major}{minor}"


def compute_capability_from_sm(sm: str) -> str:
    """'sm90' -> '9.0', 'sm121' -> '12.1'."""
    number = sm_number(sm)
    return f"{number[:-1]}.{number[-1]}"


# Repository, branch and pname become paths in a checkout (.flox/pkgs/<pname>.nix, an export's
# <target>/<repository>/<branch>/): no separators, no leading dot, nothing a shell or a path
# would read specially.
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,119}")


def unsafe_name_reason(name: str) -> str:
    """Why `name` cannot be a repository, branch or pname; "" when it can."""
    if SAFE_NAME.fullmatch(name or ""):
        return ""
    return (
        f"{name!r} is not a safe name: use letters, digits, '.', '_' and '-', "
        "starting with a letter or digit (at most 120 characters)."
    )


# The nixpkgs CUDA package sets a recipe selects: `cudaPackages_12_8`, or by major only,
# `cudaPackages_13`.
_CUDA_SET_RE = re.compile(r"cudaPackages_(\d+)(?:_(\d+))?")


def cuda_set_parts(attr: str) -> tuple[int, int | None] | None:
    """'cudaPackages_12_8' -> (12, 8); 'cudaPackages_13' -> (13, None); None for anything else."""
    match = _CUDA_SET_RE.fullmatch(attr or "")
    if not match:
        return None
    return int(match[1]), int(match[2]) if match[2] else None


def cuda_set_attr(cuda_version: str) -> str:
    """'12.9' -> 'cudaPackages_12_9', the set a recipe's overlay makes its `cudaPackages`."""
    major, _, minor = cuda_version.partition(".")
    return f"cudaPackages_{major}_{minor}"


def recipe_path(pname: str) -> str:
    """Where a variant's recipe lives inside a build repo checkout."""
    return f"{vocabulary.PKGS_DIR}/{pname}.nix"


MAX_RECIPE_PATH = 255  # Variant.recipe_path holds this many


def recipe_path_problem(path: str) -> str:
    """Why PATH (relative to a checkout's root) cannot be a recipe's: every part below
    .flox/pkgs, and the file name without .nix, must be a safe name (no "..", no link to
    elsewhere, no control character); "" when it can."""
    parts = path.split("/")
    if parts[:2] != [".flox", "pkgs"] or len(parts) < 3 or not parts[-1].endswith(".nix"):
        return "not a .nix file under .flox/pkgs"
    names = [*parts[2:-1], parts[-1].removesuffix(".nix")]
    if len(path) > MAX_RECIPE_PATH:
        return f"the path is over {MAX_RECIPE_PATH} characters"
    if any(not SAFE_NAME.fullmatch(name) for name in names):
        return (
            "not a safe file name: each part must be letters, digits, '.', '_' and '-', "
            "starting with a letter or digit (at most 120 characters)"
        )
    return ""


def shown_path(path: str) -> str:
    """A path as a report line may show it: quoted and escaped unless it is plain, so a
    newline or an undecodable byte in a file name cannot forge lines or stop the output."""
    plain = all(c.isprintable() and c.isascii() for c in path) and path.strip() == path
    return path if plain else ascii(path)


def version_key(version: str) -> tuple[int, ...]:
    """'12.9.1' -> (12, 9, 1) for ordering and comparing versions; non-numeric parts stop it."""
    key = []
    for part in str(version).strip().split("."):
        if not (part.isascii() and part.isdigit()):
            break
        key.append(int(part))
    return tuple(key)


_LIBRARY_RELEASE_RE = re.compile(rf"^({'|'.join(LIBRARIES)})\d+-")


def parse_lenient(name: str) -> NameParts | None:
    """Parse a name as the build repositories write it, or None: also reads a release number
    after the library (`pytorch210-python313-…`) and dotted ISA slugs (`armv8.2`)."""
    cleaned = _LIBRARY_RELEASE_RE.sub(r"\1-", name or "").replace(".", "_")
    try:
        return parse(cleaned)
    except InvalidName:
        return None


def isa_slug(written: str) -> str:
    """An ISA as recipes and names write it -> its slug: 'armv8.2' -> 'armv8_2'."""
    return (written or "").strip().lower().replace(".", "_").replace("-", "_")


# --- Nix store paths ---------------------------------------------------------------------------
_STORE_PATH_RE = re.compile(
    rf"^{re.escape(vocabulary.NIX_STORE_DIR)}/"
    rf"(?P<hash>[{vocabulary.NIX_BASE32}]{{{vocabulary.NIX_HASH_LENGTH}}})-"
    rf"(?P<name>[{vocabulary.NIX_NAME_CHARS}]{{1,{vocabulary.NIX_NAME_MAX}}})$"
)


@dataclass(frozen=True)
class StorePath:
    hash: str
    name: str


def parse_store_path(path: str) -> StorePath:
    """`/nix/store/<32 base-32 characters>-<name>` split into hash and name; InvalidName if not."""
    match = _STORE_PATH_RE.match(path) if isinstance(path, str) else None
    if not match or match["name"].startswith("."):
        raise InvalidName(
            f"{str(path)[:80]!r} is not a Nix store path: "
            f"{vocabulary.NIX_STORE_DIR}/<{vocabulary.NIX_HASH_LENGTH} base-32 characters>-<name>."
        )
    return StorePath(match["hash"], match["name"])


def narinfo_url(cache_url: str, store_hash: str) -> str:
    """Where a binary cache answers for one store path: `{cache}/{hash}.narinfo`."""
    return f"{cache_url.rstrip('/')}/{store_hash}{vocabulary.NARINFO_SUFFIX}"


GIT_HASH_RE = re.compile(r"[0-9a-fA-F]{4,40}")


# -- Names people write for a GPU architecture or a CPU ISA -----------------------------------
# Every door (the wizard, /api/recommend, which-variant, the matrix's filters, the selector)
# reads a written GPU or ISA through these, so a name the site shows anywhere is accepted
# everywhere: 'sm90', 'SM90', 'sm_90', '9.0', 'Hopper', 'H100'; 'avx512', 'AVX-512'.


@dataclass(frozen=True)
class Named:
    """A slug and the names the site shows for it (for 'sm90': 'Hopper', 'H100', …)."""

    slug: str
    names: tuple[str, ...] = ()


_SM_WRITTEN = re.compile(r"sm[_ ]?(\d{2,3})[af]?")
_CC_WRITTEN = re.compile(r"(\d{1,2})\.(\d)[af]?")


def name_key(text: str) -> str:
    """What written names are compared by: case, spaces, '-', '_' and '.' do not count."""
    return re.sub(r"[\s\-_.]+", "", text or "").lower()


def resolve_name(text: str, known: Iterable[Named]) -> tuple[str, ...]:
    """The slugs whose slug or one of whose names is `text`, as written anywhere; () if none.
    Several when a name is shared (the family 'Blackwell' names four GPU architectures)."""
    key = name_key(text)
    if not key:
        return ()
    return tuple(n.slug for n in known if key in {name_key(s) for s in (n.slug, *n.names)})


def resolve_gpu(text: str, known: Iterable[Named]) -> tuple[str, ...]:
    """The GPU architectures (SM slugs) a written GPU stands for: an SM in any spelling
    ('sm90', 'SM90', 'sm_90', 'sm_90a'), a compute capability ('9.0') — these stand for
    themselves, catalogued or not — or a family, label, GPU model or alias ('Hopper', 'H100')."""
    written = (text or "").strip().lower()
    sm = _SM_WRITTEN.fullmatch(written)
    if sm:
        return (f"sm{sm[1]}",)
    cc = _CC_WRITTEN.fullmatch(written)
    if cc:
        return (f"sm{int(cc[1])}{cc[2]}",)
    return resolve_name(written, known)


# A branch is written one way in links, forms, the selector and the API: "<repository>/<branch>".
# Older spellings ("build-pytorch:main") are read, and a bare branch name is its repository's
# when only one repository has it.
BRANCH_SEPARATOR = "/"
OLD_BRANCH_SEPARATORS = (":",)


def branch_key(repository: str, branch: str) -> str:
    return f"{repository}{BRANCH_SEPARATOR}{branch}"


def canonical_branch(value: str, known: Iterable[str] = ()) -> str:
    """`value` written as "<repository>/<branch>": an old separator replaced, a bare name
    qualified when exactly one of the `known` keys has it; otherwise `value` unchanged."""
    for old in OLD_BRANCH_SEPARATORS:
        repository, sep, branch = value.partition(old)
        if sep and repository and branch and BRANCH_SEPARATOR not in value:
            return branch_key(repository, branch)
    if BRANCH_SEPARATOR not in value:
        owners = [k for k in known if k.rpartition(BRANCH_SEPARATOR)[2] == value]
        if len(owners) == 1:
            return owners[0]
    return value
