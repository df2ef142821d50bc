"""A test-only URLconf: the report pages and API where config/urls.py and config/api_urls.py
will mount them (the pages link elsewhere only where those addresses exist)."""

from django.urls import include, path

api_v1 = [path("v1/", include("reports.api_urls"))]

urlpatterns = [
    path("", include("reports.urls")),
    path("accounts/", include("accounts.urls")),
    path("api/", include((api_v1, "api"))),
]
