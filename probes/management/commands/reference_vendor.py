"""`manage.py reference_vendor --mode launch-day --port 8401` — AVIA's fake inference vendor
(see probes/reference_vendor.py; also `python -m probes.reference_vendor`)."""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from probes import reference_vendor


class Command(BaseCommand):
    help = (
        "Serve an OpenAI-compatible fake inference endpoint with the incident's failures "
        "(launch-day), fixed (remediated), only a shared prefix cache (shared-cache-only), "
        "answering in reasoning_content (reasoning), or serving less context than it "
        "declares (overclaimed)."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        reference_vendor.add_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        reference_vendor.serve(options, dict(os.environ), out=self.stdout)
