"""A `ReportContext` in, PDF bytes out: the template, then WeasyPrint. No database.

WeasyPrint never touches the network. Its URL fetcher refuses every address except `data:`
URIs (the organization's logo is inlined as one) and files under `static/reports/` (the print
stylesheet). Fonts come from fontconfig: Debian's Noto Sans CJK TC, subsetted into the PDF.
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

from django.conf import settings
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.safestring import SafeString, mark_safe
from weasyprint import HTML
from weasyprint.urls import URLFetcher, URLFetcherResponse, path2url

from .context import ReportContext
from .portfolio_context import OverviewContext, PortfolioReportContext

TEMPLATE = "reports/report.html"
PORTFOLIO_TEMPLATE = "reports/portfolio_report.html"
OVERVIEW_TEMPLATE = "reports/consultancy_overview.html"


def static_reports_dir() -> Path:
    return Path(settings.BASE_DIR) / "static" / "reports"


class RefusedURL(ValueError):
    """The report asked for something outside what it may read."""


class ReportAssetFetcher(URLFetcher):
    """Serves `data:` URIs and files under one directory; refuses everything else.

    http(s), ftp, other `file:` paths (`/etc/passwd`, `../`), symlinks out of the directory:
    all refused. Refused addresses are kept in `refused` (tests read it) and WeasyPrint
    renders on without them.
    """

    def __init__(self, root: Path | None = None) -> None:
        super().__init__(allowed_protocols=("data", "file"), allow_redirects=False)
        self.root = (root or static_reports_dir()).resolve()
        self.refused: list[str] = []

    def fetch(self, url: str, headers: dict[str, str] | None = None) -> URLFetcherResponse:
        scheme = url.split(":", 1)[0].lower()
        if scheme == "data":
            return super().fetch(url, headers)
        if scheme == "file":
            path = Path(url2pathname(urlsplit(url).path)).resolve()
            if path.is_relative_to(self.root) and path.is_file():
                content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
                return URLFetcherResponse(
                    url, body=path.read_bytes(), headers={"Content-Type": content_type}
                )
        self.refused.append(url[:300])
        raise RefusedURL(f"reports may read only static/reports and data: URIs, not {url[:300]}")


def base_url() -> str:
    """Relative addresses in the template (`report.css`) resolve inside static/reports/."""
    return path2url(str(static_reports_dir())) + "/"


def css_string(value: str) -> SafeString:
    """A quoted CSS string of `value`, safe inside a <style> element.

    Django's HTML escaping does not apply inside <style> (the browser does not decode
    entities there), so quotes, backslashes, angle brackets and control characters are
    written as CSS escapes instead.
    """
    escaped = "".join(
        f"\\{ord(char):x} " if char in "\\\"'<>&" or ord(char) < 0x20 or ord(char) == 0x7F else char
        for char in value
    )
    return mark_safe(f'"{escaped}"')  # noqa: S308 (every special character is escaped above)


@dataclass(frozen=True)
class RenderedReport:
    pdf: bytes
    pages: int


def report_html(context: ReportContext | PortfolioReportContext, template: str = TEMPLATE) -> str:
    """The final HTML of the report (what WeasyPrint lays out)."""
    labels = context.labels
    page_css = {
        "page_before": css_string(labels["page_x_of_y_before"]),
        "page_middle": css_string(labels["page_x_of_y_middle"]),
        "page_after": css_string(labels["page_x_of_y_after"]),
    }
    with translation.override(context.language):
        return render_to_string(template, {"report": context, "L": labels, "page_css": page_css})


# Tagged PDF/UA-1 (WeasyPrint 70: the "pdf/ua-1" variant writes the structure tree — headings,
# paragraphs, lists, tables, figures with their alternative text — the document language from
# <html lang>, the title from <title> shown in the window, and the PDF/UA identification), so a
# screen reader can follow the report.
PDF_OPTIONS = {"pdf_variant": "pdf/ua-1"}


def html_to_pdf(html: str, *, fetcher: ReportAssetFetcher | None = None) -> RenderedReport:
    """Lay out and write the PDF with the restricted fetcher."""
    document = HTML(
        string=html, base_url=base_url(), url_fetcher=fetcher or ReportAssetFetcher()
    ).render(**PDF_OPTIONS)
    return RenderedReport(pdf=document.write_pdf(**PDF_OPTIONS), pages=len(document.pages))


def render_report(context: ReportContext) -> RenderedReport:
    """The PDF of a report: a pure function of its context."""
    return html_to_pdf(report_html(context))


def render_portfolio_report(context: PortfolioReportContext | OverviewContext) -> RenderedReport:
    """The PDF of a portfolio report, or of a consultancy's overview across its clients: the
    same page, fetcher and PDF/UA options."""
    template = OVERVIEW_TEMPLATE if isinstance(context, OverviewContext) else PORTFOLIO_TEMPLATE
    return html_to_pdf(report_html(context, template))
