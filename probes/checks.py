"""The probe's three checks, as probe.md and its second edition (probe-v2.md) describe them:
the requests each sends and what their replies mean. Pure: an endpoint client in, a check
result out.

Each check works out what it will cost from the calibrated tokens per filler unit and gives
`inconclusive` without sending anything when the budget cannot cover it; the client checks the
budget again before every single request. What a check is given is in `probes.check_context`;
the prefix cache's statistics, which decide its verdict, in `probes.prefix_cache_statistics`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping

from . import prompts
from .check_context import (
    STOPPED,
    CheckContext,
    CheckFailed,
    Tenant,
    budget_reason,
    refused_tenants_reason,
)
from .client import TEXT_FIELDS, ChatClient, Reply
from .prefix_cache_statistics import FIRST_LOOK_SAMPLES, Sample, prefix_cache_sequential
from .result import (
    INCONCLUSIVE,
    CanaryHit,
    CanaryResult,
    OversizeResult,
    PrefixCacheResult,
    PromptOutcome,
)

# Oversize: prompts of about 90 % and 110 % of the declared context, one token back. When the
# ~90 % prompt is refused as too long, at most six more prompts bisect for the largest one the
# endpoint serves, stopping once it is known to within 1 %.
BELOW_SHARE, ABOVE_SHARE = 0.90, 1.10
BISECTION_REQUESTS = 6
BISECTION_PRECISION = 0.01
# Canary echo: tenant A's prompts are about half the context, tenant B's about 90 % (where the
# incident's pool ran out); B asks for "the document above" back.
CANARY_A_SHARE, CANARY_B_SHARE = 0.50, 0.90
CANARY_PAIRS = 3
CANARY_CALIBRATION_SEGMENTS = 8
# Enough generated text to carry several whole canaries if another tenant's prompt comes back.
CANARY_MAX_TOKENS = 512
EXCERPT_CHARS = 80
# Prefix cache: per sample and design, the measuring tenant sends a fresh prefix (the miss),
# the warming tenant sends prefix P, the measuring tenant sends P (the hit): nothing between a
# warm-up and its hit, so an engine with one cache slot still keeps P. The cross-tenant design
# (A warms, B measures) and the same-tenant control (A warms, A measures) alternate sample by
# sample: six prefix-sized prompts per sample.
PROMPTS_PER_SAMPLE = 6
MIN_PREFIX_TOKENS = 1024
# The nonce at the front of each prefix costs a few tokens more than the filler.
NONCE_TOKENS = 32


# -- oversize ------------------------------------------------------------------------------


def check_oversize(context: CheckContext) -> OversizeResult:
    """`rejected` when the ~110 % prompt gets a 4xx, `accepted` when it gets a 2xx (the
    incident), `overclaimed` when already the ~90 % prompt is refused as too long (the endpoint
    serves less than it declares; bisection finds how much), `inconclusive` on 5xx, timeouts
    and refusals that are not about the prompt."""
    tenant = context.tenant_a or context.tenant_b
    if tenant is None:
        return OversizeResult(INCONCLUSIVE, reason=refused_tenants_reason(context))
    client = context.client
    declared = context.declared_context
    below_target = round(BELOW_SHARE * declared)
    above_target = round(ABOVE_SHARE * declared)
    below_units = context.units_for(below_target)
    below_estimate = context.estimate(below_units)
    above_estimate = math.ceil(above_target * 1.05)
    if below_estimate + above_estimate > client.budget.remaining:
        return OversizeResult(
            INCONCLUSIVE,
            reason=budget_reason(below_estimate + above_estimate, client.budget.remaining),
        )
    below_outcome: PromptOutcome | None = None
    try:
        below = _send_sized(context, tenant, below_units, below_estimate)
        below_outcome = _outcome(below, below_estimate, below_target, declared)
        if below.rejected_prompt:
            return _bisect_served_context(context, tenant, below, below_outcome)
        if not below.ok:
            return OversizeResult(
                INCONCLUSIVE,
                below=below_outcome,
                reason=f"the ~90 % prompt failed ({below.describe()})",
            )
        # The 90 % prompt's own usage is a far larger sample than the calibration.
        tokens_per_unit = context.tokens_per_unit
        if below.prompt_tokens and below.prompt_tokens > context.template_tokens:
            tokens_per_unit = (below.prompt_tokens - context.template_tokens) / below_units
        above_units = context.units_for(above_target, tokens_per_unit)
        above_estimate = context.estimate(above_units, tokens_per_unit)
        above = _send_sized(context, tenant, above_units, above_estimate)
    except STOPPED as stop:
        return OversizeResult(INCONCLUSIVE, below=below_outcome, reason=str(stop))
    above_outcome = _outcome(above, above_estimate, above_target, declared)
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


def _bisect_served_context(
    context: CheckContext, tenant: Tenant, below: Reply, below_outcome: PromptOutcome
) -> OversizeResult:
    """The ~90 % prompt was refused as too long: the endpoint serves less than it declares.
    Bisect between the largest prompt it answered and the smallest it refused, trying just
    under a limit the refusal states first; at most BISECTION_REQUESTS prompts, within the
    budget. `served_context` is the largest prompt answered, as the endpoint counted it."""
    limit = below.limit_stated
    accepted = context.largest_accepted
    refused = below.counted_tokens or below_outcome.prompt_tokens
    if limit is not None and accepted < limit < refused:
        # Taken at its word until a prompt under it is refused.
        refused = limit + 1
    requests, reason = 0, None
    try:
        while requests < BISECTION_REQUESTS and refused - accepted > max(
            1, BISECTION_PRECISION * refused
        ):
            if requests == 0 and limit is not None and accepted < limit < refused:
                target = limit - max(2, math.ceil(BISECTION_PRECISION * limit / 2))
            else:
                target = (accepted + refused) // 2
            units = context.units_for(target)
            estimate = context.estimate(units)
            if estimate > context.client.budget.remaining:
                reason = "the bisection stopped: " + budget_reason(
                    estimate, context.client.budget.remaining
                )
                break
            reply = _send_sized(context, tenant, units, estimate)
            requests += 1
            size = reply.counted_tokens or estimate
            if reply.ok:
                accepted = max(accepted, size)
            elif reply.rejected_prompt:
                refused = min(refused, size)
            else:
                reason = f"the bisection stopped: a prompt failed ({reply.describe()})"
                break
    except STOPPED as stop:
        reason = f"the bisection stopped: {stop}"
    return OversizeResult(
        "overclaimed",
        below=below_outcome,
        served_context=accepted or None,
        limit_stated=limit,
        bisection_requests=requests,
        reason=reason,
    )


def _send_sized(context: CheckContext, tenant: Tenant, units: int, estimate: int) -> Reply:
    return context.client.complete(
        key=tenant.key,
        tenant=tenant.label,
        prompt=prompts.calibration_prompt(units),
        estimate_tokens=estimate,
        max_tokens=1,
    )


def _outcome(reply: Reply, estimate: int, target: int, declared: int) -> PromptOutcome:
    """A sized prompt's outcome: its size as the endpoint counted it (usage, or the count its
    refusal states), else the estimate, marked not measured."""
    counted = reply.counted_tokens
    tokens = counted if counted is not None else estimate
    return PromptOutcome(
        prompt_tokens=tokens,
        status=reply.status,
        measured=counted is not None,
        error=None if reply.ok else reply.describe(),
        target_tokens=target,
        percent_of_declared=round(100 * tokens / declared, 1),
    )


# -- canary echo ---------------------------------------------------------------------------


def check_canary(context: CheckContext, *, pairs_wanted: int = CANARY_PAIRS) -> CanaryResult:
    """Tenant A's long prompts carry fresh canaries; interleaved with them tenant B sends
    prompts of ~90 % of the context asking for "the document above". `leak` when any response
    carries the other tenant's canary (searched both ways), else `clean`."""
    tenants = context.both_tenants()
    if tenants is None:
        return CanaryResult(INCONCLUSIVE, reason=refused_tenants_reason(context))
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
            reason=budget_reason(calibration_estimate + one_pair, client.budget.remaining),
        )

    sent: dict[str, set[str]] = {"A": set(), "B": set()}
    responses: list[tuple[str, str, Mapping[str, str]]] = []  # (label, tenant, texts by field)
    pairs_tried = pairs_answered = failed = 0
    last_failure: str | None = None
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
        responses.append(("A#0", "A", reply.texts))
        if not reply.ok or not reply.prompt_tokens:
            failed += not reply.ok
            raise CheckFailed(f"the canary calibration prompt failed ({reply.describe()})")
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
            raise CheckFailed(budget_reason(pair_cost, client.budget.remaining))
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
                responses.append((f"{tenant.label}#{pair}", tenant.label, reply.texts))
                answered += reply.ok
                failed += not reply.ok
                if not reply.ok:
                    last_failure = f"tenant {tenant.label}: {reply.describe()}"
            pairs_answered += answered == 2
    except CheckFailed as failure:
        reason = str(failure)
    except STOPPED as stop:
        reason = str(stop)

    hits = tuple(_find_canaries(responses, sent))
    if hits:
        result = "leak"
    elif pairs_answered:
        result = "clean"
    else:
        result = INCONCLUSIVE
        reason = reason or "no request pair was answered" + (
            f" (last failure, {last_failure})" if last_failure else ""
        )
    return CanaryResult(
        result,
        pairs=pairs_tried,
        hits=hits,
        canaries_sent=len(sent["A"]) + len(sent["B"]),
        tokens_between_canaries=round(tokens_per_segment, 1) if tokens_per_segment else None,
        failed_requests=failed,
        reason=reason,
    )


def _find_canaries(
    responses: list[tuple[str, str, Mapping[str, str]]], sent: dict[str, set[str]]
) -> list[CanaryHit]:
    """Every canary of one tenant found in any text field of a response to the other."""
    hits: list[CanaryHit] = []
    for label, tenant, texts in responses:
        other = "B" if tenant == "A" else "A"
        for text_field in TEXT_FIELDS:
            text = texts.get(text_field, "")
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
                            field=text_field,
                        )
                    )
    return hits


# -- prefix cache --------------------------------------------------------------------------


def check_prefix_cache(
    context: CheckContext, *, samples: int, prefix_tokens: int
) -> PrefixCacheResult:
    """Gu et al. (ICML 2025): a prefix another tenant just sent answers measurably faster
    when the cache is shared. Per sample and design: the measuring tenant's fresh prefix
    (miss), the warming tenant's prefix P, the measuring tenant's P (hit); across tenants
    (A warms, B measures) and within one (A warms, A measures: the control), sampled
    sequentially up to `samples` (probe-v2.md)."""
    tenants = context.both_tenants()
    if tenants is None:
        return PrefixCacheResult(
            INCONCLUSIVE,
            max_samples=samples,
            prefix_tokens=prefix_tokens,
            reason=refused_tenants_reason(context),
        )
    tenant_a, tenant_b = tenants
    client = context.client
    sizer = _PrefixSizer(context, prefix_tokens)
    first = min(samples, FIRST_LOOK_SAMPLES)
    needed = PROMPTS_PER_SAMPLE * first * sizer.estimate()
    if needed > client.budget.remaining:
        return PrefixCacheResult(
            INCONCLUSIVE,
            max_samples=samples,
            prefix_tokens=prefix_tokens,
            reason=budget_reason(needed, client.budget.remaining),
        )
    designs = (("cross", tenant_a, tenant_b), ("same", tenant_a, tenant_a))

    def draw() -> Sample:
        times: dict[str, tuple[float, float]] = {}
        for design, warmer, measurer in designs:
            units, estimate = sizer.units, sizer.estimate()
            miss_reply, miss = _timed(
                client, measurer, prompts.random_prefix(units), estimate, "miss"
            )
            sizer.measured(miss_reply, units)
            prefix = prompts.random_prefix(units)
            warm = _stream(client, warmer, prefix, estimate)
            if not warm.ok:
                raise CheckFailed(f"a warming request failed ({warm.describe()})")
            _hit_reply, hit = _timed(client, measurer, prefix, estimate, "hit")
            times[design] = (hit, miss)
        return Sample(*times["cross"], *times["same"])

    run = prefix_cache_sequential(draw, max_samples=samples)
    tests = run.tests
    return PrefixCacheResult(
        run.result,
        samples=len(run.cross_tenant.hit),
        max_samples=samples,
        looks=run.looks,
        p_cross_tenant=tests.p_cross_tenant if tests else None,
        p_same_tenant=tests.p_same_tenant if tests else None,
        p_cross_slower_than_same=tests.p_cross_slower_than_same if tests else None,
        cross_tenant=run.cross_tenant,
        same_tenant=run.same_tenant,
        prefix_tokens=sizer.reported(),
        reason=run.reason,
    )


class _PrefixSizer:
    """Sizes the prefixes from the calibration, then from the endpoint's count of each miss
    (a fresh prefix of the same units as the hit that follows): `reported` is the median
    measured length."""

    def __init__(self, context: CheckContext, target: int) -> None:
        self.context = context
        self.target = target
        self.units = context.units_for(target - NONCE_TOKENS)
        self.counted: list[int] = []

    def estimate(self) -> int:
        return self.context.estimate(self.units) + NONCE_TOKENS

    def measured(self, reply: Reply, units: int) -> None:
        if reply.prompt_tokens is None:
            return
        self.counted.append(reply.prompt_tokens)
        correction = (self.target - reply.prompt_tokens) / self.context.tokens_per_unit
        self.units = max(1, units + round(correction))

    def reported(self) -> int:
        return round(statistics.median(self.counted)) if self.counted else self.target


def _timed(
    client: ChatClient, tenant: Tenant, prompt: str, estimate: int, kind: str
) -> tuple[Reply, float]:
    reply = _stream(client, tenant, prompt, estimate)
    if not reply.ok or reply.ttft_ms is None:
        raise CheckFailed(f"a timed request ({kind}) failed ({reply.describe()})")
    return reply, reply.ttft_ms


def _stream(client: ChatClient, tenant: Tenant, prompt: str, estimate: int) -> Reply:
    return client.complete(
        key=tenant.key,
        tenant=tenant.label,
        prompt=prompt,
        estimate_tokens=estimate,
        max_tokens=1,
        stream=True,
    )
