"""A test-only URLconf: the vendor portal mounted where config/urls.py mounts it."""

from django.urls import include, path

urlpatterns = [path("v/", include("assessments.portal_urls"))]
