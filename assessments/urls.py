from django.urls import path

from . import views

app_name = "assessments"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("assessments/<int:assessment_id>/", views.assessment_detail, name="detail"),
    path("assessments/<int:assessment_id>/invite/", views.vendor_invite, name="invite"),
    path("assessments/<int:assessment_id>/rescore/", views.assessment_rescore, name="rescore"),
    path("links/<int:link_id>/revoke/", views.vendor_link_revoke, name="link_revoke"),
    path("evidence/<int:evidence_id>/download/", views.evidence_download, name="evidence_download"),
]
