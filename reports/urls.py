"""Web pages of reports, mounted at the site root by config.urls (namespace "reports")."""

from django.urls import path

from . import views

app_name = "reports"

urlpatterns = [
    path(
        "assessments/<id:assessment_id>/reports/",
        views.assessment_reports,
        name="assessment_reports",
    ),
    path("reports/verify/", views.report_verify, name="verify"),
    path("reports/<id:report_id>/", views.report_status, name="status"),
    path("reports/<id:report_id>/download/", views.report_download, name="download"),
]
