"""The incident report as a reader gets it: open the PDFs and check what they say.

Both editions come from the `incident_reports` session fixture (request → eager task → real
WeasyPrint → stored file), built once because rendering takes seconds.
"""

import hashlib
import io
import re
import subprocess

import pypdf
import pytest

from assessments.presenters.formats import review_decision_label, severity_label
from reports.labels import LABELS

from .conftest import ARTIFACTS, CONDITIONS, VENDOR, pdf_text, render_first_page_png

# The PDFs need no database, but the fixture that builds them does: the mark makes sure
# pytest-django sets the test database up even when this module runs alone.
pytestmark = pytest.mark.django_db

LANGUAGES = ["en", "zh-hant"]


def squashed(text: str) -> str:
    """Without any whitespace: line breaks fall anywhere in Chinese text (and in English
    paragraphs), so a sentence is compared without them."""
    return "".join(text.split())


def reader(edition) -> pypdf.PdfReader:
    return pypdf.PdfReader(io.BytesIO(edition.pdf))


def test_the_text_names_the_vendor_tier_and_every_fired_rule(edition):
    text = "\n".join(pdf_text(edition.pdf))
    labels = LABELS[edition.language]

    assert VENDOR in text
    assert edition.number in text
    tier = severity_label(edition.tier, edition.language)
    assert f"{labels['risk_tier']}{labels['colon']}{tier}" in text
    assert edition.fired_rule_ids  # the incident fires many rules...
    missing = [rule for rule in edition.fired_rule_ids if rule not in text]
    assert missing == []  # ...and the report names every one


def test_the_chinese_edition_prints_its_headings_and_catalogue_in_chinese(incident_reports):
    text = "\n".join(pdf_text(incident_reports["zh-hant"].pdf))

    for heading in ("目錄", "執行摘要", "發現事項", "佐證資料", "附錄：問卷答案", "簽核"):
        assert heading in text
    for section in ("服務概況", "上下文長度限制", "KV 快取處理", "採購方擬定用途"):
        assert section in text  # questionnaire section titles (catalogue text)
    assert "KV 快取池小於標稱上下文長度" in text  # a rule title
    assert "風險分數的計算方法" in text
    assert "Executive summary" not in text and "Findings" not in text


def test_the_english_edition_is_in_english(incident_reports):
    text = "\n".join(pdf_text(incident_reports["en"].pdf))

    assert "Executive summary" in text
    assert "KV cache pool is smaller than the advertised context" in text
    assert "執行摘要" not in text


def test_the_score_formula_and_the_reviewers_decision_are_printed(edition):
    text = squashed("".join(pdf_text(edition.pdf)))
    labels = LABELS[edition.language]

    assert squashed(labels["formula"]) in text
    assert squashed(review_decision_label("approved_with_conditions", edition.language)) in text
    assert squashed(CONDITIONS) in text


def test_findings_carry_rationale_remediation_and_marked_references(incident_reports):
    text = " ".join(" ".join(pdf_text(incident_reports["en"].pdf)).split())

    assert "Incident fact it rests on" in text and "Remediation" in text
    # V-confidence references are cited plainly, S-confidence ones "as summarised".
    assert "HK-PDPO-DPP4-1 — Personal Data (Privacy) Ordinance (Cap. 486)" in text
    assert re.search(r"NIST-800-53-SI-10 — [^()]+\(as summarised\)", text)
    assert "Cloudflare disclosure, 2026-10-26" in text


def test_the_evidence_quotes_the_exact_startup_log_line(edition):
    text = "\n".join(pdf_text(edition.pdf))
    line = "max_total_num_tokens=681280, chunked_prefill_size=16384"

    assert "sglang-prefill-glm53-launch.log" in text
    assert line in text
    assert "681,280" in text and "1,048,576" in text


def test_the_cjk_font_is_embedded_and_subsetted(edition):
    fonts = {}
    for page in reader(edition).pages:
        for font in (page["/Resources"].get("/Font") or {}).values():
            font = font.get_object()
            descendant = font["/DescendantFonts"][0].get_object()
            fonts[str(font["/BaseFont"])] = descendant["/FontDescriptor"].get_object()

    cjk = {name: d for name, d in fonts.items() if "Noto-Sans-CJK-TC" in name}
    assert cjk, sorted(fonts)
    for name, descriptor in cjk.items():
        assert re.match(r"^/[A-Z]{6}\+", name), f"{name} is not a subset"
        assert any(key in descriptor for key in ("/FontFile", "/FontFile2", "/FontFile3"))
    # Every font in the file is ours: no fallback font slipped in for missing glyphs.
    assert all("CJK-TC" in name for name in fonts), sorted(fonts)


def test_every_page_but_the_cover_says_page_x_of_y(edition):
    pages = pdf_text(edition.pdf)
    labels = LABELS[edition.language]
    total = len(pages)

    assert total == edition.pages
    for number, text in enumerate(pages, start=1):
        footer = (
            f"{labels['page_x_of_y_before']}{number}{labels['page_x_of_y_middle']}{total}"
            f"{labels['page_x_of_y_after']}"
        ).strip()
        if number == 1:
            assert footer not in text  # the cover has no header or footer
        else:
            assert footer in text, f"page {number}"


def test_running_headers_name_the_vendor_and_the_chapter(edition):
    pages = pdf_text(edition.pdf)
    labels = LABELS[edition.language]

    assert all(VENDOR in text for text in pages[1:])
    for chapter in ("executive_summary", "findings", "evidence", "answers_appendix", "sign_off"):
        # The header line: the vendor on the left, the current chapter on the right.
        header = f"{VENDOR} {labels[chapter]}"
        assert sum(header in text for text in pages) >= 1, header
    findings_pages = [text for text in pages if f"{VENDOR} {labels['findings']}" in text]
    assert len(findings_pages) > 3  # the chapter's name runs on over its pages


def test_the_contents_page_numbers_are_the_pages_of_the_chapters(edition):
    pdf = reader(edition)
    labels = LABELS[edition.language]
    chapters = {
        str(item["/Title"]): pdf.get_destination_page_number(item) + 1
        for item in pdf.outline
        if not isinstance(item, list)
    }
    contents = pdf.pages[1].extract_text(extraction_mode="layout")

    for key in ("executive_summary", "findings", "evidence", "answers_appendix", "sign_off"):
        title = labels[key]
        match = re.search(rf"^\s*{re.escape(title)}\s+(\d+)\s*$", contents, re.M)
        assert match, f"{title} not in the contents"
        assert int(match[1]) == chapters[title]


def test_each_finding_is_a_bookmark_on_the_page_that_prints_it(incident_reports):
    edition = incident_reports["en"]
    pdf = reader(edition)
    findings = next(
        pdf.outline[i + 1] for i, item in enumerate(pdf.outline) if item.get("/Title") == "Findings"
    )
    pages = pdf_text(edition.pdf)

    assert len(findings) == len(edition.fired_rule_ids)
    for item, rule_id in zip(findings, edition.fired_rule_ids, strict=True):
        assert rule_id in str(item["/Title"])
        assert rule_id in pages[pdf.get_destination_page_number(item)]


def test_the_pdf_metadata_and_language_are_set(edition):
    pdf = reader(edition)
    metadata = pdf.metadata
    labels = LABELS[edition.language]

    assert edition.number in metadata.title and VENDOR in metadata.title
    assert labels["report_title"] in metadata.title
    assert metadata.author == "Kowloon Risk Advisory"
    assert VENDOR in metadata.subject and "incident-2026-kv@3" in metadata.subject
    expected_lang = {"en": "en", "zh-hant": "zh-Hant-HK"}[edition.language]
    assert pdf.trailer["/Root"]["/Lang"] == expected_lang


def test_the_cover_shows_the_branding_client_and_number(edition):
    cover = pdf_text(edition.pdf)[0]

    assert "Kowloon Risk Advisory" in cover  # the consultancy's name (branding)
    assert "Acme Procurement" in cover  # the client organization
    assert edition.number in cover and re.fullmatch(r"AVIA-\d{4}-\d{6}", edition.number)


def test_the_stored_sha256_is_the_sha256_of_the_file(edition):
    assert hashlib.sha256(edition.pdf).hexdigest() == edition.sha256


def test_pdftoppm_renders_the_first_page(edition):
    # Rendered by the fixture with check=True; the PNG stays in artifacts/reports/ for CI.
    assert edition.png.exists()
    assert edition.png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert edition.png.stat().st_size > 1000


def test_the_report_stays_within_the_size_budget(edition):
    assert len(edition.pdf) <= 1.5 * 1024 * 1024


def test_the_appendix_prints_not_applicable_for_hidden_follow_ups(edition):
    """INC-01 = no hides INC-02..04: a skipped follow-up, never a gap ("Not answered")."""
    text = squashed("".join(pdf_text(edition.pdf)))
    reason = {"en": "Not applicable: because INC-01 = No", "zh-hant": "不適用：因 INC-01 = 否"}

    assert text.count(squashed(reason[edition.language])) == 3  # INC-02, INC-03, INC-04


def test_every_contents_entry_ends_on_its_line_with_the_page_its_section_starts(edition, tmp_path):
    """Read as pdftotext lays the page out: each entry of the contents (chapters and findings,
    long titles wrapping over lines) ends with one page number, on the entry's last line, and
    that is the page the section starts on (its bookmark)."""
    pdf = reader(edition)
    labels = LABELS[edition.language]
    starts: dict[str, int] = {}  # a chapter's title, or a finding's rule id → its first page

    def walk(items):
        for item in items:
            if isinstance(item, list):
                walk(item)
                continue
            title, page = str(item["/Title"]), pdf.get_destination_page_number(item) + 1
            rule = next((r for r in edition.fired_rule_ids if r in title.split()), None)
            starts[rule or squashed(title)] = page

    walk(pdf.outline)
    path = tmp_path / "report.pdf"
    path.write_bytes(edition.pdf)
    layout = subprocess.run(
        ["pdftotext", "-layout", "-f", "2", "-l", "2", str(path), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = [line.strip() for line in layout.splitlines() if line.strip()]
    heading = lines.index(labels["contents"])
    entries, pending = [], []
    for line in lines[heading + 1 :]:
        if edition.number in line:
            continue  # the page's footer
        pending.append(line)
        number = re.search(r"\s(\d+)$", line)
        if number:
            entries.append((" ".join(pending)[: -len(number[1])].strip(), int(number[1])))
            pending = []
    assert pending == [], f"lines without a page number: {pending}\n{layout}"
    assert len(entries) == 5 + len(edition.fired_rule_ids), layout
    for title, page in entries:
        key = title.split(" · ")[0] if " · " in title else squashed(title)
        assert key in starts, (
            f"{title!r} is no section's title (a number on a wrong line?)\n{layout}"
        )
        assert page == starts[key], f"{title}: page {page}, starts on {starts[key]}\n{layout}"
    # The contents page as a reader sees it, kept for CI.
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    render_first_page_png(path, ARTIFACTS / f"contents-{edition.language}", page=2, dpi=80)
