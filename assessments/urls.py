"""Member pages, mounted at the site root (the vendor portal is under /v/, the API under /api/)."""

from django.urls import path

from . import views

app_name = "assessments"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("vendors/", views.vendor_list, name="vendor_list"),
    path("vendors/new/", views.vendor_create, name="vendor_create"),
    path("vendors/<int:vendor_id>/", views.vendor_edit, name="vendor_edit"),
    path("assessments/new/", views.assessment_create, name="create"),
    path("assessments/compare/", views.compare, name="compare"),
    path("assessments/<int:assessment_id>/", views.assessment_detail, name="detail"),
    path("assessments/<int:assessment_id>/edit/", views.assessment_edit, name="edit"),
    path(
        "assessments/<int:assessment_id>/progress/",
        views.assessment_progress,
        name="progress",
    ),
    path(
        "assessments/<int:assessment_id>/findings/",
        views.assessment_findings,
        name="findings",
    ),
    path(
        "assessments/<int:assessment_id>/findings/<str:rule_id>/decisions/",
        views.risk_decision_create,
        name="risk_decision",
    ),
    path("assessments/<int:assessment_id>/review/", views.assessment_review, name="review"),
    path("assessments/<int:assessment_id>/invite/", views.vendor_invite, name="invite"),
    path("assessments/<int:assessment_id>/rescore/", views.assessment_rescore, name="rescore"),
    path("links/<int:link_id>/reinvite/", views.vendor_link_reinvite, name="link_reinvite"),
    path("links/<int:link_id>/revoke/", views.vendor_link_revoke, name="link_revoke"),
    path("evidence/<int:evidence_id>/download/", views.evidence_download, name="evidence_download"),
]
