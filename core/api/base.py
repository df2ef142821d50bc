"""What every REST endpoint shares: the one exception handler, strict input, downloads. (The
organization endpoint base, the API's side of tenancy, is `accounts.api.OrganizationAPIView`.)

Every error leaves the API in one shape, `{"errors": {field_or_code: [messages]}}`, with the
status that fits it: domain errors of the services (400 or 409), invalid input (400), a body
over the size limits (413), missing or foreign objects (404), missing capabilities (403),
missing credentials (401).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import django_filters
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import (
    RequestDataTooBig,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error
from rest_framework.settings import api_settings
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from core.api.bounded_json import BodyTooLarge
from core.api.schema import (  # also registers InputSerializer's schema
    INVALID_INPUT,
    is_free_text,
)
from core.errors import ServiceError
from core.text import text_errors

# -- errors --------------------------------------------------------------------------------


class DomainError(exceptions.APIException):
    """A service's refusal (any `core.errors.ServiceError`), carried through DRF unchanged."""

    def __init__(self, errors: Mapping[str, list[str]], status_code: int) -> None:
        super().__init__(detail=dict(errors))
        self.status_code = status_code


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """The REST_FRAMEWORK["EXCEPTION_HANDLER"]: every error as `{"errors": {key: [messages]}}`.

    Returns None for anything unexpected, so that Django answers 500 and logs the traceback.
    """
    api_exception = _as_api_exception(exc)
    if api_exception is None:
        return None
    # DRF's own handler adds WWW-Authenticate and Retry-After and rolls back an atomic request.
    response = drf_exception_handler(api_exception, context)
    if response is None:
        return None
    response.data = {"errors": error_dict(api_exception)}
    return response


def _as_api_exception(exc: Exception) -> exceptions.APIException | None:
    if isinstance(exc, exceptions.APIException):
        return exc
    if isinstance(exc, ServiceError):  # the project's one error hierarchy (core.errors)
        return DomainError(exc.errors, exc.status_code)
    if isinstance(exc, DjangoValidationError):
        return exceptions.ValidationError(as_serializer_error(exc))
    if isinstance(exc, Http404):
        # Not Http404's own text ("No Assessment matches the given query."): a missing and a
        # foreign object must look the same.
        return exceptions.NotFound()
    if isinstance(exc, DjangoPermissionDenied):
        return exceptions.PermissionDenied(*exc.args)
    if isinstance(exc, RequestDataTooBig):
        # A form body over DATA_UPLOAD_MAX_MEMORY_SIZE: 413, like a JSON body over it.
        return BodyTooLarge(str(exc))
    if isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        # Django's limits on the number of form fields and files: a 400 like any other.
        return exceptions.ValidationError({"body": [str(exc)]})
    return None


def error_dict(exc: exceptions.APIException) -> dict[str, list[str]]:
    """`exc.detail` as a flat `{key: [messages]}`.

    Field errors keep their field (or question code) as key; nested errors are joined with dots
    (`reopen_codes.0`); an error that belongs to no field is keyed by its DRF code
    (`not_found`, `parse_error`...), or `non_field_errors` for validation errors.
    """
    detail = exc.detail
    if isinstance(detail, Mapping):
        flat: dict[str, list[str]] = {}
        _flatten(detail, "", flat)
        return flat
    if isinstance(exc, exceptions.ValidationError):
        key = api_settings.NON_FIELD_ERRORS_KEY
    else:
        key = str(getattr(detail, "code", None) or exc.default_code)
    messages = detail if isinstance(detail, list) else [detail]
    return {key: [str(message) for message in messages]}


def _flatten(detail: object, prefix: str, into: dict[str, list[str]]) -> None:
    if isinstance(detail, Mapping):
        for key, value in detail.items():
            _flatten(value, f"{prefix}.{key}" if prefix else str(key), into)
    elif isinstance(detail, list) and any(isinstance(item, Mapping | list) for item in detail):
        for index, item in enumerate(detail):
            _flatten(item, f"{prefix}.{index}" if prefix else str(index), into)
    elif isinstance(detail, list):
        into.setdefault(prefix or api_settings.NON_FIELD_ERRORS_KEY, []).extend(
            str(message) for message in detail
        )
    elif detail:  # an empty dict or list marks a valid item of a list: nothing to report
        into.setdefault(prefix or api_settings.NON_FIELD_ERRORS_KEY, []).append(str(detail))


class ErrorsSerializer(serializers.Serializer):
    """The body of every error response (for the OpenAPI schema)."""

    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Messages by field, question code or error code "
        "(e.g. `non_field_errors`, `not_found`, `permission_denied`).",
    )


def error_responses(*status_codes: int) -> dict[int, type[serializers.Serializer]]:
    """`extend_schema(responses=...)` entries documenting error statuses."""
    return dict.fromkeys(status_codes, ErrorsSerializer)


def invalid_input(references: str) -> dict[int, OpenApiResponse]:
    """The 400 of an operation whose body names other things (`references`: which fields,
    and what each must name). A name of something that does not exist in the caller's
    organization is invalid input, like a wrong type: a 400 under that field, never a 404."""
    return {400: OpenApiResponse(ErrorsSerializer, description=f"{INVALID_INPUT} {references}")}


# -- input ---------------------------------------------------------------------------------


class InputSerializer(serializers.Serializer):
    """Validates a request body's shape and types; the services validate the meaning.

    Unknown keys are refused rather than ignored, so that a typo (`"answer"` for `"answers"`)
    is a 400 instead of a silent no-op; free text may hold no control character, direction
    override or lone surrogate.
    """

    # (The docstring is every body's description in the schema, hence for clients.) Named by a
    # serializer: a body without any of its fields is refused with this message. The schema
    # states this and the other rules (`core.api.schema.InputSerializerSchema`); free text
    # is checked by `core.text.text_errors`.
    empty_body_message: ClassVar[Any] = None

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            unknown = sorted(str(key) for key in data if key not in self.fields)
            if unknown:
                raise exceptions.ValidationError(dict.fromkeys(unknown, [_("Unknown field.")]))
            leaves = [
                leaf
                for name, value in data.items()
                for leaf in _leaves(self.fields[name], value, name)
            ]
            wrong = {
                key: [message]
                for field, value, key in leaves
                if (message := _wrong_json_type(field, value)) is not None
            }
            if wrong:
                raise exceptions.ValidationError(wrong)
            unreadable = {
                key: problems
                for field, value, key in leaves
                if is_free_text(field) and (problems := text_errors(value))
            }
            if unreadable:
                raise exceptions.ValidationError(unreadable)
            if self.empty_body_message is not None and not data:
                raise exceptions.ValidationError(
                    {api_settings.NON_FIELD_ERRORS_KEY: [str(self.empty_body_message)]}
                )
        return super().to_internal_value(data)


def _leaves(
    field: serializers.Field, value: Any, key: str
) -> Iterator[tuple[serializers.Field, Any, str]]:
    """The body's values with the field that reads each: a list's items one by one, keyed like
    the other nested errors (`reopen_codes.0`)."""
    if isinstance(field, serializers.ListField) and isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(field.child, item, f"{key}.{index}")
    else:
        yield field, value, key


def _wrong_json_type(field: serializers.Field, value: Any) -> str | None:
    """Why `value` is not of the JSON type the schema gives `field`, or None.

    DRF coerces (`0` becomes the name `"0"`, `"7"` the id 7, `"yes"` True); the schema promises
    a string, an integer, a boolean, so a body of another type is refused instead.
    """
    if value is None:
        return None  # allow_null decides
    if isinstance(field, serializers.ChoiceField | serializers.CharField):
        expected: type = str
        message = _("Not a valid string.")
    elif isinstance(field, serializers.IntegerField | serializers.PrimaryKeyRelatedField):
        expected = int
        message = _("A valid integer is required.")
    elif isinstance(field, serializers.BooleanField):
        expected = bool
        message = _("Must be a valid boolean.")
    else:
        return None
    if not isinstance(value, expected) or (isinstance(value, bool) and expected is not bool):
        return str(message)
    return None


class StrictFilterSet(django_filters.FilterSet):
    """A list's query filters, refusing an empty value (`?due_before=`) like any other value
    outside the schema (django-filter would read it as "no filter")."""

    def is_valid(self) -> bool:
        valid = super().is_valid()
        for name in self.filters:
            if name in self.data and not self.data.get(name):
                self.form.add_error(name, _("Enter a value."))
                valid = False
        return valid


# -- downloads -----------------------------------------------------------------------------


class FirstRendererNegotiation(BaseContentNegotiation):
    """A download (a PDF, a CSV file, a workbook) answers its file whatever the Accept header,
    and its errors in JSON."""

    def select_parser(self, request: Request, parsers: list) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(
        self, request: Request, renderers: list, format_suffix: str | None = None
    ) -> tuple[Any, str]:
        return renderers[0], renderers[0].media_type


@extend_schema(exclude=True)
class ApiNotFound(APIView):
    """Any other address under /api/: a JSON 404 rather than Django's HTML page."""

    authentication_classes: ClassVar[list[type]] = []
    permission_classes = (AllowAny,)

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        raise exceptions.NotFound()

    post = put = patch = delete = get
