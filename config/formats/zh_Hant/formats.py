# Hong Kong writes token counts as 1,048,576 in Chinese text too; Django's zh_Hant locale has
# no thousands separator.
from django.conf.locale.zh_Hant.formats import *  # noqa: F403

THOUSAND_SEPARATOR = ","
NUMBER_GROUPING = 3
