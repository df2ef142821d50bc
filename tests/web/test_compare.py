"""Vendor comparison: two to five scored assessments side by side."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.html_elements import Elements

from .conftest import make_draft, make_scored, make_vendor

COMPARE = reverse("assessments:compare")


@pytest.fixture
def pair(catalog, personas, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    launch = make_scored(personas, make_vendor(personas, "Launch Day AI"))
    remediated = make_scored(
        personas,
        make_vendor(personas, "Remediated AI"),
        fixture="incident-2026-remediated",
        log=False,
    )
    return launch, remediated


def test_the_picker_offers_only_scored_assessments(client, personas, pair, draft):
    client.force_login(personas.vic)
    response = client.get(COMPARE)
    assert response.status_code == 200
    offered = {
        int(value) for value, _label in response.context["form"].fields["assessments"].choices
    }
    assert offered == {pair[0].pk, pair[1].pk}


def test_two_assessments_side_by_side_with_a_chart_and_the_findings_that_differ(
    client, personas, pair
):
    launch, remediated = pair
    client.force_login(personas.vic)
    response = client.get(COMPARE, {"assessments": [launch.pk, remediated.pk]})
    assert response.status_code == 200
    columns = response.context["columns"]
    assert [c["assessment"].vendor.name for c in columns] == ["Launch Day AI", "Remediated AI"]
    assert [c["run"].risk_tier for c in columns] == ["critical", "high"]
    body = response.content.decode()
    assert "<svg" in body and 'role="img"' in body and "series-1" in body
    assert "Launch Day AI" in body and "Remediated AI" in body
    differing = {row["rule_id"]: row for row in response.context["differing"]}
    assert "KV-POOL-BELOW-CONTEXT" in differing
    cells = differing["KV-POOL-BELOW-CONTEXT"]["cells"]
    assert cells[0] is not None and cells[1] is None
    common = {row["rule_id"] for row in response.context["common"]}
    assert common and not (common & set(differing))
    launch_rules = set(launch.latest_run.findings.values_list("rule_id", flat=True))
    remediated_rules = set(remediated.latest_run.findings.values_list("rule_id", flat=True))
    assert set(differing) == launch_rules ^ remediated_rules
    assert common == launch_rules & remediated_rules
    chart = response.context["chart"]
    assert len(chart.series) == 2
    assert all(len(group.bars) == 2 for group in chart.groups)


@pytest.mark.parametrize("count", [0, 1, 6])
def test_fewer_than_two_or_more_than_five_is_an_error(client, personas, catalog, settings, count):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    ids = [make_scored(personas, make_vendor(personas, f"V{i}"), log=False).pk for i in range(6)]
    client.force_login(personas.vic)
    response = client.get(COMPARE, {"assessments": ids[:count]} if count else {"assessments": ""})
    assert response.status_code == 200
    assert response.context["form"].errors
    assert "columns" not in response.context
    assert 'class="error-summary"' in response.content.decode()


def test_an_unscored_or_unknown_id_is_not_a_choice(client, personas, pair, draft):
    client.force_login(personas.vic)
    for bad in (draft.pk, 999999, "abc"):
        response = client.get(COMPARE, {"assessments": [pair[0].pk, bad]})
        assert response.status_code == 200
        assert "assessments" in response.context["form"].errors


def test_comparing_five_costs_no_more_queries_than_comparing_two(
    client, personas, catalog, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    ids = [
        make_scored(personas, make_vendor(personas, f"V{i}"), log=i % 2 == 0).pk for i in range(5)
    ]
    make_draft(personas, make_vendor(personas, "Draft AI"))
    client.force_login(personas.vic)

    def queries(chosen):
        with CaptureQueriesContext(connection) as captured:
            assert client.get(COMPARE, {"assessments": chosen}).status_code == 200
        return len(captured.captured_queries)

    assert queries(ids[:2]) == queries(ids)


def test_each_landmark_of_the_comparison_has_a_name_of_its_own(client, personas, pair):
    """A screen reader's list of landmarks shows every region once: the scrolling tables are
    named by their captions, not by the heading of the section around them."""
    client.force_login(personas.vic)
    page = Elements()
    page.feed(client.get(COMPARE, {"assessments": [p.pk for p in pair]}).content.decode())
    landmarks = [
        e["attrs"]["aria-labelledby"]
        for e in page.all
        if "aria-labelledby" in e["attrs"]
        and (e["tag"] == "section" or e["attrs"].get("role") == "region")
    ]
    assert len(landmarks) >= 4
    assert len(landmarks) == len(set(landmarks)), landmarks
