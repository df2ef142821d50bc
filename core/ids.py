"""Row ids as they arrive from outside (URLs, form fields, API bodies): bounded in one place.

Every primary key is a 64-bit integer (BigAutoField). A larger number cannot be any row's id,
and the database driver refuses it ("Python int too large to convert to SQLite INTEGER",
PostgreSQL's "out of range") rather than finding nothing. So an id is parsed here, once: in a
URL by the `<id:…>` converter (a larger number does not match: 404), in a form by `IdField` /
`IdChoiceField` (a per-field error: 400), in an API body by `MAX_ID` (the schema's maximum).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

# The largest id a client may name: the range of the primary keys (BigAutoField).
MAX_ID = 2**63 - 1
_MAX_DIGITS = len(str(MAX_ID))


def parse_id(value: object) -> int | None:
    """`value` as a row id (1 … MAX_ID), or None when it cannot be one (not ASCII digits,
    zero, too large)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, str):
        text = value.strip()
        if not text.isascii() or not text.isdigit() or len(text) > _MAX_DIGITS:
            return None
        number = int(text)
    else:
        return None
    return number if 1 <= number <= MAX_ID else None


class IdConverter:
    """`<id:name>` in a URL: a row id; a number no row can have does not match (404)."""

    regex = "[0-9]+"

    def to_python(self, value: str) -> int:
        number = parse_id(value)
        if number is None:
            raise ValueError(value)  # Django's resolver: this pattern does not match
        return number

    def to_url(self, value: int | str) -> str:
        return str(value)


class IdField(forms.IntegerField):
    """A form's row id: a whole number from 1 to MAX_ID, with a clear error otherwise."""

    default_error_messages = {"invalid": _("This is not the id of anything here.")}

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("widget", forms.HiddenInput)
        super().__init__(min_value=1, max_value=MAX_ID, **kwargs)

    def to_python(self, value: Any) -> int | None:
        if value in self.empty_values:
            return None
        number = parse_id(value)
        if number is None:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return number


class IdChoiceField(forms.ModelChoiceField):
    """A ModelChoiceField whose posted id is bounded before the database is asked."""

    def to_python(self, value: Any) -> Any:
        if value in self.empty_values:
            return None
        if self.to_field_name is None and parse_id(value) is None:
            raise forms.ValidationError(
                self.error_messages["invalid_choice"],
                code="invalid_choice",
                params={"value": value},
            )
        return super().to_python(value)
