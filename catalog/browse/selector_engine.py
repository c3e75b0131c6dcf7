"""The one-screen selector's narrowing engine. Pure Python: no Django import.

The selector shows one row of buttons per dimension (operating system, CPU architecture, GPU, …).
Given every variant as a plain record and the reader's choices (at most one value per
dimension), `narrow` answers, per dimension, each option with the number of variants it would
leave (counting the other dimensions' choices) and, for an option that would leave none, why —
naming the choices it conflicts with. When the choices leave exactly one variant, that is the
answer.

    index = index_rows(rows_from_records(records))  # records: dicts fetched in one query
    chosen = parse_choices(index, params)  # params: {"gpu": ["sm90"], ...}; BadChoice if unknown
    result = narrow(index, chosen)         # result.facets, result.matches, result.unique

The index holds one bitset per dimension value, so a count is an AND and a bit count: a
request's cost follows the number of options shown, not the number of variants.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode

from catalog import lint, naming, vocabulary
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
    qualified = naming.branch_key(r["repository"], r["branch_name"])
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


def parse_choices(
    rows: Index | Sequence[Row],
    params: Mapping[str, Sequence[str]],
    resolve: Mapping[str, Callable[[str], Sequence[str]]] | None = None,
) -> dict[str, str]:
    """The reader's choices from query parameters ({name: [values]}); other names are ignored.

    A value that is not one of a dimension's is read by its `resolve` function, if any (a GPU or
    ISA as the site writes it elsewhere: 'Hopper', 'sm_90', 'AVX-512'). An empty value means "not
    chosen"; several values, or one the catalogue lacks, is a BadChoice."""
    index = _as_index(rows)
    chosen = {}
    for dim in DIMENSIONS:
        values = [v for v in params.get(dim.key, ()) if v != ""]
        if not values:
            continue
        if len(values) > 1:
            raise BadChoice(f"Choose one {_lower(dim.label)}, not {len(values)}.")
        known = set(index.choices[dim.key])
        if dim.key == "branch":  # older spellings ("build-pytorch:main") still choose it
            values = [naming.canonical_branch(values[0], known)]
        chosen[dim.key] = _known_value(dim, values[0], known, (resolve or {}).get(dim.key))
    return chosen


def _known_value(
    dim: Dimension, value: str, known: set[str], resolve: Callable[[str], Sequence[str]] | None
) -> str:
    found = [v for v in resolve(value) if v in known] if resolve and value not in known else []
    if len(found) > 1:
        raise BadChoice(
            f"{_shown(value)} names several: choose one {_lower(dim.label)} of {', '.join(found)}."
        )
    if found:
        return found[0]
    if value not in known:
        raise BadChoice(
            f"There is no {_lower(dim.label)} {_shown(value)} in the catalogue "
            f"(choose one of: {', '.join(sorted(known))})."
        )
    return value


def query_string(chosen: Mapping[str, str]) -> str:
    """The choices as a query string, in dimension order (one URL per selection)."""
    return urlencode([(d.key, chosen[d.key]) for d in DIMENSIONS if d.key in chosen], safe="/")


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
    options: list[Option]  # those shown
    chosen: str | None
    folded: int = 0  # options left out until the facet is expanded
    expand_query: str = ""  # the query string that shows them (the choices and `more`)


# A facet with more options than this (the branches, as releases add them) shows the chosen one
# and the first FOLD_AFTER that the other choices leave variants for; a link expands the rest.
# The page then grows with what a reader can pick now, not with the catalogue's history.
FOLD_AFTER = 12
MORE = "more"  # the URL parameter naming a facet to show whole


def _fold(options: list[Option]) -> list[Option]:
    if len(options) <= FOLD_AFTER:
        return options
    keep = {id(o) for o in [o for o in options if o.count][:FOLD_AFTER]}
    return [o for o in options if o.selected or id(o) in keep]


@dataclass(frozen=True)
class Narrowed:
    facets: list[Facet]
    chosen: dict[str, str]
    count: int  # the variants every choice allows
    index: Index
    mask: int  # their bitset

    @property
    def matches(self) -> list[Row]:
        """The variants every choice allows (made as rows on asking: list them when few)."""
        return self.index.matching(self.mask)

    @property
    def unique(self) -> Row | None:
        """The one variant left, when a machine can run it: an impossible pairing is shown,
        marked, and never the answer."""
        if self.count == 1 and not self.matches[0].impossible:
            return self.matches[0]
        return None

    @property
    def query(self) -> str:
        return query_string(self.chosen)


@dataclass(frozen=True)
class Index:
    """Per dimension and value, a bitset of the rows that have it (one Python int; bit i is row
    i). Built once per catalogue structure; a count is then an AND and a `bit_count()`, so
    narrowing costs per option, not per variant.

    Compact, so that it is stored and loaded whole in milliseconds: the rows are kept as one
    string (repository, branch, pname and impossible pairing per line) plus the bitsets, and a
    row is made again only when asked for (the few a page lists)."""

    size: int
    lines: str  # row i's "repository\tbranch\tpname\timpossible" is line i
    masks: Mapping[str, Mapping[str, int]]  # dimension -> value -> bitset
    choices: Mapping[str, Mapping[str, Choice]]  # dimension -> value -> how it is shown

    def _row(self, lines: list[str], i: int) -> Row:
        repository, branch, pname, impossible = lines[i].split("\t")
        choices = {
            key: self.choices[key][value]
            for key, values in self.masks.items()
            for value, mask in values.items()
            if mask >> i & 1
        }
        return Row(repository, branch, pname, choices, impossible)

    def matching(self, mask: int) -> list[Row]:
        bits = bin(mask)[:1:-1]  # bit i at position i
        lines = self.lines.split("\n")
        return [self._row(lines, i) for i, bit in enumerate(bits) if bit == "1"]


def index_rows(rows: Iterable[Row]) -> Index:
    rows = tuple(rows)
    positions: dict[str, dict[str, list[int]]] = {d.key: {} for d in DIMENSIONS}
    choices: dict[str, dict[str, Choice]] = {d.key: {} for d in DIMENSIONS}
    for i, row in enumerate(rows):
        for key, choice in row.choices.items():
            positions[key].setdefault(choice.value, []).append(i)
            choices[key][choice.value] = choice
    masks = {
        key: {v: _bitset(found) for v, found in values.items()} for key, values in positions.items()
    }
    lines = "\n".join(f"{r.repository}\t{r.branch}\t{r.pname}\t{r.impossible}" for r in rows)
    return Index(len(rows), lines, masks, choices)


def _bitset(positions: list[int]) -> int:
    """The int with these bits set, built in one pass (OR-ing bit by bit is quadratic)."""
    if not positions:
        return 0
    bits = bytearray(positions[-1] // 8 + 1)
    for i in positions:
        bits[i // 8] |= 1 << (i % 8)
    return int.from_bytes(bits, "little")


def _as_index(rows: Index | Sequence[Row]) -> Index:
    return rows if isinstance(rows, Index) else index_rows(rows)


def _allowed(index: Index, chosen: Mapping[str, str], skip: str = "") -> int:
    """The bitset of rows that every choice but `skip`'s allows."""
    mask = (1 << index.size) - 1
    for key, value in chosen.items():
        if key != skip:
            mask &= index.masks[key].get(value, 0)
    return mask


def _reason(index: Index, key: str, choice: Choice, chosen: Mapping[str, str]) -> str:
    """Why `choice` leaves no variant: the choices no variant combines it with."""
    mask = index.masks[key][choice.value]
    clashes = [
        index.choices[k][chosen[k]].phrase if chosen[k] in index.choices[k] else chosen[k]
        for k in chosen
        if k != key and not mask & index.masks[k].get(chosen[k], 0)
    ]
    what = " and ".join(clashes) if clashes else "these choices together"
    return f"No build for {choice.phrase} with {what}"


def _facet(index: Index, dim: Dimension, chosen: Mapping[str, str], expand: bool) -> Facet:
    allowed = _allowed(index, chosen, skip=dim.key)  # a dimension's own choice does not count
    options = []
    for choice in sorted(index.choices[dim.key].values(), key=lambda c: (c.order, c.value)):
        count = (index.masks[dim.key][choice.value] & allowed).bit_count()
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
                "" if count else _reason(index, dim.key, choice, chosen),
                query_string(toggled),
            )
        )
    shown = options if expand else _fold(options)
    more = query_string(chosen)
    more += ("&" if more else "") + urlencode([(MORE, dim.key)])
    return Facet(dim, shown, chosen.get(dim.key), len(options) - len(shown), more)


def narrow(
    rows: Index | Sequence[Row], chosen: Mapping[str, str], expand: Collection[str] = ()
) -> Narrowed:
    """Every dimension's options for these choices, and the variants the choices leave; a long
    facet is folded (FOLD_AFTER) unless its key is in `expand`."""
    index = _as_index(rows)
    mask = _allowed(index, chosen)
    return Narrowed(
        facets=[_facet(index, dim, chosen, dim.key in expand) for dim in DIMENSIONS],
        chosen=dict(chosen),
        count=mask.bit_count(),
        index=index,
        mask=mask,
    )
