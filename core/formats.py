"""How numbers, dates and times read, in one place for the web pages, the PDF and the emails.

Every function takes the reader's language. Times are shown in the organization's time zone
(one clock): callers pass it, or rely on the zone the member page or portal activated. Dates
use the one format of each language (`config/formats`): "1 Dec 2026" / "2026年12月1日".
"""

from __future__ import annotations

import datetime as dt
import zoneinfo

from django.utils import formats, timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

EMPTY = "—"


def format_number(value: int) -> str:
    """Grouped by thousands in both languages, as Hong Kong writes token counts: 1,048,576."""
    return f"{value:,}"


def format_tokens(value: int | None, language: str) -> str:
    if value is None:
        return EMPTY
    with translation.override(language):
        return _("%(count)s tokens") % {"count": format_number(value)}


def format_line(number: int | None, language: str) -> str:
    """ "line 42" / "第 42 行"; "" without a line number."""
    if number is None:
        return ""
    with translation.override(language):
        return _("line %(number)s") % {"number": number}


def format_date(value: dt.date | dt.datetime | None, language: str, zone: str | None = None) -> str:
    """A date in the language's one format; a datetime is first moved into `zone` (default:
    the active time zone), so that a late-evening event keeps its local date."""
    if value is None:
        return EMPTY
    if isinstance(value, dt.datetime):
        value = _local(value, zone).date()
    with translation.override(language):
        return formats.date_format(value, "DATE_FORMAT")


def format_datetime(value: dt.datetime | None, language: str, zone: str | None = None) -> str:
    if value is None:
        return EMPTY
    with translation.override(language):
        return formats.date_format(_local(value, zone), "DATETIME_FORMAT")


def _local(value: dt.datetime, zone: str | None) -> dt.datetime:
    if timezone.is_naive(value):
        return value
    return timezone.localtime(value, zoneinfo.ZoneInfo(zone) if zone else None)


def list_text(items: list[str], language: str) -> str:
    """Items joined as the language lists them: "a, b" / "a、b"."""
    with translation.override(language):
        # Translators: the separator between the items of a list ("a, b, c").
        return pgettext("list separator", ", ").join(items)
