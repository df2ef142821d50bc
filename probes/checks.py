"""The probe's three checks, exactly as probe.md describes them. Pure: an endpoint client in, a
check result out.

Each check works out what it will cost from the calibrated tokens per filler unit and gives
`inconclusive` without sending anything when the budget cannot cover it; the client checks the
budget again before every single request.
"""

from __future__ import annotations

import math
import random
import secrets
from dataclasses import dataclass

from scipy.stats import mannwhitneyu

from . import prompts
from .client import BudgetExceeded, ChatClient, Reply, TimeLimitReached
from .endpoint import ApiKey
from .result import (
    INCONCLUSIVE,
    CanaryHit,
    CanaryResult,
    OversizeResult,
    PrefixCacheResult,
    PromptOutcome,
    TimingSamples,
)

# Oversize: prompts of about 90 % and 110 % of the declared context, one token back.
BELOW_SHARE, ABOVE_SHARE = 0.90, 1.10
# Canary echo: tenant A's prompts are about half the context, tenant B's about 90 % (where the
# incident's pool ran out); B asks for "the document above" back.
CANARY_A_SHARE, CANARY_B_SHARE = 0.50, 0.90
CANARY_PAIRS = 3
CANARY_CALIBRATION_SEGMENTS = 8
# Enough generated text to carry several whole canaries if another tenant's prompt comes back.
CANARY_MAX_TOKENS = 512
EXCERPT_CHARS = 80
# Prefix cache: per sample, A warms a prefix, B sends it and a fresh one; then the same with A
# in B's place (the same-tenant positive control). Six prefix-sized prompts per sample.
PROMPTS_PER_SAMPLE = 6
SIGNIFICANCE = 0.01
# With fewer samples a one-sided Mann-Whitney U test cannot reach p < 0.01 even when every hit
# is faster than every miss (n = 5: p = 1/252).
MIN_SAMPLES = 5
MIN_PREFIX_TOKENS = 1024

_STOPPED = (BudgetExceeded, TimeLimitReached)


@dataclass(frozen=True)
class Tenant:
    label: str  # "A" or "B"
    key: ApiKey


@dataclass(frozen=True)
class CheckContext:
    client: ChatClient
    declared_context: int
    tokens_per_unit: float
    tenant_a: Tenant | None  # None: the endpoint refused this tenant's key
    tenant_b: Tenant | None

    def estimate(self, units: int, tokens_per_unit: float | None = None) -> int:
        return math.ceil(units * (tokens_per_unit or self.tokens_per_unit))

    def both_tenants(self) -> tuple[Tenant, Tenant] | None:
        if self.tenant_a is None or self.tenant_b is None:
            return None
        return self.tenant_a, self.tenant_b


def _refused_tenants(context: CheckContext) -> str:
    refused = [t for t, tenant in (("A", context.tenant_a), ("B", context.tenant_b)) if not tenant]
    return (
        f"needs both test tenants; the endpoint refused the key of tenant {' and '.join(refused)}"
    )


def _budget_reason(needed: int, remaining: int) -> str:
    return (
        f"not sent: the check needs about {needed:,} prompt tokens and the budget has "
        f"{remaining:,} left"
    )


# -- oversize ------------------------------------------------------------------------------


def check_oversize(context: CheckContext) -> OversizeResult:
    """`rejected` when the ~110 % prompt gets a 4xx, `accepted` when it gets a 2xx (the
    incident), `inconclusive` when even the ~90 % prompt fails, or on 5xx and timeouts."""
    tenant = context.tenant_a or context.tenant_b
    if tenant is None:
        return OversizeResult(INCONCLUSIVE, reason=_refused_tenants(context))
    client = context.client
    target_below = BELOW_SHARE * context.declared_context
    below_units = max(1, round(target_below / context.tokens_per_unit))
    below_estimate = context.estimate(below_units)
    above_estimate = math.ceil(ABOVE_SHARE * context.declared_context * 1.05)
    if below_estimate + above_estimate > client.budget.remaining:
        return OversizeResult(
            INCONCLUSIVE,
            reason=_budget_reason(below_estimate + above_estimate, client.budget.remaining),
        )
    below_outcome: PromptOutcome | None = None
    try:
        below = _send_sized(context, tenant, below_units, below_estimate)
        below_outcome = _outcome(below, below_estimate)
        if not below.ok:
            return OversizeResult(
                INCONCLUSIVE,
                below=below_outcome,
                reason=f"the ~90 % prompt already failed ({below.describe()})",
            )
        # The 90 % prompt's own usage is a far larger sample than the calibration.
        tokens_per_unit = (
            below.prompt_tokens / below_units if below.prompt_tokens else context.tokens_per_unit
        )
        above_units = math.ceil(ABOVE_SHARE * context.declared_context / tokens_per_unit)
        above_estimate = context.estimate(above_units, tokens_per_unit)
        above = _send_sized(context, tenant, above_units, above_estimate)
    except _STOPPED as stop:
        return OversizeResult(INCONCLUSIVE, below=below_outcome, reason=str(stop))
    above_outcome = _outcome(above, above_estimate)
    if above.ok:
        return OversizeResult("accepted", below=below_outcome, above=above_outcome)
    if above.rejected_prompt:
        return OversizeResult("rejected", below=below_outcome, above=above_outcome)
    return OversizeResult(
        INCONCLUSIVE,
        below=below_outcome,
        above=above_outcome,
        reason=f"the ~110 % prompt got neither a 2xx nor a 4xx rejection ({above.describe()})",
    )


def _send_sized(context: CheckContext, tenant: Tenant, units: int, estimate: int) -> Reply:
    return context.client.complete(
        key=tenant.key,
        tenant=tenant.label,
        prompt=prompts.calibration_prompt(units),
        estimate_tokens=estimate,
        max_tokens=1,
    )


def _outcome(reply: Reply, estimate: int) -> PromptOutcome:
    return PromptOutcome(
        prompt_tokens=reply.prompt_tokens if reply.prompt_tokens is not None else estimate,
        status=reply.status,
        measured=reply.prompt_tokens is not None,
        error=None if reply.ok else reply.describe(),
    )


# -- canary echo ---------------------------------------------------------------------------


def check_canary(context: CheckContext, *, pairs_wanted: int = CANARY_PAIRS) -> CanaryResult:
    """Tenant A's long prompts carry fresh canaries; interleaved with them tenant B sends
    prompts of ~90 % of the context asking for "the document above". `leak` when any response
    carries the other tenant's canary (searched both ways), else `clean`."""
    tenants = context.both_tenants()
    if tenants is None:
        return CanaryResult(INCONCLUSIVE, reason=_refused_tenants(context))
    tenant_a, tenant_b = tenants
    client = context.client
    segment_units = prompts.segment_filler_units(context.tokens_per_unit)
    # Until measured, a canary counts one token per character (no tokenizer does worse).
    segment_estimate = segment_units * context.tokens_per_unit + len(prompts.canary_new())
    calibration_estimate = math.ceil(CANARY_CALIBRATION_SEGMENTS * segment_estimate) + 32
    one_pair = math.ceil((CANARY_A_SHARE + CANARY_B_SHARE) * context.declared_context)
    if calibration_estimate + one_pair > client.budget.remaining:
        return CanaryResult(
            INCONCLUSIVE,
            reason=_budget_reason(calibration_estimate + one_pair, client.budget.remaining),
        )

    sent: dict[str, set[str]] = {"A": set(), "B": set()}
    responses: list[tuple[str, str, str]] = []  # (label, tenant, text)
    pairs_tried = pairs_answered = failed = 0
    tokens_per_segment: float | None = None
    reason: str | None = None
    try:
        calibration = prompts.canary_document(
            segments=CANARY_CALIBRATION_SEGMENTS, tokens_per_unit=context.tokens_per_unit
        )
        sent["A"].update(calibration.canaries)
        reply = client.complete(
            key=tenant_a.key,
            tenant="A",
            prompt=calibration.text,
            estimate_tokens=calibration_estimate,
            max_tokens=1,
        )
        responses.append(("A#0", "A", reply.text))
        if not reply.ok or not reply.prompt_tokens:
            failed += not reply.ok
            raise _CheckFailed(f"the canary calibration prompt failed ({reply.describe()})")
        tokens_per_segment = reply.prompt_tokens / CANARY_CALIBRATION_SEGMENTS
        segments = {
            "A": max(1, round(CANARY_A_SHARE * context.declared_context / tokens_per_segment)),
            "B": max(1, round(CANARY_B_SHARE * context.declared_context / tokens_per_segment)),
        }
        estimates = {label: math.ceil(n * tokens_per_segment) + 32 for label, n in segments.items()}
        pair_cost = estimates["A"] + estimates["B"]
        affordable = client.budget.remaining // pair_cost
        pairs = min(pairs_wanted, affordable)
        if pairs == 0:
            raise _CheckFailed(_budget_reason(pair_cost, client.budget.remaining))
        if pairs < pairs_wanted:
            reason = f"the budget allowed {pairs} of {pairs_wanted} pairs"
        for pair in range(1, pairs + 1):
            pairs_tried += 1
            answered = 0
            for tenant in (tenant_a, tenant_b):
                document = prompts.canary_document(
                    segments=segments[tenant.label], tokens_per_unit=context.tokens_per_unit
                )
                sent[tenant.label].update(document.canaries)
                reply = client.complete(
                    key=tenant.key,
                    tenant=tenant.label,
                    prompt=document.text,
                    estimate_tokens=estimates[tenant.label],
                    max_tokens=CANARY_MAX_TOKENS,
                )
                responses.append((f"{tenant.label}#{pair}", tenant.label, reply.text))
                answered += reply.ok
                failed += not reply.ok
            pairs_answered += answered == 2
    except _CheckFailed as failure:
        reason = str(failure)
    except _STOPPED as stop:
        reason = str(stop)

    hits = tuple(_find_canaries(responses, sent))
    if hits:
        result = "leak"
    elif pairs_answered:
        result = "clean"
    else:
        result = INCONCLUSIVE
        reason = reason or "no request pair was answered"
    return CanaryResult(
        result,
        pairs=pairs_tried,
        hits=hits,
        canaries_sent=len(sent["A"]) + len(sent["B"]),
        tokens_between_canaries=round(tokens_per_segment, 1) if tokens_per_segment else None,
        failed_requests=failed,
        reason=reason,
    )


class _CheckFailed(Exception):
    pass


def _find_canaries(
    responses: list[tuple[str, str, str]], sent: dict[str, set[str]]
) -> list[CanaryHit]:
    """Every canary of one tenant found in a response to the other."""
    hits: list[CanaryHit] = []
    for label, tenant, text in responses:
        other = "B" if tenant == "A" else "A"
        for match in prompts.CANARY_PATTERN.finditer(text):
            if match.group() in sent[other]:
                start = max(0, match.start() - EXCERPT_CHARS)
                hits.append(
                    CanaryHit(
                        canary=match.group(),
                        response=label,
                        offset=match.start(),
                        excerpt=text[start : match.end() + EXCERPT_CHARS],
                        owner=other,
                    )
                )
    return hits


# -- prefix cache --------------------------------------------------------------------------


def check_prefix_cache(
    context: CheckContext, *, samples: int, prefix_tokens: int
) -> PrefixCacheResult:
    """Gu et al. (ICML 2025): a prefix another tenant just sent answers measurably faster
    when the cache is shared. One-sided Mann-Whitney U of hit vs fresh-prefix TTFTs, across
    tenants (A warms, B measures) and within one (A warms, A measures: the positive control)."""
    tenants = context.both_tenants()
    if tenants is None:
        return PrefixCacheResult(
            INCONCLUSIVE, prefix_tokens=prefix_tokens, reason=_refused_tenants(context)
        )
    tenant_a, tenant_b = tenants
    client = context.client
    units = math.ceil(prefix_tokens / context.tokens_per_unit)
    # The nonce at the front of each prefix costs a few tokens more.
    estimate = context.estimate(units) + 32
    per_sample = PROMPTS_PER_SAMPLE * estimate
    n = min(samples, client.budget.remaining // per_sample)
    if n < MIN_SAMPLES:
        needed = per_sample * min(samples, MIN_SAMPLES)
        return PrefixCacheResult(
            INCONCLUSIVE,
            prefix_tokens=prefix_tokens,
            reason=_budget_reason(needed, client.budget.remaining),
        )
    # per design, (hit, miss) times to first token in ms
    timings: dict[str, tuple[list[float], list[float]]] = {"cross": ([], []), "same": ([], [])}
    shuffler = random.Random(secrets.randbits(64))
    designs = (("cross", tenant_a, tenant_b), ("same", tenant_a, tenant_a))
    reason = None
    try:
        for _sample in range(n):
            for design, warmer, measurer in designs:
                prefix = prompts.random_prefix(units)
                warm = _stream(client, warmer, prefix, estimate)
                if not warm.ok:
                    raise _CheckFailed(f"a warming request failed ({warm.describe()})")
                order = [("hit", prefix), ("miss", None)]
                shuffler.shuffle(order)
                for kind, text in order:
                    reply = _stream(
                        client, measurer, text or prompts.random_prefix(units), estimate
                    )
                    if not reply.ok or reply.ttft_ms is None:
                        raise _CheckFailed(f"a timed request failed ({reply.describe()})")
                    hits, misses = timings[design]
                    (hits if kind == "hit" else misses).append(round(reply.ttft_ms, 1))
    except _CheckFailed as failure:
        reason = str(failure)
    except _STOPPED as stop:
        reason = str(stop)
    cross = TimingSamples(tuple(timings["cross"][0]), tuple(timings["cross"][1]))
    same = TimingSamples(tuple(timings["same"][0]), tuple(timings["same"][1]))
    complete = min(len(cross.hit), len(cross.miss), len(same.hit), len(same.miss))
    if reason is not None:
        return PrefixCacheResult(
            INCONCLUSIVE,
            samples=complete,
            cross_tenant=cross,
            same_tenant=same,
            prefix_tokens=prefix_tokens,
            reason=reason,
        )
    p_cross = _p_faster(cross)
    p_same = _p_faster(same)
    if p_cross < SIGNIFICANCE:
        result = "shared"
    elif p_same < SIGNIFICANCE:
        result = "isolated"
    else:
        result = "no_cache_seen"
    return PrefixCacheResult(
        result,
        samples=n,
        p_cross_tenant=p_cross,
        p_same_tenant=p_same,
        cross_tenant=cross,
        same_tenant=same,
        prefix_tokens=prefix_tokens,
    )


def _stream(client: ChatClient, tenant: Tenant, prompt: str, estimate: int) -> Reply:
    return client.complete(
        key=tenant.key,
        tenant=tenant.label,
        prompt=prompt,
        estimate_tokens=estimate,
        max_tokens=1,
        stream=True,
    )


def _p_faster(timing: TimingSamples) -> float:
    """One-sided: are cache-hit candidates faster (smaller TTFT) than fresh prefixes?"""
    return float(mannwhitneyu(timing.hit, timing.miss, alternative="less").pvalue)
