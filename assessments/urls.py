"""Member pages, mounted at the site root (the vendor portal is under /v/, the API under /api/)."""

from django.urls import path

from .views import clients, compare, dashboard, detail, editing, evidence, findings, review, threads

app_name = "assessments"

urlpatterns = [
    path("", dashboard.dashboard, name="dashboard"),
    path("vendors/", dashboard.vendor_list, name="vendor_list"),
    path("vendors/new/", dashboard.vendor_create, name="vendor_create"),
    path("vendors/<id:vendor_id>/", dashboard.vendor_edit, name="vendor_edit"),
    path("orgs/<slug:organization_slug>/clients/", clients.clients, name="clients"),
    path("orgs/<slug:organization_slug>/copy/", clients.client_copy_view, name="client_copy"),
    path(
        "orgs/<slug:organization_slug>/consultancy/end/",
        clients.client_engagement_end_view,
        name="client_engagement_end",
    ),
    path("assessments/new/", editing.assessment_create, name="create"),
    path("assessments/compare/", compare.compare, name="compare"),
    path("assessments/<id:assessment_id>/", detail.assessment_detail, name="detail"),
    path("assessments/<id:assessment_id>/edit/", editing.assessment_edit, name="edit"),
    path(
        "assessments/<id:assessment_id>/edit/draft/",
        editing.assessment_edit_autosave,
        name="edit_autosave",
    ),
    path(
        "assessments/<id:assessment_id>/progress/",
        detail.assessment_progress,
        name="progress",
    ),
    path(
        "assessments/<id:assessment_id>/findings/",
        findings.assessment_findings,
        name="findings",
    ),
    path(
        "assessments/<id:assessment_id>/findings/<str:rule_id>/decisions/",
        findings.risk_decision_create,
        name="risk_decision",
    ),
    path("assessments/<id:assessment_id>/review/", review.assessment_review, name="review"),
    path(
        "assessments/<id:assessment_id>/questions/<str:question_code>/thread/",
        threads.thread_page,
        name="thread",
    ),
    path(
        "assessments/<id:assessment_id>/questions/<str:question_code>/thread/status/",
        threads.thread_status,
        name="thread_status",
    ),
    path("assessments/<id:assessment_id>/invite/", detail.vendor_invite, name="invite"),
    path("assessments/<id:assessment_id>/rescore/", detail.assessment_rescore, name="rescore"),
    path("links/<id:link_id>/reinvite/", detail.vendor_link_reinvite, name="link_reinvite"),
    path("links/<id:link_id>/revoke/", detail.vendor_link_revoke, name="link_revoke"),
    path(
        "evidence/<id:evidence_id>/download/", evidence.evidence_download, name="evidence_download"
    ),
]
