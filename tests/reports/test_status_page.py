"""A report's page while the PDF is being made: it keeps itself up to date without reloading
(a meta refresh every 3 s sent a screen reader back to the top of the page and took the
keyboard focus away each time: WCAG 2.2.1, failure F41). The status is a live region that
stays in the page; without JavaScript a link reloads it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from assessments.models import Channel
from reports.services import report_request
from tests.html_elements import Elements
from tests.personas import member_of

from .test_views import client_for

pytestmark = pytest.mark.urls("config.urls")


def page_of(report, user) -> tuple[str, Elements]:
    html = client_for(user).get(reverse("reports:status", args=[report.pk])).content.decode()
    page = Elements()
    page.feed(html)
    return html, page


def test_a_pending_report_updates_its_status_in_place(scored, personas):
    report = report_request(
        assessment=scored, language="en", member=member_of(personas.ava), channel=Channel.WEB
    )  # its task is queued on commit, which never comes here: the report stays pending
    assert report.is_pending
    html, page = page_of(report, personas.vic)
    assert 'http-equiv="refresh"' not in html
    (polled,) = [e for e in page.all if "hx-trigger" in e["attrs"]]
    assert polled["attrs"]["hx-get"] == reverse("reports:status", args=[report.pk])
    assert polled["attrs"]["hx-select"] == f"#{polled['attrs']['id']}"
    selected, _, style = polled["attrs"]["hx-select-oob"].partition(":")
    status = page.by_id(selected.lstrip("#"))
    assert style == "innerHTML" and status["attrs"]["role"] == "status"
    assert polled["attrs"]["id"] not in status["ancestors"]
    assert "Queued" in status["text"] or "Rendering" in status["text"], status["text"]
    refresh = [e for e in page.all if e["tag"] == "a" and e["text"].strip() == "Refresh"]
    assert refresh and refresh[0]["attrs"]["href"] == reverse("reports:status", args=[report.pk])


def test_a_ready_report_stops_polling(ready_report, personas):
    html, page = page_of(ready_report, personas.vic)
    assert "hx-trigger" not in html and 'http-equiv="refresh"' not in html
    assert "Ready" in page.by_id("report-status")["text"]
