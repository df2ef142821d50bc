"""What every check of the probe is given and how a check stops early. Pure, like the checks.

Calibration (`probes.runner`) builds one `CheckContext`: the client, the declared context and
how many tokens a filler unit costs. The checks (`probes.checks`) and the prefix cache's
sequential sampling (`probes.prefix_cache_statistics`) end early the same ways: the budget or
the time limit runs out (`STOPPED`: what was measured so far still counts), or a request the
check needs fails (`CheckFailed`: inconclusive, with its reason).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .client import BudgetExceeded, ChatClient, TimeLimitReached
from .endpoint import ApiKey

STOPPED = (BudgetExceeded, TimeLimitReached)


class CheckFailed(Exception):
    """A request the check cannot do without failed: the check is inconclusive."""


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


def refused_tenants_reason(context: CheckContext) -> str:
    refused = [t for t, tenant in (("A", context.tenant_a), ("B", context.tenant_b)) if not tenant]
    return (
        f"needs both test tenants; the endpoint refused the key of tenant {' and '.join(refused)}"
    )


def budget_reason(needed: int, remaining: int) -> str:
    return (
        f"not sent: the check needs about {needed:,} prompt tokens and the budget has "
        f"{remaining:,} left"
    )
