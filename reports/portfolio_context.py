"""What a portfolio report prints: an organization's vendors as they stand (tiers, open
findings, decisions and their expiries, overdue and due-soon items) and what changed since the
organization's previous portfolio report, resolved into plain strings in one language.

Like `context.py` for an assessment's report, this is the only part of a portfolio report that
reads the database (through `assessments.selectors.portfolio_standing`, the same reading of
"overdue" and "due soon" as the dashboard and the digest); `rendering` lays it out.

`figures` are what a report counted, kept on its row as JSON: the next report compares its own
figures with them to list the changes since.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils import timezone

from accounts.models import Organization
from accounts.selectors import client_organizations_of
from assessments.models import Assessment, RiskTier
from assessments.presenters.formats import (
    review_decision_label,
    risk_decision_label,
    severity_label,
)
from assessments.selectors import PortfolioStanding, portfolio_standing
from core.formats import format_date, format_datetime

from .context import Branding, _branding, _person, verification_url
from .labels import HTML_LANG, labels_for

# -- what the template prints --------------------------------------------------------------


@dataclass(frozen=True)
class CountRow:
    key: str  # a tier or severity ("" : not scored), for the CSS class
    label: str
    count: int


@dataclass(frozen=True)
class VendorRow:
    vendor: str
    reference: str  # the current result's assessment, "#12 · label"; "" when never scored
    tier: str
    tier_label: str
    open_findings: int
    next_assessment: str


@dataclass(frozen=True)
class SignOffRow:
    vendor: str
    reference: str
    decision: str
    reviewer: str
    decided_on: str
    conditions: str


@dataclass(frozen=True)
class RiskDecisionRow:
    vendor: str
    reference: str
    rule_id: str
    kind: str
    owner: str
    expires_on: str
    state: str  # "expired", "expiring" (within the horizon) or ""


@dataclass(frozen=True)
class DeadlineRow:
    vendor: str
    reference: str
    what: str
    date: str
    on: dt.date | None = None  # the date itself, for the order


@dataclass(frozen=True)
class TierChange:
    vendor: str
    before: str
    after: str


@dataclass(frozen=True)
class FindingChange:
    vendor: str
    rule_id: str
    severity: str
    severity_label: str


@dataclass(frozen=True)
class Changes:
    previous_number: str
    previous_date: str
    tiers_changed: tuple[TierChange, ...]
    vendors_added: tuple[str, ...]
    vendors_removed: tuple[str, ...]
    findings_opened: tuple[FindingChange, ...]
    findings_closed: tuple[FindingChange, ...]

    @property
    def none(self) -> bool:
        return not (
            self.tiers_changed
            or self.vendors_added
            or self.vendors_removed
            or self.findings_opened
            or self.findings_closed
        )


@dataclass(frozen=True)
class Frame:
    """What every portfolio PDF prints around its figures: its language and labels, number,
    title, dates, brand and how to verify it."""

    language: str
    html_lang: str
    labels: Mapping[str, str]
    number: str
    title: str
    subject: str
    generated_on: str
    generated_at: str
    generated_at_iso: str
    branding: Branding
    verification_text: str
    verification_url: str


def frame_fields(
    organization: Organization,
    *,
    language: str,
    number: str,
    generated_at: dt.datetime,
    title: str,
) -> dict[str, Any]:
    """The `Frame` fields of a PDF of `organization` titled `title` (on its clock)."""
    labels = labels_for(language)
    with timezone.override(organization.time_zone):
        generated = timezone.localtime(generated_at)
    return {
        "language": language,
        "html_lang": HTML_LANG[language],
        "labels": labels,
        "number": number,
        "title": f"{number} · {organization.name} · {title}",
        "subject": f"{title}{labels['colon']}{organization.name}",
        "generated_on": format_date(generated, language),
        "generated_at": format_datetime(generated, language),
        "generated_at_iso": generated.isoformat(timespec="seconds"),
        "branding": _branding(organization),
        "verification_text": labels["verification_portfolio"].format(
            organization=organization.name
        ),
        "verification_url": verification_url(),
    }


@dataclass(frozen=True)
class PortfolioReportContext(Frame):
    as_of: str
    vendor_count: int
    tiers: tuple[CountRow, ...]
    severities: tuple[CountRow, ...]
    open_findings: int
    vendors: tuple[VendorRow, ...]
    sign_offs: tuple[SignOffRow, ...]
    risk_decisions: tuple[RiskDecisionRow, ...]
    overdue: tuple[DeadlineRow, ...]
    due_soon: tuple[DeadlineRow, ...]
    due_soon_heading: str
    changes: Changes | None  # None: the organization's first portfolio report
    changes_intro: str


# -- figures: what a report counted, and the changes between two ----------------------------


def figures_of(standing: PortfolioStanding) -> dict[str, Any]:
    """The JSON a report keeps of what it counted: each vendor's tier, each open finding."""
    return {
        "as_of": standing.today.isoformat(),
        "vendors": {
            str(row.vendor.pk): {"name": row.vendor.name, "tier": row.tier}
            for row in standing.vendors
        },
        "findings": {
            f"{finding.vendor_id}:{finding.rule_id}": {
                "vendor": finding.vendor,
                "rule_id": finding.rule_id,
                "severity": finding.severity,
            }
            for finding in standing.open_findings
        },
    }


def changes_between(
    previous: Mapping[str, Any],
    current: Mapping[str, Any],
    *,
    language: str,
    previous_number: str,
    previous_date: str,
) -> Changes:
    """What changed from one report's figures to the next's: vendors' tiers, vendors added and
    removed, findings opened and closed (a finding is a vendor's rule)."""
    before, after = previous.get("vendors", {}), current.get("vendors", {})
    was, now = previous.get("findings", {}), current.get("findings", {})

    def tier(value: str) -> str:
        return severity_label(value, language) if value else labels_for(language)["not_scored"]

    def finding(entry: Mapping[str, str]) -> FindingChange:
        return FindingChange(
            vendor=entry["vendor"],
            rule_id=entry["rule_id"],
            severity=entry["severity"],
            severity_label=severity_label(entry["severity"], language),
        )

    def by_vendor(keys: set[str], entries: Mapping[str, Any]) -> tuple[FindingChange, ...]:
        chosen = (entries[key] for key in keys)
        return tuple(
            sorted(
                (finding(entry) for entry in chosen),
                key=lambda f: (f.vendor.casefold(), _severity_rank(f.severity), f.rule_id),
            )
        )

    return Changes(
        previous_number=previous_number,
        previous_date=previous_date,
        tiers_changed=tuple(
            sorted(
                (
                    TierChange(
                        vendor=after[key]["name"],
                        before=tier(before[key]["tier"]),
                        after=tier(after[key]["tier"]),
                    )
                    for key in before.keys() & after.keys()
                    if before[key]["tier"] != after[key]["tier"]
                ),
                key=lambda change: change.vendor.casefold(),
            )
        ),
        vendors_added=tuple(
            sorted((after[k]["name"] for k in after.keys() - before.keys()), key=str.casefold)
        ),
        vendors_removed=tuple(
            sorted((before[k]["name"] for k in before.keys() - after.keys()), key=str.casefold)
        ),
        findings_opened=by_vendor(now.keys() - was.keys(), now),
        findings_closed=by_vendor(was.keys() - now.keys(), was),
    )


def _severity_rank(severity: str) -> int:
    order = list(RiskTier.values)
    return order.index(severity) if severity in order else len(order)


# -- building it ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PreviousReport:
    number: str
    rendered_at: dt.datetime
    figures: Mapping[str, Any]


def portfolio_report_context(
    *,
    organization: Organization,
    language: str,
    number: str,
    generated_at: dt.datetime,
    previous: PreviousReport | None,
) -> tuple[PortfolioReportContext, dict[str, Any]]:
    """The context of a portfolio report of `organization` now, and the figures it counted."""
    with timezone.override(organization.time_zone):
        today = organization.local_date(generated_at)
        standing = portfolio_standing(
            organization=organization, today=today, horizon_days=settings.DIGEST_HORIZON_DAYS
        )
        figures = figures_of(standing)
        changes = (
            changes_between(
                previous.figures,
                figures,
                language=language,
                previous_number=previous.number,
                previous_date=format_date(timezone.localtime(previous.rendered_at), language),
            )
            if previous is not None
            else None
        )
        return _context(organization, standing, language, number, generated_at, changes), figures


def _context(
    organization: Organization,
    standing: PortfolioStanding,
    language: str,
    number: str,
    generated_at: dt.datetime,
    changes: Changes | None,
) -> PortfolioReportContext:
    labels = labels_for(language)
    today, horizon = standing.today, standing.deadlines
    tiers = standing.tier_counts()
    severities = standing.severity_counts()
    findings_per_vendor: dict[int, int] = {}
    for finding in standing.open_findings:
        findings_per_vendor[finding.vendor_id] = findings_per_vendor.get(finding.vendor_id, 0) + 1
    # "Due soon" and "expiring soon": within the digest's horizon, as the weekly digest says.
    soon = today + dt.timedelta(days=settings.DIGEST_HORIZON_DAYS)

    def tier_label(tier: str) -> str:
        return severity_label(tier, language) if tier else labels["not_scored"]

    def date(value: dt.date | None) -> str:
        return format_date(value, language) if value else "—"

    def deadline(assessment: Assessment, what: str, on: dt.date | None) -> DeadlineRow:
        return DeadlineRow(
            vendor=assessment.vendor.name,
            reference=assessment.reference,
            what=labels[what],
            date=date(on),
            on=on,
        )

    return PortfolioReportContext(
        **frame_fields(
            organization,
            language=language,
            number=number,
            generated_at=generated_at,
            title=labels["portfolio_title"],
        ),
        as_of=format_date(today, language),
        vendor_count=len(standing.vendors),
        tiers=tuple(CountRow(tier or "none", tier_label(tier), n) for tier, n in tiers.items()),
        severities=tuple(
            CountRow(severity, severity_label(severity, language), n)
            for severity, n in severities.items()
        ),
        open_findings=len(standing.open_findings),
        vendors=tuple(
            VendorRow(
                vendor=row.vendor.name,
                reference=row.assessment.reference if row.assessment else "",
                tier=row.tier or "none",
                tier_label=tier_label(row.tier),
                open_findings=findings_per_vendor.get(row.vendor.pk, 0),
                next_assessment=date(row.assessment.reassess_by if row.assessment else None),
            )
            for row in standing.vendors
        ),
        sign_offs=tuple(
            SignOffRow(
                vendor=review.assessment.vendor.name,
                reference=review.assessment.reference,
                decision=review_decision_label(review.decision, language),
                reviewer=_person(review.reviewer),
                decided_on=format_date(timezone.localtime(review.created_at), language),
                conditions=review.conditions,
            )
            for review in standing.sign_offs
        ),
        risk_decisions=tuple(
            RiskDecisionRow(
                vendor=decision.assessment.vendor.name,
                reference=decision.assessment.reference,
                rule_id=decision.rule_id,
                kind=risk_decision_label(decision.kind, language),
                owner=decision.owner,
                expires_on=date(decision.expires_on),
                state=(
                    labels["expired"]
                    if decision.expires_on < today
                    else labels["expiring_soon"]
                    if decision.expires_on <= soon
                    else ""
                ),
            )
            for decision in standing.risk_decisions
        ),
        overdue=tuple(
            deadline(
                assessment,
                "answers_due"
                if assessment.overdue_since == assessment.due_date
                else "reassessment_due",
                assessment.overdue_since,
            )
            for assessment in horizon.overdue
        ),
        due_soon=tuple(
            sorted(
                [
                    *(deadline(a, "answers_due", a.due_date) for a in horizon.due_soon),
                    *(
                        deadline(a, "reassessment_due", a.reassess_by)
                        for a in horizon.reassessments_due
                    ),
                ],
                key=lambda row: (row.on or today, row.vendor.casefold()),
            )
        ),
        due_soon_heading=labels["due_soon_heading"].format(days=settings.DIGEST_HORIZON_DAYS),
        changes=changes,
        changes_intro=(
            labels["changes_intro"].format(
                number=changes.previous_number, date=changes.previous_date
            )
            if changes is not None
            else labels["first_report"]
        ),
    )


# -- a consultancy's overview across its clients --------------------------------------------


@dataclass(frozen=True)
class ClientRow:
    """One client's figures: counts only, never its vendors, answers or evidence."""

    client: str
    vendors: int
    tiers: tuple[CountRow, ...]
    severities: tuple[CountRow, ...]
    open_findings: int
    overdue: int
    due_soon: int


@dataclass(frozen=True)
class ClientFigures:
    """What the overview counts of one client (the page shows the same, live)."""

    client: Organization
    standing: PortfolioStanding


def client_figures(*, consultancy: Organization, at: dt.datetime) -> list[ClientFigures]:
    """Each client the consultancy has an active engagement with, where it stands on its own
    clock at `at`."""
    figures = []
    for client in client_organizations_of(consultancy=consultancy):
        with timezone.override(client.time_zone):
            figures.append(
                ClientFigures(
                    client,
                    portfolio_standing(
                        organization=client,
                        today=client.local_date(at),
                        horizon_days=settings.DIGEST_HORIZON_DAYS,
                    ),
                )
            )
    return figures


def client_rows(figures: list[ClientFigures], language: str) -> tuple[ClientRow, ...]:
    labels = labels_for(language)
    return tuple(
        ClientRow(
            client=row.client.name,
            vendors=len(row.standing.vendors),
            tiers=tuple(
                CountRow(
                    tier or "none",
                    severity_label(tier, language) if tier else labels["not_scored"],
                    n,
                )
                for tier, n in row.standing.tier_counts().items()
            ),
            severities=tuple(
                CountRow(severity, severity_label(severity, language), n)
                for severity, n in row.standing.severity_counts().items()
            ),
            open_findings=len(row.standing.open_findings),
            overdue=len(row.standing.deadlines.overdue),
            due_soon=len(row.standing.deadlines.due_soon)
            + len(row.standing.deadlines.reassessments_due),
        )
        for row in figures
    )


@dataclass(frozen=True)
class OverviewContext(Frame):
    clients: tuple[ClientRow, ...]
    tier_labels: tuple[str, ...]
    severity_labels: tuple[str, ...]
    due_soon_heading: str


def consultancy_overview_context(
    *, consultancy: Organization, language: str, number: str, generated_at: dt.datetime
) -> tuple[OverviewContext, dict[str, Any]]:
    """The overview across the consultancy's active clients, and the figures it counted."""
    labels = labels_for(language)
    figures = client_figures(consultancy=consultancy, at=generated_at)
    context = OverviewContext(
        **frame_fields(
            consultancy,
            language=language,
            number=number,
            generated_at=generated_at,
            title=labels["overview_title"],
        ),
        clients=client_rows(figures, language),
        tier_labels=tuple(
            severity_label(tier, language) if tier else labels["not_scored"]
            for tier in (*RiskTier.values, "")
        ),
        severity_labels=tuple(severity_label(s, language) for s in RiskTier.values),
        due_soon_heading=labels["due_soon_heading"].format(days=settings.DIGEST_HORIZON_DAYS),
    )
    counted = {
        "clients": {
            str(row.client.pk): {
                "name": row.client.name,
                "tiers": row.standing.tier_counts(),
                "severities": row.standing.severity_counts(),
                "overdue": len(row.standing.deadlines.overdue),
            }
            for row in figures
        }
    }
    return context, counted
