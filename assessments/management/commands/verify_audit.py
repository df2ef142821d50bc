"""manage.py verify_audit [--organization SLUG]: walk each organization's hash-chained audit
trail; print OK, or the first broken link (an edited or deleted event). Exit status 1 when any
chain is broken."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from accounts.models import Organization
from assessments.audit import audit_chain_verify


class Command(BaseCommand):
    help = "Check that no audit event was edited or deleted (the SHA-256 chain is intact)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--organization", metavar="SLUG", help="only this organization")

    def handle(self, *args: Any, organization: str | None, **options: Any) -> None:
        organizations = Organization.objects.order_by("slug")
        if organization:
            organizations = organizations.filter(slug=organization)
            if not organizations.exists():
                raise CommandError(f"no organization with the slug {organization!r}")
        broken = 0
        for each in organizations:
            report = audit_chain_verify(organization=each)
            if report.ok:
                self.stdout.write(f"OK {each.slug}: {report.events} events, chain intact")
            else:
                broken += 1
                self.stdout.write(
                    f"BROKEN {each.slug}: event {report.broken_event_id}: {report.problem} "
                    f"({report.events} events before it are intact)"
                )
        if broken:
            raise SystemExit(1)
