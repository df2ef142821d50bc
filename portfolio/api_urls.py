"""REST endpoints of the portfolio, listed under /api/v1/ by config.api_urls (namespace "api")."""

from django.urls import path

from . import api

urlpatterns = [
    path("rescore-batches/", api.RescoreBatchList.as_view(), name="rescore-batch-list"),
    path(
        "rescore-batches/<id:batch_id>/",
        api.RescoreBatchDetail.as_view(),
        name="rescore-batch-detail",
    ),
    path(
        "rescore-batches/<id:batch_id>/changes.csv",
        api.RescoreBatchChangesCsv.as_view(),
        name="rescore-batch-changes",
    ),
]
