from django.urls import path

from . import views, workbench

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
    path("rulesets/<id:ruleset_id>/workbench/", workbench.workbench, name="workbench"),
    path(
        "rulesets/<id:ruleset_id>/workbench/impact/",
        workbench.workbench_impact,
        name="workbench_impact",
    ),
    path(
        "rulesets/<id:ruleset_id>/workbench/cases/",
        workbench.workbench_case_save,
        name="workbench_case_save",
    ),
    path(
        "rulesets/<id:ruleset_id>/workbench/cases/<id:case_id>/delete/",
        workbench.workbench_case_delete,
        name="workbench_case_delete",
    ),
]
