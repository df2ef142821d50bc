import pytest

from accounts.models import Membership, User

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.accounts.urls")]

MEMBERS = "/accounts/orgs/acme-procurement/members/"


def membership_of(user, organization):
    return Membership.objects.get(user=user, organization=organization)


def role_url(membership, slug="acme-procurement"):
    return f"/accounts/orgs/{slug}/members/{membership.pk}/role/"


def remove_url(membership, slug="acme-procurement"):
    return f"/accounts/orgs/{slug}/members/{membership.pk}/remove/"


def test_the_owner_sees_the_members(client, personas):
    client.force_login(personas.alice)
    response = client.get(MEMBERS)
    assert response.status_code == 200
    emails = [m.user.email for m in response.context["members"]]
    assert emails == ["alice@acme.test", "ava@acme.test", "rex@acme.test", "vic@acme.test"]


def test_the_page_says_how_a_new_member_gets_in_as_the_invitation_does(client, personas):
    """The invitation email carries a link that sets the first password: nobody else sets it."""
    client.force_login(personas.alice)
    html = client.get(MEMBERS).content.decode()
    assert "operator" not in html
    assert "chooses their password through the link in it" in html


@pytest.mark.parametrize("persona", ["ava", "rex", "vic"])
def test_other_members_get_403(client, personas, persona):
    client.force_login(getattr(personas, persona))
    vic = membership_of(personas.vic, personas.acme)
    assert client.get(MEMBERS).status_code == 403
    assert client.post(MEMBERS, {"email": "x@acme.test", "role": "owner"}).status_code == 403
    assert client.post(role_url(vic), {"role": "owner"}).status_code == 403
    assert client.post(remove_url(vic)).status_code == 403
    assert not User.objects.filter(email="x@acme.test").exists()
    assert membership_of(personas.vic, personas.acme).role == "viewer"


def test_an_outsider_gets_404_for_the_page_and_its_members(client, personas):
    client.force_login(personas.oscar)
    vic = membership_of(personas.vic, personas.acme)
    assert client.get(MEMBERS).status_code == 404
    assert client.post(role_url(vic), {"role": "owner"}).status_code == 404
    assert client.post(remove_url(vic)).status_code == 404
    # His own organization's URL does not reach Acme's memberships either.
    assert client.post(role_url(vic, slug="other-org"), {"role": "owner"}).status_code == 404
    assert client.post(remove_url(vic, slug="other-org")).status_code == 404
    assert membership_of(personas.vic, personas.acme).role == "viewer"


def test_the_owner_adds_a_member_by_email(client, personas):
    client.force_login(personas.alice)
    response = client.post(MEMBERS, {"email": "nina@acme.test", "role": "reviewer"})
    assert response.status_code == 302
    assert membership_of(User.objects.get(email="nina@acme.test"), personas.acme).role == "reviewer"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"email": "nina@acme.test", "role": "admin"}, "role"),
        ({"email": "not-an-email", "role": "viewer"}, "email"),
        ({"email": "ava@acme.test", "role": "viewer"}, "email"),  # already a member
    ],
)
def test_bad_input_to_add_is_a_form_error_and_saves_nothing(client, personas, data, field):
    client.force_login(personas.alice)
    before = Membership.objects.count()

    response = client.post(MEMBERS, data)

    assert response.status_code == 400
    assert response.context["add_form"].errors[field]
    assert Membership.objects.count() == before
    assert not User.objects.filter(email="nina@acme.test").exists()
    assert membership_of(personas.ava, personas.acme).role == "assessor"


def test_the_owner_changes_a_role(client, personas):
    client.force_login(personas.alice)
    response = client.post(
        role_url(membership_of(personas.vic, personas.acme)), {"role": "assessor"}
    )
    assert response.status_code == 302
    assert membership_of(personas.vic, personas.acme).role == "assessor"


def test_an_unknown_role_is_refused(client, personas):
    client.force_login(personas.alice)
    response = client.post(role_url(membership_of(personas.vic, personas.acme)), {"role": "god"})
    assert response.status_code == 400
    assert response.context["page_errors"]
    assert membership_of(personas.vic, personas.acme).role == "viewer"


def test_the_last_owner_cannot_demote_themselves(client, personas):
    client.force_login(personas.alice)
    response = client.post(
        role_url(membership_of(personas.alice, personas.acme)), {"role": "viewer"}
    )
    assert response.status_code == 400
    assert "last owner" in " ".join(response.context["page_errors"])
    assert membership_of(personas.alice, personas.acme).role == "owner"


def test_the_last_owner_cannot_remove_themselves(client, personas):
    client.force_login(personas.alice)
    response = client.post(remove_url(membership_of(personas.alice, personas.acme)))
    assert response.status_code == 400
    assert "last owner" in " ".join(response.context["page_errors"])
    assert Membership.objects.filter(user=personas.alice, organization=personas.acme).exists()


def test_the_owner_removes_a_member(client, personas):
    client.force_login(personas.alice)
    response = client.post(remove_url(membership_of(personas.vic, personas.acme)))
    assert response.status_code == 302
    assert not Membership.objects.filter(user=personas.vic).exists()


def test_an_owner_who_steps_down_is_sent_to_their_organizations(client, personas):
    Membership.objects.filter(user=personas.rex).update(role="owner")
    client.force_login(personas.alice)
    response = client.post(
        role_url(membership_of(personas.alice, personas.acme)), {"role": "viewer"}
    )
    assert response["Location"] == "/accounts/"


def test_each_row_button_names_its_member(client, personas):
    """Listed by a screen reader (its list of buttons), "Change role" and "Remove" say whose."""
    client.force_login(personas.alice)
    body = client.get(MEMBERS).content.decode()
    for email in ("ava@acme.test", "vic@acme.test"):
        assert f'Change role<span class="visually-hidden"> {email}</span>' in body
        assert f'Remove<span class="visually-hidden"> {email}</span>' in body
