"""Lists that do not grow with the portfolio: cursor pages, cached counts, a query count that
does not depend on the number of rows."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from assessments.models import Channel
from assessments.services.answers import assessment_create, assessment_update
from assessments.services.vendors import vendor_create
from tests.api.test_vendors import add_vendors

LIST = "/api/v1/assessments/"
VENDORS = "/api/v1/vendors/"
QUESTIONNAIRE = "ai-inference-isolation@1"


def create_assessments(personas, vendor, number):
    return [
        assessment_create(
            organization=personas.acme,
            vendor=vendor,
            questionnaire_key=QUESTIONNAIRE,
            actor=personas.ava,
            channel=Channel.WEB,
        )
        for _ in range(number)
    ]


def walk(client, url, **query):
    """Every page, following `next`; the ids in the order given and the queries of each page."""
    ids, queries = [], []
    response = client.get(url, query)
    while True:
        with CaptureQueriesContext(connection) as captured:
            body = client.get(
                response.request["PATH_INFO"] + "?" + response.request["QUERY_STRING"]
            ).json()
        queries.append(len(captured))
        ids += [item["id"] for item in body["results"]]
        if not body["next"]:
            return ids, queries
        response = client.get(body["next"])


def counting_queries(captured):
    return [q["sql"] for q in captured.captured_queries if "COUNT(" in q["sql"].upper()]


def test_following_next_gives_every_assessment_once_newest_first(
    personas, vendor, catalog, client_as, settings
):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "PAGE_SIZE": 4}
    created = create_assessments(personas, vendor, 10)
    client = client_as(personas.vic)

    ids, queries = walk(client, LIST)

    assert ids == [a.pk for a in reversed(created)]
    assert len(queries) == 3  # pages of 4, 4 and 2


def test_a_cursor_keeps_the_filters(personas, vendor, catalog, client_as, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "PAGE_SIZE": 2}
    other = vendor_create(
        organization=personas.acme, actor=personas.alice, channel=Channel.WEB, name="Other AI"
    )
    mine = create_assessments(personas, vendor, 5)
    create_assessments(personas, other, 3)

    ids, _queries = walk(client_as(personas.vic), LIST, vendor=vendor.pk)

    assert sorted(ids) == sorted(a.pk for a in mine)


def test_a_broken_cursor_is_a_404_not_a_500(personas, catalog, client_as):
    response = client_as(personas.vic).get(LIST, {"cursor": "not-a-cursor"})

    assert response.status_code == 404
    assert response.json()["errors"]


@pytest.mark.parametrize("url", [LIST, VENDORS])
def test_the_number_of_queries_does_not_grow_with_the_list(
    personas, vendor, catalog, client_as, settings, url
):
    """Two sizes (a short list, then one of several pages): the same queries per page."""
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "PAGE_SIZE": 5}
    client = client_as(personas.vic)
    create_assessments(personas, vendor, 3)
    add_vendors(personas, 3, prefix="Small")
    _ids, small = walk(client, url)

    create_assessments(personas, vendor, 30)
    add_vendors(personas, 30, prefix="Large")
    _ids, large = walk(client, url)

    assert len(small) == 1 and len(large) == 7
    assert set(large) == set(small), (small, large)


def test_the_count_is_taken_once_until_the_assessments_change(personas, vendor, catalog, client_as):
    created = create_assessments(personas, vendor, 3)
    client = client_as(personas.vic)
    assert client.get(LIST, {"status": "draft"}).json()["count"] == 3

    with CaptureQueriesContext(connection) as again:
        assert client.get(LIST, {"status": "draft"}).json()["count"] == 3
    assert counting_queries(again) == []

    # A new assessment and a changed one move the version the count is cached under.
    create_assessments(personas, vendor, 1)
    assert client.get(LIST, {"status": "draft"}).json()["count"] == 4
    assessment_update(assessment=created[0], actor=personas.ava, channel=Channel.WEB, due_date=None)
    with CaptureQueriesContext(connection) as changed:
        assert client.get(LIST, {"status": "draft"}).json()["count"] == 4
    assert len(counting_queries(changed)) == 1


def test_the_vendor_count_follows_new_vendors(personas, client_as):
    client = client_as(personas.vic)
    assert client.get(VENDORS).json()["count"] == 0

    vendor_create(
        organization=personas.acme, actor=personas.alice, channel=Channel.WEB, name="New AI"
    )

    assert client.get(VENDORS).json()["count"] == 1
