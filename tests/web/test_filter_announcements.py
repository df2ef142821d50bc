"""Filters that redraw a list with htmx (dashboard, rescore, findings) tell a screen-reader user
what the new list holds: a short status sentence ("Showing 1–2 of 2") in a live region that
stays in the page while its text is swapped (a live region that is itself replaced, as the
list is, is not announced), and the redrawn list is not itself live (it would be read out
whole after every keystroke)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.urls import reverse

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class Elements(HTMLParser):
    """Each element's attributes, the ids of its ancestors and its text."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[dict] = []
        self.all: list[dict] = []

    def handle_starttag(self, tag, attrs):
        element = {"tag": tag, "attrs": dict(attrs), "text": "", "ancestors": []}
        element["ancestors"] = [e["attrs"].get("id") for e in self.stack if e["attrs"].get("id")]
        self.all.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_endtag(self, tag):
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index]["tag"] == tag:
                del self.stack[index:]
                break

    def handle_data(self, data):
        for element in self.stack:
            element["text"] += data

    def by_id(self, id_: str) -> dict:
        (element,) = [e for e in self.all if e["attrs"].get("id") == id_]
        return element


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
