"""Vendors: list, add, edit; per-field errors and nothing saved on bad input."""

import pytest
from django.urls import reverse

from assessments.models import AuditEvent, Vendor

from .conftest import make_vendor

pytestmark = pytest.mark.django_db

CREATE = reverse("assessments:vendor_create")
LIST = reverse("assessments:vendor_list")


def test_an_assessor_adds_a_vendor(client, personas):
    client.force_login(personas.ava)
    response = client.post(
        CREATE,
        {
            "name": "  Kowloon Inference  ",
            "website": "kowloon-inference.test",
            "contact_name": "Mei Chan",
            "contact_email": "mei@kowloon-inference.test",
            "notes": "Shortlisted for the loan-document pilot.",
        },
    )
    assert response.status_code == 302 and response["Location"] == LIST
    vendor = Vendor.objects.get(organization=personas.acme)
    assert vendor.name == "Kowloon Inference"
    assert vendor.website == "https://kowloon-inference.test"
    assert AuditEvent.objects.filter(action="vendor.created", actor=personas.ava).exists()
    listing = client.get(LIST).content.decode()
    assert "Kowloon Inference" in listing and "mei@kowloon-inference.test" in listing


def test_adding_then_assessing_goes_on_to_the_new_assessment(client, personas):
    client.force_login(personas.ava)
    response = client.post(f"{CREATE}?then=assess", {"name": "Next Step AI", "then": "assess"})
    vendor = Vendor.objects.get(name="Next Step AI")
    assert response["Location"] == f"{reverse('assessments:create')}?vendor={vendor.pk}"


def test_bad_input_is_reported_beside_each_field_and_nothing_is_saved(client, personas):
    client.force_login(personas.ava)
    response = client.post(CREATE, {"name": "", "website": "not a url", "contact_email": "nobody@"})
    assert response.status_code == 400
    form = response.context["form"]
    assert set(form.errors) == {"name", "website", "contact_email"}
    body = response.content.decode()
    assert 'class="error-summary"' in body
    assert 'href="#id_name"' in body and 'id="id_name_error"' in body
    assert 'aria-invalid="true"' in body
    assert not Vendor.objects.exists()


def test_a_duplicate_name_is_refused_beside_the_name(client, personas):
    make_vendor(personas, "Twin AI")
    client.force_login(personas.ava)
    response = client.post(CREATE, {"name": "Twin AI"})
    assert response.status_code == 400
    assert response.context["form"].errors["name"] == ["A vendor with this name already exists."]
    assert Vendor.objects.filter(name="Twin AI").count() == 1


def test_the_same_name_is_free_in_another_organization(client, personas):
    make_vendor(personas, "Shared Name AI", organization=personas.other)
    client.force_login(personas.ava)
    assert client.post(CREATE, {"name": "Shared Name AI"}).status_code == 302


def test_an_assessor_edits_a_vendor(client, personas):
    vendor = make_vendor(personas)
    client.force_login(personas.alice)
    url = reverse("assessments:vendor_edit", args=[vendor.pk])
    page = client.get(url)
    assert page.context["form"]["name"].value() == "Cloud Inference Co"
    response = client.post(
        url,
        {"name": "Cloud Inference Co (HK)", "contact_email": "hk@cloud-inference.test"},
    )
    assert response.status_code == 302
    vendor.refresh_from_db()
    assert (vendor.name, vendor.contact_email) == (
        "Cloud Inference Co (HK)",
        "hk@cloud-inference.test",
    )
    event = AuditEvent.objects.get(action="vendor.updated")
    assert event.detail["fields"] == ["contact_email", "name"]


def test_an_invalid_edit_changes_nothing(client, personas):
    vendor = make_vendor(personas)
    client.force_login(personas.ava)
    url = reverse("assessments:vendor_edit", args=[vendor.pk])
    response = client.post(url, {"name": "", "contact_email": "bad"})
    assert response.status_code == 400
    vendor.refresh_from_db()
    assert vendor.name == "Cloud Inference Co"


def test_the_list_searches_by_name_and_counts_assessments(client, personas, catalog):
    from .conftest import make_draft

    make_draft(personas, make_vendor(personas, "Alpha Models"))
    make_vendor(personas, "Beta Tokens")
    client.force_login(personas.vic)
    response = client.get(LIST, {"q": "alpha"})
    vendors = list(response.context["vendors"])
    assert [v.name for v in vendors] == ["Alpha Models"]
    assert vendors[0].assessment_count == 1 and vendors[0].open_count == 1
    # a viewer sees no edit links
    assert reverse("assessments:vendor_edit", args=[vendors[0].pk]) not in response.content.decode()


def test_a_search_by_name_counts_what_vendors_are_called_now(client, personas):
    """The list's count is cached per data version; a rename must move it (it once moved
    only when a vendor was added)."""
    make_vendor(personas, "Alpha Models")
    beta = make_vendor(personas, "Beta Tokens")
    client.force_login(personas.ava)
    assert client.get(LIST, {"q": "alpha"}).context["page"].paginator.count == 1
    edit = reverse("assessments:vendor_edit", args=[beta.pk])
    assert client.post(edit, {"name": "Alpha Tokens"}).status_code == 302

    response = client.get(LIST, {"q": "alpha"})

    assert [v.name for v in response.context["vendors"]] == ["Alpha Models", "Alpha Tokens"]
    assert response.context["page"].paginator.count == 2


def test_the_edit_page_is_titled_as_an_edit_not_as_the_vendors_assessment(client, personas):
    """Its title names what the page does (the assessment page is titled by the vendor's
    name alone), in both languages."""
    vendor = make_vendor(personas, "Title Check AI")
    client.force_login(personas.ava)
    url = reverse("assessments:vendor_edit", args=[vendor.pk])
    assert "<title>Edit Title Check AI · AVIA</title>" in client.get(url).content.decode()
    client.cookies["django_language"] = "zh-hant"
    chinese = client.get(url).content.decode()
    assert "<title>編輯 Title Check AI · AVIA</title>" in chinese
