"""The vendor portal, mounted under `v/` (`path("v/", include("assessments.portal_urls"))`)."""

from django.urls import path

from . import portal

app_name = "portal"

urlpatterns = [
    path("<str:token>/", portal.landing, name="landing"),
    path("<str:token>/s/<str:section_code>/", portal.section, name="section"),
    path("<str:token>/s/<str:section_code>/draft/", portal.autosave, name="autosave"),
    path("<str:token>/review/", portal.review, name="review"),
    path("<str:token>/thanks/", portal.thanks, name="thanks"),
    path("<str:token>/language/", portal.language, name="language"),
    path(
        "<str:token>/configuration-change/",
        portal.configuration_change,
        name="configuration_change",
    ),
]
