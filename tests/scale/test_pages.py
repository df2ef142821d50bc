"""The member pages that list the portfolio cost the same queries whatever its size."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from assessments.models import Assessment
from bench.portfolio import copy_assessments

PAGES = [
    "/",
    "/?page=2",
    "/?status=scored",
    "/vendors/",
    "/vendors/?page=2",
    "/assessments/compare/",
    "/assessments/new/",  # the vendor to assess is chosen from a bounded, searchable list
]


def queries_and_size(client, url):
    client.get(url)  # the cached counts are taken by the first visit after a change
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(captured), len(response.content)


@pytest.mark.parametrize("url", PAGES)
def test_a_list_page_costs_the_same_at_two_sizes(scored_template, personas, client, url):
    client.force_login(personas.alice)
    copy_assessments([scored_template], copies=60, assessments_per_vendor=1, newest=timezone.now())
    small = queries_and_size(client, url)

    copy_assessments([scored_template], copies=300, assessments_per_vendor=1, newest=timezone.now())
    large = queries_and_size(client, url)

    assert large[0] == small[0], (small, large)
    # The same number of rows is shown (a full page, or the picker's bounded list).
    assert large[1] < small[1] * 1.2, (small, large)


def test_the_comparison_reads_the_chosen_assessments_only(scored_template, personas, client):
    client.force_login(personas.alice)
    copy_assessments([scored_template], copies=80, newest=timezone.now())
    chosen = list(Assessment.objects.order_by("pk").values_list("pk", flat=True)[:3])

    response = client.get("/assessments/compare/", {"assessments": chosen})

    assert response.status_code == 200
    assert len(response.context["columns"]) == 3
    assert len(response.context["candidates"]) <= 50 + 3


def test_another_organizations_assessment_cannot_be_compared(scored_template, personas, client):
    client.force_login(personas.oscar)

    response = client.get("/assessments/compare/", {"assessments": [scored_template.pk] * 2})

    assert response.status_code == 200
    assert "columns" not in response.context
    assert response.context["form"].errors
