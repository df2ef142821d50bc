from django.urls import path

from . import catalogue_views, views, workbench

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
    path("catalogues/", catalogue_views.catalogues, name="catalogues"),
    path("catalogues/<id:ruleset_id>/", catalogue_views.catalogue, name="catalogue"),
    path(
        "catalogues/<id:ruleset_id>/publish/",
        catalogue_views.catalogue_publish_view,
        name="catalogue_publish",
    ),
    path(
        "catalogues/<id:ruleset_id>/delete/",
        catalogue_views.catalogue_delete,
        name="catalogue_delete",
    ),
    path(
        "catalogues/<id:ruleset_id>/share/",
        catalogue_views.catalogue_share_view,
        name="catalogue_share",
    ),
    path(
        "catalogues/shares/<id:share_id>/revoke/",
        catalogue_views.catalogue_share_revoke_view,
        name="catalogue_share_revoke",
    ),
]
