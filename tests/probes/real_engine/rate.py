"""How often the probe's prefix-cache verdict goes wrong on a real engine: many runs on each
shared configuration (and on the per-tenant deployment), side by side.

    python -m tests.probes.real_engine.rate [--runs 30] [--workers 3]

Prints, and writes to artifacts/real-engine-rate.json, per configuration the verdicts'
counts, the samples used and the largest cross-tenant p-value of the runs. The suite
(test_real_engine.py) repeats fewer runs; this is the figure behind "a shared cache is never
called isolated".
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

from .engine import ROOT, engine_find, llama_server, per_tenant_deployment, prefix_cache_run

CONFIGURATIONS = {
    "defaults": (),
    "one slot, no RAM cache": ("--parallel", "1", "--cache-ram", "0"),
    "two slots": ("--parallel", "2", "--ctx-size", "8192"),
    "per-tenant engines": None,
}


def measure(name: str, runs: int, log_dir: Path) -> dict:
    engine = engine_find()
    keys = [f"sk-tenant-a-{secrets.token_hex(12)}", f"sk-tenant-b-{secrets.token_hex(12)}"]
    flags = CONFIGURATIONS[name]
    started = time.monotonic()
    with ExitStack() as stack:
        if flags is None:
            base_url = stack.enter_context(per_tenant_deployment(engine, log_dir, keys))
        else:
            slug = name.replace(" ", "-").replace(",", "")
            server = stack.enter_context(llama_server(engine, log_dir, keys, *flags, name=slug))
            base_url = server.base_url
        results = [prefix_cache_run(base_url, keys) for _ in range(runs)]
    return {
        "runs": runs,
        "verdicts": dict(Counter(r["result"] for r in results)),
        "samples": dict(Counter(r["samples"] for r in results)),
        "max_p_cross_tenant": max(r["p_cross_tenant"] or 0 for r in results),
        "median_p_cross_tenant": statistics.median(r["p_cross_tenant"] or 0 for r in results),
        "seconds": round(time.monotonic() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--workers", type=int, default=3)
    options = parser.parse_args()
    log_dir = Path(tempfile.mkdtemp(prefix="real-engine-rate-"))
    with ThreadPoolExecutor(max_workers=options.workers) as pool:
        futures = {n: pool.submit(measure, n, options.runs, log_dir) for n in CONFIGURATIONS}
        figures = {name: future.result() for name, future in futures.items()}
    print(json.dumps(figures, indent=2))
    (ROOT / "artifacts").mkdir(exist_ok=True)
    (ROOT / "artifacts" / "real-engine-rate.json").write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
