"""The member pages without the reports pages (as before the reports app is mounted)."""

from django.urls import include, path

urlpatterns = [
    path("", include("assessments.urls")),
    path("accounts/", include("accounts.urls")),
    path("v/", include("assessments.portal_urls")),
]
