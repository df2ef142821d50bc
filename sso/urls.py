from django.urls import path

from . import views

app_name = "sso"

urlpatterns = [
    path("sso/", views.start, name="start"),
    path("sso/callback/", views.callback, name="callback"),
    path("sso/settings/", views.provider_settings, name="settings"),
]
