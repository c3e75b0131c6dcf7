"""What export writes for a recipe read from a repository: its own text, edited only where the
catalogue now says something else. Pure functions over plain values (no Django).

`recipe_text(stored, imported, wanted)` returns the stored text unchanged when every wanted
field equals what was imported, and otherwise `edit_recipe` with exactly the changed fields, so
one changed value is one changed line and every other byte is the maintainers'.

`wanted_facts(...)` turns a variant's catalogue values into those fields. A catalogue field with
no place of its own in a recipe is folded into the as-written field it decides:
- CPU ISA: when the ISA differs from the one the written `cpuFlags` name (see `isa_of_flags`),
  the wanted flags are the new ISA's compiler flags; otherwise the written flags as stored.
- GPU architecture: when it differs from the one the written GPU targets name, the wanted
  targets are its compute capability (`"9.0"`), and a recipe's `gpuArchNum` follows.
- CUDA version: when it differs from the written package set's (`cudaPackages_12_8`), the
  wanted set is the new version's.
- platform: when the written `meta.platforms` do not list it, the wanted list is that platform.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from catalog import naming
from catalog.recipes.nix.edit import edit_recipe
from catalog.recipes.nix.errors import EditError, RecipeError

# The fields an export compares and may edit, in the order edits are applied.
EDITABLE = (
    "pname",
    "nixpkgs_pin",
    "cuda_packages_attr",
    "python_attr",
    "gpu_targets",
    "gpu_arch_num",
    "cpu_flags",
    "platforms",
    "torch_version_override",
    "metadata_rev",
    "extra_cmake_flags",
    "passthru",
    "disabled_features",  # read from the recipe's scripts: a change is refused (edit by hand)
)


@dataclass(frozen=True)
class IsaFlags:
    """One CPU ISA as the engine needs it: slug, architecture, rank and compiler flags."""

    slug: str
    arch: str
    rank: int
    flags: tuple[str, ...]


def changed_fields(imported: Mapping[str, object], wanted: Mapping[str, object]) -> dict:
    """The wanted fields whose value differs from the imported one (a missing key is "")."""
    changes = {}
    for name in EDITABLE:
        if name in wanted and _normal(name, wanted[name]) != _normal(name, imported.get(name)):
            changes[name] = wanted[name]
    return changes


def _normal(name: str, value: object) -> object:
    if name == "disabled_features":
        return sorted(value or [])
    if name in ("gpu_targets", "cpu_flags", "platforms", "extra_cmake_flags"):
        return list(value or [])
    if name == "passthru":
        return dict(value or {})
    if name == "metadata_rev":
        return value
    return value or ""


def recipe_text(
    stored_text: str, imported_facts: Mapping[str, object], wanted_facts: Mapping[str, object]
) -> str:
    """The stored text with exactly the changed fields edited in place.

    Raises EditError naming the field when a change cannot be made in place (the field must
    then be edited by hand), RecipeError when the stored text is not a readable recipe."""
    changes = changed_fields(imported_facts, wanted_facts)
    if not changes:
        return stored_text
    if "disabled_features" in changes:
        raise EditError(
            "disabled_features",
            "switched-off features are read from the recipe's build scripts "
            f"(now {', '.join(changes['disabled_features']) or 'none'}); change them by hand",
        )
    try:
        return edit_recipe(stored_text, changes)
    except RecipeError as exc:
        raise EditError(
            next(iter(changes)), f"the stored recipe no longer reads ({exc}); re-import it"
        ) from exc


# ---------------------------------------------------------------- catalogue -> wanted fields


def isa_of_flags(flags: Iterable[str], isas: Iterable[IsaFlags]) -> str:
    """The ISA written flags name: the one whose flags they are exactly, else the highest-ranked
    one whose flags they all contain; "" when none (unknown or no flags)."""
    written = set(flags)
    if not written:
        return ""
    best: IsaFlags | None = None
    for isa in isas:
        if set(isa.flags) == written:
            return isa.slug
        if isa.flags and set(isa.flags) <= written and (best is None or isa.rank > best.rank):
            best = isa
    return best.slug if best else ""


def sm_of_targets(targets: Iterable[str]) -> str:
    """The architecture written GPU targets name ("9.0", "sm_90", "9.0+PTX"); "" when they
    name none or several."""
    sms = {naming.gpu_target_sm_lenient(t) for t in targets}
    return sms.pop() if len(sms) == 1 and "" not in sms else ""


def cuda_of_set(attr: str) -> str:
    """'cudaPackages_12_8' -> '12.8', 'cudaPackages_13' -> '13'; '' for anything else."""
    parts = naming.cuda_set_parts(attr)
    if parts is None:
        return ""
    major, minor = parts
    return f"{major}.{minor}" if minor is not None else str(major)


@dataclass(frozen=True)
class CatalogueValues:
    """A variant's catalogue fields that decide its recipe (plain values)."""

    pname: str
    backend: str
    cuda_version: str
    sm: str  # "" without a GPU architecture
    isa: str  # "" without a CPU ISA
    platform: str
    metadata_rev: int | None
    disabled_features: tuple[str, ...]
    extra_cmake_flags: tuple[str, ...]
    # As written (kept from the import, editable in the admin):
    nixpkgs_pin: str
    cuda_packages_attr: str
    python_attr: str
    gpu_targets: tuple[str, ...]
    cpu_flags: tuple[str, ...]
    platforms: tuple[str, ...]
    torch_version_override: str
    passthru: Mapping[str, str | None]


def wanted_facts(
    values: CatalogueValues, imported: Mapping[str, object], isas: Iterable[IsaFlags]
) -> dict[str, object]:
    """The recipe fields the catalogue wants, for comparison with `imported` (see the module
    docstring for how the ISA, architecture, CUDA version and platform map onto them)."""
    isas = list(isas)
    wanted: dict[str, object] = {
        "pname": values.pname,
        "nixpkgs_pin": values.nixpkgs_pin,
        "cuda_packages_attr": values.cuda_packages_attr,
        "python_attr": values.python_attr,
        "gpu_targets": list(values.gpu_targets),
        "cpu_flags": list(values.cpu_flags),
        "platforms": list(values.platforms),
        "torch_version_override": values.torch_version_override,
        "metadata_rev": values.metadata_rev,
        "extra_cmake_flags": list(values.extra_cmake_flags),
        "passthru": dict(values.passthru),
        "disabled_features": sorted(values.disabled_features),
    }
    written_isa = isa_of_flags(values.cpu_flags, isas)
    if values.isa and written_isa and written_isa != values.isa:
        wanted["cpu_flags"] = list(next(i.flags for i in isas if i.slug == values.isa))
    written_sm = sm_of_targets(values.gpu_targets)
    if values.sm and written_sm and written_sm != values.sm:
        wanted["gpu_targets"] = [naming.gpu_target(values.sm)]
        if imported.get("gpu_arch_num"):
            wanted["gpu_arch_num"] = naming.sm_number(values.sm)
    written_cuda = cuda_of_set(values.cuda_packages_attr)
    if values.cuda_version and written_cuda and not _same_cuda(written_cuda, values.cuda_version):
        wanted["cuda_packages_attr"] = naming.cuda_set_attr(values.cuda_version)
    if values.platform and values.platforms and values.platform not in values.platforms:
        wanted["platforms"] = [values.platform]
    return wanted


def _same_cuda(written: str, version: str) -> bool:
    """'13' (a major-only set) matches any 13.x; '12.8' matches only 12.8."""
    if "." not in written:
        return version.split(".")[0] == written
    return written == version
