"""REST endpoints of the probe, to be listed under /api/v1/ by config.api_urls.

No app_name: included into the "api" namespace, the names reverse as "api:probe-run-detail".
"""

from django.urls import path

from . import api

urlpatterns = [
    path(
        "assessments/<id:assessment_id>/probe/",
        api.AssessmentProbe.as_view(),
        name="assessment-probe",
    ),
    path(
        "assessments/<id:assessment_id>/probe-runs/",
        api.AssessmentProbeRuns.as_view(),
        name="assessment-probe-runs",
    ),
    path("probe-runs/<id:probe_run_id>/", api.ProbeRunDetail.as_view(), name="probe-run-detail"),
]
