"""New assessment: vendor, questionnaire version, due date and the buyer's USE answers rendered
from the catalogue, each with its own error."""

import datetime as dt

import pytest
from django.urls import reverse

from assessments.models import Answer, Assessment, AuditEvent, Vendor
from tests.html_elements import Elements

from .conftest import QUESTIONNAIRE, make_vendor

CREATE = reverse("assessments:create")


def form_data(chosen_vendor, **overrides):
    data = {
        "vendor": chosen_vendor.pk,
        "questionnaire": QUESTIONNAIRE,
        "rendered_for": QUESTIONNAIRE,
        "due_date": "2030-06-30",
        "USE-01": "confidential",
        "USE-02": "finance",
        "USE-03": "750,000",
        "USE-04": "yes",
        "USE-05": "yes",
        "comment-USE-03": "Loan document bundles.",
    }
    data.update(overrides)
    return {k: v for k, v in data.items() if v is not None}


def test_the_form_shows_every_use_question_from_the_catalogue(client, personas, vendor):
    client.force_login(personas.ava)
    response = client.get(CREATE, {"vendor": vendor.pk})
    assert response.status_code == 200
    body = response.content.decode()
    spec = response.context["questionnaire"]
    for question in spec.section("USE").questions:
        assert question.text.en in body
        assert f'name="{question.code}"' in body
    # vendor questions are not asked here
    assert 'name="PRF-01"' not in body
    assert response.context["form"]["vendor"].value() == str(vendor.pk)
    # choices are labelled radios inside a fieldset with a legend
    assert '<fieldset aria-describedby="q-USE-01_helptext' in body
    assert '<div id="q-USE-01">' in body  # the options, where an error summary links
    option = spec.questions["USE-01"].options[2].code
    assert f'for="q-USE-01-{option}"' in body


def test_the_questions_come_in_traditional_chinese(client, personas, vendor):
    client.force_login(personas.ava)
    client.cookies["django_language"] = "zh-hant"
    response = client.get(CREATE)
    spec = response.context["questionnaire"]
    body = response.content.decode()
    assert spec.questions["USE-03"].text.zh_hant in body
    assert spec.questions["USE-01"].options[2].label.zh_hant in body
    assert "詞元" in body  # the unit of USE-03


def test_an_assessor_creates_an_assessment_with_the_buyers_answers(client, personas, vendor):
    client.force_login(personas.ava)
    response = client.post(CREATE, form_data(vendor))
    assessment = Assessment.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("assessments:detail", args=[assessment.pk])
    assert assessment.due_date == dt.date(2030, 6, 30)
    assert assessment.created_by == personas.ava
    answers = {a.question_code: a for a in Answer.objects.filter(assessment=assessment)}
    assert answers["USE-03"].value == 750000
    assert answers["USE-03"].comment == "Loan document bundles."
    assert answers["USE-01"].value == "confidential"
    assert AuditEvent.objects.filter(action="assessment.created").count() == 1
    detail = client.get(response["Location"]).content.decode()
    assert "750,000 tokens" in detail


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"USE-03": "1M"}, "USE-03", "Enter a whole number of tokens"),
        ({"USE-03": "-5"}, "USE-03", "Enter a whole number of tokens"),
        ({"USE-03": "1.5"}, "USE-03", "Enter a whole number of tokens"),
        ({"USE-01": None}, "USE-01", "This question is required."),
        ({"USE-01": "secret"}, "USE-01", "is not one of the options"),
        ({"USE-04": "perhaps"}, "USE-04", "Choose one of the answers: “Yes” (yes), “No” (no)"),
        ({"due_date": "2020-01-01"}, "due_date", "The due date must be after today."),
        ({"due_date": "31/12/2030"}, "due_date", "Enter a valid date."),
        ({"vendor": "999999"}, "vendor", "Select a valid choice."),
        ({"vendor": "abc"}, "vendor", "Select a valid choice."),
        ({"questionnaire": "nope@9", "rendered_for": "nope@9"}, "questionnaire", "valid choice"),
    ],
)
def test_bad_input_gets_an_error_beside_its_field_and_saves_nothing(
    client, personas, vendor, overrides, field, message
):
    client.force_login(personas.ava)
    response = client.post(CREATE, form_data(vendor, **overrides))
    assert response.status_code == 400
    errors = {**response.context["form"].errors, **response.context["use_form"].errors}
    assert field in errors
    assert any(message in str(text) for text in errors[field]), errors[field]
    body = response.content.decode()
    assert 'class="error-summary"' in body
    anchor = f"#q-{field}" if field.startswith("USE-") else f"#id_{field}"
    assert anchor in body  # the summary links to the field
    assert not Assessment.objects.exists()
    assert not Answer.objects.exists()


def test_every_error_is_reported_at_once(client, personas, vendor):
    client.force_login(personas.ava)
    response = client.post(
        CREATE, form_data(vendor, **{"USE-03": "1M", "USE-05": None, "due_date": "2001-01-01"})
    )
    assert response.status_code == 400
    summary = response.context["error_summary"]
    assert {item["label"] for item in summary} >= {"USE-03", "USE-05", "Due date"}
    # what was typed stays in the fields
    assert response.context["use_form"]["USE-03"].value() == "1M"


def test_without_javascript_choosing_another_version_shows_its_questions_without_saving(
    client, personas, vendor
):
    client.force_login(personas.ava)
    response = client.post(CREATE, form_data(vendor, rendered_for="something-else@0"))
    assert response.status_code == 200
    assert response.context["switched"] is True
    assert not Assessment.objects.exists()
    assert response.context["use_form"]["USE-01"].value() == "confidential"


def test_htmx_gets_only_the_questions_of_the_chosen_version(client, personas, vendor):
    client.force_login(personas.ava)
    response = client.get(CREATE, {"questionnaire": QUESTIONNAIRE}, headers={"HX-Request": "true"})
    assert response.status_code == 200
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="use-questions">')
    assert 'name="USE-01"' in body and "<html" not in body


def test_with_no_vendor_yet_it_offers_to_add_one(client, personas, catalog):
    client.force_login(personas.ava)
    body = client.get(CREATE).content.decode()
    assert f"{reverse('assessments:vendor_create')}?then=assess" in body


def test_a_reviewer_cannot_create(client, personas, vendor):
    client.force_login(personas.rex)
    assert client.post(CREATE, form_data(vendor)).status_code == 403
    assert not Assessment.objects.exists()


def test_the_assessor_edits_the_due_date_and_buyers_answers_while_open(client, personas, draft):
    client.force_login(personas.ava)
    url = reverse("assessments:edit", args=[draft.pk])
    page = client.get(url)
    assert page.context["use_form"]["USE-03"].value() == "750,000"
    assert 'value="750,000"' in page.content.decode()
    response = client.post(
        url,
        {
            "due_date": "2031-03-31",
            "USE-01": "regulated",
            "USE-02": "finance",
            "USE-03": "2,000,000",
            "USE-04": "yes",
            "USE-05": "no",
        },
    )
    assert response.status_code == 302
    draft.refresh_from_db()
    assert draft.due_date == dt.date(2031, 3, 31)
    values = dict(draft.answers.values_list("question_code", "value"))
    assert values["USE-01"] == "regulated" and values["USE-03"] == 2_000_000


def test_an_invalid_edit_saves_neither_the_date_nor_the_answers(client, personas, draft):
    client.force_login(personas.ava)
    url = reverse("assessments:edit", args=[draft.pk])
    response = client.post(url, {"due_date": "2031-03-31", "USE-03": "lots"})
    assert response.status_code == 400
    draft.refresh_from_db()
    assert draft.due_date == dt.date(2030, 9, 30)
    assert draft.answers.get(question_code="USE-03").value == 750000


def test_after_submission_only_the_due_date_can_change(client, personas, scored):
    client.force_login(personas.ava)
    url = reverse("assessments:edit", args=[scored.pk])
    page = client.get(url)
    assert page.context["use_form"] is None
    assert "can no longer change" in page.content.decode()
    response = client.post(url, {"due_date": ""})
    assert response.status_code == 302
    scored.refresh_from_db()
    assert scored.due_date is None


def test_another_vendor_of_the_organization_can_be_assessed(client, personas, vendor):
    other = make_vendor(personas, "Second Vendor")
    client.force_login(personas.alice)
    assert client.post(CREATE, form_data(other)).status_code == 302
    assert Assessment.objects.get().vendor == other


# -- choosing the vendor among many ------------------------------------------------------------


@pytest.fixture
def many_vendors(personas, vendor, monkeypatch):
    """Six vendors of Acme (the fixture's "Cloud Inference Co" among them), three listed at once,
    and one of Other Org whose name would match every search."""
    monkeypatch.setattr("assessments.views.editing.VENDOR_CHOICES_SHOWN", 3)
    names = ["Alpha Inference", "Beta Tokens", "Delta KV", "Omega Serving", "Zeta Workers"]
    made = {name: make_vendor(personas, name) for name in names}
    make_vendor(personas, "Alpha Inference Outsider", organization=personas.other)
    return {**made, vendor.name: vendor}


def listed_vendors(response) -> list[str]:
    return [label for _value, label in response.context["form"].fields["vendor"].widget.choices]


def test_many_vendors_are_listed_a_few_at_a_time_by_name(client, personas, many_vendors):
    client.force_login(personas.ava)
    response = client.get(CREATE)
    assert listed_vendors(response) == ["Alpha Inference", "Beta Tokens", "Cloud Inference Co"]
    body = response.content.decode()
    assert body.count('name="vendor"') == 3  # radios, not a select of every vendor
    assert "6 vendors: the first by name are listed. Search to find another." in body


def test_a_search_lists_the_vendors_whose_name_contains_it(client, personas, many_vendors):
    client.force_login(personas.ava)
    response = client.get(CREATE, {"q": "inference"})
    assert listed_vendors(response) == ["Alpha Inference", "Cloud Inference Co"]  # not Other Org's
    assert "2 vendors' names contain “inference”." in response.content.decode()

    nothing = client.get(CREATE, {"q": "Nobody"})
    assert listed_vendors(nothing) == []
    assert "No vendor's name contains “Nobody”." in nothing.content.decode()


def test_with_htmx_the_search_redraws_the_list_alone(client, personas, many_vendors):
    client.force_login(personas.ava)
    chosen = many_vendors["Omega Serving"]
    response = client.get(
        CREATE,
        {"q": "Zeta", "vendor": chosen.pk},
        headers={"HX-Request": "true", "HX-Target": "vendor-choices"},
    )
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="vendor-choices"')
    assert "USE-01" not in body
    # The vendor already chosen stays listed (and chosen) beside what the search found.
    assert listed_vendors(response) == ["Omega Serving", "Zeta Workers"]
    assert f'value="{chosen.pk}" required id="id_vendor_0" checked' in body


def test_a_vendor_beyond_the_list_is_offered_when_linked_and_accepted(
    client, personas, many_vendors
):
    client.force_login(personas.ava)
    last = many_vendors["Zeta Workers"]
    page = client.get(CREATE, {"vendor": last.pk})  # the vendor list's "Assess" link
    assert listed_vendors(page)[0] == "Zeta Workers"
    assert page.context["form"]["vendor"].value() == str(last.pk)

    response = client.post(CREATE, form_data(last))
    assert response.status_code == 302
    assert Assessment.objects.get().vendor == last


@pytest.mark.parametrize("chosen", ["²", "\x00", "99999999999999999999999", "-1"])
def test_a_malformed_chosen_vendor_is_ignored_when_listing(client, personas, many_vendors, chosen):
    client.force_login(personas.ava)
    response = client.get(CREATE, {"vendor": chosen, "q": "\x00Alpha"})
    assert response.status_code == 200
    assert listed_vendors(response) == ["Alpha Inference"]


def test_another_organizations_vendor_is_neither_listed_nor_accepted(
    client, personas, many_vendors
):
    client.force_login(personas.ava)
    outsider = Vendor.objects.get(name="Alpha Inference Outsider")
    page = client.get(CREATE, {"vendor": outsider.pk})
    assert "Alpha Inference Outsider" not in listed_vendors(page)

    response = client.post(CREATE, form_data(outsider))
    assert response.status_code == 400
    assert "Select a valid choice." in str(response.context["form"].errors["vendor"])
    assert not Assessment.objects.exists()


def test_each_summary_link_leads_to_a_control_that_takes_the_focus(client, personas, vendor):
    """Following a link of the error summary puts the keyboard focus on the question: a group
    of radio buttons or checkboxes is reached through its first option (its wrapper cannot
    take the focus)."""
    client.force_login(personas.ava)
    response = client.post(
        CREATE, form_data(vendor, **{"USE-01": None, "USE-02": None, "USE-03": "1M"})
    )
    assert response.status_code == 400
    page = Elements()
    page.feed(response.content.decode())
    targets = [item["href"].lstrip("#") for item in response.context["error_summary"]]
    assert len(targets) == 3
    for target in targets:
        assert page.by_id(target)["tag"] in {"input", "select", "textarea"}, target


def test_with_no_vendor_listed_the_summary_links_to_the_vendor_field(
    client, personas, many_vendors
):
    client.force_login(personas.ava)
    response = client.post(
        CREATE + "?q=Nobody", form_data(many_vendors["Beta Tokens"], vendor=None)
    )
    assert response.status_code == 400
    (item,) = [i for i in response.context["error_summary"] if i["label"] == "Vendor"]
    assert item["href"] == "#field-id_vendor"
    assert 'id="field-id_vendor"' in response.content.decode()
