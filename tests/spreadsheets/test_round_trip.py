"""The round trip of issue 13: export the workbook, fill it as a person would, import it.

Bad cells are reported by sheet, row and code and nothing is saved; the clean workbook then
scores exactly as the same answers sent through the API.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from assessments import factories
from assessments.models import AnswerDraft, AssessmentStatus, AuditEvent
from assessments.services.scoring_runs import scoring_run_execute
from tests.personas import member_of

from .conftest import as_typed, fill, saved_answers, upload, waiting_assessment

pytestmark = pytest.mark.django_db


def vendor_answers(spec) -> dict:
    launch = factories.example()["answers"]
    return {
        code: value for code, value in launch.items() if spec.questions[code].section not in {"USE"}
    }


def portal_workbook(client: Client, token: str, language: str = "en") -> bytes:
    response = client.get(reverse("portal_workbook:download", args=[token, language]))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.openxmlformats")
    return response.content


def portal_upload(client: Client, token: str, content: bytes):
    return client.post(reverse("portal_workbook:page", args=[token]), {"workbook": upload(content)})


def test_a_workbook_filled_as_a_person_would_is_refused_cell_by_cell_and_saves_nothing(
    waiting, client
):
    spec = waiting.assessment.questionnaire.spec
    answers = vendor_answers(spec)
    typed = as_typed(spec, answers, "en")
    typed["CTX-02"] = "681280"  # a number stored as text
    typed["CTX-03"] = "1,179,648"  # grouped, as the forms accept it
    typed["PRF-05"] = "SGLang"  # a label, not the code
    typed["CTX-01"] = "1M"  # refused by the forms
    typed["KV-01"] = None  # a blank required cell
    before = saved_answers(waiting.assessment)

    response = portal_upload(
        client, waiting.token, fill(portal_workbook(client, waiting.token), typed)
    )

    assert response.status_code == 400
    cells = {(c.sheet, c.code): c for c in response.context["cells"]}
    assert set(cells) == {("CTX", "CTX-01"), ("KV", "KV-01")}
    # The row is the row of that code in the workbook: the person finds it there.
    assert cells[("CTX", "CTX-01")].row == 4
    assert "1M" in cells[("CTX", "CTX-01")].message
    assert cells[("KV", "KV-01")].message == "This question is required."
    page = response.content.decode()
    assert "CTX-01" in page and "KV-01" in page
    # The same message as the forms give for "1M".
    form = client.post(reverse("portal:section", args=[waiting.token, "CTX"]), {"CTX-01": "1M"})
    assert cells[("CTX", "CTX-01")].message in form.content.decode()
    assert saved_answers(waiting.assessment) == before
    # Nothing kept as drafts by the workbook (the form post above kept its own).
    assert (
        not AnswerDraft.objects.filter(assessment=waiting.assessment)
        .exclude(question_code="CTX-01")
        .exists()
    )


def test_a_clean_workbook_scores_exactly_as_the_same_answers_through_the_api(
    catalog, personas, client, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    ava = member_of(personas.ava)
    by_workbook = waiting_assessment(ava)
    by_api = waiting_assessment(ava)
    spec = by_workbook.assessment.questionnaire.spec
    answers = vendor_answers(spec)
    typed = as_typed(spec, answers, "en")
    typed["CTX-02"] = "681280"
    typed["CTX-03"] = "1,179,648"

    response = portal_upload(
        client, by_workbook.token, fill(portal_workbook(client, by_workbook.token), typed)
    )
    assert response.status_code == 302, response.context and response.context["cells"]

    api = Client()
    api.force_login(personas.ava)
    patch = api.patch(
        reverse("api:assessment-answers", args=[by_api.assessment.pk]),
        json.dumps({"answers": answers}),
        content_type="application/json",
    )
    assert patch.status_code == 200, patch.content
    assert saved_answers(by_workbook.assessment) == saved_answers(by_api.assessment)

    results = []
    for waiting in (by_workbook, by_api):
        submitted = api.post(reverse("api:assessment-submit", args=[waiting.assessment.pk]))
        assert submitted.status_code == 202, submitted.content
        waiting.assessment.refresh_from_db()
        run = waiting.assessment.runs.get()
        scoring_run_execute(run_id=run.pk)
        run.refresh_from_db()
        results.append(
            (
                run.risk_score,
                run.risk_tier,
                sorted(run.findings.values_list("rule_id", "severity", "points")),
            )
        )
    assert results[0] == results[1]
    assert results[0][1] == "critical"  # the launch-day answers: the incident's finding fires


def test_a_workbook_exported_in_chinese_imports_exactly_like_one_in_english(
    catalog, personas, client
):
    ava = member_of(personas.ava)
    english, chinese = waiting_assessment(ava), waiting_assessment(ava)
    spec = english.assessment.questionnaire.spec
    answers = vendor_answers(spec)
    for waiting, language in ((english, "en"), (chinese, "zh-hant")):
        content = fill(
            portal_workbook(client, waiting.token, language),
            as_typed(spec, answers, language),
        )
        response = portal_upload(client, waiting.token, content)
        assert response.status_code == 302, [(c.code, c.message) for c in response.context["cells"]]
    assert saved_answers(chinese.assessment) == saved_answers(english.assessment)
    assert {k: v for k, v in saved_answers(english.assessment).items() if k in answers} == answers
    # A Chinese label in an English workbook reads the same, and so does a code.
    mixed = waiting_assessment(ava)
    typed = as_typed(spec, answers, "en")
    typed["PRF-07"] = "是"
    typed["PRF-03"] = "shared_multi_tenant"
    assert (
        portal_upload(
            client, mixed.token, fill(portal_workbook(client, mixed.token), typed)
        ).status_code
        == 302
    )
    assert saved_answers(mixed.assessment) == saved_answers(english.assessment)


def test_answers_change_only_where_the_reviewer_reopened_them(catalog, personas, client, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    ava = member_of(personas.ava)
    scored = factories.incident_assessment(member=ava, through_link=True)
    from assessments.services.reviews import review_record

    review_record(
        assessment=scored,
        member=member_of(personas.rex),
        decision="changes_requested",
        message="Check the pool size.",
        reopen_codes=["CTX-02"],
        channel="web",
    )
    scored.refresh_from_db()
    assert scored.status == AssessmentStatus.CHANGES_REQUESTED
    from assessments.services.vendor_links import vendor_link_issue

    _link, token = vendor_link_issue(
        assessment=scored, contact_email="sec@vendor.test", member=ava, channel="web"
    )
    content = portal_workbook(client, token)
    refused = portal_upload(client, token, fill(content, {"CTX-02": 700000, "CTX-01": 2000000}))
    assert refused.status_code == 400
    assert [(c.code, c.message) for c in refused.context["cells"]] == [
        ("CTX-01", "This question cannot be changed now.")
    ]
    accepted = portal_upload(client, token, fill(content, {"CTX-02": 700000}))
    assert accepted.status_code == 302
    assert saved_answers(scored)["CTX-02"] == 700000
    assert saved_answers(scored)["CTX-01"] == 1048576


def test_multi_line_text_typed_in_the_portal_comes_back_unchanged(waiting, client):
    """A browser sends a text area's line breaks as CR LF; a workbook cell gives LF back (XML
    reads every CR LF as LF). The same text must read as the same answer: an unchanged
    workbook changes nothing, and a locked question's text is not "changed"."""
    spec = waiting.assessment.questionnaire.spec
    answers = vendor_answers(spec)
    for section in ("PRF", "CTX", "KV", "ISO", "CHG", "INC", "GOV"):
        form = {
            code: value
            for code, value in answers.items()
            if spec.questions[code].section == section and spec.questions[code].type != "file"
        }
        if section == "PRF":
            form["PRF-01"] = 'GLM-5.3, "hosted"\r\nsecond line 中文\r\n\r\nthird'
            form["comment-PRF-01"] = "checked by\r\nthe KV team"
        response = client.post(reverse("portal:section", args=[waiting.token, section]), form)
        assert response.status_code == 302, section
    before = saved_answers(waiting.assessment)
    before_comments = dict(waiting.assessment.answers.values_list("question_code", "comment"))

    response = portal_upload(client, waiting.token, portal_workbook(client, waiting.token))

    assert response.status_code == 302, [(c.code, c.message) for c in response.context["cells"]]
    assert saved_answers(waiting.assessment) == before
    assert (
        dict(waiting.assessment.answers.values_list("question_code", "comment")) == before_comments
    )
    event = AuditEvent.objects.get(assessment=waiting.assessment, action="answers.imported")
    assert event.detail["codes"] == []
