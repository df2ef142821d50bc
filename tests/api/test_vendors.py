import pytest

from assessments.models import AuditEvent, Channel, Vendor
from assessments.services.vendors import vendor_create

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]

LIST = "/api/v1/vendors/"


def detail(vendor):
    return f"/api/v1/vendors/{vendor.pk}/"


def test_the_list_shows_only_the_organizations_vendors(personas, vendor, client_as):
    vendor_create(organization=personas.other, actor=personas.oscar, channel=Channel.WEB, name="Z")

    response = client_as(personas.vic).get(LIST)

    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 1
    assert body["results"][0]["name"] == "Inferno AI"
    assert set(body["results"][0]) == {
        "id", "name", "website", "contact_name", "contact_email", "notes", "created_at",
    }  # fmt: skip


def add_vendors(personas, number, prefix="Vendor"):
    for count in range(number):
        vendor_create(
            organization=personas.acme, actor=personas.alice, channel=Channel.WEB,
            name=f"{prefix} {count:02}",
        )  # fmt: skip


def test_the_list_is_paginated(personas, client_as):
    add_vendors(personas, 51)
    client = client_as(personas.vic)

    first = client.get(LIST).json()
    second = client.get(first["next"]).json()

    assert (first["count"], len(first["results"]), first["previous"]) == (51, 50, None)
    assert "cursor=" in first["next"]
    assert (second["count"], second["next"]) == (51, None)
    assert [v["name"] for v in second["results"]] == ["Vendor 50"]
    assert client.get(second["previous"]).json()["results"] == first["results"]


def test_page_numbers_still_work(personas, client_as):
    add_vendors(personas, 51)
    client = client_as(personas.vic)

    first = client.get(LIST, {"page": 1}).json()
    second = client.get(LIST, {"page": 2}).json()

    assert first["next"].endswith("?page=2")
    assert (second["count"], [v["name"] for v in second["results"]]) == (51, ["Vendor 50"])
    assert client.get(LIST, {"page": 3}).status_code == 404


def test_an_assessor_adds_a_vendor(personas, client_as):
    response = client_as(personas.ava).post(
        LIST,
        {"name": "Inferno AI", "website": "https://inferno.example", "contact_email": "a@b.test"},
        format="json",
    )

    assert response.status_code == 201
    vendor = Vendor.objects.get()
    assert (vendor.organization, vendor.name, vendor.website) == (
        personas.acme, "Inferno AI", "https://inferno.example",
    )  # fmt: skip
    assert response.json()["id"] == vendor.pk
    event = AuditEvent.objects.get(action="vendor.created")
    assert (event.actor, event.channel) == (personas.ava, Channel.API)


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({}, {"name"}),
        ({"name": ""}, {"name"}),
        ({"name": "x" * 201}, {"name"}),
        ({"name": "Ok", "contact_email": "not-an-email"}, {"contact_email"}),
        ({"name": "Ok", "website": "javascript:alert(1)"}, {"website"}),
        ({"name": {"nested": "object"}}, {"name"}),
        ({"name": "Ok", "colour": "red"}, {"colour"}),
        ({"name": "Ok", "notes": "n" * 4001}, {"notes"}),
    ],
)
def test_bad_vendor_input_is_a_400_per_field_and_saves_nothing(personas, client_as, body, fields):
    response = client_as(personas.ava).post(LIST, body, format="json")

    assert response.status_code == 400
    assert set(response.json()["errors"]) == fields
    assert not Vendor.objects.exists()


def test_a_duplicate_vendor_name_is_a_conflict(personas, vendor, client_as):
    # A well-formed name that another vendor holds: the organization's state refuses it (409),
    # the request itself is valid by the schema.
    response = client_as(personas.ava).post(LIST, {"name": "Inferno AI"}, format="json")

    assert response.status_code == 409
    assert response.json() == {"errors": {"name": ["A vendor with this name already exists."]}}
    assert Vendor.objects.count() == 1


def test_another_organization_may_use_the_same_vendor_name(personas, vendor, client_as):
    response = client_as(personas.oscar).post(LIST, {"name": "Inferno AI"}, format="json")
    assert response.status_code == 201


def test_the_detail_shows_one_vendor(personas, vendor, client_as):
    response = client_as(personas.vic).get(detail(vendor))
    assert response.status_code == 200
    assert response.json()["name"] == "Inferno AI"


def test_a_patch_changes_only_the_fields_sent(personas, vendor, client_as):
    response = client_as(personas.ava).patch(
        detail(vendor), {"contact_name": "Ines"}, format="json"
    )

    assert response.status_code == 200
    vendor.refresh_from_db()
    assert (vendor.name, vendor.contact_name) == ("Inferno AI", "Ines")
    assert response.json()["contact_name"] == "Ines"


def test_a_refused_patch_changes_nothing(personas, vendor, client_as):
    vendor_create(organization=personas.acme, actor=personas.alice, channel=Channel.WEB, name="B")

    client = client_as(personas.ava)
    duplicate = client.patch(detail(vendor), {"name": "B", "notes": "new"}, format="json")
    blank = client.patch(detail(vendor), {"name": "", "notes": "new"}, format="json")

    assert (duplicate.status_code, blank.status_code) == (409, 400)
    assert list(duplicate.json()["errors"]) == list(blank.json()["errors"]) == ["name"]
    vendor.refresh_from_db()
    assert (vendor.name, vendor.notes) == ("Inferno AI", "")


def test_a_reviewer_may_not_change_a_vendor(personas, vendor, client_as):
    response = client_as(personas.rex).patch(detail(vendor), {"notes": "x"}, format="json")
    assert response.status_code == 403
    vendor.refresh_from_db()
    assert vendor.notes == ""
