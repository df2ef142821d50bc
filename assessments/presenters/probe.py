"""The isolation probe's result as a reader reads it — the one presenter of the findings page's
probe panel, the assessor's probe page and the PDF's probe chapter.

It reads the probe's result JSON (`probe.md` of the shared spec; what a probe run stores and what PRB-02 evidence
holds) and resolves it into strings in the reader's language: what was sent and spent, each
check's outcome with its figures (both prompt sizes and statuses, the canary hits with the
vendor's text around them, the p-values and median times to first token, charted), and how to
read it. Vendor text (excerpts, the probe's own reasons) is only ever passed on as plain text,
for the templates to escape. The endpoint is shown without any user name or password, and
nothing here ever sees a key.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django.utils import translation
from django.utils.translation import gettext, gettext_lazy
from django.utils.translation import gettext as _

from core.formats import EMPTY, format_datetime, format_number, format_tokens
from scoring.evidence import probe_outcome_label

from .charts import BarChart, ChartValue, bar_chart
from .evidence import Sentence

OVERSIZE, CANARY, PREFIX_CACHE = "oversize", "canary", "prefix_cache"
CHECK_ORDER = (OVERSIZE, CANARY, PREFIX_CACHE)
# Outcomes that mean the endpoint failed the check (the incident's behaviours; `overclaimed`:
# it serves less context than the vendor declared, the incident's advertised-versus-served gap).
FAILED_OUTCOMES = {"accepted", "overclaimed", "leak", "shared"}
PASSED_OUTCOMES = {"rejected", "clean", "isolated"}
HIT_COLOUR = "#8F1D21"
MISS_COLOUR = "#5B6472"
CONTROL_HIT_COLOUR = "#0B5CAD"
# The significance level of the probe's tests (the shared spec's probe-v2.md): what "measurably" means below.
ALPHA = 0.01
# The checks' names as people read them (the probe's own names are codes: oversize, …).
CHECK_TITLES = {
    OVERSIZE: gettext_lazy("Oversized prompts"),
    CANARY: gettext_lazy("Cross-tenant echo"),
    PREFIX_CACHE: gettext_lazy("Cross-tenant prefix cache"),
}


@dataclass(frozen=True)
class Figure:
    """A labelled figure of the result; `verbatim` marks the probe's own (English) words."""

    label: str
    value: str
    verbatim: bool = False


@dataclass(frozen=True)
class CanaryHitView:
    """A canary found in the other tenant's answer, with that answer's text around it."""

    response: str  # "B#2": tenant B's answer in pair 2
    owner: str  # the tenant whose prompt carried the canary
    offset: str
    field: str  # the response field it came in ("content", "reasoning_content"), or ""
    canary: str
    before: str  # the response's text before the canary (vendor text: escaped when shown)
    after: str


@dataclass(frozen=True)
class ProbeCheckView:
    name: str  # oversize | canary | prefix_cache
    title: str
    result: str  # the outcome code ruleset v2 reads as probe.<name>
    result_label: str
    status: str  # "failed" | "passed" | "undecided": how the page colours it
    summary: str  # the outcome in one short sentence, for the findings page's summary
    meaning: str  # what the outcome means, in a sentence
    reason: Sentence | None  # why it is inconclusive (the probe's words)
    figures: tuple[Figure, ...]
    hits: tuple[CanaryHitView, ...] = ()
    chart: BarChart | None = None
    chart_title: str = ""


@dataclass(frozen=True)
class ProbeCostRow:
    title: str
    requests: str
    tokens: str


@dataclass(frozen=True)
class ProbeView:
    endpoint: str
    model: str
    served_model: str  # the model the endpoint named in its answers ("" when it named none)
    model_mismatch: bool  # the endpoint answered as another model than the one asked for
    declared_context: str
    started: str
    finished: str
    requests_sent: str
    tokens_spent: str
    checks: tuple[ProbeCheckView, ...]
    costs: tuple[ProbeCostRow, ...]
    how_to_read: tuple[str, ...]
    source_name: str = ""

    @property
    def failed(self) -> tuple[ProbeCheckView, ...]:
        return tuple(check for check in self.checks if check.status == "failed")


def probe_view(document: Mapping[str, Any], language: str, *, source_name: str = "") -> ProbeView:
    """The probe result `document` (the JSON of `manage.py probe`) in `language`."""
    with translation.override(language):
        checks_data = document.get("checks") or {}
        declared = format_tokens(_int(document.get("declared_context")), language)
        checks = tuple(
            _check_view(name, checks_data[name], language, declared=declared)
            for name in CHECK_ORDER
            if isinstance(checks_data.get(name), Mapping)
        )
        costs = tuple(
            ProbeCostRow(
                title=check.title,
                requests=_count(checks_data[check.name].get("requests")),
                tokens=_count(checks_data[check.name].get("tokens_spent")),
            )
            for check in checks
        )
        model = str(document.get("model") or "")
        served_model = str(document.get("served_model") or "")
        return ProbeView(
            endpoint=endpoint_without_credentials(str(document.get("endpoint") or "")),
            model=model,
            served_model=served_model,
            model_mismatch=bool(served_model) and served_model != model,
            declared_context=declared,
            started=_timestamp(document.get("started"), language),
            finished=_timestamp(document.get("finished"), language),
            requests_sent=_count(document.get("requests_sent")),
            tokens_spent=_tokens_spent(document),
            checks=checks,
            costs=costs,
            how_to_read=_how_to_read(),
            source_name=source_name,
        )


def latest_probe_result(evidence_snapshot: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The newest parsed probe result among a scoring run's evidence (what ruleset v2 read as
    probe.X): the stored parse of a PRB-02 file, or None."""
    found = None
    for entry in (evidence_snapshot or {}).values():
        for parsed in (entry or {}).get("files") or ():
            if (
                parsed.get("kind") == "probe_result"
                and parsed.get("parsed")
                and parsed.get("probe")
            ):
                found = parsed
    return found


def probe_view_of_run(
    evidence_snapshot: Mapping[str, Any] | None, language: str
) -> ProbeView | None:
    """The probe result a scoring run read, in `language` (None when it read none)."""
    parsed = latest_probe_result(evidence_snapshot)
    if parsed is None:
        return None
    return probe_view(parsed["probe"], language, source_name=str(parsed.get("source_name") or ""))


def endpoint_without_credentials(url: str) -> str:
    """The endpoint's address without any user name or password it might carry."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return url.rsplit("@", 1)[-1]
    if parts.username is None and parts.password is None:
        return url
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc = f"{netloc}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


# -- each check ----------------------------------------------------------------------------


def _check_view(
    name: str, data: Mapping[str, Any], language: str, *, declared: str
) -> ProbeCheckView:
    result = str(data.get("result") or "")
    reason = data.get("reason")
    common = {
        "name": name,
        "title": str(CHECK_TITLES[name]),
        "result": result,
        "result_label": probe_outcome_label(result, gettext),
        "status": "failed"
        if result in FAILED_OUTCOMES
        else ("passed" if result in PASSED_OUTCOMES else "undecided"),
        "meaning": _meaning(name, result, data),
        "summary": _summary(name, result, data, language, declared),
        "reason": Sentence(str(reason), verbatim=True) if reason else None,
    }
    if name == OVERSIZE:
        return ProbeCheckView(**common, figures=_oversize_figures(data, language))
    if name == CANARY:
        return ProbeCheckView(
            **common, figures=_canary_figures(data), hits=_canary_hits(data.get("hits"))
        )
    chart = _ttft_chart(data)
    return ProbeCheckView(
        **common,
        figures=_prefix_cache_figures(data, language),
        chart=chart,
        chart_title=_("Median time to first token") if chart else "",
    )


def _meaning(name: str, result: str, data: Mapping[str, Any]) -> str:
    meanings = {
        (OVERSIZE, "accepted"): _(
            "The endpoint answered a prompt longer than its declared context with a success "
            "status: the incident's failure, where every oversized request got HTTP 200."
        ),
        (OVERSIZE, "rejected"): _(
            "The endpoint refused the prompt longer than its declared context with a client "
            "error, as it should."
        ),
        (OVERSIZE, "overclaimed"): _(
            "The endpoint refused a prompt of about 90 %% of the context the vendor declared, "
            "because it was too long: it serves less context than the vendor claims, the "
            "incident's gap between advertised and served context."
        ),
        (CANARY, "leak"): _(
            "Text that one test tenant sent came back in the other tenant's answer: a "
            "cross-tenant leak, the incident's failure."
        ),
        (CANARY, "clean"): _(
            "No canary of one tenant appeared in the other tenant's answers over %(pairs)s "
            "request pairs."
        )
        % {"pairs": _count(data.get("pairs"))},
        (PREFIX_CACHE, "shared"): _(
            "Tenant B's prompts were answered measurably faster when tenant A had just sent the "
            "same prefix (p < 0.01): the prefix cache is shared across tenants, so one tenant "
            "can learn what another sent by timing alone."
        ),
        (PREFIX_CACHE, "isolated"): _(
            "The endpoint caches prefixes within a tenant (the same-tenant control is clearly "
            "significant), tenant B's repeats were slower than tenant A's own, and tenant B was "
            "not faster after tenant A had sent the same text: evidence that the cache is kept "
            "to one tenant, the result a buyer wants."
        ),
        (PREFIX_CACHE, "no_cache_seen"): _(
            "Neither the cross-tenant test nor the same-tenant control showed a cache, so the "
            "probe cannot tell whether a cache would be shared."
        ),
    }
    return meanings.get((name, result), _("The check could not decide; the reason is given below."))


def _summary(name: str, result: str, data: Mapping[str, Any], language: str, declared: str) -> str:
    """The outcome in one sentence, with the figure that decides it."""
    if name == OVERSIZE and result == "overclaimed":
        return _("Serves %(served)s of the %(declared)s declared.") % {
            "served": format_tokens(_int(data.get("served_context")), language),
            "declared": declared,
        }
    if name == OVERSIZE and result in ("accepted", "rejected"):
        above = data.get("above") if isinstance(data.get("above"), Mapping) else {}
        status = above.get("status")
        if result == "accepted":
            return _("A prompt over the declared context got HTTP %(status)s.") % {
                "status": status if isinstance(status, int) else "2xx"
            }
        return _("A prompt over the declared context was refused.")
    if name == CANARY and result in ("leak", "clean"):
        hits = len(data.get("hits") or ())
        if result == "leak":
            return _("Canaries of the other tenant that came back: %(hits)s.") % {
                "hits": _count(hits)
            }
        return _("No canary crossed over %(pairs)s request pairs.") % {
            "pairs": _count(data.get("pairs"))
        }
    if name == PREFIX_CACHE and result in ("shared", "isolated", "no_cache_seen"):
        return _("Decided after %(samples)s samples per design.") % {
            "samples": _count(data.get("samples"))
        }
    return _("Not decided: see why below.")


def _oversize_figures(data: Mapping[str, Any], language: str) -> tuple[Figure, ...]:
    figures = []
    for key, share in (("below", "90 %"), ("above", "110 %")):
        label = _("Prompt of about %(share)s of the context") % {"share": share}
        prompt = data.get(key)
        if not isinstance(prompt, Mapping):
            continue
        tokens = format_tokens(_int(prompt.get("prompt_tokens")), language)
        if prompt.get("measured") is False:
            tokens = _("%(tokens)s (the probe's estimate)") % {"tokens": tokens}
        percent = prompt.get("percent_of_declared")
        if _is_number(percent):
            tokens = _("%(tokens)s (%(percent)s %% of the declared context)") % {
                "tokens": tokens,
                "percent": f"{percent:.1f}",
            }
        status = prompt.get("status")
        status_text = (
            _("HTTP %(status)s") % {"status": status}
            if isinstance(status, int)
            else _("no status (the request failed)")
        )
        figures.append(Figure(label=label, value=f"{tokens} · {status_text}"))
    served = _int(data.get("served_context"))
    if served is not None:
        figures.append(
            Figure(
                _("Largest prompt the endpoint accepted (served context)"),
                format_tokens(served, language),
            )
        )
    stated = _int(data.get("limit_stated"))
    if data.get("result") == "overclaimed" or stated is not None:
        figures.append(
            Figure(
                _("Limit stated in the endpoint's refusal"),
                format_tokens(stated, language) if stated is not None else _("none stated"),
            )
        )
    if _int(data.get("bisection_requests")):
        figures.append(
            Figure(_("Requests to find the served context"), _count(data.get("bisection_requests")))
        )
    return tuple(figures)


def _canary_figures(data: Mapping[str, Any]) -> tuple[Figure, ...]:
    figures = [
        Figure(_("Request pairs tried"), _count(data.get("pairs"))),
        Figure(_("Canary hits"), _count(len(data.get("hits") or ()))),
    ]
    if data.get("canaries_sent") is not None:
        figures.append(Figure(_("Canaries sent"), _count(data.get("canaries_sent"))))
    spacing = data.get("tokens_between_canaries")
    if isinstance(spacing, int | float) and not isinstance(spacing, bool):
        figures.append(
            Figure(_("Tokens between canaries"), _("about %(tokens)s") % {"tokens": round(spacing)})
        )
    if data.get("failed_requests"):
        figures.append(Figure(_("Failed requests"), _count(data.get("failed_requests"))))
    return tuple(figures)


def _canary_hits(hits: Any) -> tuple[CanaryHitView, ...]:
    views = []
    for hit in hits or ():
        if not isinstance(hit, Mapping):
            continue
        canary = str(hit.get("canary") or "")
        excerpt = str(hit.get("excerpt") or "")
        before, found, after = excerpt.partition(canary) if canary else (excerpt, "", "")
        if not found:  # an excerpt without the canary in it: shown whole, before the canary
            before, after = excerpt, ""
        views.append(
            CanaryHitView(
                response=str(hit.get("response") or ""),
                owner=str(hit.get("owner") or ""),
                offset=_count(hit.get("offset")),
                field=str(hit.get("field") or ""),
                canary=canary,
                before=before,
                after=after,
            )
        )
    return tuple(views)


def _prefix_cache_figures(data: Mapping[str, Any], language: str) -> tuple[Figure, ...]:
    cross = data.get("median_ttft_ms") or {}
    same = data.get("median_ttft_ms_same_tenant") or {}
    samples = _count(data.get("samples"))
    if _int(data.get("max_samples")):
        samples = _("%(used)s of at most %(maximum)s per design") % {
            "used": samples,
            "maximum": _count(data.get("max_samples")),
        }
    figures = [Figure(_("Samples (n)"), samples)]
    # The three one-sided tests (the shared spec's probe-v2.md), each said as what was, or was not, measured.
    for key, label, measured, not_measured in (
        (
            "p_cross_tenant",
            _("Across tenants (A sends first, B measures)"),
            _("B's requests were faster when A had sent the same text first"),
            _("B's requests were not measurably faster when A had sent the same text first"),
        ),
        (
            "p_same_tenant",
            _("Within a tenant (A sends first, A measures: the control)"),
            _("A's requests were faster when A had sent the same text first"),
            _("A's requests were not measurably faster when A had sent the same text first"),
        ),
        (
            "p_cross_slower_than_same",
            _("Across against within a tenant"),
            _("B's repeats were slower than A's own repeats"),
            _("B's repeats were not measurably slower than A's own repeats"),
        ),
    ):
        # The third test is the second edition's: a first-edition result has no row for it.
        if key in data or key != "p_cross_slower_than_same":
            figures.append(Figure(label, _in_words(data.get(key), measured, not_measured)))
    figures.append(
        Figure(
            _("Median time to first token across tenants, hit vs miss"),
            _hit_vs_miss(cross),
        )
    )
    if same:
        figures.append(
            Figure(_("Median time to first token within a tenant, hit vs miss"), _hit_vs_miss(same))
        )
    ratios = data.get("median_hit_miss_ratio")
    if isinstance(ratios, Mapping):
        for key, label in (
            ("cross_tenant", _("Median hit/miss time ratio across tenants")),
            ("same_tenant", _("Median hit/miss time ratio within a tenant")),
        ):
            if _is_number(ratios.get(key)):
                figures.append(Figure(label, f"{ratios[key]:.2f}"))
    if data.get("prefix_tokens"):
        figures.append(
            Figure(_("Prefix length"), format_tokens(_int(data.get("prefix_tokens")), language))
        )
    return tuple(figures)


def _in_words(p_value: Any, measured: str, not_measured: str) -> str:
    """A one-sided test's p-value as a sentence: what was, or was not, measured (at α)."""
    if not _is_number(p_value):
        return EMPTY
    sentence = measured if p_value < ALPHA else not_measured
    return _("%(sentence)s: %(p)s") % {"sentence": sentence, "p": _p_value(p_value)}


def _ttft_chart(data: Mapping[str, Any]) -> BarChart | None:
    """Median TTFT of hit candidates and fresh prefixes, across tenants and within one."""
    rows = []
    for medians, hit_label, miss_label, hit_colour in (
        (
            data.get("median_ttft_ms") or {},
            _("Across tenants: hit"),
            _("Across tenants: miss"),
            HIT_COLOUR,
        ),
        (
            data.get("median_ttft_ms_same_tenant") or {},
            _("Within a tenant: hit"),
            _("Within a tenant: miss"),
            CONTROL_HIT_COLOUR,
        ),
    ):
        for key, label, colour in (
            ("hit", hit_label, hit_colour),
            ("miss", miss_label, MISS_COLOUR),
        ):
            value = medians.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                rows.append(
                    (
                        f"{key}-{len(rows)}",
                        label,
                        label,
                        [ChartValue(value, _ms(value), "", colour)],
                    )
                )
    if not rows:
        return None
    return bar_chart(rows, maximum=max(row[3][0].value for row in rows) or 1, label_width=190)


def _how_to_read() -> tuple[str, ...]:
    return (
        _(
            "The probe tested the vendor's test endpoint itself, with two test tenants' keys "
            "and the vendor's signed authorisation; it does not rest on the vendor's word."
        ),
        _(
            "Oversized prompts: a prompt of about %(above)s of the declared context must be "
            "refused with a client error (4xx). A success status (2xx) is the incident's "
            "failure. When even a prompt of about %(below)s is refused as too long, the endpoint "
            "serves less than the vendor declared: the probe then finds the largest prompt it "
            "accepts (the served context)."
        )
        % {"above": "110 %", "below": "90 %"},
        _(
            "Cross-tenant echo: tenant A's prompts carry random canaries; tenant B asks for "
            "“the document above” with prompts of about %(share)s of the context. A canary of "
            "one tenant in the other's answer is a leak; the excerpt shows the answer around it. "
            "Every text field of the answers is read, the model's reasoning included."
        )
        % {"share": "90 %"},
        _(
            "Cross-tenant prefix cache: for each sample, the measuring tenant first sends a fresh "
            "text, then the other tenant (or the same one, as a control) sends a new text, and "
            "the measuring tenant sends that text again at once. Three one-sided Mann–Whitney U "
            "tests compare the times to first token: is B faster after A (shared), is A faster "
            "after A (the endpoint caches at all), and is B slower than A after A. The cache is "
            "called isolated only when the control shows a cache, B is slower than A, and B is "
            "not faster at all; samples are added five at a time until the evidence decides."
        ),
        _(
            "An inconclusive check decided nothing (budget, time limit, errors, or not enough "
            "evidence either way): it is neither a pass nor a failure."
        ),
    )


# -- numbers -------------------------------------------------------------------------------


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _tokens_spent(document: Mapping[str, Any]) -> str:
    """Tokens spent, marked as the probe's estimate where the endpoint did not count them."""
    spent = _count(document.get("tokens_spent"))
    if document.get("tokens_measured") is False:
        return _("%(tokens)s (partly the probe's estimate)") % {"tokens": spent}
    return spent


def _count(value: Any) -> str:
    number = _int(value)
    return EMPTY if number is None else format_number(number)


def _p_value(value: Any) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return EMPTY
    if value < 0.0001:
        return "p < 0.0001"
    return f"p = {value:.4f}".rstrip("0").rstrip(".")


def _ms(value: float) -> str:
    return _("%(ms)s ms") % {"ms": format_number(round(value))}


def _hit_vs_miss(medians: Mapping[str, Any]) -> str:
    hit, miss = medians.get("hit"), medians.get("miss")
    if not isinstance(hit, int | float) or not isinstance(miss, int | float):
        return EMPTY
    return _("%(hit)s vs %(miss)s") % {"hit": _ms(hit), "miss": _ms(miss)}


def _timestamp(value: Any, language: str) -> str:
    if not isinstance(value, str) or not value:
        return EMPTY
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    return format_datetime(moment, language)


__all__ = [
    "CHECK_TITLES",
    "CanaryHitView",
    "Figure",
    "ProbeCheckView",
    "ProbeCostRow",
    "ProbeView",
    "endpoint_without_credentials",
    "latest_probe_result",
    "probe_view",
    "probe_view_of_run",
]
