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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.cache import cache
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.cache import patch_cache_control
from django.utils.html import format_html, format_html_join
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST
from redis.exceptions import RedisError

from core.errors import ServiceError
from core.web import add_errors, add_messages, error_summary
from questionnaires.spec import Question, QuestionnaireSpec, Section
from questionnaires.validation import missing_required

from . import lifecycle
from .answer_forms import CatalogueAnswersForm, with_code_spans
from .answering import Answerer, answer_form, autosave_response, keep_drafts, save
from .forms import ReassessForm
from .models import (
    Assessment,
    AssessmentStatus,
    Channel,
    ReviewDecision,
    TokenFailureCount,
    VendorLink,
)
from .presenters.answers import FileRef, answer_sections
from .presenters.evidence import describe_evidence
from .presenters.progress import SectionProgress, section_progress
from .services.answers import answer_values, probe_consented
from .services.evidence import evidence_add, evidence_remove
from .services.submission import assessment_submit
from .services.vendor_links import portal_question_path, vendor_link_resolve

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
        # The buyer's clock: every time on these pages is in the organization's time zone.
        zone = link.assessment.organization.time_zone
        with translation.override(language), timezone.override(zone):
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


# -- pages ----------------------------------------------------------------------------------


def _url(name: str, portal: Portal, *args: Any) -> str:
    return reverse(f"portal:{name}", args=[portal.token, *args])


def portal_context(portal: Portal, **extra: Any) -> dict[str, Any]:
    """What every portal page's template needs (its header, the assessment's state)."""
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


def _answerer(portal: Portal) -> Answerer:
    return Answerer(assessment=portal.assessment, vendor_link=portal.link)


def _progress(portal: Portal) -> tuple[list[SectionProgress], list[str], set[str]]:
    """Per vendor section: answered required / visible required; the missing codes; the
    sections holding drafts (typed, not saved)."""
    assessment = portal.assessment
    codes = [s.code for s in portal.vendor_sections]
    values = answer_values(assessment)
    evidence_codes = _evidence_codes(assessment)
    progress = section_progress(
        portal.spec,
        values,
        evidence_codes,
        portal.language,
        sections=codes,
        url_for=lambda code: _url("section", portal, code),
    )
    missing = missing_required(portal.spec, values, sections=codes, evidence_codes=evidence_codes)
    with_drafts = {
        portal.spec.questions[code].section
        for code in assessment.drafts.values_list("question_code", flat=True)
        if code in portal.spec.questions
    } & set(codes)
    return progress, missing, with_drafts


@portal_view
def landing(request: HttpRequest, portal: Portal) -> HttpResponse:
    progress, _missing, with_drafts = _progress(portal)
    change_request = None
    if portal.assessment.status == AssessmentStatus.CHANGES_REQUESTED:
        change_request = portal.assessment.reviews.filter(
            decision=ReviewDecision.CHANGES_REQUESTED
        ).first()
    reopened = [
        {"code": code, "url": question_url(portal, code)}
        for code in sorted(_answerer(portal).editable_codes() or ())
        if portal.assessment.status == AssessmentStatus.CHANGES_REQUESTED
    ]
    return render(
        request,
        "portal/landing.html",
        portal_context(
            portal,
            progress=progress,
            with_drafts=with_drafts,
            change_request=change_request,
            reopened=reopened,
            questionnaire_description=portal.spec.description.get(portal.language),
            change_form=ReassessForm(),
        ),
    )


def question_url(portal: Portal, code: str) -> str:
    """Where a question is answered in the portal (its section, at the question)."""
    return portal_question_path(portal.token, portal.spec.questions[code])


@portal_view
def section(request: HttpRequest, portal: Portal, section_code: str) -> HttpResponse:
    """A section of questions, and everything its one form does. "Save" checks and saves the
    section; every other button — another section, all sections, review, upload a file, remove
    a file — keeps what was typed as drafts first, then does what it says."""
    section = portal.vendor_section(section_code)
    answerer = _answerer(portal)
    if request.method != "POST":
        form = answer_form(answerer, [section.code], portal.language)
        return _render_section(request, portal, section, form)
    form = answer_form(answerer, [section.code], portal.language, request.POST)
    if target := _target(portal, request.POST.get("go", "")):
        keep_drafts(answerer, form)
        return redirect(target)
    if "upload" in request.POST or "remove" in request.POST:
        keep_drafts(answerer, form)
        return _evidence(request, portal, section, form)
    missing_before = set(_missing_in(portal, section))
    refused = save(answerer, form)
    if refused is None:
        revealed = [code for code in _missing_in(portal, section) if code not in missing_before]
        if revealed:
            # Without JavaScript the page could not show these as the answers changed: say
            # so, and link to each, rather than a bare "Saved."
            messages.warning(
                request,
                format_html(
                    "{} {}",
                    ngettext(
                        "Saved. Your answers opened a new required question in this section:",
                        "Saved. Your answers opened %(count)d new required questions in this "
                        "section:",
                        len(revealed),
                    )
                    % {"count": len(revealed)},
                    format_html_join(
                        ", ", '<a href="#question-{}">{}</a>', ((code, code) for code in revealed)
                    ),
                ),
            )
            return redirect(_url("section", portal, section.code))
        messages.success(request, _("Saved."))
        following = _neighbours(portal, section)[1]
        if request.POST.get("save") == "next" and following is not None:
            return redirect(_url("section", portal, following.code))
        return redirect(_url("section", portal, section.code))
    return _render_section(request, portal, section, form, status=refused)


@portal_view
@require_POST
def autosave(request: HttpRequest, portal: Portal, section_code: str) -> HttpResponse:
    """htmx: keep what is being typed in a section as drafts, as it is typed."""
    section = portal.vendor_section(section_code)
    answerer = _answerer(portal)
    form = answer_form(answerer, [section.code], portal.language, request.POST)
    return autosave_response(request, answerer, form)


def _missing_in(portal: Portal, section: Section) -> list[str]:
    """The required questions of the section shown and not answered yet."""
    assessment = portal.assessment
    return missing_required(
        portal.spec,
        answer_values(assessment),
        sections=[section.code],
        evidence_codes=_evidence_codes(assessment),
    )


def _evidence_codes(assessment: Assessment) -> set[str]:
    return set(assessment.evidence.values_list("question_code", flat=True))


def _target(portal: Portal, go: str) -> str:
    """Where a navigation button leads: "landing", "review" or "section:<code>"; "" if none."""
    if go == "landing":
        return _url("landing", portal)
    if go == "review":
        return _url("review", portal)
    if go == "probe" and portal.spec.probe_question is not None:
        # The probe's own page (probes app): set up the endpoint, keys and authorisation.
        return reverse("probes:portal_setup", args=[portal.token])
    if go.startswith("section:"):
        return _url("section", portal, portal.vendor_section(go.removeprefix("section:")).code)
    return ""


def _neighbours(portal: Portal, section: Section) -> tuple[Section | None, Section | None]:
    sections = portal.vendor_sections
    index = [s.code for s in sections].index(section.code)
    return (
        sections[index - 1] if index > 0 else None,
        sections[index + 1] if index + 1 < len(sections) else None,
    )


def _render_section(
    request: HttpRequest,
    portal: Portal,
    section: Section,
    form: CatalogueAnswersForm,
    *,
    status: int = 200,
) -> HttpResponse:
    previous_section, next_section = _neighbours(portal, section)
    rows = form.rows(section)
    probe = portal.spec.probe_question
    return render(
        request,
        "portal/section.html",
        portal_context(
            portal,
            form=form,
            rows=rows,
            any_editable=any(row.editable for row in rows),
            drafts=[row.code for row in rows if row.draft],
            section=section,
            section_title=section.title.get(portal.language),
            section_intro=with_code_spans(section.intro.get(portal.language)),
            error_summary=error_summary(form),
            previous_section=_section_link(portal, previous_section),
            next_section=_section_link(portal, next_section),
            autosave_url=_url("autosave", portal, section.code),
            # The probe's set-up page, once the vendor's saved answers ask for the probe.
            probe_page=probe is not None
            and probe.section == section.code
            and probe_consented(portal.assessment),
            refresh_url=_url("section", portal, section.code),
        ),
        status=status,
    )


def _section_link(portal: Portal, section: Section | None) -> dict[str, str] | None:
    if section is None:
        return None
    return {"code": section.code, "title": section.title.get(portal.language)}


def _evidence(
    request: HttpRequest, portal: Portal, section: Section, form: CatalogueAnswersForm
) -> HttpResponse:
    """Upload a file to a file question of the section, or remove one (what was typed on the
    page has been kept as drafts already)."""
    try:
        if "remove" in request.POST:
            evidence_id = request.POST.get("remove", "")
            evidence = get_object_or_404(
                portal.assessment.evidence.all(),
                pk=int(evidence_id) if evidence_id.isdigit() else 0,
            )
            question = _file_question(portal, section, evidence.question_code)
            name = evidence.original_name
            evidence_remove(
                evidence=evidence, actor=None, vendor_link=portal.link, channel=Channel.VENDOR_LINK
            )
            done = _("Removed “%(name)s”.") % {"name": name}
        else:
            question = _file_question(portal, section, request.POST.get("upload", ""))
            upload = request.FILES.get(question.code)
            if upload is None:
                raise ServiceError({question.code: [_("Choose a file to upload.")]})
            evidence = evidence_add(
                assessment=portal.assessment,
                question_code=question.code,
                upload=upload,
                vendor_link=portal.link,
                channel=Channel.VENDOR_LINK,
            )
            done = _("Uploaded “%(name)s”: %(result)s") % {
                "name": evidence.original_name,
                "result": describe_evidence(evidence.parse_result, portal.language),
            }
    except ServiceError as exc:
        # The section again as it was typed, with the refusal beside the file question and
        # any typed value that is not valid yet beside its own.
        form.is_valid()
        add_errors(form, exc)
        return _render_section(request, portal, section, form, status=exc.status_code)
    messages.success(request, done)
    return HttpResponseRedirect(f"{_url('section', portal, section.code)}#q-{question.code}")


def _file_question(portal: Portal, section: Section, code: str) -> Question:
    """A file question of the section, or 404."""
    question = portal.spec.questions.get(code or "")
    if question is None or question.type != "file" or question.section != section.code:
        raise Http404
    return question


@portal_view
def review(request: HttpRequest, portal: Portal) -> HttpResponse:
    errors: dict[str, list[str]] = {}
    status = 200
    if request.method == "POST":
        try:
            if not request.POST.get("confirm"):
                # Submitting cannot be undone: the box is the confirm step (no JavaScript).
                raise ServiceError(
                    {
                        "confirm": [
                            _(
                                "Tick “I have checked my answers” to confirm: once submitted, "
                                "the answers cannot be changed unless the buyer asks."
                            )
                        ]
                    }
                )
            assessment_submit(
                assessment=portal.assessment, vendor_link=portal.link, channel=Channel.VENDOR_LINK
            )
        except ServiceError as exc:
            errors, status = exc.errors, exc.status_code
        else:
            return redirect(_url("thanks", portal))
    progress, missing, with_drafts = _progress(portal)
    spec = portal.spec
    missing_rows = [
        {
            "code": code,
            "text": spec.questions[code].text.get(portal.language),
            "url": question_url(portal, code),
        }
        for code in missing
    ]
    summary = [
        {
            "label": code if code in spec.questions else "",
            "message": message,
            "href": question_url(portal, code)
            if code in spec.questions
            else ("#confirm" if code == "confirm" else ""),
        }
        for code, code_messages in errors.items()
        for message in code_messages
    ]
    assessment = portal.assessment
    files: dict[str, list[FileRef]] = {}
    for evidence_file in assessment.evidence.all():
        files.setdefault(evidence_file.question_code, []).append(
            FileRef(name=evidence_file.original_name)
        )
    answers = list(assessment.answers.all())
    sections = answer_sections(
        spec,
        answer_values(assessment),
        portal.language,
        comments={a.question_code: a.comment for a in answers if a.comment},
        reopened={a.question_code for a in answers if a.reopened},
        files=files,
        sections=[s.code for s in portal.vendor_sections],
    )
    can_submit = "submit" in lifecycle.allowed_events(portal.assessment.status)
    return render(
        request,
        "portal/review.html",
        portal_context(
            portal,
            progress=progress,
            with_drafts=[p for p in progress if p.code in with_drafts],
            draft_codes=with_drafts,
            missing=missing_rows,
            error_summary=summary,
            confirm_error=errors.get("confirm"),
            answer_sections=[
                {"section": section, "url": _url("section", portal, section.code)}
                for section in sections
            ],
            can_submit=can_submit,
        ),
        status=status,
    )


@portal_view
def thanks(request: HttpRequest, portal: Portal) -> HttpResponse:
    if portal.assessment.status in lifecycle.EDITABLE_STATUSES:
        return redirect(_url("review", portal))
    return render(request, "portal/thanks.html", portal_context(portal))


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
        add_messages(request, error)
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
    """Switch the portal's language. From a section page, the switch submits the section's
    form: what was typed is kept as drafts first, and the section comes back."""
    chosen = request.POST.get("language", "")
    if chosen in dict(settings.LANGUAGES):
        request.session[_language_session_key(portal.link)] = chosen
    if code := request.POST.get("section"):
        section = portal.vendor_section(code)
        answerer = _answerer(portal)
        keep_drafts(answerer, answer_form(answerer, [code], portal.language, request.POST))
        return redirect(_url("section", portal, section.code))
    landing_url = _url("landing", portal)
    target = request.POST.get("next", "")
    if not (
        target.startswith(landing_url)
        and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()})
    ):
        target = landing_url
    return redirect(target)


__all__ = [
    "autosave",
    "landing",
    "language",
    "portal_context",
    "portal_view",
    "question_url",
    "review",
    "section",
    "thanks",
    "token_failure_record",
    "token_failures_exceeded",
]
