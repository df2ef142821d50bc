"""Is this text readable and safe to keep? The one check every free-text input goes through.

Refused: lone surrogates (they cannot be encoded as UTF-8, so neither stored in PostgreSQL nor
written into a JSON response), NUL and the other C0/C1 control characters except tab, line feed
and carriage return (they corrupt logs, PDFs and terminals), the bidirectional overrides and
isolates U+202A–U+202E and U+2066–U+2069 (they make text display in an order other than the
one stored: "Trojan Source"), and text longer than the field's limit. Messages name the
character by its code point and never echo it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _

# The refused characters as code-point ranges, written as `\uXXXX` escapes: one spelling that
# Python's `re` and the ECMA-262 regular expressions of JSON Schema (the API schema) both read.
_SURROGATE_RANGES = ((0xD800, 0xDFFF),)
_CONTROL_RANGES = ((0x00, 0x08), (0x0B, 0x0C), (0x0E, 0x1F), (0x7F, 0x9F))
_BIDI_OVERRIDE_RANGES = ((0x202A, 0x202E), (0x2066, 0x2069))


def _character_class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"\\u{first:04x}-\\u{last:04x}" for first, last in ranges)


_SURROGATE = re.compile(f"[{_character_class(_SURROGATE_RANGES)}]")
_CONTROL = re.compile(f"[{_character_class(_CONTROL_RANGES)}]")
_BIDI_OVERRIDE = re.compile(f"[{_character_class(_BIDI_OVERRIDE_RANGES)}]")
_UNREADABLE = re.compile(f"{_SURROGATE.pattern}|{_CONTROL.pattern}|{_BIDI_OVERRIDE.pattern}")

# `text_errors`'s character rule as a JSON Schema `pattern`: the API schema states it for its
# free-text fields, so that what the schema allows is what the server keeps. Without the
# surrogates: a JSON Schema string is made of Unicode scalar values, which a lone surrogate is
# not (I-JSON, RFC 7493), and validators built on that (Rust's regex, schemathesis's) refuse a
# pattern naming them.
READABLE_TEXT_PATTERN = "^[^" + _character_class(_CONTROL_RANGES + _BIDI_OVERRIDE_RANGES) + "]*$"
# The same, for a field that may not be blank once trimmed (a serializer's CharField strips what
# `str.isspace` calls space): at least one readable character that is not a space. The spaces
# are spelled out (`\s` means more in ECMA-262 than in Python: U+FEFF).
_SPACE_RANGES = (
    (0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680),
    (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
)  # fmt: skip
_READABLE = "[^" + _character_class(_CONTROL_RANGES + _BIDI_OVERRIDE_RANGES) + "]*"
READABLE_NOT_BLANK_PATTERN = (
    f"^{_READABLE}"
    + "[^"
    + _character_class(_CONTROL_RANGES + _BIDI_OVERRIDE_RANGES + _SPACE_RANGES)
    + "]"
    + f"{_READABLE}$"
)


def text_errors(value: Any, *, max_length: int | None = None) -> list[str]:
    """Why `value` cannot be kept as text (empty list: it can). None and "" are fine."""
    if value is None:
        return []
    if not isinstance(value, str):
        return [_("Enter text.")]
    if max_length is not None and len(value) > max_length:
        # Checked first: a 10 MB string gets this message without being scanned.
        return [
            _("The text is %(length)s characters long; the limit is %(limit)s.")
            % {"length": len(value), "limit": max_length}
        ]
    errors = []
    for pattern, message in (
        (_SURROGATE, _("The text contains an invalid character (a lone surrogate, %(char)s).")),
        (_CONTROL, _("The text contains a control character (%(char)s); remove it.")),
        (
            _BIDI_OVERRIDE,
            _("The text contains a direction override (%(char)s), which can disguise text."),
        ),
    ):
        found = pattern.search(value)
        if found:
            errors.append(message % {"char": f"U+{ord(found.group()):04X}"})
    return errors


def shown_safely(value: Any, limit: int = 40) -> str:
    """`value` as text fit to quote back in a message: unreadable characters replaced by
    U+FFFD and cut to `limit` characters."""
    text = _UNREADABLE.sub("\ufffd", str(value)[: limit * 2])
    return text if len(text) <= limit else text[: limit - 1] + "…"


def readable_name(value: str, *, max_length: int, default: str) -> str:
    """A file name as given by a client, made safe to store and show: the last path
    component only, unreadable characters dropped, cut to `max_length`."""
    name = re.split(r"[\\/]", value or "")[-1]
    name = _UNREADABLE.sub("", name).strip().lstrip(".")
    return name[:max_length] or default


def text_fields_errors(fields: Mapping[str, tuple[Any, int | None]]) -> dict[str, list[str]]:
    """`text_errors` of several fields at once: {field: (value, max_length)} → {field: [...]},
    only the fields with a problem."""
    return {
        name: problems
        for name, (value, max_length) in fields.items()
        if (problems := text_errors(value, max_length=max_length))
    }


def is_ascii_number(text: str) -> bool:
    """Plain ASCII digits, what `int()` reads as an id typed in a query string or a form:
    "²" is a digit to `str.isdigit()` but not to `int()` (a 500 where it was trusted)."""
    return text.isascii() and text.isdigit()


def one_line_break(text: str) -> str:
    """Line breaks written one way, LF: a browser sends a text area's as CR LF, a workbook cell
    (XML) gives them back as LF, so a text kept as typed would not compare equal to itself
    after a round trip."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def storable(text: str) -> str:
    """Text as PostgreSQL can store it in a text or JSON column (no NUL): a NUL is kept as
    U+FFFD, as Django keeps bytes that are not UTF-8, so the rest of the text is not lost."""
    return text.replace("\x00", "\ufffd")
