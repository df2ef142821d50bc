"""A test-only URLconf: the REST API where config.urls will mount it."""

from django.urls import include, path

urlpatterns = [path("api/", include("config.api_urls"))]
