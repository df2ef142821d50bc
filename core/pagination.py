"""Lists that cost the same on page 1 and page 2,000: keyset (cursor) pages, cached counts.

Every API list answers `{"count", "next", "previous", "results"}` (api.md's shape). `next` and
`previous` are cursor links (`?cursor=…`): the database seeks to the position through an
index instead of reading and skipping every earlier row, so a deep page costs what the first
one does. `?page=N` still works, as before, for clients that compute page links themselves.

`count` is the number of rows the filters select. Counting reads every one of them, so the
number is cached, keyed by the query and by a "version" of the data the view names (for
assessments, the newest `updated_at` of the organization: one index lookup). A change that
could alter the count also moves the version, so a cached count is never stale; the cache
timeout only bounds how long an unused entry stays.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from functools import cached_property
from typing import Any, TypeVar

from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import BasePagination, CursorPagination, PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from core.cache import cache_get, cache_set

COUNT_CACHE_SECONDS = 600
_PAGE_NUMBER = re.compile(r"[1-9][0-9]*")
T = TypeVar("T")


def cached_count(queryset: QuerySet, *, version: object) -> int:
    """`queryset.count()`, computed once per `version` of the data behind it.

    `version` must change whenever the count could (a newer `updated_at`, a higher id); None
    means the caller knows no cheap version, and the count is taken every time."""
    if version is None:
        return queryset.count()
    return cached_value(str(queryset.order_by().query), version=version, compute=queryset.count)


def cached_value(name: str, *, version: object, compute: Callable[[], T]) -> T:
    """`compute()`, once per `name` (what is computed, e.g. a query's SQL) and `version`; every
    time while the cache is away."""
    key = "cached:" + hashlib.sha256(f"{name}\x00{version!r}".encode()).hexdigest()
    value = cache_get(key)
    if value is None:
        value = compute()
        cache_set(key, value, COUNT_CACHE_SECONDS)
    return value


class CountedPaginator(Paginator):
    """Django's paginator, counting through `cached_count` (pages of the web UI too)."""

    def __init__(self, *args: Any, version: object = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.version = version

    @cached_property
    def count(self) -> int:
        return cached_count(self.object_list, version=self.version)


class _PageNumbers(PageNumberPagination):
    def __init__(self, version: object) -> None:
        self.version = version
        self.page_size = api_settings.PAGE_SIZE  # read now: the class attribute is import-time

    def django_paginator_class(self, *args: Any, **kwargs: Any) -> Paginator:  # type: ignore[override]
        return CountedPaginator(*args, version=self.version, **kwargs)


class _Cursor(CursorPagination):
    def __init__(self, ordering: tuple[str, ...]) -> None:
        self.ordering = ordering
        self.page_size = api_settings.PAGE_SIZE

    def get_ordering(self, request: Request, queryset: QuerySet, view: Any) -> tuple[str, ...]:
        return self.ordering

    def decode_cursor(self, request: Request) -> Any:
        """DRF's cursor, refused like any malformed one when its position holds a NUL (no
        stored value does, and PostgreSQL refuses one in a query: a 500)."""
        cursor = super().decode_cursor(request)
        if cursor is not None and cursor.position is not None and "\x00" in cursor.position:
            raise NotFound(self.invalid_cursor_message)
        return cursor


def _refuse_malformed_page(values: list[str]) -> None:
    """A `page` other than one positive whole number is a 400, as the schema says (`integer`):
    DRF's own paginator reads an empty `?page=` as page 1 and `last` as the last page."""
    if values and (len(values) > 1 or not _PAGE_NUMBER.fullmatch(values[0])):
        raise ValidationError({"page": [_("Enter one page number: a whole number from 1.")]})


class ListPagination(BasePagination):
    """Cursor pages where the view names a `cursor_ordering` (its first field nearly unique and
    indexed together with the organization), page numbers with `?page=` or where it does not.

    A view may name `count_version(request)`: a cheap value that changes whenever the count of
    its list could (see the module's docstring)."""

    page_query_param = "page"

    def paginate_queryset(
        self, queryset: QuerySet, request: Request, view: Any = None
    ) -> list[Any] | None:
        version_of = getattr(view, "count_version", None)
        version = version_of(request) if version_of is not None else None
        ordering = getattr(view, "cursor_ordering", None)
        _refuse_malformed_page(request.query_params.getlist(self.page_query_param))
        self.count = cached_count(queryset, version=version)
        if ordering and self.page_query_param not in request.query_params:
            self.pages: BasePagination = _Cursor(tuple(ordering))
        else:
            self.pages = _PageNumbers(version)
        return self.pages.paginate_queryset(queryset, request, view)

    def get_paginated_response(self, data: Any) -> Response:
        return Response(
            {
                "count": self.count,
                "next": self.pages.get_next_link(),
                "previous": self.pages.get_previous_link(),
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        shape = PageNumberPagination().get_paginated_response_schema(schema)
        shape["properties"]["next"]["description"] = (
            "The next page: a `cursor` link (a `page` link when the request used `page`)."
        )
        return shape

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = PageNumberPagination().get_schema_operation_parameters(view)
        parameters[0]["schema"]["minimum"] = 1
        parameters[0]["description"] = (
            "A page number, for clients that compute page links; following `next` is faster "
            "on deep pages."
        )
        if getattr(view, "cursor_ordering", None):
            cursor = CursorPagination().get_schema_operation_parameters(view)
            cursor[0]["description"] = (
                "The position to continue from, as given in the `next` and `previous` links."
            )
            parameters = cursor + parameters
        return parameters
