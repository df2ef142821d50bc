"""Vendor-supplied text is printed literally: never interpreted as HTML or CSS, never fetched."""

import pytest

from reports.context import report_context
from reports.rendering import ReportAssetFetcher, html_to_pdf, report_html

from .conftest import make_scored_assessment, pdf_text

pytestmark = pytest.mark.django_db

MARKUP = "<b>x</b><style>body{display:none}</style>"
COMMENT = '</p><h1>Approved</h1><img src="https://evil.test/pixel.png"> @import url(http://evil.test/a.css);'


def squashed(text: str) -> str:
    return "".join(text.split())


def test_vendor_html_and_css_are_printed_literally(catalog, personas, inline_tasks):
    assessment = make_scored_assessment(
        personas,
        vendor_name="Evil <i>Cloud</i> & Co",
        answers={"PRF-01": MARKUP},
        comments={"PRF-02": COMMENT, "CTX-02": "a{}\\\" ' </style><script>alert(1)</script>"},
    )
    context = report_context(run=assessment.latest_run, language="en", number="AVIA-TEST-1")
    html = report_html(context)
    fetcher = ReportAssetFetcher()

    rendered = html_to_pdf(html, fetcher=fetcher)

    assert MARKUP not in html and "&lt;style&gt;body{display:none}&lt;/style&gt;" in html
    text = squashed("".join(pdf_text(rendered.pdf)))
    assert squashed(MARKUP) in text  # the body was not hidden, the tags are text
    assert squashed(COMMENT) in text
    assert squashed("</style><script>alert(1)</script>") in text
    assert squashed("Evil <i>Cloud</i> & Co") in text
    # Nothing the vendor wrote made the renderer fetch anything.
    assert fetcher.refused == []
    assert rendered.pages > 10  # `body{display:none}` did not blank the document
