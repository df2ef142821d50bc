"""Database helpers every app shares."""

from __future__ import annotations

from django.db.models import Model


def lock_row(model: type[Model], pk: object) -> None:
    """Take the row's lock until the transaction ends (SELECT … FOR UPDATE) without loading
    it: writers that must not interleave queue on it. Call it inside a transaction."""
    list(model._default_manager.select_for_update().filter(pk=pk).values_list("pk"))
