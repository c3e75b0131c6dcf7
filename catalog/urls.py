from django.urls import path

from catalog.browse.views import compare, matrix, pages, search, select
from catalog.views import builds, pending
from catalog.wizard import views as wizard

app_name = "catalog"

urlpatterns = [
    path("", pages.home, name="home"),
    # Reference pages (catalog/browse/views/pages.py)
    path(
        "variants/<str:repository>/<str:branch>/<str:pname>/",
        pages.variant_detail,
        name="variant",
    ),
    path("architectures/", pages.architectures, name="architectures"),
    path("architectures/<slug:sm>/", pages.architecture_detail, name="architecture"),
    path("isas/", pages.isas, name="isas"),
    path("isas/<slug:slug>/", pages.isa_detail, name="isa"),
    path("branches/", pages.branches, name="branches"),
    path("branches/<str:repository>/<str:branch>/", pages.branch_detail, name="branch"),
    # What export would change in a branch, staff only (catalog/views/pending.py)
    path("branches/<str:repository>/<str:branch>/pending/", pending.pending, name="branch-pending"),
    path("docs/", pages.docs, name="docs"),
    path("docs/<slug:slug>/", pages.doc, name="doc"),
    path("audit/", pages.audit, name="audit"),
    # Build status (catalog/views/builds.py)
    path("api/builds", builds.api_builds, name="api-builds"),
    path(
        "variants/<str:repository>/<str:branch>/<str:pname>/badge.svg",
        builds.variant_badge,
        name="variant-badge",
    ),
    path(
        "branches/<str:repository>/<str:branch>/badge.svg", builds.branch_badge, name="branch-badge"
    ),
    # Variant matrix and its data out (catalog/browse/views/matrix.py)
    path("variants/", matrix.variant_matrix, name="variants"),
    path("api/variants", matrix.api_variants, name="api-variants"),
    # One search over everything (catalog/browse/views/search.py)
    path("search/", search.search_page, name="search"),
    path("api/search", search.api_search, name="api-search"),
    # Which variant? (catalog/wizard/views.py)
    path("wizard/", wizard.wizard, name="wizard"),
    path("api/recommend", wizard.api_recommend, name="api-recommend"),
    # Choosing and comparing (catalog/browse/views/select.py, catalog/browse/views/compare.py)
    path("select/", select.selector, name="selector"),
    path("compare/", compare.compare, name="compare"),
    # Routes are grouped by use: browse/views/, wizard/views.py, and core views in views/.
]
