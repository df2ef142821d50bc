"""Validation of organization branding: the colour and the uploaded logo.

The logo is sniffed from its bytes, never trusted from the file name or the browser's
content type. SVG is accepted only as a static drawing: no scripts, event handlers,
DTDs or references outside the file, because the logo is shown in pages and rendered
into PDF reports.
"""

import functools
import io
import re
import zoneinfo
from xml.etree import ElementTree

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.utils.translation import gettext_lazy as _
from PIL import Image

BRAND_COLOUR_PATTERN = r"^#[0-9A-Fa-f]{6}$"
LOGO_MAX_BYTES = 1024 * 1024
LOGO_MAX_PIXELS_PER_SIDE = 4096
PNG_CONTENT_TYPE = "image/png"
SVG_CONTENT_TYPE = "image/svg+xml"

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_SVG_NAMESPACE = "http://www.w3.org/2000/svg"
_SVG_FORBIDDEN_ELEMENTS = {"script", "foreignobject", "iframe", "embed", "object", "handler"}
_SVG_FORBIDDEN_TEXT = re.compile(
    rb"<!DOCTYPE|<!ENTITY|<\?xml-stylesheet|@import|url\(\s*['\"]?\s*(?!#)", re.IGNORECASE
)

validate_brand_colour = RegexValidator(
    BRAND_COLOUR_PATTERN,
    _("Enter a colour as # followed by six hexadecimal digits, for example #1A5FB4."),
    code="invalid_colour",
)


DEFAULT_TIME_ZONE = "Asia/Hong_Kong"


@functools.cache
def known_time_zones() -> tuple[str, ...]:
    """The IANA zone names this machine's zone database knows, sorted (read once: the call
    walks the zone files)."""
    return tuple(sorted(zoneinfo.available_timezones()))


def validate_time_zone(value: str) -> None:
    """An IANA time zone name that this machine's zone database knows."""
    if value not in known_time_zones():
        raise ValidationError(
            _("“%(zone)s” is not a known time zone.") % {"zone": value}, code="time_zone"
        )


def logo_content_type(data: bytes) -> str:
    """Return the content type of a valid logo, or raise ValidationError."""
    if len(data) > LOGO_MAX_BYTES:
        raise ValidationError(_("The logo must be 1 MB or smaller."), code="logo_too_large")
    if data.startswith(_PNG_SIGNATURE):
        _check_png(data)
        return PNG_CONTENT_TYPE
    if _looks_like_xml(data):
        _check_svg(data)
        return SVG_CONTENT_TYPE
    raise ValidationError(_("The logo must be a PNG or SVG image."), code="logo_not_image")


def _check_png(data: bytes) -> None:
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.format != "PNG":
                raise ValueError("not a PNG")
            width, height = image.size
            image.verify()
    except Exception as error:  # Pillow raises many types for damaged files.
        raise ValidationError(
            _("The logo is not a readable PNG image."), code="logo_not_image"
        ) from error
    if width > LOGO_MAX_PIXELS_PER_SIDE or height > LOGO_MAX_PIXELS_PER_SIDE:
        raise ValidationError(
            _("The logo may be at most %(pixels)s pixels wide and high."),
            code="logo_too_large",
            params={"pixels": LOGO_MAX_PIXELS_PER_SIDE},
        )


def _looks_like_xml(data: bytes) -> bool:
    head = data.removeprefix(b"\xef\xbb\xbf").lstrip()[:5]
    return head.startswith(b"<")


def _check_svg(data: bytes) -> None:
    not_svg = ValidationError(_("The logo must be a PNG or SVG image."), code="logo_not_image")
    unsafe = ValidationError(
        _("The SVG logo may not contain scripts, event handlers or external references."),
        code="logo_unsafe",
    )
    if _SVG_FORBIDDEN_TEXT.search(data):
        raise unsafe
    try:
        # Safe without defusedxml: a document with a DTD or entity declaration was refused
        # above, and ElementTree resolves no external resources.
        root = ElementTree.fromstring(data)  # noqa: S314
    except ElementTree.ParseError as error:
        raise not_svg from error
    if root.tag != f"{{{_SVG_NAMESPACE}}}svg":
        raise not_svg
    for element in root.iter():
        if _local_name(element.tag).lower() in _SVG_FORBIDDEN_ELEMENTS:
            raise unsafe
        for attribute, value in element.attrib.items():
            name = _local_name(attribute).lower()
            if name.startswith("on"):
                raise unsafe
            if name == "href" and not value.strip().startswith("#"):
                raise unsafe


def _local_name(tag: str) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""
