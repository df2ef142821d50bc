"""A page's elements as the tests read them (the standard library's parser: no dependency)."""

from __future__ import annotations

from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class Elements(HTMLParser):
    """Each element's attributes, parent, the ids of its ancestors and its text."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[dict] = []
        self.all: list[dict] = []

    def handle_starttag(self, tag, attrs):
        parent = self.stack[-1] if self.stack else None
        element = {"tag": tag, "attrs": dict(attrs), "text": "", "ancestors": [], "parent": parent}
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
