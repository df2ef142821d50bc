import pytest
from django.contrib.auth import SESSION_KEY

from tests.html_elements import Elements

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.accounts.urls")]


def test_the_login_page_asks_for_an_email_address(client):
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert b'type="email"' in response.content


def test_it_signs_in_with_email_and_password_in_any_case(client, personas):
    response = client.post(
        "/accounts/login/", {"username": "Alice@Acme.test", "password": "correct-horse-battery"}
    )
    assert response.status_code == 302
    assert client.session[SESSION_KEY] == str(personas.alice.pk)


def test_it_rejects_a_wrong_password(client, personas):
    response = client.post("/accounts/login/", {"username": "alice@acme.test", "password": "nope"})
    assert response.status_code == 200
    assert response.context["form"].errors
    assert SESSION_KEY not in client.session


def test_it_signs_out_on_post(client, personas):
    client.force_login(personas.alice)
    response = client.post("/accounts/logout/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/"
    assert SESSION_KEY not in client.session


def test_a_refused_sign_in_puts_the_focus_on_the_message(client, personas):
    """The page opens on what went wrong (the first element marked autofocus takes the focus),
    not silently on the email field."""
    response = client.post("/accounts/login/", {"username": "alice@acme.test", "password": "nope"})
    page = Elements()
    page.feed(response.content.decode())
    (first, *_rest) = [e for e in page.all if "autofocus" in e["attrs"]]
    assert "error-summary" in first["attrs"].get("class", "") and first["attrs"]["tabindex"] == "-1"
    assert "correct email address and password" in first["text"]
