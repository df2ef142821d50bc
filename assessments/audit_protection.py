"""Database-level protection of the audit trail: triggers that refuse UPDATE and DELETE of
audit events, on SQLite and PostgreSQL (other backends rely on the ORM's refusal alone).

Installed by migration 0004. `manage.py flush` (which empties every table on purpose, and which
tests run between transactional tests) lifts them for its run. On PostgreSQL, TRUNCATE
is not refused: it needs the table owner's rights, which the application should not have.
On SQLite, a migration that alters this table rebuilds it and so drops the triggers: such a
migration must call `audit_triggers_install` again.
"""

from __future__ import annotations

from typing import Any

TABLE = "assessments_auditevent"
MESSAGE = "audit events are append-only"

_SQLITE_INSTALL = [
    f"CREATE TRIGGER IF NOT EXISTS {TABLE}_no_update BEFORE UPDATE ON {TABLE} "
    f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END",
    f"CREATE TRIGGER IF NOT EXISTS {TABLE}_no_delete BEFORE DELETE ON {TABLE} "
    f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END",
]
_SQLITE_REMOVE = [
    f"DROP TRIGGER IF EXISTS {TABLE}_no_update",
    f"DROP TRIGGER IF EXISTS {TABLE}_no_delete",
]
_POSTGRES_INSTALL = [
    f"CREATE OR REPLACE FUNCTION {TABLE}_append_only() RETURNS trigger AS $$ "
    f"BEGIN RAISE EXCEPTION '{MESSAGE}'; END; $$ LANGUAGE plpgsql",
    f"DROP TRIGGER IF EXISTS {TABLE}_append_only ON {TABLE}",
    f"CREATE TRIGGER {TABLE}_append_only BEFORE UPDATE OR DELETE ON {TABLE} "
    f"FOR EACH ROW EXECUTE FUNCTION {TABLE}_append_only()",
]
_POSTGRES_REMOVE = [
    f"DROP TRIGGER IF EXISTS {TABLE}_append_only ON {TABLE}",
    f"DROP FUNCTION IF EXISTS {TABLE}_append_only()",
]
_STATEMENTS = {
    "sqlite": (_SQLITE_INSTALL, _SQLITE_REMOVE),
    "postgresql": (_POSTGRES_INSTALL, _POSTGRES_REMOVE),
}


def _run(connection: Any, which: int) -> None:
    statements = _STATEMENTS.get(connection.vendor)
    if statements is None:
        return
    with connection.cursor() as cursor:
        for statement in statements[which]:
            cursor.execute(statement)


def audit_triggers_install(connection: Any) -> None:
    _run(connection, 0)


def audit_triggers_remove(connection: Any) -> None:
    _run(connection, 1)
