"""Sign-in under attack: the lockout after repeated failures (django-axes) and the two-factor
requirement an owner can switch on (django-otp)."""

import pytest
from django.contrib.auth import SESSION_KEY
from django.test import Client
from django.utils import translation
from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.services import api_token_create
from accounts.two_factor import (
    organization_require_two_factor,
    totp_enrolment_confirm,
    totp_enrolment_start,
)
from tests.personas import PASSWORD

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"


def sign_in(client, email, password):
    return client.post(LOGIN, {"username": email, "password": password})


def test_ten_failed_sign_ins_lock_the_account(personas, settings):
    client = Client()
    for attempt in range(settings.AXES_FAILURE_LIMIT - 1):
        assert sign_in(client, "ava@acme.test", f"wrong-{attempt}").status_code == 200
    # The tenth failure locks the account; case and spaces do not make it another account.
    locked = sign_in(client, " AVA@Acme.test ", "wrong-again")
    assert locked.status_code == 429
    assert "locked for 15 minutes" in locked.content.decode()
    # Locked: even the right password is refused from that address; from another, the owner
    # still signs in (tests/security/test_login_lockout.py).
    assert sign_in(client, "ava@acme.test", PASSWORD).status_code == 429
    assert SESSION_KEY not in client.session
    assert sign_in(Client(REMOTE_ADDR="203.0.113.9"), "ava@acme.test", PASSWORD).status_code == 302
    # Other accounts are not affected.
    assert sign_in(Client(), "rex@acme.test", PASSWORD).status_code == 302


def test_the_lockout_message_is_in_traditional_chinese_too(personas, settings):
    settings.AXES_FAILURE_LIMIT = 2
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-hant")
    sign_in(client, "ava@acme.test", "wrong")
    locked = sign_in(client, "ava@acme.test", "wrong")
    assert locked.status_code == 429
    with translation.override("zh-hant"):
        assert "此帳戶已鎖定 15 分鐘" in locked.content.decode()


def test_a_successful_sign_in_resets_the_count(personas, settings):
    for _attempt in range(settings.AXES_FAILURE_LIMIT - 1):
        sign_in(Client(), "ava@acme.test", "wrong")
    assert sign_in(Client(), "ava@acme.test", PASSWORD).status_code == 302
    for _attempt in range(settings.AXES_FAILURE_LIMIT - 1):
        sign_in(Client(), "ava@acme.test", "wrong")
    assert sign_in(Client(), "ava@acme.test", PASSWORD).status_code == 302


# -- two-factor --------------------------------------------------------------------------------


def code_of(device, step=0):
    """The authenticator app's code `step` periods from now (six digits, leading zeros kept).
    A code is accepted once: a later sign-in uses the next period's (within the tolerance)."""
    return f"{totp(device.bin_key, digits=device.digits, drift=step):0{device.digits}d}"


def enrol(user):
    device = totp_enrolment_start(user=user)
    _device, backup_codes = totp_enrolment_confirm(user=user, code=code_of(device))
    device.refresh_from_db()
    return device, backup_codes


@pytest.fixture
def required(personas):
    """Acme requires two-factor (alice switched it on after enrolling herself)."""
    enrol(personas.alice)
    organization_require_two_factor(
        organization=personas.acme, actor=personas.alice, actor_verified=True, required=True
    )
    return personas


MEMBER_PAGES = [
    "/",
    "/vendors/",
    "/accounts/",
    "/assessments/compare/",
    "/accounts/current/tokens/",
]


@pytest.mark.parametrize("page", MEMBER_PAGES)
def test_a_member_without_a_device_is_sent_to_enrolment_from_every_page(required, page):
    client = Client()
    client.force_login(required.ava)
    response = client.get(page)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/two-factor/?next=")


def ava_with_her_password_only() -> Client:
    """Ava's browser after her password, before any second factor."""
    client = Client()
    assert sign_in(client, "ava@acme.test", PASSWORD).status_code == 302
    return client


def test_a_member_with_a_device_must_verify_before_anything(required, settings):
    settings.OTP_TOTP_THROTTLE_FACTOR = 0  # else the wrong code below delays the right one 1 s
    device, backup_codes = enrol(required.ava)
    client = ava_with_her_password_only()
    response = client.get("/vendors/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/two-factor/verify/?next=")
    # The API in that session is refused too.
    api = client.get("/api/v1/vendors/")
    assert api.status_code == 403
    assert "two_factor" in api.json()["errors"]
    wrong = client.post("/accounts/two-factor/verify/", {"code": "000000", "next": "/vendors/"})
    assert wrong.status_code == 400
    verified = client.post(
        "/accounts/two-factor/verify/", {"code": code_of(device, step=1), "next": "/vendors/"}
    )
    assert verified.status_code == 302 and verified["Location"] == "/vendors/"
    assert client.get("/vendors/").status_code == 200
    assert client.get("/api/v1/vendors/").status_code == 200


def test_a_backup_code_works_once(required):
    _device, backup_codes = enrol(required.ava)
    for expected in (302, 400):
        client = Client()
        client.force_login(required.ava)
        response = client.post("/accounts/two-factor/verify/", {"code": backup_codes[0]})
        assert response.status_code == expected


def test_api_tokens_are_not_affected(required):
    _token, key = api_token_create(user=required.ava, organization=required.acme, name="ci")
    response = Client().get("/api/v1/vendors/", HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code == 200


def test_enrolment_shows_a_local_qr_code_and_confirms_with_a_code(required):
    client = Client()
    client.force_login(required.ava)
    page = client.get("/accounts/two-factor/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "<svg" in html and "http" not in html.split("<svg", 1)[1].split("</svg>", 1)[0][:200]
    device = TOTPDevice.objects.get(user=required.ava, confirmed=False)
    confirmed = client.post("/accounts/two-factor/", {"code": code_of(device)})
    assert confirmed.status_code == 200
    assert "backup codes" in confirmed.content.decode()
    assert client.get("/vendors/").status_code == 200


def test_only_a_verified_owner_can_require_two_factor(personas):
    client = Client()
    client.force_login(personas.alice)
    client.post(f"/accounts/orgs/{personas.acme.slug}/two-factor/", {"require_two_factor": "on"})
    personas.acme.refresh_from_db()
    assert personas.acme.require_two_factor is False  # not enrolled herself: refused
    reviewer = Client()
    reviewer.force_login(personas.rex)
    response = reviewer.post(
        f"/accounts/orgs/{personas.acme.slug}/two-factor/", {"require_two_factor": "on"}
    )
    assert response.status_code == 403


def test_members_of_other_organizations_are_not_affected(required):
    client = Client()
    client.force_login(required.oscar)
    assert client.get("/vendors/").status_code == 200


def test_the_requirement_cannot_be_switched_off_by_the_member(required):
    device, _codes = enrol(required.ava)
    client = Client()
    client.force_login(required.ava)
    assert (
        client.post("/accounts/two-factor/verify/", {"code": code_of(device, 1)}).status_code == 302
    )
    response = client.post("/accounts/two-factor/disable/", {"code": "not-a-code"})
    assert response.status_code == 400
    assert TOTPDevice.objects.filter(user=required.ava, confirmed=True).exists()


def test_a_password_only_session_cannot_replace_the_authenticator(required, settings):
    """Replacing the authenticator (a new secret, then a code from it) signs the session in as
    verified: with only the password it would bypass the second factor altogether."""
    device, _codes = enrol(required.ava)
    client = ava_with_her_password_only()
    page = client.get("/accounts/two-factor/?replace=1")
    assert page.status_code == 302
    assert page["Location"].startswith("/accounts/two-factor/verify/")
    assert not TOTPDevice.objects.filter(user=required.ava, confirmed=False).exists()
    # Even with an authenticator pending (started in a verified session), its code does not
    # replace hers.
    pending = TOTPDevice.objects.create(user=required.ava, name="authenticator", confirmed=False)
    confirmed = client.post("/accounts/two-factor/", {"code": code_of(pending)})
    assert confirmed.status_code == 302
    assert confirmed["Location"].startswith("/accounts/two-factor/verify/")
    assert TOTPDevice.objects.filter(pk=device.pk, confirmed=True).exists()
    assert client.get("/vendors/")["Location"].startswith("/accounts/two-factor/verify/")


def test_a_member_who_set_up_two_factor_is_asked_for_a_code_without_any_policy(personas):
    """ "Two-factor sign-in is on: after your password, AVIA asks for a code": no organization
    of hers requires it, yet her password alone must not open her pages or the API."""
    device, _codes = enrol(personas.ava)
    assert personas.acme.require_two_factor is False
    client = ava_with_her_password_only()
    response = client.get("/vendors/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/two-factor/verify/?next=")
    api = client.get("/api/v1/vendors/")
    assert api.status_code == 403 and "two_factor" in api.json()["errors"]
    verified = client.post(
        "/accounts/two-factor/verify/", {"code": code_of(device, step=1), "next": "/vendors/"}
    )
    assert verified.status_code == 302 and verified["Location"] == "/vendors/"
    assert client.get("/vendors/").status_code == 200
    # A colleague without a device is not affected.
    other = Client()
    assert sign_in(other, "vic@acme.test", PASSWORD).status_code == 302
    assert other.get("/vendors/").status_code == 200


def test_passing_the_second_factor_gives_the_session_a_new_key(required):
    """A session key seen while only the password was given (a shared screen, a log) must not
    become a verified session: verifying, and confirming a first authenticator, cycle it."""
    device, _codes = enrol(required.ava)
    client = ava_with_her_password_only()
    password_only = client.cookies["sessionid"].value
    verified = client.post("/accounts/two-factor/verify/", {"code": code_of(device, step=1)})
    assert verified.status_code == 302
    assert client.cookies["sessionid"].value != password_only
    assert Client(HTTP_COOKIE=f"sessionid={password_only}").get("/vendors/").status_code == 302
    assert client.get("/vendors/").status_code == 200

    newcomer = Client()
    assert sign_in(newcomer, "vic@acme.test", PASSWORD).status_code == 302
    before = newcomer.cookies["sessionid"].value
    assert newcomer.get("/accounts/two-factor/").status_code == 200
    pending = TOTPDevice.objects.get(user=required.vic, confirmed=False)
    assert newcomer.post("/accounts/two-factor/", {"code": code_of(pending)}).status_code == 200
    assert newcomer.cookies["sessionid"].value != before
    assert newcomer.get("/vendors/").status_code == 200


def test_the_language_switch_works_before_the_second_factor(required):
    """The header's switch on the enrolment and verification pages (the gate's own pages)."""
    client = Client()
    client.force_login(required.ava)
    response = client.post(
        "/accounts/language/", {"language": "zh-hant", "next": "/accounts/two-factor/"}
    )
    assert response.status_code == 302 and response["Location"] == "/accounts/two-factor/"
    assert client.cookies["django_language"].value == "zh-hant"


def test_during_the_throttle_a_right_code_is_told_to_wait_not_that_it_is_wrong(required, settings):
    """Issue 28: after a wrong code django-otp refuses every code for a while (1 s, then 2 s,
    4 s…); a right code in that time was answered "That code is not right"."""
    settings.OTP_TOTP_THROTTLE_FACTOR = 60  # a minute: long enough to be inside it below
    device, _codes = enrol(required.ava)
    client = ava_with_her_password_only()
    wrong = client.post("/accounts/two-factor/verify/", {"code": "000000", "next": "/vendors/"})
    assert wrong.status_code == 400 and "That code is not right" in wrong.content.decode()

    right = client.post(
        "/accounts/two-factor/verify/", {"code": code_of(device, step=1), "next": "/vendors/"}
    )

    assert right.status_code == 400
    page = right.content.decode()
    assert "That code is not right" not in page
    assert "Too many wrong codes" in page
