"""The architecture × ISA grid: how a list of variants is laid out for people to scan.

Per branch and library, rows are GPU architectures (oldest first), then CPU-only, then Apple
MPS; columns are the CPU ISAs that group builds (x86_64 first, oldest hardware first). A cell
holds every variant for that row and column (several when a branch builds more than one CUDA
version), or nothing. Pure layout over already-loaded variants: no queries, as long as the
variants come with `branch`, `gpu_arch` and `cpu_isa` selected (see `queries.matrix_variants`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from catalog import naming


@dataclass
class Cell:
    variants: list = field(default_factory=list)
    colspan: int = 1

    @property
    def empty(self):
        return not self.variants


@dataclass
class Row:
    kind: str  # "gpu", "cpu", "mps" or "other" (an imported recipe the grid cannot place)
    label: str  # "SM90", "CPU only", "Apple MPS"
    title: str  # "Hopper (compute capability 9.0)"
    architecture: object = None  # the GpuArchitecture of a "gpu" row
    cells: list = field(default_factory=list)


@dataclass
class Group:
    branch: object
    library: str
    library_label: str
    columns: list  # CpuIsa objects
    rows: list
    count: int


def _isa_key(isa):
    # x86_64 first: most machines people ask about are x86_64.
    return (isa.arch != "x86_64", isa.rank, isa.slug)


def _placed(variant) -> bool:
    """Whether the variant has the architecture / ISA its backend is laid out by (an imported
    recipe may name ones the catalogue does not know)."""
    if variant.backend == "cuda" and not variant.gpu_arch_id:
        return False
    return variant.backend == "mps" or bool(variant.cpu_isa_id)


def _row_key(variant):
    if not _placed(variant):
        return (3, 0)
    if variant.backend == "cuda":
        return (0, variant.gpu_arch.arch_number)
    return (1, 0) if variant.backend == "cpu" else (2, 0)


def _cuda_key(variant):
    return naming.version_key(variant.cuda_version)


def build_grid(variants) -> list[Group]:
    """Group variants by (branch, library) and lay each group out as rows × ISA columns."""
    groups: dict = {}
    for v in variants:
        groups.setdefault((v.branch_id, v.library), []).append(v)

    result = []
    for members in groups.values():
        first = members[0]
        isas = {v.cpu_isa.slug: v.cpu_isa for v in members if v.cpu_isa_id}
        columns = sorted(isas.values(), key=_isa_key)
        col_index = {isa.slug: i for i, isa in enumerate(columns)}

        by_row: dict = {}
        for v in members:
            by_row.setdefault(_row_key(v), []).append(v)

        rows = []
        for key in sorted(by_row):
            row_variants = by_row[key]
            sample = row_variants[0]
            if key == (3, 0):
                rows.append(
                    Row(
                        "other",
                        "Other",
                        "Imported recipes whose architecture or ISA the catalogue does not know",
                        cells=[
                            Cell(sorted(row_variants, key=lambda v: v.pname), max(len(columns), 1))
                        ],
                    )
                )
                continue
            if sample.backend == "mps":
                # MPS builds have no CPU ISA: one cell across the ISA columns.
                rows.append(
                    Row(
                        "mps",
                        "Apple MPS",
                        "Apple Silicon, Metal GPU (aarch64-darwin)",
                        cells=[
                            Cell(sorted(row_variants, key=lambda v: v.pname), max(len(columns), 1))
                        ],
                    )
                )
                continue
            cells = [Cell() for _ in columns]
            for v in sorted(row_variants, key=_cuda_key, reverse=True):
                cells[col_index[v.cpu_isa.slug]].variants.append(v)
            if sample.backend == "cuda":
                arch = sample.gpu_arch
                rows.append(
                    Row(
                        "gpu",
                        arch.sm.upper(),
                        f"{arch.label} (compute capability {arch.compute_capability})",
                        architecture=arch,
                        cells=cells,
                    )
                )
            else:
                rows.append(Row("cpu", "CPU only", "No GPU: CPU-only builds", cells=cells))
        result.append(
            Group(
                branch=first.branch,
                library=first.library,
                library_label=first.get_library_display(),
                columns=columns,
                rows=rows,
                count=len(members),
            )
        )
    return result
