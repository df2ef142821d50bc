import pytest

from tests.personas import join

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.accounts.urls")]


def test_it_lists_the_users_organizations_and_roles(client, personas):
    join(personas.other, personas.ava, "viewer", personas.oscar)
    client.force_login(personas.ava)

    response = client.get("/accounts/")

    assert response.status_code == 200
    rows = [
        (r["membership"].organization.name, r["membership"].role) for r in response.context["rows"]
    ]
    assert rows == [("Acme Procurement", "assessor"), ("Other Org", "viewer")]
    assert response.context["current_organization_id"] == personas.acme.pk


def test_it_links_owner_pages_only_where_the_user_is_owner(client, personas):
    client.force_login(personas.alice)
    content = client.get("/accounts/").content.decode()
    assert "/accounts/orgs/acme-procurement/members/" in content

    client.force_login(personas.vic)
    content = client.get("/accounts/").content.decode()
    assert "/accounts/orgs/acme-procurement/members/" not in content


def test_anonymous_visitors_are_sent_to_sign_in(client):
    response = client.get("/accounts/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize("page", ["tokens", "members", "branding"])
def test_current_page_links_lead_to_the_current_organization(client, personas, page):
    client.force_login(personas.alice)
    response = client.get(f"/accounts/current/{page}/")
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/orgs/acme-procurement/{page}/"


def test_an_unknown_current_page_is_404(client, personas):
    client.force_login(personas.alice)
    assert client.get("/accounts/current/secrets/").status_code == 404
