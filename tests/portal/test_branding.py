"""Issue 27: the vendor portal carries the client's brand (name, logo, colour) and, where a
consultancy prepared the assessment, "prepared by <consultancy>" with its logo."""

import pytest

from accounts.models import ClientEngagement, OrganizationKind
from accounts.services import organization_create, organization_update_branding
from tests.reports.conftest import LOGO_SVG

from .conftest import portal_url

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.portal.urls")]


def test_the_portal_shows_the_clients_logo_colour_and_its_consultancy(client, token, personas):
    organization_update_branding(
        organization=personas.acme,
        actor=personas.alice,
        report_display_name="Acme Procurement Ltd",
        brand_colour="#0F766E",
        logo=LOGO_SVG,
    )
    helix = organization_create(
        name="Helix Advisory", owner_email="hana@helix.test", kind=OrganizationKind.CONSULTANCY
    )
    ClientEngagement.objects.create(consultancy=helix, client=personas.acme)

    page = client.get(portal_url(token)).content.decode()

    assert "Acme Procurement Ltd" in page
    assert f'src="{portal_url(token, "logo")}"' in page
    assert f'href="{portal_url(token, "brand_stylesheet")}"' in page
    assert "Prepared by Helix Advisory" in page
    stylesheet = client.get(portal_url(token, "brand_stylesheet"))
    assert stylesheet["Content-Type"].startswith("text/css")
    assert "#0F766E" in stylesheet.content.decode()
    logo = client.get(portal_url(token, "logo"))
    assert (logo.status_code, logo["Content-Type"]) == (200, "image/svg+xml")
    assert "sandbox" in logo["Content-Security-Policy"]
    # Helix has no logo: none is shown or served for it.
    assert client.get(portal_url(token, "logo") + "?of=consultancy").status_code == 404


def test_without_branding_the_portal_names_the_organization_alone(client, token, personas):
    page = client.get(portal_url(token)).content.decode()

    assert "Acme Procurement" in page
    assert "portal-logo" not in page and "Prepared by" not in page
    assert client.get(portal_url(token, "brand_stylesheet")).content == b""
    assert client.get(portal_url(token, "logo")).status_code == 404
    assert client.get(portal_url("x" * 40, "logo")).status_code == 404
