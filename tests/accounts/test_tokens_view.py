import pytest

from accounts.models import ApiToken
from accounts.services import api_token_create

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.accounts.urls")]

TOKENS = "/accounts/orgs/acme-procurement/tokens/"


def revoke_url(token, slug="acme-procurement"):
    return f"/accounts/orgs/{slug}/tokens/{token.pk}/revoke/"


@pytest.mark.parametrize("persona", ["alice", "ava", "rex", "vic"])
def test_every_member_sees_their_tokens_page(client, personas, persona):
    client.force_login(getattr(personas, persona))
    assert client.get(TOKENS).status_code == 200


def test_an_outsider_gets_404(client, personas):
    client.force_login(personas.oscar)
    assert client.get(TOKENS).status_code == 404
    assert client.post(TOKENS, {"name": "sneaky"}).status_code == 404
    assert not ApiToken.objects.exists()


def test_anonymous_visitors_are_sent_to_sign_in(client, personas):
    response = client.get(TOKENS)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_creating_a_token_shows_the_key_once(client, personas):
    client.force_login(personas.vic)

    response = client.post(TOKENS, {"name": "spreadsheet"})

    assert response.status_code == 200
    key = response.context["new_key"]
    assert key.startswith("avia_")
    assert key in response.content.decode()
    assert "no-store" in response["Cache-Control"]
    token = ApiToken.objects.get()
    assert (token.user, token.organization, token.name) == (
        personas.vic,
        personas.acme,
        "spreadsheet",
    )

    again = client.get(TOKENS).content.decode()
    assert key not in again
    assert token.key_prefix in again


def test_a_blank_name_is_a_form_error_and_saves_nothing(client, personas):
    client.force_login(personas.vic)
    response = client.post(TOKENS, {"name": "  "})
    assert response.status_code == 400
    assert response.context["form"].errors["name"]
    assert response.context["new_key"] is None
    assert not ApiToken.objects.exists()


def test_the_list_shows_only_the_users_own_active_tokens(client, personas):
    mine, _ = api_token_create(user=personas.vic, organization=personas.acme, name="mine")
    api_token_create(user=personas.ava, organization=personas.acme, name="avas")
    client.force_login(personas.vic)

    response = client.get(TOKENS)

    assert list(response.context["tokens"]) == [mine]
    assert response.context["organization_tokens"] is None


def test_owners_also_see_every_members_tokens(client, personas):
    theirs, _ = api_token_create(user=personas.ava, organization=personas.acme, name="avas")
    client.force_login(personas.alice)
    assert list(client.get(TOKENS).context["organization_tokens"]) == [theirs]


def test_a_member_revokes_their_own_token(client, personas):
    token, _ = api_token_create(user=personas.vic, organization=personas.acme, name="mine")
    client.force_login(personas.vic)

    response = client.post(revoke_url(token))

    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_an_owner_revokes_a_members_token(client, personas):
    token, _ = api_token_create(user=personas.ava, organization=personas.acme, name="avas")
    client.force_login(personas.alice)
    assert client.post(revoke_url(token)).status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None


@pytest.mark.parametrize("persona", ["rex", "vic"])
def test_a_non_owner_cannot_see_or_revoke_someone_elses_token(client, personas, persona):
    token, _ = api_token_create(user=personas.ava, organization=personas.acme, name="avas")
    client.force_login(getattr(personas, persona))
    assert client.post(revoke_url(token)).status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def test_an_outsider_cannot_revoke_another_organizations_token(client, personas):
    token, _ = api_token_create(user=personas.ava, organization=personas.acme, name="avas")
    client.force_login(personas.oscar)
    assert client.post(revoke_url(token)).status_code == 404
    # Not even through his own organization's URL.
    assert client.post(revoke_url(token, slug="other-org")).status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def test_revoking_needs_post(client, personas):
    token, _ = api_token_create(user=personas.vic, organization=personas.acme, name="mine")
    client.force_login(personas.vic)
    assert client.get(revoke_url(token)).status_code == 405
