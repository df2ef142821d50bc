"""The vendor portal, mounted under `v/` (`path("v/", include("assessments.portal_urls"))`)."""

from django.urls import path

from .portal import pages, sections, threads

app_name = "portal"

urlpatterns = [
    path("<str:token>/", pages.landing, name="landing"),
    path("<str:token>/s/<str:section_code>/", sections.section, name="section"),
    path("<str:token>/s/<str:section_code>/draft/", sections.autosave, name="autosave"),
    path("<str:token>/review/", pages.review, name="review"),
    path("<str:token>/questions/<str:question_code>/thread/", threads.thread, name="thread"),
    path("<str:token>/thanks/", pages.thanks, name="thanks"),
    path("<str:token>/brand.css", pages.brand_stylesheet, name="brand_stylesheet"),
    path("<str:token>/logo/", pages.logo, name="logo"),
    path("<str:token>/language/", pages.language, name="language"),
    path(
        "<str:token>/configuration-change/",
        pages.configuration_change,
        name="configuration_change",
    ),
]
