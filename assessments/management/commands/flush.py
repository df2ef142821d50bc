"""manage.py flush, which empties every table by design (tests run it between transactional
tests): the audit trail's append-only triggers are lifted for it and put back afterwards."""

from __future__ import annotations

from typing import Any

from django.core.management.commands.flush import Command as DjangoFlushCommand
from django.db import connections

from assessments.audit_protection import audit_triggers_install, audit_triggers_remove


class Command(DjangoFlushCommand):
    def handle(self, **options: Any) -> None:
        connection = connections[options["database"]]
        audit_triggers_remove(connection)
        try:
            super().handle(**options)
        finally:
            audit_triggers_install(connection)
