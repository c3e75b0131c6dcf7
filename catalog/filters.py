"""The variant matrix's filters: one FilterSet for /variants/ (page, grid, CSV) and /api/variants.

Several values of one parameter are alternatives (`?gpu=sm89&gpu=sm90`: either); different
parameters narrow each other. Values that come from the data (branch names, architectures, ISAs,
CUDA and Python versions) are passed in as `choices` so the caller can cache them; a value that is
not one of them is a form error on that field, never an empty result or a crash.
"""

from __future__ import annotations

import django_filters
from django import forms
from django.db.models import Q

from catalog import selectors
from catalog.models import BACKENDS, LIBRARIES, PLATFORMS, REPOSITORIES, STATUSES, GpuArchitecture

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
MAX_SEARCH_LENGTH, MAX_SEARCH_WORDS = 100, 8
NONE = "none"  # ?gpu=none: no GPU architecture (CPU-only and MPS); ?isa=none: no ISA (MPS)
Checkboxes = forms.CheckboxSelectMultiple


class MatrixForm(forms.Form):
    """Presentation parameters, validated with the filters so their errors show beside them."""

    view = forms.ChoiceField(choices=VIEWS, required=False, widget=forms.RadioSelect, label="View")
    format = forms.ChoiceField(choices=FORMATS, required=False, label="Format")

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


class SortFilter(django_filters.OrderingFilter):
    def filter(self, qs, value):
        ordered = super().filter(qs, value)
        if value:
            # Ties keep the matrix's reading order.
            ordered = ordered.order_by(*ordered.query.order_by, *selectors.MATRIX_ORDER)
        return ordered


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
    branch = _multi("Branch", field_name="branch__name")
    library = _multi("Library", LIBRARIES, "library")
    backend = _multi("Backend", BACKENDS, "backend")
    gpu = _multi("GPU architecture", method="filter_gpu")
    isa = _multi("CPU ISA", method="filter_isa")
    platform = _multi("Platform", PLATFORMS, "platform")
    cuda = _multi("CUDA", field_name="cuda_version")
    python = _multi("Python", field_name="python_version")
    status = _multi("Status", STATUSES, "status")
    sort = SortFilter(
        label="Sort by",
        empty_label="Branch, library, hardware",
        fields=[(field, key) for key, field in SORT_FIELDS.items()],
        field_labels={field: key for key, field in SORT_FIELDS.items()},
    )

    class Meta:
        form = MatrixForm
        fields: list = []

    def __init__(self, data=None, queryset=None, *, choices=None, **kwargs):
        if queryset is None:
            queryset = selectors.matrix_variants()
        super().__init__(data, queryset, **kwargs)
        choices = choices if choices is not None else selectors.matrix_choices()
        for name, values in choices.items():
            self.filters[name].extra["choices"] = values

    def filter_queryset(self, queryset):
        # The form also carries `view` and `format`, which are not filters.
        for name, value in self.form.cleaned_data.items():
            if name in self.filters:
                queryset = self.filters[name].filter(queryset, value)
        return queryset

    @staticmethod
    def _with_none(field, values):
        chosen = [v for v in values if v != NONE]
        q = Q(**{f"{field}__in": chosen}) if chosen else Q(pk__in=[])
        if NONE in values:
            q |= Q(**{f"{field}__isnull": True})
        return q

    def filter_gpu(self, queryset, name, values):
        return queryset.filter(self._with_none("gpu_arch__sm", values)) if values else queryset

    def filter_isa(self, queryset, name, values):
        return queryset.filter(self._with_none("cpu_isa__slug", values)) if values else queryset

    def filter_text(self, queryset, name, value):
        # Every word must match somewhere: "4090 avx512" = an SM89 variant built for AVX-512.
        for word in value.split():
            matching_archs = GpuArchitecture.objects.filter(
                Q(models__name__icontains=word) | Q(models__aliases__icontains=word)
            ).values("pk")
            queryset = queryset.filter(
                Q(pname__icontains=word)
                | Q(use_case__icontains=word)
                | Q(gpu_arch__name__icontains=word)
                | Q(gpu_arch__in=matching_archs)
            )
        return queryset

    @property
    def view(self):
        return self.form.cleaned_data.get("view", "list")

    @property
    def format(self):
        return self.form.cleaned_data.get("format", "html")
