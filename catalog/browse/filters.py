"""The variant matrix's filters: one FilterSet for /variants/ (page, grid, CSV) and /api/variants.

Several values of one parameter are alternatives (`?gpu=sm89&gpu=sm90`: either); different
parameters narrow each other. Values that come from the data (branch names, architectures, ISAs,
CUDA and Python versions) are passed in as `choices` so the caller can cache them; a value that is
not one of them is a form error on that field, never an empty result or a crash.
"""

from __future__ import annotations

import re

import django_filters
from django import forms
from django.db.models import Count, Q, QuerySet
from django.http import QueryDict

from catalog import cache, naming, queries
from catalog.models import BACKENDS, LIBRARIES, PLATFORMS, REPOSITORIES, STATUSES, GpuArchitecture
from catalog.wizard import cpu_models, gpus

VIEWS = [("list", "List"), ("grid", "Grid")]
FORMATS = [("html", "Web page"), ("csv", "CSV")]
# Sort keys people use (?sort=gpu, ?sort=-python) and the fields they order by.
SORT_FIELDS = {
    "pname": "pname",
    "branch": "branch__name",
    "library": "library",
    "gpu": "gpu_arch__arch_number",
    "isa": "cpu_isa__slug",
    "cuda": "cuda_version",
    "python": "python_version",
    "platform": "platform",
    "status": "status",
}
# What the sort menu and the list's headings call each key.
SORT_LABELS = {
    "pname": "Name",
    "branch": "Branch",
    "library": "Library",
    "gpu": "GPU architecture",
    "isa": "CPU ISA",
    "cuda": "CUDA",
    "python": "Python",
    "platform": "Platform",
    "status": "Status",
}
# Rows per page of the list view; "all" is the whole selection on one page.
PER_PAGE = [("50", "50"), ("100", "100"), ("200", "200"), ("all", "All")]
DEFAULT_PER_PAGE = "50"
# Each facet (a filter whose values get counts) and the fields its values are read from: one
# GROUP BY query per facet, whatever the catalogue's size.
FACETS = {
    "repository": ("branch__repository",),
    "branch": ("branch__repository", "branch__name"),
    "library": ("library",),
    "backend": ("backend",),
    "gpu": ("gpu_arch__sm", "backend"),
    "isa": ("cpu_isa__slug",),
    "platform": ("platform",),
    "cuda": ("cuda_version",),
    "python": ("python_version",),
    "status": ("status",),
}
LIVE_FACETS = ("status",)  # counted per request: a build record changes them
VERSION_RE = re.compile(r"(?:python|py|cuda|cu)?(\d+(?:\.\d+)+)")
MAX_SEARCH_LENGTH, MAX_SEARCH_WORDS = 100, 8
MAX_NAME_WORDS = 4  # words in the longest GPU name a search reads whole ("geforce rtx 4090 ti")
APPLE_CHIPS = frozenset({"m1", "m2", "m3", "m4"})  # archspec's Apple targets: the MPS build
CACHED_CHOICES = [("1", "Cached only")]  # ?cached=1
NONE = "none"  # ?gpu=none: no GPU architecture (CPU-only and MPS); ?isa=none: no ISA (MPS)
# GPU values for variants without a catalogued architecture, as the selector names them, so any
# selector choice is also a valid ?gpu=: the Apple GPU, and CUDA targets no architecture matches.
GPU_BACKENDS = {"mps": "mps", "unknown": "cuda"}
SHOWN_WHEN_FOUND = frozenset({"unknown"})  # a checkbox only while some variant has it
# Parameters whose values may be written as the site writes them elsewhere ('Hopper', 'sm_90',
# '9.0', 'H100'; 'AVX-512'): read into slugs by catalog.naming's resolvers. A family name may
# stand for several architectures ('Blackwell'): all of them, as alternatives.
WRITTEN = {"gpu": naming.resolve_gpu, "isa": naming.resolve_name}
Checkboxes = forms.CheckboxSelectMultiple


class MatrixForm(forms.Form):
    """Presentation parameters, validated with the filters so their errors show beside them."""

    view = forms.ChoiceField(choices=VIEWS, required=False, widget=forms.RadioSelect, label="View")
    format = forms.ChoiceField(choices=FORMATS, required=False, label="Format")
    per_page = forms.ChoiceField(choices=PER_PAGE, required=False, label="Rows per page")
    page = forms.IntegerField(min_value=1, max_value=100_000, required=False, label="Page")

    def clean_q(self):
        # Each word becomes a LIKE pattern; SQLite refuses overlong ones, and a search needs few.
        value = self.cleaned_data.get("q") or ""
        if len(value.split()) > MAX_SEARCH_WORDS:
            raise forms.ValidationError(f"Search with at most {MAX_SEARCH_WORDS} words.")
        return value

    def clean_view(self):
        return self.cleaned_data.get("view") or "list"

    def clean_format(self):
        return self.cleaned_data.get("format") or "html"

    def clean_per_page(self):
        return self.cleaned_data.get("per_page") or DEFAULT_PER_PAGE

    def clean_page(self):
        return self.cleaned_data.get("page") or 1


class SortFilter(django_filters.OrderingFilter):
    def filter(self, qs, value):
        ordered = super().filter(qs, value)
        if value:
            # Ties keep the matrix's reading order.
            ordered = ordered.order_by(*ordered.query.order_by, *queries.MATRIX_ORDER)
        return ordered


def _read_written(data, choices: dict):
    """The query with each GPU or ISA value that is not a slug read as written (naming); a value
    no name matches stays, for the form to refuse."""
    known = {key: {value for value, _label in choices.get(key, ())} for key in WRITTEN}
    if data is None or all(v in known[k] for k in WRITTEN for v in data.getlist(k)):
        return data
    names = queries.written_names()
    data = data.copy()
    for key, resolve in WRITTEN.items():
        values: list[str] = []
        for value in data.getlist(key):
            found = [s for s in resolve(value, names[key]) if s in known[key]]
            values += [value] if value in known[key] or not found else found
        data.setlist(key, list(dict.fromkeys(values)))
    return data


def _facet_values(name: str, row: dict, fields) -> list[str]:
    """The values one GROUP BY row counts for: a variant without a GPU architecture counts for
    `none` and for its own kind (`mps`, `unknown`)."""
    if name == "gpu":
        sm, backend = row["gpu_arch__sm"], row["backend"]
        return [sm] if sm else [NONE, *(k for k, b in GPU_BACKENDS.items() if b == backend)]
    return ["/".join(row[f] or NONE for f in fields)]


def _multi(label, choices=(), field_name=None, **kwargs):
    return django_filters.MultipleChoiceFilter(
        label=label,
        choices=choices,
        field_name=field_name,
        widget=Checkboxes,
        distinct=False,  # every lookup follows a forward foreign key: no duplicate rows
        **kwargs,
    )


class VariantFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(
        label="Search",
        method="filter_text",
        max_length=MAX_SEARCH_LENGTH,
        help_text="package name, GPU model (e.g. RTX 4090, H100) or use case",
    )
    repository = _multi("Repository", REPOSITORIES, "branch__repository")
    # "build-pytorch/main"; a bare "main" means that branch in every repository.
    branch = _multi("Branch", method="filter_branch")
    library = _multi("Library", LIBRARIES, "library")
    backend = _multi("Backend", BACKENDS, "backend")
    gpu = _multi("GPU architecture", method="filter_gpu")
    isa = _multi("CPU ISA", method="filter_isa")
    platform = _multi("Platform", PLATFORMS, "platform")
    cuda = _multi("CUDA", field_name="cuda_version")
    python = _multi("Python", field_name="python_version")
    status = _multi("Status", STATUSES, "status")
    cached = django_filters.ChoiceFilter(
        label="Cached only",
        choices=CACHED_CHOICES,
        method="filter_cached",
        help_text="in a configured binary cache at its last check: nothing to compile",
    )
    sort = SortFilter(
        label="Sort by",
        empty_label="Branch, library, hardware",
        fields=[(field, key) for key, field in SORT_FIELDS.items()],
        field_labels={field: SORT_LABELS[key] for key, field in SORT_FIELDS.items()},
    )

    class Meta:
        form = MatrixForm
        fields: list = []

    def __init__(self, data=None, queryset=None, *, choices=None, **kwargs):
        if queryset is None:
            queryset = queries.matrix_variants()
        choices = choices if choices is not None else queries.matrix_choices()
        super().__init__(_read_written(data, choices), queryset, **kwargs)
        for name, values in choices.items():
            self.filters[name].extra["choices"] = values

    def filter_queryset(self, queryset, skip: str = ""):
        # The form also carries `view`, `format` and paging, which are not filters.
        for name, value in self.form.cleaned_data.items():
            if name in self.filters and name != skip:
                queryset = self.filters[name].filter(queryset, value)
        return queryset

    def facet_counts(self) -> dict[str, dict[str, int]]:
        """Per facet, how many variants each value would give with the other filters as they are
        (a facet's own choice does not narrow its counts, so its other values stay useful).

        With no filter set (the default page), the counts but the statuses' are read from the
        snapshot the writers store (one query, however large the catalogue); the statuses,
        which build records change, are counted live."""
        cleaned = self.form.cleaned_data
        if not any(cleaned.get(name) for name in self.filters):
            return {**cache.snapshot("matrix-facets"), **self._counts(LIVE_FACETS)}
        return self._counts(FACETS)

    def _counts(self, names) -> dict[str, dict[str, int]]:
        counts = {}
        for name in names:
            fields = FACETS[name]
            rows = (
                self.filter_queryset(self.queryset, skip=name)
                .order_by()
                .values(*fields)
                .annotate(n=Count("pk"))
            )
            counts[name] = tally = {}
            for row in rows.iterator():
                for value in _facet_values(name, row, fields):
                    tally[value] = tally.get(value, 0) + row["n"]
        return counts

    @classmethod
    def stored_facet_counts(cls) -> dict[str, dict[str, int]]:
        """The default page's counts of every facet that build records leave alone."""
        unfiltered = cls(QueryDict())
        unfiltered.form.is_valid()
        return unfiltered._counts([name for name in FACETS if name not in LIVE_FACETS])

    def filter_branch(self, queryset: QuerySet, name: str, values: list[str]) -> QuerySet:
        if not values:
            return queryset
        q = Q(pk__in=[])
        for value in values:
            repository, _, branch = value.rpartition("/")
            q |= Q(
                branch__name=branch, **({"branch__repository": repository} if repository else {})
            )
        return queryset.filter(q)

    @staticmethod
    def _with_none(field, values):
        chosen = [v for v in values if v != NONE]
        q = Q(**{f"{field}__in": chosen}) if chosen else Q(pk__in=[])
        if NONE in values:
            q |= Q(**{f"{field}__isnull": True})
        return q

    def filter_cached(self, queryset, name, value):
        if value != "1":
            return queryset
        # Facet counts filter once per facet: work out the cached set once per request.
        if not hasattr(self, "_cached_ids"):
            self._cached_ids = queries.cached_variant_ids()
        return queryset.filter(pk__in=self._cached_ids)

    def filter_gpu(self, queryset, name, values):
        if not values:
            return queryset
        q = self._with_none("gpu_arch__sm", [v for v in values if v not in GPU_BACKENDS])
        for value in GPU_BACKENDS.keys() & set(values):
            q |= Q(backend=GPU_BACKENDS[value], gpu_arch__isnull=True)
        return queryset.filter(q)

    def filter_isa(self, queryset, name, values):
        return queryset.filter(self._with_none("cpu_isa__slug", values)) if values else queryset

    def filter_text(self, queryset, name, value):
        # Every word must match somewhere: "h100 python3.12" = a Hopper variant for Python 3.12.
        # A GPU or Apple chip name at the start ("RTX 3060", "M2") is read whole, as the wizard
        # reads it: its architecture's builds (or the Mac build), then the other words.
        words = value.split()
        hardware, words = self._hardware(words)
        if hardware is not None:
            queryset = queryset.filter(hardware)
        for word in words:
            queryset = queryset.filter(self._term(word))
        return queryset

    @staticmethod
    def _hardware(words: list[str]) -> tuple[Q | None, list[str]]:
        """(filter, remaining words) for the longest leading run of words naming a GPU or an
        Apple chip; (None, words) when the search does not start with one."""
        catalogue = queries.recommend_catalogue()
        for n in range(min(len(words), MAX_NAME_WORDS), 0, -1):
            text = " ".join(words[:n])
            chip = cpu_models.resolve_cpu_model(text)
            if chip is not None and chip.target in APPLE_CHIPS:
                return Q(backend="mps"), words[n:]
            gpu = gpus.exact_gpu_name(text, catalogue)
            if gpu is not None:
                return Q(gpu_arch__sm=gpu.sm), words[n:]
        return None, words

    @staticmethod
    def _term(word: str) -> Q:
        """Where one search word may match: package name, GPU (model, alias, family, SM), CPU
        ISA, branch, repository, use case; a version ("3.12", "python3.12", "cu12.8") also
        matches the Python or CUDA version, and its dotless form the package name."""
        matching_archs = GpuArchitecture.objects.filter(
            Q(models__name__icontains=word) | Q(models__aliases__icontains=word)
        ).values("pk")
        q = (
            Q(pname__icontains=word)
            | Q(use_case__icontains=word)
            | Q(gpu_arch__name__icontains=word)
            | Q(gpu_arch__sm__iexact=word)
            | Q(gpu_arch__in=matching_archs)
            | Q(cpu_isa__slug__iexact=word)
            | Q(cpu_isa__label__iexact=word)
            | Q(branch__name__iexact=word)
            | Q(branch__repository__iexact=word)
        )
        version = VERSION_RE.fullmatch(word.lower())
        if version:
            number = version[1]
            q |= (
                Q(python_version=number)
                | Q(cuda_version=number)
                | Q(pname__icontains=word.replace(".", ""))
            )
        return q

    @property
    def view(self):
        return self.form.cleaned_data.get("view", "list")

    @property
    def format(self):
        return self.form.cleaned_data.get("format", "html")


cache.register_snapshot("matrix-facets", VariantFilter.stored_facet_counts)
