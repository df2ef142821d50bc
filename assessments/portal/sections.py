"""A portal section: its form of catalogue questions (saved all or nothing, or kept as drafts),
autosave as the vendor types, evidence uploads and removals beside the questions, and the
moves between sections."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from core.errors import ServiceError
from core.text import is_ascii_number
from core.web import add_errors, error_summary
from questionnaires.spec import Question, Section
from questionnaires.validation import missing_required

from .. import selectors
from ..answer_forms import CatalogueAnswersForm, with_code_spans
from ..answering import answer_form, autosave_response, keep_drafts, save
from ..models import Channel
from ..presenters.evidence import describe_evidence
from ..services.answers import answer_values, probe_consented
from ..services.evidence import evidence_add, evidence_remove
from .access import Portal, portal_view
from .common import codes_with_evidence, portal_answerer, portal_context, portal_url


@portal_view
def section(request: HttpRequest, portal: Portal, section_code: str) -> HttpResponse:
    """A section of questions, and everything its one form does. "Save" checks and saves the
    section; every other button — another section, all sections, review, upload a file, remove
    a file — keeps what was typed as drafts first, then does what it says."""
    section = portal.vendor_section(section_code)
    answerer = portal_answerer(portal)
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
            return redirect(portal_url("section", portal, section.code))
        messages.success(request, _("Saved."))
        following = _neighbours(portal, section)[1]
        if request.POST.get("save") == "next" and following is not None:
            return redirect(portal_url("section", portal, following.code))
        return redirect(portal_url("section", portal, section.code))
    return _render_section(request, portal, section, form, status=refused)


@portal_view
@require_POST
def autosave(request: HttpRequest, portal: Portal, section_code: str) -> HttpResponse:
    """htmx: keep what is being typed in a section as drafts, as it is typed."""
    section = portal.vendor_section(section_code)
    answerer = portal_answerer(portal)
    form = answer_form(answerer, [section.code], portal.language, request.POST)
    return autosave_response(request, answerer, form)


def _missing_in(portal: Portal, section: Section) -> list[str]:
    """The required questions of the section shown and not answered yet."""
    assessment = portal.assessment
    return missing_required(
        portal.spec,
        answer_values(assessment),
        sections=[section.code],
        evidence_codes=codes_with_evidence(assessment),
    )


def _target(portal: Portal, go: str) -> str:
    """Where a navigation button leads: "landing", "review" or "section:<code>"; "" if none."""
    if go == "landing":
        return portal_url("landing", portal)
    if go == "review":
        return portal_url("review", portal)
    if go == "probe" and portal.spec.probe_question is not None:
        # The probe's own page (probes app): set up the endpoint, keys and authorisation.
        return reverse("probes:portal_setup", args=[portal.token])
    if go.startswith("thread:"):
        code = go.removeprefix("thread:")
        if (
            code not in portal.spec.questions
            or selectors.thread_find(assessment=portal.assessment, question_code=code) is None
        ):
            raise Http404
        return portal_url("thread", portal, code)
    if go.startswith("section:"):
        return portal_url(
            "section", portal, portal.vendor_section(go.removeprefix("section:")).code
        )
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
            autosave_url=portal_url("autosave", portal, section.code),
            threads={
                thread.question_code: thread
                for thread in selectors.threads_for(assessment=portal.assessment)
            },
            thread_go=True,
            # The probe's set-up page, once the vendor's saved answers ask for the probe.
            probe_page=probe is not None
            and probe.section == section.code
            and probe_consented(portal.assessment),
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
                pk=int(evidence_id) if is_ascii_number(evidence_id) else 0,
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
    return HttpResponseRedirect(f"{portal_url('section', portal, section.code)}#q-{question.code}")


def _file_question(portal: Portal, section: Section, code: str) -> Question:
    """A file question of the section, or 404."""
    question = portal.spec.questions.get(code or "")
    if question is None or question.type != "file" or question.section != section.code:
        raise Http404
    return question
