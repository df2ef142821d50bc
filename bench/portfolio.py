"""A large portfolio, fast: copies of assessments that the real services built.

Building 100,000 assessments through the services (answers, evidence, submission, scoring,
audit trail) takes hours; the pages and the API only read the rows. So a few *template*
assessments are built through the real services (`assessments.factories` in the benchmark,
the services in the test), and `copy_assessments` writes many copies of each one's rows with
`bulk_create`: the vendor, the assessment, its answers and their history, evidence files,
vendor links, scoring runs with their findings, reviews, risk decisions and the audit trail.
Each copy is the template's rows with new ids, its own vendor and its own times: nothing is
computed here, so a copy holds exactly what the services wrote for the template.
`tests/postgres/test_portfolio_copies.py` holds a copy to its template through the API.

Rows are written as the database values Django would send for the template's rows (each
field's `get_db_prep_save`) with the copy's own ids, references, times and unique names
substituted, and written by `assessments.bulk` (COPY on PostgreSQL, executemany on SQLite),
several times faster than `bulk_create` with model instances. Foreign keys are deferred to the commit on both databases,
so rows may point at rows written later in the same transaction. Evidence files are hard links
to the template's stored file (the storage name is unique per row), so a copy's evidence
downloads like the template's.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from collections.abc import Iterator, Sequence
from typing import Any

from django.core.management.color import no_style
from django.db import DEFAULT_DB_ALIAS, connection, connections, models, transaction
from django.db.models import Max

from assessments.audit import audit_event_content, audit_event_hash
from assessments.bulk import db_values, insert_rows
from assessments.models import (
    Answer,
    AnswerRevision,
    Assessment,
    AuditChainHead,
    AuditEvent,
    EvidenceFile,
    Finding,
    Review,
    RiskDecision,
    ScoringRun,
    Vendor,
    VendorLink,
)
from assessments.storage import evidence_storage

# Copies held in memory before they are written.
CHUNK = 5000


class _Table:
    """Rows of one table as database values, written in one go."""

    def __init__(self, model: type[models.Model]) -> None:
        self.model = model
        self.fields = list(model._meta.concrete_fields)
        self.position = {field.attname: i for i, field in enumerate(self.fields)}
        self.rows: list[list[Any]] = []

    def values(self, row: models.Model) -> list[Any]:
        return db_values(row, self.fields)

    def add(
        self, base: list[Any], changes: dict[str, Any], row: models.Model | None = None
    ) -> None:
        values = base.copy()
        database = connections[DEFAULT_DB_ALIAS]  # the connection itself, not the proxy
        for name, value in changes.items():
            at = self.position[name]
            if value is None or type(value) in (int, str):
                values[at] = value  # ids, names: as they are
            else:
                values[at] = self.fields[at].get_db_prep_save(value, database)
        self.rows.append(values)

    def write(self) -> None:
        if self.rows:
            insert_rows(self.model, self.fields, self.rows)
        self.rows = []


class _AuditTable(_Table):
    """Audit events, chained as `audit_record` chains them: each copy's hash covers its own
    content and the event before it (in id order, the order they are added in)."""

    def __init__(self, organization_id: int) -> None:
        super().__init__(AuditEvent)
        self.head = AuditChainHead.objects.select_for_update().get_or_create(
            organization_id=organization_id
        )[0]

    def add(
        self, base: list[Any], changes: dict[str, Any], row: models.Model | None = None
    ) -> None:
        event = _copy(row, **changes)
        event.previous_hash = self.head.hash
        event.hash = audit_event_hash(audit_event_content(event), self.head.hash)
        self.head.last_event_id, self.head.hash = changes["id"], event.hash
        super().add(base, changes | {"previous_hash": event.previous_hash, "hash": event.hash})

    def write(self) -> None:
        super().write()
        self.head.save(update_fields=["last_event_id", "hash"])


def _copy(row: models.Model, **changes: Any) -> models.Model:
    values = {field.attname: getattr(row, field.attname) for field in row._meta.concrete_fields}
    return type(row)(**(values | changes))


class _Row:
    """One row of a template: the model instance, its database values, its times."""

    def __init__(self, table: _Table, row: models.Model) -> None:
        self.row = row
        self.base = table.values(row)
        self.times = {
            field.attname: getattr(row, field.attname)
            for field in table.fields
            if isinstance(field, models.DateTimeField) and getattr(row, field.attname)
        }

    def moved(self, shift: dt.timedelta) -> dict[str, Any]:
        return {name: value + shift for name, value in self.times.items()}


# Parents before children (for reading the code: the keys are checked at the commit).
_MODELS = (
    Vendor,
    Assessment,
    ScoringRun,
    Finding,
    Answer,
    VendorLink,
    AnswerRevision,
    EvidenceFile,
    Review,
    RiskDecision,
    AuditEvent,
)
# Rows that belong to the assessment directly (`assessment_id`).
_CHILDREN = (Answer, AnswerRevision, EvidenceFile, VendorLink, Review, RiskDecision, AuditEvent)


class _Template:
    def __init__(self, assessment: Assessment, tables: dict[type[models.Model], _Table]) -> None:
        self.assessment = assessment
        self.vendor = _Row(tables[Vendor], assessment.vendor)
        self.row = _Row(tables[Assessment], assessment)
        # The vendor's creation (no assessment; the detail names the vendor).
        self.vendor_events = [
            _Row(tables[AuditEvent], event)
            for event in AuditEvent.objects.filter(
                organization_id=assessment.organization_id,
                assessment=None,
                action="vendor.created",
                detail__vendor=assessment.vendor.name,
            ).order_by("pk")
        ]
        self.runs = [
            _Row(tables[ScoringRun], run)
            for run in ScoringRun.objects.filter(assessment=assessment).order_by("pk")
        ]
        self.findings = [
            _Row(tables[Finding], finding)
            for finding in Finding.objects.filter(run__assessment=assessment).order_by("pk")
        ]
        self.children = {
            model: [
                _Row(tables[model], child)
                for child in model.objects.filter(assessment=assessment).order_by("pk")
            ]
            for model in _CHILDREN
        }


class _Ids:
    """Explicit ids, so that rows can point at each other before any of them is written."""

    def __init__(self) -> None:
        self.next: dict[type[models.Model], int] = {}

    def take(self, model: type[models.Model]) -> int:
        if model not in self.next:
            self.next[model] = (model.objects.aggregate(top=Max("pk"))["top"] or 0) + 1
        value = self.next[model]
        self.next[model] = value + 1
        return value


def copy_assessments(
    templates: Sequence[Assessment],
    *,
    copies: int,
    assessments_per_vendor: int = 5,
    newest: dt.datetime,
    spacing: dt.timedelta = dt.timedelta(seconds=30),
    progress: Any = None,
) -> int:
    """Write `copies` copies in all, taking the templates in turn; returns how many.

    Copy number n is dated `newest - n * spacing` (every time of the template moved by the
    same amount), so the portfolio spreads back in time like a real one; each vendor gets
    `assessments_per_vendor` of them."""
    ids = _Ids()
    # Copies continue the organization's assessment numbers (#n, unique per organization).
    numbers = Assessment.objects.filter(organization_id=templates[0].organization_id)
    first_number = (numbers.aggregate(top=Max("number"))["top"] or 0) + 1
    vendor: tuple[int, str] | None = None
    with transaction.atomic():
        tables = {model: _Table(model) for model in _MODELS if model is not AuditEvent}
        tables[AuditEvent] = _AuditTable(templates[0].organization_id)
        loaded = [_Template(template, tables) for template in templates]
        for chunk in _chunks(range(copies), CHUNK):
            for number in chunk:
                template = loaded[number % len(loaded)]
                when = newest - number * spacing
                if number % assessments_per_vendor == 0 or vendor is None:
                    vendor = _copy_vendor(
                        template, tables, ids, number // assessments_per_vendor, when
                    )
                _copy_one(template, tables, ids, number, vendor, when, first_number + number)
            for table in tables.values():
                table.write()
            if progress:
                progress(chunk[-1] + 1)
        _reset_sequences()
    return copies


def _copy_vendor(
    template: _Template,
    tables: dict[type[models.Model], _Table],
    ids: _Ids,
    number: int,
    when: dt.datetime,
) -> tuple[int, str]:
    original = template.assessment.vendor
    vendor_id = ids.take(Vendor)
    name = f"{original.name} {vendor_id:06}"  # unique, as the id is
    shift = when - original.created_at
    tables[Vendor].add(
        template.vendor.base,
        {"id": vendor_id, "name": name, "created_at": when, "updated_at": when},
    )
    for event in template.vendor_events:
        changes = event.moved(shift) | {"id": ids.take(AuditEvent)}
        changes["detail"] = {**event.row.detail, "vendor": name}
        tables[AuditEvent].add(event.base, changes, row=event.row)
    return vendor_id, name


def _copy_one(
    template: _Template,
    tables: dict[type[models.Model], _Table],
    ids: _Ids,
    number: int,
    vendor: tuple[int, str],
    when: dt.datetime,
    assessment_number: int,
) -> None:
    original = template.assessment
    shift = when - original.created_at
    assessment_id = ids.take(Assessment)
    vendor_id, vendor_name = vendor
    run_ids = {run.row.pk: ids.take(ScoringRun) for run in template.runs}
    tables[Assessment].add(
        template.row.base,
        template.row.moved(shift)
        | {
            "id": assessment_id,
            "number": assessment_number,
            "vendor_id": vendor_id,
            "latest_run_id": run_ids.get(original.latest_run_id),
        },
    )
    for run in template.runs:
        tables[ScoringRun].add(
            run.base, run.moved(shift) | {"id": run_ids[run.row.pk], "assessment_id": assessment_id}
        )
    for finding in template.findings:
        tables[Finding].add(
            finding.base, {"id": ids.take(Finding), "run_id": run_ids[finding.row.run_id]}
        )
    link_ids: dict[int, int] = {}
    for model, children in template.children.items():
        table = tables[model]
        for child in children:
            row = child.row
            changes = child.moved(shift) | {"id": ids.take(model), "assessment_id": assessment_id}
            if model is VendorLink:
                link_ids[row.pk] = changes["id"]
                token = f"{row.token_hash}/{changes['id']}".encode()
                changes["token_hash"] = hashlib.sha256(token).hexdigest()
            elif model is AnswerRevision and row.vendor_link_id:
                changes["vendor_link_id"] = link_ids.get(row.vendor_link_id)
            elif model is EvidenceFile:
                changes["storage_name"] = _linked_file(row.storage_name, changes["id"])
            elif model is Review:
                changes["run_id"] = run_ids[row.run_id]
            elif model is AuditEvent:
                changes["detail"] = _renumbered(
                    row.detail, original, (assessment_id, vendor_name), run_ids
                )
            table.add(child.base, changes, row=row)


def _renumbered(
    detail: Any, original: Assessment, copy: tuple[int, str], run_ids: dict[int, int]
) -> Any:
    """The audit detail of the copy: the template's ids and vendor name replaced by the copy's."""
    if not isinstance(detail, dict):
        return detail
    renumbered = dict(detail)
    assessment_id, vendor_name = copy
    if renumbered.get("assessment") == original.pk:
        renumbered["assessment"] = assessment_id
    if renumbered.get("vendor") == original.vendor.name:
        renumbered["vendor"] = vendor_name
    if renumbered.get("run") in run_ids:
        renumbered["run"] = run_ids[renumbered["run"]]
    return renumbered


def _linked_file(storage_name: str, evidence_id: int) -> str:
    storage = evidence_storage()
    base, extension = os.path.splitext(storage_name)
    name = f"{base}-copy{evidence_id}{extension}"
    target = storage.path(name)
    if not os.path.exists(target):
        os.link(storage.path(storage_name), target)
    return name


def _reset_sequences() -> None:
    """PostgreSQL's id sequences past the explicit ids (SQLite needs nothing)."""
    statements = connection.ops.sequence_reset_sql(no_style(), list(_MODELS))
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def _chunks(items: Sequence[Any] | range, size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
