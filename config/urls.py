from importlib.util import find_spec

from django.urls import include, path
from django.views.i18n import set_language

urlpatterns = [
    path("", include("assessments.urls")),
    path("accounts/", include("accounts.urls")),
    path("i18n/setlang/", set_language, name="set_language"),
]
# TEMPORARY while the API and portal modules are being written.
if find_spec("config.api_urls"):
    urlpatterns.append(path("api/", include("config.api_urls")))
if find_spec("assessments.portal_urls"):
    urlpatterns.append(path("v/", include("assessments.portal_urls")))
