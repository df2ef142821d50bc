from django.urls import path

from . import views

app_name = "notifications"

urlpatterns = [
    path("notifications/", views.notification_list, name="list"),
    path("notifications/read/", views.notifications_read, name="read_all"),
    path("notifications/settings/", views.notification_settings, name="settings"),
    path("notifications/<id:notification_id>/", views.notification_open, name="open"),
]
