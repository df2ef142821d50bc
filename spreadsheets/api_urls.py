"""REST endpoints of exports, listed under /api/v1/ by config.api_urls (no app_name: the names
reverse as "api:findings-export")."""

from django.urls import path

from . import api, converters  # noqa: F401  (converters: registers <export:...>)

urlpatterns = [
    path(
        "assessments/<id:assessment_id>/findings.<export:file_format>",
        api.FindingsExport.as_view(),
        name="findings-export",
    ),
    path("portfolio.<export:file_format>", api.PortfolioExport.as_view(), name="portfolio-export"),
]
