"""`bench/portfolio.py` copies an assessment the services built: every copy must hold the very
rows the services wrote for its template, with its own ids, vendor and times."""

import datetime as dt

from django.db import models
from django.utils import timezone

from assessments.audit import audit_chain_verify
from assessments.models import (
    Answer,
    AnswerRevision,
    Assessment,
    AuditEvent,
    EvidenceFile,
    Finding,
    Review,
    ScoringRun,
    Vendor,
    VendorLink,
)
from assessments.storage import evidence_storage
from bench.portfolio import copy_assessments

# Columns a copy has of its own: row ids and the references to its own rows, its times, and
# what must be unique (vendor name, stored file name, link token, the assessment's number).
OWN = {"id", "assessment", "run", "vendor", "latest_run", "vendor_link", "name", "storage_name"}
OWN |= {"number"}
OWN |= {"token_hash", "hash", "previous_hash"}


def row_values(row):
    values = {}
    for field in row._meta.concrete_fields:
        if field.name in OWN or isinstance(field, models.DateTimeField):
            continue
        values[field.name] = getattr(row, field.attname)
    if isinstance(row, AuditEvent):
        # Names and ids of its own rows (checked one by one below).
        values["detail"] = {
            key: "(own)" if key in ("vendor", "run") else value for key, value in row.detail.items()
        }
    return values


def rows_of(assessment):
    runs = ScoringRun.objects.filter(assessment=assessment).order_by("pk")
    rows = {
        "assessment": [assessment],
        "vendor": [assessment.vendor],
        "runs": list(runs),
        "findings": list(Finding.objects.filter(run__in=runs).order_by("run", "position")),
    }
    for model in (Answer, AnswerRevision, EvidenceFile, VendorLink, Review, AuditEvent):
        rows[model.__name__] = list(model.objects.filter(assessment=assessment).order_by("pk"))
    return rows


def test_a_copy_holds_the_rows_the_services_wrote_for_its_template(template, personas):
    newest = timezone.now() + dt.timedelta(days=1)

    written = copy_assessments([template], copies=7, assessments_per_vendor=3, newest=newest)

    assert written == 7
    copies = Assessment.objects.exclude(pk=template.pk).order_by("-created_at")
    assert copies.count() == 7
    assert Vendor.objects.filter(organization=personas.acme).count() == 1 + 3  # 3, 3 and 1
    original = rows_of(template)
    for number, copy in enumerate(copies):
        assert copy.created_at == newest - number * dt.timedelta(seconds=30)
        mine = rows_of(copy)
        assert set(mine) == set(original)
        for kind, rows in original.items():
            assert [row_values(r) for r in mine[kind]] == [row_values(r) for r in rows], kind
        assert copy.latest_run == mine["runs"][-1]
        assert mine["Review"][0].run == copy.latest_run
        # Every time moved by the same amount.
        shift = copy.created_at - template.created_at
        assert copy.submitted_at == template.submitted_at + shift
        assert mine["runs"][-1].finished_at == original["runs"][-1].finished_at + shift
        # The audit trail names the copy's own rows.
        created = next(e for e in mine["AuditEvent"] if e.action == "assessment.created")
        assert created.detail["vendor"] == copy.vendor.name
        scored = next(e for e in mine["AuditEvent"] if e.action == "scoring.succeeded")
        assert scored.detail["run"] == copy.latest_run_id
        # The evidence file is there to download.
        evidence = mine["EvidenceFile"][0]
        with evidence_storage().open(evidence.storage_name, "rb") as handle:
            assert len(handle.read()) == evidence.size
    # The copies continue the organization's numbers.
    assert sorted(copies.values_list("number", flat=True)) == list(
        range(template.number + 1, template.number + 8)
    )
    vendor_created = AuditEvent.objects.filter(action="vendor.created")
    assert vendor_created.count() == 1 + 3
    # The copies' events extend the organization's audit chain, unbroken.
    report = audit_chain_verify(organization=personas.acme)
    assert report.ok, report.problem
    assert report.events == AuditEvent.objects.filter(organization=personas.acme).count()


def test_new_rows_after_a_copy_get_fresh_ids(template, personas):
    copy_assessments([template], copies=2, newest=timezone.now())

    newer = Vendor.objects.create(organization=personas.acme, name="Created afterwards")

    assert newer.pk > Vendor.objects.exclude(pk=newer.pk).order_by("-pk").first().pk


def test_the_api_shows_a_copy_as_it_shows_its_template(template, personas, client):
    copy_assessments([template], copies=1, newest=timezone.now())
    copy = Assessment.objects.exclude(pk=template.pk).get()
    client.force_login(personas.vic)

    def shown(assessment):
        body = client.get(f"/api/v1/assessments/{assessment.pk}/").json()
        return {key: body[key] for key in ("status", "answers", "risk_score", "risk_tier")} | {
            "findings": [(f["rule"], f["severity"]) for f in body["findings"]],
        }

    assert shown(copy) == shown(template)
    assert shown(copy)["findings"]
