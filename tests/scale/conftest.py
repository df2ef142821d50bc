"""Fixtures of the portfolio-scale tests: the incident assessment built by the one factory
(`assessments.factories`, through the real services), to be copied in bulk by
`bench/portfolio.py`."""

import datetime as dt

import pytest

from assessments.factories import critical_rule_ids, incident_assessment
from assessments.models import Channel
from assessments.services.reviews import review_record
from tests.personas import member_of


@pytest.fixture
def scored_template(catalog, personas):
    """The launch-day incident assessment, answered by the vendor through its link (the
    startup log uploaded), submitted and scored."""
    assessment = incident_assessment(
        member=member_of(personas.ava), through_link=True, due_date=dt.date(2026, 9, 1)
    )
    assert assessment.status == "scored" and assessment.latest_run_id
    return assessment


@pytest.fixture
def template(scored_template, personas):
    """The scored incident assessment, reviewed too: every kind of row an assessment has."""
    review_record(
        assessment=scored_template,
        member=member_of(personas.rex),
        decision="approved_with_conditions",
        conditions="Re-test after the next KV pool change.",
        acknowledged_findings=critical_rule_ids(scored_template),
        channel=Channel.WEB,
    )
    scored_template.refresh_from_db()
    assert scored_template.status == "approved"
    return scored_template
