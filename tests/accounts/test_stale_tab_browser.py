"""The stale tab in real Chromium (issue 28 item 0): two tabs of one session. The first draws
the buyer's answers of an Acme assessment; the second switches to Other Org. Then the first tab
types (htmx's per-change save) and submits: both are refused, the page says which organization
it was for and offers to switch, and nothing is saved. After switching back, the same submit
saves."""

import pytest
from django.urls import reverse

from accounts.services import invitation_respond, membership_add
from assessments.models import AnswerDraft, Vendor
from tests.drafts.test_browser import browser, new_page, session_cookie  # noqa: F401 (fixture)
from tests.web.conftest import make_draft

pytestmark = pytest.mark.browser


def test_a_stale_tab_cannot_write_into_the_organization_chosen_in_another_tab(
    transactional_db,
    catalog,
    live_server,
    browser,  # noqa: F811
    personas,
):
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
    draft = make_draft(personas)
    cookie = session_cookie(personas.ava, live_server)
    first = new_page(browser, live_server, reverse("assessments:vendor_create"), javascript=True)
    first.context.add_cookies([cookie])
    first.goto(live_server.url + reverse("assessments:edit", args=[draft.pk]))
    first.wait_for_function("() => window.htmx !== undefined")

    second = first.context.new_page()  # another tab of the same session
    second.goto(live_server.url + reverse("accounts:organizations"))
    second.select_option("#org-switcher-select", str(personas.other.pk))
    with second.expect_navigation():
        second.click(".org-switcher button[type=submit]")

    drafts_before = AnswerDraft.objects.count()
    first.fill("#q-comment-USE-01", "typed in the stale tab")
    first.wait_for_function(
        "() => document.querySelector('#draft-status').textContent.includes('Not kept')"
    )
    assert "Acme Procurement" in first.locator("#draft-status").inner_text()
    assert AnswerDraft.objects.count() == drafts_before

    # A plain form of the stale tab: "Add vendor" drawn in Acme before the switch.
    first.goto(live_server.url + reverse("accounts:organizations"))
    first.select_option("#org-switcher-select", str(personas.acme.pk))
    with first.expect_navigation():
        first.click(".org-switcher button[type=submit]")
    first.goto(live_server.url + reverse("assessments:vendor_create"))
    second.goto(live_server.url + reverse("accounts:organizations"))
    second.select_option("#org-switcher-select", str(personas.other.pk))
    with second.expect_navigation():
        second.click(".org-switcher button[type=submit]")
    first.fill("#id_name", "Stale Tab Ltd")
    with first.expect_navigation():
        first.click("main form button[type=submit]")
    assert "This form was for Acme Procurement" in first.locator("main").inner_text()
    assert not Vendor.objects.filter(name="Stale Tab Ltd").exists()

    with first.expect_navigation():
        first.click("button:has-text('Switch to Acme Procurement')")
    assert first.url.endswith(reverse("assessments:vendor_create"))  # back to the form
    first.fill("#id_name", "Stale Tab Ltd")
    with first.expect_navigation():
        first.click("main form button[type=submit]")
    assert Vendor.objects.get(name="Stale Tab Ltd").organization == personas.acme
    first.context.close()
