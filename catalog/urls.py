from django.urls import path

from catalog.views import browse
from catalog.views import builds

app_name = "catalog"

urlpatterns = [
    path("", browse.home, name="home"),
    # Build status (catalog/views/builds.py)
    path("api/builds", builds.api_builds, name="api-builds"),
    path(
        "variants/<str:repository>/<str:branch>/<str:pname>/badge.svg",
        builds.variant_badge,
        name="variant-badge",
    ),
    path("branches/<str:repository>/<str:branch>/badge.svg", builds.branch_badge, name="branch-badge"),
    # Routes are grouped by area; each area's views live in catalog/views/<area>.py.
]
