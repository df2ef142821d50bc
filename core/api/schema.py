"""The conventions every operation of the OpenAPI schema follows, applied in one place.

`add_error_responses` is drf-spectacular's postprocessing hook (SPECTACULAR_SETTINGS): every
operation documents the error statuses the shared machinery can answer, with the one error body
(`core.api.base.ErrorsSerializer`), so an endpoint added anywhere complies without extra work:

- 401 (no or a bad credential), 403 (no membership or capability), 404 (a missing or foreign
  object, a page past the end), 406 (an Accept header nothing satisfies) on every operation;
- 400 when the operation takes a body or query parameters;
- 409 (the object's state refuses the change) on every write;
- 413 (a body over the size limits) and 415 (not JSON, or not multipart for an upload) on every
  operation with a body.

Request bodies are closed (`additionalProperties: false`): `core.api.base.InputSerializer` refuses
unknown keys, and the schema says so. `InputSerializerSchema` states InputSerializer's other
rules in each body's schema: free text matches `core.text.READABLE_TEXT_PATTERN`, and a body
that must name at least one field has `minProperties: 1`.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension
from rest_framework import serializers

from core.text import READABLE_NOT_BLANK_PATTERN, READABLE_TEXT_PATTERN

ERRORS_REF = {"$ref": "#/components/schemas/Errors"}
_WRITES = {"post", "put", "patch", "delete"}
_METHODS = {"get"} | _WRITES
# One rule for every body: naming what does not exist is invalid input (`core.api.base.invalid_input`).
INVALID_INPUT = (
    "Invalid input, all errors at once: the messages by field, question code or error code. "
    "A body naming something that does not exist in your organization (an id, a "
    "questionnaire or ruleset key, a question code) is invalid input too: a 400 under that "
    "field, never a 404."
)
_DESCRIPTIONS = {
    400: INVALID_INPUT,
    401: "No credentials, or a bad or revoked token.",
    403: "Not a member of an organization, or the role lacks the capability.",
    404: "No such object in the caller's organization (another organization's object "
    "included), or a page past the end.",
    406: "The Accept header names no media type this operation answers.",
    409: "The object's current state refuses this change.",
    413: "The body is over the size limits.",
    415: "The body's media type is not one the operation takes.",
}


def add_error_responses(result: dict[str, Any], **_kwargs: Any) -> dict[str, Any]:
    """SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]: the shared error statuses, closed bodies."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method not in _METHODS:
                continue
            statuses = {401, 403, 404, 406}
            has_body = "requestBody" in operation
            if has_body or any(p.get("in") == "query" for p in operation.get("parameters", [])):
                statuses.add(400)
            if method in _WRITES:
                statuses.add(409)
            if has_body:
                statuses |= {413, 415}  # and 400, above
                _close_request_bodies(operation["requestBody"], components)
            responses = operation.setdefault("responses", {})
            for status in sorted(statuses):
                responses.setdefault(
                    str(status), {"content": {"application/json": {"schema": ERRORS_REF}}}
                )
            # An endpoint's own entry without words of its own reads the shared ones.
            for status, description in _DESCRIPTIONS.items():
                response = responses.get(str(status))
                if response is not None and not response.get("description"):
                    response["description"] = description
    return result


def _close_request_bodies(request_body: dict[str, Any], components: dict[str, Any]) -> None:
    for media in request_body.get("content", {}).values():
        schema = media.get("schema", {})
        ref = schema.get("$ref", "")
        target = components.get(ref.rsplit("/", 1)[-1]) if ref else schema
        if target is not None and target.get("type") == "object":
            target.setdefault("additionalProperties", False)


def is_free_text(field: serializers.Field) -> bool:
    """A field of free text (not a choice, an address, a pattern): `core.text`'s character rule
    applies to it, in the schema and in `core.api.base.InputSerializer`."""
    return type(field) is serializers.CharField


class InputSerializerSchema(OpenApiSerializerExtension):
    """The schema of every `core.api.base.InputSerializer`: what drf-spectacular maps, plus the
    rules the serializer enforces beyond its fields' own (see its docstring)."""

    target_class = "core.api.base.InputSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        schema = auto_schema._map_basic_serializer(self.target, direction)
        properties = schema.get("properties", {})
        for name, field in self.target.fields.items():
            if name not in properties:
                continue
            if isinstance(field, serializers.ListField):
                field, target = field.child, properties[name].get("items", {})
            else:
                target = properties[name]
            if is_free_text(field):
                # Text that trims to nothing is blank: refused where blank is (a vendor's name).
                not_blank = not field.allow_blank and field.trim_whitespace
                target.setdefault(
                    "pattern", READABLE_NOT_BLANK_PATTERN if not_blank else READABLE_TEXT_PATTERN
                )
        if self.target.empty_body_message is not None:
            schema["minProperties"] = 1
        return schema
