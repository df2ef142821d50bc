"""Exports a committee tracks in a spreadsheet: an assessment's findings with their risk
decisions, and the organization's portfolio — as CSV and as an .xlsx workbook, for the web
pages and the API alike.

A table is built once (`findings_table`, `portfolio_table`) in the reader's language and the
organization's time zone, its rows produced one at a time; `csv_response` streams them and
`xlsx_response` writes them through openpyxl's write-only mode, so a portfolio of many thousand
assessments is never held in memory at once. Every text goes through `cells` (formula-injection
safe). In CSV, dates are YYYY-MM-DD and times YYYY-MM-DD HH:MM (what every spreadsheet program
reads as a date, in any language); in the workbook they are date cells.
"""

from __future__ import annotations

import csv
import datetime as dt
import tempfile
import zoneinfo
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.http import FileResponse, StreamingHttpResponse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from openpyxl import Workbook
from openpyxl.utils import get_column_letter

from accounts.models import Organization
from assessments import selectors
from assessments.models import Assessment, RiskDecision, RunStatus
from assessments.presenters.findings import finding_views
from assessments.presenters.formats import risk_decision_label, severity_label
from questionnaires.labels import yes_no_labels

from .cells import csv_value, write_only_cell
from .layout import CONTENT_TYPE as XLSX_CONTENT_TYPE

FORMATS = ("csv", "xlsx")
CSV_CONTENT_TYPE = "text/csv; charset=utf-8"
# Excel opens a CSV file as UTF-8 (Chinese included) only when it starts with a byte order mark.
UTF8_BOM = "\ufeff"
DATE, DATETIME, INTEGER = "yyyy-mm-dd", "yyyy-mm-dd hh:mm", "0"
ROWS_PER_QUERY = 500


@dataclass(frozen=True)
class Column:
    header: str
    number_format: str | None = None  # of the workbook's cells
    width: int = 18


@dataclass(frozen=True)
class Table:
    name: str  # the file's name, without extension; the sheet's title
    columns: Sequence[Column]
    rows: Iterable[Sequence[Any]]  # produced as they are written


# -- the findings of an assessment ---------------------------------------------------------


def findings_table(*, assessment: Assessment, language: str, zone: str) -> Table:
    """The findings of the assessment's latest scoring run, one row per risk decision recorded
    on a finding (a finding without one has one row, its decision cells empty)."""
    with translation.override(language):
        columns = [
            Column(_("Vendor"), width=28),
            Column(_("Assessment"), INTEGER, 10),
            Column(_("Number"), width=8),
            Column(_("Label"), width=24),
            Column(_("Run"), INTEGER, 8),
            Column(_("Ruleset"), width=24),
            Column(_("Rule"), width=30),
            Column(_("Severity"), width=10),
            Column(_("Points"), INTEGER, 8),
            Column(_("Section"), width=9),
            Column(_("Finding"), width=48),
            Column(_("Remediation"), width=60),
            Column(_("References"), width=30),
            Column(_("Decision"), width=16),
            Column(_("Justification"), width=48),
            Column(_("Owner"), width=24),
            Column(_("Expiry date"), DATE, 12),
            Column(_("Expired"), width=9),
            Column(_("Recorded at"), DATETIME, 17),
            Column(_("Recorded by"), width=24),
        ]
    return Table(
        name=f"avia-findings-assessment-{assessment.pk}",
        columns=columns,
        rows=_finding_rows(assessment, language, zone),
    )


def _finding_rows(assessment: Assessment, language: str, zone: str) -> Iterator[list[Any]]:
    run = assessment.latest_run
    if run is None or run.status != RunStatus.SUCCEEDED:
        return
    today = assessment.organization.local_date()
    decisions: dict[str, list[RiskDecision]] = defaultdict(list)
    # Scoped through the assessment, which was fetched within the organization.
    for decision in (
        RiskDecision.objects.filter(assessment=assessment)
        .select_related("created_by")
        .order_by("created_at", "pk")
    ):
        decisions[decision.rule_id].append(decision)
    views = finding_views(
        list(selectors.findings_for(run=run)),
        spec=assessment.questionnaire.spec,
        ruleset=run.ruleset.spec,
        answers=run.answers_snapshot or {},
        frameworks={},
        language=language,
    )
    yes_no = yes_no_labels(language)
    for view in views:
        finding = [
            assessment.vendor.name,
            assessment.pk,
            f"#{assessment.number}",
            assessment.label,
            run.pk,
            run.ruleset.key,
            view.rule_id,
            severity_label(view.severity, language),
            view.points,
            view.section,
            view.title,
            view.remediation,
            ", ".join(view.framework_ids),
        ]
        for decision in decisions.get(view.rule_id) or [None]:
            if decision is None:
                yield finding + [None] * 7
                continue
            by = decision.created_by
            yield finding + [
                risk_decision_label(decision.kind, language),
                decision.justification,
                decision.owner,
                decision.expires_on,
                yes_no["yes" if decision.expires_on <= today else "no"],
                _local(decision.created_at, zone),
                (by.get_full_name() or by.email) if by else "",
            ]


# -- the portfolio ---------------------------------------------------------------------------


def portfolio_table(*, organization: Organization, language: str, zone: str) -> Table:
    """Every assessment of the organization, by vendor: status, risk tier and score, the
    ruleset that scored it, due date, next assessment, and whether either has passed."""
    with translation.override(language):
        columns = [
            Column(_("Vendor"), width=28),
            Column(_("Assessment"), INTEGER, 10),
            Column(_("Number"), width=8),
            Column(_("Label"), width=24),
            Column(_("Questionnaire"), width=26),
            Column(_("Status"), width=18),
            Column(_("Risk tier"), width=10),
            Column(_("Risk score"), INTEGER, 10),
            Column(_("Ruleset"), width=24),
            Column(_("Due date"), DATE, 12),
            Column(_("Next assessment"), DATE, 14),
            Column(_("Overdue"), width=9),
            Column(_("Submitted"), DATETIME, 17),
            Column(_("Updated"), DATETIME, 17),
        ]
    assessments = selectors.list_rows(
        selectors.assessments_for(organization=organization)
    ).order_by("vendor__name", "pk")
    return Table(
        name=f"avia-portfolio-{organization.slug}",
        columns=columns,
        rows=_portfolio_rows(assessments, language, zone),
    )


def _portfolio_rows(
    assessments: QuerySet[Assessment], language: str, zone: str
) -> Iterator[list[Any]]:
    yes_no = yes_no_labels(language)
    for assessment in assessments.iterator(chunk_size=ROWS_PER_QUERY):
        run = assessment.latest_run
        with timezone.override(zone):
            overdue = assessment.is_overdue
        yield [
            assessment.vendor.name,
            assessment.pk,
            f"#{assessment.number}",
            assessment.label,
            assessment.questionnaire.key,
            _status_as_decided(assessment, language),
            severity_label(assessment.risk_tier, language) if assessment.risk_tier else "",
            assessment.risk_score,
            run.ruleset.key if run is not None else "",
            assessment.due_date,
            assessment.reassess_by,
            yes_no["yes" if overdue else "no"],
            _local(assessment.submitted_at, zone),
            _local(assessment.updated_at, zone),
        ]


def _status_as_decided(assessment: Assessment, language: str) -> str:
    """The status as the dashboard's badge and the report show it: "Approved with conditions",
    not "Approved" (the rows carry their latest decision: `selectors.assessments_for`)."""
    with translation.override(language):
        return assessment.status_label


# -- writing ---------------------------------------------------------------------------------


def _local(moment: dt.datetime | None, zone: str) -> dt.datetime | None:
    """A moment on the organization's clock, without its zone (a spreadsheet cell has none)."""
    if moment is None:
        return None
    return timezone.localtime(moment, zoneinfo.ZoneInfo(zone)).replace(
        tzinfo=None, second=0, microsecond=0
    )


class _Echo:
    """A file whose `write` hands back what it was given: `csv.writer` formats, we stream."""

    def write(self, value: str) -> str:
        return value


def csv_lines(table: Table) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield UTF8_BOM + writer.writerow([csv_value(c.header) for c in table.columns])
    for row in table.rows:
        yield writer.writerow([csv_value(value) for value in row])


def csv_response(table: Table) -> StreamingHttpResponse:
    response = StreamingHttpResponse(csv_lines(table), content_type=CSV_CONTENT_TYPE)
    return attachment(response, f"{table.name}.csv")


def xlsx_file(table: Table) -> Any:
    """The table as a workbook in a temporary file (rewound), written row by row."""
    book = Workbook(write_only=True)
    sheet = book.create_sheet(table.name[:31])
    for index, column in enumerate(table.columns):
        sheet.column_dimensions[get_column_letter(index + 1)].width = column.width
    sheet.freeze_panes = "A2"
    sheet.append([write_only_cell(sheet, c.header) for c in table.columns])
    for row in table.rows:
        sheet.append(
            [
                write_only_cell(sheet, value, number_format=column.number_format)
                for value, column in zip(row, table.columns, strict=True)
            ]
        )
    out = tempfile.TemporaryFile()
    book.save(out)
    out.seek(0)
    return out


def xlsx_response(table: Table) -> FileResponse:
    response = FileResponse(xlsx_file(table), content_type=XLSX_CONTENT_TYPE)
    return attachment(response, f"{table.name}.xlsx")


def export_response(table: Table, file_format: str) -> StreamingHttpResponse | FileResponse:
    return csv_response(table) if file_format == "csv" else xlsx_response(table)


def attachment(response: Any, filename: str) -> Any:
    """A download of the organization's data: saved under `filename`, never sniffed as another
    type, never stored by a browser or a proxy."""
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, no-store"
    return response
