"""What a recipe says, as written: the contract between reading, editing and importing.

`read.read_recipe(text)` returns a RecipeFacts; `edit.edit_recipe(text, changes)` takes the
names of its fields. Values are what the file says (a pname that differs from the file name,
`"sm_90"` GPU targets, both Linux platforms on a one-architecture CPU recipe are kept as they
are); the importer interprets them into catalogue fields and the audit reports the defects.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Span:
    """Where a value sits in the source: byte offsets into the UTF-8 text and its 1-based line."""

    start: int
    end: int
    line: int


@dataclass(frozen=True)
class PytorchSource:
    """Where a torchvision / torchaudio recipe gets its PyTorch from."""

    kind: str  # inline | sibling | remote  (vocabulary.RECIPE_FORMS[...].pytorch)
    # sibling: the imported file's stem, e.g. "pytorch-python312-cuda12_8-sm61-avx"
    sibling: str = ""
    url: str = ""  # remote: the fetched archive URL
    # remote: the recipe path inside it, e.g. ".flox/pkgs/pytorch-python313-darwin-mps.nix"
    path: str = ""
    pname: str = ""  # inline: the custom PyTorch's own pname, if it sets one


@dataclass
class RecipeFacts:
    """One recipe's facts. "The outer derivation" is the file's value: the override chain on
    `<set>.torch` / `.pytorch` / `.torchvision` / `.torchaudio`; its attributes are those of the
    overrideAttrs that sets pname. Empty values mean "not written in this recipe"."""

    form: str  # a vocabulary.RECIPE_FORMS key
    pname: str  # the `pname = "…";` of the outer derivation, as written
    library: str  # vocabulary.LIBRARIES key of the outer derivation
    # cuda | cpu | mps. mps: USE_MPS=1, gpuArch "mps" or only Darwin platforms; cuda: the
    # PyTorch's `cudaSupport = true`, GPU targets, a CUDA overlay or `config.cudaSupport`
    # (an explicit `cudaSupport = false` on the PyTorch wins); else cpu.
    backend: str
    # The package set the outer derivation comes from: "python3Packages", "python312Packages"
    python_attr: str
    # The fetchTarball'd NixOS/nixpkgs commit as written (40 or fewer hex digits); "" = unpinned
    # (a callPackage function, or the build environment's `<nixpkgs>` / `pkgs.path`).
    nixpkgs_pin: str = ""
    cuda_packages_attr: str = ""  # the overlay's set, e.g. "cudaPackages_12_8", "cudaPackages_13"
    # gpuTargets of the PyTorch override (elements resolved through `let`), else the recipe's
    # `TORCH_CUDA_ARCH_LIST="…"` export; entries as written, e.g. ["9.0"] or ["sm_90"].
    gpu_targets: list[str] = field(default_factory=list)
    gpu_arch_num: str = ""  # gpuArchNum where the recipe sets one, e.g. "90"
    cpu_flags: list[str] = field(
        default_factory=list
    )  # cpuFlags, e.g. ["-mavx2", "-mfma", "-mf16c"]
    platforms: list[str] = field(default_factory=list)  # meta.platforms literal entries
    # The platforms are the fallback of `oldAttrs.meta.platforms or [ … ]`: nixpkgs' own list
    # applies whenever the base package has one.
    platforms_fallback: bool = False
    torch_version_override: str = ""  # `version = "2.10.0"` of a torch source override overlay
    pytorch_source: PytorchSource | None = None  # companions only; None: its set's own torch
    metadata_rev: int | None = None  # `echo N > $out/.metadata-rev`, None when absent
    passthru: dict[str, str | None] = field(
        default_factory=dict
    )  # literal string/null passthru fields
    # Keys of vocabulary.FEATURES switched off: USE_<X>=0 / -DUSE_<X>=OFF anywhere in the file
    # (an inline PyTorch's too), or passthru.disabledFeatures. USE_CUDNN=0 on a recipe without
    # CUDA is part of having no GPU and is not listed.
    disabled_features: list[str] = field(default_factory=list)
    extra_cmake_flags: list[str] = field(
        default_factory=list
    )  # the outer derivation's added cmakeFlags
    description: str = ""  # meta.description (an interpolation is kept as its source, "${x}")
    # The comment lines above the expression, without their "#" and one following space
    # ("Package name: …", "Use case: …"); read only.
    header: list[str] = field(default_factory=list)
    # Where each editable field's value sits, for in-place edits. Keys are field names, plus
    # "passthru.<key>" per literal passthru field. A value used in several places is one
    # binding, and its span is that binding's: gpu_targets `[ gpuArchSM ]` -> the literal of
    # `gpuArchSM = "9.0";` (which also feeds TORCH_CUDA_ARCH_LIST and passthru.gpuArch),
    # cpu_flags -> the `cpuFlags = [ … ]` list that both an inline PyTorch and the companion
    # use. Strings span the whole literal with its quotes; nixpkgs_pin and metadata_rev span
    # only the digits; lists span `[ … ]`; python_attr spans the outer derivation's set name.
    spans: dict[str, Span] = field(default_factory=dict)
