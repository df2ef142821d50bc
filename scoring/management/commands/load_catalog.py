"""`manage.py load_catalog` — load or update the questionnaire, ruleset and framework files."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from questionnaires.spec import CatalogError
from scoring.registry import load_catalog_files
from scoring.services import catalog_load


class Command(BaseCommand):
    help = "Load the catalogue data files (idempotent; a published version is never changed)."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = catalog_load(catalog=load_catalog_files())
        except CatalogError as exc:
            raise CommandError(str(exc)) from exc
        for item in report.created:
            self.stdout.write(f"published {item}")
        for item in report.unchanged:
            self.stdout.write(f"unchanged {item}")
        self.stdout.write(f"{report.frameworks_updated} framework references up to date")
