#!/usr/bin/env python
"""Scoring throughput: answer sets per second, one process, the ruleset compiled once.

Target (issue 2): ≥ 2,000 answer sets/s for the full ruleset on one core.
Usage: .venv/bin/python bench/score.py [--seconds 5]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from questionnaires.validation import validate_answers  # noqa: E402
from scoring.registry import load_catalog_files  # noqa: E402


def answer_variants(base: dict, count: int) -> list[dict]:
    """Distinct answer sets around the incident fixture, so no cache can flatter the figure."""
    rng = random.Random(2026)
    variants = []
    for _ in range(count):
        answers = dict(base)
        answers["CTX-02"] = rng.randint(100_000, 3_000_000)
        answers["CTX-03"] = rng.randint(100_000, 3_000_000)
        answers["CHG-03"] = rng.randint(0, 90)
        answers["INC-05"] = rng.choice([24, 72, 73, 168])
        answers["PRF-07"] = rng.choice(["yes", "no", "unknown"])
        answers["PRF-06"] = rng.choice(["0.5.19", "0.5.21.post1", "0.5.22", "v0.5.23"])
        variants.append(answers)
    return variants


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    started = time.perf_counter()
    catalog = load_catalog_files()  # reads the YAML, type-checks and compiles every ruleset
    compile_seconds = time.perf_counter() - started
    ruleset = catalog.default_ruleset_for("ai-inference-isolation@1")
    questionnaire = catalog.questionnaire(ruleset.questionnaire)
    engine = catalog.compiled(ruleset.key)
    base = json.loads((ROOT / "examples" / "incident-2026-launch.json").read_text())["answers"]
    validated = [validate_answers(questionnaire, a).values for a in answer_variants(base, 500)]
    as_of = dt.date(2026, 12, 1)

    def run(label: str, work) -> None:
        done, started = 0, time.perf_counter()
        while time.perf_counter() - started < args.seconds:
            for answers in validated:
                work(answers)
            done += len(validated)
        elapsed = time.perf_counter() - started
        print(f"{label}: {done / elapsed:,.0f} answer sets/s ({elapsed / done * 1e6:,.0f} µs each)")

    print(
        f"ruleset {ruleset.key}: {len(engine.rules)} rules over {len(questionnaire.questions)} questions"
    )
    print(f"load + check + compile the catalogue (once): {compile_seconds * 1000:,.0f} ms")
    run("score (validated answers)", lambda a: engine.score(a, as_of=as_of))
    raw = answer_variants(base, 500)
    index = iter(range(10**12))
    run(
        "validate + score",
        lambda _a: engine.score(
            validate_answers(questionnaire, raw[next(index) % len(raw)]).values, as_of=as_of
        ),
    )


if __name__ == "__main__":
    main()
