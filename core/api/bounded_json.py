"""JSON in and out of the REST API, bounded and always encodable.

In: a body larger than DATA_UPLOAD_MAX_MEMORY_SIZE is refused with 413, one nested deeper than
API_JSON_MAX_DEPTH with 400, both as `{"errors": {"body": [...]}}`, before any view sees it (Python's json module
would otherwise recurse until RecursionError, and a view would walk whatever it got).
Out: a response that quotes back a lone surrogate (an unknown key sent by a client, say) cannot
be encoded as UTF-8; it is then written with \\u escapes instead of failing with a 500.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _
from rest_framework import exceptions
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer


def body_error(message: str) -> exceptions.ValidationError:
    return exceptions.ValidationError({"body": [message]})


class BodyTooLarge(exceptions.APIException):
    """A request body over the size limits: 413, as the schema documents for every body."""

    status_code = 413
    default_code = "too_large"

    def __init__(self, message: str) -> None:
        super().__init__(detail={"body": [message]})


def json_depth(data: Any) -> int:
    """Nesting depth of parsed JSON (a scalar is 0), without recursion."""
    deepest, stack = 0, [(data, 0)]
    while stack:
        value, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(value, Mapping):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return deepest


class BoundedJSONParser(JSONParser):
    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        body = stream.read(limit + 1) if stream is not None else b""
        if len(body) > limit:
            raise BodyTooLarge(
                _("The request body is larger than %(limit)s MB.")
                % {"limit": round(limit / 1_048_576, 1)}
            )
        try:
            data = super().parse(io.BytesIO(body), media_type, parser_context)
        except RecursionError:
            data = None
            too_deep = True
        else:
            too_deep = json_depth(data) > settings.API_JSON_MAX_DEPTH
        if too_deep:
            raise body_error(
                _("The JSON is nested more than %(limit)s levels deep.")
                % {"limit": settings.API_JSON_MAX_DEPTH}
            )
        return data


class SafeJSONRenderer(JSONRenderer):
    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            return json.dumps(data, cls=self.encoder_class, ensure_ascii=True).encode("ascii")
