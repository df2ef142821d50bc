"""Web pages for members: the dashboard, vendors, assessments (create, follow, findings, sign-off),
vendor links, comparison and evidence downloads.

Every view resolves the organization once (`member_context`) and fetches through the selectors,
so another organization's objects are 404 and a role without the capability gets 403. Writes go
through `assessments.services`; a `ServiceError` comes back as messages beside the fields.

Every page works as plain HTML forms; htmx (served locally by django-htmx) only re-renders parts
of a page: list filters, the vendor's progress while they answer, the questions of another
questionnaire version.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.humanize.templatetags.humanize import intcomma
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Case, Count, F, IntegerField, Q, QuerySet, Value, When
from django.forms import Form
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template import TemplateDoesNotExist
from django.template.loader import select_template
from django.urls import NoReverseMatch, reverse
from django.utils import timezone, translation
from django.utils.formats import date_format
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from django.views.i18n import set_language as django_set_language

from accounts.models import User
from accounts.roles import Capability
from accounts.tenancy import OrgContext, org_context_for_request
from questionnaires.models import QuestionnaireVersion
from questionnaires.spec import Question, QuestionnaireSpec
from questionnaires.validation import (
    AnswerValidationError,
    hidden_codes,
    is_blank,
    missing_required,
)
from scoring.engine import EvidenceItem, EvidenceKind
from scoring.evidence import ENGINE_LABELS
from scoring.models import Framework
from scoring.spec import SEVERITIES, FrameworkRef, RulesetSpec, RuleSpec

from . import forms as web_forms
from . import selectors, services
from .lifecycle import EDITABLE_STATUSES, allowed_events
from .models import (
    Answer,
    Assessment,
    AssessmentStatus,
    Channel,
    EvidenceFile,
    Finding,
    ReviewDecision,
    RiskDecision,
    RiskTier,
    RunStatus,
    ScoringRun,
)
from .portal import describe_parse_result
from .storage import evidence_storage

PAGE_SIZE = 25
# The reports app's block for the assessment page: the agreed name first, then the request form
# that app ships today.
REPORTS_TEMPLATES = ["reports/_assessment_reports.html", "reports/_request_form.html"]
OPEN_STATUSES = (
    AssessmentStatus.DRAFT,
    AssessmentStatus.SENT,
    AssessmentStatus.CHANGES_REQUESTED,
)
CLOSED_STATUSES = (AssessmentStatus.APPROVED, AssessmentStatus.REJECTED)
# How often (seconds) an open page asks whether the vendor or the worker has moved on.
POLL_WHILE_ANSWERING = 10
POLL_WHILE_SCORING = 2


# -- access and language ------------------------------------------------------------------------


def member_context(request: HttpRequest, capability: str = "view") -> OrgContext:
    """The organization the request acts in, with the role's capability checked (403)."""
    context = org_context_for_request(request)
    if context is None:
        raise PermissionDenied
    context.require(capability)
    return context


View = Callable[..., HttpResponse]


def member_page(view: View) -> View:
    """A signed-in member's page, in the member's saved language on a browser that has not
    chosen one yet (the first page after signing in on a new device).

    The language is applied for this response only (`translation.override`) and remembered in
    the language cookie that Django's LocaleMiddleware reads on every later request; nothing is
    kept between requests in the process.
    """

    @login_required
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        preferred = getattr(request.user, "preferred_language", "")
        if (
            settings.LANGUAGE_COOKIE_NAME in request.COOKIES
            or preferred not in dict(settings.LANGUAGES)
            or preferred == translation.get_language()
        ):
            return view(request, *args, **kwargs)
        with translation.override(preferred):
            response = view(request, *args, **kwargs)
        response.headers["Content-Language"] = preferred
        _set_language_cookie(response, preferred)
        return response

    return wrapper


def _set_language_cookie(response: HttpResponse, language: str) -> None:
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME,
        language,
        max_age=settings.LANGUAGE_COOKIE_AGE,
        path=settings.LANGUAGE_COOKIE_PATH,
        domain=settings.LANGUAGE_COOKIE_DOMAIN,
        secure=settings.LANGUAGE_COOKIE_SECURE,
        httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
        samesite=settings.LANGUAGE_COOKIE_SAMESITE,
    )


@require_POST
def set_language(request: HttpRequest) -> HttpResponse:
    """The header's language switch: Django's `set_language` (cookie, safe redirect to `next`),
    and for a signed-in user the choice is also saved as their preferred language."""
    language = request.POST.get("language", "")
    user = request.user
    if (
        user.is_authenticated
        and language in dict(settings.LANGUAGES)
        and language != getattr(user, "preferred_language", language)
    ):
        # A one-column preference of the signed-in user themself; see the README's note on
        # `accounts.services` for where this belongs once that module offers it.
        User.objects.filter(pk=user.pk).update(preferred_language=language)
    return django_set_language(request)


# -- reading helpers (presentation only; tenancy is settled before they are called) --------------


def answer_display(question: Question, value: Any, language: str) -> str:
    """A stored answer as a member reads it: option labels, grouped numbers with their unit,
    dates in the page's language. Blank gives ""."""
    if is_blank(value):
        return ""
    if question.type == "yes_no":
        return str(web_forms.yes_no_labels().get(value, value))
    if question.type in ("choice", "multi_choice"):
        labels = {option.code: option.label.get(language) for option in question.options}
        chosen = value if isinstance(value, list) else [value]
        return ", ".join(labels.get(code, str(code)) for code in chosen)
    if question.type == "integer" and isinstance(value, int):
        unit = question.unit_label.get(language) if question.unit_label else ""
        return f"{intcomma(value)} {unit}".strip()
    if question.type == "date":
        try:
            day = value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))
        except ValueError:
            return str(value)
        return date_format(day, "DATE_FORMAT")
    return str(value)


@dataclass(frozen=True)
class SectionProgress:
    """How far a section is answered: required questions answered of those asked."""

    code: str
    title: str
    answered_by: str
    answered: int
    required: int
    answered_any: int
    asked: int

    @property
    def complete(self) -> bool:
        return self.answered >= self.required

    @property
    def percent(self) -> int:
        return round(100 * self.answered / self.required) if self.required else 100


def section_progress(
    spec: QuestionnaireSpec, values: Mapping[str, Any], evidence_codes: set[str]
) -> list[SectionProgress]:
    hidden = hidden_codes(spec, values)
    missing = set(missing_required(spec, values, evidence_codes=evidence_codes))

    def answered(question: Question) -> bool:
        if question.type == "file":
            return question.code in evidence_codes
        return not is_blank(values.get(question.code))

    rows = []
    for section in spec.sections:
        asked = [q for q in section.questions if q.code not in hidden]
        required = [q for q in asked if q.required]
        rows.append(
            SectionProgress(
                code=section.code,
                title=section.title.get(translation.get_language()),
                answered_by=section.answered_by,
                answered=len([q for q in required if q.code not in missing]),
                required=len(required),
                answered_any=len([q for q in asked if answered(q)]),
                asked=len(asked),
            )
        )
    return rows


@dataclass(frozen=True)
class AnswerRow:
    code: str
    text: str
    display: str
    comment: str
    reopened: bool
    files: list[EvidenceFile]


@dataclass(frozen=True)
class AnswerSection:
    code: str
    title: str
    answered_by: str
    rows: list[AnswerRow]


def answer_sections(
    spec: QuestionnaireSpec,
    values: Mapping[str, Any],
    answers: Iterable[Answer],
    evidence: Iterable[EvidenceFile],
) -> list[AnswerSection]:
    """Every asked question with its answer, comment and files, section by section."""
    language = translation.get_language()
    rows_by_code = {answer.question_code: answer for answer in answers}
    files: dict[str, list[EvidenceFile]] = defaultdict(list)
    for evidence_file in evidence:
        files[evidence_file.question_code].append(evidence_file)
    hidden = hidden_codes(spec, values)
    sections = []
    for section in spec.sections:
        rows = []
        for question in section.questions:
            if question.code in hidden:
                continue
            stored = rows_by_code.get(question.code)
            rows.append(
                AnswerRow(
                    code=question.code,
                    text=question.text.get(language),
                    display=answer_display(question, values.get(question.code), language),
                    comment=stored.comment if stored else "",
                    reopened=bool(stored and stored.reopened),
                    files=files.get(question.code, []),
                )
            )
        sections.append(
            AnswerSection(
                code=section.code,
                title=section.title.get(language),
                answered_by=section.answered_by,
                rows=rows,
            )
        )
    return sections


def evidence_summary(parse_result: Mapping[str, Any]) -> str:
    """One line about an uploaded log in the page's language: the engine, the smallest KV pool
    and the largest context it reports, and where. Unusual results (a failed start, mixed
    engines, nothing found) keep the parser's own description."""
    data = parse_result or {}
    pool, context = data.get("pool"), data.get("context")
    engine = data.get("engine")
    if not data.get("parsed") or pool is None or context is None or engine == "mixed":
        return describe_parse_result(data)
    lines = sorted({n for n in (data.get("pool_line"), data.get("context_line")) if n})
    return _(
        "%(engine)s log: KV pool %(pool)s tokens, context %(context)s tokens (line %(lines)s)"
    ) % {
        "engine": ENGINE_LABELS.get(engine, engine),
        "pool": intcomma(pool),
        "context": intcomma(context),
        "lines": ", ".join(str(n) for n in lines),
    }


@dataclass(frozen=True)
class WhyLine:
    """One line of "why it fired": an answer, a value derived from answers, or a log line."""

    kind: str  # "answer" | "derived" | "log"
    code: str
    label: str
    value: str
    line: int | None = None
    evidence: EvidenceFile | None = None


def why_lines(
    finding: Finding,
    spec: QuestionnaireSpec,
    ruleset: RulesetSpec,
    snapshot: Mapping[str, Any],
    evidence_by_name: Mapping[tuple[str, str], EvidenceFile],
) -> list[WhyLine]:
    """The finding's evidence lines, with each answer shown as the member reads it (from the
    answers the run scored, not today's)."""
    language = translation.get_language()
    lines = []
    for item in map(EvidenceItem.from_dict, finding.evidence):
        if item.kind == EvidenceKind.LOG:
            lines.append(
                WhyLine(
                    kind="log",
                    code=item.code,
                    label=item.file,
                    value=item.text,
                    line=item.line,
                    evidence=evidence_by_name.get((item.code, item.file)),
                )
            )
        elif item.kind == EvidenceKind.ANSWER and (question := spec.questions.get(item.code)):
            display = answer_display(question, snapshot.get(question.code), language)
            lines.append(
                WhyLine(
                    kind="answer",
                    code=question.code,
                    label=question.text.get(language),
                    value=display or _("Not answered"),
                )
            )
        else:
            derived = ruleset.derived_values.get(item.name)
            unit = spec.units.get(derived.unit) if derived and derived.unit else None
            value = intcomma(item.value) if isinstance(item.value, int) else str(item.value)
            lines.append(
                WhyLine(
                    kind="derived",
                    code=item.name or item.code,
                    label=derived.label.get(language) if derived and derived.label else item.name,
                    value=f"{value} {unit.get(language)}" if unit else value,
                )
            )
    return lines


@dataclass
class FindingView:
    row: Finding
    rule: RuleSpec | None
    why: list[WhyLine]
    references: list[FrameworkRef]
    decisions: list[RiskDecision]
    form: Form | None = None
    open_form: bool = False

    @property
    def rule_id(self) -> str:
        return self.row.rule_id

    @property
    def anchor(self) -> str:
        return f"finding-{self.row.rule_id}"


def _reference(ref_id: str, frameworks: Mapping[str, FrameworkRef]) -> FrameworkRef:
    from questionnaires.spec import Text

    return frameworks.get(ref_id) or FrameworkRef(
        id=ref_id, jurisdiction="", family=Text("", ""), title=Text(ref_id, ref_id), confidence="S"
    )


def frameworks_catalogue() -> dict[str, FrameworkRef]:
    """Every citable framework clause (global catalogue data, not tenant data)."""
    return {framework.ref_id: framework.as_ref() for framework in Framework.objects.all()}


@dataclass(frozen=True)
class ScoreExplanation:
    """The formula, applied to one run: points per severity, the sum, the cap and the tier."""

    points: Mapping[str, int]
    counts: Mapping[str, int]
    total: int
    score: int
    tier: str
    tier_reason: str

    @property
    def terms(self) -> list[dict[str, Any]]:
        return [
            {
                "severity": severity,
                "count": self.counts.get(severity, 0),
                "points": self.points[severity],
                "subtotal": self.counts.get(severity, 0) * self.points[severity],
            }
            for severity in SEVERITIES
        ]


def score_explanation(
    run: ScoringRun, ruleset: RulesetSpec, findings: Sequence[Finding]
) -> ScoreExplanation:
    counts = Counter(finding.severity for finding in findings)
    total = sum(ruleset.points[f.severity] for f in findings)
    score = run.risk_score if run.risk_score is not None else min(100, total)
    if counts.get("critical"):
        reason = _("Critical, because at least one critical rule fired.")
    elif counts.get("high"):
        reason = _("High, because at least one high rule fired.")
    elif score >= 30:
        reason = _("High, because the score is 30 or more.")
    elif score >= 10:
        reason = _("Medium, because the score is 10 or more.")
    else:
        reason = _("Low: no critical or high rule fired and the score is below 10.")
    return ScoreExplanation(
        points=ruleset.points,
        counts=counts,
        total=total,
        score=score,
        tier=run.risk_tier,
        tier_reason=reason,
    )


# -- the per-section coverage chart (inline SVG, drawn by the template) -------------------------

CHART_WIDTH = 640
CHART_LABEL_WIDTH = 64
CHART_VALUE_WIDTH = 112
CHART_BAR_HEIGHT = 16
CHART_BAR_GAP = 4
CHART_GROUP_GAP = 14
CHART_TOP = 8
CHART_LETTERS = "ABCDE"  # one per compared assessment (at most five)


@dataclass(frozen=True)
class ChartBar:
    series: int
    letter: str
    y: int
    width: int
    percent: int
    fired: int
    rules: int

    @property
    def text_y(self) -> int:
        return self.y + CHART_BAR_HEIGHT - 4


@dataclass(frozen=True)
class ChartGroup:
    code: str
    title: str
    y: int
    label_y: int
    bars: list[ChartBar]


@dataclass(frozen=True)
class CoverageChart:
    """Grouped horizontal bars: per section, one bar per compared run (0–100 % coverage)."""

    groups: list[ChartGroup]
    series: list[str]
    height: int
    width: int = CHART_WIDTH
    label_width: int = CHART_LABEL_WIDTH
    bar_area: int = CHART_WIDTH - CHART_LABEL_WIDTH - CHART_VALUE_WIDTH

    @property
    def gridlines(self) -> list[dict[str, int]]:
        return [
            {"x": self.label_width + round(self.bar_area * p / 100), "percent": p}
            for p in (0, 50, 100)
        ]

    @property
    def bar_height(self) -> int:
        return CHART_BAR_HEIGHT

    @property
    def legend(self) -> list[dict[str, Any]]:
        return [
            {"index": index, "letter": CHART_LETTERS[index], "name": name}
            for index, name in enumerate(self.series)
        ]


def coverage_chart(
    spec: QuestionnaireSpec, runs: Sequence[ScoringRun], names: Sequence[str]
) -> CoverageChart:
    language = translation.get_language()
    bar_area = CHART_WIDTH - CHART_LABEL_WIDTH - CHART_VALUE_WIDTH
    groups = []
    y = CHART_TOP
    for section in spec.sections:
        if not any(section.code in (run.sections or {}) for run in runs):
            continue
        bars = []
        top = y
        for index, run in enumerate(runs):
            data = (run.sections or {}).get(section.code) or {}
            coverage = float(data.get("coverage", 1.0))
            bars.append(
                ChartBar(
                    series=index,
                    letter=CHART_LETTERS[index] if len(runs) > 1 else "",
                    y=y,
                    width=round(bar_area * coverage),
                    percent=round(coverage * 100),
                    fired=int(data.get("fired", 0)),
                    rules=int(data.get("rules", 0)),
                )
            )
            y += CHART_BAR_HEIGHT + CHART_BAR_GAP
        groups.append(
            ChartGroup(
                code=section.code,
                title=section.title.get(language),
                y=top,
                label_y=top + (y - top - CHART_BAR_GAP) // 2 + 5,
                bars=bars,
            )
        )
        y += CHART_GROUP_GAP
    return CoverageChart(groups=groups, series=list(names), height=y + 16)


# -- sign-off ---------------------------------------------------------------------------------


def review_blockers(org: OrgContext, assessment: Assessment) -> list[str]:
    """Why this member cannot sign off this assessment now (empty: they can)."""
    reasons = []
    if not org.can("review"):
        reasons.append(
            _("Only reviewers and owners can sign off; your role is %(role)s.")
            % {"role": org.membership.get_role_display()}
        )
    if assessment.status != AssessmentStatus.SCORED or assessment.latest_run is None:
        reasons.append(
            _("Sign-off is possible once the assessment is scored; it is now “%(status)s”.")
            % {"status": assessment.get_status_display()}
        )
    if org.can("review") and services.reviewer_conflict(assessment=assessment, reviewer=org.user):
        reasons.append(
            _(
                "You created, edited or submitted this assessment: another reviewer must decide "
                "(four-eyes rule)."
            )
        )
    return reasons


def reports_template() -> str:
    """The block the reports app provides for the assessment page, or "" while it provides
    none (or its pages are not mounted yet, so its links could not be drawn)."""
    try:
        reverse("reports:assessment_reports", args=[0])
        return select_template(REPORTS_TEMPLATES).template.name
    except (TemplateDoesNotExist, NoReverseMatch):
        return ""


def error_summary(*forms: Form) -> list[dict[str, str]]:
    """Every error of the forms, each linked to its field, for the summary at the top."""
    items = []
    for form in forms:
        for message in form.non_field_errors():
            items.append({"label": "", "message": message, "href": ""})
        for name, messages_ in form.errors.items():
            if name not in form.fields:
                continue
            bound = form[name]
            target = bound.id_for_label or f"{bound.auto_id}_0"
            is_answer = isinstance(form.fields[name], web_forms.AnswerField)
            label = name if is_answer else str(bound.label)
            for message in messages_:
                items.append({"label": label, "message": message, "href": f"#{target}"})
    return items


def _service_messages(exc: services.ServiceError | AnswerValidationError) -> list[str]:
    errors = exc.as_text_dict() if isinstance(exc, AnswerValidationError) else exc.errors
    return [message for messages_ in errors.values() for message in messages_]


def _questionnaire_choices() -> list[tuple[str, str]]:
    language = translation.get_language() or "en"
    versions = QuestionnaireVersion.objects.only(
        "slug", "version", "title_en", "title_zh_hant"
    ).order_by("slug", "-published_at")
    return [
        (
            version.key,
            f"{version.title_zh_hant if language.startswith('zh') else version.title_en} "
            f"({version.key})",
        )
        for version in versions
    ]


def _questionnaire(key: str) -> QuestionnaireVersion | None:
    slug, _sep, version = (key or "").partition("@")
    return QuestionnaireVersion.objects.filter(slug=slug, version=version).first()


def _buyer_sections(spec: QuestionnaireSpec) -> set[str]:
    return services.buyer_section_codes(spec)


def _assessment(org: OrgContext, assessment_id: int) -> Assessment:
    return selectors.assessment_get(organization=org.organization, assessment_id=assessment_id)


def _risk_decisions(assessment: Assessment) -> QuerySet[RiskDecision]:
    # Scoped through the assessment, which was fetched within the organization.
    return RiskDecision.objects.filter(assessment=assessment).select_related("created_by")


# -- dashboard ------------------------------------------------------------------------------


def _list_rows(assessments: QuerySet[Assessment]) -> QuerySet[Assessment]:
    """What a list of assessments shows, without the big JSON columns."""
    return assessments.defer(
        "questionnaire__content",
        "latest_run__answers_snapshot",
        "latest_run__evidence_snapshot",
        "latest_run__sections",
        "latest_run__ruleset__content",
    )


@member_page
def dashboard(request: HttpRequest) -> HttpResponse:
    org = member_context(request)
    today = timezone.localdate()
    everything = selectors.assessments_for(organization=org.organization)
    form = web_forms.DashboardFilterForm(request.GET or None)
    filters = form.filters() if request.GET else {}
    assessments = everything
    if query := filters.get("q", "").strip():
        assessments = assessments.filter(vendor__name__icontains=query)
    if status := filters.get("status"):
        assessments = assessments.filter(status=status)
    if tier := filters.get("tier"):
        assessments = (
            assessments.filter(risk_tier="")
            if tier == web_forms.NOT_SCORED
            else assessments.filter(risk_tier=tier)
        )
    if filters.get("overdue"):
        assessments = assessments.filter(due_date__lt=today, status__in=OPEN_STATUSES)
    # Overdue first, then what is still in progress, then what is signed off; by due date.
    assessments = _list_rows(
        assessments.annotate(
            urgency=Case(
                When(due_date__lt=today, status__in=OPEN_STATUSES, then=Value(0)),
                When(status__in=CLOSED_STATUSES, then=Value(2)),
                default=Value(1),
                output_field=IntegerField(),
            )
        ).order_by("urgency", F("due_date").asc(nulls_last=True), "-created_at", "-pk")
    )
    page = Paginator(assessments, PAGE_SIZE).get_page(request.GET.get("page"))
    by_status = dict(
        everything.order_by()
        .values_list("status")
        .annotate(count=Count("pk"))
        .values_list("status", "count")
    )
    by_tier = dict(
        everything.order_by()
        .exclude(risk_tier="")
        .values_list("risk_tier")
        .annotate(count=Count("pk"))
        .values_list("risk_tier", "count")
    )
    overdue_count = everything.filter(due_date__lt=today, status__in=OPEN_STATUSES).count()
    query_without_page = urlencode(
        [(key, v) for key, values in request.GET.lists() if key != "page" for v in values]
    )
    return render(
        request,
        "assessments/dashboard.html",
        {
            "org": org,
            "can": capabilities(org),
            "form": form,
            "page": page,
            "filtered": bool(filters),
            "query_without_page": query_without_page,
            "status_counts": [
                {"value": value, "label": label, "count": by_status.get(value, 0)}
                for value, label in AssessmentStatus.choices
            ],
            "tier_counts": [
                {"value": value, "label": label, "count": by_tier.get(value, 0)}
                for value, label in RiskTier.choices
            ],
            "overdue_count": overdue_count,
            "total": sum(by_status.values()),
        },
    )


# -- vendors --------------------------------------------------------------------------------


@member_page
def vendor_list(request: HttpRequest) -> HttpResponse:
    org = member_context(request)
    vendors = selectors.vendors_for(organization=org.organization).annotate(
        assessment_count=Count("assessments"),
        open_count=Count("assessments", filter=Q(assessments__status__in=OPEN_STATUSES)),
    )
    query = request.GET.get("q", "").strip()[:200]
    if query:
        vendors = vendors.filter(name__icontains=query)
    return render(
        request,
        "assessments/vendor_list.html",
        {"org": org, "can": capabilities(org), "vendors": vendors, "query": query},
    )


@member_page
def vendor_create(request: HttpRequest) -> HttpResponse:
    org = member_context(request, "edit_assessment")
    form = web_forms.VendorForm(request.POST or None)
    then_assess = request.GET.get("then") == "assess" or request.POST.get("then") == "assess"
    if request.method == "POST" and form.is_valid():
        try:
            vendor = services.vendor_create(
                organization=org.organization,
                actor=org.user,
                channel=Channel.WEB,
                **form.cleaned_data,
            )
        except services.ServiceError as exc:
            web_forms.add_service_errors(form, exc.errors)
        else:
            messages.success(request, _("Vendor “%(name)s” added.") % {"name": vendor.name})
            if then_assess:
                return redirect(f"{reverse('assessments:create')}?vendor={vendor.pk}")
            return redirect("assessments:vendor_list")
    return render(
        request,
        "assessments/vendor_form.html",
        {
            "org": org,
            "form": form,
            "vendor": None,
            "then_assess": then_assess,
            "error_summary": error_summary(form),
        },
        status=400 if form.errors else 200,
    )


@member_page
def vendor_edit(request: HttpRequest, vendor_id: int) -> HttpResponse:
    org = member_context(request, "edit_assessment")
    vendor = selectors.vendor_get(organization=org.organization, vendor_id=vendor_id)
    initial = {
        name: getattr(vendor, name)
        for name in ("name", "website", "contact_name", "contact_email", "notes")
    }
    form = web_forms.VendorForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        changed = {name: form.cleaned_data[name] for name in form.changed_data}
        try:
            if changed:
                services.vendor_update(
                    vendor=vendor, actor=org.user, channel=Channel.WEB, **changed
                )
        except services.ServiceError as exc:
            web_forms.add_service_errors(form, exc.errors)
        else:
            messages.success(request, _("Vendor “%(name)s” saved.") % {"name": vendor.name})
            return redirect("assessments:vendor_list")
    assessments = _list_rows(
        selectors.assessments_for(organization=org.organization).filter(vendor=vendor)
    )
    return render(
        request,
        "assessments/vendor_form.html",
        {
            "org": org,
            "form": form,
            "vendor": vendor,
            "assessments": assessments,
            "error_summary": error_summary(form),
        },
        status=400 if form.errors else 200,
    )


# -- assessments ----------------------------------------------------------------------------


def _use_form(
    spec: QuestionnaireSpec, data: Any = None, initial: Mapping[str, Any] | None = None
) -> web_forms.CatalogueAnswersForm:
    return web_forms.CatalogueAnswersForm(
        data,
        initial=initial,
        questionnaire=spec,
        section_codes=_buyer_sections(spec),
        language=translation.get_language() or settings.LANGUAGE_CODE,
    )


def _typed(data: Any) -> dict[str, Any]:
    """What was posted, as initial values (lists kept for checkboxes)."""
    return {key: values if len(values) > 1 else values[0] for key, values in data.lists()}


@member_page
def assessment_create(request: HttpRequest) -> HttpResponse:
    org = member_context(request, "edit_assessment")
    org.require("answer_use_section")
    choices = _questionnaire_choices()
    vendors = selectors.vendors_for(organization=org.organization)
    default_key = choices[0][0] if choices else ""
    data = request.POST if request.method == "POST" else None
    chosen_key = (data or request.GET).get("questionnaire") or default_key
    questionnaire = _questionnaire(chosen_key) or _questionnaire(default_key)
    form = web_forms.AssessmentForm(
        data,
        vendors=vendors,
        questionnaires=choices,
        initial={"vendor": request.GET.get("vendor"), "questionnaire": chosen_key},
    )
    use_form = _use_form(questionnaire.spec, data) if questionnaire else None
    # The buyer's questions on the page were drawn for another questionnaire version (chosen
    # without JavaScript, which would have redrawn them): show that version's questions with
    # what was typed, and save nothing yet.
    switched = data is not None and data.get("rendered_for") != chosen_key
    if data is not None and not switched:
        valid = form.is_valid() & (use_form is not None and use_form.is_valid())
        if valid and use_form is not None:
            try:
                with transaction.atomic():
                    assessment = services.assessment_create(
                        organization=org.organization,
                        vendor=form.cleaned_data["vendor"],
                        questionnaire_key=form.cleaned_data["questionnaire"],
                        actor=org.user,
                        channel=Channel.WEB,
                        due_date=form.cleaned_data["due_date"],
                        answers={k: v for k, v in use_form.answers().items() if v is not None},
                    )
                    if comments := {k: v for k, v in use_form.comments().items() if v}:
                        services.answers_save(
                            assessment=assessment,
                            answers={},
                            comments=comments,
                            actor=org.user,
                            member=org,
                            channel=Channel.WEB,
                        )
            except (services.ServiceError, AnswerValidationError) as exc:
                errors = (
                    exc.as_text_dict() if isinstance(exc, AnswerValidationError) else exc.errors
                )
                web_forms.add_service_errors(
                    use_form, {k: v for k, v in errors.items() if k in use_form.fields}
                )
                web_forms.add_service_errors(
                    form, {k: v for k, v in errors.items() if k not in use_form.fields}
                )
            else:
                messages.success(
                    request,
                    _("Assessment of %(vendor)s created. Invite the vendor's contact below.")
                    % {"vendor": assessment.vendor.name},
                )
                return redirect("assessments:detail", assessment_id=assessment.pk)
    elif switched:
        form = web_forms.AssessmentForm(
            None,
            vendors=vendors,
            questionnaires=choices,
            initial={key: data.get(key) for key in ("vendor", "questionnaire", "due_date")},
        )
        use_form = _use_form(questionnaire.spec, initial=_typed(data)) if questionnaire else None
    has_errors = bool(form.errors or (use_form is not None and use_form.errors))
    context = {
        "org": org,
        "switched": switched,
        "form": form,
        "use_form": use_form,
        "questionnaire": questionnaire.spec if questionnaire else None,
        "questionnaire_key": questionnaire.key if questionnaire else "",
        "has_vendors": vendors.exists(),
        "error_summary": error_summary(form, *([use_form] if use_form else [])),
    }
    if request.htmx and request.method == "GET":  # type: ignore[attr-defined]
        return render(request, "assessments/_use_questions.html", context)
    return render(
        request, "assessments/assessment_form.html", context, status=400 if has_errors else 200
    )


@member_page
def assessment_edit(request: HttpRequest, assessment_id: int) -> HttpResponse:
    """Due date, and the buyer's answers while the vendor may still answer."""
    org = member_context(request, "edit_assessment")
    assessment = _assessment(org, assessment_id)
    spec = assessment.questionnaire.spec
    use_editable = assessment.status in EDITABLE_STATUSES and org.can("answer_use_section")
    data = request.POST if request.method == "POST" else None
    date_form = web_forms.DueDateForm(data, initial={"due_date": assessment.due_date})
    use_form = None
    if use_editable:
        stored = list(assessment.answers.all())
        initial = web_forms.catalogue_initial(
            services.answer_values(assessment),
            {a.question_code: a.comment for a in stored if a.comment},
        )
        use_form = _use_form(spec, data, initial=initial)
    if data is not None:
        valid = date_form.is_valid() & (use_form is None or use_form.is_valid())
        if valid:
            try:
                with transaction.atomic():
                    if "due_date" in date_form.changed_data:
                        services.assessment_update(
                            assessment=assessment,
                            actor=org.user,
                            channel=Channel.WEB,
                            due_date=date_form.cleaned_data["due_date"],
                        )
                    if use_form is not None:
                        services.answers_save(
                            assessment=assessment,
                            answers=use_form.answers(),
                            comments=use_form.comments(),
                            actor=org.user,
                            member=org,
                            channel=Channel.WEB,
                        )
            except (services.ServiceError, AnswerValidationError) as exc:
                errors = (
                    exc.as_text_dict() if isinstance(exc, AnswerValidationError) else exc.errors
                )
                target = use_form or date_form
                web_forms.add_service_errors(target, errors)
            else:
                messages.success(request, _("Saved."))
                return redirect("assessments:detail", assessment_id=assessment.pk)
    forms_ = [date_form, *([use_form] if use_form else [])]
    return render(
        request,
        "assessments/assessment_edit.html",
        {
            "org": org,
            "assessment": assessment,
            "questionnaire": spec,
            "date_form": date_form,
            "use_form": use_form,
            "use_editable": use_editable,
            "error_summary": error_summary(*forms_),
            **_tabs(org, assessment, "edit"),
        },
        status=400 if any(f.errors for f in forms_) else 200,
    )


def _tabs(org: OrgContext, assessment: Assessment, current: str) -> dict[str, Any]:
    """The assessment pages' shared header: which tab is current, what the member may do."""
    return {"tab": current, "can": capabilities(org)}


def capabilities(org: OrgContext) -> dict[str, bool]:
    """`{{ can.edit_assessment }}` in templates: the member's role, asked once per page."""
    return {capability: org.can(capability) for capability in Capability.values}


def _next_step(assessment: Assessment, missing_use: list[str]) -> str:
    """One sentence: what happens next."""
    status = assessment.status
    if status == AssessmentStatus.DRAFT:
        if missing_use:
            return _("Answer the buyer's questions (section USE), then invite the vendor.")
        return _("Invite the vendor's contact: they answer through a private link.")
    if status == AssessmentStatus.SENT:
        return _("Waiting for the vendor's answers. Their progress is shown below.")
    if status == AssessmentStatus.CHANGES_REQUESTED:
        return _("The vendor is answering the re-opened questions again.")
    if status == AssessmentStatus.SUBMITTED:
        return _("The vendor has submitted; scoring is in progress.")
    if status == AssessmentStatus.SCORING_FAILED:
        return _("Scoring could not finish. The answers are kept; score again to retry.")
    if status == AssessmentStatus.SCORED:
        return _("Scored: read the findings, then a reviewer signs off.")
    return _("Signed off: %(status)s.") % {"status": assessment.get_status_display()}


def _poll_interval(assessment: Assessment) -> int | None:
    if assessment.status in (AssessmentStatus.SENT, AssessmentStatus.CHANGES_REQUESTED):
        return POLL_WHILE_ANSWERING
    if assessment.status == AssessmentStatus.SUBMITTED:
        return POLL_WHILE_SCORING
    return None


def _progress_context(assessment: Assessment, spec: QuestionnaireSpec) -> dict[str, Any]:
    values = services.answer_values(assessment)
    evidence = list(selectors.evidence_for(assessment=assessment))
    evidence_codes = {e.question_code for e in evidence}
    progress = section_progress(spec, values, evidence_codes)
    return {
        "assessment": assessment,
        "progress": progress,
        "vendor_progress": [p for p in progress if p.answered_by == "vendor"],
        "buyer_progress": [p for p in progress if p.answered_by != "vendor"],
        "poll_interval": _poll_interval(assessment),
        "values": values,
        "evidence": evidence,
    }


@member_page
def assessment_detail(request: HttpRequest, assessment_id: int) -> HttpResponse:
    org = member_context(request)
    assessment = _assessment(org, assessment_id)
    spec = assessment.questionnaire.spec
    progress = _progress_context(assessment, spec)
    answers = list(assessment.answers.all())
    missing_use = missing_required(spec, progress["values"], sections=_buyer_sections(spec))
    vendor = assessment.vendor
    invite_form = web_forms.InviteForm(
        initial={"contact_email": vendor.contact_email, "contact_name": vendor.contact_name}
    )
    return _render_detail(
        request, org, assessment, spec, progress, answers, missing_use, invite_form
    )


def _render_detail(
    request: HttpRequest,
    org: OrgContext,
    assessment: Assessment,
    spec: QuestionnaireSpec,
    progress: dict[str, Any],
    answers: list[Answer],
    missing_use: list[str],
    invite_form: web_forms.InviteForm,
    *,
    status: int = 200,
) -> HttpResponse:
    events = allowed_events(assessment.status)
    can_audit = org.can("review") or org.is_owner
    latest_review = assessment.reviews.select_related("reviewer").first()
    return render(
        request,
        "assessments/detail.html",
        {
            "org": org,
            "questionnaire": spec,
            **progress,
            "answer_sections": answer_sections(
                spec, progress["values"], answers, progress["evidence"]
            ),
            "evidence_rows": [
                {"file": e, "description": evidence_summary(e.parse_result or {})}
                for e in progress["evidence"]
            ],
            "runs": selectors.runs_for(assessment=assessment).defer(
                "answers_snapshot", "evidence_snapshot", "ruleset__content"
            ),
            "links": selectors.vendor_links_for(assessment=assessment).select_related("created_by"),
            "events": events,
            "can_invite_now": "invite" in events and org.can("invite_vendor"),
            "missing_use": missing_use,
            "next_step": _next_step(assessment, missing_use),
            "invite_form": invite_form,
            "reassess_form": web_forms.ReassessForm(),
            "error_summary": error_summary(invite_form) if invite_form.is_bound else [],
            "latest_review": latest_review,
            "reports_template": reports_template(),
            "audit": selectors.audit_events_for(
                organization=org.organization, assessment=assessment
            )[:50]
            if can_audit
            else None,
            **_tabs(org, assessment, "overview"),
        },
        status=status,
    )


@member_page
def assessment_progress(request: HttpRequest, assessment_id: int) -> HttpResponse:
    """The progress block, for htmx to poll while the vendor answers or the worker scores. When
    the status has moved on since the page was drawn, the whole page is reloaded."""
    org = member_context(request)
    assessment = _assessment(org, assessment_id)
    if not request.htmx:  # type: ignore[attr-defined]
        return redirect("assessments:detail", assessment_id=assessment.pk)
    if request.GET.get("status") != assessment.status:
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    context = _progress_context(assessment, assessment.questionnaire.spec)
    return render(request, "assessments/_progress.html", {"org": org, **context})


# -- vendor links ---------------------------------------------------------------------------


@member_page
@require_POST
def vendor_invite(request: HttpRequest, assessment_id: int) -> HttpResponse:
    org = member_context(request, "invite_vendor")
    assessment = _assessment(org, assessment_id)
    form = web_forms.InviteForm(request.POST)
    if form.is_valid():
        try:
            services.vendor_link_issue(
                assessment=assessment,
                contact_email=form.cleaned_data["contact_email"],
                contact_name=form.cleaned_data["contact_name"].strip(),
                language=form.cleaned_data["language"],
                actor=org.user,
                channel=Channel.WEB,
            )
        except services.ServiceError as exc:
            web_forms.add_service_errors(form, exc.errors)
        else:
            messages.success(
                request,
                _("A private link was sent to %(email)s.")
                % {"email": form.cleaned_data["contact_email"]},
            )
            return redirect(f"{reverse('assessments:detail', args=[assessment.pk])}#links")
    assessment = _assessment(org, assessment_id)  # the status may have changed meanwhile
    spec = assessment.questionnaire.spec
    progress = _progress_context(assessment, spec)
    missing_use = missing_required(spec, progress["values"], sections=_buyer_sections(spec))
    return _render_detail(
        request,
        org,
        assessment,
        spec,
        progress,
        list(assessment.answers.all()),
        missing_use,
        form,
        status=400,
    )


@member_page
@require_POST
def vendor_link_reinvite(request: HttpRequest, link_id: int) -> HttpResponse:
    """Send the same contact a fresh link (the earlier one stops working)."""
    org = member_context(request, "invite_vendor")
    link = selectors.vendor_link_get(organization=org.organization, link_id=link_id)
    try:
        services.vendor_link_issue(
            assessment=link.assessment,
            contact_email=link.contact_email,
            contact_name=link.contact_name,
            language=link.language,
            actor=org.user,
            channel=Channel.WEB,
        )
    except services.ServiceError as exc:
        for message in _service_messages(exc):
            messages.error(request, message)
    else:
        messages.success(
            request, _("A new link was sent to %(email)s.") % {"email": link.contact_email}
        )
    return redirect(f"{reverse('assessments:detail', args=[link.assessment_id])}#links")


@member_page
@require_POST
def vendor_link_revoke(request: HttpRequest, link_id: int) -> HttpResponse:
    org = member_context(request, "invite_vendor")
    link = selectors.vendor_link_get(organization=org.organization, link_id=link_id)
    services.vendor_link_revoke(link=link, actor=org.user, channel=Channel.WEB)
    messages.success(
        request, _("The link for %(email)s was revoked.") % {"email": link.contact_email}
    )
    return redirect(f"{reverse('assessments:detail', args=[link.assessment_id])}#links")


@member_page
@require_POST
def assessment_rescore(request: HttpRequest, assessment_id: int) -> HttpResponse:
    org = member_context(request, "edit_assessment")
    assessment = _assessment(org, assessment_id)
    try:
        services.assessment_rescore(assessment=assessment, actor=org.user, channel=Channel.WEB)
    except services.ServiceError as exc:
        for message in _service_messages(exc):
            messages.error(request, message)
    else:
        messages.success(request, _("Scoring has been queued with the newest ruleset."))
    return redirect("assessments:detail", assessment_id=assessment.pk)


# -- findings -------------------------------------------------------------------------------


def _run_for(org: OrgContext, assessment: Assessment, run_id: str | None) -> ScoringRun | None:
    if run_id and run_id.isdigit():
        run = selectors.run_get(organization=org.organization, run_id=run_id)
        return run if run.assessment_id == assessment.pk else None
    return assessment.latest_run


def _findings_page(
    request: HttpRequest,
    org: OrgContext,
    assessment: Assessment,
    *,
    invalid_rule: str = "",
    invalid_form: Form | None = None,
    status: int = 200,
) -> HttpResponse:
    spec = assessment.questionnaire.spec
    language = translation.get_language()
    run = _run_for(org, assessment, request.GET.get("run"))
    frameworks = frameworks_catalogue()
    framework_choices = [
        (ref.id, f"{ref.id} — {ref.title.get(language)}")
        for ref in sorted(frameworks.values(), key=lambda r: (r.jurisdiction != "hk", r.id))
    ]
    section_choices = [(s.code, f"{s.code} — {s.title.get(language)}") for s in spec.sections]
    filter_form = web_forms.FindingFilterForm(
        request.GET
        if any(k in request.GET for k in ("severity", "section", "framework"))
        else None,
        sections=section_choices,
        frameworks=framework_choices,
    )
    filters = filter_form.filters() if filter_form.is_bound else {}
    context: dict[str, Any] = {
        "org": org,
        "assessment": assessment,
        "questionnaire": spec,
        "run": run,
        "filter_form": filter_form,
        "filters": filters,
        "poll_interval": _poll_interval(assessment),
        "review_blockers": review_blockers(org, assessment),
        **_tabs(org, assessment, "findings"),
    }
    if run is not None and run.ruleset_id and run.status == RunStatus.SUCCEEDED:
        ruleset = run.ruleset.spec
        rows = list(selectors.findings_for(run=run))
        decisions: dict[str, list[RiskDecision]] = defaultdict(list)
        for decision in _risk_decisions(assessment):
            decisions[decision.rule_id].append(decision)
        evidence_by_name = {
            (e.question_code, e.original_name): e
            for e in selectors.evidence_for(assessment=assessment)
        }
        can_decide = org.can("edit_assessment") and run.pk == assessment.latest_run_id
        views = []
        for row in rows:
            form = None
            if can_decide:
                form = (
                    invalid_form
                    if invalid_form is not None and row.rule_id == invalid_rule
                    else web_forms.RiskDecisionForm(auto_id=f"id_{row.rule_id}_%s")
                )
            views.append(
                FindingView(
                    row=row,
                    rule=ruleset.rules_by_id.get(row.rule_id),
                    why=why_lines(row, spec, ruleset, run.answers_snapshot or {}, evidence_by_name),
                    references=[_reference(ref, frameworks) for ref in row.references],
                    decisions=decisions.get(row.rule_id, []),
                    form=form,
                    open_form=row.rule_id == invalid_rule,
                )
            )
        shown = [
            v
            for v in views
            if (not filters.get("severity") or v.row.severity == filters["severity"])
            and (not filters.get("section") or v.row.section == filters["section"])
            and (not filters.get("framework") or filters["framework"] in v.row.references)
        ]
        context.update(
            {
                "ruleset": ruleset,
                "findings": shown,
                "finding_count": len(views),
                "explanation": score_explanation(run, ruleset, rows),
                "chart": coverage_chart(spec, [run], [assessment.vendor.name]),
                "framework_filter": frameworks.get(filters.get("framework", "")),
                "severity_counts": Counter(v.row.severity for v in views),
                "is_latest_run": run.pk == assessment.latest_run_id,
                "today": timezone.localdate(),
                "error_summary": error_summary(invalid_form) if invalid_form else [],
            }
        )
    return render(request, "assessments/findings.html", context, status=status)


@member_page
def assessment_findings(request: HttpRequest, assessment_id: int) -> HttpResponse:
    org = member_context(request)
    assessment = _assessment(org, assessment_id)
    return _findings_page(request, org, assessment)


@member_page
@require_POST
def risk_decision_create(request: HttpRequest, assessment_id: int, rule_id: str) -> HttpResponse:
    org = member_context(request, "edit_assessment")
    assessment = _assessment(org, assessment_id)
    form = web_forms.RiskDecisionForm(request.POST, auto_id=f"id_{rule_id}_%s")
    if form.is_valid():
        try:
            services.risk_decision_record(
                assessment=assessment,
                rule_id=rule_id,
                kind=form.cleaned_data["kind"],
                justification=form.cleaned_data["justification"],
                owner=form.cleaned_data["owner"],
                expires_on=form.cleaned_data["expires_on"],
                actor=org.user,
                channel=Channel.WEB,
            )
        except services.ServiceError as exc:
            web_forms.add_service_errors(form, exc.errors)
        else:
            messages.success(
                request,
                _("Recorded against %(rule)s. The finding stays listed.") % {"rule": rule_id},
            )
            url = reverse("assessments:findings", args=[assessment.pk])
            return redirect(f"{url}#finding-{rule_id}")
    return _findings_page(
        request, org, assessment, invalid_rule=rule_id, invalid_form=form, status=400
    )


# -- review ---------------------------------------------------------------------------------


@member_page
def assessment_review(request: HttpRequest, assessment_id: int) -> HttpResponse:
    """Sign-off: anyone may read it; a reviewer who did not take part decides."""
    org = member_context(request)
    if request.method == "POST":
        org.require("review")
    assessment = _assessment(org, assessment_id)
    spec = assessment.questionnaire.spec
    language = translation.get_language() or settings.LANGUAGE_CODE
    form = web_forms.ReviewForm(
        request.POST if request.method == "POST" else None,
        questionnaire=spec,
        language=language,
    )
    blockers = review_blockers(org, assessment)
    if request.method == "POST":
        if blockers:
            for reason in blockers:
                form.add_error(None, reason)
        elif form.is_valid():
            try:
                review = services.review_record(
                    assessment=assessment,
                    reviewer=org.user,
                    decision=form.cleaned_data["decision"],
                    conditions=form.cleaned_data["conditions"],
                    message=form.cleaned_data["message"],
                    reopen_codes=form.cleaned_data["reopen_codes"],
                    channel=Channel.WEB,
                )
            except services.ServiceError as exc:
                web_forms.add_service_errors(form, exc.errors)
            else:
                messages.success(
                    request,
                    _("Decision recorded: %(decision)s.")
                    % {"decision": review.get_decision_display()},
                )
                return redirect("assessments:review", assessment_id=assessment.pk)
    run = assessment.latest_run
    severity_counts: Counter[str] = Counter()
    if run is not None:
        severity_counts = Counter(
            selectors.findings_for(run=run).values_list("severity", flat=True)
        )
    return render(
        request,
        "assessments/review.html",
        {
            "org": org,
            "assessment": assessment,
            "questionnaire": spec,
            "run": run,
            "severity_counts": [(s, severity_counts.get(s, 0)) for s in SEVERITIES],
            "form": form,
            "blockers": blockers,
            "reviews": assessment.reviews.select_related("reviewer", "run"),
            "decisions": ReviewDecision,
            "error_summary": error_summary(form),
            **_tabs(org, assessment, "review"),
        },
        status=400 if form.errors else 200,
    )


# -- comparison -------------------------------------------------------------------------------


@member_page
def compare(request: HttpRequest) -> HttpResponse:
    org = member_context(request)
    scored = _list_rows(
        selectors.assessments_for(organization=org.organization)
        .filter(latest_run__isnull=False)
        .order_by("vendor__name", "-created_at")
    )
    candidates = list(scored)
    choices = [
        (
            str(a.pk),
            f"{a.vendor.name} — {date_format(timezone.localtime(a.created_at), 'DATE_FORMAT')} "
            f"— {a.get_risk_tier_display()} {a.risk_score}",
        )
        for a in candidates
    ]
    form = web_forms.CompareForm(
        request.GET if "assessments" in request.GET else None, choices=choices
    )
    context: dict[str, Any] = {
        "org": org,
        "can": capabilities(org),
        "form": form,
        "candidates": candidates,
        "error_summary": error_summary(form) if form.is_bound else [],
    }
    if form.is_bound and form.is_valid():
        chosen_ids = [int(pk) for pk in form.cleaned_data["assessments"]]
        by_pk = {a.pk: a for a in candidates}
        chosen = [by_pk[pk] for pk in chosen_ids if pk in by_pk]
        runs = list(
            ScoringRun.objects.filter(pk__in=[a.latest_run_id for a in chosen]).select_related(
                "ruleset"
            )
        )
        run_by_pk = {run.pk: run for run in runs}
        chosen_runs = [run_by_pk[a.latest_run_id] for a in chosen]
        findings: dict[int, dict[str, Finding]] = defaultdict(dict)
        for finding in Finding.objects.filter(run__in=runs).order_by("position"):
            findings[finding.run_id][finding.rule_id] = finding
        specs: dict[int, RulesetSpec] = {}
        for run in runs:
            if run.ruleset_id not in specs:  # one parse (and frameworks query) per ruleset
                specs[run.ruleset_id] = run.ruleset.spec
        all_rules: dict[str, Finding] = {}
        for run in chosen_runs:
            for rule_id, finding in findings[run.pk].items():
                all_rules.setdefault(rule_id, finding)
        severity_rank = {severity: index for index, severity in enumerate(SEVERITIES)}
        differing, common = [], []
        for rule_id, sample in sorted(
            all_rules.items(), key=lambda item: (severity_rank[item[1].severity], item[0])
        ):
            rule = next(
                (
                    specs[run.ruleset_id].rules_by_id.get(rule_id)
                    for run in chosen_runs
                    if specs[run.ruleset_id].rules_by_id.get(rule_id)
                ),
                None,
            )
            cells = [findings[run.pk].get(rule_id) for run in chosen_runs]
            row = {"rule_id": rule_id, "rule": rule, "severity": sample.severity, "cells": cells}
            (common if all(cells) else differing).append(row)
        spec = chosen[0].questionnaire.spec
        columns = [
            {
                "assessment": a,
                "run": run,
                "letter": CHART_LETTERS[index],
                "counts": Counter(f.severity for f in findings[run.pk].values()),
            }
            for index, (a, run) in enumerate(zip(chosen, chosen_runs, strict=True))
        ]
        context.update(
            {
                "columns": columns,
                "differing": differing,
                "common": common,
                "chart": coverage_chart(spec, chosen_runs, [a.vendor.name for a in chosen]),
                "mixed_questionnaires": len({a.questionnaire_id for a in chosen}) > 1,
            }
        )
    return render(request, "assessments/compare.html", context)


# -- evidence -----------------------------------------------------------------------------------


@member_page
def evidence_download(request: HttpRequest, evidence_id: int) -> FileResponse:
    org = member_context(request)
    evidence = selectors.evidence_get(organization=org.organization, evidence_id=evidence_id)
    handle = evidence_storage().open(evidence.storage_name, "rb")
    # Always an attachment of an inert type: vendor files are never rendered by the browser.
    response = FileResponse(
        handle,
        as_attachment=True,
        filename=evidence.original_name,
        content_type="application/octet-stream",
    )
    response["X-Content-Type-Options"] = "nosniff"
    return response


__all__ = [
    "assessment_create",
    "assessment_detail",
    "assessment_edit",
    "assessment_findings",
    "assessment_progress",
    "assessment_rescore",
    "assessment_review",
    "compare",
    "dashboard",
    "evidence_download",
    "member_context",
    "member_page",
    "risk_decision_create",
    "set_language",
    "vendor_create",
    "vendor_edit",
    "vendor_invite",
    "vendor_link_reinvite",
    "vendor_link_revoke",
    "vendor_list",
]
