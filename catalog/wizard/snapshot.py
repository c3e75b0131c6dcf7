"""A plain, read-only picture of the catalogue that the engine reads.

The engine never touches the database: a caller builds a `Catalogue` once (from querysets, from
fixtures, or by hand in tests) and hands it to `recommend()`. Every record is a frozen dataclass
of strings, numbers and tuples, so a snapshot can be cached and shared between threads.

Building one from the Django models (in a selector; this module imports no Django)::

    Catalogue.from_objects(
        variants=Variant.objects.select_related("branch", "gpu_arch", "cpu_isa"),
        branches=Branch.objects.all(),
        architectures=GpuArchitecture.objects.all(),
        gpu_models=GpuModel.objects.select_related("architecture"),
        isas=CpuIsa.objects.all(),
    )

`from_objects` only reads attributes (duck typing): a variant needs `pname`, `branch`
(`.repository`, `.name`), `library`, `backend`, `cuda_version`, `gpu_arch` (`.sm`, or None),
`cpu_isa` (`.slug`, or None), `platform`, `python_version`, `status`; the other records read the
fields named in their dataclasses below (a GPU model reads `architecture.sm`; a branch reads
`vllm_version` when the model has it, "" otherwise).

The stored snapshot (`to_rows` / `from_rows`) keeps the variants as a `VariantTable`: one string
per hardware, records built only for the hardware an answer asks about (`variants_for`), so a
cold load costs the same at 13,000 variants as at 800.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypeVar

from catalog import lint, naming

T = TypeVar("T")


def _tuple(value) -> tuple | VariantTable:
    if value is None:
        return ()
    if isinstance(value, VariantTable):  # already read-only; kept compact
        return value
    if isinstance(value, str):
        return (value,) if value else ()
    return tuple(value)


def astuple_shallow(record) -> tuple:
    """A record's field values in order (dataclasses.astuple copies nested values deeply)."""
    return tuple(getattr(record, f.name) for f in fields(record))


# The order of VariantInfo's fields: a row from the database in this order builds one.
VARIANT_FIELDS = (
    "pname",
    "repository",
    "branch",
    "library",
    "backend",
    "platform",
    "python_version",
    "cuda_version",
    "sm",
    "isa",
    "status",
)


@dataclass(frozen=True)
class VariantInfo:
    pname: str
    repository: str  # build-pytorch | build-torchvision | build-torchaudio
    branch: str  # branch name within the repository, e.g. "main"
    library: str  # pytorch | torchvision | torchaudio
    backend: str  # cuda | cpu | mps
    platform: str  # x86_64-linux | aarch64-linux | aarch64-darwin
    python_version: str  # "3.13"
    cuda_version: str = ""  # "12.8" for CUDA builds
    sm: str = ""  # "sm90" for CUDA builds
    isa: str = ""  # CPU ISA slug; "" for MPS
    status: str = "recipe"

    @property
    def branch_key(self) -> tuple[str, str]:
        return (self.repository, self.branch)


# The engine's first narrowing: backend, GPU architecture and platform (engine._pool).
Hardware = tuple[str, str, str]
# A stored line's columns; a group's key holds backend, sm and platform.
_LINE_FIELDS = (
    "pname",
    "repository",
    "branch",
    "library",
    "python_version",
    "cuda_version",
    "isa",
    "status",
)


def hardware_of(v: VariantInfo) -> Hardware:
    return (v.backend, v.sm, v.platform)


@dataclass(frozen=True)
class VariantTable:
    """Every variant in a compact form that loads in milliseconds: per hardware (backend, sm,
    platform), one string with a line per variant ("id\\tpname\\trepository\\t…", in id order).
    An answer builds records only for the hardware it asks about; the full tuple (search, a
    constrained answer) is built once, when first asked for. `statuses`, when set, gives the
    current statuses by id of one hardware's variants (of all for None), laid on top of the
    stored ones as each group is built: a build record rebuilds nothing, and an answer reads
    the statuses of the hardware it asks about only."""

    size: int
    groups: Mapping[Hardware, str]
    statuses: Callable[[Hardware | None], Mapping[int, str]] | None = None
    _built: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, variants: Iterable[VariantInfo], ids: Iterable[int] = ()) -> VariantTable:
        """The table of these records, each under its id (its position when ids are not given;
        either way ascending, the records' order)."""
        lines: dict[Hardware, list[str]] = {}
        size = 0
        ids = iter(ids)
        for pos, v in enumerate(variants):
            text = "\t".join(getattr(v, f) for f in _LINE_FIELDS)
            lines.setdefault(hardware_of(v), []).append(f"{next(ids, pos)}\t{text}")
            size = pos + 1
        return cls(size, {key: "\n".join(found) for key, found in lines.items()})

    def to_rows(self) -> dict:
        return {"size": self.size, "groups": dict(self.groups)}

    def with_statuses(
        self, statuses: Callable[[Hardware | None], Mapping[int, str]]
    ) -> VariantTable:
        return VariantTable(self.size, self.groups, statuses)

    def _current(self, key: Hardware | None) -> Mapping[int, str]:
        return self.statuses(key) if self.statuses is not None else {}

    def _record(self, key: Hardware, line: str, current: Mapping[int, str]) -> VariantInfo:
        pk, pname, repository, branch, library, python, cuda, isa, status = line.split("\t")
        status = current.get(int(pk), status)
        backend, sm, platform = key
        return VariantInfo(
            pname, repository, branch, library, backend, platform, python, cuda, sm, isa, status
        )

    def group(self, key: Hardware) -> tuple:
        """The variants for this hardware, in variant order (built once)."""
        if key not in self._built:
            text = self.groups.get(key, "")
            lines = text.split("\n") if text else []
            current = self._current(key) if lines else {}
            self._built[key] = tuple(self._record(key, line, current) for line in lines)
        return self._built[key]

    def named(self, repository: str, branch: str, pname: str) -> VariantInfo | None:
        """One variant by its name, found in the strings without building the others."""
        needle = f"\t{pname}\t{repository}\t{branch}\t"
        for key, text in self.groups.items():
            at = text.find(needle)
            if at >= 0:
                start = text.rfind("\n", 0, at) + 1
                end = text.find("\n", at)
                line = text[start : end if end >= 0 else len(text)]
                return self._record(key, line, self._current(key))
        return None

    def everything(self) -> tuple:
        """Every variant, in variant order."""
        if "all" not in self._built:
            found = [
                (int(line.split("\t", 1)[0]), key, line)
                for key, text in self.groups.items()
                for line in (text.split("\n") if text else [])
            ]
            found.sort(key=lambda item: item[0])
            current = self._current(None)
            self._built["all"] = tuple(self._record(key, line, current) for _, key, line in found)
        return self._built["all"]

    # A read-only sequence, so `catalogue.variants` reads the same for both forms.
    def __len__(self) -> int:
        return self.size

    def __iter__(self):
        return iter(self.everything())

    def __getitem__(self, i):
        return self.everything()[i]

    def __eq__(self, other) -> bool:
        try:
            return tuple(self) == tuple(other)
        except TypeError:
            return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to a tuple, so not hashable


@dataclass(frozen=True)
class BranchInfo:
    repository: str
    name: str
    pytorch_version: str
    python_version: str
    cuda_versions: tuple = ()  # newest first, as the seeds state them: ("12.9", "12.8")
    torchvision_version: str = ""
    min_driver: int | None = None
    is_default: bool = False  # the default branch of its repository
    preference: int = 50  # lower = preferred when several branches fit
    vllm_version: str = ""  # "0.14.0" on the vLLM-pinned branches
    purpose: str = ""
    is_recommended: bool = False  # the branch the catalogue recommends for general use

    def __post_init__(self):
        object.__setattr__(self, "cuda_versions", _tuple(self.cuda_versions))

    @property
    def key(self) -> tuple[str, str]:
        return (self.repository, self.name)

    @property
    def label(self) -> str:
        return f"{self.repository} {self.name}"


@dataclass(frozen=True)
class ArchitectureInfo:
    sm: str  # "sm90"
    compute_capability: str  # "9.0"
    name: str  # "Hopper"
    min_driver: int | None = None
    min_cuda: str = ""
    max_cuda: str = ""
    label: str = ""  # the matrix's row label, "Ampere DC"
    host_arch: str = ""  # the CPU of the system the GPU is built into (DGX Spark: aarch64)

    @property
    def cc_key(self) -> tuple[int, ...]:
        return naming.version_key(self.compute_capability)


@dataclass(frozen=True)
class GpuModelInfo:
    name: str  # "H100"
    sm: str  # "sm90"
    aliases: tuple = ()  # other spellings: ("NVIDIA H100 80GB HBM3", "H100 SXM")

    def __post_init__(self):
        object.__setattr__(self, "aliases", _tuple(self.aliases))


@dataclass(frozen=True)
class IsaInfo:
    slug: str  # "avx512"
    label: str  # "AVX-512"
    arch: str  # x86_64 | aarch64
    rank: int = 0  # order within its architecture, oldest hardware first
    compiler_flags: tuple = ()  # as in the recipes' cpuFlags
    required_features: tuple = ()  # /proc/cpuinfo names a machine needs
    hardware: str = ""  # prose, e.g. "NVIDIA Grace, ARM Neoverse V1/V2, AWS Graviton3+"

    def __post_init__(self):
        object.__setattr__(self, "compiler_flags", _tuple(self.compiler_flags))
        object.__setattr__(self, "required_features", _tuple(self.required_features))


@dataclass(frozen=True)
class Catalogue:
    """Everything the engine needs, as plain records. Lists are turned into tuples."""

    variants: tuple | VariantTable = ()
    branches: tuple = ()
    architectures: tuple = ()
    gpu_models: tuple = ()
    isas: tuple = ()
    _index: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        for name in ("variants", "branches", "architectures", "gpu_models", "isas"):
            object.__setattr__(self, name, _tuple(getattr(self, name)))
        self._index.update(
            branches={b.key: b for b in self.branches},
            archs={a.sm: a for a in self.architectures},
            isas={i.slug: i for i in self.isas},
        )

    # -- lookups -------------------------------------------------------------------------
    def _by_hardware(self) -> Mapping[Hardware, tuple]:
        """Records given as a tuple (tests, fixtures), grouped as a VariantTable groups them."""

        def build(cat: Catalogue) -> dict:
            grouped: dict[Hardware, list] = {}
            for v in cat.variants:
                grouped.setdefault(hardware_of(v), []).append(v)
            return {key: tuple(found) for key, found in grouped.items()}

        return self.memo("variants-by-hardware", build)

    def hardware(self) -> Collection[Hardware]:
        """Every (backend, sm, platform) the catalogue has a variant for."""
        if isinstance(self.variants, VariantTable):
            return self.variants.groups.keys()
        return self._by_hardware().keys()

    def variants_for(self, backend: str, sm: str, platform: str) -> tuple:
        """The variants for this hardware, in variant order: all an answer reads of them."""
        if isinstance(self.variants, VariantTable):
            return self.variants.group((backend, sm, platform))
        return self._by_hardware().get((backend, sm, platform), ())

    def variant_named(self, repository: str, branch: str, pname: str) -> VariantInfo | None:
        if isinstance(self.variants, VariantTable):
            return self.variants.named(repository, branch, pname)
        by_name = self.memo(
            "variants-by-name", lambda c: {(v.repository, v.branch, v.pname): v for v in c.variants}
        )
        return by_name.get((repository, branch, pname))

    def branch(self, repository: str, name: str) -> BranchInfo | None:
        return self._index["branches"].get((repository, name))

    def branch_of(self, variant: VariantInfo) -> BranchInfo | None:
        return self.branch(variant.repository, variant.branch)

    def architecture(self, sm: str) -> ArchitectureInfo | None:
        return self._index["archs"].get(sm)

    def architecture_for_cc(self, cc: str) -> ArchitectureInfo | None:
        key = naming.version_key(cc)[:2]
        for arch in self.architectures:
            if arch.cc_key[:2] == key:
                return arch
        return None

    def impossible_pairing(self, variant: VariantInfo) -> str:
        """Why no machine runs this variant ("" when one can): catalog/lint.py's rule."""
        arch = self.architecture(variant.sm) if variant.backend == "cuda" else None
        return lint.impossible_pairing(variant.sm, arch.host_arch, variant.isa) if arch else ""

    def isa(self, slug: str) -> IsaInfo | None:
        return self._index["isas"].get(slug)

    def isas_for(self, arch: str) -> list[IsaInfo]:
        return sorted((i for i in self.isas if i.arch == arch), key=lambda i: i.rank)

    def gpu_names(self) -> tuple[naming.Named, ...]:
        """Each architecture with every name the site shows for it (naming.resolve_gpu)."""
        return self.memo("written-gpu-names", _gpu_names)

    def isa_names(self) -> tuple[naming.Named, ...]:
        """Each ISA with its label (naming.resolve_name)."""
        return self.memo("written-isa-names", _isa_names)

    def known_isa(self, slug: str) -> IsaInfo:
        """An ISA the answers' readers have checked is catalogued (KeyError otherwise)."""
        isa = self.isa(slug)
        if isa is None:
            raise KeyError(f"no CPU ISA {slug!r} in the catalogue")
        return isa

    def isa_label(self, slug: str) -> str:
        """An ISA's label; the slug itself for one the catalogue lacks."""
        isa = self.isa(slug)
        return isa.label if isa else slug

    def memo(self, key: str, build: Callable[[Catalogue], T]) -> T:
        """`build(self)`, computed once per snapshot (lookup tables derived from the records)."""
        if key not in self._index:
            self._index[key] = build(self)
        return self._index[key]

    def with_status_source(
        self, statuses: Callable[[Hardware | None], Mapping[int, str]]
    ) -> Catalogue:
        """This snapshot (variants stored as a VariantTable) with the current statuses read
        from `statuses` per hardware as its records are built (VariantTable.statuses)."""
        if not isinstance(self.variants, VariantTable):
            raise TypeError("statuses by hardware are laid on a VariantTable")
        return replace(self, variants=self.variants.with_statuses(statuses), _index={})

    def with_statuses(self, statuses: tuple) -> Catalogue:
        """This snapshot with each variant's status replaced by `statuses` (in variant order):
        build outcomes laid on top of a structure snapshot without rebuilding it."""
        if len(statuses) != len(self.variants):
            raise ValueError("one status per variant")
        variants = tuple(
            v if v.status == status else replace(v, status=status)
            for v, status in zip(self.variants, statuses, strict=True)
        )
        return Catalogue(
            variants=variants,
            branches=self.branches,
            architectures=self.architectures,
            gpu_models=self.gpu_models,
            isas=self.isas,
        )

    # -- construction from plain rows (a compact, picklable form) --------------------------
    def to_rows(self) -> dict:
        """Plain tuples in dataclass field order (the variants as a VariantTable's strings):
        pickles and loads far faster than records."""
        variants = self.variants
        if not isinstance(variants, VariantTable):
            variants = VariantTable.of(variants)
        return {
            "variants": variants.to_rows(),
            **{
                name: tuple(astuple_shallow(r) for r in getattr(self, name))
                for name in ("branches", "architectures", "gpu_models", "isas")
            },
        }

    @classmethod
    def from_rows(cls, rows: dict) -> Catalogue:
        kinds = {
            "branches": BranchInfo,
            "architectures": ArchitectureInfo,
            "gpu_models": GpuModelInfo,
            "isas": IsaInfo,
        }
        built = {name: tuple(kind(*row) for row in rows[name]) for name, kind in kinds.items()}
        table = rows["variants"]
        return cls(
            variants=VariantTable(table["size"], table["groups"]),
            branches=built["branches"],
            architectures=built["architectures"],
            gpu_models=built["gpu_models"],
            isas=built["isas"],
        )

    # -- construction from ORM-like objects (duck typed; no Django import) -----------------
    @classmethod
    def from_objects(
        cls,
        *,
        variants: Iterable[Any],
        branches: Iterable[Any],
        architectures: Iterable[Any],
        gpu_models: Iterable[Any],
        isas: Iterable[Any],
    ) -> Catalogue:
        return cls(
            variants=tuple(
                VariantInfo(
                    pname=v.pname,
                    repository=v.branch.repository,
                    branch=v.branch.name,
                    library=v.library,
                    backend=v.backend,
                    platform=v.platform,
                    python_version=v.python_version,
                    cuda_version=v.cuda_version or "",
                    sm=v.gpu_arch.sm if getattr(v, "gpu_arch", None) else "",
                    isa=v.cpu_isa.slug if getattr(v, "cpu_isa", None) else "",
                    status=v.status,
                )
                for v in variants
            ),
            branches=tuple(
                BranchInfo(
                    repository=b.repository,
                    name=b.name,
                    pytorch_version=b.pytorch_version,
                    python_version=b.python_version,
                    cuda_versions=tuple(b.cuda_versions or ()),
                    torchvision_version=getattr(b, "torchvision_version", "") or "",
                    min_driver=b.min_driver,
                    is_default=bool(b.is_default),
                    is_recommended=bool(getattr(b, "is_recommended", False)),
                    preference=b.preference,
                    vllm_version=getattr(b, "vllm_version", "") or "",
                    purpose=getattr(b, "purpose", "") or "",
                )
                for b in branches
            ),
            architectures=tuple(
                ArchitectureInfo(
                    sm=a.sm,
                    compute_capability=a.compute_capability,
                    name=a.name,
                    min_driver=a.min_driver,
                    min_cuda=a.min_cuda or "",
                    max_cuda=getattr(a, "max_cuda", "") or "",
                    label=getattr(a, "label", "") or "",
                    host_arch=getattr(a, "host_arch", "") or "",
                )
                for a in architectures
            ),
            gpu_models=tuple(
                GpuModelInfo(name=m.name, sm=m.architecture.sm, aliases=tuple(m.aliases or ()))
                for m in gpu_models
            ),
            isas=tuple(
                IsaInfo(
                    slug=i.slug,
                    label=i.label,
                    arch=i.arch,
                    rank=i.rank,
                    compiler_flags=tuple(i.compiler_flags or ()),
                    required_features=tuple(i.required_features or ()),
                    hardware=getattr(i, "hardware", "") or "",
                )
                for i in isas
            ),
        )


def _gpu_names(cat: Catalogue) -> tuple[naming.Named, ...]:
    """Family, label, models and aliases (an SM or a compute capability is read by its form)."""
    models: dict[str, list[str]] = {}
    for m in cat.gpu_models:
        models.setdefault(m.sm, []).extend((m.name, *m.aliases))
    return tuple(
        naming.Named(
            a.sm,
            (
                naming.sm_underscore(a.sm),
                a.compute_capability,
                a.name,
                a.label,
                *models.get(a.sm, ()),
            ),
        )
        for a in cat.architectures
    )


def _isa_names(cat: Catalogue) -> tuple[naming.Named, ...]:
    return tuple(naming.Named(i.slug, (i.label,)) for i in cat.isas)
