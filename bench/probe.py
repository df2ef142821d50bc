#!/usr/bin/env python
"""The cost of a prefix-cache verdict: prompt tokens and wall time per decisive verdict, the first
edition's fixed 25 samples against the second edition's sequential sampling (probe-v2.md),
against the reference vendor on a clearly shared cache.

Both designs run for real, one after the other, against the same vendor process: the second
edition from this checkout, the first from git (`probes/` at FIRST_EDITION, unpacked into a
temporary package; it is not kept in the product). Only the prefix-cache check runs (plus each
edition's calibration, which is not counted in the figures). The vendor's cache is a large
block cache (`--cache-prompts 0`), where the first edition's design also works, so both reach
`shared` and the comparison is of cost alone; `--one-slot` instead serves the one-slot cache
that the first edition misread (the issue's finding).

Usage: .venv/bin/python bench/probe.py [--runs 3] [--rate 2] [--prefix-tokens 4096] [--one-slot]
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# The last commit with the first edition of the probe (before issue 23).
FIRST_EDITION = "a86af01"
PURE_MODULES = ("endpoint", "client", "prompts", "result", "checks", "runner")
MODEL = "reference-model"
DECLARED_CONTEXT = 65_536


def first_edition(workdir: Path) -> ModuleType:
    """The first edition's pure probe, from git, as the package `probe_first_edition`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", FIRST_EDITION, "probes/"],
        check=True,
        capture_output=True,
    ).stdout
    package = workdir / "probe_first_edition"
    package.mkdir()
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        for name in PURE_MODULES:
            member = tar.extractfile(f"probes/{name}.py")
            assert member is not None
            (package / f"{name}.py").write_bytes(member.read())
    (package / "__init__.py").write_text("")
    sys.path.insert(0, str(workdir))
    return importlib.import_module("probe_first_edition.runner")


def start_vendor(*, one_slot: bool) -> tuple[subprocess.Popen[str], str]:
    command = [
        sys.executable, "-m", "probes.reference_vendor", "--mode", "shared-cache-only",
        "--port", "0", "--model", MODEL, "--declared-context", str(DECLARED_CONTEXT),
        "--cache-prompts", "1" if one_slot else "0",
    ]  # fmt: skip
    # stderr: http.server prints a traceback whenever a client closes a connection it kept.
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    banner = process.stdout.readline()
    return process, banner.split("listening on ", 1)[1].split()[0]


def run_once(runner: ModuleType, base_url: str, options: dict[str, Any]) -> dict[str, Any]:
    """One probe with only the prefix-cache check; the wall time includes the edition's
    calibration (two or three small requests), the tokens and requests do not."""
    api_key = importlib.import_module(runner.__package__ + ".endpoint").ApiKey
    config = runner.probe_config_build(
        base_url=base_url,
        model=MODEL,
        declared_context=DECLARED_CONTEXT,
        key_a=api_key(f"bench-a-{time.monotonic_ns()}"),
        key_b=api_key(f"bench-b-{time.monotonic_ns()}"),
        allow_http=False,
        checks=("prefix_cache",),
        **options,
    )
    started = time.monotonic()
    result = runner.probe_run(config).to_dict()
    check = result["checks"]["prefix_cache"]
    return {
        "result": check["result"],
        "samples": check["samples"],
        "requests": check["requests"],
        "tokens": check["tokens_spent"],
        "wall_s": round(time.monotonic() - started, 1),
    }


def summary(name: str, runs: list[dict[str, Any]]) -> str:
    decisive = [run for run in runs if run["result"] in ("shared", "isolated", "no_cache_seen")]
    verdicts = ", ".join(sorted({run["result"] for run in runs}))
    if not decisive:
        return f"{name:<28} verdicts: {verdicts}; none decisive"
    tokens = statistics.median(run["tokens"] for run in decisive)
    wall = statistics.median(run["wall_s"] for run in decisive)
    requests = statistics.median(run["requests"] for run in decisive)
    samples = statistics.median(run["samples"] for run in decisive)
    return (
        f"{name:<28} verdicts: {verdicts} ({len(decisive)}/{len(runs)} decisive); per decisive "
        f"verdict (median): {tokens:,.0f} prompt tokens, {requests:.0f} requests, "
        f"{samples:.0f} samples per design, {wall:.1f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rate", type=float, default=2.0, help="requests/s per key (default 2)")
    parser.add_argument("--prefix-tokens", type=int, default=4096)
    parser.add_argument("--one-slot", action="store_true", help="a one-slot shared cache")
    args = parser.parse_args()

    from probes import runner as second_edition

    with tempfile.TemporaryDirectory() as workdir:
        first = first_edition(Path(workdir))
        vendor, base_url = start_vendor(one_slot=args.one_slot)
        try:
            options = {"prefix_tokens": args.prefix_tokens, "rate_per_key": args.rate}
            old = [run_once(first, base_url, {**options, "samples": 25}) for _ in range(args.runs)]
            new = [
                run_once(second_edition, base_url, {**options, "samples": 40})
                for _ in range(args.runs)
            ]
        finally:
            vendor.terminate()
            vendor.wait(timeout=10)
    cache = "one-slot shared cache" if args.one_slot else "shared block cache"
    print(
        f"reference vendor, {cache}, prefix {args.prefix_tokens:,} tokens, "
        f"{args.rate:g} requests/s per key, {args.runs} runs each"
    )
    print(summary("first edition (25 fixed)", old))
    print(summary("second edition (sequential)", new))
    for name, runs in (("first", old), ("second", new)):
        for run in runs:
            print(f"  {name}: {run}")


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    main()
