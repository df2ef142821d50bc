"""A test-only URLconf: the vendor portal mounted where config/urls.py mounts it (its pages link
to the workbook page, which the spreadsheets app mounts beside them)."""

from django.urls import include, path

urlpatterns = [
    path("v/", include("assessments.portal_urls")),
    path("v/", include("spreadsheets.portal_urls")),
]
