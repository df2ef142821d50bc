import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from accounts.models import Organization
from tests.html_elements import Elements

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.accounts.urls")]

BRANDING = "/accounts/orgs/acme-procurement/branding/"
LOGO = "/accounts/orgs/acme-procurement/logo/"
SVG = (
    b'<?xml version="1.0"?>\n'
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">'
    b'<rect width="10" height="10" fill="#1A5FB4"/></svg>'
)


def png_bytes(size=(4, 4)):
    buffer = io.BytesIO()
    Image.new("RGB", size, "#1A5FB4").save(buffer, "PNG")
    return buffer.getvalue()


def upload(data, name="logo.png", content_type="image/png"):
    return SimpleUploadedFile(name, data, content_type=content_type)


def acme():
    return Organization.objects.get(slug="acme-procurement")


def test_the_owner_sees_the_branding_page(client, personas):
    client.force_login(personas.alice)
    assert client.get(BRANDING).status_code == 200


@pytest.mark.parametrize("persona", ["ava", "rex", "vic"])
def test_other_members_get_403(client, personas, persona):
    client.force_login(getattr(personas, persona))
    assert client.get(BRANDING).status_code == 403
    response = client.post(BRANDING, {"report_display_name": "Hacked", "brand_colour": ""})
    assert response.status_code == 403
    assert acme().report_display_name == ""


def test_an_outsider_gets_404(client, personas):
    client.force_login(personas.oscar)
    assert client.get(BRANDING).status_code == 404
    assert client.post(BRANDING, {"report_display_name": "Hacked"}).status_code == 404
    assert acme().report_display_name == ""


def test_the_owner_saves_name_colour_and_png_logo(client, personas):
    client.force_login(personas.alice)
    data = png_bytes()

    response = client.post(
        BRANDING,
        {
            "report_display_name": "Acme Procurement Ltd",
            "brand_colour": "#1a5fb4",
            "logo": upload(data),
        },
    )

    assert response.status_code == 302
    organization = acme()
    assert organization.report_display_name == "Acme Procurement Ltd"
    assert organization.brand_colour == "#1A5FB4"
    assert bytes(organization.logo) == data
    assert organization.logo_content_type == "image/png"


def test_an_svg_logo_is_recognised_by_its_content_not_its_name(client, personas):
    client.force_login(personas.alice)
    response = client.post(
        BRANDING,
        {"brand_colour": "", "logo": upload(SVG, name="logo.png", content_type="image/png")},
    )
    assert response.status_code == 302
    assert acme().logo_content_type == "image/svg+xml"


def test_saving_without_a_file_keeps_the_logo(client, personas):
    client.force_login(personas.alice)
    client.post(BRANDING, {"logo": upload(png_bytes())})
    client.post(BRANDING, {"report_display_name": "Renamed"})
    assert acme().logo_content_type == "image/png"


def test_the_owner_removes_the_logo(client, personas):
    client.force_login(personas.alice)
    client.post(BRANDING, {"logo": upload(png_bytes())})
    client.post(BRANDING, {"remove_logo": "on"})
    assert acme().logo is None
    assert acme().logo_content_type == ""


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"brand_colour": "red"}, "brand_colour"),
        ({"brand_colour": "#12345"}, "brand_colour"),
        ({"report_display_name": "x" * 201}, "report_display_name"),
        ({"logo": upload(b"\x89PNG\r\n\x1a\n" + b"0" * (1024 * 1024))}, "logo"),
        ({"logo": upload(b"just some text pretending to be a png")}, "logo"),
        ({"logo": upload(b"\x89PNG\r\n\x1a\n" + b"broken")}, "logo"),
        ({"logo": upload(b"GIF89a\x01\x00\x01\x00", name="logo.gif")}, "logo"),
        ({"logo": upload(b"<html><body>hi</body></html>", name="logo.svg")}, "logo"),
        (
            {
                "logo": upload(
                    b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
                    name="logo.svg",
                )
            },
            "logo",
        ),
        (
            {
                "logo": upload(
                    b'<svg xmlns="http://www.w3.org/2000/svg"><rect onload="alert(1)"/></svg>',
                    name="logo.svg",
                )
            },
            "logo",
        ),
        (
            {
                "logo": upload(
                    b'<svg xmlns="http://www.w3.org/2000/svg" '
                    b'xmlns:xlink="http://www.w3.org/1999/xlink">'
                    b'<image xlink:href="http://internal.example/secret"/></svg>',
                    name="logo.svg",
                )
            },
            "logo",
        ),
        (
            {
                "logo": upload(
                    b'<!DOCTYPE svg [<!ENTITY x "y">]>'
                    b'<svg xmlns="http://www.w3.org/2000/svg">&x;</svg>',
                    name="logo.svg",
                )
            },
            "logo",
        ),
    ],
    ids=[
        "colour-word",
        "colour-short",
        "name-too-long",
        "logo-over-1mb",
        "logo-not-an-image",
        "logo-damaged-png",
        "logo-gif",
        "logo-html",
        "svg-script",
        "svg-event-handler",
        "svg-external-reference",
        "svg-entity",
    ],
)
def test_bad_input_is_a_form_error_and_saves_nothing(client, personas, data, field):
    client.force_login(personas.alice)
    payload = {"report_display_name": "Changed", "brand_colour": "#000000", **data}

    response = client.post(BRANDING, payload)

    assert response.status_code == 400
    assert response.context["form"].errors[field]
    organization = acme()
    assert organization.report_display_name == ""
    assert organization.brand_colour == ""
    assert organization.logo is None


def test_members_can_fetch_the_logo_safely(client, personas):
    client.force_login(personas.alice)
    client.post(BRANDING, {"logo": upload(SVG, name="logo.svg")})
    client.force_login(personas.vic)

    response = client.get(LOGO)

    assert response.status_code == 200
    assert response.content == SVG
    assert response["Content-Type"] == "image/svg+xml"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in response["Content-Security-Policy"]


def test_an_outsider_cannot_fetch_the_logo(client, personas):
    client.force_login(personas.alice)
    client.post(BRANDING, {"logo": upload(png_bytes())})
    client.force_login(personas.oscar)
    assert client.get(LOGO).status_code == 404


def test_no_logo_is_404(client, personas):
    client.force_login(personas.vic)
    assert client.get(LOGO).status_code == 404


def test_the_saved_notice_is_a_status_holding_a_list(client, personas):
    """A status role on the list itself would take away its list role, leaving its items
    outside any list for screen readers (axe: listitem)."""
    client.force_login(personas.alice)
    response = client.post(
        BRANDING, {"report_display_name": "Acme", "brand_colour": ""}, follow=True
    )
    page = Elements()
    page.feed(response.content.decode())
    (status,) = [e for e in page.all if "messages" in e["attrs"].get("class", "").split()]
    assert status["attrs"].get("role") == "status" and status["tag"] not in {"ul", "ol"}
    items = [e for e in page.all if "message" in e["attrs"].get("class", "").split()]
    assert items and all(item["tag"] == "li" and item["parent"]["tag"] == "ul" for item in items)
    assert "The branding was saved." in status["text"]
