"""URLs of the REST API, mounted at /api/ by config.urls: version 1, its schema and its docs."""

from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from assessments import api as assessments_api
from core.api.base import ApiNotFound
from questionnaires import api as questionnaires_api

app_name = "api"

v1 = [
    path(
        "questionnaires/",
        questionnaires_api.QuestionnaireList.as_view(),
        name="questionnaire-list",
    ),
    path(
        "questionnaires/<slug:slug>/",
        questionnaires_api.QuestionnaireDetail.as_view(),
        name="questionnaire-detail",
    ),
    path("vendors/", assessments_api.VendorList.as_view(), name="vendor-list"),
    path("vendors/<id:vendor_id>/", assessments_api.VendorDetail.as_view(), name="vendor-detail"),
    path("assessments/", assessments_api.AssessmentList.as_view(), name="assessment-list"),
    path(
        "assessments/<id:assessment_id>/",
        assessments_api.AssessmentDetail.as_view(),
        name="assessment-detail",
    ),
    path(
        "assessments/<id:assessment_id>/answers/",
        assessments_api.AssessmentAnswers.as_view(),
        name="assessment-answers",
    ),
    path(
        "assessments/<id:assessment_id>/evidence/",
        assessments_api.AssessmentEvidence.as_view(),
        name="assessment-evidence",
    ),
    path(
        "assessments/<id:assessment_id>/submit/",
        assessments_api.AssessmentSubmit.as_view(),
        name="assessment-submit",
    ),
    path(
        "assessments/<id:assessment_id>/rescore/",
        assessments_api.AssessmentRescore.as_view(),
        name="assessment-rescore",
    ),
    path(
        "assessments/<id:assessment_id>/runs/<id:run_id>/",
        assessments_api.AssessmentRun.as_view(),
        name="assessment-run",
    ),
    path(
        "assessments/<id:assessment_id>/review/",
        assessments_api.AssessmentReview.as_view(),
        name="assessment-review",
    ),
    path(
        "assessments/<id:assessment_id>/audit/",
        assessments_api.AssessmentAudit.as_view(),
        name="assessment-audit",
    ),
    path("", include("reports.api_urls")),
    path("", include("probes.api_urls")),
    path("", include("portfolio.api_urls")),
    path("", include("spreadsheets.api_urls")),
]

urlpatterns = [
    path("v1/", include(v1)),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script from a URL: no inline script under the
    # content security policy.
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="api:schema", template_name="api/swagger_ui.html"
        ),
        name="docs",
    ),
    # Last: any other address under /api/ is a JSON 404, not Django's HTML page.
    re_path(r"^", ApiNotFound.as_view()),
]
