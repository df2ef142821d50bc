"""The PDF reads aloud: tagged PDF/UA-1 (`pdfinfo` says "Tagged: yes"), its structure tree has
the headings in order, real tables, and alternative text on the charts and the logo; its
language is set; and no heading is left as the last line of a page.

Both editions come from the `incident_reports` session fixture (the real request → task →
render path, branded with a logo)."""

from __future__ import annotations

import io
import itertools
import re
import subprocess

import pypdf
import pytest

from reports.rendering import html_to_pdf

pytestmark = pytest.mark.django_db


def structure(pdf: bytes) -> tuple[dict, list[tuple[str, str | None]]]:
    """The document catalogue and every structure element in reading order: (tag, /Alt)."""
    catalogue = pypdf.PdfReader(io.BytesIO(pdf)).trailer["/Root"]
    elements: list[tuple[str, str | None]] = []

    def walk(node) -> None:
        node = node.get_object()
        if isinstance(node, list):
            for kid in node:
                walk(kid)
            return
        if not isinstance(node, dict):
            return  # a marked-content id: the leaf of the tree
        if "/S" in node:
            alt = node.get("/Alt")
            elements.append((str(node["/S"]), str(alt) if alt is not None else None))
        if "/K" in node:
            walk(node["/K"])

    walk(catalogue["/StructTreeRoot"])
    return catalogue, elements


def test_pdfinfo_reports_a_tagged_pdf(edition, tmp_path):
    path = tmp_path / "report.pdf"
    path.write_bytes(edition.pdf)
    info = subprocess.run(["pdfinfo", path], capture_output=True, text=True, check=True).stdout
    assert re.search(r"^Tagged:\s+yes$", info, re.M), info


def test_the_structure_tree_reads_in_order_with_tables_and_alternative_texts(edition):
    catalogue, elements = structure(edition.pdf)
    tags = [tag for tag, _alt in elements]
    assert str(catalogue["/Lang"]) == ("en" if edition.language == "en" else "zh-Hant-HK")
    assert bool(catalogue["/MarkInfo"]["/Marked"])
    assert bool(catalogue["/ViewerPreferences"]["/DisplayDocTitle"])

    levels = [int(tag[2]) for tag in tags if re.fullmatch(r"/H[1-6]", tag)]
    assert levels[0] == 1
    assert levels.count(1) >= 4  # a chapter heading each
    assert all(b - a <= 1 for a, b in itertools.pairwise(levels)), levels

    assert tags.count("/Table") >= 2
    assert {"/TR", "/TH", "/TD"} <= set(tags)

    figures = [alt for tag, alt in elements if tag == "/Figure"]
    assert len(figures) == 3, figures  # the logo and the two charts
    assert all(alt and alt.strip() for alt in figures), figures
    assert "Kowloon Risk Advisory" in figures[0]  # the logo, named
    # The charts' alternative texts carry their numbers, not just a title.
    assert re.search(r"\d", figures[1]) and re.search(r"\d", figures[2])


def page_lines(pdf: bytes, page: int) -> list[str]:
    text = subprocess.run(
        ["pdftotext", "-f", str(page), "-l", str(page), "-", "-"],
        input=pdf,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


RUNNING = re.compile(r"Page \d+ of \d+|第 ?\d+ ?頁")


def headings_ending_pages(
    pdf: bytes, pages: int, headings: tuple[str, ...], number: str = ""
) -> list[tuple[int, str]]:
    """Each page whose last line of text (the running header and footer aside) is a heading or
    the end of one."""
    ended = []
    for page in range(1, pages + 1):
        lines = [
            line
            for line in page_lines(pdf, page)
            if not (number and number in line) and not RUNNING.search(line)
        ]
        if lines and any(
            heading == lines[-1] or heading.endswith(f" {lines[-1]}") for heading in headings
        ):
            ended.append((page, lines[-1]))
    return ended


def test_no_heading_is_the_last_line_of_a_page(edition):
    assert len(edition.headings) > 20
    assert headings_ending_pages(edition.pdf, edition.pages, edition.headings, edition.number) == []


def test_the_print_stylesheet_keeps_every_heading_with_its_text():
    """Sections of 1 to 7 lines put a heading at every height of a page in turn: without the
    stylesheet's rule some heading ends a page (so the check above can fail); with it, none."""
    sections = "".join(
        f"<h2>Heading {index}</h2>" + "<p>One line of text.</p>" * (1 + index % 7)
        for index in range(160)
    )
    html = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Headings</title>'
        f'<link rel="stylesheet" href="report.css"></head><body>{sections}</body></html>'
    )
    headings = tuple(f"Heading {index}" for index in range(160))
    loose = html_to_pdf(html.replace("</head>", "<style>h2 { break-after: auto; }</style></head>"))
    kept = html_to_pdf(html)
    assert headings_ending_pages(loose.pdf, loose.pages, headings) != []
    assert headings_ending_pages(kept.pdf, kept.pages, headings) == []
