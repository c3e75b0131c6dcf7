from django.urls import path

from catalog.views import browse

app_name = "catalog"

urlpatterns = [
    path("", browse.home, name="home"),
    # Routes are grouped by area; each area's views live in catalog/views/<area>.py.
]
