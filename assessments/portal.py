"""The vendor portal: a vendor contact answers one assessment through a private link, without
an account.

Every view goes through `portal_view`, which resolves the token (counting failed attempts per
client IP), renders in the contact's language and hands the view the link. Everything a URL
names after the token — a section, an evidence file — is looked up within `link.assessment`, and
whatever is not found (token, section, file) gets the same 404 page, so nothing can be probed.
The buyer's sections (`answered_by: buyer`), findings and scores never reach these pages.

Plain form posts are the whole interface; htmx, where it loads, only re-renders parts of a page
(conditional questions while answering, the evidence list after an upload).
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.cache import cache
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.cache import patch_cache_control
from django.utils.html import conditional_escape, format_html, format_html_join
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import pgettext
from django.views.decorators.http import require_POST
from redis.exceptions import RedisError

from questionnaires.spec import Question, QuestionnaireSpec, Section
from questionnaires.validation import (
    AnswerValidationError,
    clean_answer,
    hidden_codes,
    is_blank,
    missing_required,
    visibility_for,
)
from scoring.evidence import LogParseResult

from . import lifecycle
from .forms import ReassessForm
from .models import (
    Assessment,
    AssessmentStatus,
    Channel,
    EvidenceFile,
    ReviewDecision,
    TokenFailureCount,
    VendorLink,
)
from .services import (
    ServiceError,
    answer_values,
    answers_save,
    assessment_submit,
    evidence_add,
    evidence_remove,
    portal_question_path,
    vendor_editable_codes,
    vendor_link_resolve,
)

# -- token failures, rate-limited per client IP ---------------------------------------------
#
# Tokens carry 256 bits, so guessing is hopeless anyway; the limit keeps scanners from hammering
# the token lookup and makes them visible. Only failures count: a vendor reloading a page is
# never limited. An address over the limit gets 429 for every unknown token, but a valid link
# still opens from it: behind a shared NAT address one scanner must not lock every vendor out,
# and telling a scanner "this one is valid" costs nothing when it cannot find one to try.
# Failures are counted in the cache (Redis in production); when the cache is down they are
# counted in the database instead, so the portal keeps working and the limit keeps holding.


logger = logging.getLogger(__name__)
# What a cache backend raises when its server is unreachable (Redis; OSError for sockets).
CACHE_ERRORS = (RedisError, OSError)


def _token_failure_limit() -> int:
    return getattr(settings, "PORTAL_TOKEN_FAILURE_LIMIT", 20)


def _token_failure_window() -> int:
    return getattr(settings, "PORTAL_TOKEN_FAILURE_WINDOW", 10 * 60)  # seconds


def _client_address(request: HttpRequest) -> str:
    # REMOTE_ADDR, not X-Forwarded-For: a client can write any forwarded address it likes.
    # Behind trusted reverse proxies config.proxy.TrustedProxyMiddleware has set it already.
    return (request.META.get("REMOTE_ADDR") or "unknown")[:64]


def _token_failure_key(request: HttpRequest) -> str:
    return f"portal:token-failures:{_client_address(request)}"


def _token_failures(request: HttpRequest) -> int:
    try:
        return cache.get(_token_failure_key(request), 0)
    except CACHE_ERRORS as exc:
        logger.warning("cache unavailable, counting vendor-link failures in the database: %s", exc)
    window_start = timezone.now() - dt.timedelta(seconds=_token_failure_window())
    row = TokenFailureCount.objects.filter(
        address=_client_address(request), window_started_at__gt=window_start
    ).first()
    return row.count if row is not None else 0


def token_failures_exceeded(request: HttpRequest) -> bool:
    if _token_failures(request) < _token_failure_limit():
        return False
    token = request.resolver_match.kwargs.get("token", "") if request.resolver_match else ""
    return vendor_link_resolve(token=token) is None


def token_failure_record(request: HttpRequest) -> None:
    key = _token_failure_key(request)
    try:
        if cache.add(key, 1, timeout=_token_failure_window()):
            return
        try:
            cache.incr(key)
        except ValueError:  # expired between add() and incr()
            cache.set(key, 1, timeout=_token_failure_window())
        return
    except CACHE_ERRORS as exc:
        logger.warning("cache unavailable, counting vendor-link failures in the database: %s", exc)
    _token_failure_record_in_database(_client_address(request))


@transaction.atomic
def _token_failure_record_in_database(address: str) -> None:
    now = timezone.now()
    row, created = TokenFailureCount.objects.select_for_update().get_or_create(
        address=address, defaults={"count": 1, "window_started_at": now}
    )
    if created:
        return
    if now - row.window_started_at > dt.timedelta(seconds=_token_failure_window()):
        row.count, row.window_started_at = 1, now  # a new window
    else:
        row.count += 1
    row.save(update_fields=["count", "window_started_at"])


# -- the access helper every view goes through ----------------------------------------------


@dataclass(frozen=True)
class Portal:
    """What a portal view works on: the link, its token (for URLs) and the page language."""

    link: VendorLink
    token: str
    language: str

    @property
    def assessment(self) -> Assessment:
        return self.link.assessment

    @property
    def spec(self) -> QuestionnaireSpec:
        return self.link.assessment.questionnaire.spec

    def vendor_section(self, code: str) -> Section:
        """A vendor-facing section, or 404 (the buyer's sections do not exist here)."""
        try:
            section = self.spec.section(code)
        except KeyError:
            raise Http404 from None
        if not section.vendor_facing:
            raise Http404
        return section

    @property
    def vendor_sections(self) -> list[Section]:
        return [s for s in self.spec.sections if s.vendor_facing]


def _language_session_key(link: VendorLink) -> str:
    return f"portal:language:{link.pk}"


def _language_for(request: HttpRequest, link: VendorLink) -> str:
    language = request.session.get(_language_session_key(link)) or link.language
    return language if language in dict(settings.LANGUAGES) else settings.LANGUAGE_CODE


PortalView = Callable[..., HttpResponse]


def portal_view(view: PortalView) -> Callable[..., HttpResponse]:
    """Resolve the token, then call `view(request, portal, **kwargs)` in the link's language."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, token: str, **kwargs: Any) -> HttpResponse:
        if token_failures_exceeded(request):
            return _too_many_attempts(request)
        link = vendor_link_resolve(token=token)
        if link is None:
            token_failure_record(request)
            return _not_found(request)
        language = _language_for(request, link)
        with translation.override(language):
            try:
                response = view(
                    request, Portal(link=link, token=token, language=language), **kwargs
                )
            except Http404:
                response = _not_found(request)
        response.headers["Content-Language"] = language
        _private(response)
        return response

    return wrapper


def _private(response: HttpResponse) -> HttpResponse:
    # The token is in the URL: keep these pages out of shared caches and search engines.
    patch_cache_control(response, private=True, no_store=True)
    response.headers["X-Robots-Tag"] = "noindex, nofollow"
    return response


def _not_found(request: HttpRequest) -> HttpResponse:
    return _private(render(request, "portal/not_found.html", status=404))


def _too_many_attempts(request: HttpRequest) -> HttpResponse:
    window = _token_failure_window()
    response = render(
        request, "portal/rate_limited.html", {"minutes": max(1, window // 60)}, status=429
    )
    response.headers["Retry-After"] = str(window)
    return _private(response)


# -- what a page shows ----------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    code: str
    label: str
    input_id: str
    checked: bool


@dataclass(frozen=True)
class EvidenceRow:
    pk: int
    name: str
    size: int
    uploaded_at: dt.datetime
    parsed: bool
    description: str


@dataclass
class QuestionField:
    """One question as the section page shows it, with the value to put in its input."""

    question: Question
    language: str
    value: Any  # str for single inputs, list[str] for checkboxes
    comment: str
    editable: bool
    errors: list[str] = field(default_factory=list)
    evidence: list[EvidenceRow] = field(default_factory=list)
    controls_visibility: bool = False
    reopened: bool = False
    status_message: str = ""

    @property
    def code(self) -> str:
        return self.question.code

    @property
    def type(self) -> str:
        return self.question.type

    @property
    def input_id(self) -> str:
        return f"q-{self.code}"

    @property
    def help_id(self) -> str:
        return f"q-{self.code}-help"

    @property
    def unit_id(self) -> str:
        return f"q-{self.code}-unit"

    @property
    def error_id(self) -> str:
        return f"q-{self.code}-error"

    @property
    def comment_id(self) -> str:
        return f"c-{self.code}"

    @property
    def comment_name(self) -> str:
        return f"comment-{self.code}"

    @property
    def evidence_form_id(self) -> str:
        return f"evidence-upload-{self.code}"

    @property
    def anchor_id(self) -> str:
        """Where an error summary link should land: the first control of the question."""
        if not self.editable:
            return f"question-{self.code}"
        if self.type in ("yes_no", "choice", "multi_choice") and self.options:
            return self.options[0].input_id
        if self.type == "file":
            return f"{self.input_id}-file"
        return self.input_id

    @property
    def describedby(self) -> str:
        ids = [self.help_id]
        if self.question.unit_label is not None:
            ids.append(self.unit_id)
        if self.errors:
            ids.append(self.error_id)
        return " ".join(ids)

    @property
    def text(self) -> str:
        return self.question.text.get(self.language)

    @property
    def help(self) -> str:
        return with_code_spans(self.question.help.get(self.language))

    @property
    def unit(self) -> str:
        label = self.question.unit_label
        return label.get(self.language) if label else ""

    @property
    def placeholder(self) -> str:
        placeholder = self.question.placeholder
        return placeholder.get(self.language) if placeholder else ""

    @property
    def blank_means(self) -> str:
        blank = self.question.blank_means
        return blank.get(self.language) if blank else ""

    @property
    def options(self) -> list[Choice]:
        if self.type == "yes_no":
            labels = yes_no_labels()
            pairs = [(code, labels[code]) for code in self.question.option_codes]
        else:
            pairs = [(o.code, o.label.get(self.language)) for o in self.question.options]
        chosen = set(self.value) if isinstance(self.value, list) else {self.value}
        return [
            Choice(
                code=code, label=label, input_id=f"{self.input_id}-{code}", checked=code in chosen
            )
            for code, label in pairs
        ]

    @property
    def display(self) -> str:
        """The answer as read-only text."""
        if is_blank(self.value):
            return ""
        if self.type in ("yes_no", "choice", "multi_choice"):
            labels = [choice.label for choice in self.options if choice.checked]
            return ", ".join(labels) if labels else str(self.value)
        if self.type == "integer" and self.unit:
            return f"{self.value} {self.unit}"
        return str(self.value)


def with_code_spans(text: str) -> str:
    """Catalogue text marks code with backticks (`max_total_num_tokens=`): show it as <code>.
    Every part is escaped; unbalanced backticks leave the text as it is."""
    parts = text.split("`")
    if len(parts) % 2 == 0:
        return conditional_escape(text)
    return format_html_join(
        "",
        "{}",
        (
            (format_html("<code>{}</code>", part) if index % 2 else part,)
            for index, part in enumerate(parts)
        ),
    )


def yes_no_labels() -> dict[str, str]:
    return {
        "yes": pgettext("answer", "Yes"),
        "no": pgettext("answer", "No"),
        "unknown": pgettext("answer", "Unknown"),
    }


def describe_parse_result(data: Mapping[str, Any]) -> str:
    """The parser's one-line description of a stored `EvidenceFile.parse_result`."""
    try:
        return LogParseResult.from_dict(data).describe()
    except ValueError:
        return _("not parsed: the parse result could not be read")


def _evidence_rows(files: Iterable[EvidenceFile]) -> list[EvidenceRow]:
    return [
        EvidenceRow(
            pk=f.pk,
            name=f.original_name,
            size=f.size,
            uploaded_at=f.uploaded_at,
            parsed=f.parsed,
            description=describe_parse_result(f.parse_result or {}),
        )
        for f in files
    ]


@dataclass(frozen=True)
class Stored:
    """The assessment's saved answers, as the portal reads them."""

    values: dict[str, Any]
    comments: dict[str, str]
    reopened: set[str]
    evidence: dict[str, list[EvidenceFile]]

    @property
    def evidence_codes(self) -> set[str]:
        return {code for code, files in self.evidence.items() if files}


def _stored(assessment: Assessment) -> Stored:
    comments: dict[str, str] = {}
    reopened: set[str] = set()
    for code, comment, is_reopened in assessment.answers.values_list(
        "question_code", "comment", "reopened"
    ):
        if comment:
            comments[code] = comment
        if is_reopened:
            reopened.add(code)
    evidence: dict[str, list[EvidenceFile]] = defaultdict(list)
    for evidence_file in assessment.evidence.all():
        evidence[evidence_file.question_code].append(evidence_file)
    return Stored(answer_values(assessment), comments, reopened, dict(evidence))


def _editable(portal: Portal) -> set[str]:
    """Codes the vendor may change now: none once submitted; after "request changes", only the
    questions the reviewer re-opened."""
    assessment = portal.assessment
    if assessment.status not in lifecycle.EDITABLE_STATUSES:
        return set()
    # The rule lives in the services; a public name for it has been requested.
    return vendor_editable_codes(assessment=assessment, vendor_link=portal.link)


def _display_value(question: Question, value: Any) -> Any:
    if question.type == "multi_choice":
        return list(value or [])
    if value is None:
        return ""
    if question.type == "integer":
        return f"{value:,}"
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def _controlling_codes(spec: QuestionnaireSpec) -> set[str]:
    """Codes that some `show_if` reads: changing them may show or hide other questions."""
    by_identifier = {q.identifier: q.code for q in spec.iter_questions()}
    visibility = visibility_for(spec)
    return {
        by_identifier[name]
        for question in spec.iter_questions()
        if question.show_if
        for name in visibility.reads(question.code)
        if name in by_identifier
    }


def _raw_posted(question: Question, data: QueryDict) -> Any:
    if question.type == "multi_choice":
        return data.getlist(question.code)
    return data.get(question.code, "")


def _with_typed(
    spec: QuestionnaireSpec, values: Mapping[str, Any], typed: Mapping[str, Any]
) -> dict[str, Any]:
    """Saved values overlaid with whatever typed values are valid, to decide what is visible."""
    merged = dict(values)
    for code, raw in typed.items():
        try:
            merged[code] = clean_answer(spec.questions[code], raw)
        except ValueError:
            pass
    return merged


@dataclass
class SectionPage:
    """Everything the section template needs."""

    section: Section
    fields: list[QuestionField]
    errors: dict[str, list[str]]

    @property
    def any_editable(self) -> bool:
        return any(f.editable for f in self.fields)

    @property
    def file_fields(self) -> list[QuestionField]:
        return [f for f in self.fields if f.type == "file" and f.editable]


def _section_page(
    portal: Portal,
    section: Section,
    *,
    typed: Mapping[str, Any] | None = None,
    typed_comments: Mapping[str, str] | None = None,
    errors: Mapping[str, list[str]] | None = None,
    status_messages: Mapping[str, str] | None = None,
) -> SectionPage:
    spec = portal.spec
    stored = _stored(portal.assessment)
    editable = _editable(portal)
    typed = typed or {}
    typed_comments = typed_comments or {}
    errors = dict(errors or {})
    hidden = hidden_codes(spec, _with_typed(spec, stored.values, typed))
    controlling = _controlling_codes(spec)
    fields = []
    for question in section.questions:
        code = question.code
        if code in hidden:
            continue
        if code in typed:
            value = typed[code]
        else:
            value = _display_value(question, stored.values.get(code))
        fields.append(
            QuestionField(
                question=question,
                language=portal.language,
                value=value,
                comment=typed_comments.get(code, stored.comments.get(code, "")),
                editable=code in editable,
                errors=errors.get(code, []),
                evidence=_evidence_rows(stored.evidence.get(code, [])),
                controls_visibility=code in controlling,
                reopened=code in stored.reopened,
                status_message=(status_messages or {}).get(code, ""),
            )
        )
    return SectionPage(section=section, fields=fields, errors=errors)


@dataclass(frozen=True)
class SummaryError:
    """One line of an error summary: the question code, the reason, a link to the question."""

    code: str
    message: str
    href: str
    is_question: bool


def _error_summary(
    spec: QuestionnaireSpec, errors: Mapping[str, list[str]], hrefs: Mapping[str, str]
) -> list[SummaryError]:
    return [
        SummaryError(
            code=key, message=message, href=hrefs.get(key, ""), is_question=key in spec.questions
        )
        for key, key_messages in errors.items()
        for message in key_messages
    ]


def _url(name: str, portal: Portal, *args: Any) -> str:
    return reverse(f"portal:{name}", args=[portal.token, *args])


def _context(portal: Portal, **extra: Any) -> dict[str, Any]:
    assessment = portal.assessment
    status = assessment.status
    return {
        "portal": portal,
        "token": portal.token,
        "assessment": assessment,
        "organization_name": assessment.organization.display_name,
        "vendor_name": assessment.vendor.name,
        "questionnaire_title": portal.spec.title.get(portal.language),
        "is_open": status in lifecycle.EDITABLE_STATUSES,
        "changes_requested": status == AssessmentStatus.CHANGES_REQUESTED,
        "is_submitted": status
        in (AssessmentStatus.SUBMITTED, AssessmentStatus.SCORED, AssessmentStatus.SCORING_FAILED),
        "is_closed": status in (AssessmentStatus.APPROVED, AssessmentStatus.REJECTED),
        **extra,
    }


# -- pages ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SectionProgress:
    code: str
    title: str
    answered: int
    required: int
    url: str

    @property
    def complete(self) -> bool:
        return self.answered >= self.required


def _progress(portal: Portal, stored: Stored) -> tuple[list[SectionProgress], list[str]]:
    """Per vendor section: answered required / visible required; and the missing codes."""
    spec = portal.spec
    sections = portal.vendor_sections
    hidden = hidden_codes(spec, stored.values)
    missing = missing_required(
        spec,
        stored.values,
        sections={s.code for s in sections},
        evidence_codes=stored.evidence_codes,
    )
    missing_set = set(missing)
    rows = []
    for section in sections:
        required = [q.code for q in section.questions if q.required and q.code not in hidden]
        rows.append(
            SectionProgress(
                code=section.code,
                title=section.title.get(portal.language),
                answered=len([c for c in required if c not in missing_set]),
                required=len(required),
                url=_url("section", portal, section.code),
            )
        )
    return rows, missing


@portal_view
def landing(request: HttpRequest, portal: Portal) -> HttpResponse:
    progress, _missing = _progress(portal, _stored(portal.assessment))
    change_request = None
    if portal.assessment.status == AssessmentStatus.CHANGES_REQUESTED:
        change_request = portal.assessment.reviews.filter(
            decision=ReviewDecision.CHANGES_REQUESTED
        ).first()
    reopened = [
        {"code": code, "url": _question_url(portal, code)}
        for code in sorted(_editable(portal))
        if portal.assessment.status == AssessmentStatus.CHANGES_REQUESTED
    ]
    return render(
        request,
        "portal/landing.html",
        _context(
            portal,
            progress=progress,
            change_request=change_request,
            reopened=reopened,
            questionnaire_description=portal.spec.description.get(portal.language),
            change_form=ReassessForm(),
        ),
    )


def _question_url(portal: Portal, code: str) -> str:
    return portal_question_path(portal.token, portal.spec.questions[code])


@portal_view
def section(request: HttpRequest, portal: Portal, section_code: str) -> HttpResponse:
    section = portal.vendor_section(section_code)
    if request.method == "POST":
        return _section_post(request, portal, section)
    return _render_section(request, portal, _section_page(portal, section))


def _section_post(request: HttpRequest, portal: Portal, section: Section) -> HttpResponse:
    spec = portal.spec
    editable = _editable(portal)
    questions = [q for q in section.questions if q.code in editable]
    typed = {q.code: _raw_posted(q, request.POST) for q in questions if q.type != "file"}
    typed_comments = {q.code: request.POST.get(f"comment-{q.code}", "") for q in questions}
    if request.POST.get("_preview"):
        # htmx asks how the section looks with what is typed so far; nothing is saved.
        page = _section_page(portal, section, typed=typed, typed_comments=typed_comments)
        return _render_section(request, portal, page)

    stored = _stored(portal.assessment)
    # A question hidden by what was just chosen (e.g. PRF-08 after PRF-07 = no) is left as
    # it was: its answer is ignored by scoring, and it comes back if the choice is undone.
    hidden = hidden_codes(spec, _with_typed(spec, stored.values, typed))
    answers = {
        code: raw
        for code, raw in typed.items()
        if code not in hidden and (not is_blank(raw) or stored.values.get(code) is not None)
    }
    comments = {
        code: text
        for code, text in typed_comments.items()
        if code not in hidden and (text.strip() or stored.comments.get(code))
    }
    try:
        answers_save(
            assessment=portal.assessment,
            answers=answers,
            comments=comments,
            vendor_link=portal.link,
            channel=Channel.VENDOR_LINK,
        )
    except AnswerValidationError as exc:
        errors, status = exc.as_text_dict(), 400
    except ServiceError as exc:  # e.g. 409: the assessment was submitted meanwhile
        errors, status = exc.errors, exc.status_code
    else:
        messages.success(request, _("Saved."))
        return redirect(_url("section", portal, section.code))
    # Nothing was saved: show the section again as it was typed, with the errors.
    page = _section_page(portal, section, typed=typed, typed_comments=typed_comments, errors=errors)
    return _render_section(request, portal, page, status=status)


def _render_section(
    request: HttpRequest, portal: Portal, page: SectionPage, *, status: int = 200
) -> HttpResponse:
    sections = portal.vendor_sections
    index = [s.code for s in sections].index(page.section.code)
    previous_section = sections[index - 1] if index > 0 else None
    next_section = sections[index + 1] if index + 1 < len(sections) else None
    return render(
        request,
        "portal/section.html",
        _context(
            portal,
            page=page,
            section=page.section,
            section_title=page.section.title.get(portal.language),
            section_intro=with_code_spans(page.section.intro.get(portal.language)),
            error_summary=_error_summary(
                portal.spec, page.errors, {f.code: f"#{f.anchor_id}" for f in page.fields}
            ),
            previous_section=_section_link(portal, previous_section),
            next_section=_section_link(portal, next_section),
        ),
        status=status,
    )


def _section_link(portal: Portal, section: Section | None) -> dict[str, str] | None:
    if section is None:
        return None
    return {
        "code": section.code,
        "url": _url("section", portal, section.code),
        "title": section.title.get(portal.language),
    }


def _file_question(portal: Portal, code: str) -> tuple[Question, Section]:
    """A file question of a vendor section and its section, or 404."""
    question = portal.spec.questions.get(code or "")
    if question is None or question.type != "file":
        raise Http404
    return question, portal.vendor_section(question.section)


@portal_view
@require_POST
def evidence_upload(request: HttpRequest, portal: Portal) -> HttpResponse:
    question, section = _file_question(portal, request.POST.get("question", ""))
    upload = request.FILES.get("file")
    if upload is None:
        errors: dict[str, list[str]] = {question.code: [_("Choose a file to upload.")]}
        return _evidence_error(request, portal, section, errors, 400)
    try:
        evidence = evidence_add(
            assessment=portal.assessment,
            question_code=question.code,
            upload=upload,
            vendor_link=portal.link,
            channel=Channel.VENDOR_LINK,
        )
    except ServiceError as exc:
        return _evidence_error(request, portal, section, exc.errors, exc.status_code)
    done = _("Uploaded “%(name)s”: %(result)s") % {
        "name": evidence.original_name,
        "result": describe_parse_result(evidence.parse_result),
    }
    return _evidence_done(request, portal, section, question.code, done)


@portal_view
@require_POST
def evidence_delete(request: HttpRequest, portal: Portal, evidence_id: int) -> HttpResponse:
    evidence = get_object_or_404(portal.assessment.evidence.all(), pk=evidence_id)
    question, section = _file_question(portal, evidence.question_code)
    if question.code not in _editable(portal):
        errors = {question.code: [_("This file cannot be removed now.")]}
        return _evidence_error(request, portal, section, errors, 409)
    name = evidence.original_name
    try:
        evidence_remove(
            evidence=evidence, actor=None, vendor_link=portal.link, channel=Channel.VENDOR_LINK
        )
    except ServiceError as exc:
        return _evidence_error(request, portal, section, exc.errors, exc.status_code)
    return _evidence_done(
        request, portal, section, question.code, _("Removed “%(name)s”.") % {"name": name}
    )


def _evidence_done(
    request: HttpRequest, portal: Portal, section: Section, code: str, message: str
) -> HttpResponse:
    if request.htmx:  # type: ignore[attr-defined]
        # htmx swaps the question's evidence list from this page; the answers being typed stay.
        page = _section_page(portal, section, status_messages={code: message})
        return _render_section(request, portal, page)
    messages.success(request, message)
    return HttpResponseRedirect(f"{_url('section', portal, section.code)}#q-{code}")


def _evidence_error(
    request: HttpRequest,
    portal: Portal,
    section: Section,
    errors: Mapping[str, list[str]],
    status: int,
) -> HttpResponse:
    return _render_section(
        request, portal, _section_page(portal, section, errors=errors), status=status
    )


@portal_view
def review(request: HttpRequest, portal: Portal) -> HttpResponse:
    errors: dict[str, list[str]] = {}
    status = 200
    if request.method == "POST":
        try:
            assessment_submit(
                assessment=portal.assessment, vendor_link=portal.link, channel=Channel.VENDOR_LINK
            )
        except ServiceError as exc:
            errors, status = exc.errors, exc.status_code
        else:
            return redirect(_url("thanks", portal))
    stored = _stored(portal.assessment)
    progress, missing = _progress(portal, stored)
    spec = portal.spec
    missing_rows = [
        {
            "code": code,
            "text": spec.questions[code].text.get(portal.language),
            "url": _question_url(portal, code),
        }
        for code in missing
    ]
    summary = _error_summary(
        spec,
        errors,
        {code: _question_url(portal, code) for code in errors if code in spec.questions},
    )
    can_submit = "submit" in lifecycle.allowed_events(portal.assessment.status)
    return render(
        request,
        "portal/review.html",
        _context(
            portal,
            progress=progress,
            missing=missing_rows,
            error_summary=summary,
            can_submit=can_submit,
        ),
        status=status,
    )


@portal_view
def thanks(request: HttpRequest, portal: Portal) -> HttpResponse:
    if portal.assessment.status in lifecycle.EDITABLE_STATUSES:
        return redirect(_url("review", portal))
    return render(request, "portal/thanks.html", _context(portal))


@portal_view
@require_POST
def configuration_change(request: HttpRequest, portal: Portal) -> HttpResponse:
    """The vendor declares that the deployment changed: a reassessment opens without the CTX
    answers and the startup log, and its new private link is emailed to this contact."""
    from .models import RenewalReason
    from .reassessment import renewal_start

    form = ReassessForm(request.POST)
    changes = form.cleaned_data["changes"] if form.is_valid() else []
    try:
        renewal_start(
            assessment=portal.assessment,
            reason=RenewalReason.CONFIGURATION_CHANGE,
            changes=changes,
            note=form.cleaned_data.get("note", "") if form.is_valid() else "",
            vendor_link=portal.link,
            channel=Channel.VENDOR_LINK,
        )
    except ServiceError as error:
        for field_messages in error.errors.values():
            for message in field_messages:
                messages.error(request, message)
    else:
        messages.success(
            request,
            _(
                "Thank you. We emailed a new private link to %(email)s: answer the context-window "
                "questions for the new deployment there and upload its startup log."
            )
            % {"email": portal.link.contact_email},
        )
    return redirect(_url("landing", portal))


@portal_view
@require_POST
def language(request: HttpRequest, portal: Portal) -> HttpResponse:
    chosen = request.POST.get("language", "")
    if chosen in dict(settings.LANGUAGES):
        request.session[_language_session_key(portal.link)] = chosen
    landing_url = _url("landing", portal)
    target = request.POST.get("next", "")
    if not (
        target.startswith(landing_url)
        and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()})
    ):
        target = landing_url
    return redirect(target)


__all__ = [
    "describe_parse_result",
    "evidence_delete",
    "evidence_upload",
    "landing",
    "language",
    "portal_view",
    "review",
    "section",
    "thanks",
    "token_failure_record",
    "token_failures_exceeded",
]
