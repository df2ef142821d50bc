"""Answering catalogue questions on a page — the one path of the vendor portal's sections and the
member's buyer section.

Whoever answers (`Answerer`: a vendor link, or a member acting in their organization), a page
of questions works the same way:

- the form (`answer_form`) starts from the saved answers and the drafts, limited to the
  sections of the page and to the questions the answerer may change;
- "Save" checks the page's answers and saves them all or none (`save`); whatever was typed is
  kept as drafts either way, so an error never loses it;
- every other button of the page — a link to another section, an upload, removing a file,
  switching language — keeps what was typed as drafts first (`keep_drafts`), with or without
  JavaScript;
- with JavaScript (htmx), each change is kept as a draft as it is typed (`autosave_response`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from accounts.tenancy import OrgContext
from core.errors import ServiceError
from core.formats import format_datetime
from core.web import add_errors

from .answer_forms import CatalogueAnswersForm
from .models import Assessment, Channel, EvidenceFile, VendorLink
from .presenters.evidence import EvidenceRow, evidence_rows
from .services.answers import answer_values, answers_save, vendor_editable_codes
from .services.drafts import drafts_for, drafts_save


@dataclass(frozen=True)
class Answerer:
    """Who is answering: a vendor through their link, or a member (whose role is checked per
    question by the services)."""

    assessment: Assessment
    vendor_link: VendorLink | None = None
    member: OrgContext | None = None

    @property
    def channel(self) -> str:
        return Channel.VENDOR_LINK if self.vendor_link is not None else Channel.WEB

    def editable_codes(self) -> set[str] | None:
        """The codes this answerer may change now (None: every question of the page)."""
        if self.vendor_link is not None:
            return vendor_editable_codes(assessment=self.assessment, vendor_link=self.vendor_link)
        return None

    @property
    def by(self) -> dict[str, Any]:
        """Who acts, as the answer and draft services take it."""
        return {
            "actor": self.member.user if self.member else None,
            "member": self.member,
            "vendor_link": self.vendor_link,
        }

    def save_drafts(self, form: CatalogueAnswersForm) -> None:
        drafts_save(
            assessment=self.assessment,
            values=form.typed(),
            comments=form.typed_comments(),
            **self.by,
        )


def answer_form(
    answerer: Answerer,
    section_codes: Iterable[str],
    language: str,
    data: object = None,
    *,
    require_answers: bool = False,
    editable: bool = True,
) -> CatalogueAnswersForm:
    assessment = answerer.assessment
    comments: dict[str, str] = {}
    reopened: set[str] = set()
    for code, comment, is_reopened in assessment.answers.values_list(
        "question_code", "comment", "reopened"
    ):
        if comment:
            comments[code] = comment
        if is_reopened:
            reopened.add(code)
    files: dict[str, list[EvidenceFile]] = defaultdict(list)
    for evidence_file in assessment.evidence.all():
        files[evidence_file.question_code].append(evidence_file)
    rows: dict[str, list[EvidenceRow]] = {
        code: evidence_rows(code_files, language) for code, code_files in files.items()
    }
    return CatalogueAnswersForm(
        data,
        questionnaire=assessment.questionnaire.spec,
        section_codes=section_codes,
        language=language,
        saved=answer_values(assessment),
        saved_comments=comments,
        drafts=drafts_for(assessment=assessment),
        editable=answerer.editable_codes() if editable else set(),
        require_answers=require_answers,
        files=rows,
        reopened=reopened,
    )


def keep_drafts(answerer: Answerer, form: CatalogueAnswersForm) -> None:
    """Keep what was typed before following a link or button that leaves the page. A refusal
    (the assessment was submitted meanwhile) leaves nothing to keep."""
    if not form.fields:
        return
    try:
        answerer.save_drafts(form)
    except ServiceError:
        pass


def save(answerer: Answerer, form: CatalogueAnswersForm) -> int | None:
    """Check the page's answers and save them all or none: None when saved, else the HTTP
    status of the refusal. On any error the form carries it beside its question, and what was
    typed is kept as drafts."""
    if form.is_valid():
        try:
            answers_save(
                assessment=answerer.assessment,
                answers=form.answers(),
                comments=form.comments(),
                channel=answerer.channel,
                **answerer.by,
            )
        except ServiceError as exc:
            add_errors(form, exc)
            keep_drafts(answerer, form)
            return exc.status_code
        return None
    keep_drafts(answerer, form)
    return 400


# The autosave's form field that says which questions the page shows as not asked (set by
# static/questions.js): the answer then describes what changes on that page, whatever the
# order in which earlier answers arrived.
NOT_ASKED_ON_PAGE = "questions_not_asked"


def autosave_response(
    request: HttpRequest, answerer: Answerer, form: CatalogueAnswersForm
) -> HttpResponse:
    """htmx's per-change save: keep the drafts, and answer with the page's draft markers and the
    questions whose visibility the change turned (the question as now asked, or why it is no
    longer asked), for static/questions.js to show or hide in place: no input on the page is
    ever replaced, so nothing typed meanwhile is lost."""
    hidden_before = answer_form(answerer, [s.code for s in form.sections], form.language).hidden
    status = 200
    message = ""
    try:
        answerer.save_drafts(form)
    except ServiceError as exc:
        status, message = exc.status_code, " ".join(exc.messages)
    fresh = answer_form(answerer, [s.code for s in form.sections], form.language)
    # in the page's order: what the status line tells a screen-reader user the change did
    page_codes = [q.code for section in fresh.sections for q in section.questions]
    on_page = request.POST.get(NOT_ASKED_ON_PAGE)
    shown_hidden = hidden_before if on_page is None else set(on_page.split(",")) - {""}
    now_asked = [c for c in page_codes if c in shown_hidden - fresh.hidden]
    no_longer_asked = [c for c in page_codes if c in fresh.hidden - shown_hidden]
    turned = {*now_asked, *no_longer_asked}
    rows = fresh.rows()
    return render(
        request,
        "answers/_autosave.html",
        {
            "rows": [row for row in rows if row.code not in turned],
            "turned": [row for row in rows if row.code in turned],
            "saved_at": format_datetime(timezone.now(), form.language),
            "message": message,
            "now_asked": now_asked,
            "no_longer_asked": no_longer_asked,
        },
        status=status,
    )
