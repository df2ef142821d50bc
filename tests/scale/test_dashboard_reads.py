"""The dashboard's reads at any size: the urgency order read stage by stage, the counts by status
and tier cached until the assessments change, per-vendor counts for one page of vendors."""

import datetime as dt

from django.core.paginator import Paginator
from django.db import connection
from django.db.models import Case, F, IntegerField, Value, When
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from assessments.factories import critical_rule_ids
from assessments.models import CLOSED_STATUSES, OPEN_STATUSES, Assessment, Channel
from assessments.selectors import (
    UrgencyOrdered,
    assessments_changed_at,
    assessments_for,
    portfolio_counts,
    vendor_assessment_counts,
    vendors_for,
)
from assessments.services.answers import assessment_create
from assessments.services.reviews import review_record
from assessments.services.vendors import vendor_create
from bench.portfolio import copy_assessments
from tests.conftest import QUESTIONNAIRE
from tests.personas import member_of


def mixed_portfolio(scored_template, personas):
    """Scored copies (two of them approved) and drafts due in the past, later, or never."""
    copy_assessments([scored_template], copies=4, newest=timezone.now())
    for copy in Assessment.objects.exclude(pk=scored_template.pk).order_by("pk")[:2]:
        review_record(assessment=copy, member=member_of(personas.rex), decision="approved",
                      acknowledged_findings=critical_rule_ids(copy), channel=Channel.WEB)  # fmt: skip
    vendor = vendor_create(organization=personas.acme, actor=personas.alice,
                           channel=Channel.WEB, name="Drafts AI")  # fmt: skip
    today = timezone.localdate()
    for due in [today - dt.timedelta(days=3), today - dt.timedelta(days=1), None,
                today + dt.timedelta(days=5), today - dt.timedelta(days=3)]:  # fmt: skip
        assessment_create(organization=personas.acme, vendor=vendor, questionnaire_key=QUESTIONNAIRE,
                          actor=personas.ava, channel=Channel.WEB, due_date=due)  # fmt: skip


def sorted_in_one_query(assessments, today):
    """The order as one query states it (what the dashboard sorted before)."""
    return list(
        assessments.annotate(
            urgency=Case(
                When(due_date__lt=today, status__in=OPEN_STATUSES, then=Value(0)),
                When(status__in=CLOSED_STATUSES, then=Value(2)),
                default=Value(1),
                output_field=IntegerField(),
            )
        )
        .order_by("urgency", F("due_date").asc(nulls_last=True), "-created_at", "-pk")
        .values_list("pk", flat=True)
    )


def test_the_stages_give_the_order_of_one_sorted_query(scored_template, personas):
    mixed_portfolio(scored_template, personas)
    today = timezone.localdate()
    assessments = assessments_for(organization=personas.acme)
    version = assessments_changed_at(organization=personas.acme)

    ordered = UrgencyOrdered(assessments, today=today, version=version)

    expected = sorted_in_one_query(assessments, today)
    assert len(expected) == 10 and ordered.count() == 10
    assert [a.pk for a in ordered[0:10]] == expected
    # Every window, across the stages' boundaries.
    for start in range(10):
        for stop in range(start, 11):
            assert [a.pk for a in ordered[start:stop]] == expected[start:stop]
    pages = Paginator(ordered, 3)
    assert [a.pk for n in pages.page_range for a in pages.page(n)] == expected


def test_a_page_costs_the_same_queries_wherever_it_is(scored_template, personas):
    mixed_portfolio(scored_template, personas)
    assessments = assessments_for(organization=personas.acme)
    version = assessments_changed_at(organization=personas.acme)
    ordered = UrgencyOrdered(assessments, today=timezone.localdate(), version=version)

    with CaptureQueriesContext(connection) as first:
        list(ordered[0:2])
    with CaptureQueriesContext(connection) as last:
        list(ordered[8:10])

    assert len(first) == len(last) == 2  # the ids, then their rows


def test_the_counts_are_read_once_until_an_assessment_changes(scored_template, personas):
    mixed_portfolio(scored_template, personas)
    today = timezone.localdate()

    counts = portfolio_counts(organization=personas.acme, today=today)
    with CaptureQueriesContext(connection) as again:
        assert portfolio_counts(organization=personas.acme, today=today) == counts

    assert counts["by_status"] == {"scored": 3, "approved": 2, "draft": 5}
    assert counts["overdue"] == 3 and sum(counts["by_tier"].values()) == 5
    assert len(again) == 1  # the version: one index lookup
    draft = Assessment.objects.filter(status="draft", due_date__isnull=True).get()
    draft.due_date = today - dt.timedelta(days=9)
    draft.save(update_fields=["due_date", "updated_at"])
    assert portfolio_counts(organization=personas.acme, today=today)["overdue"] == 4


def test_vendor_counts_are_read_for_the_page_of_vendors(scored_template, personas):
    mixed_portfolio(scored_template, personas)
    vendors = list(vendors_for(organization=personas.acme).order_by("name"))

    with CaptureQueriesContext(connection) as read:
        counts = vendor_assessment_counts(organization=personas.acme, vendors=vendors)

    assert len(read) == 1
    by_name = {vendor.name: counts[vendor.pk] for vendor in vendors}
    assert by_name["Drafts AI"] == {"total": 5, "open": 5}
    assert sum(c["total"] for c in counts.values()) == 10
