import datetime as dt

import pytest

from assessments.models import Answer, Assessment, AuditEvent, Channel
from assessments.services.answers import assessment_create
from assessments.services.vendors import vendor_create

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]

LIST = "/api/v1/assessments/"
QUESTIONNAIRE = "ai-inference-isolation@1"


def detail(assessment):
    return f"/api/v1/assessments/{assessment.pk}/"


def create(personas, vendor, **fields):
    return assessment_create(
        organization=personas.acme,
        vendor=vendor,
        questionnaire_key=QUESTIONNAIRE,
        actor=personas.ava,
        channel=Channel.WEB,
        **fields,
    )


# -- create --------------------------------------------------------------------------------


def test_an_assessor_starts_an_assessment(personas, vendor, catalog, client_as):
    response = client_as(personas.ava).post(
        LIST,
        {
            "vendor": vendor.pk,
            "questionnaire": QUESTIONNAIRE,
            "due_date": "2026-12-31",
            "answers": {"USE-01": "regulated", "CTX-01": "1,048,576"},
        },
        format="json",
    )

    assert response.status_code == 201
    body = response.json()
    assessment = Assessment.objects.get()
    assert body["id"] == assessment.pk
    assert (body["status"], body["questionnaire"], body["vendor"]) == (
        "draft", QUESTIONNAIRE, vendor.pk,
    )  # fmt: skip
    assert body["due_date"] == "2026-12-31"
    assert body["answers"] == {"USE-01": "regulated", "CTX-01": 1048576}
    assert (body["risk_score"], body["risk_tier"], body["scored_with"]) == (None, "", None)
    assert body["findings"] == body["runs"] == body["evidence"] == []
    assert (assessment.organization, assessment.created_by) == (personas.acme, personas.ava)
    assert AuditEvent.objects.get(action="assessment.created").channel == Channel.API


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({}, {"vendor", "questionnaire"}),
        ({"questionnaire": QUESTIONNAIRE}, {"vendor"}),
        ({"vendor": "abc", "questionnaire": QUESTIONNAIRE}, {"vendor"}),
        ({"vendor": 999999, "questionnaire": QUESTIONNAIRE}, {"vendor"}),
        ({"vendor": None, "questionnaire": QUESTIONNAIRE}, {"vendor"}),
        ({"vendor": "VENDOR", "questionnaire": "nope@9"}, {"questionnaire"}),
        ({"vendor": "VENDOR", "questionnaire": ["a"]}, {"questionnaire"}),
        ({"vendor": "VENDOR", "questionnaire": QUESTIONNAIRE, "due_date": "31/12"}, {"due_date"}),
        ({"vendor": "VENDOR", "questionnaire": QUESTIONNAIRE, "answers": "x"}, {"answers"}),
        ({"vendor": "VENDOR", "questionnaire": QUESTIONNAIRE, "vendr": 1}, {"vendr"}),
        (
            {
                "vendor": "VENDOR",
                "questionnaire": QUESTIONNAIRE,
                "answers": {"CTX-01": "1M", "PRF-01": "ok", "NOPE-1": "x"},
            },
            {"CTX-01", "NOPE-1"},
        ),
    ],
)
def test_bad_assessment_input_is_a_400_per_field_and_saves_nothing(
    personas, vendor, catalog, client_as, body, fields
):
    if body.get("vendor") == "VENDOR":
        body = {**body, "vendor": vendor.pk}

    response = client_as(personas.ava).post(LIST, body, format="json")

    assert response.status_code == 400
    assert set(response.json()["errors"]) == fields
    assert not Assessment.objects.exists()
    assert not Answer.objects.exists()


def test_a_vendor_of_another_organization_is_unknown(personas, catalog, client_as):
    theirs = vendor_create(
        organization=personas.other, actor=personas.oscar, channel=Channel.WEB, name="Theirs"
    )

    response = client_as(personas.ava).post(
        LIST, {"vendor": theirs.pk, "questionnaire": QUESTIONNAIRE}, format="json"
    )

    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["vendor"]
    assert not Assessment.objects.exists()


# -- detail --------------------------------------------------------------------------------


def test_the_detail_of_a_draft_shows_answers_and_comments(personas, answered, client_as):
    body = client_as(personas.vic).get(detail(answered)).json()

    assert body["status"] == "draft"
    assert body["answers"]["CTX-01"] == 1048576
    assert body["answers"]["GOV-01"] == ["soc2_type2", "iso27001"]
    assert "ISO-05" not in body["answers"]  # blank answers are left out
    assert body["comments"]["KV-01"].startswith("Pages are not zeroed")
    assert body["reopened"] == []


def test_the_detail_of_a_scored_assessment_shows_findings_and_runs(personas, scored, client_as):
    body = client_as(personas.vic).get(detail(scored)).json()

    assert body["status"] == "scored"
    assert body["risk_tier"] == "critical"
    assert body["risk_score"] == scored.risk_score
    assert body["scored_with"] == "incident-2026-kv@3"  # newest that scores v1 answers
    rules = {finding["rule"]: finding for finding in body["findings"]}
    finding = rules["KV-POOL-BELOW-CONTEXT"]
    assert set(finding) == {
        "rule", "severity", "points", "title", "section", "references", "evidence",
        "evidence_items",
    }  # fmt: skip
    assert finding["severity"] == "critical"
    assert finding["section"] == "CTX"
    assert finding["title"] == "KV cache pool is smaller than the advertised context"
    assert finding["references"]
    assert any("681280" in line for line in finding["evidence"])
    assert {"kind": "answer", "code": "CTX-02", "value": 681280} in finding["evidence_items"]
    [run] = body["runs"]
    assert run["id"] == scored.latest_run_id
    assert (run["ruleset"], run["status"], run["tier"]) == (
        "incident-2026-kv@3", "succeeded", "critical",
    )  # fmt: skip
    assert run["score"] == body["risk_score"]


def test_finding_titles_follow_the_requested_language(personas, scored, client_as):
    client = client_as(personas.vic)
    english = client.get(detail(scored)).json()["findings"][0]["title"]
    chinese = client.get(detail(scored), HTTP_ACCEPT_LANGUAGE="zh-hant").json()["findings"][0]

    assert chinese["title"] != english
    assert chinese["rule"] == client.get(detail(scored)).json()["findings"][0]["rule"]


# -- list and filters ----------------------------------------------------------------------


@pytest.fixture
def several(personas, vendor, catalog):
    other_vendor = vendor_create(
        organization=personas.acme, actor=personas.alice, channel=Channel.WEB, name="Other AI"
    )
    due = dt.date(2026, 11, 30)
    first = create(personas, vendor, due_date=due)
    second = create(personas, vendor, due_date=due + dt.timedelta(days=10))
    third = create(personas, other_vendor)
    Assessment.objects.filter(pk=first.pk).update(status="scored", risk_tier="high", risk_score=30)
    Assessment.objects.filter(pk=third.pk).update(status="sent")
    return {"first": first, "second": second, "third": third, "other_vendor": other_vendor}


def ids(response):
    assert response.status_code == 200, response.json()
    return {item["id"] for item in response.json()["results"]}


def test_the_list_shows_the_organizations_assessments_newest_first(personas, several, client_as):
    body = client_as(personas.vic).get(LIST).json()

    assert body["count"] == 3
    assert [a["id"] for a in body["results"]] == [
        several["third"].pk, several["second"].pk, several["first"].pk,
    ]  # fmt: skip
    assert body["results"][0]["vendor_name"] == "Other AI"
    assert "answers" not in body["results"][0]


def test_the_list_filters_by_status_tier_vendor_and_due_date(personas, several, client_as):
    client = client_as(personas.vic)
    first, second, third = several["first"].pk, several["second"].pk, several["third"].pk

    assert ids(client.get(LIST, {"status": "sent"})) == {third}
    assert ids(client.get(LIST, {"tier": "high"})) == {first}
    assert ids(client.get(LIST, {"vendor": several["other_vendor"].pk})) == {third}
    assert ids(client.get(LIST, {"due_before": "2026-11-30"})) == {first}
    assert ids(client.get(LIST, {"due_after": "2026-12-01"})) == {second}
    assert ids(client.get(LIST, {"due_after": "2026-11-01", "status": "draft"})) == {second}
    assert ids(client.get(LIST, {"vendor": 424242})) == set()


@pytest.mark.parametrize(
    "query",
    [
        {"status": "finished"},
        {"tier": "catastrophic"},
        {"vendor": "abc"},
        {"vendor": "1.5"},
        {"vendor": "0"},
        {"vendor": "99999999999999999999"},
        {"due_before": "tomorrow"},
        {"due_after": "2026-02-30"},
    ],
)
def test_an_invalid_filter_is_a_400_naming_it(personas, several, client_as, query):
    response = client_as(personas.vic).get(LIST, query)

    assert response.status_code == 400
    assert set(response.json()["errors"]) == set(query)


def test_the_list_is_paginated(personas, vendor, catalog, client_as):
    for _ in range(51):
        create(personas, vendor)
    client = client_as(personas.vic)

    first = client.get(LIST).json()
    assert (first["count"], len(first["results"])) == (51, 50)
    assert len(client.get(first["next"]).json()["results"]) == 1
