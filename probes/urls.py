"""The probe's pages: the assessor's probe page of an assessment (member pages, at the site
root like the other assessment pages) and the vendor's probe page (under the portal's `v/`)."""

from django.urls import path

from . import portal, views

app_name = "probes"

urlpatterns = [
    path(
        "assessments/<id:assessment_id>/probe/",
        views.assessment_probe,
        name="assessment_probe",
    ),
    path(
        "assessments/<id:assessment_id>/probe/runs/",
        views.probe_run_start,
        name="run_start",
    ),
    path(
        "probe-runs/<id:probe_run_id>/progress/",
        views.probe_run_progress,
        name="run_progress",
    ),
    path("v/<str:token>/probe/", portal.probe_setup, name="portal_setup"),
]
