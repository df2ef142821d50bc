"""`manage.py score --ruleset incident-2026-kv@2` scores v1 and v2 answer files, reading the
model's config.json (PRF-10) and the probe result (PRB-02) given as evidence."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
LLAMA_70B = ROOT / "tests" / "fixtures" / "model_configs" / "llama-3-70b-architecture.config.json"


def score(*args: str) -> dict:
    out = io.StringIO()
    call_command("score", *args, "--as-of", "2026-12-01", stdout=out)
    return json.loads(out.getvalue())


def rule_ids(result: dict) -> set[str]:
    return {finding["rule"] for finding in result["findings"]}


def test_a_v1_answer_file_scores_under_ruleset_v2():
    v1 = score(str(EXAMPLES / "incident-2026-launch.json"), "--ruleset", "incident-2026-kv@1")
    v2 = score(str(EXAMPLES / "incident-2026-launch.json"), "--ruleset", "incident-2026-kv@2")

    assert (v1["questionnaire"], v1["ruleset"]) == (
        "ai-inference-isolation@1",
        "incident-2026-kv@1",
    )
    assert (v2["questionnaire"], v2["ruleset"]) == (
        "ai-inference-isolation@1",
        "incident-2026-kv@2",
    )
    assert rule_ids(v2) - rule_ids(v1) == {"PROBE-NOT-RUN"}
    assert rule_ids(v1) <= rule_ids(v2)


def test_a_v2_answer_file_with_the_launch_day_probe_result():
    result = score(
        str(EXAMPLES / "incident-2026-launch-v2.json"),
        "--evidence",
        f"PRB-02={EXAMPLES / 'probe-launch-day.json'}",
    )

    assert result["ruleset"] == "incident-2026-kv@3"  # the newest that scores v2 answers
    assert {"PROBE-OVERSIZE-ACCEPTED", "PROBE-CROSS-TENANT-ECHO"} <= rule_ids(result)
    assert "PROBE-NOT-RUN" not in rule_ids(result)
    echo = next(f for f in result["findings"] if f["rule"] == "PROBE-CROSS-TENANT-ECHO")
    assert echo["evidence"] == ["PRB-02 probe-launch-day.json: canary = leak"]
    assert result["evidence"]["PRB-02"]["files"][0]["checks"]["oversize"] == "accepted"


def test_the_remediated_probe_result_clears_every_probe_rule():
    result = score(
        str(EXAMPLES / "incident-2026-remediated-v2.json"),
        "--evidence",
        f"PRB-02={EXAMPLES / 'probe-remediated.json'}",
    )

    assert not {r for r in rule_ids(result) if r.startswith("PROBE-")}
    assert result["risk_tier"] != "critical"


def test_the_model_file_sizes_an_oversold_pool():
    result = score(str(EXAMPLES / "sizing-oversold-v2.json"), "--evidence", f"PRF-10={LLAMA_70B}")
    without_model = score(str(EXAMPLES / "sizing-oversold-v2.json"))

    sizing = {"SIZING-POOL-EXCEEDS-GPU-MEMORY", "SIZING-CONTEXT-EXCEEDS-GPU-MEMORY"}
    assert sizing <= rule_ids(result)
    assert not sizing & rule_ids(without_model)
    pool = next(f for f in result["findings"] if f["rule"] == "SIZING-POOL-EXCEEDS-GPU-MEMORY")
    assert "kv_bytes = 327680" in pool["evidence"]
    assert "gpu_gib = 160" in pool["evidence"]


def test_a_v2_answer_file_cannot_be_scored_by_ruleset_v1():
    with pytest.raises(CommandError) as caught:
        score(str(EXAMPLES / "incident-2026-launch-v2.json"), "--ruleset", "incident-2026-kv@1")

    assert caught.value.returncode == 2
    assert "incident-2026-kv@1 scores answers of ai-inference-isolation@1" in str(caught.value)


def test_an_unreadable_probe_file_is_kept_as_not_parsed_and_counts_as_no_probe(tmp_path):
    broken = tmp_path / "probe.json"
    broken.write_text("not json", encoding="utf-8")

    result = score(str(EXAMPLES / "incident-2026-launch-v2.json"), "--evidence", f"PRB-02={broken}")

    assert result["evidence"]["PRB-02"]["files"][0]["parsed"] is False
    assert "PROBE-NOT-RUN" in rule_ids(result)
