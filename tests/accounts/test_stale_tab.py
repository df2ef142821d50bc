"""The organization a write acts in comes from the page it was drawn on, not only from the
session (issue 28 item 0). A consultant in two organizations draws a form in Acme, switches to
Other Org in another tab (same session), then submits the first tab: the write is refused with
a page naming the organization the form was for, offering to switch, and nothing changes. An
email link of Acme opened while working in Other Org opens in Acme."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.test import Client
from django.urls import reverse

from accounts.services import invitation_respond, membership_add
from accounts.tenancy import PAGE_ORGANIZATION_FIELD, PAGE_ORGANIZATION_HEADER, SESSION_KEY
from assessments.models import AnswerDraft, Vendor
from outbox.models import EmailKind, OutboundEmail
from portfolio.reminders import reminders_send
from tests.site_pages import build_world

pytestmark = pytest.mark.django_db

FIELD = re.compile(rf'<input type="hidden" name="{PAGE_ORGANIZATION_FIELD}" value="(\d+)">')


@pytest.fixture
def consultant(personas):
    """Ava: assessor at Acme and at Other Org."""
    invitation_respond(
        invitation=membership_add(
            organization=personas.other,
            email="ava@acme.test",
            role="assessor",
            actor=personas.oscar,
        ),
        user=personas.ava,
        accept=True,
    )
    return personas.ava


def tab(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def switch(client: Client, organization) -> None:
    response = client.post(
        reverse("accounts:switch_organization"), {"organization_id": organization.pk}
    )
    assert response.status_code == 302


def drawn_for(html: str) -> str:
    """The organization a page's forms carry (the page's only value, whatever the form)."""
    values = set(FIELD.findall(html))
    assert len(values) == 1, values
    return values.pop()


def test_a_form_drawn_in_one_organization_is_refused_after_switching_to_another(
    personas, consultant
):
    browser = tab(consultant)
    switch(browser, personas.acme)
    page = browser.get(reverse("assessments:vendor_create"))
    acme_id = drawn_for(page.content.decode())
    assert acme_id == str(personas.acme.pk)

    switch(browser, personas.other)  # the other tab
    response = browser.post(
        reverse("assessments:vendor_create"),
        {"name": "Stale Tab Ltd", PAGE_ORGANIZATION_FIELD: acme_id},
    )

    assert response.status_code == 409
    html = response.content.decode()
    assert "This form was for Acme Procurement" in html
    assert "Nothing was saved" in html
    # It offers to switch back, to the page the form came from.
    assert f'name="organization_id" value="{personas.acme.pk}"' in html
    assert not Vendor.objects.filter(name="Stale Tab Ltd").exists()
    assert browser.session[SESSION_KEY] == personas.other.pk  # the session's choice stands


def test_the_same_form_submitted_in_its_own_organization_is_saved(personas, consultant):
    browser = tab(consultant)
    switch(browser, personas.other)
    page = browser.get(reverse("assessments:vendor_create"))
    response = browser.post(
        reverse("assessments:vendor_create"),
        {"name": "Fresh Tab Ltd", PAGE_ORGANIZATION_FIELD: drawn_for(page.content.decode())},
    )
    assert response.status_code == 302
    assert Vendor.objects.get(name="Fresh Tab Ltd").organization == personas.other


def test_a_form_from_an_organization_the_user_has_left_is_refused_without_naming_it(
    personas, consultant
):
    browser = tab(consultant)
    switch(browser, personas.other)
    response = browser.post(
        reverse("assessments:vendor_create"),
        {"name": "Gone Ltd", PAGE_ORGANIZATION_FIELD: str(2**63)},
    )
    assert response.status_code == 409
    assert "Nothing was saved" in response.content.decode()
    assert not Vendor.objects.filter(name="Gone Ltd").exists()


def test_an_htmx_autosave_from_a_stale_tab_is_refused_and_keeps_no_draft(
    catalog, settings, personas, consultant
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    world = build_world(personas)
    browser = tab(consultant)
    switch(browser, personas.acme)
    edit = browser.get(reverse("assessments:edit", args=[world.draft.pk]))
    html = edit.content.decode()
    header = re.search(rf'"{PAGE_ORGANIZATION_HEADER}": "(\d+)"', html)
    assert header is not None and header.group(1) == str(personas.acme.pk)
    drafts_before = AnswerDraft.objects.count()

    switch(browser, personas.other)
    response = browser.post(
        reverse("assessments:edit_autosave", args=[world.draft.pk]),
        {"USE-01": "Summarising contracts", PAGE_ORGANIZATION_FIELD: drawn_for(html)},
        headers={"HX-Request": "true", PAGE_ORGANIZATION_HEADER: header.group(1)},
    )

    assert response.status_code == 409
    body = response.content.decode()
    assert 'id="draft-status"' in body  # swapped into the page's status line
    assert "Acme Procurement" in body
    assert AnswerDraft.objects.count() == drafts_before


def test_an_htmx_request_carrying_only_the_header_is_checked_too(personas, consultant):
    browser = tab(consultant)
    switch(browser, personas.other)
    response = browser.post(
        reverse("assessments:vendor_create"),
        {"name": "Header Only Ltd"},
        headers={"HX-Request": "true", PAGE_ORGANIZATION_HEADER: str(personas.acme.pk)},
    )
    assert response.status_code == 409
    assert not Vendor.objects.exists()


def send_reminders_about_acme(settings, personas) -> None:
    """Acme's world, and the reminder sweep three days before its risk acceptance expires: a
    risk acceptance email and the weekly digest to Acme's assessors."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    world = build_world(personas)
    expires_on = world.scored.risk_decisions.get().expires_on
    reminders_send(today=expires_on - dt.timedelta(days=3))


def test_an_email_link_of_one_organization_opens_in_it_while_working_in_another(
    catalog, settings, personas, consultant
):
    send_reminders_about_acme(settings, personas)
    email = OutboundEmail.objects.filter(
        kind=EmailKind.RISK_ACCEPTANCE_EXPIRING, to_address="ava@acme.test"
    ).get()
    url = re.search(r"https?://\S+", email.body).group(0)
    path = url.split("://", 1)[1].split("/", 1)[1]

    browser = tab(consultant)
    switch(browser, personas.other)
    response = browser.get(f"/{path}")

    assert response.status_code == 200
    assert "Cloud Inference Co" in response.content.decode()
    assert browser.session[SESSION_KEY] == personas.acme.pk


def test_every_link_of_the_weekly_digest_opens_in_its_organization(
    catalog, settings, personas, consultant
):
    send_reminders_about_acme(settings, personas)
    digest = OutboundEmail.objects.filter(kind=EmailKind.DIGEST, to_address="ava@acme.test").get()
    links = re.findall(r"https?://\S+", digest.body)
    assert links
    for link in links:
        assert f"?org={personas.acme.slug}" in link, link


def test_an_email_link_to_an_organization_the_user_is_not_in_is_404(personas):
    browser = tab(personas.oscar)
    response = browser.get(reverse("assessments:dashboard") + f"?org={personas.acme.slug}")
    assert response.status_code == 404
