"""REST endpoints of reports, to be listed under /api/v1/ by config.api_urls.

No app_name: included into the "api" namespace, the names reverse as "api:report-detail".
"""

from django.urls import path

from . import api

urlpatterns = [
    path(
        "assessments/<id:assessment_id>/reports/",
        api.AssessmentReports.as_view(),
        name="assessment-reports",
    ),
    path("reports/<id:report_id>/", api.ReportDetail.as_view(), name="report-detail"),
    path(
        "reports/<id:report_id>/download/",
        api.ReportDownload.as_view(),
        name="report-download",
    ),
    path("portfolio-reports/", api.PortfolioReports.as_view(), name="portfolio-reports"),
    path(
        "portfolio-reports/<id:portfolio_report_id>/",
        api.PortfolioReportDetail.as_view(),
        name="portfolio-report-detail",
    ),
    path(
        "portfolio-reports/<id:portfolio_report_id>/download/",
        api.PortfolioReportDownload.as_view(),
        name="portfolio-report-download",
    ),
]
