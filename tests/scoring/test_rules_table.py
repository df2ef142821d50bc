"""Table-driven tests pinning every rule of ruleset incident-2026-kv v1 (spec: rules-v1.md).

Design: `BASELINE` is a complete, valid answer set on which no rule fires. Each case is a small
dict of overrides merged into it (`None` removes an answer), optionally with SGLang startup logs
given as CTX-08 evidence, and asserts only whether *its* rule fired. Every rule has cases on both
sides of its threshold, so an off-by-one, a string comparison of versions, a hidden answer that
is still read, or a blank answer that fires a rule shows up as one named failing case.

Expected values come from the spec, never from the ruleset file: the file is what is under test.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from questionnaires.validation import missing_required, validate_answers
from scoring.evidence import parse_startup_log
from scoring.registry import builtin_catalog

QUESTIONNAIRE = "ai-inference-isolation@1"
RULESET = "incident-2026-kv@1"
AS_OF = dt.date(2026, 12, 1)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# rules-v1.md, "Score and tier".
SPEC_POINTS = {"critical": 40, "high": 15, "medium": 5, "low": 1}

# rules-v1.md, "Rules": id → (severity, first thing its condition reads). A rule's section is the
# section of that question; `pool`, `log.pool` and `log.context` belong to CTX
# (catalogue-format.md).
SPEC_RULES: dict[str, tuple[str, str]] = {
    "KV-POOL-BELOW-CONTEXT": ("critical", "pool"),
    "SGLANG-DISAGG-REJECTION": ("critical", "PRF-05"),
    "ARCHITECTURE-UNKNOWN": ("high", "PRF-07"),
    "LOG-POOL-BELOW-CONTEXT": ("critical", "log.pool"),
    "SGLANG-OUTDATED": ("medium", "PRF-05"),
    "CAPACITY-NOT-VERIFIED": ("high", "CTX-04"),
    "CAPACITY-CHECKED-ONCE": ("medium", "CTX-04"),
    "OVERSIZE-NOT-REJECTED": ("high", "CTX-05"),
    "NO-OUTPUT-CONSISTENCY-TESTS": ("high", "ISO-01"),
    "NO-CROSS-TENANT-CANARY": ("medium", "ISO-02"),
    "PAGES-UNSCRUBBED-UNTAGGED": ("high", "KV-01"),
    "SHARED-PREFIX-CACHE": ("high", "KV-05"),
    "REJECTION-PATH-UNTESTED": ("high", "PRF-07"),
    "LB-ABORT-MID-TRANSFER": ("medium", "PRF-07"),
    "NO-KV-INTEGRITY-CHECKS": ("medium", "KV-03"),
    "OFFLOADED-KV-UNPROTECTED": ("high", "KV-06"),
    "POOL-HEADROOM-THIN": ("low", "CTX-01"),
    "NO-GATEWAY-LIMIT": ("medium", "CTX-06"),
    "BUYER-PROMPTS-EXCEED-POOL": ("high", "USE-03"),
    "BUYER-PROMPTS-EXCEED-CONTEXT": ("medium", "USE-03"),
    "NO-CONFIG-AUDIT": ("high", "CHG-02"),
    "ENGINE-NOT-PINNED": ("low", "CHG-01"),
    "SLOW-PATCHING": ("medium", "CHG-03"),
    "NO-STAGED-ROLLOUT": ("low", "CHG-04"),
    "SENSITIVE-DATA-SHARED-POOL": ("high", "USE-01"),
    "NO-DEDICATED-OPTION": ("medium", "USE-01"),
    "NO-TENANT-CONTEXT-CAP": ("low", "USE-01"),
    "DATA-LEAVES-HK": ("high", "USE-05"),
    "NO-ISOLATION-DOCS": ("medium", "ISO-04"),
    "NO-RECENT-PENTEST": ("medium", "ISO-05"),
    "NO-DISCLOSURE-PROGRAMME": ("low", "ISO-06"),
    "TRAINS-ON-PERSONAL-DATA": ("high", "ISO-08"),
    "SLOW-NOTIFICATION": ("medium", "INC-05"),
    "NO-IMPACT-TRACEABILITY": ("medium", "INC-06"),
    "NO-STATUS-PAGE": ("low", "INC-07"),
    "SLOW-CONTAINMENT": ("medium", "INC-01"),
    "NO-UPSTREAM-DISCLOSURE": ("low", "INC-08"),
    "NO-PROCESSOR-CLAUSES": ("high", "USE-04"),
    "NO-AUDIT-RIGHTS": ("medium", "GOV-02"),
    "NO-ATTESTATION": ("medium", "GOV-01"),
    "SUBPROCESSORS-UNDISCLOSED": ("low", "GOV-04"),
    "LOG-DECLARED-MISMATCH": ("high", "log.pool"),
}


def section_of(rule_id: str) -> str:
    first = SPEC_RULES[rule_id][1]
    if first in ("pool", "log.pool", "log.context"):
        return "CTX"
    return first.split("-")[0]


# A vendor with nothing to find: disaggregated SGLang at a fixed version, a pool of about twice
# the context (≥ 1.5 × CTX-01), every control in place, and a buyer sending confidential personal
# data that must stay in Hong Kong (so that the USE-dependent rules are one answer from firing).
CONTEXT = 1_048_576
BASELINE_POOL = 2_000_000
BASELINE: dict[str, Any] = {
    "PRF-01": "Example Inference Cloud",
    "PRF-02": "example/model-1",
    "PRF-03": "dedicated_instance",
    "PRF-04": ["hk"],
    "PRF-05": "sglang",
    "PRF-06": "0.5.22",
    "PRF-07": "yes",
    "PRF-08": "mooncake",
    "CTX-01": CONTEXT,
    "CTX-02": BASELINE_POOL,
    "CTX-03": BASELINE_POOL,
    "CTX-04": "automated_every_change",
    "CTX-05": "error_4xx",
    "CTX-06": "yes",
    "CTX-07": "yes",
    "KV-01": "scrubbed_before_reuse",
    "KV-02": "yes",
    "KV-03": "yes",
    "KV-04": "yes",
    "KV-05": "per_tenant_isolated",
    "KV-06": "yes",
    "KV-07": "yes",
    "KV-08": "yes",
    "KV-09": "no",
    "ISO-01": "yes",
    "ISO-02": "yes",
    "ISO-03": "yes",
    "ISO-04": "yes",
    "ISO-05": "2026-06-01",
    "ISO-06": "yes",
    "ISO-07": 0,
    "ISO-08": "no",
    "CHG-01": "yes",
    "CHG-02": "yes",
    "CHG-03": 14,
    "CHG-04": "yes",
    "INC-01": "no",
    "INC-05": 24,
    "INC-06": "yes",
    "INC-07": "yes",
    "INC-08": "yes",
    "GOV-01": ["soc2_type2", "iso27001"],
    "GOV-02": "yes",
    "GOV-03": "yes",
    "GOV-04": "yes",
    "USE-01": "confidential",
    "USE-02": "finance",
    "USE-03": 200_000,
    "USE-04": "yes",
    "USE-05": "yes",
}

SINGLE_NODE = {"PRF-07": "no", "PRF-08": None, "CTX-03": None, "KV-08": None, "KV-09": None}
INCIDENT = {"INC-01": "yes", "INC-02": "Cross-tenant KV exposure, see https://example.com/pir"}


def days_before_as_of(days: int) -> str:
    return (AS_OF - dt.timedelta(days=days)).isoformat()


@dataclass(frozen=True)
class Case:
    rule: str
    fires: bool
    when: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    logs: Sequence[tuple[int, int]] = ()  # (pool, context) of each SGLang startup log for CTX-08

    @property
    def id(self) -> str:
        return f"{self.rule} {'fires' if self.fires else 'does not fire'} when {self.when}"


def F(rule: str, when: str, overrides: Mapping[str, Any] | None = None, logs=()) -> Case:
    return Case(rule, True, when, overrides or {}, tuple(logs))


def N(rule: str, when: str, overrides: Mapping[str, Any] | None = None, logs=()) -> Case:
    return Case(rule, False, when, overrides or {}, tuple(logs))


def yes_no_cases(rule: str, code: str, extra: Mapping[str, Any] | None = None) -> list[Case]:
    """`A ≠ yes`: fires on "no" and "unknown", not on "yes", not when blank."""
    extra = dict(extra or {})
    return [
        F(rule, f"{code} is no", {**extra, code: "no"}),
        F(rule, f"{code} is unknown", {**extra, code: "unknown"}),
        N(rule, f"{code} is yes", {**extra, code: "yes"}),
        N(rule, f"{code} is blank", {**extra, code: None}),
    ]


CASES: list[Case] = [
    # -- KV-POOL-BELOW-CONTEXT: pool < CTX-01 -------------------------------------------------
    F("KV-POOL-BELOW-CONTEXT", "prefill pool is context-1", {"CTX-02": CONTEXT - 1}),
    N(
        "KV-POOL-BELOW-CONTEXT",
        "prefill pool equals context",
        {"CTX-02": CONTEXT, "CTX-03": CONTEXT},
    ),
    F("KV-POOL-BELOW-CONTEXT", "the incident's 681280 vs 1048576", {"CTX-02": 681_280}),
    F(
        "KV-POOL-BELOW-CONTEXT",
        "disaggregated and only the decode pool is context-1",
        {"CTX-02": BASELINE_POOL, "CTX-03": CONTEXT - 1},
    ),
    N(
        "KV-POOL-BELOW-CONTEXT",
        "single node and hidden CTX-03 is smaller than context",
        {**SINGLE_NODE, "CTX-03": CONTEXT - 1},
    ),
    F(
        "KV-POOL-BELOW-CONTEXT",
        "single node pool is context-1",
        {**SINGLE_NODE, "CTX-02": CONTEXT - 1},
    ),
    F(
        "KV-POOL-BELOW-CONTEXT",
        "PRF-07 unknown uses CTX-02 alone (context-1)",
        {"PRF-07": "unknown", "CTX-02": CONTEXT - 1, "CTX-03": BASELINE_POOL},
    ),
    N(
        "KV-POOL-BELOW-CONTEXT",
        "PRF-07 unknown and hidden CTX-03 is smaller than context",
        {"PRF-07": "unknown", "CTX-03": CONTEXT - 1},
    ),
    N("KV-POOL-BELOW-CONTEXT", "CTX-02 is blank", {"CTX-02": None, "CTX-03": CONTEXT - 1}),
    N(
        "KV-POOL-BELOW-CONTEXT",
        "disaggregated and CTX-03 is blank",
        {"CTX-02": CONTEXT - 1, "CTX-03": None},
    ),
    N("KV-POOL-BELOW-CONTEXT", "CTX-01 is blank", {"CTX-01": None, "CTX-02": 681_280}),
    # -- SGLANG-DISAGG-REJECTION: PRF-05 = sglang and PRF-07 ≠ no and PRF-06 < 0.5.22 ---------
    F("SGLANG-DISAGG-REJECTION", "version is 0.5.21.post1", {"PRF-06": "0.5.21.post1"}),
    F("SGLANG-DISAGG-REJECTION", "version is v0.5.21.post1", {"PRF-06": "v0.5.21.post1"}),
    F("SGLANG-DISAGG-REJECTION", "version is 0.5.22rc1", {"PRF-06": "0.5.22rc1"}),
    F("SGLANG-DISAGG-REJECTION", "version is v0.5.21", {"PRF-06": "v0.5.21"}),
    F(
        "SGLANG-DISAGG-REJECTION",
        "version is 0.5.3 (numeric, not string order)",
        {"PRF-06": "0.5.3"},
    ),
    F("SGLANG-DISAGG-REJECTION", "version is the incident's 0.5.19", {"PRF-06": "0.5.19"}),
    N("SGLANG-DISAGG-REJECTION", "version is 0.5.22", {"PRF-06": "0.5.22"}),
    N("SGLANG-DISAGG-REJECTION", "version is v0.5.22", {"PRF-06": "v0.5.22"}),
    N("SGLANG-DISAGG-REJECTION", "version is 0.5.22.post1", {"PRF-06": "0.5.22.post1"}),
    N("SGLANG-DISAGG-REJECTION", "version is 0.5.100", {"PRF-06": "0.5.100"}),
    N("SGLANG-DISAGG-REJECTION", "version is 0.6.0", {"PRF-06": "0.6.0"}),
    F(
        "SGLANG-DISAGG-REJECTION",
        "PRF-07 unknown and version 0.5.21",
        {"PRF-07": "unknown", "PRF-06": "0.5.21"},
    ),
    N("SGLANG-DISAGG-REJECTION", "single node at 0.5.21", {**SINGLE_NODE, "PRF-06": "0.5.21"}),
    N(
        "SGLANG-DISAGG-REJECTION",
        "engine is vllm at 0.5.21",
        {"PRF-05": "vllm", "PRF-06": "0.5.21"},
    ),
    N("SGLANG-DISAGG-REJECTION", "version is blank", {"PRF-06": None}),
    N("SGLANG-DISAGG-REJECTION", "PRF-07 is blank", {"PRF-07": None, "PRF-06": "0.5.21"}),
    # -- ARCHITECTURE-UNKNOWN: PRF-07 = unknown --------------------------------------------
    F("ARCHITECTURE-UNKNOWN", "PRF-07 is unknown", {"PRF-07": "unknown"}),
    N("ARCHITECTURE-UNKNOWN", "PRF-07 is yes", {"PRF-07": "yes"}),
    N("ARCHITECTURE-UNKNOWN", "PRF-07 is no", SINGLE_NODE),
    N("ARCHITECTURE-UNKNOWN", "PRF-07 is blank", {"PRF-07": None}),
    # -- LOG-POOL-BELOW-CONTEXT: log.pool < log.context -------------------------------------
    F("LOG-POOL-BELOW-CONTEXT", "log pool is log context-1", logs=[(CONTEXT - 1, CONTEXT)]),
    N("LOG-POOL-BELOW-CONTEXT", "log pool equals log context", logs=[(CONTEXT, CONTEXT)]),
    F("LOG-POOL-BELOW-CONTEXT", "the incident's log, 681280 vs 1048576", logs=[(681_280, CONTEXT)]),
    N("LOG-POOL-BELOW-CONTEXT", "no log is given"),
    F(
        "LOG-POOL-BELOW-CONTEXT",
        "smallest pool of one log is below largest context of another",
        logs=[(BASELINE_POOL, CONTEXT), (1_000_000, 131_072)],
    ),
    N(
        "LOG-POOL-BELOW-CONTEXT",
        "two logs each with pool ≥ context",
        logs=[(BASELINE_POOL, CONTEXT), (CONTEXT, CONTEXT)],
    ),
    # -- SGLANG-OUTDATED: PRF-05 = sglang and PRF-07 = no and PRF-06 < 0.5.22 -----------------
    F("SGLANG-OUTDATED", "single node at 0.5.21.post1", {**SINGLE_NODE, "PRF-06": "0.5.21.post1"}),
    F("SGLANG-OUTDATED", "single node at 0.5.22rc1", {**SINGLE_NODE, "PRF-06": "0.5.22rc1"}),
    N("SGLANG-OUTDATED", "single node at 0.5.22", {**SINGLE_NODE, "PRF-06": "0.5.22"}),
    N("SGLANG-OUTDATED", "disaggregated at 0.5.21", {"PRF-06": "0.5.21"}),
    N("SGLANG-OUTDATED", "PRF-07 unknown at 0.5.21", {"PRF-07": "unknown", "PRF-06": "0.5.21"}),
    N(
        "SGLANG-OUTDATED",
        "single node vllm at 0.5.21",
        {**SINGLE_NODE, "PRF-05": "vllm", "PRF-06": "0.5.21"},
    ),
    # -- CAPACITY-NOT-VERIFIED / CAPACITY-CHECKED-ONCE: CTX-04 ------------------------------
    F("CAPACITY-NOT-VERIFIED", "CTX-04 is not_verified", {"CTX-04": "not_verified"}),
    N("CAPACITY-NOT-VERIFIED", "CTX-04 is manual_at_launch", {"CTX-04": "manual_at_launch"}),
    N("CAPACITY-NOT-VERIFIED", "CTX-04 is blank", {"CTX-04": None}),
    F("CAPACITY-CHECKED-ONCE", "CTX-04 is manual_at_launch", {"CTX-04": "manual_at_launch"}),
    N(
        "CAPACITY-CHECKED-ONCE",
        "CTX-04 is automated_every_change",
        {"CTX-04": "automated_every_change"},
    ),
    N("CAPACITY-CHECKED-ONCE", "CTX-04 is not_verified", {"CTX-04": "not_verified"}),
    # -- OVERSIZE-NOT-REJECTED: CTX-05 ∈ {silent_truncate, unknown} -------------------------
    F("OVERSIZE-NOT-REJECTED", "CTX-05 is silent_truncate", {"CTX-05": "silent_truncate"}),
    F("OVERSIZE-NOT-REJECTED", "CTX-05 is unknown", {"CTX-05": "unknown"}),
    N("OVERSIZE-NOT-REJECTED", "CTX-05 is error_4xx", {"CTX-05": "error_4xx"}),
    N(
        "OVERSIZE-NOT-REJECTED",
        "CTX-05 is truncate_with_notice",
        {"CTX-05": "truncate_with_notice"},
    ),
    N("OVERSIZE-NOT-REJECTED", "CTX-05 is blank", {"CTX-05": None}),
    # -- ≠ yes rules ------------------------------------------------------------------------
    *yes_no_cases("NO-OUTPUT-CONSISTENCY-TESTS", "ISO-01"),
    *yes_no_cases("NO-CROSS-TENANT-CANARY", "ISO-02"),
    # -- PAGES-UNSCRUBBED-UNTAGGED: KV-01 ≠ scrubbed_before_reuse and KV-02 ≠ yes -----------
    F(
        "PAGES-UNSCRUBBED-UNTAGGED",
        "overwritten_only and untagged",
        {"KV-01": "overwritten_only", "KV-02": "no"},
    ),
    F("PAGES-UNSCRUBBED-UNTAGGED", "both unknown", {"KV-01": "unknown", "KV-02": "unknown"}),
    N(
        "PAGES-UNSCRUBBED-UNTAGGED",
        "overwritten_only but tagged",
        {"KV-01": "overwritten_only", "KV-02": "yes"},
    ),
    N(
        "PAGES-UNSCRUBBED-UNTAGGED",
        "untagged but scrubbed",
        {"KV-01": "scrubbed_before_reuse", "KV-02": "no"},
    ),
    N("PAGES-UNSCRUBBED-UNTAGGED", "KV-01 is blank", {"KV-01": None, "KV-02": "no"}),
    # -- SHARED-PREFIX-CACHE: KV-05 = shared_across_tenants ----------------------------------
    F("SHARED-PREFIX-CACHE", "KV-05 is shared_across_tenants", {"KV-05": "shared_across_tenants"}),
    N("SHARED-PREFIX-CACHE", "KV-05 is per_tenant_isolated", {"KV-05": "per_tenant_isolated"}),
    N("SHARED-PREFIX-CACHE", "KV-05 is per_request", {"KV-05": "per_request"}),
    N(
        "SHARED-PREFIX-CACHE",
        "KV-04 is no, so KV-05 = shared_across_tenants is hidden",
        {"KV-04": "no", "KV-05": "shared_across_tenants"},
    ),
    N(
        "SHARED-PREFIX-CACHE",
        "KV-04 is unknown, so KV-05 = shared_across_tenants is hidden",
        {"KV-04": "unknown", "KV-05": "shared_across_tenants"},
    ),
    # -- REJECTION-PATH-UNTESTED: PRF-07 = yes and KV-08 ≠ yes ------------------------------
    *yes_no_cases("REJECTION-PATH-UNTESTED", "KV-08"),
    N(
        "REJECTION-PATH-UNTESTED",
        "single node, so KV-08 = no is hidden",
        {**SINGLE_NODE, "KV-08": "no"},
    ),
    N(
        "REJECTION-PATH-UNTESTED",
        "PRF-07 unknown, so KV-08 = no is hidden",
        {"PRF-07": "unknown", "KV-08": "no"},
    ),
    # -- LB-ABORT-MID-TRANSFER: PRF-07 = yes and KV-09 ∈ {yes, unknown} ---------------------
    F("LB-ABORT-MID-TRANSFER", "KV-09 is yes", {"KV-09": "yes"}),
    F("LB-ABORT-MID-TRANSFER", "KV-09 is unknown", {"KV-09": "unknown"}),
    N("LB-ABORT-MID-TRANSFER", "KV-09 is no", {"KV-09": "no"}),
    N("LB-ABORT-MID-TRANSFER", "KV-09 is blank", {"KV-09": None}),
    N(
        "LB-ABORT-MID-TRANSFER",
        "single node, so KV-09 = yes is hidden",
        {**SINGLE_NODE, "KV-09": "yes"},
    ),
    # -- NO-KV-INTEGRITY-CHECKS: KV-03 ≠ yes ------------------------------------------------
    *yes_no_cases("NO-KV-INTEGRITY-CHECKS", "KV-03"),
    # -- OFFLOADED-KV-UNPROTECTED: KV-06 = yes and KV-07 ≠ yes -------------------------------
    *yes_no_cases("OFFLOADED-KV-UNPROTECTED", "KV-07"),
    N(
        "OFFLOADED-KV-UNPROTECTED",
        "KV-06 is no, so KV-07 = no is hidden",
        {"KV-06": "no", "KV-07": "no"},
    ),
    N(
        "OFFLOADED-KV-UNPROTECTED",
        "KV-06 is unknown, so KV-07 = no is hidden",
        {"KV-06": "unknown", "KV-07": "no"},
    ),
    # -- POOL-HEADROOM-THIN: CTX-01 ≤ pool < 1.5 × CTX-01 -----------------------------------
    F("POOL-HEADROOM-THIN", "pool equals context", {"CTX-02": CONTEXT, "CTX-03": CONTEXT}),
    N("POOL-HEADROOM-THIN", "pool is context-1 (below, not thin)", {"CTX-02": CONTEXT - 1}),
    F("POOL-HEADROOM-THIN", "pool is 1.5×context-1", {"CTX-02": CONTEXT * 3 // 2 - 1}),
    N("POOL-HEADROOM-THIN", "pool is exactly 1.5×context", {"CTX-02": CONTEXT * 3 // 2}),
    F(
        "POOL-HEADROOM-THIN",
        "odd context 1000001 and pool 1500001 (< 1500001.5)",
        {"CTX-01": 1_000_001, "CTX-02": 1_500_001, "CTX-03": 1_500_001, "USE-03": 1000},
    ),
    N(
        "POOL-HEADROOM-THIN",
        "odd context 1000001 and pool 1500002 (> 1500001.5)",
        {"CTX-01": 1_000_001, "CTX-02": 1_500_002, "CTX-03": 1_500_002, "USE-03": 1000},
    ),
    F(
        "POOL-HEADROOM-THIN",
        "disaggregated and only the decode pool is thin",
        {"CTX-02": BASELINE_POOL, "CTX-03": 1_500_000},
    ),
    N(
        "POOL-HEADROOM-THIN",
        "single node and hidden CTX-03 is thin",
        {**SINGLE_NODE, "CTX-03": 1_500_000},
    ),
    N("POOL-HEADROOM-THIN", "CTX-02 is blank", {"CTX-02": None, "CTX-03": 1_500_000}),
    # -- NO-GATEWAY-LIMIT: CTX-06 ≠ yes -------------------------------------------------------
    *yes_no_cases("NO-GATEWAY-LIMIT", "CTX-06"),
    # -- BUYER-PROMPTS-EXCEED-POOL: USE-03 > pool -------------------------------------------
    F("BUYER-PROMPTS-EXCEED-POOL", "USE-03 is pool+1", {"USE-03": BASELINE_POOL + 1}),
    N("BUYER-PROMPTS-EXCEED-POOL", "USE-03 equals pool", {"USE-03": BASELINE_POOL}),
    F(
        "BUYER-PROMPTS-EXCEED-POOL",
        "USE-03 is 700000 against the incident's pool 681280",
        {"CTX-02": 681_280, "USE-03": 700_000},
    ),
    F(
        "BUYER-PROMPTS-EXCEED-POOL",
        "disaggregated and USE-03 exceeds only the decode pool",
        {"CTX-03": 1_800_000, "USE-03": 1_800_001},
    ),
    N(
        "BUYER-PROMPTS-EXCEED-POOL",
        "single node and USE-03 exceeds only the hidden CTX-03",
        {**SINGLE_NODE, "CTX-03": 1_800_000, "USE-03": 1_800_001},
    ),
    N("BUYER-PROMPTS-EXCEED-POOL", "USE-03 is blank", {"USE-03": None}),
    # -- BUYER-PROMPTS-EXCEED-CONTEXT: USE-03 > CTX-01 --------------------------------------
    F("BUYER-PROMPTS-EXCEED-CONTEXT", "USE-03 is context+1", {"USE-03": CONTEXT + 1}),
    N("BUYER-PROMPTS-EXCEED-CONTEXT", "USE-03 equals context", {"USE-03": CONTEXT}),
    N("BUYER-PROMPTS-EXCEED-CONTEXT", "CTX-01 is blank", {"CTX-01": None, "USE-03": CONTEXT + 1}),
    # -- CHG --------------------------------------------------------------------------------
    *yes_no_cases("NO-CONFIG-AUDIT", "CHG-02"),
    *yes_no_cases("ENGINE-NOT-PINNED", "CHG-01"),
    F("SLOW-PATCHING", "CHG-03 is 31 days", {"CHG-03": 31}),
    N("SLOW-PATCHING", "CHG-03 is 30 days", {"CHG-03": 30}),
    N("SLOW-PATCHING", "CHG-03 is 0 days", {"CHG-03": 0}),
    N("SLOW-PATCHING", "CHG-03 is blank", {"CHG-03": None}),
    *yes_no_cases("NO-STAGED-ROLLOUT", "CHG-04"),
    # -- SENSITIVE-DATA-SHARED-POOL: USE-01 ∈ {confidential, regulated} and shared ----------
    F(
        "SENSITIVE-DATA-SHARED-POOL",
        "confidential on a shared pool",
        {"PRF-03": "shared_multi_tenant"},
    ),
    F(
        "SENSITIVE-DATA-SHARED-POOL",
        "regulated on a shared pool",
        {"USE-01": "regulated", "PRF-03": "shared_multi_tenant"},
    ),
    N(
        "SENSITIVE-DATA-SHARED-POOL",
        "internal data on a shared pool",
        {"USE-01": "internal", "PRF-03": "shared_multi_tenant"},
    ),
    N(
        "SENSITIVE-DATA-SHARED-POOL",
        "public data on a shared pool",
        {"USE-01": "public", "PRF-03": "shared_multi_tenant"},
    ),
    N(
        "SENSITIVE-DATA-SHARED-POOL",
        "confidential on a dedicated instance",
        {"PRF-03": "dedicated_instance"},
    ),
    N("SENSITIVE-DATA-SHARED-POOL", "confidential, customer hosted", {"PRF-03": "customer_hosted"}),
    # -- NO-DEDICATED-OPTION: USE-01 ∈ {confidential, regulated} and ISO-03 ≠ yes ------------
    F("NO-DEDICATED-OPTION", "confidential and ISO-03 is no", {"ISO-03": "no"}),
    F(
        "NO-DEDICATED-OPTION",
        "regulated and ISO-03 is unknown",
        {"USE-01": "regulated", "ISO-03": "unknown"},
    ),
    N("NO-DEDICATED-OPTION", "confidential and ISO-03 is yes", {"ISO-03": "yes"}),
    N("NO-DEDICATED-OPTION", "public data and ISO-03 is no", {"USE-01": "public", "ISO-03": "no"}),
    N("NO-DEDICATED-OPTION", "ISO-03 is blank", {"ISO-03": None}),
    # -- NO-TENANT-CONTEXT-CAP: USE-01 ∈ {confidential, regulated} and CTX-07 ≠ yes ----------
    F(
        "NO-TENANT-CONTEXT-CAP",
        "regulated and CTX-07 is no",
        {"USE-01": "regulated", "CTX-07": "no"},
    ),
    F("NO-TENANT-CONTEXT-CAP", "confidential and CTX-07 is unknown", {"CTX-07": "unknown"}),
    N("NO-TENANT-CONTEXT-CAP", "confidential and CTX-07 is yes", {"CTX-07": "yes"}),
    N(
        "NO-TENANT-CONTEXT-CAP",
        "internal data and CTX-07 is no",
        {"USE-01": "internal", "CTX-07": "no"},
    ),
    N("NO-TENANT-CONTEXT-CAP", "optional CTX-07 is blank", {"CTX-07": None}),
    # -- DATA-LEAVES-HK: USE-05 = yes and PRF-04 contains any code but hk --------------------
    F("DATA-LEAVES-HK", "PRF-04 is hk and sg", {"PRF-04": ["hk", "sg"]}),
    F("DATA-LEAVES-HK", "PRF-04 is cn only", {"PRF-04": ["cn"]}),
    F("DATA-LEAVES-HK", "PRF-04 is other only", {"PRF-04": ["other"]}),
    N("DATA-LEAVES-HK", "PRF-04 is hk only", {"PRF-04": ["hk"]}),
    N("DATA-LEAVES-HK", "USE-05 is no and PRF-04 is us", {"USE-05": "no", "PRF-04": ["us"]}),
    N(
        "DATA-LEAVES-HK",
        "USE-05 is unknown (not = yes) and PRF-04 is us",
        {"USE-05": "unknown", "PRF-04": ["us"]},
    ),
    N("DATA-LEAVES-HK", "PRF-04 is blank", {"PRF-04": None}),
    # -- ISO ----------------------------------------------------------------------------------
    *yes_no_cases("NO-ISOLATION-DOCS", "ISO-04"),
    F("NO-RECENT-PENTEST", "ISO-05 is 366 days before as_of", {"ISO-05": days_before_as_of(366)}),
    N("NO-RECENT-PENTEST", "ISO-05 is 365 days before as_of", {"ISO-05": days_before_as_of(365)}),
    N("NO-RECENT-PENTEST", "ISO-05 is as_of itself", {"ISO-05": AS_OF.isoformat()}),
    # (a test date after today is refused at validation: the day after as_of is in the past)
    N("NO-RECENT-PENTEST", "ISO-05 is after as_of", {"ISO-05": "2026-12-02"}),
    F("NO-RECENT-PENTEST", "ISO-05 is blank (never)", {"ISO-05": None}),
    *yes_no_cases("NO-DISCLOSURE-PROGRAMME", "ISO-06"),
    F("TRAINS-ON-PERSONAL-DATA", "ISO-08 yes and USE-04 yes", {"ISO-08": "yes"}),
    N("TRAINS-ON-PERSONAL-DATA", "ISO-08 yes and USE-04 no", {"ISO-08": "yes", "USE-04": "no"}),
    N("TRAINS-ON-PERSONAL-DATA", "ISO-08 no and USE-04 yes", {"ISO-08": "no"}),
    N(
        "TRAINS-ON-PERSONAL-DATA",
        "ISO-08 unknown (not = yes) and USE-04 yes",
        {"ISO-08": "unknown"},
    ),
    N("TRAINS-ON-PERSONAL-DATA", "ISO-08 yes and USE-04 blank", {"ISO-08": "yes", "USE-04": None}),
    # -- INC ----------------------------------------------------------------------------------
    F("SLOW-NOTIFICATION", "INC-05 is 73 hours", {"INC-05": 73}),
    N("SLOW-NOTIFICATION", "INC-05 is 72 hours", {"INC-05": 72}),
    N("SLOW-NOTIFICATION", "INC-05 is blank", {"INC-05": None}),
    *yes_no_cases("NO-IMPACT-TRACEABILITY", "INC-06"),
    *yes_no_cases("NO-STATUS-PAGE", "INC-07"),
    F("SLOW-CONTAINMENT", "INC-01 yes and INC-03 is 25 hours", {**INCIDENT, "INC-03": 25}),
    N("SLOW-CONTAINMENT", "INC-01 yes and INC-03 is 24 hours", {**INCIDENT, "INC-03": 24}),
    N(
        "SLOW-CONTAINMENT",
        "INC-01 no, so INC-03 = 100 is hidden",
        {**INCIDENT, "INC-01": "no", "INC-03": 100},
    ),
    N(
        "SLOW-CONTAINMENT",
        "INC-01 unknown, so INC-03 = 100 is hidden",
        {**INCIDENT, "INC-01": "unknown", "INC-03": 100},
    ),
    N("SLOW-CONTAINMENT", "INC-01 yes and INC-03 blank", {**INCIDENT, "INC-03": None}),
    *yes_no_cases("NO-UPSTREAM-DISCLOSURE", "INC-08"),
    # -- GOV / USE ------------------------------------------------------------------------------
    F("NO-PROCESSOR-CLAUSES", "personal data and GOV-03 is no", {"GOV-03": "no"}),
    F("NO-PROCESSOR-CLAUSES", "personal data and GOV-03 is unknown", {"GOV-03": "unknown"}),
    N("NO-PROCESSOR-CLAUSES", "personal data and GOV-03 is yes", {"GOV-03": "yes"}),
    N(
        "NO-PROCESSOR-CLAUSES",
        "no personal data and GOV-03 is no",
        {"USE-04": "no", "GOV-03": "no"},
    ),
    N(
        "NO-PROCESSOR-CLAUSES",
        "USE-04 unknown (not = yes) and GOV-03 is no",
        {"USE-04": "unknown", "GOV-03": "no"},
    ),
    N("NO-PROCESSOR-CLAUSES", "GOV-03 is blank", {"GOV-03": None}),
    *yes_no_cases("NO-AUDIT-RIGHTS", "GOV-02"),
    F("NO-ATTESTATION", "GOV-01 is none", {"GOV-01": ["none"]}),
    F("NO-ATTESTATION", "GOV-01 is an empty list", {"GOV-01": []}),
    F("NO-ATTESTATION", "GOV-01 is blank", {"GOV-01": None}),
    N("NO-ATTESTATION", "GOV-01 is iso27001", {"GOV-01": ["iso27001"]}),
    N("NO-ATTESTATION", "GOV-01 is csa_star", {"GOV-01": ["csa_star"]}),
    *yes_no_cases("SUBPROCESSORS-UNDISCLOSED", "GOV-04"),
    # -- LOG-DECLARED-MISMATCH: log.pool differs from the declared pool by more than 5 % ------
    # Declared pool 2,000,000: 5 % is exactly 100,000 tokens.
    N("LOG-DECLARED-MISMATCH", "log pool equals declared pool", logs=[(BASELINE_POOL, CONTEXT)]),
    N("LOG-DECLARED-MISMATCH", "log pool is declared+5%", logs=[(2_100_000, CONTEXT)]),
    F("LOG-DECLARED-MISMATCH", "log pool is declared+5%+1", logs=[(2_100_001, CONTEXT)]),
    N("LOG-DECLARED-MISMATCH", "log pool is declared-5%", logs=[(1_900_000, CONTEXT)]),
    F("LOG-DECLARED-MISMATCH", "log pool is declared-5%-1", logs=[(1_899_999, CONTEXT)]),
    F(
        "LOG-DECLARED-MISMATCH",
        "the incident's log pool against a declared 2040000",
        {"CTX-02": 2_040_000, "CTX-03": 2_040_000},
        logs=[(681_280, CONTEXT)],
    ),
    N("LOG-DECLARED-MISMATCH", "no log is given", {"CTX-02": 681_280}),
    N(
        "LOG-DECLARED-MISMATCH",
        "declared CTX-02 is blank",
        {"CTX-02": None},
        logs=[(681_280, CONTEXT)],
    ),
    N(
        "LOG-DECLARED-MISMATCH",
        "disaggregated: the declared pool is the smaller decode pool",
        {"CTX-02": 4_000_000, "CTX-03": BASELINE_POOL},
        logs=[(BASELINE_POOL, CONTEXT)],
    ),
    F(
        "LOG-DECLARED-MISMATCH",
        "single node: hidden CTX-03 is not the declared pool",
        {**SINGLE_NODE, "CTX-02": BASELINE_POOL, "CTX-03": 1_000_000},
        logs=[(1_000_000, CONTEXT)],
    ),
    F(
        "LOG-DECLARED-MISMATCH",
        "the smallest of two logs differs by more than 5%",
        logs=[(BASELINE_POOL, CONTEXT), (1_800_000, CONTEXT)],
    ),
]


# -- helpers -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def catalog():
    return builtin_catalog()


def answers_with(
    overrides: Mapping[str, Any], baseline: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    answers = dict(BASELINE if baseline is None else baseline)
    for code, value in overrides.items():
        if value is None:
            answers.pop(code, None)
        else:
            answers[code] = value
    return answers


def sglang_log(directory: Path, name: str, pool: int, context: int) -> Path:
    """A minimal SGLang prefill startup log in the format of engine-logs.md."""
    path = directory / name
    path.write_text(
        "[2026-08-20 10:00:00 TP0] Load weight end. type=GlmForCausalLM, dtype=torch.bfloat16\n"
        f"[2026-08-20 10:00:01 TP0] KV Cache is allocated. #tokens: {pool}, KV size: 28.52 GB\n"
        f"[2026-08-20 10:00:02 TP0] max_total_num_tokens={pool}, chunked_prefill_size=4096, "
        "max_prefill_tokens=16384, max_running_requests=2048, "
        f"context_len={context}, available_gpu_mem=21.09 GB\n"
        "[2026-08-20 10:00:03] INFO:     Uvicorn running on http://0.0.0.0:30000\n",
        encoding="utf-8",
    )
    return path


def evidence_for(directory: Path, logs: Sequence[tuple[int, int]]) -> dict[str, list] | None:
    if not logs:
        return None
    results = []
    for index, (pool, context) in enumerate(logs):
        path = sglang_log(directory, f"prefill-{index}.log", pool, context)
        result = parse_startup_log(path, source_name=path.name)
        assert result.parsed and (result.pool, result.context) == (pool, context), result
        results.append(result)
    return {"CTX-08": results}


def score(questionnaire, engine, overrides=None, evidence=None, as_of=AS_OF):
    clean = validate_answers(questionnaire, answers_with(overrides or {}))
    return engine.score(clean.values, as_of=as_of, evidence=evidence)


def expected_score(ruleset, rule_ids) -> int:
    severities = {rule.id: rule.severity for rule in ruleset.rules}
    return min(100, sum(ruleset.points[severities[rule_id]] for rule_id in rule_ids))


# -- the table itself --------------------------------------------------------------------------


def test_table_covers_exactly_the_rules_of_the_ruleset(ruleset):
    ids = {rule.id for rule in ruleset.rules}
    assert set(SPEC_RULES) == ids, "a rule was added to or removed from the ruleset or the spec"
    assert {case.rule for case in CASES if case.fires} == ids, "every rule needs a case that fires"
    assert {case.rule for case in CASES if not case.fires} == ids, (
        "every rule needs a non-firing case"
    )
    ids_of_cases = [case.id for case in CASES]
    assert len(ids_of_cases) == len(set(ids_of_cases)), "case ids must be unique"


def test_severities_and_points_follow_the_spec(ruleset):
    assert dict(ruleset.points) == SPEC_POINTS
    assert {rule.id: rule.severity for rule in ruleset.rules} == {
        rule_id: severity for rule_id, (severity, _) in SPEC_RULES.items()
    }


def test_baseline_is_complete_and_fires_nothing(questionnaire, engine):
    clean = validate_answers(questionnaire, BASELINE)
    assert missing_required(questionnaire, clean.values) == []
    result = engine.score(clean.values, as_of=AS_OF)
    assert result.findings == ()
    assert result.fired_rule_ids == set()
    assert result.risk_score == 0
    assert result.risk_tier == "low"
    assert {code: cov.coverage for code, cov in result.sections.items()} == {
        section: 1.0 for section in {section_of(rule_id) for rule_id in SPEC_RULES}
    }


def test_baseline_with_a_matching_startup_log_fires_nothing(questionnaire, engine, tmp_path):
    evidence = evidence_for(tmp_path, [(BASELINE_POOL, CONTEXT)])
    result = score(questionnaire, engine, evidence=evidence)
    assert result.fired_rule_ids == set()
    assert result.risk_score == 0


def test_an_unparsable_log_fires_no_log_rule(questionnaire, engine, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("the prefill pool is 681280 tokens, we think\n", encoding="utf-8")
    result = parse_startup_log(path, source_name=path.name)
    assert not result.parsed
    scored = score(questionnaire, engine, {"CTX-02": 681_280}, evidence={"CTX-08": [result]})
    assert "LOG-POOL-BELOW-CONTEXT" not in scored.fired_rule_ids
    assert "LOG-DECLARED-MISMATCH" not in scored.fired_rule_ids


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_rule(case, questionnaire, engine, tmp_path):
    result = score(questionnaire, engine, case.overrides, evidence_for(tmp_path, case.logs))
    assert (case.rule in result.fired_rule_ids) is case.fires, (
        f"{case.id}: fired {sorted(result.fired_rule_ids)}"
    )


FIRST_FIRING_CASE = {}
for _case in CASES:
    if _case.fires:
        FIRST_FIRING_CASE.setdefault(_case.rule, _case)


@pytest.mark.parametrize("rule_id", sorted(SPEC_RULES))
def test_finding_carries_severity_points_and_section(
    rule_id, questionnaire, engine, ruleset, tmp_path
):
    """The section is that of the first question the spec's condition reads."""
    case = FIRST_FIRING_CASE[rule_id]
    result = score(questionnaire, engine, case.overrides, evidence_for(tmp_path, case.logs))
    (finding,) = [f for f in result.findings if f.rule_id == rule_id]
    severity = SPEC_RULES[rule_id][0]
    assert finding.severity == severity
    assert finding.points == ruleset.points[severity]
    assert finding.section == section_of(rule_id)
    assert finding.evidence, "a finding shows the answers it rests on"


# -- score and tier ----------------------------------------------------------------------------

MEDIUM = {  # rule → one answer that fires it, and nothing else
    "SLOW-PATCHING": {"CHG-03": 31},
    "SLOW-NOTIFICATION": {"INC-05": 73},
    "NO-IMPACT-TRACEABILITY": {"INC-06": "no"},
    "NO-AUDIT-RIGHTS": {"GOV-02": "no"},
    "NO-ISOLATION-DOCS": {"ISO-04": "no"},
    "NO-GATEWAY-LIMIT": {"CTX-06": "no"},
    "NO-KV-INTEGRITY-CHECKS": {"KV-03": "no"},
}
LOW = {
    "ENGINE-NOT-PINNED": {"CHG-01": "no"},
    "NO-STAGED-ROLLOUT": {"CHG-04": "no"},
    "NO-DISCLOSURE-PROGRAMME": {"ISO-06": "no"},
    "NO-STATUS-PAGE": {"INC-07": "no"},
    "NO-UPSTREAM-DISCLOSURE": {"INC-08": "no"},
    "SUBPROCESSORS-UNDISCLOSED": {"GOV-04": "no"},
}
HIGH = {
    "NO-OUTPUT-CONSISTENCY-TESTS": {"ISO-01": "no"},
    "NO-CONFIG-AUDIT": {"CHG-02": "no"},
    "CAPACITY-NOT-VERIFIED": {"CTX-04": "not_verified"},
    "OVERSIZE-NOT-REJECTED": {"CTX-05": "unknown"},
    "SHARED-PREFIX-CACHE": {"KV-05": "shared_across_tenants"},
    "REJECTION-PATH-UNTESTED": {"KV-08": "no"},
    "NO-PROCESSOR-CLAUSES": {"GOV-03": "no"},
}
CRITICAL = {"KV-POOL-BELOW-CONTEXT": {"CTX-02": 681_280}}


def pick(table: Mapping[str, Mapping[str, Any]], count: int) -> dict[str, Mapping[str, Any]]:
    assert count <= len(table)
    return dict(list(table.items())[:count])


def scenario(*groups: Mapping[str, Mapping[str, Any]]) -> tuple[dict[str, Any], set[str]]:
    overrides: dict[str, Any] = {}
    rules: set[str] = set()
    for group in groups:
        for rule_id, answers in group.items():
            overrides.update(answers)
            rules.add(rule_id)
    return overrides, rules


# (name, rule groups, expected tier, what the case pins). With the spec's points
# (critical 40, high 15, medium 5, low 1).
TIER_SCENARIOS = [
    ("one low rule", (pick(LOW, 1),), "low"),
    ("six low rules: score 6", (pick(LOW, 6),), "low"),
    ("one medium and four low: score 9", (pick(MEDIUM, 1), pick(LOW, 4)), "low"),
    ("two medium: score 10", (pick(MEDIUM, 2),), "medium"),
    ("five medium and four low: score 29", (pick(MEDIUM, 5), pick(LOW, 4)), "medium"),
    ("six medium, no high rule: score 30", (pick(MEDIUM, 6),), "high"),
    ("seven medium: score 35", (pick(MEDIUM, 7),), "high"),
    ("one high rule alone: score 15", (pick(HIGH, 1),), "high"),
    ("seven high rules: capped at 100", (pick(HIGH, 7),), "high"),
    ("one critical rule: score 40", (CRITICAL,), "critical"),
    ("critical with everything: capped at 100", (CRITICAL, HIGH, MEDIUM, LOW), "critical"),
]


@pytest.mark.parametrize(
    ("groups", "tier"),
    [(groups, tier) for _, groups, tier in TIER_SCENARIOS],
    ids=[name for name, _, _ in TIER_SCENARIOS],
)
def test_score_and_tier(groups, tier, questionnaire, engine, ruleset):
    overrides, rules = scenario(*groups)
    result = score(questionnaire, engine, overrides)
    assert result.fired_rule_ids == rules
    assert result.risk_score == expected_score(ruleset, rules)
    assert isinstance(result.risk_score, int)
    assert 0 <= result.risk_score <= 100
    assert result.risk_tier == tier
    assert result.to_dict()["risk_score"] == result.risk_score
    assert result.to_dict()["risk_tier"] == tier


def test_score_thresholds_with_the_spec_points(ruleset):
    """The tier scenarios above were chosen for the spec's points; pin the sums they rely on."""
    assert expected_score(ruleset, pick(MEDIUM, 6)) == 30
    assert expected_score(ruleset, {*pick(MEDIUM, 5), *pick(LOW, 4)}) == 29
    assert expected_score(ruleset, pick(MEDIUM, 2)) == 10
    assert expected_score(ruleset, {*pick(MEDIUM, 1), *pick(LOW, 4)}) == 9
    assert sum(ruleset.points["high"] for _ in HIGH) > 100


# -- per-section coverage ------------------------------------------------------------------------


def section_totals() -> dict[str, int]:
    totals: dict[str, int] = {}
    for rule_id in SPEC_RULES:
        totals[section_of(rule_id)] = totals.get(section_of(rule_id), 0) + 1
    return totals


def check_coverage(result) -> None:
    totals = section_totals()
    fired: dict[str, int] = {}
    for finding in result.findings:
        assert finding.section == section_of(finding.rule_id), finding.rule_id
        fired[finding.section] = fired.get(finding.section, 0) + 1
    assert set(result.sections) == set(totals)
    for section, total in totals.items():
        expected = 1 - fired.get(section, 0) / total
        assert result.sections[section].coverage == pytest.approx(expected, abs=1e-4), section
        assert result.to_dict()["sections"][section]["coverage"] == pytest.approx(
            expected, abs=1e-4
        )


def test_section_coverage_of_the_launch_fixture(questionnaire, engine):
    import json

    document = json.loads((EXAMPLES / "incident-2026-launch.json").read_text(encoding="utf-8"))
    clean = validate_answers(questionnaire, document["answers"], document.get("comments"))
    result = engine.score(clean.values, as_of=AS_OF)
    assert result.findings
    check_coverage(result)
    assert any(result.sections[s].coverage < 1 for s in result.sections)


def test_section_coverage_with_two_ctx_rules_fired(questionnaire, engine):
    result = score(questionnaire, engine, {"CTX-04": "not_verified", "CTX-06": "no"})
    assert result.fired_rule_ids == {"CAPACITY-NOT-VERIFIED", "NO-GATEWAY-LIMIT"}
    check_coverage(result)
    assert result.sections["CTX"].coverage == pytest.approx(
        1 - 2 / section_totals()["CTX"], abs=1e-4
    )
