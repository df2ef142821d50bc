"""Member pages of spreadsheets, mounted at the site root (namespace "spreadsheets")."""

from django.urls import path

from . import converters, views  # noqa: F401  (converters: registers <export:...>)

app_name = "spreadsheets"

urlpatterns = [
    path(
        "assessments/<id:assessment_id>/workbook/",
        views.workbook,
        name="workbook",
    ),
    path(
        "assessments/<id:assessment_id>/workbook/<str:language>.xlsx",
        views.workbook_download,
        name="workbook_download",
    ),
    path(
        "assessments/<id:assessment_id>/findings.<export:file_format>",
        views.findings_export,
        name="findings_export",
    ),
    path("portfolio.<export:file_format>", views.portfolio_export, name="portfolio_export"),
    path("questionnaires/import/", views.catalogue_import, name="catalogue_import"),
    path(
        "questionnaires/import/<slug:token>/",
        views.catalogue_import_mapping,
        name="catalogue_import_mapping",
    ),
]
