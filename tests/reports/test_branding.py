"""Branding is an organization setting: the report shows its name, logo and colour, with the
logo inlined (the renderer fetches nothing)."""

import io

import pypdf
import pytest
from PIL import Image

from accounts.services import organization_update_branding
from reports.context import DEFAULT_BRAND_COLOUR, report_context
from reports.rendering import ReportAssetFetcher, html_to_pdf, report_html

from .conftest import LOGO_SVG, pdf_text

pytestmark = pytest.mark.django_db


def png_logo() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (120, 40), (26, 95, 180)).save(buffer, format="PNG")
    return buffer.getvalue()


def brand(personas, **fields):
    values = {"report_display_name": "", "brand_colour": "", **fields}
    return organization_update_branding(organization=personas.acme, actor=personas.alice, **values)


def test_a_png_logo_is_inlined_and_drawn_on_the_cover(scored, personas):
    brand(personas, report_display_name="Harbour Advisory", brand_colour="#0F766E", logo=png_logo())
    context = report_context(run=scored.latest_run, language="en", number="AVIA-TEST-1")
    fetcher = ReportAssetFetcher()

    rendered = html_to_pdf(report_html(context), fetcher=fetcher)

    assert context.branding.logo_data_uri.startswith("data:image/png;base64,")
    assert context.branding.colour == "#0F766E"
    assert fetcher.refused == []
    cover = pypdf.PdfReader(io.BytesIO(rendered.pdf)).pages[0]
    assert len(cover.images) == 1
    assert "Harbour Advisory" in pdf_text(rendered.pdf)[0]


def test_an_svg_logo_is_inlined_as_a_data_uri(scored, personas):
    brand(personas, logo=LOGO_SVG)

    context = report_context(run=scored.latest_run, language="en", number="AVIA-TEST-1")

    assert context.branding.logo_data_uri.startswith("data:image/svg+xml;base64,")
    assert '<img class="logo" src="data:image/svg+xml;base64,' in report_html(context)


def test_without_branding_the_organization_name_and_the_default_colour_are_used(scored, personas):
    context = report_context(run=scored.latest_run, language="en", number="AVIA-TEST-1")

    assert context.branding.display_name == context.branding.client_name == "Acme Procurement"
    assert context.branding.logo_data_uri is None
    assert context.branding.colour == DEFAULT_BRAND_COLOUR
    assert "<img" not in report_html(context)


@pytest.mark.parametrize(
    ("language", "prepared_by"), [("en", "Prepared by: "), ("zh-hant", "編製機構：")]
)
def test_a_consultancys_client_report_carries_both_names_and_logos(
    scored, personas, language, prepared_by
):
    """Issue 27: "prepared by <consultancy>" with its name and logo, beside the client's brand;
    once the client ends the engagement, the report names the client alone again."""
    from accounts.models import ClientEngagement, OrganizationKind
    from accounts.services import organization_create

    brand(personas, report_display_name="Acme Procurement Ltd", logo=png_logo())
    helix = organization_create(
        name="Helix Advisory", owner_email="hana@helix.test", kind=OrganizationKind.CONSULTANCY
    )
    organization_update_branding(
        organization=helix,
        actor=helix.memberships.get().user,
        report_display_name="Helix Advisory Partners",
        brand_colour="",
        logo=LOGO_SVG,
    )
    engagement = ClientEngagement.objects.create(consultancy=helix, client=personas.acme)

    context = report_context(run=scored.latest_run, language=language, number="AVIA-TEST-1")
    rendered = html_to_pdf(report_html(context), fetcher=ReportAssetFetcher())

    cover = pdf_text(rendered.pdf)[0]
    assert "Acme Procurement Ltd" in cover  # the client's brand
    assert f"{prepared_by}Helix Advisory Partners" in cover
    assert len(pypdf.PdfReader(io.BytesIO(rendered.pdf)).pages[0].images) >= 1
    assert context.branding.consultancy_logo_data_uri.startswith("data:image/svg+xml;base64,")
    assert 'class="consultancy-logo"' in report_html(context)

    engagement.ended_at = engagement.opened_at
    engagement.save()
    alone = report_context(run=scored.latest_run, language=language, number="AVIA-TEST-2")
    assert alone.branding.consultancy_name is None
    assert "Helix" not in report_html(alone)
