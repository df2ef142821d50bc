"""Writing many rows of one model in one statement, for the paths where Django's own bulk
methods cost more than the work around them (a batch of scoring runs, the benchmarks' copies).

`bulk_create` and `bulk_update` compile a SQL expression per value (`bulk_update` a CASE per
field and row); here each value goes through its field's `get_db_prep_save`, exactly what
`save()` sends, and the rows go in one COPY (PostgreSQL) or executemany (SQLite). No signals,
no `save()` overrides, no `auto_now`: callers set every value themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Field, Model


def db_values(row: Model, fields: Sequence[Field]) -> list[Any]:
    """The values `save()` would send for these fields of the row."""
    connection = connections[DEFAULT_DB_ALIAS]  # the connection itself: no proxy per value
    return [field.get_db_prep_save(getattr(row, field.attname), connection) for field in fields]


def insert_rows(model: type[Model], fields: Sequence[Field], rows: Iterable[Sequence[Any]]) -> None:
    """INSERT the rows (database values, in the order of `fields`)."""
    connection = connections[DEFAULT_DB_ALIAS]
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    columns = ", ".join(quote(field.column) for field in fields)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            marks = ", ".join(["%s"] * len(fields))
            statement = f"INSERT INTO {table} ({columns}) VALUES ({marks})"  # noqa: S608
            cursor.executemany(statement, list(rows))


def insert_instances(instances: Sequence[Model]) -> None:
    """INSERT unsaved instances of one model that take their id from the database (their
    `pk` stays None)."""
    if not instances:
        return
    meta = instances[0]._meta
    fields = [field for field in meta.concrete_fields if field is not meta.auto_field]
    insert_rows(type(instances[0]), fields, (db_values(row, fields) for row in instances))


def update_fields(rows: Sequence[Model], names: Sequence[str]) -> None:
    """`save(update_fields=names)` for many rows of one model, in one executemany."""
    if not rows:
        return
    connection = connections[DEFAULT_DB_ALIAS]
    meta = rows[0]._meta
    fields = [meta.get_field(name) for name in names]
    quote = connection.ops.quote_name
    assignments = ", ".join(f"{quote(field.column)} = %s" for field in fields)
    statement = (
        f"UPDATE {quote(meta.db_table)} SET {assignments} "  # noqa: S608 - names from the model
        f"WHERE {quote(meta.pk.column)} = %s"
    )
    with connection.cursor() as cursor:
        cursor.executemany(statement, [[*db_values(row, fields), row.pk] for row in rows])
