"""The probe's set-up and its cost as people read them, on the vendor's probe page and the
assessor's. (The probe's result is read by `assessments.presenters.probe`, which the findings
page and the PDF share.) Strings in the active language; what people typed is `verbatim`."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _

from assessments.presenters.probe import CHECK_TITLES, Figure, ProbeCostRow
from core.formats import format_datetime, format_number, format_tokens

from .models import ProbeSetup
from .result import CHECKS
from .runner import CALIBRATION, planned_cost
from .services.setup import tokens_spent_under


@dataclass(frozen=True)
class CostPlan:
    """What a probe with the default settings sends for a declared context, check by check."""

    rows: tuple[ProbeCostRow, ...]
    requests: str
    tokens: str
    samples: int
    prefix_tokens: str
    rate_per_key: str
    time_limit_minutes: int
    budget_tokens: str


def cost_plan(declared_context: int, checks: tuple[str, ...] = CHECKS) -> CostPlan:
    plan = planned_cost(
        declared_context=declared_context,
        checks=checks,
        samples=settings.PROBE_SAMPLES,
        prefix_tokens=settings.PROBE_PREFIX_TOKENS,
    )
    titles = {CALIBRATION: _("Calibration (one small request per key)"), **CHECK_TITLES}
    return CostPlan(
        rows=tuple(
            ProbeCostRow(
                title=str(titles[name]),
                requests=format_number(cost.requests),
                tokens=format_number(cost.prompt_tokens),
            )
            for name, cost in plan.items()
        ),
        requests=format_number(sum(cost.requests for cost in plan.values())),
        tokens=format_number(sum(cost.prompt_tokens for cost in plan.values())),
        samples=settings.PROBE_SAMPLES,
        prefix_tokens=format_number(settings.PROBE_PREFIX_TOKENS),
        rate_per_key=f"{settings.PROBE_RATE_PER_KEY:g}",
        time_limit_minutes=max(1, settings.PROBE_TIMEOUT_S // 60),
        budget_tokens=format_number(settings.PROBE_BUDGET_TOKENS),
    )


def setup_facts(setup: ProbeSetup) -> list[Figure]:
    """A saved set-up and its authorisation read back (never the keys); what was typed is
    `verbatim`."""
    language = translation.get_language() or settings.LANGUAGE_CODE
    return [
        Figure(_("Endpoint"), setup.base_url, verbatim=True),
        Figure(_("Model name"), setup.model_name, verbatim=True),
        Figure(_("Declared context"), format_tokens(setup.declared_context, language)),
        Figure(_("Signed by"), setup.signer_name, verbatim=True),
        Figure(_("Spend ceiling"), format_tokens(setup.spend_ceiling_tokens, language)),
        Figure(_("Spent so far"), format_tokens(tokens_spent_under(setup), language)),
        Figure(_("Authorised from"), format_datetime(setup.window_starts_at, language)),
        Figure(_("Authorised until"), format_datetime(setup.window_ends_at, language)),
        Figure(_("Saved"), format_datetime(setup.entered_at, language)),
    ]
