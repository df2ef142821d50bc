"""The probe's result: what `manage.py probe` prints, what a probe run stores, and what the
findings page, the PDF and ruleset v2 read.

`ProbeResult.to_dict()` is exactly the JSON of probe.md (`endpoint`, `model`,
`declared_context`, `checks`, `tokens_spent`, `started`, `finished`, and in each check the
fields listed there), plus figures a report needs: per check `requests`, `tokens_spent` and,
when inconclusive, `reason`; the canary hits' `excerpt`; per-sample TTFTs; the probe's settings.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

OVERSIZE, CANARY, PREFIX_CACHE = "oversize", "canary", "prefix_cache"
CHECKS = (OVERSIZE, CANARY, PREFIX_CACHE)
INCONCLUSIVE = "inconclusive"
# The results each check can give (probe.md); ruleset v2 reads them as probe.<check>.
OUTCOMES = {
    OVERSIZE: ("rejected", "accepted", "overclaimed", INCONCLUSIVE),
    CANARY: ("leak", "clean", INCONCLUSIVE),
    PREFIX_CACHE: ("shared", "isolated", "no_cache_seen", INCONCLUSIVE),
}


@dataclass(frozen=True)
class PromptOutcome:
    """One sized prompt of the oversize check. `prompt_tokens` is the endpoint's count: its
    usage.prompt_tokens, or the count its refusal states (`measured`), else the probe's
    estimate. `target_tokens` is the size the probe aimed at; `percent_of_declared` is
    prompt_tokens against the declared context."""

    prompt_tokens: int
    status: int | None
    measured: bool
    error: str | None = None
    target_tokens: int = 0
    percent_of_declared: float | None = None


@dataclass(frozen=True)
class _Check:
    """What every check reports: its result, why when inconclusive, and what it cost."""

    result: str
    reason: str | None = field(default=None, kw_only=True)
    requests: int = field(default=0, kw_only=True)
    tokens_spent: int = field(default=0, kw_only=True)

    def to_dict(self) -> dict[str, Any]:
        return {
            "result": self.result,
            **self._figures(),
            "reason": self.reason,
            "requests": self.requests,
            "tokens_spent": self.tokens_spent,
        }

    def _figures(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass(frozen=True)
class OversizeResult(_Check):
    """`overclaimed`: the ~90 % prompt was refused as too long; `served_context` is the
    largest prompt the endpoint accepted (its own count), found by bisection, and
    `limit_stated` the limit its refusal named (None when it named none)."""

    below: PromptOutcome | None = None
    above: PromptOutcome | None = None
    served_context: int | None = None
    limit_stated: int | None = None
    bisection_requests: int = 0

    def _figures(self) -> dict[str, Any]:
        return {
            "below": asdict(self.below) if self.below else None,
            "above": asdict(self.above) if self.above else None,
            "served_context": self.served_context,
            "limit_stated": self.limit_stated,
            "bisection_requests": self.bisection_requests,
        }


@dataclass(frozen=True)
class CanaryHit:
    canary: str
    response: str  # whose response, which pair: "B#2" is tenant B's answer in pair 2
    offset: int  # character offset of the canary in that response
    excerpt: str  # the response around the canary
    owner: str  # the tenant whose prompt carried the canary
    field: str = "content"  # the answer's text field: content, reasoning_content or reasoning


@dataclass(frozen=True)
class CanaryResult(_Check):
    pairs: int = 0
    hits: tuple[CanaryHit, ...] = ()
    canaries_sent: int = 0
    tokens_between_canaries: float | None = None
    failed_requests: int = 0

    def _figures(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "hits": [asdict(hit) for hit in self.hits],
            "canaries_sent": self.canaries_sent,
            "tokens_between_canaries": self.tokens_between_canaries,
            "failed_requests": self.failed_requests,
        }


@dataclass(frozen=True)
class TimingSamples:
    """Times to first token (ms) of the "hit" candidates and of the fresh-prefix controls."""

    hit: tuple[float, ...] = ()
    miss: tuple[float, ...] = ()

    def to_dict(self) -> dict[str, list[float]]:
        return {"hit": list(self.hit), "miss": list(self.miss)}

    def medians(self) -> dict[str, int | None]:
        return {"hit": _median_ms(self.hit), "miss": _median_ms(self.miss)}

    def hit_miss_ratio(self) -> float | None:
        """Median hit time over median miss time: well under 1 when hits come from a cache."""
        if not self.hit or not self.miss or statistics.median(self.miss) <= 0:
            return None
        return round(statistics.median(self.hit) / statistics.median(self.miss), 4)


@dataclass(frozen=True)
class PrefixCacheResult(_Check):
    """`samples` is the number used per design (sequential sampling stops at a verdict),
    `max_samples` the most it could use, `looks` how many times the tests were made.
    `p_cross_slower_than_same` is the third test: cross-tenant hits slower than same-tenant
    hits. `prefix_tokens` is the prefixes' length as the endpoint counted it."""

    samples: int = 0
    max_samples: int = 0
    looks: int = 0
    p_cross_tenant: float | None = None
    p_same_tenant: float | None = None
    p_cross_slower_than_same: float | None = None
    cross_tenant: TimingSamples = field(default_factory=TimingSamples)
    same_tenant: TimingSamples = field(default_factory=TimingSamples)
    prefix_tokens: int = 0

    def _figures(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "max_samples": self.max_samples,
            "looks": self.looks,
            "p_cross_tenant": self.p_cross_tenant,
            "p_same_tenant": self.p_same_tenant,
            "p_cross_slower_than_same": self.p_cross_slower_than_same,
            "median_hit_miss_ratio": {
                "cross_tenant": self.cross_tenant.hit_miss_ratio(),
                "same_tenant": self.same_tenant.hit_miss_ratio(),
            },
            "median_ttft_ms": self.cross_tenant.medians(),
            "median_ttft_ms_same_tenant": self.same_tenant.medians(),
            "ttft_ms": {
                "cross_tenant": self.cross_tenant.to_dict(),
                "same_tenant": self.same_tenant.to_dict(),
            },
            "prefix_tokens": self.prefix_tokens,
        }


CheckResult = OversizeResult | CanaryResult | PrefixCacheResult


@dataclass(frozen=True)
class ProbeResult:
    """`endpoint` is the normalised base URL; `served_model` the model the endpoint named in
    its answers (None when it named none); `tokens_measured` whether every token counted in
    `tokens_spent` is the endpoint's own count rather than the probe's estimate."""

    endpoint: str
    model: str
    declared_context: int
    checks: dict[str, CheckResult]
    tokens_spent: int
    requests_sent: int
    started: str  # ISO 8601 UTC, "2026-12-03T10:00:00Z"
    finished: str
    tokens_per_filler_unit: float | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    served_model: str | None = None
    tokens_measured: bool = True
    template_tokens: int | None = None  # the chat template's fixed overhead, calibrated

    def to_dict(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "model": self.model,
            "served_model": self.served_model,
            "declared_context": self.declared_context,
            "checks": {name: check.to_dict() for name, check in self.checks.items()},
            "tokens_spent": self.tokens_spent,
            "tokens_measured": self.tokens_measured,
            "requests_sent": self.requests_sent,
            "started": self.started,
            "finished": self.finished,
            "tokens_per_filler_unit": self.tokens_per_filler_unit,
            "template_tokens": self.template_tokens,
            "settings": dict(self.settings),
        }


def result_outcomes(document: Mapping[str, Any] | None) -> dict[str, str]:
    """`{check: result}` of a stored result JSON: what ruleset v2 reads as probe.<check>."""
    if not document:
        return {}
    return {name: check["result"] for name, check in document.get("checks", {}).items()}


def _median_ms(values: tuple[float, ...]) -> int | None:
    return round(statistics.median(values)) if values else None
