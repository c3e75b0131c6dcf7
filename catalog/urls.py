from django.urls import path

from catalog.views import browse, builds, compare, matrix, select, wizard

app_name = "catalog"

urlpatterns = [
    path("", browse.home, name="home"),
    # Reference pages (catalog/views/browse.py)
    path(
        "variants/<str:repository>/<str:branch>/<str:pname>/",
        browse.variant_detail,
        name="variant",
    ),
    path("architectures/", browse.architectures, name="architectures"),
    path("architectures/<slug:sm>/", browse.architecture_detail, name="architecture"),
    path("isas/", browse.isas, name="isas"),
    path("isas/<slug:slug>/", browse.isa_detail, name="isa"),
    path("branches/", browse.branches, name="branches"),
    path("branches/<str:repository>/<str:branch>/", browse.branch_detail, name="branch"),
    path("docs/", browse.docs, name="docs"),
    path("docs/<slug:slug>/", browse.doc, name="doc"),
    path("audit/", browse.audit, name="audit"),
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
    # Variant matrix and its data out (catalog/views/matrix.py)
    path("variants/", matrix.variant_matrix, name="variants"),
    path("api/variants", matrix.api_variants, name="api-variants"),
    # Which variant? (catalog/views/wizard.py)
    path("wizard/", wizard.wizard, name="wizard"),
    path("api/recommend", wizard.api_recommend, name="api-recommend"),
    # Choosing and comparing (catalog/views/select.py, catalog/views/compare.py)
    path("select/", select.selector, name="selector"),
    path("compare/", compare.compare, name="compare"),
    # Routes are grouped by area; each area's views live in catalog/views/<area>.py.
]
