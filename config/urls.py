from django.urls import include, path
from django.views.i18n import set_language

from config.health import healthz

# A body refused for its size gets its own page (413), every other bad request Django's.
handler400 = "config.errors.bad_request"

urlpatterns = [
    path("", include("assessments.urls")),
    path("", include("reports.urls")),
    path("", include("scoring.urls")),
    path("", include("portfolio.urls")),
    path("", include("spreadsheets.urls")),
    path("", include("probes.urls")),
    path("", include("webhooks.urls")),
    path("", include("notifications.urls")),
    path("accounts/", include("accounts.urls")),
    path("accounts/", include("sso.urls")),
    path("api/", include("config.api_urls")),
    path("v/", include("assessments.portal_urls")),
    path("v/", include("spreadsheets.portal_urls")),
    path("i18n/setlang/", set_language, name="set_language"),
    path("healthz", healthz, name="healthz"),
]
