"""The renderer reads nothing but static/reports and data: URIs; labels are complete."""

import re

import pytest
from weasyprint.urls import path2url

from reports.labels import LABELS
from reports.rendering import (
    RefusedURL,
    ReportAssetFetcher,
    css_string,
    html_to_pdf,
    static_reports_dir,
)

from .conftest import pdf_text


@pytest.mark.parametrize(
    "url",
    [
        "http://example.test/report.css",
        "https://example.test/logo.png",
        "ftp://example.test/x",
        "file:///etc/passwd",
        path2url(str(static_reports_dir() / ".." / "avia.css")),
        path2url(str(static_reports_dir() / "missing.css")),
    ],
)
def test_the_fetcher_refuses_anything_outside_static_reports(url):
    fetcher = ReportAssetFetcher()

    with pytest.raises(RefusedURL):
        fetcher.fetch(url)

    assert fetcher.refused == [url]


def test_the_fetcher_refuses_a_symlink_out_of_its_directory(tmp_path):
    (tmp_path / "root").mkdir()
    (tmp_path / "secret.txt").write_text("secret")
    (tmp_path / "root" / "link.css").symlink_to(tmp_path / "secret.txt")
    fetcher = ReportAssetFetcher(root=tmp_path / "root")

    with pytest.raises(RefusedURL):
        fetcher.fetch(path2url(str(tmp_path / "root" / "link.css")))


def test_the_fetcher_serves_the_print_stylesheet_and_data_uris():
    fetcher = ReportAssetFetcher()

    css = fetcher.fetch(path2url(str(static_reports_dir() / "report.css")))
    data = fetcher.fetch("data:text/plain;base64,QVZJQQ==")

    assert css.content_type == "text/css" and b"@page" in css.read()
    assert data.read() == b"AVIA"


def test_a_document_asking_for_remote_resources_renders_without_them():
    fetcher = ReportAssetFetcher()
    html = (
        '<html><head><link rel="stylesheet" href="https://cdn.example.test/x.css"></head>'
        '<body><p>Offline</p><img src="http://tracker.example.test/p.png"></body></html>'
    )

    rendered = html_to_pdf(html, fetcher=fetcher)

    assert sorted(fetcher.refused) == [
        "http://tracker.example.test/p.png",
        "https://cdn.example.test/x.css",
    ]
    assert "Offline" in pdf_text(rendered.pdf)[0]


def test_css_strings_cannot_close_the_style_element_or_the_string():
    value = css_string('Page "1" \\ </style><script>')

    assert value.startswith('"') and value.endswith('"')
    inner = value[1:-1]
    assert '"' not in inner and "<" not in inner and ">" not in inner
    assert inner.count("\\") == 7  # each special character became one CSS escape


def test_both_editions_have_the_same_labels():
    assert set(LABELS["en"]) == set(LABELS["zh-hant"])


def test_every_chinese_label_is_chinese():
    # Terms that stay as they are in both editions: product and engine vocabulary.
    same_in_both = {"generator", "role_prefill", "role_decode"}
    cjk = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
    not_chinese = [
        key
        for key, value in LABELS["zh-hant"].items()
        if key not in same_in_both and value.strip() and not cjk.search(value)
    ]
    assert not_chinese == []
