"""The catalogue's vocabulary: the one place libraries, repositories, backends, platforms,
recipe forms and the ISA order are declared.

Plain Python with no Django import, so the models (their `choices`), the seed loader, the
importer, the exporter, the wizard engine and the commands all read the same tables. A new
repository layout or recipe form is a change here, not a hunt through modules.
"""

from __future__ import annotations

from dataclasses import dataclass


def choices(table) -> list[tuple[str, str]]:
    """Django `choices` from a {key: record-with-.label} table, in declaration order."""
    return [(key, record.label) for key, record in table.items()]


# ---------------------------------------------------------------- libraries


@dataclass(frozen=True)
class Library:
    label: str  # how pages and recipe descriptions name it
    attr: str  # its attribute in a nixpkgs Python package set
    aliases: tuple[str, ...] = ()  # older attribute names that mean the same package


LIBRARIES = {
    "pytorch": Library("PyTorch", "torch", aliases=("pytorch",)),
    "torchvision": Library("TorchVision", "torchvision"),
    "torchaudio": Library("TorchAudio", "torchaudio"),
}
# nixpkgs attribute (or alias) -> library key
LIBRARY_BY_ATTR = {attr: key for key, lib in LIBRARIES.items() for attr in (lib.attr, *lib.aliases)}


# ---------------------------------------------------------------- repositories

# Where a build repository keeps its recipes (one `<pname>.nix` each).
PKGS_DIR = ".flox/pkgs"

# How a repository's torchvision / torchaudio recipes get their PyTorch (RECIPE_FORMS below).
COMPANION_SIBLING = "sibling"  # `import ./pytorch-….nix {}` from the same .flox/pkgs
COMPANION_INLINE = "inline"  # a custom PyTorch built inside the same recipe


@dataclass(frozen=True)
class Repository:
    label: str
    libraries: tuple[str, ...]  # what its recipes build
    primary_library: str  # the library its README is about
    companion_form: str  # how new companion recipes are rendered
    url: str  # clone URL


REPOSITORIES = {
    "build-pytorch": Repository(
        "build-pytorch",
        ("pytorch", "torchvision", "torchaudio"),
        "pytorch",
        COMPANION_SIBLING,
        "https://github.com/barstoolbluz/build-pytorch",
    ),
    "build-torchvision": Repository(
        "build-torchvision",
        ("torchvision",),
        "torchvision",
        COMPANION_INLINE,
        "https://github.com/barstoolbluz/build-torchvision",
    ),
    "build-torchaudio": Repository(
        "build-torchaudio",
        ("torchaudio",),
        "torchaudio",
        COMPANION_INLINE,
        "https://github.com/barstoolbluz/build-torchaudio",
    ),
}
# The repository whose recipes a companion's remote PyTorch comes from.
PYTORCH_REPOSITORY = "build-pytorch"


# ---------------------------------------------------------------- platforms and backends


@dataclass(frozen=True)
class CpuArch:
    label: str
    linux_platform: str
    description: str  # in a recipe's longDescription ("- CPU: x86-64 with AVX2 …")


CPU_ARCHES = {
    "x86_64": CpuArch("x86_64", "x86_64-linux", "x86-64"),
    "aarch64": CpuArch("aarch64", "aarch64-linux", "AArch64"),
}


@dataclass(frozen=True)
class Platform:
    label: str
    os: str  # linux | darwin
    arch: str  # a CPU_ARCHES key


PLATFORMS = {
    "x86_64-linux": Platform("x86_64-linux", "linux", "x86_64"),
    "aarch64-linux": Platform("aarch64-linux", "linux", "aarch64"),
    "aarch64-darwin": Platform("aarch64-darwin", "darwin", "aarch64"),
}


@dataclass(frozen=True)
class Blas:
    label: str
    provider: str  # passthru.blasProvider in the recipes


BLAS = {
    "cublas": Blas("cuBLAS (OpenBLAS host-side)", "cublas"),
    "openblas": Blas("OpenBLAS", "openblas"),
    "mkl": Blas("Intel MKL", "mkl"),
    "veclib": Blas("vecLib (Accelerate)", "veclib"),
}
BLAS_BY_PROVIDER = {b.provider: key for key, b in BLAS.items()}


@dataclass(frozen=True)
class Backend:
    label: str
    blas: tuple[str, ...]  # BLAS keys a variant of this backend may use; the first is the default
    platforms: tuple[str, ...]  # PLATFORMS keys it can target


BACKENDS = {
    "cuda": Backend("CUDA", ("cublas",), ("x86_64-linux", "aarch64-linux")),
    "cpu": Backend("CPU only", ("openblas", "mkl"), ("x86_64-linux", "aarch64-linux")),
    "mps": Backend("Apple MPS", ("veclib",), ("aarch64-darwin",)),
}


# ---------------------------------------------------------------- CPU instruction sets

# Oldest hardware first within each architecture; the wizard walks it newest-first.
ISA_ORDER = {
    "x86_64": ("avx", "avx2", "avx512", "avx512bf16", "avx512vnni"),
    "aarch64": ("armv8_2", "armv9"),
}
ISA_ARCH = {slug: arch for arch, slugs in ISA_ORDER.items() for slug in slugs}


# ---------------------------------------------------------------- recipe forms


@dataclass(frozen=True)
class RecipeForm:
    label: str
    library: str  # "pytorch" or "companion" (torchvision / torchaudio)
    pinned: bool  # imports a fetchTarball'd nixpkgs commit (False: a callPackage function)
    pytorch: str = ""  # for companions: inline | sibling | remote


RECIPE_FORMS = {
    "pytorch-pinned": RecipeForm("PyTorch on a pinned nixpkgs", "pytorch", True),
    "pytorch-callpackage": RecipeForm(
        "PyTorch as an unpinned callPackage function", "pytorch", False
    ),
    "companion-inline": RecipeForm(
        "Companion building its own PyTorch inline", "companion", True, "inline"
    ),
    "companion-sibling": RecipeForm(
        "Companion importing a sibling PyTorch recipe", "companion", True, "sibling"
    ),
    "companion-remote": RecipeForm(
        "Companion fetching its PyTorch recipe from a build-pytorch commit",
        "companion",
        True,
        "remote",
    ),
    "companion-callpackage": RecipeForm(
        "Companion as an unpinned callPackage function (inline PyTorch)",
        "companion",
        False,
        "inline",
    ),
}


# ---------------------------------------------------------------- statuses


@dataclass(frozen=True)
class Status:
    label: str


# A build record is one of these (catalog.models.BuildRecord); a variant any of STATUSES.
BUILD_STATUSES = ("building", "built", "failed")
STATUSES = {
    "planned": Status("Planned"),
    "recipe": Status("Recipe"),
    "building": Status("Building"),
    "built": Status("Built"),
    "failed": Status("Failed"),
    "published": Status("Published"),
}


# ---------------------------------------------------------------- switchable libraries


@dataclass(frozen=True)
class Feature:
    label: str
    switch: str  # the build variable that turns it off (`export USE_FBGEMM=0`)
    needs_cuda: bool = False  # only a CUDA build has it to switch off


# Libraries a recipe may switch off (Variant.disabled_features holds the keys), in display order.
FEATURES = {
    "cudnn": Feature("cuDNN", "USE_CUDNN", needs_cuda=True),
    "fbgemm": Feature("FBGEMM", "USE_FBGEMM"),
    "mkldnn": Feature("MKLDNN", "USE_MKLDNN"),
    "nnpack": Feature("NNPACK", "USE_NNPACK"),
}
FEATURE_BY_SWITCH = {f.switch: key for key, f in FEATURES.items()}


# ---------------------------------------------------------------- Nix store and binary caches

NIX_STORE_DIR = "/nix/store"
# Nix's base-32 alphabet: digits and lower-case letters without e, o, u and t.
NIX_BASE32 = "0123456789abcdfghijklmnpqrsvwxyz"
NIX_HASH_LENGTH = 32
# A store path's name: letters, digits and +-._?= , not starting with a dot; at most 211.
NIX_NAME_CHARS = r"A-Za-z0-9+\-._?="
NIX_NAME_MAX = 211
# The binary-cache protocol: GET {cache}/{hash}.narinfo answers 200 with these keys, 404 absent.
NARINFO_SUFFIX = ".narinfo"
NARINFO_KEYS = ("StorePath", "URL", "Compression", "FileSize", "NarSize", "References")
