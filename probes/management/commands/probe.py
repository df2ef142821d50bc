"""`manage.py probe` — test an OpenAI-compatible endpoint for the incident's failures
(docs/probe.md; the contract is probe.md of the shared spec, ../shared/spec/).

Keys come from the named environment variables, never from arguments (which `ps` shows and shell
history keeps). Prints one JSON object; exit 0 when the probe ran, whatever it found, 2 on bad
input, 3 when the endpoint cannot be reached, refuses both keys or has no chat completions at
the base URL (a 404 on the first request). Only with the vendor's written authorisation.
"""

from __future__ import annotations

import json
import os
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from probes.endpoint import ApiKey, ProbeInputError
from probes.result import CHECKS
from probes.runner import (
    DEFAULT_BUDGET_TOKENS,
    DEFAULT_PREFIX_TOKENS,
    DEFAULT_RATE_PER_KEY,
    DEFAULT_SAMPLES,
    DEFAULT_TIMEOUT_S,
    ProbeUnreachable,
    probe_config_build,
    probe_run,
)
from probes.services.guards import probe_outbound_policy
from questionnaires.validation import format_errors

EXIT_BAD_INPUT = 2
EXIT_UNREACHABLE = 3


class Command(BaseCommand):
    help = (
        "Probe an OpenAI-compatible endpoint with two test tenants' keys for oversize "
        "acceptance, cross-tenant echo and a shared prefix cache. Only with the vendor's "
        "written authorisation."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--base-url",
            required=True,
            help="e.g. https://api.vendor.example (a trailing /v1 is the same endpoint)",
        )
        parser.add_argument("--model", required=True)
        parser.add_argument("--declared-context", type=int, required=True, help="tokens (CTX-01)")
        parser.add_argument("--key-a-env", required=True, metavar="VAR", help="tenant A's key")
        parser.add_argument("--key-b-env", required=True, metavar="VAR", help="tenant B's key")
        parser.add_argument("--checks", default=",".join(CHECKS), help="comma-separated")
        parser.add_argument(
            "--samples",
            type=int,
            default=DEFAULT_SAMPLES,
            help="the most prefix-cache samples per design; sampling stops at a verdict",
        )
        parser.add_argument("--prefix-tokens", type=int, default=DEFAULT_PREFIX_TOKENS)
        parser.add_argument("--budget-tokens", type=int, default=DEFAULT_BUDGET_TOKENS)
        parser.add_argument(
            "--rate", type=float, default=DEFAULT_RATE_PER_KEY, help="requests/s per key"
        )
        parser.add_argument("--timeout-s", type=float, default=DEFAULT_TIMEOUT_S)

    def handle(self, *args: Any, **options: Any) -> None:
        keys: dict[str, ApiKey] = {}
        for tenant in ("key_a", "key_b"):
            value = os.environ.get(options[f"{tenant}_env"], "").strip()
            if value:
                keys[tenant] = ApiKey(value)
        errors: dict[str, list[str]] = {}
        try:
            config = probe_config_build(
                base_url=options["base_url"],
                model=options["model"],
                declared_context=options["declared_context"],
                key_a=keys.get("key_a"),
                key_b=keys.get("key_b"),
                allow_http=settings.PROBE_ALLOW_HTTP,
                outbound=probe_outbound_policy(),
                checks=[name.strip() for name in options["checks"].split(",") if name.strip()],
                samples=options["samples"],
                prefix_tokens=options["prefix_tokens"],
                budget_tokens=options["budget_tokens"],
                rate_per_key=options["rate"],
                timeout_s=options["timeout_s"],
            )
        except ProbeInputError as exc:
            errors = exc.errors
        for tenant in ("key_a", "key_b"):
            if tenant not in keys:
                variable = options[f"{tenant}_env"]
                errors[tenant] = [
                    f"the environment variable {variable} (--{tenant.replace('_', '-')}-env) "
                    "is not set or is empty"
                ]
        if errors:
            raise CommandError("bad input:\n" + format_errors(errors), returncode=EXIT_BAD_INPUT)
        try:
            result = probe_run(config)
        except ProbeUnreachable as exc:
            raise CommandError(str(exc), returncode=EXIT_UNREACHABLE) from None
        self.stdout.write(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
