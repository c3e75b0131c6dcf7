"""Render a variant's `.flox/pkgs/<pname>.nix` recipe from catalogue data (no file I/O).

Families follow the seeds' recipes: a CUDA build is the two-stage override of 001's example
(`.override { cudaSupport; gpuTargets }` then `.overrideAttrs`) on the branch's pinned nixpkgs
as in 003; a CPU build is 002's template (CUDA inputs filtered out, OpenBLAS); Darwin MPS uses
vecLib; companions either import their PyTorch recipe from the same checkout (build-pytorch) or
build a matching custom PyTorch first (build-torchvision, 003). Per-family choices come from
`profiles`.
"""

from __future__ import annotations

import re

from catalog import naming, vocabulary
from catalog.models import DISABLEABLE_FEATURES
from catalog.recipes.nix.facts import PytorchSource, RecipeFacts
from catalog.recipes.nix.syntax import indented, quote

from . import profiles as P
from .recipe_text import CatalogueValues, IsaFlags, recipe_text, wanted_facts

FULL_PIN_RE = re.compile(r"^[0-9a-f]{40}$")
SHORT_PIN_RE = re.compile(r"^[0-9a-f]{7,39}$")


# ---------------------------------------------------------------- escaping


def shell_dq(text: str) -> str:
    """Text placed inside a shell double-quoted string in a build script."""
    return re.sub(r'([\\"$`])', r"\\\1", str(text))


def comment(text: str) -> str:
    """One comment line's text: newlines would end the comment and run into code."""
    return " ".join(str(text).split())


# ---------------------------------------------------------------- descriptions


def first_model(arch) -> str:
    return arch.short_models.split("/")[0].strip()


def description(variant) -> str:
    lib = vocabulary.LIBRARIES[variant.library].label
    if variant.backend == "cuda":
        arch, isa = variant.gpu_arch, variant.cpu_isa
        return (
            f"{lib} for NVIDIA {first_model(arch)} ({arch.sm.upper()}, {arch.label}) + {isa.label}"
        )
    if variant.backend == "cpu":
        return f"{lib} CPU-only build optimized for {variant.cpu_isa.description}"
    return f"{lib} for Apple Silicon (MPS) with vecLib"


def long_description(variant) -> list[str]:
    lib = vocabulary.LIBRARIES[variant.library].label
    blas = P.BLAS[variant.blas]
    family = P.FAMILIES[variant.backend]
    lines = []
    if variant.backend == "cuda":
        arch, isa = variant.gpu_arch, variant.cpu_isa
        models = ", ".join(m.strip() for m in arch.short_models.split("/"))
        lines += [
            f"Custom {lib} build with targeted optimizations:",
            f"- GPU: NVIDIA {arch.name} architecture ({arch.sm.upper()}) - {models}",
            f"- CPU: {_arch_name(isa.arch)} with {isa.label} instruction set",
            f"- CUDA: {variant.cuda_version} with compute capability {arch.compute_capability}",
        ]
    elif variant.backend == "cpu":
        lines += [
            f"Custom {lib} build for CPU-only workloads:",
            f"- GPU: {family.gpu_line}",
            f"- CPU: {variant.cpu_isa.description}",
        ]
    else:
        lines += [
            f"Custom {lib} build for Apple Silicon:",
            f"- GPU: {family.gpu_line}",
            "- CPU: Apple Silicon (M1–M4)",
        ]
    lines.append(f"- BLAS: {blas.long}")
    lines.append(f"- Python: {variant.python_version}")
    disabled = ordered_features(variant.disabled_features)
    if disabled:
        lines.append("- Switched off: " + ", ".join(vocabulary.FEATURES[f].label for f in disabled))
    if variant.depends_on_id:
        lines.append(f"- Built against: {variant.depends_on.pname}")
    if variant.backend == "cpu":
        lines += [
            "",
            "This build is suitable for inference, development, and workloads",
            "that don't require GPU acceleration.",
        ]
    return lines


def ordered_features(features) -> list[str]:
    return [f for f in DISABLEABLE_FEATURES if f in set(features or [])]


# ---------------------------------------------------------------- pieces


def pin_kind(pin: str) -> str:
    if FULL_PIN_RE.match(pin or ""):
        return "full"
    if SHORT_PIN_RE.match(pin or ""):
        return "short"
    return "none"


def nixpkgs_var(branch) -> str:
    return "nixpkgs_env" if pin_kind(branch.nixpkgs_pin) == "none" else "nixpkgs_pinned"


def _versions_phrase(variant) -> str:
    branch = variant.branch
    parts = [f"PyTorch {branch.pytorch_version}"]
    if variant.library == "torchvision" and branch.torchvision_version:
        parts.append(f"TorchVision {branch.torchvision_version}")
    if variant.backend == "cuda":
        parts.append(f"CUDA {variant.cuda_version}")
    return " + ".join(parts)


def nixpkgs_binding(variant) -> list[str]:
    branch = variant.branch
    var = nixpkgs_var(branch)
    kind = pin_kind(branch.nixpkgs_pin)
    cuda = variant.backend == "cuda"
    config = ["allowUnfree = true;"] + (["cudaSupport = true;"] if cuda else [])
    body = ["    config = {"] + [f"      {c}" for c in config] + ["    };"]
    if cuda:
        cuda_set = naming.cuda_set_attr(variant.cuda_version)
        body += [
            "    overlays = [",
            f"      (final: prev: {{ cudaPackages = final.{cuda_set}; }})",
            "    ];",
        ]
    if kind == "none":
        return [
            "  # nixpkgs: the catalogue records no pinned commit for this branch yet (TBD), so the",
            "  # recipe uses the build environment's nixpkgs (pkgs.path) with this configuration.",
            f"  {var} = import pkgs.path {{",
            "    system = pkgs.stdenv.hostPlatform.system;",
            *body,
            "  };",
        ]
    lines = [f"  # Pin nixpkgs for reproducible {_versions_phrase(variant)}"]
    if kind == "short":
        lines += [
            f"  # The catalogue records only the short commit {branch.nixpkgs_pin}; "
            "GitHub resolves it",
            "  # while it stays unambiguous. Record the full commit to make the pin exact.",
        ]
    url = P.NIXPKGS_ARCHIVE.format(pin=branch.nixpkgs_pin)
    return lines + [
        f"  {var} = import (builtins.fetchTarball {{",
        f"    url = {quote(url)};",
        "  }) {",
        *body,
        "  };",
    ]


def target_bindings(variant) -> list[str]:
    lines = []
    if variant.backend == "cuda":
        arch = variant.gpu_arch
        models = ", ".join(m.strip() for m in arch.short_models.split("/"))
        lines += [
            f"  # GPU target: {arch.sm.upper()} ({comment(arch.name)} - {comment(models)})",
            f"  gpuArchNum = {quote(naming.sm_number(arch.sm))};"
            "  # CMAKE_CUDA_ARCHITECTURES (the integer)",
            f"  gpuArchSM = {quote(gpu_targets(variant)[0])};"
            "  # TORCH_CUDA_ARCH_LIST (compute capability)",
            "",
        ]
    if variant.cpu_isa_id:
        isa = variant.cpu_isa
        flags = list(isa.compiler_flags)
        width = max(len(quote(f)) for f in flags)
        lines.append(f"  # CPU optimization: {comment(isa.description)}")
        lines.append("  cpuFlags = [")
        for flag in flags:
            literal = quote(flag)
            note = P.FLAG_COMMENTS.get(flag)
            lines.append(
                f"    {literal.ljust(width)}  # {comment(note)}" if note else f"    {literal}"
            )
        lines += ["  ];", ""]
    return lines


def _env_lines(variant, family) -> list[str]:
    disabled = ordered_features(variant.disabled_features)
    off_env = {vocabulary.FEATURES[f].switch for f in disabled}
    lines = []
    for name, value in family.base_env:
        if name in off_env or P.DEPENDENT_ENV.get(name) in disabled:
            continue
        lines.append(f"export {name}={value}")
    blas = P.BLAS[variant.blas]
    if blas.env:
        lines.append(f"export BLAS={blas.env}")
    if disabled:
        lines.append(
            "# Switched off for this variant: "
            + ", ".join(vocabulary.FEATURES[f].label for f in disabled)
        )
        lines += [f"export {vocabulary.FEATURES[f].switch}=0" for f in disabled]
    return lines


def _flag_exports(variant, nixpkgs_name) -> list[str]:
    if not variant.cpu_isa_id:
        return []
    return [
        f'export CXXFLAGS="${{{nixpkgs_name}.lib.concatStringsSep " " cpuFlags}} $CXXFLAGS"',
        f'export CFLAGS="${{{nixpkgs_name}.lib.concatStringsSep " " cpuFlags}} $CFLAGS"',
    ]


def _sh(text: str) -> str:
    """Catalogue text inside a shell string inside a Nix '' string."""
    return indented(shell_dq(text))


def _banner(variant) -> list[str]:
    lib = vocabulary.LIBRARIES[variant.library].label
    lines = [
        'echo "========================================="',
        f'echo "{lib} Build Configuration"',
    ]
    if variant.backend == "cuda":
        arch = variant.gpu_arch
        lines.append(
            f'echo "GPU Target: ${{gpuArchSM}} ({_sh(arch.label)}: {_sh(arch.short_models)})"'
        )
    elif variant.backend == "mps":
        lines.append('echo "GPU Target: Apple Silicon (MPS)"')
    else:
        lines.append('echo "GPU Target: None (CPU-only build)"')
    if variant.cpu_isa_id:
        lines.append(f'echo "CPU Features: {_sh(variant.cpu_isa.description)}"')
        lines.append('echo "CXXFLAGS: $CXXFLAGS"')
    lines.append('echo "========================================="')
    return lines


def _indented_block(name: str, lines: list[str], pad: str, append_to_old: bool = True) -> list[str]:
    head = f"{pad}{name} = (oldAttrs.{name} or \"\") + ''" if append_to_old else f"{pad}{name} = ''"
    # Lines are Nix code (they may interpolate on purpose); callers escape data with nix_indented.
    body = [f"{pad}  {line}" if line else "" for line in lines]
    return [head, *body, f"{pad}'';"]


def _list(items) -> str:
    return "[ " + " ".join(quote(i) for i in items) + " ]" if items else "[ ]"


def torch_build_attrs(variant, nixpkgs_name, pad, repo_profile, banner: bool) -> list[str]:
    """The attributes that configure a PyTorch build of this variant's hardware."""
    family = P.FAMILIES[variant.backend]
    lines = [
        f"{pad}ninjaFlags = {_list([f'-j{repo_profile.ninja_jobs}'])};",
    ]
    if family.system_features:
        lines.append(f"{pad}requiredSystemFeatures = {_list(family.system_features)};")
    if family.filter_cuda_inputs:
        blas = P.BLAS[variant.blas]
        extra = f" ++ [ {nixpkgs_name}.{blas.attr} ]" if blas.attr else ""
        lib = f"{nixpkgs_name}.lib"
        lines += [
            "",
            f"{pad}# No GPU: drop every CUDA input"
            + (", add the BLAS backend" if blas.attr else ""),
            f"{pad}buildInputs = {lib}.filter"
            f' (p: !({lib}.hasPrefix "cuda" (p.pname or "")))'
            f" (oldAttrs.buildInputs or [ ]){extra};",
            f"{pad}nativeBuildInputs = {lib}.filter"
            f' (p: (p.pname or "") != "addDriverRunpath")'
            " (oldAttrs.nativeBuildInputs or [ ]);",
        ]
    script = _flag_exports(variant, nixpkgs_name) + [f"export MAX_JOBS={repo_profile.ninja_jobs}"]
    script += _env_lines(variant, family)
    if banner:
        script += [""] + _banner(variant)
    lines += [""] + _indented_block("preConfigure", script, pad)
    if variant.extra_cmake_flags:
        lines += [
            "",
            f"{pad}cmakeFlags = (oldAttrs.cmakeFlags or [ ]) ++ "
            f"{_list(variant.extra_cmake_flags)};",
        ]
    return lines


def _metadata_attrs(variant, pad) -> list[str]:
    lines = [""]
    lines += [
        f"{pad}# Bump the catalogue's metadata_rev when only metadata changes, so the store path",
        f"{pad}# (and the Flox catalogue entry) changes with it.",
    ]
    lines += _indented_block(
        "postInstall", [f"echo {variant.metadata_rev} > $out/.metadata-rev"], pad
    )
    gpu = (
        "gpuArchSM"
        if variant.backend == "cuda"
        else ('"mps"' if variant.backend == "mps" else "null")
    )
    isa = quote(variant.cpu_isa.slug) if variant.cpu_isa_id else "null"
    lines += [
        "",
        f"{pad}passthru = (oldAttrs.passthru or {{ }}) // {{",
        f"{pad}  gpuArch = {gpu};",
        f"{pad}  blasProvider = {quote(vocabulary.BLAS[variant.blas].provider)};",
        f"{pad}  cpuISA = {isa};",
        f"{pad}  disabledFeatures = {_list(ordered_features(variant.disabled_features))};",
        f"{pad}}};",
        "",
        f"{pad}meta = (oldAttrs.meta or {{ }}) // {{",
        f"{pad}  description = {quote(description(variant))};",
    ]
    lines += _indented_block(
        "longDescription",
        [indented(line) for line in long_description(variant)],
        pad + "  ",
        append_to_old=False,
    )
    lines += [f"{pad}  platforms = {_list(platforms(variant))};", f"{pad}}};"]
    return lines


def python_set(variant, nixpkgs_name) -> str:
    """The Python package set inside the nixpkgs bound to `nixpkgs_name`
    (see profiles.python_packages)."""
    return P.python_packages(variant.python_version, pinned=nixpkgs_name != "nixpkgs_env")


def _torch_expression(variant, nixpkgs_name, pad, repo_profile, own: bool) -> list[str]:
    """A PyTorch derivation for the variant's hardware; `own` adds name, metadata and banner."""
    py = python_set(variant, nixpkgs_name)
    inner = pad + "  "
    attrs = [f"{inner}pname = {quote(variant.pname)};"] if own else []
    attrs += torch_build_attrs(variant, nixpkgs_name, inner, repo_profile, banner=own)
    if own:
        attrs += _metadata_attrs(variant, inner)
    if variant.backend == "cuda":
        head = []
        if own:
            head = [
                f"{pad}# Two-stage override:",
                f"{pad}# 1. Enable CUDA and specify the GPU target",
            ]
        head += [
            f"{pad}({nixpkgs_name}.{py}.torch.override {{",
            f"{pad}  cudaSupport = true;",
            f"{pad}  gpuTargets = [ gpuArchSM ];",
        ]
        if own:
            head.append(
                f"{pad}# 2. Customize the build (CPU flags, switched-off libraries, metadata)"
            )
        head.append(f"{pad}}}).overrideAttrs (oldAttrs: {{")
    else:
        head = [f"{pad}{nixpkgs_name}.{py}.torch.overrideAttrs (oldAttrs: {{"]
    return head + attrs + [f"{pad}}})"]


def _companion_expression(variant, nixpkgs_name, pad, repo_profile) -> list[str]:
    py = python_set(variant, nixpkgs_name)
    attr = vocabulary.LIBRARIES[variant.library].attr
    inner = pad + "  "
    family = P.FAMILIES[variant.backend]
    lines = [
        f"{pad}({nixpkgs_name}.{py}.{attr}.override {{",
        f"{pad}  torch = customPytorch;",
        f"{pad}}}).overrideAttrs (oldAttrs: {{",
        f"{inner}pname = {quote(variant.pname)};",
        f"{inner}ninjaFlags = {_list([f'-j{repo_profile.ninja_jobs}'])};",
    ]
    if family.system_features:
        lines.append(f"{inner}requiredSystemFeatures = {_list(family.system_features)};")
    script = _flag_exports(variant, nixpkgs_name) + [f"export MAX_JOBS={repo_profile.ninja_jobs}"]
    lines += [""] + _indented_block("preConfigure", script, inner)
    if variant.extra_cmake_flags:
        lines += [
            "",
            f"{inner}cmakeFlags = (oldAttrs.cmakeFlags or [ ]) ++ "
            f"{_list(variant.extra_cmake_flags)};",
        ]
    lines += _metadata_attrs(variant, inner)
    return lines + [f"{pad}}})"]


def header(variant) -> list[str]:
    lines = [f"# {comment(description(variant))}", f"# Package name: {variant.pname}"]
    if variant.use_case:
        lines.append(f"# Use case: {comment(variant.use_case)}")
    for line in (variant.notes or "").splitlines():
        lines.append(f"# Note: {comment(line)}".rstrip())
    if variant.depends_on_id:
        dep = variant.depends_on
        lines.append(f"# Built against: {dep.branch.repository} {dep.branch.name} {dep.pname}")
    lines.append(f"# {P.GENERATED_NOTE}")
    return lines


def gpu_targets(variant) -> list[str]:
    """The recipe's gpuTargets: the architecture's compute capability (TORCH_CUDA_ARCH_LIST)."""
    return [naming.gpu_target(variant.gpu_arch.sm)] if variant.backend == "cuda" else []


def platforms(variant) -> list[str]:
    return [variant.platform]


def recipe_facts(variant) -> RecipeFacts:
    """What render_recipe writes for this variant, as a reader of the file would find it.

    The audit's lint reads a catalogue-rendered variant through this; a variant imported from a
    repository has the facts of its own source text instead."""
    companion = variant.library != "pytorch"
    companion_form = "sibling" if companion and uses_import_form(variant) else "inline"
    source = None
    if companion:
        sibling = variant.depends_on.pname if companion_form == "sibling" else ""
        source = PytorchSource(companion_form, sibling=sibling)
    pin = variant.branch.nixpkgs_pin if pin_kind(variant.branch.nixpkgs_pin) != "none" else ""
    cuda = variant.backend == "cuda"
    return RecipeFacts(
        form="pytorch-pinned" if variant.library == "pytorch" else f"companion-{companion_form}",
        pname=variant.pname,
        library=variant.library,
        backend=variant.backend,
        python_attr=python_set(variant, nixpkgs_var(variant.branch)),
        nixpkgs_pin=pin,
        cuda_packages_attr=naming.cuda_set_attr(variant.cuda_version) if cuda else "",
        gpu_targets=gpu_targets(variant),
        gpu_arch_num=naming.sm_number(variant.gpu_arch.sm) if cuda else "",
        cpu_flags=list(variant.cpu_isa.compiler_flags) if variant.cpu_isa_id else [],
        platforms=platforms(variant),
        pytorch_source=source,
        metadata_rev=variant.metadata_rev,
        disabled_features=ordered_features(variant.disabled_features),
        extra_cmake_flags=list(variant.extra_cmake_flags or []),
        description=description(variant),
    )


def _arch_name(arch: str) -> str:
    return vocabulary.CPU_ARCHES[arch].description


def uses_import_form(variant) -> bool:
    repository = vocabulary.REPOSITORIES[variant.branch.repository]
    return (
        variant.library != "pytorch"
        and repository.companion_form == vocabulary.COMPANION_SIBLING
        and variant.depends_on_id is not None
        and variant.depends_on.branch_id == variant.branch_id
    )


def _pytorch_name(variant) -> str:
    """The PyTorch variant a companion's configuration names (same backend, CUDA, GPU, ISA)."""
    return naming.compose(
        "pytorch",
        variant.python_version,
        variant.backend,
        variant.cuda_version,
        variant.gpu_arch.sm if variant.gpu_arch_id else "",
        variant.cpu_isa.slug if variant.cpu_isa_id else "",
    )


def render_recipe(variant) -> str:
    """The exact `.flox/pkgs/<pname>.nix` the catalogue exports for this variant.

    Takes a Variant with branch, gpu_arch, cpu_isa and depends_on (with its branch) loaded."""
    repo_profile = P.REPOSITORIES[variant.branch.repository]
    nixpkgs_name = nixpkgs_var(variant.branch)
    lines = header(variant) + ["{ pkgs ? import <nixpkgs> {} }:", "", "let"]
    lines += nixpkgs_binding(variant) + [""]
    lines += target_bindings(variant)
    if variant.library == "pytorch":
        lines += ["in"] + _torch_expression(variant, nixpkgs_name, "  ", repo_profile, own=True)
    else:
        dep = variant.depends_on
        if uses_import_form(variant):
            lines += [
                "  # The matching PyTorch recipe of this repository (same GPU target, CPU flags "
                "and",
                "  # switched-off libraries); the Nix store shares it with its own build.",
                f"  customPytorch = import ./{dep.pname}.nix {{ inherit pkgs; }};",
            ]
        else:
            # An impossible pairing has no PyTorch variant (none is built for a machine that
            # cannot exist); its recipe builds torch inline with its own, identical configuration.
            config = dep or variant
            name = dep.pname if dep else _pytorch_name(variant)
            lines += [f"  # Custom PyTorch with the configuration of {name}"]
            expr = _torch_expression(config, nixpkgs_name, "  ", repo_profile, own=False)
            expr[0] = "  customPytorch = " + expr[0].lstrip()
            expr[-1] += ";"
            lines += expr
        lines += ["", "in"] + _companion_expression(variant, nixpkgs_name, "  ", repo_profile)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- imported recipes


def isa_table(isas) -> list[IsaFlags]:
    """The CPU ISAs (CpuIsa rows) as the recipe-text engine compares them."""
    return [IsaFlags(i.slug, i.arch, i.rank, tuple(i.compiler_flags)) for i in isas]


def catalogue_values(variant) -> CatalogueValues:
    """The variant's fields that decide an imported recipe's text.

    A recipe with no `.metadata-rev` line was read as revision "none"; the catalogue's first
    revision (1) stands for the same, so only a bump past it writes the line."""
    imported_rev = (variant.recipe_facts or {}).get("metadata_rev")
    rev = variant.metadata_rev
    if imported_rev is None and rev in (None, 1):
        rev = None
    return CatalogueValues(
        pname=variant.pname,
        backend=variant.backend,
        cuda_version=variant.cuda_version,
        sm=variant.gpu_arch.sm if variant.gpu_arch_id else "",
        isa=variant.cpu_isa.slug if variant.cpu_isa_id else "",
        platform=variant.platform,
        metadata_rev=rev,
        disabled_features=tuple(variant.disabled_features or ()),
        extra_cmake_flags=tuple(variant.extra_cmake_flags or ()),
        nixpkgs_pin=variant.nixpkgs_pin,
        cuda_packages_attr=variant.cuda_packages_attr,
        python_attr=variant.python_attr,
        gpu_targets=tuple(variant.gpu_targets or ()),
        cpu_flags=tuple(variant.cpu_flags or ()),
        platforms=tuple(variant.platforms or ()),
        torch_version_override=variant.torch_version_override,
        passthru=dict(variant.passthru or {}),
    )


def export_text(variant, isas: list[IsaFlags]) -> str:
    """What export writes for a variant: an imported recipe's own text, edited in place where
    the catalogue changed it (EditError names a field it cannot change); else the template."""
    if not variant.recipe_text:
        return render_recipe(variant)
    facts = variant.recipe_facts or {}
    wanted = wanted_facts(catalogue_values(variant), facts, isas)
    return recipe_text(variant.recipe_text, facts, wanted)


def export_path(variant) -> str:
    """Where a variant's recipe goes in a checkout: the imported file's own path (its name may
    differ from the pname), else the pname's."""
    return variant.recipe_path or naming.recipe_path(variant.pname)
