"""One probe from start to finish: validate the set-up, reach the endpoint with both keys,
calibrate, run the chosen checks. The one implementation behind `manage.py probe` and the
Celery task (`probes.services.runs.probe_run_execute`). Pure: no ORM, no Celery.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from core.outbound import OutboundPolicy

from . import checks as probe_checks
from . import prompts
from .check_context import CheckContext, Tenant
from .client import Budget, BudgetExceeded, ChatClient, Reply, TimeLimitReached
from .endpoint import ApiKey, ProbeInputError, endpoint_validate, gettext_noop
from .prefix_cache_statistics import MIN_SAMPLES
from .result import (
    CANARY,
    CHECKS,
    INCONCLUSIVE,
    OVERSIZE,
    PREFIX_CACHE,
    CanaryResult,
    CheckResult,
    OversizeResult,
    PrefixCacheResult,
    ProbeResult,
)

logger = logging.getLogger(__name__)

DEFAULT_SAMPLES = 40  # the most per design: sequential sampling stops at a verdict
DEFAULT_PREFIX_TOKENS = 4096
DEFAULT_BUDGET_TOKENS = 3_000_000
DEFAULT_RATE_PER_KEY = 2.0
DEFAULT_TIMEOUT_S = 900
# Room for a >= 1,024-token prefix and for canaries spread through half the context.
MIN_DECLARED_CONTEXT = 2048
MAX_DECLARED_CONTEXT = 100_000_000
MAX_MODEL_NAME = 200
# Two calibration prompts of different lengths: their difference is the cost of a filler unit,
# what is left of the short one the chat template's fixed overhead.
CALIBRATION_UNITS = (100, 500)
SAME_KEYS_MESSAGE = gettext_noop(
    "The two keys are the same: they must belong to two different test tenants."
)


class ProbeUnreachable(Exception):
    """The endpoint cannot be reached, or it refuses both keys (the command exits 3)."""


@dataclass(frozen=True)
class ProbeConfig:
    base_url: str
    model: str
    declared_context: int
    key_a: ApiKey
    key_b: ApiKey
    checks: tuple[str, ...] = CHECKS
    samples: int = DEFAULT_SAMPLES
    prefix_tokens: int = DEFAULT_PREFIX_TOKENS
    budget_tokens: int = DEFAULT_BUDGET_TOKENS
    rate_per_key: float = DEFAULT_RATE_PER_KEY
    timeout_s: float = DEFAULT_TIMEOUT_S
    outbound: OutboundPolicy = OutboundPolicy()  # where the client may connect (core.outbound)

    def settings(self) -> dict[str, Any]:
        """The set-up as a report shows it (never the keys)."""
        return {
            "checks": list(self.checks),
            "samples": self.samples,
            "prefix_tokens": self.prefix_tokens,
            "budget_tokens": self.budget_tokens,
            "rate_per_key": self.rate_per_key,
            "timeout_s": self.timeout_s,
        }

    def planned_requests(self) -> int:
        """About how many requests the probe sends (for a progress bar)."""
        planned = planned_cost(
            declared_context=self.declared_context,
            checks=self.checks,
            samples=self.samples,
            prefix_tokens=self.prefix_tokens,
        )
        return sum(cost.requests for cost in planned.values())


@dataclass(frozen=True)
class PlannedCost:
    requests: int
    prompt_tokens: int  # about: the probe sizes prompts from its calibration


CALIBRATION = "calibration"
# One small request per key; the canary check sizes its canary blocks with one more.
CALIBRATION_TOKENS = 4 * sum(CALIBRATION_UNITS)
CANARY_CALIBRATION_TOKENS = 1100


# The refusals of the run options below the minimums (probes.api states them in the schema).
TOO_FEW_SAMPLES = gettext_noop(
    "At least 5 samples: with fewer, no timing difference can be significant at p < 0.01."
)
TOO_SHORT_PREFIX = gettext_noop("At least 1,024 tokens: the smallest prefix that providers cache.")


def planned_cost(
    *, declared_context: int, checks: Sequence[str], samples: int, prefix_tokens: int
) -> dict[str, PlannedCost]:
    """What the probe will send, check by check (and its calibration), for a declared context
    C: oversize 0.9 C + 1.1 C; canary p pairs of 0.5 C + 0.9 C; prefix cache six prefixes per
    sample, up to the maximum of samples (sequential sampling usually stops well before). What
    the vendor is told before authorising, and the progress bar's total. An endpoint that
    refuses the 0.9 C prompt (it serves less than it declares) gets no 1.1 C prompt but up to
    BISECTION_REQUESTS prompts each smaller than 0.9 C; the token budget bounds every case."""
    pairs = probe_checks.CANARY_PAIRS
    every = {
        OVERSIZE: PlannedCost(
            2,
            round((probe_checks.BELOW_SHARE + probe_checks.ABOVE_SHARE) * declared_context),
        ),
        CANARY: PlannedCost(
            1 + 2 * pairs,
            CANARY_CALIBRATION_TOKENS
            + round(
                pairs
                * (probe_checks.CANARY_A_SHARE + probe_checks.CANARY_B_SHARE)
                * declared_context
            ),
        ),
        PREFIX_CACHE: PlannedCost(
            probe_checks.PROMPTS_PER_SAMPLE * samples,
            probe_checks.PROMPTS_PER_SAMPLE * samples * prefix_tokens,
        ),
    }
    return {
        CALIBRATION: PlannedCost(2, CALIBRATION_TOKENS),
        **{name: every[name] for name in CHECKS if name in checks},
    }


def target_problems(*, model: str, declared_context: object) -> dict[str, list[str]]:
    """What is wrong with the model name and declared context (shared with the services)."""
    errors: dict[str, list[str]] = {}
    if not (model or "").strip():
        errors["model"] = [gettext_noop("The model name is required.")]
    elif len(model) > MAX_MODEL_NAME:
        errors["model"] = [gettext_noop("The model name is longer than 200 characters.")]
    if not isinstance(declared_context, int) or isinstance(declared_context, bool):
        errors["declared_context"] = [
            gettext_noop("The declared context must be a whole number of tokens.")
        ]
    elif not MIN_DECLARED_CONTEXT <= declared_context <= MAX_DECLARED_CONTEXT:
        errors["declared_context"] = [
            gettext_noop("The declared context must be between 2,048 and 100,000,000 tokens.")
        ]
    return errors


def options_problems(
    *,
    checks: Sequence[str],
    samples: int,
    prefix_tokens: int,
    budget_tokens: int,
    rate_per_key: float = DEFAULT_RATE_PER_KEY,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> dict[str, list[str]]:
    """What is wrong with how the probe is asked to run (shared with the services)."""
    errors: dict[str, list[str]] = {}
    unknown = [name for name in checks if name not in CHECKS]
    if unknown or not checks:
        errors["checks"] = [gettext_noop("Choose among oversize, canary and prefix_cache.")]
    if samples < MIN_SAMPLES:
        errors["samples"] = [TOO_FEW_SAMPLES]
    if prefix_tokens < probe_checks.MIN_PREFIX_TOKENS:
        errors["prefix_tokens"] = [TOO_SHORT_PREFIX]
    if budget_tokens < 1:
        errors["budget_tokens"] = [gettext_noop("The token budget must be a positive number.")]
    if not rate_per_key > 0:
        errors["rate"] = ["The rate cap must be a positive number of requests per second."]
    if not timeout_s > 0:
        errors["timeout_s"] = ["The time limit must be a positive number of seconds."]
    return errors


def probe_config_build(
    *,
    base_url: str,
    model: str,
    declared_context: int,
    key_a: ApiKey | None,
    key_b: ApiKey | None,
    allow_http: bool,
    outbound: OutboundPolicy,
    checks: Sequence[str] = CHECKS,
    samples: int = DEFAULT_SAMPLES,
    prefix_tokens: int = DEFAULT_PREFIX_TOKENS,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    rate_per_key: float = DEFAULT_RATE_PER_KEY,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> ProbeConfig:
    """A checked ProbeConfig, or ProbeInputError naming every problem by field."""
    errors: dict[str, list[str]] = {}
    try:
        base_url = endpoint_validate(base_url, allow_http=allow_http, policy=outbound)
    except ProbeInputError as exc:
        errors.update(exc.errors)
    errors.update(target_problems(model=model, declared_context=declared_context))
    if key_a is None:
        errors["key_a"] = ["Tenant A's API key is missing."]
    if key_b is None:
        errors["key_b"] = ["Tenant B's API key is missing."]
    if key_a is not None and key_b is not None and key_a.same_as(key_b):
        errors["key_b"] = [SAME_KEYS_MESSAGE]
    errors.update(
        options_problems(
            checks=checks,
            samples=samples,
            prefix_tokens=prefix_tokens,
            budget_tokens=budget_tokens,
            rate_per_key=rate_per_key,
            timeout_s=timeout_s,
        )
    )
    if errors:
        raise ProbeInputError(errors)
    assert key_a is not None and key_b is not None  # noqa: S101 - checked above
    return ProbeConfig(
        base_url=base_url,
        model=model.strip(),
        declared_context=declared_context,
        key_a=key_a,
        key_b=key_b,
        checks=tuple(name for name in CHECKS if name in checks),
        samples=samples,
        prefix_tokens=prefix_tokens,
        budget_tokens=budget_tokens,
        rate_per_key=rate_per_key,
        timeout_s=timeout_s,
        outbound=outbound,
    )


@dataclass(frozen=True)
class ProbeProgress:
    """Where a probe stands, given to `on_progress` before every request and after each check."""

    check: str  # "calibration", a check's name, or "done"
    requests_sent: int
    requests_planned: int
    tokens_spent: int
    checks_done: tuple[str, ...] = ()

    @property
    def percent(self) -> int:
        if self.check == "done":
            return 100
        return min(99, math.floor(100 * self.requests_sent / max(1, self.requests_planned)))


ProgressCallback = Callable[[ProbeProgress], None]


def probe_run(config: ProbeConfig, *, on_progress: ProgressCallback | None = None) -> ProbeResult:
    """Run the probe. Raises ProbeUnreachable when no check can be done at all (the endpoint
    is unreachable or refuses both keys); any other failure makes a check `inconclusive`."""
    started = _utc_now()
    planned = config.planned_requests()
    done: list[str] = []

    def report(check: str) -> None:
        if on_progress is not None:
            on_progress(
                ProbeProgress(
                    check=check,
                    requests_sent=client.ledger.requests_sent,
                    requests_planned=planned,
                    tokens_spent=client.budget.spent,
                    checks_done=tuple(done),
                )
            )

    client = ChatClient(
        base_url=config.base_url,
        model=config.model,
        budget=Budget(config.budget_tokens),
        rate_per_key=config.rate_per_key,
        deadline=time.monotonic() + config.timeout_s,
        keys=(config.key_a, config.key_b),
        before_send=lambda: report(client.ledger.current),
        outbound=config.outbound,
    )
    with client:
        context, calibration_problem = _calibrate(client, config)
        results: dict[str, CheckResult] = {}
        for name in config.checks:
            with client.accounting(name):
                if context is None:
                    outcome = _inconclusive(name, calibration_problem or "calibration failed")
                else:
                    outcome = _run_check(name, context, config)
            spent = client.ledger.of(name)
            results[name] = replace(
                outcome, requests=spent["requests"], tokens_spent=spent["tokens_spent"]
            )
            logger.info(
                "probe of %s: %s is %s (%s requests, %s prompt tokens)%s",
                config.base_url,
                name,
                outcome.result,
                results[name].requests,
                results[name].tokens_spent,
                f": {outcome.reason}" if outcome.reason else "",
            )
            done.append(name)
            report(name)
        tokens_per_unit = context.tokens_per_unit if context else None
        template_tokens = round(context.template_tokens) if context else None
        report("done")
    return ProbeResult(
        endpoint=config.base_url,
        model=config.model,
        declared_context=config.declared_context,
        checks=results,
        tokens_spent=client.budget.spent,
        requests_sent=client.ledger.requests_sent,
        started=started,
        finished=_utc_now(),
        tokens_per_filler_unit=round(tokens_per_unit, 4) if tokens_per_unit else None,
        settings=config.settings(),
        served_model=client.served_model,
        tokens_measured=client.ledger.estimated_requests == 0,
        template_tokens=template_tokens,
    )


def _calibrate(client: ChatClient, config: ProbeConfig) -> tuple[CheckContext | None, str | None]:
    """Is the endpoint there, which keys does it accept, and what does a prompt cost? Tenant A
    sends a short calibration prompt and tenant B a long one (when one key is refused, the
    other tenant sends both): the difference of their usage.prompt_tokens is the cost of the
    filler, what remains the chat template's fixed overhead."""
    short_units, long_units = CALIBRATION_UNITS
    replies: dict[str, Reply] = {}
    measured: dict[int, int] = {}  # filler units -> prompt tokens
    try:
        for label, key, units in (
            ("A", config.key_a, short_units),
            ("B", config.key_b, long_units),
        ):
            reply = _calibration_request(client, label, key, units)
            replies[label] = reply
            if label == "A":
                _raise_when_no_endpoint(reply, client, config.model)
            if reply.ok and reply.prompt_tokens:
                measured[units] = reply.prompt_tokens
        if all(reply.key_refused for reply in replies.values()):
            raise ProbeUnreachable(
                "the endpoint refuses both keys "
                f"(A: {replies['A'].describe()}, B: {replies['B'].describe()})"
            )
        for label, key in (("A", config.key_a), ("B", config.key_b)):
            missing = [units for units in CALIBRATION_UNITS if units not in measured]
            if len(missing) == 1 and replies[label].ok:
                reply = _calibration_request(client, label, key, missing[0])
                if reply.ok and reply.prompt_tokens:
                    measured[missing[0]] = reply.prompt_tokens
    except (BudgetExceeded, TimeLimitReached) as stop:
        return None, f"calibration not possible: {stop}"
    if not measured:
        problems = ", ".join(f"{label}: {r.describe()}" for label, r in replies.items())
        return None, (
            "calibration failed: no answer with usage.prompt_tokens, which the probe needs to "
            f"size its prompts ({problems})"
        )
    if len(measured) == 2 and measured[long_units] > measured[short_units]:
        tokens_per_unit = (measured[long_units] - measured[short_units]) / (
            long_units - short_units
        )
        template_tokens = max(0.0, measured[short_units] - short_units * tokens_per_unit)
    else:  # one point: all of it counts as filler (sizes come out a little short)
        units, tokens = max(measured.items())
        tokens_per_unit, template_tokens = tokens / units, 0.0
    tenants = {
        label: Tenant(label, key) if not replies[label].key_refused else None
        for label, key in (("A", config.key_a), ("B", config.key_b))
    }
    return (
        CheckContext(
            client=client,
            declared_context=config.declared_context,
            tokens_per_unit=tokens_per_unit,
            template_tokens=template_tokens,
            tenant_a=tenants["A"],
            tenant_b=tenants["B"],
            largest_accepted=max(measured.values()),
        ),
        None,
    )


def _calibration_request(client: ChatClient, label: str, key: ApiKey, units: int) -> Reply:
    return client.complete(
        key=key,
        tenant=label,
        prompt=prompts.calibration_prompt(units),
        estimate_tokens=units * 4 + 64,  # generous: a unit is one short word
        max_tokens=1,
    )


def _raise_when_no_endpoint(reply: Reply, client: ChatClient, model: str) -> None:
    """The first request tells whether anything answers chat completions at the URL."""
    if reply.status is None:
        raise ProbeUnreachable(f"the endpoint cannot be reached: {reply.describe()}")
    if reply.status == 404:
        if reply.error_code and "model" in reply.error_code:
            raise ProbeUnreachable(
                f"the endpoint at {client.url} does not serve the model {model!r} "
                f"({reply.describe()})"
            )
        raise ProbeUnreachable(f"no chat completions endpoint at {client.url} (check the base URL)")


def _run_check(name: str, context: CheckContext, config: ProbeConfig) -> CheckResult:
    if name == OVERSIZE:
        return probe_checks.check_oversize(context)
    if name == CANARY:
        return probe_checks.check_canary(context)
    return probe_checks.check_prefix_cache(
        context, samples=config.samples, prefix_tokens=config.prefix_tokens
    )


def _inconclusive(name: str, reason: str) -> CheckResult:
    kind = {OVERSIZE: OversizeResult, CANARY: CanaryResult, PREFIX_CACHE: PrefixCacheResult}[name]
    return kind(INCONCLUSIVE, reason=reason)


def _utc_now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
