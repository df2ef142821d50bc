"""Uploading a catalogue: a draft saved from a checked file, or precise problems and nothing
saved."""

import pytest

from core.errors import ForbiddenError
from questionnaires.models import CatalogStatus, QuestionnaireVersion
from scoring.catalogue_files.problems import CatalogueInvalid
from scoring.models import Ruleset
from scoring.services import catalogue_upload
from tests.catalogues.conftest import example_bytes, upload
from tests.personas import member_of

pytestmark = pytest.mark.django_db


def problems_of(personas, data: bytes) -> list[dict]:
    before = (QuestionnaireVersion.objects.count(), Ruleset.objects.count())
    with pytest.raises(CatalogueInvalid) as raised:
        upload(personas, data)
    assert (QuestionnaireVersion.objects.count(), Ruleset.objects.count()) == before
    return [problem.as_dict() for problem in raised.value.problems]


def test_a_valid_file_is_saved_as_a_draft_of_the_organization(catalog, personas):
    draft = upload(personas)
    assert (draft.questionnaire.key, draft.ruleset.key) == ("vendor-dd@1", "vendor-dd-rules@1")
    assert draft.questionnaire.organization == personas.acme
    assert draft.ruleset.status == draft.questionnaire.status == CatalogStatus.DRAFT
    assert not draft.english_only
    assert [rule.rule_id for rule in draft.ruleset.rules.all()] == [
        "DD-NO-REGISTER", "DD-DATA-ABROAD", "DD-LONG-RETENTION",
    ]  # fmt: skip
    # Its own framework reference is citable through the spec.
    assert draft.ruleset.spec.rules_by_id["DD-NO-REGISTER"].references == ("ACME-POL-7",)


def test_uploading_again_replaces_the_draft(catalog, personas):
    upload(personas)
    draft = upload(personas, example_bytes(**{"Governance": "Oversight"}))
    assert QuestionnaireVersion.objects.filter(organization=personas.acme).count() == 1
    assert draft.questionnaire.spec.sections[0].title.en == "Oversight"


def test_only_a_member_who_manages_catalogues_may_upload(catalog, personas):
    with pytest.raises(ForbiddenError):
        catalogue_upload(
            context=member_of(personas.ava, personas.acme), data=example_bytes(), source_name="x"
        )


def test_a_catalogue_without_chinese_is_english_only_not_half_translated(catalog, personas):
    draft = upload(personas, example_bytes(**{", zh-hant: 管治}": "}"}))
    assert draft.english_only and draft.missing_chinese == 1
    spec = draft.questionnaire.spec
    assert spec.title.get("zh-hant") == "Vendor due diligence"  # the Chinese title is not kept
    assert draft.questionnaire.content["languages"] == ["en"]


def test_a_yaml_error_names_its_line(catalog, personas):
    [problem] = problems_of(personas, example_bytes(**{"  slug: vendor-dd\n": "  slug: [\n"}))
    assert problem["line"] is not None and "YAML" in problem["message"]


def test_an_unknown_question_code_in_a_rule_names_the_rule_and_its_line(catalog, personas):
    [problem] = problems_of(personas, example_bytes(**{"GOV_02 == ": "GOV_09 == "}))
    assert problem["code"] == "DD-DATA-ABROAD"
    assert problem["line"] == 47  # its condition
    assert "GOV_09" in problem["message"]


def test_a_string_that_is_not_an_option_is_refused(catalog, personas):
    [problem] = problems_of(personas, example_bytes(**{'"abroad"': '"abraod"'}))
    assert problem["code"] == "DD-DATA-ABROAD" and "abraod" in problem["message"]


def test_duplicate_ids_are_each_reported(catalog, personas):
    found = problems_of(
        personas,
        example_bytes(
            **{"code: GOV-03": "code: GOV-01", "id: DD-DATA-ABROAD": "id: DD-NO-REGISTER"}
        ),
    )
    assert {(p["code"], p["line"]) for p in found} == {("GOV-01", 26), ("DD-NO-REGISTER", 45)}


def test_a_shipped_slug_cannot_be_taken(catalog, personas):
    [problem] = problems_of(
        personas,
        example_bytes(
            **{
                "slug: vendor-dd\n": "slug: ai-inference-isolation\n",
                "vendor-dd@1": "ai-inference-isolation@1",
            }
        ),
    )
    assert "shipped" in problem["message"]


VERSION_2 = """
questionnaire:
  slug: vendor-dd
  version: "2"
  extends: vendor-dd@1
  add_questions:
    GOV:
      - code: GOV-04
        type: yes_no
        text: {en: Do you test models before release?, zh-hant: 你是否在發布前測試模型？}
ruleset:
  slug: vendor-dd-rules
  version: "2"
  questionnaire: vendor-dd@2
  applies_to: [vendor-dd@1]
  title: {en: Rules v2, zh-hant: 規則第二版}
  points: {critical: 40, high: 15, medium: 5, low: 1}
  rules:
    - id: DD-UNTESTED
      severity: medium
      when: 'GOV_04 == "no"'
      title: {en: Models untested, zh-hant: 模型未經測試}
      rationale: {en: Testing finds leaks., zh-hant: 測試能發現洩漏。}
      remediation: {en: Test them., zh-hant: 測試模型。}
"""


def test_a_new_version_extends_the_published_one(published, personas):
    draft = upload(personas, VERSION_2.encode())
    spec = draft.questionnaire.spec
    assert draft.questionnaire.key == "vendor-dd@2"
    assert [q.code for q in spec.iter_questions()] == ["GOV-01", "GOV-02", "GOV-03", "GOV-04"]
    assert set(draft.ruleset.applies_to.values_list("version", flat=True)) == {"1", "2"}


def test_extending_a_version_the_organization_does_not_have_is_refused(catalog, personas):
    [problem] = problems_of(personas, VERSION_2.encode())
    assert "vendor-dd@1" in problem["message"] and problem["line"] == 5
