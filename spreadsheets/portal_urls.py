"""The portal's workbook pages, mounted under `v/` beside `assessments.portal_urls`."""

from django.urls import path

from . import portal

app_name = "portal_workbook"

urlpatterns = [
    path("<str:token>/workbook/", portal.workbook, name="page"),
    path("<str:token>/workbook/<str:language>.xlsx", portal.workbook_download, name="download"),
]
