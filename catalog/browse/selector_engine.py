"""The one-screen selector's narrowing engine. Pure Python: no Django import.

The selector shows one row of buttons per dimension (operating system, CPU architecture, GPU, …).
Given every variant as a plain record and the reader's choices (at most one value per
dimension), `narrow` answers, per dimension, each option with the number of variants it would
leave (counting the other dimensions' choices) and, for an option that would leave none, why —
naming the choices it conflicts with. When the choices leave exactly one variant, that is the
answer.

    rows = rows_from_records(records)      # records: dicts fetched in one query
    chosen = parse_choices(rows, params)   # params: {"gpu": ["sm90"], ...}; BadChoice if unknown
    result = narrow(rows, chosen)          # result.facets, result.matches, result.unique
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode

from catalog import lint, vocabulary
from catalog.naming import version_key


@dataclass(frozen=True)
class Dimension:
    key: str  # the URL parameter
    label: str  # the row's heading


# The selector's rows, in the order a reader answers them: what the machine is, then what to run.
DIMENSIONS = (
    Dimension("os", "Operating system"),
    Dimension("arch", "CPU architecture"),
    Dimension("gpu", "GPU"),
    Dimension("isa", "CPU instruction set"),
    Dimension("cuda", "CUDA"),
    Dimension("python", "Python"),
    Dimension("branch", "PyTorch version / branch"),
    Dimension("library", "Library"),
)
DIMENSION_BY_KEY = {d.key: d for d in DIMENSIONS}
NONE = "none"  # the value of a dimension a variant does not have (no GPU, no ISA, no CUDA)
OS_LABELS = {"linux": "Linux", "darwin": "macOS"}
# Buttons for variants without the dimension, keyed by backend where it matters.
NO_GPU = {
    "cpu": ("none", "No GPU", "CPU only", "CPU only (no GPU)"),
    "mps": ("mps", "Apple GPU", "Metal (MPS)", "the Apple GPU (MPS)"),
}
NO_ISA = ("None", "Apple Silicon")
# A CUDA variant whose GPU targets match no catalogued architecture (an import finding; the
# audit lists it): one button for all of them, so a listing never depends on an unknown value.
UNKNOWN_GPU = ("unknown", "Unknown GPU", "CUDA, architecture not catalogued", "an unknown GPU")
NO_CUDA = "No CUDA"
MAX_VALUE_SHOWN = 40  # a refused value is echoed at most this long


class BadChoice(ValueError):
    """A parameter the selector cannot use; the message is one sentence for the reader."""


@dataclass(frozen=True)
class Choice:
    """One variant's value on one dimension, with how the selector shows it."""

    value: str
    label: str  # the button's text
    detail: str = ""  # a second line on the button
    name: str = ""  # how a sentence names it ("CUDA 13.0"); the label when empty
    order: tuple = ()

    @property
    def phrase(self) -> str:
        return self.name or self.label


@dataclass(frozen=True)
class Row:
    repository: str
    branch: str
    pname: str
    choices: Mapping[str, Choice] = field(default_factory=dict)
    impossible: str = ""  # why no machine runs it (catalog/lint.py); "" for a real pairing


# ---------------------------------------------------------------- records -> rows


def _gpu_choice(r: Mapping) -> Choice:
    if r["backend"] == "cuda" and not r["sm"]:
        value, label, detail, name = UNKNOWN_GPU
        return Choice(value, label, detail, name, order=(3, 0))
    if r["backend"] == "cuda":
        sm = r["sm"]
        return Choice(
            sm,
            r["gpu_name"],
            f"{sm.upper()} · {r['gpu_models']}",
            f"{r['gpu_name']} ({sm.upper()})",
            (0, r["arch_number"] or 0),
        )
    value, label, detail, name = NO_GPU.get(r["backend"], NO_GPU["cpu"])
    return Choice(value, label, detail, name, order=(1 if value == "mps" else 2, 0))


def _isa_choice(r: Mapping) -> Choice:
    if not r["isa"]:
        return Choice(NONE, NO_ISA[0], NO_ISA[1], "no CPU instruction set", (9, 0))
    arches = list(vocabulary.ISA_ORDER)
    arch_rank = arches.index(r["isa_arch"]) if r["isa_arch"] in arches else len(arches)
    return Choice(r["isa"], r["isa_label"], r["isa_arch"], order=(arch_rank, r["isa_rank"]))


def _cuda_choice(r: Mapping) -> Choice:
    if not r["cuda"]:
        return Choice(NONE, NO_CUDA, name="no CUDA (CPU only or MPS)", order=(0,))
    return Choice(r["cuda"], r["cuda"], name=f"CUDA {r['cuda']}", order=version_key(r["cuda"]))


# The fields of a record that each dimension's Choice is built from: rows that agree on them
# share one Choice object (804 variants hold a few dozen distinct ones), which makes building,
# pickling and caching the rows several times cheaper.
CHOICE_FIELDS = {
    "platform": ("platform",),
    "gpu": ("backend", "sm", "gpu_name", "gpu_models", "arch_number"),
    "isa": ("isa", "isa_label", "isa_arch", "isa_rank"),
    "cuda": ("cuda",),
    "python": ("python",),
    "branch": ("repository", "branch_name", "pytorch_version", "preference"),
    "library": ("library",),
}


def _platform_choices(r: Mapping) -> tuple[Choice, Choice]:
    platform = vocabulary.PLATFORMS[r["platform"]]
    return (
        Choice(platform.os, OS_LABELS.get(platform.os, platform.os), order=(platform.os,)),
        Choice(platform.arch, vocabulary.CPU_ARCHES[platform.arch].label),
    )


def _python_choice(r: Mapping) -> Choice:
    if not r["python"]:
        return Choice(UNKNOWN_GPU[0], "Unknown", name="an unknown Python version", order=(99,))
    return Choice(
        r["python"], r["python"], name=f"Python {r['python']}", order=version_key(r["python"])
    )


def _branch_choice(r: Mapping) -> Choice:
    qualified = f"{r['repository']}:{r['branch_name']}"
    return Choice(
        qualified,
        qualified,
        f"PyTorch {r['pytorch_version']}",
        order=(r["repository"], r["preference"], r["branch_name"]),
    )


def _library_choice(r: Mapping) -> Choice:
    return Choice(
        r["library"],
        vocabulary.LIBRARIES[r["library"]].label,
        order=(list(vocabulary.LIBRARIES).index(r["library"]),),
    )


BUILDERS = {
    "platform": _platform_choices,
    "gpu": _gpu_choice,
    "isa": _isa_choice,
    "cuda": _cuda_choice,
    "python": _python_choice,
    "branch": _branch_choice,
    "library": _library_choice,
}


def row_from_record(r: Mapping, shared: dict | None = None) -> Row:
    """A variant record (see `RECORD_KEYS`) as the selector's row; `shared` keeps the Choices
    already built for other records, keyed by the fields they come from."""
    shared = {} if shared is None else shared
    built = {}
    for part, fields in CHOICE_FIELDS.items():
        key = (part, *(r[f] for f in fields))
        if key not in shared:
            shared[key] = BUILDERS[part](r)
        built[part] = shared[key]
    os_choice, arch_choice = built.pop("platform")
    choices = {"os": os_choice, "arch": arch_choice, **built}
    impossible = (
        lint.impossible_pairing(r["sm"], r["host_arch"] or "", r["isa"] or "")
        if r["backend"] == "cuda"
        else ""
    )
    return Row(r["repository"], r["branch_name"], r["pname"], choices, impossible)


# What each record holds: the variant's own fields and its branch's, architecture's and ISA's.
RECORD_KEYS = (
    "pname",
    "repository",
    "branch_name",
    "preference",
    "pytorch_version",
    "library",
    "backend",
    "platform",
    "python",
    "cuda",
    "sm",
    "arch_number",
    "host_arch",
    "gpu_name",
    "gpu_models",
    "isa",
    "isa_label",
    "isa_arch",
    "isa_rank",
)


def rows_from_records(records: Iterable[Mapping]) -> list[Row]:
    shared: dict = {}
    return [row_from_record(r, shared) for r in records]


# ---------------------------------------------------------------- parsing the choices


def _shown(value: str) -> str:
    return repr(value if len(value) <= MAX_VALUE_SHOWN else value[:MAX_VALUE_SHOWN] + "…")


def _lower(label: str) -> str:
    """Mid-sentence: "Operating system" becomes "operating system"; "GPU", "PyTorch" stay."""
    return label[:1].lower() + label[1:] if label.split()[0][1:].islower() else label


def parse_choices(rows: Sequence[Row], params: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """The reader's choices from query parameters ({name: [values]}); other names are ignored.

    An empty value means "not chosen"; several values or one the catalogue lacks is a BadChoice."""
    chosen = {}
    for dim in DIMENSIONS:
        values = [v for v in params.get(dim.key, ()) if v != ""]
        if not values:
            continue
        if len(values) > 1:
            raise BadChoice(f"Choose one {_lower(dim.label)}, not {len(values)}.")
        known = {row.choices[dim.key].value for row in rows}
        if values[0] not in known:
            raise BadChoice(
                f"There is no {_lower(dim.label)} {_shown(values[0])} in the catalogue "
                f"(choose one of: {', '.join(sorted(known))})."
            )
        chosen[dim.key] = values[0]
    return chosen


def query_string(chosen: Mapping[str, str]) -> str:
    """The choices as a query string, in dimension order (one URL per selection)."""
    return urlencode([(d.key, chosen[d.key]) for d in DIMENSIONS if d.key in chosen])


# ---------------------------------------------------------------- narrowing


@dataclass(frozen=True)
class Option:
    value: str
    label: str
    detail: str
    count: int  # variants left if it were chosen (with the other dimensions' choices)
    selected: bool
    reason: str  # why it leaves none; empty when count > 0
    query: str  # the query string that chooses it (or, when selected, drops it)


@dataclass(frozen=True)
class Facet:
    dimension: Dimension
    options: list[Option]
    chosen: str | None


@dataclass(frozen=True)
class Narrowed:
    facets: list[Facet]
    matches: list[Row]  # the variants every choice allows
    chosen: dict[str, str]

    @property
    def unique(self) -> Row | None:
        """The one variant left, when a machine can run it: an impossible pairing is shown,
        marked, and never the answer."""
        if len(self.matches) == 1 and not self.matches[0].impossible:
            return self.matches[0]
        return None

    @property
    def query(self) -> str:
        return query_string(self.chosen)


def _mismatches(row: Row, chosen: Mapping[str, str]) -> list[str]:
    return [k for k, v in chosen.items() if row.choices[k].value != v]


@dataclass
class _Tally:
    """One pass over the rows: what each option would leave, and which chosen values occur
    together with which options (for the reasons)."""

    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    together: set[tuple[str, str, str]] = field(default_factory=set)  # (dim, option, chosen dim)
    options: dict[str, dict[str, Choice]] = field(default_factory=dict)
    phrases: dict[str, str] = field(default_factory=dict)  # chosen dim -> how to name its value
    matches: list[Row] = field(default_factory=list)

    def add(self, row: Row, chosen: Mapping[str, str]) -> None:
        missed = _mismatches(row, chosen)
        # A row that misses no choice counts for every dimension; one that misses exactly one
        # counts for that dimension only (choosing another value there would include it).
        counted = [d.key for d in DIMENSIONS] if not missed else missed if len(missed) == 1 else []
        for key in counted:
            cell = (key, row.choices[key].value)
            self.counts[cell] = self.counts.get(cell, 0) + 1
        if not missed:
            self.matches.append(row)
        for key, choice in row.choices.items():
            self.options.setdefault(key, {})[choice.value] = choice
            for k in chosen:
                if k not in missed:
                    self.together.add((key, choice.value, k))
                    self.phrases.setdefault(k, row.choices[k].phrase)


def _reason(tally: _Tally, key: str, choice: Choice, chosen: Mapping[str, str]) -> str:
    """Why `choice` leaves no variant: the choices no variant combines it with."""
    clashes = [
        tally.phrases.get(k, chosen[k])
        for k in chosen
        if k != key and (key, choice.value, k) not in tally.together
    ]
    what = " and ".join(clashes) if clashes else "these choices together"
    return f"No build for {choice.phrase} with {what}"


def _facet(tally: _Tally, dim: Dimension, chosen: Mapping[str, str]) -> Facet:
    options = []
    for choice in sorted(tally.options.get(dim.key, {}).values(), key=lambda c: (c.order, c.value)):
        count = tally.counts.get((dim.key, choice.value), 0)
        selected = chosen.get(dim.key) == choice.value
        toggled = {k: v for k, v in chosen.items() if k != dim.key}
        if not selected:
            toggled[dim.key] = choice.value
        options.append(
            Option(
                choice.value,
                choice.label,
                choice.detail,
                count,
                selected,
                "" if count else _reason(tally, dim.key, choice, chosen),
                query_string(toggled),
            )
        )
    return Facet(dim, options, chosen.get(dim.key))


def narrow(rows: Sequence[Row], chosen: Mapping[str, str]) -> Narrowed:
    """Every dimension's options for these choices, and the variants the choices leave."""
    tally = _Tally()
    for row in rows:
        tally.add(row, chosen)
    return Narrowed(
        facets=[_facet(tally, dim, chosen) for dim in DIMENSIONS],
        matches=tally.matches,
        chosen=dict(chosen),
    )
