"""The rule workbench's pages: answers tried three ways (the questionnaire's form, a JSON file,
an assessment), every rule fired or not and why, test cases saved with their accepted result,
the impact of a version on the test cases of another and on the organization's assessments,
each rule's static problem; and tenancy (another organization's assessment or case is 404)."""

from __future__ import annotations

import copy
import datetime as dt
import json

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from assessments.models import Channel
from assessments.services.answers import answers_save
from assessments.services.submission import assessment_submit
from scoring.models import Ruleset, RulesetTestCase
from scoring.services import catalogue_publish, catalogue_upload, ruleset_test_case_save
from tests.catalogues.conftest import EXAMPLE, upload
from tests.catalogues.test_scoping import new_assessment
from tests.personas import member_of

from .conftest import V1, V2, expected, scored_with

ABROAD = {"GOV-01": "unknown", "GOV-02": "abroad"}


def ruleset(key: str) -> Ruleset:
    slug, version = key.split("@")
    return Ruleset.objects.get(slug=slug, version=version)


def page(key: str, name: str = "portfolio:workbench", *args) -> str:
    return reverse(name, args=[ruleset(key).pk, *args])


@pytest.fixture
def launch(catalog, personas):
    return scored_with(
        V1,
        organization=personas.acme,
        actor=personas.ava,
        vendor_name="Inferno AI",
        fixture="incident-2026-launch",
    )


def outcome(response, rule_id):
    return next(r for r in response.context["rules"] if r.rule_id == rule_id).outcome


def test_answers_entered_in_the_form_show_each_rule_fired_or_not_and_why(client, personas, catalog):
    client.force_login(personas.vic)  # any member may explore a ruleset
    url = page(V1)
    assert client.get(url).status_code == 200
    response = client.post(url, {"source": "form", "PRF-05": "sglang", "PRF-07": "unknown"})
    assert response.status_code == 200
    result = response.context["explanation"].result
    assert "ARCHITECTURE-UNKNOWN" in result.fired_rule_ids
    fired = outcome(response, "ARCHITECTURE-UNKNOWN")
    assert fired.fired and [(r.code, r.value) for r in fired.reads] == [("PRF-07", "unknown")]
    stopped = outcome(response, "SGLANG-DISAGG-REJECTION")
    assert not stopped.fired and stopped.blank == ("PRF-06",)
    html = response.content.decode()
    assert "Not evaluated: blank or not asked" in html and "PRF_07 == &quot;unknown&quot;" in html
    assert "Save as a test case" not in html  # a viewer cannot save


def test_an_uploaded_answer_file_is_scored_and_a_bad_one_named(client, personas, catalog, launch):
    client.force_login(personas.ava)
    answers = {"answers": dict(launch.answers.values_list("question_code", "value"))}
    good = SimpleUploadedFile("answers.json", json.dumps(answers).encode())
    response = client.post(page(V1), {"source": "file", "answers_file": good})
    result = response.context["explanation"].result
    assert (result.risk_score, result.risk_tier) != (None, "")
    assert "Save as a test case" in response.content.decode()

    bad = {"answers": {"PRF-07": "perhaps", "NOPE-01": "yes"}}
    upload = SimpleUploadedFile("bad.json", json.dumps(bad).encode())
    response = client.post(page(V1), {"source": "file", "answers_file": upload})
    assert response.context["explanation"] is None
    errors = " ".join(response.context["upload_form"].errors["answers_file"])
    assert "PRF-07:" in errors and "NOPE-01:" in errors
    not_json = SimpleUploadedFile("x.json", b"{oops")
    response = client.post(page(V1), {"source": "file", "answers_file": not_json})
    assert "not JSON" in " ".join(response.context["upload_form"].errors["answers_file"])


def test_an_assessment_of_the_organization_is_scored_as_the_workers_score_it(
    client, personas, catalog, launch
):
    other = scored_with(
        V1,
        organization=personas.other,
        actor=personas.oscar,
        vendor_name="X",
        fixture="incident-2026-launch",
    )
    client.force_login(personas.ava)
    response = client.post(page(V1), {"source": "assessment", "assessment": launch.pk})
    result = response.context["explanation"].result
    want = expected(launch, V1)
    assert (result.risk_score, result.risk_tier) == (want["risk_score"], want["risk_tier"])
    assert (result.risk_score, result.risk_tier) == (launch.risk_score, launch.risk_tier)
    refused = client.post(page(V1), {"source": "assessment", "assessment": other.pk})
    assert refused.context["explanation"] is None  # not one of the choices
    assert "assessment" in refused.context["pick_form"].errors


def test_a_saved_test_case_keeps_its_accepted_result_and_belongs_to_one_organization(
    client, personas, catalog
):
    client.force_login(personas.ava)
    answers = json.dumps({"PRF-07": "unknown"})
    response = client.post(
        page(V1, "portfolio:workbench_case_save"),
        {"name": "Unknown architecture", "answers_json": answers},
    )
    case = RulesetTestCase.objects.get()
    assert response.status_code == 302 and f"?case={case.pk}" in response["Location"]
    assert case.organization == personas.acme
    assert "ARCHITECTURE-UNKNOWN" in case.findings and case.findings == sorted(case.findings)
    shown = client.get(page(V1), {"case": case.pk})
    assert shown.context["explanation"].result.risk_tier == case.risk_tier
    assert shown.context["save_form"].initial["name"] == case.name  # to accept it again
    (row,) = shown.context["case_changes"]
    assert (row.test_case_id, row.added, row.removed) == (case.pk, [], [])

    client.force_login(personas.vic)  # a viewer may not save
    assert (
        client.post(
            page(V1, "portfolio:workbench_case_save"), {"name": "x", "answers_json": "{}"}
        ).status_code
        == 403
    )
    client.force_login(personas.oscar)  # another organization's case does not exist for him
    assert client.get(page(V1), {"case": case.pk}).status_code == 404
    assert client.post(page(V1, "portfolio:workbench_case_delete", case.pk)).status_code == 404
    assert client.get(page(V1)).context["cases"] == []

    client.force_login(personas.ava)
    bad = client.post(
        page(V1, "portfolio:workbench_case_save"), {"name": "Bad", "answers_json": '{"PRF-07": 3}'}
    )
    assert bad.status_code == 302 and RulesetTestCase.objects.count() == 1
    client.post(page(V1, "portfolio:workbench_case_delete", case.pk))
    assert not RulesetTestCase.objects.exists()


def test_the_impact_of_a_version_on_test_cases_and_assessments(client, personas, catalog, launch):
    case = ruleset_test_case_save(
        member=member_of(personas.ava),
        ruleset=ruleset(V1),
        name="Launch day",
        answers=dict(launch.answers.values_list("question_code", "value")),
        as_of=personas.acme.local_date(),
    )
    scored_with(
        V1,
        organization=personas.other,
        actor=personas.oscar,
        vendor_name="Elsewhere",
        fixture="incident-2026-launch",
    )
    client.force_login(personas.vic)
    response = client.get(page(V2, "portfolio:workbench_impact"))
    assert response.context["against"] == ruleset(V1)  # the version before, by default
    want = expected(launch, V2)
    (case_row,) = response.context["case_changes"]
    assert case_row.test_case_id == case.pk
    assert (case_row.after.risk_score, case_row.after.risk_tier) == (
        want["risk_score"],
        want["risk_tier"],
    )
    (row,) = response.context["assessment_changes"]  # not Other Org's
    assert row.assessment_id == launch.pk
    assert (row.after.risk_score, row.after.risk_tier) == (want["risk_score"], want["risk_tier"])
    before = set(launch.latest_run.findings.values_list("rule_id", flat=True))
    assert set(row.added) == set(want["rules"]) - before
    assert set(row.removed) == before - set(want["rules"])


def test_each_problem_is_shown_at_its_rule_and_nothing_is_scored(client, personas, catalog):
    v1 = ruleset(V1)
    content = copy.deepcopy(v1.content)
    content["version"] = "99"
    content["rules"][0]["when"] = 'PRF_07 == "unknwon"'
    content["rules"][1]["when"] = "NOPE_01 > 3"
    broken = Ruleset.objects.create(
        slug=v1.slug,
        version="99",
        questionnaire=v1.questionnaire,
        title_en="x",
        title_zh_hant="x",
        content=content,
        content_hash="broken",
    )
    broken.applies_to.set([v1.questionnaire])
    client.force_login(personas.ava)
    url = reverse("portfolio:workbench", args=[broken.pk])
    response = client.post(url, {"source": "form", "PRF-07": "unknown"})
    assert response.context["explanation"] is None
    first, second = response.context["rules"][:2]
    assert [p["names"] for p in first.problems] == ["unknwon"]
    assert [p["names"] for p in second.problems] == ["NOPE_01"]
    html = response.content.decode()
    assert (
        "Compared with a string that is not an option" in html and "Unknown question code" in html
    )


def test_the_workbench_reads_in_traditional_chinese(client, personas, catalog):
    client.force_login(personas.alice)
    client.cookies["django_language"] = "zh-hant"
    html = client.post(page(V1), {"source": "form", "PRF-07": "unknown"}).content.decode()
    assert "規則工作台" in html and "觸發" in html and "儲存為測試個案" in html
    assert "Rule workbench" not in html and "Run the rules" not in html


def test_a_custom_ruleset_is_tried_by_its_organization_only(client, personas, catalog):
    draft = upload(personas).ruleset  # Acme's draft: tried before it is published
    url = reverse("portfolio:workbench", args=[draft.pk])
    client.force_login(personas.alice)
    response = client.post(url, {"source": "form", "GOV-01": "no", "GOV-02": "abroad"})
    assert {"DD-NO-REGISTER", "DD-DATA-ABROAD"} <= response.context[
        "explanation"
    ].result.fired_rule_ids
    client.post(
        reverse("portfolio:workbench_case_save", args=[draft.pk]),
        {"name": "Abroad", "answers_json": json.dumps({"GOV-02": "abroad"})},
    )
    assert RulesetTestCase.objects.get().organization == personas.acme
    client.force_login(personas.oscar)  # another organization: its catalogue does not exist
    assert client.get(url).status_code == 404
    assert client.get(reverse("portfolio:workbench_impact", args=[draft.pk])).status_code == 404
    save = reverse("portfolio:workbench_case_save", args=[draft.pk])
    assert client.post(save, {"name": "x", "answers_json": "{}"}).status_code == 404


def test_a_draft_version_2_shows_what_publishing_it_would_change(
    client, personas, catalog, inline_scoring
):
    owner = member_of(personas.alice, personas.acme)
    v1 = upload(personas)
    catalogue_publish(context=owner, ruleset=v1.ruleset)
    assessment = new_assessment(personas.acme, personas.alice)
    answers_save(assessment=assessment, answers=ABROAD, actor=personas.alice, channel="web")
    with inline_scoring():
        assessment_submit(assessment=assessment, actor=personas.alice, channel=Channel.WEB)
    ruleset_test_case_save(
        member=owner, ruleset=v1.ruleset, name="Abroad", answers=ABROAD, as_of=dt.date(2026, 12, 1)
    )
    # Version 2 of the rules, a draft: data processed abroad is now a high finding, and only a
    # plain "no" counts as having no register.
    document = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    del document["questionnaire"]
    document["ruleset"]["version"] = "2"
    rules = {rule["id"]: rule for rule in document["ruleset"]["rules"]}
    rules["DD-DATA-ABROAD"]["severity"] = "high"
    rules["DD-NO-REGISTER"]["when"] = 'GOV_01 == "no"'
    v2 = catalogue_upload(
        context=owner,
        data=yaml.safe_dump(document, allow_unicode=True).encode(),
        source_name="v2.yaml",
    ).ruleset
    client.force_login(personas.alice)
    response = client.get(reverse("portfolio:workbench_impact", args=[v2.pk]))
    assert response.context["against"] == v1.ruleset
    (case_row,) = response.context["case_changes"]
    (row,) = response.context["assessment_changes"]
    for change in (case_row, row):
        assert (change.before.risk_score, change.after.risk_score) == (20, 15)
        assert (change.before.risk_tier, change.after.risk_tier) == ("high", "high")
        assert (change.added, change.removed) == ([], ["DD-NO-REGISTER"])
    assert row.assessment_id == assessment.pk
