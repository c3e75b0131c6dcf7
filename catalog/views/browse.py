"""Pages for browsing the catalogue."""
from django.shortcuts import render

from catalog import selectors


def home(request):
    branches = list(selectors.branches_with_counts())
    return render(
        request,
        "catalog/home.html",
        {
            "branches": branches,
            "total_variants": sum(b.variant_count for b in branches),
            "architectures": selectors.architectures_with_counts(),
            "isas": selectors.isas_with_counts(),
            "docs": selectors.doc_pages(),
        },
    )
