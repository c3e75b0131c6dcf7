"""How one answer's values are read: each function takes the values given for a field (a list of
strings) and the catalogue, and returns the normalised value or raises `AnswerError`.

The Step records (catalog.wizard.steps) name these readers; the engine's input normalisation
(catalog.wizard.answers) calls them and attaches the field to any error. Plain Python.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from catalog import naming
from catalog.wizard import cpus
from catalog.wizard import gpus as gpu_names

if TYPE_CHECKING:
    from catalog.wizard.snapshot import Catalogue
    from catalog.wizard.steps import Choice


class AnswerError(ValueError):
    """A bad answer: a sentence for the user and the field it concerns."""

    def __init__(self, message: str, field: str = ""):
        super().__init__(message)
        self.message = message
        self.field = field

    def on(self, field: str) -> AnswerError:
        """The same error, attached to `field` unless it already names one."""
        return self if self.field else AnswerError(self.message, field)


def _one(values: list[str], what: str) -> str:
    distinct = list(dict.fromkeys(v for v in values if v))
    if len(distinct) > 1:
        shown = ", ".join(distinct[:3])
        raise AnswerError(f"Give one {what}, not {len(distinct)} ({shown}).")
    return distinct[0] if distinct else ""


def choice(
    what: str, choices: Iterable[Choice], refusals: dict[str, str] | None = None
) -> Callable:
    """A reader for one of `choices` (Choice records with aliases), case-insensitive.

    `refusals` maps a prefix to a sentence for values that are known but not built
    ("windows" -> "There are no Windows builds ...")."""
    spellings = {alias.lower(): c.value for c in choices for alias in (c.value, *c.aliases)}
    names = " or ".join(", ".join(c.value for c in choices).rsplit(", ", 1))

    def read(values: list[str], catalogue: Catalogue | None = None) -> str:
        value = _one(values, what).lower()
        if not value:
            return ""
        if value in spellings:
            return spellings[value]
        for prefix, sentence in (refusals or {}).items():
            if value.startswith(prefix):
                raise AnswerError(sentence)
        raise AnswerError(f"Unknown {what} {value!r}: choose {names}.")

    return read


def arch(values: list[str], catalogue: Catalogue | None = None) -> str:
    value = _one(values, "CPU architecture").lower()
    if value and value not in cpus.ARCH_ALIASES:
        raise AnswerError(f"Unknown CPU architecture {value!r}: choose x86_64 or aarch64 (arm64).")
    return cpus.ARCH_ALIASES.get(value, "")


def text(values: list[str], catalogue: Catalogue | None = None) -> str:
    return _one(values, "value")


def texts(values: list[str], catalogue: Catalogue | None = None) -> list[str]:
    """Every value, in order (a list answer such as several GPU names)."""
    return list(values)


def words(values: list[str], catalogue: Catalogue | None = None) -> list[str]:
    """Space- or comma-separated words from every value, lower-cased, without duplicates."""
    out = []
    for value in values:
        out += value.replace(",", " ").lower().split()
    # A pasted `lscpu` line keeps its "Flags:" label.
    return [
        w for w in dict.fromkeys(out) if w not in ("flags:", "features:", "flags", "features", ":")
    ]


def version(what: str, parts: int) -> Callable:
    """A reader for a version like 550.54.15 (`parts` numbers at least)."""
    example = {1: "550.54.15", 2: "12.8"}.get(parts, "12.8")

    def read(values: list[str], catalogue: Catalogue | None = None) -> str:
        value = _one(values, f"{what} version")
        if not value:
            return ""
        pieces = value.split(".")
        if not parts <= len(pieces) <= 4 or not all(p.isdigit() and len(p) <= 5 for p in pieces):
            raise AnswerError(f"{what} version {value!r} is not a version like {example}.")
        return value

    return read


def compute_capabilities(values: list[str], catalogue: Catalogue | None = None) -> list[str]:
    """Compute capabilities ('9.0'), or an architecture as the site writes it elsewhere
    ('sm90', 'sm_90', 'Hopper', 'H100'), read by naming.resolve_gpu."""
    return [_compute_capability(value, catalogue) if value else value for value in values]


def _compute_capability(value: str, catalogue: Catalogue | None) -> str:
    if gpu_names.is_compute_capability(value):
        return value
    sms = naming.resolve_gpu(value, catalogue.gpu_names() if catalogue else ())
    if len(sms) > 1:
        raise AnswerError(
            f"{value!r} names several GPU architectures ("
            f"{', '.join(naming.compute_capability_from_sm(sm) for sm in sms)}): give one."
        )
    if not sms:
        raise AnswerError(
            f"Compute capability {value!r} is not of the form MAJOR.MINOR, e.g. 8.6 (an "
            "architecture such as sm86 or a GPU family such as Hopper is read too)."
        )
    return naming.compute_capability_from_sm(sms[0])


def counts(values: list[str], catalogue: Catalogue | None = None) -> list[int]:
    """How many of each GPU (paired with the GPU names in order); empty means one."""
    out = []
    for value in values:
        value = value or "1"
        if not value.isdigit() or not 1 <= int(value) <= 10_000:
            raise AnswerError(f"GPU count {value!r} is not a number from 1 up.")
        out.append(int(value))
    return out


def isas(values: list[str], catalogue: Catalogue) -> list[str]:
    """ISA slugs, written as the site writes them ('avx512', 'AVX-512', 'armv8.2', 'AVX-512
    BF16'; naming.resolve_name), several separated by spaces or commas; all of one architecture."""
    known = catalogue.isa_names()
    slugs = []
    for value in values:
        whole = naming.resolve_name(value, known)
        words = [value] if whole else value.replace(",", " ").split()
        for word in words:
            found = naming.resolve_name(word, known)
            if not found:
                choices = ", ".join(i.slug for i in catalogue.isas)
                raise AnswerError(f"Unknown CPU ISA {word!r}: choose one of {choices}.")
            slugs.append(found[0])
    arches = {catalogue.known_isa(s).arch for s in slugs}
    if len(arches) > 1:
        raise AnswerError(f"The ISAs {', '.join(slugs)} belong to different architectures.")
    return list(dict.fromkeys(slugs))


def microarchitecture(values: list[str], catalogue: Catalogue | None = None) -> str:
    value = _one(values, "CPU microarchitecture").lower()
    if value and not cpus.target_arch(value):
        raise AnswerError(
            f"Unknown CPU microarchitecture {value!r}: give an archspec name such as "
            "haswell, sapphirerapids, zen4 or neoverse_v2."
        )
    return value


def lower_words(values: Iterable[str], catalogue: Catalogue | None = None) -> list[str]:
    return [w for v in values for w in v.replace(",", " ").lower().split()]
