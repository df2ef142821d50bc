"""Writing many rows of one model in one statement, for the paths where Django's own bulk
methods cost more than the work around them (a batch of scoring runs, the benchmarks' copies).

`bulk_create` and `bulk_update` compile a SQL expression per value (`bulk_update` a CASE per
field and row); here each value goes through its field's `get_db_prep_save`, exactly what
`save()` sends (or the caller gives database values), new rows go in one COPY (PostgreSQL) or
executemany (SQLite), changed rows in one UPDATE (PostgreSQL) or executemany (SQLite). No
signals, no `save()` overrides, no `auto_now`: callers set every value themselves.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Field, JSONField, Model


def db_values(row: Model, fields: Sequence[Field]) -> list[Any]:
    """The values `save()` would send for these fields of the row."""
    connection = connections[DEFAULT_DB_ALIAS]  # the connection itself: no proxy per value
    return [field.get_db_prep_save(getattr(row, field.attname), connection) for field in fields]


def insert_rows(model: type[Model], fields: Sequence[Field], rows: Iterable[Sequence[Any]]) -> None:
    """INSERT the rows (database values, in the order of `fields`; a JSON column takes JSON
    text, which both databases read as they read their own)."""
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


def update_fields(rows: Sequence[Model], names: Sequence[str]) -> None:
    """`save(update_fields=names)` for many rows of one model, in one statement: on PostgreSQL
    the rows travel as one JSON document that `json_populate_recordset` turns into rows of the
    table's own type (each value cast to its column's type by the database; an executemany
    would send, parse and plan one UPDATE per row), on SQLite an executemany (in-process: a
    statement costs little there).

    Each row once (with a row twice, which of its values wins would depend on the plan), and
    locked by the caller beforehand in id order when other writers may touch them: the UPDATE
    takes its row locks in the plan's order."""
    if not rows:
        return
    if len({row.pk for row in rows}) != len(rows):
        raise ValueError("update_fields: a row is given twice")
    connection = connections[DEFAULT_DB_ALIAS]
    meta = rows[0]._meta
    fields = [meta.get_field(name) for name in names]
    quote = connection.ops.quote_name
    table, pk = quote(meta.db_table), quote(meta.pk.column)
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            assignments = ", ".join(f"{quote(field.column)} = %s" for field in fields)
            statement = f"UPDATE {table} SET {assignments} WHERE {pk} = %s"  # noqa: S608
            cursor.executemany(statement, [[*db_values(row, fields), row.pk] for row in rows])
            return
        document = json.dumps(
            [
                {meta.pk.column: row.pk, **{f.column: _json_value(f, row) for f in fields}}
                for row in rows
            ]
        )
        assignments = ", ".join(f"{quote(f.column)} = v.{quote(f.column)}" for f in fields)
        cursor.execute(
            f"UPDATE {table} SET {assignments} "  # noqa: S608 - names from the model
            f"FROM json_populate_recordset(NULL::{table}, %s) AS v WHERE {table}.{pk} = v.{pk}",
            [document],
        )


def _json_value(field: Field, row: Model) -> Any:
    """The field's value of the row in the JSON document: a JSON column's value as it is (what
    cannot be JSON fails here as it fails in `save()`), dates and times as ISO 8601 (to the
    microsecond, which the database reads back exactly), decimals and UUIDs as their text."""
    value = field.get_prep_value(getattr(row, field.attname))
    if isinstance(field, JSONField):
        if field.encoder is not None:
            raise ValueError(f"update_fields: {field.name} has an encoder of its own")
        return value
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, Decimal | UUID):
        return str(value)
    return value
