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
    path("portfolio-reports/", views.portfolio_reports, name="portfolio_reports"),
    path("portfolio-reports/clients/", views.client_overview, name="client_overview"),
    path(
        "portfolio-reports/<id:portfolio_report_id>/",
        views.portfolio_report_status,
        name="portfolio_report_status",
    ),
    path(
        "portfolio-reports/<id:portfolio_report_id>/download/",
        views.portfolio_report_download,
        name="portfolio_report_download",
    ),
]
