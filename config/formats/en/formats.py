# One date format per language, used by every page, report, email and export (through
# `core.formats` and the `date` filter): "1 Dec 2026", "1 Dec 2026, 14:05".
from django.conf.locale.en.formats import *  # noqa: F403

DATE_FORMAT = "j M Y"
DATETIME_FORMAT = "j M Y, H:i"
SHORT_DATE_FORMAT = "j M Y"
SHORT_DATETIME_FORMAT = "j M Y, H:i"
