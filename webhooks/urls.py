from django.urls import path

from . import views

app_name = "webhooks"

urlpatterns = [
    path("webhooks/", views.endpoints, name="endpoints"),
    path("webhooks/<id:endpoint_id>/", views.endpoint, name="endpoint"),
    path("webhooks/<id:endpoint_id>/test/", views.endpoint_test, name="endpoint_test"),
    path("webhooks/<id:endpoint_id>/remove/", views.endpoint_remove, name="endpoint_remove"),
]
