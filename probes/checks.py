"""The probe's three checks, as probe.md and its second edition (probe-v2.md) describe them.
Pure: an endpoint client in, a check result out.

Each check works out what it will cost from the calibrated tokens per filler unit and gives
`inconclusive` without sending anything when the budget cannot cover it; the client checks the
budget again before every single request.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from scipy.stats import mannwhitneyu

from . import prompts
from .client import TEXT_FIELDS, BudgetExceeded, ChatClient, Reply, TimeLimitReached
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
SIGNIFICANCE = 0.01  # α
FAR_FROM_SIGNIFICANT = 0.05
# `isolated` needs the control to show the cache at α/10: an endpoint whose own cache barely
# shows cannot tell us that another tenant's requests did not use it. The third test (B's hits
# slower than A's) is held to α/10 too, stricter than probe-v2.md's α (so it still meets it):
# on a shared cache B's and A's hits come from one cache and differ only by chance, and at α
# chance alone called 1 of 1,000 random shared caches `isolated`; at α/10, 5 of 10,000 very
# noisy ones (tests/probes/test_verdicts.py). A real per-tenant cache separates B's hits from
# A's as clearly as the control does, so nothing is lost.
CONTROL_STRICTNESS = 10
FIRST_LOOK_SAMPLES, SAMPLES_PER_LOOK = 10, 5
# With fewer samples a one-sided Mann-Whitney U test cannot reach p < 0.01 even when every hit
# is faster than every miss (n = 5: p = 1/252).
MIN_SAMPLES = 5
MIN_PREFIX_TOKENS = 1024
# The nonce at the front of each prefix costs a few tokens more than the filler.
NONCE_TOKENS = 32
NOT_ENOUGH_EVIDENCE = "not enough evidence either way after {samples} samples"

_STOPPED = (BudgetExceeded, TimeLimitReached)


@dataclass(frozen=True)
class Tenant:
    label: str  # "A" or "B"
    key: ApiKey


@dataclass(frozen=True)
class CheckContext:
    """What calibration learnt: a prompt of u filler units costs about
    `template_tokens + u * tokens_per_unit` tokens at this endpoint."""

    client: ChatClient
    declared_context: int
    tokens_per_unit: float
    tenant_a: Tenant | None  # None: the endpoint refused this tenant's key
    tenant_b: Tenant | None
    template_tokens: float = 0.0
    largest_accepted: int = 0  # the largest prompt (tokens) the endpoint has answered

    def units_for(self, target_tokens: float, tokens_per_unit: float | None = None) -> int:
        """The filler units of a prompt of about `target_tokens` tokens."""
        per_unit = tokens_per_unit or self.tokens_per_unit
        return max(1, round((target_tokens - self.template_tokens) / per_unit))

    def estimate(self, units: int, tokens_per_unit: float | None = None) -> int:
        per_unit = tokens_per_unit or self.tokens_per_unit
        return math.ceil(self.template_tokens + units * per_unit)

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
    incident), `overclaimed` when already the ~90 % prompt is refused as too long (the endpoint
    serves less than it declares; bisection finds how much), `inconclusive` on 5xx, timeouts
    and refusals that are not about the prompt."""
    tenant = context.tenant_a or context.tenant_b
    if tenant is None:
        return OversizeResult(INCONCLUSIVE, reason=_refused_tenants(context))
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
            reason=_budget_reason(below_estimate + above_estimate, client.budget.remaining),
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
    except _STOPPED as stop:
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
                reason = "the bisection stopped: " + _budget_reason(
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
    except _STOPPED as stop:
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
                responses.append((f"{tenant.label}#{pair}", tenant.label, reply.texts))
                answered += reply.ok
                failed += not reply.ok
                if not reply.ok:
                    last_failure = f"tenant {tenant.label}: {reply.describe()}"
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


class _CheckFailed(Exception):
    pass


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


@dataclass(frozen=True)
class Sample:
    """One sample of both designs: times to first token in ms, unrounded."""

    cross_hit: float
    cross_miss: float
    same_hit: float
    same_miss: float


@dataclass(frozen=True)
class PrefixCacheTests:
    """The three one-sided Mann-Whitney U tests of probe-v2.md."""

    p_cross_tenant: float  # B's hits (A warmed) faster than B's misses
    p_same_tenant: float  # A's hits (A warmed) faster than A's misses: the control
    p_cross_slower_than_same: float  # B's hits slower than A's hits


def planned_looks(max_samples: int) -> tuple[int, ...]:
    """The sample counts at which the tests are made: 10, 15, 20, ... up to the maximum
    (which is always a look), or just the maximum when it is below 10."""
    first = min(FIRST_LOOK_SAMPLES, max_samples)
    looks = list(range(first, max_samples + 1, SAMPLES_PER_LOOK))
    if looks[-1] != max_samples:
        looks.append(max_samples)
    return tuple(looks)


def alpha_per_look(max_samples: int) -> float:
    """α split evenly over the planned looks (Bonferroni). Looking at the data again and again
    gives chance more tries at a small p-value; with α/K at each of K planned looks, the chance
    that any look crosses a threshold by chance is at most α whatever the looks' correlation.
    Conservative next to a group-sequential boundary, but it needs no tables and no library
    beyond scipy, and a stop forced by the budget or the time limit can take the place of the
    next planned look without spending more than α."""
    return SIGNIFICANCE / len(planned_looks(max_samples))


def _p_less(smaller: Sequence[float], larger: Sequence[float]) -> float:
    """One-sided Mann-Whitney U: are the values of `smaller` smaller than those of `larger`?
    Exact where there are no ties (times are unrounded, so ties are rare), else the normal
    approximation with scipy's tie correction."""
    tied = len(set(smaller) | set(larger)) < len(smaller) + len(larger)
    method = "asymptotic" if tied else "exact"
    return float(mannwhitneyu(smaller, larger, alternative="less", method=method).pvalue)


def prefix_cache_tests(cross: TimingSamples, same: TimingSamples) -> PrefixCacheTests:
    return PrefixCacheTests(
        p_cross_tenant=_p_less(cross.hit, cross.miss),
        p_same_tenant=_p_less(same.hit, same.miss),
        p_cross_slower_than_same=_p_less(same.hit, cross.hit),
    )


def prefix_cache_verdict(tests: PrefixCacheTests, *, alpha: float) -> str | None:
    """The verdict of one look at level `alpha`, or None to sample on.

    `shared` first: when B's hits are faster, nothing else matters. `isolated` only when the
    three tests agree: the control shows a cache (p < α/10), B's hits are slower than A's
    (p < α/10), and the cross-tenant test is far from significant. A shared cache gives B the same hits A gets,
    so the third test cannot pass on one except by chance (α). `no_cache_seen` when neither
    design is anywhere near significant."""
    if tests.p_cross_tenant < alpha:
        return "shared"
    if (
        tests.p_same_tenant < alpha / CONTROL_STRICTNESS
        and tests.p_cross_slower_than_same < alpha / CONTROL_STRICTNESS
        and tests.p_cross_tenant >= FAR_FROM_SIGNIFICANT
    ):
        return "isolated"
    if tests.p_cross_tenant >= FAR_FROM_SIGNIFICANT and tests.p_same_tenant >= FAR_FROM_SIGNIFICANT:
        return "no_cache_seen"
    return None


@dataclass(frozen=True)
class SequentialRun:
    result: str
    cross_tenant: TimingSamples
    same_tenant: TimingSamples
    looks: int
    tests: PrefixCacheTests | None
    reason: str | None


def prefix_cache_sequential(draw: Callable[[], Sample], *, max_samples: int) -> SequentialRun:
    """Draw samples until a look gives a verdict or `max_samples` is reached. `draw` sends one
    sample's six requests (or makes up timings, in tests); it may raise BudgetExceeded or
    TimeLimitReached (then one last look is made with the samples so far, in place of the next
    planned one) or _CheckFailed (inconclusive, no look)."""
    looks = planned_looks(max_samples)
    alpha = alpha_per_look(max_samples)
    taken: list[Sample] = []
    made, tests, result = 0, None, None
    stopped: str | None = None

    def timings() -> tuple[TimingSamples, TimingSamples]:
        return (
            TimingSamples(tuple(s.cross_hit for s in taken), tuple(s.cross_miss for s in taken)),
            TimingSamples(tuple(s.same_hit for s in taken), tuple(s.same_miss for s in taken)),
        )

    try:
        for look_at in looks:
            while len(taken) < look_at:
                taken.append(draw())
            made += 1
            tests = prefix_cache_tests(*timings())
            result = prefix_cache_verdict(tests, alpha=alpha)
            if result is not None:
                break
    except _STOPPED as stop:
        stopped = str(stop)
        if len(taken) >= MIN_SAMPLES and made < len(looks):
            made += 1
            tests = prefix_cache_tests(*timings())
            result = prefix_cache_verdict(tests, alpha=alpha)
    except _CheckFailed as failure:
        cross, same = timings()
        return SequentialRun(INCONCLUSIVE, cross, same, made, tests, str(failure))
    cross, same = timings()
    if result is not None:
        return SequentialRun(result, cross, same, made, tests, None)
    reason = NOT_ENOUGH_EVIDENCE.format(samples=len(taken))
    if stopped:
        reason += f" (stopped: {stopped})"
    return SequentialRun(INCONCLUSIVE, cross, same, made, tests, reason)


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
            reason=_refused_tenants(context),
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
            reason=_budget_reason(needed, client.budget.remaining),
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
                raise _CheckFailed(f"a warming request failed ({warm.describe()})")
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
        raise _CheckFailed(f"a timed request ({kind}) failed ({reply.describe()})")
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
