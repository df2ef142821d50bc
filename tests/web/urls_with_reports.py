"""The site's URLs with a stand-in for the reports pages, for the assessment page's hook."""

from django.http import HttpResponse
from django.urls import include, path

from config.urls import urlpatterns as site

reports = (
    [
        path(
            "assessments/<id:assessment_id>/reports/",
            lambda request, assessment_id: HttpResponse(),
            name="assessment_reports",
        )
    ],
    "reports",
)
urlpatterns = [*site, path("", include(reports))]
