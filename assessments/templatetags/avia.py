"""Template helpers: pick the active language from a bilingual catalogue text."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils import translation

register = template.Library()


@register.filter
def localized(text: Any) -> str:
    """`{{ rule.title|localized }}` — the catalogue text in the active language."""
    if text is None:
        return ""
    getter = getattr(text, "get", None)
    if callable(getter) and hasattr(text, "zh_hant"):
        return getter(translation.get_language())
    if isinstance(text, dict):
        language = translation.get_language() or "en"
        return text.get("zh-hant" if language.startswith("zh") else "en") or text.get("en", "")
    return str(text)


@register.filter
def get_item(mapping: Any, key: str) -> Any:
    return mapping.get(key) if hasattr(mapping, "get") else None
