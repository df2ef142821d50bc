"""The words a reader knows an answer option by, in their language: the catalogue's option
labels, and yes / no / unknown, which the catalogue does not spell out. The same words on every
page, in the PDF and in validation messages; and a saved answer as a form's input shows it."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils import translation
from django.utils.translation import pgettext

from .spec import Question


def yes_no_labels(language: str | None) -> dict[str, str]:
    """The words of a yes/no/unknown answer."""
    with translation.override(language):
        return {
            "yes": pgettext("answer", "Yes"),
            "no": pgettext("answer", "No"),
            "unknown": pgettext("answer", "Unknown"),
        }


def option_label(question: Question, code: str, language: str | None) -> str:
    """An option's label (the code itself when the question has no such option)."""
    if question.type == "yes_no":
        return yes_no_labels(language).get(code, code)
    for option in question.options:
        if option.code == code:
            return option.label.get(language)
    return code


def shown_value(question: Question, value: Any) -> Any:
    """A saved answer as its input shows it (grouped digits, ISO dates, lists for checkboxes)."""
    if question.type == "multi_choice":
        return list(value or [])
    if value is None:
        return ""
    if question.type == "integer" and isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, dt.date):
        return value.isoformat()
    return value
