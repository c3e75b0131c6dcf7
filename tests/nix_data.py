"""Where the Nix package's tests find recipes: the form fixtures written for them, and the
real repositories' recipes in ../shared/real-recipes (not shipped: tests skip, saying so)."""

from pathlib import Path

import pytest

FORMS = Path(__file__).parent / "data" / "recipes" / "forms"
REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "real-recipes"
BUILD_PYTORCH = REAL / "build-pytorch" / "pytorch-2.8-python312" / ".flox" / "pkgs"
BUILD_TORCHVISION = REAL / "build-torchvision" / "cuda-12_9" / ".flox" / "pkgs"
EXAMPLES = REAL / "examples"


def need_real() -> None:
    if not REAL.is_dir():
        pytest.skip(f"{REAL} is absent: the real recipes are not shipped with the project")


def real_paths() -> list[Path]:
    need_real()
    return sorted(REAL.rglob("*.nix"))


def real_text(path: Path) -> str:
    need_real()
    return path.read_text(encoding="utf-8")


def fixture_text(name: str) -> str:
    return (FORMS / name).read_text(encoding="utf-8")
