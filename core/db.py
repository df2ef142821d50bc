"""Database helpers every app shares."""

from __future__ import annotations

from typing import Any, TypeVar

from django.db import IntegrityError, transaction
from django.db.models import Model

M = TypeVar("M", bound=Model)


def lock_row(model: type[Model], pk: object) -> None:
    """Take the row's lock until the transaction ends (SELECT … FOR UPDATE) without loading
    it: writers that must not interleave queue on it. Call it inside a transaction."""
    list(model._default_manager.select_for_update().filter(pk=pk).values_list("pk"))


def create_once(model: type[M], **fields: Any) -> M | None:
    """Create the row, or return None when a unique key says it was written before (by this
    event's earlier attempt, or a concurrent writer): in a savepoint, so the caller's
    transaction goes on."""
    try:
        with transaction.atomic():
            return model._default_manager.create(**fields)
    except IntegrityError:
        return None
