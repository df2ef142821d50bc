"""`manage.py kvsize CONFIG.json` — the KV cache a token takes, from the model's config.json."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from scoring.evidence import BYTES_PER_VALUE, parse_model_config, parse_reason, sizing_report

EXIT_INVALID_INPUT = 2
DTYPES = ("bf16", "fp16", "fp8")
MAX_GPU_MEMORY_GIB = 1_000_000  # a thousand times the largest GPU; the page accepts 100,000


class Command(BaseCommand):
    help = (
        "Print the KV cache size per token (and, when asked, for N tokens on the given GPUs) "
        "of the model a Hugging Face config.json describes, as one JSON object."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("config", help="the model's config.json (Hugging Face format)")
        parser.add_argument(
            "--dtype", choices=DTYPES, default="bf16", help="KV cache data type (default bf16)"
        )
        parser.add_argument("--tokens", type=_positive_int, help="tokens to size (e.g. a pool)")
        parser.add_argument("--gpus", type=_positive_int, help="GPUs per serving instance")
        parser.add_argument(
            "--gpu-memory-gib", type=_positive_float, help="memory per GPU, GiB (with --gpus)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if (options["gpus"] is None) != (options["gpu_memory_gib"] is None):
            raise CommandError(
                "--gpus and --gpu-memory-gib go together", returncode=EXIT_INVALID_INPUT
            )
        result = parse_model_config(options["config"])
        if not result.parsed or result.sizing is None:
            reason = parse_reason(result.to_dict(), str)
            raise CommandError(f"{options['config']}: {reason}", returncode=EXIT_INVALID_INPUT)
        report = sizing_report(
            result.sizing,
            bytes_per_value=BYTES_PER_VALUE[options["dtype"]],
            tokens=options["tokens"],
            gpus=options["gpus"],
            gpu_memory_gib=options["gpu_memory_gib"],
        )
        self.stdout.write(json.dumps(report))


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError(text)
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    # Finite, and small enough that GPUs × memory is too: "inf" (or 1e308 × 8) would print
    # Infinity, which is not JSON.
    if not 0 < value <= MAX_GPU_MEMORY_GIB:
        raise ValueError(text)
    return value
