"""Filters that redraw a list with htmx (dashboard, rescore, findings) tell a screen-reader user
what the new list holds: a short status sentence ("Showing 1–2 of 2") in a live region that
stays in the page while its text is swapped (a live region that is itself replaced, as the
list is, is not announced), and the redrawn list is not itself live (it would be read out
whole after every keystroke)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.html_elements import Elements


def announced_status(body: str) -> str:
    """The status sentence the filter form's swap updates; checks how it is wired."""
    page = Elements()
    page.feed(body)
    (form,) = [e for e in page.all if e["tag"] == "form" and "hx-target" in e["attrs"]]
    target = form["attrs"]["hx-target"].lstrip("#")
    assert "aria-live" not in page.by_id(target)["attrs"], "the swapped list is itself live"
    selected, _, style = form["attrs"].get("hx-select-oob", "").partition(":")
    assert selected and style == "innerHTML", form["attrs"]
    status = page.by_id(selected.lstrip("#"))
    assert status["attrs"].get("role") == "status"
    assert target not in status["ancestors"] and status["attrs"]["id"] != target
    return " ".join(status["text"].split())


def test_the_dashboard_filter_announces_how_many_assessments_it_shows(client, personas, scored):
    client.force_login(personas.vic)
    body = client.get(reverse("assessments:dashboard") + "?q=Cloud").content.decode()
    assert announced_status(body) == "Showing 1–1 of 1; overdue first."
    nothing = client.get(reverse("assessments:dashboard") + "?q=Nobody").content.decode()
    assert announced_status(nothing) == "No assessment matches these filters."


def test_the_rescore_filter_announces_its_count(client, personas, scored):
    client.force_login(personas.vic)
    body = client.get(reverse("portfolio:rescore") + "?ruleset=incident-2026-kv@1").content.decode()
    assert announced_status(body).startswith("Showing 1–1 of 1")


@pytest.mark.parametrize("query", ["?severity=high", ""])
def test_the_findings_filter_announces_how_many_findings_it_shows(client, personas, scored, query):
    client.force_login(personas.vic)
    body = client.get(reverse("assessments:findings", args=[scored.pk]) + query).content
    status = announced_status(body.decode())
    assert status.startswith("Showing ") if query else status == ""
