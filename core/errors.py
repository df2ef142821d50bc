"""The one error hierarchy of AVIA: a service's refusal of a request.

A leaf module (it imports nothing of the project, only Django), so every app can raise these errors and both
front ends map them in one place each: `core.api.base.exception_handler` for the API and
`core.forms.add_errors` for the web pages. An error carries `{field or question code:
[messages]}`; messages may be lazy translations and are turned into text in the language that
is active when they are read (`errors`), so an error raised in a worker or before a language
switch still reads in the reader's language.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.core.exceptions import PermissionDenied


class ServiceError(Exception):
    """A request that cannot be carried out (HTTP 400 unless a subclass says otherwise)."""

    status_code = 400

    def __init__(self, errors: Mapping[str, Iterable[Any]]) -> None:
        self.raw_errors: dict[str, list[Any]] = {
            str(key): list(messages) for key, messages in errors.items()
        }
        super().__init__(
            "; ".join(
                f"{key}: {' '.join(str(m) for m in messages)}"
                for key, messages in self.raw_errors.items()
            )
        )

    @property
    def errors(self) -> dict[str, list[str]]:
        """`{key: [messages]}` as plain text in the active language."""
        return {key: [str(m) for m in messages] for key, messages in self.raw_errors.items()}

    @property
    def messages(self) -> list[str]:
        """Every message, for a page that shows them without their fields."""
        return [message for messages in self.errors.values() for message in messages]


class ForbiddenError(ServiceError, PermissionDenied):
    """The caller's role does not allow this (HTTP 403).

    Also a Django `PermissionDenied`, so a web page that does not catch it answers 403."""

    status_code = 403


class ConflictError(ServiceError):
    """The request is valid but the object's state does not allow it now (HTTP 409)."""

    status_code = 409


class StorageFullError(ServiceError):
    """A file could not be written (disk full or failing): nothing was saved (HTTP 507)."""

    status_code = 507


class StorageUnavailableError(ServiceError):
    """The object store holding files could not be reached: nothing was saved or read (503)."""

    status_code = 503
