from django.urls import path

from . import views

app_name = "scoring"

urlpatterns = [
    path("tools/kv-sizing/", views.kvsize, name="kvsize"),
]
