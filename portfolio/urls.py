from django.urls import path

from . import views

app_name = "portfolio"

urlpatterns = [
    path("rescore/", views.rescore, name="rescore"),
    path("rescore/batches/<id:batch_id>/", views.batch, name="batch"),
    path(
        "rescore/batches/<id:batch_id>/changes.csv",
        views.batch_changes_csv,
        name="batch_changes_csv",
    ),
    path("reassessment-policy/", views.policy, name="policy"),
    path("assessments/<id:assessment_id>/reassess/", views.reassess, name="reassess"),
    path("outbox/", views.outbox, name="outbox"),
]
