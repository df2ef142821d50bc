# Hong Kong writes token counts as 1,048,576 in Chinese text too; Django's zh_Hant locale has
# no thousands separator. Dates: one format per language, used everywhere (see formats/en):
# "2026年12月1日", "2026年12月1日 14:05".
from django.conf.locale.zh_Hant.formats import *  # noqa: F403

THOUSAND_SEPARATOR = ","
NUMBER_GROUPING = 3
DATE_FORMAT = "Y年n月j日"
DATETIME_FORMAT = "Y年n月j日 H:i"
SHORT_DATE_FORMAT = "Y年n月j日"
SHORT_DATETIME_FORMAT = "Y年n月j日 H:i"
