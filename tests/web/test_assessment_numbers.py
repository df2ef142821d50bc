"""Telling assessments apart: each has a number in its organization (#1, #2, … in creation
order, never reused) and an optional label the assessors give it, shown wherever the vendor's
name names an assessment: the dashboard, its pages, compare, the exports and the API."""

from __future__ import annotations

import csv
import importlib
import io

import pytest
from django.apps import apps
from django.urls import reverse

from assessments.models import Assessment, Channel
from assessments.services.answers import assessment_update

from .conftest import make_draft, make_scored, make_vendor, use_answers


def test_numbers_follow_creation_in_each_organization(catalog, personas):
    vendor = make_vendor(personas)
    first, second = make_draft(personas, vendor), make_draft(personas, vendor)
    theirs = make_draft(personas, make_vendor(personas, "Theirs", organization=personas.other))
    assert (first.number, second.number, theirs.number) == (1, 2, 1)
    assert (first.reference, theirs.reference) == ("#1", "#1")


def test_an_assessor_labels_an_assessment_and_every_page_names_it(client, catalog, personas):
    vendor = make_vendor(personas)
    make_draft(personas, vendor)
    second = make_draft(personas, vendor)
    client.force_login(personas.ava)
    response = client.post(
        reverse("assessments:edit", args=[second.pk]),
        {"label": "GLM-5.3 launch", "due_date": "2030-09-30", **use_answers()},
    )
    assert response.status_code == 302
    second.refresh_from_db()
    assert second.label == "GLM-5.3 launch" and second.reference == "#2 · GLM-5.3 launch"
    dashboard = client.get(reverse("assessments:dashboard")).content.decode()
    assert "#1</span>" in dashboard and "#2 · GLM-5.3 launch" in dashboard
    detail = client.get(reverse("assessments:detail", args=[second.pk])).content.decode()
    assert (
        'Cloud Inference Co <span class="assessment-ref">#2 · GLM-5.3 launch</span></h1>' in detail
    )


def test_labels_are_kept_short_and_clean(catalog, personas):
    from core.errors import ServiceError

    draft = make_draft(personas)
    with pytest.raises(ServiceError) as refused:
        assessment_update(
            assessment=draft, actor=personas.ava, channel=Channel.WEB, due_date=None, label="x" * 81
        )
    assert "label" in refused.value.errors


def test_compare_headings_and_the_exports_tell_one_vendors_assessments_apart(
    client, catalog, personas, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    vendor = make_vendor(personas)
    first, second = make_scored(personas, vendor), make_scored(personas, vendor)
    assessment_update(
        assessment=second, actor=personas.ava, channel=Channel.WEB, due_date=None, label="After fix"
    )
    client.force_login(personas.vic)
    page = client.get(
        reverse("assessments:compare"), {"assessments": [first.pk, second.pk]}
    ).content.decode()
    assert f'>Cloud Inference Co <span class="assessment-ref">#{first.number}</span></a>' in page
    assert "#2 · After fix</span></a>" in page
    text = b"".join(
        client.get(reverse("spreadsheets:portfolio_export", args=["csv"])).streaming_content
    ).decode("utf-8-sig")
    rows = {row["Number"]: row["Label"] for row in csv.DictReader(io.StringIO(text))}
    assert rows == {"#1": "", "#2": "After fix"}


@pytest.mark.urls("tests.api.urls")
def test_the_api_shows_the_number_and_label_and_takes_a_label_at_creation(
    catalog, personas, client
):
    vendor = make_vendor(personas)
    make_draft(personas, vendor)
    client.force_login(personas.ava)
    created = client.post(
        "/api/v1/assessments/",
        {"vendor": vendor.pk, "questionnaire": "ai-inference-isolation@1", "label": "Renewal"},
        content_type="application/json",
    )
    assert created.status_code == 201, created.content
    assert (created.json()["number"], created.json()["label"]) == (2, "Renewal")
    listed = client.get("/api/v1/assessments/").json()["results"]
    assert sorted(a["number"] for a in listed) == [1, 2]


def test_the_data_migration_numbers_existing_assessments_in_creation_order(catalog, personas):
    vendor = make_vendor(personas)
    drafts = [make_draft(personas, vendor) for _ in range(3)]
    theirs = make_draft(personas, make_vendor(personas, "Theirs", organization=personas.other))
    # As if numbered otherwise before: the migration renumbers by creation time, then id.
    for offset, assessment in enumerate([*drafts, theirs]):
        Assessment.objects.filter(pk=assessment.pk).update(number=1000 - offset)
    Assessment.objects.filter(pk=drafts[2].pk).update(created_at=drafts[0].created_at)
    migration = importlib.import_module("assessments.migrations.0014_number_existing_assessments")
    migration.number_in_creation_order(apps, None)
    numbers = dict(Assessment.objects.values_list("pk", "number"))
    created = sorted(drafts, key=lambda a: (Assessment.objects.get(pk=a.pk).created_at, a.pk))
    assert [numbers[a.pk] for a in created] == [1, 2, 3]
    assert numbers[theirs.pk] == 1
